"""Cost formulas worked by hand."""

import pytest

from tools.cost import (BillingPolicy, CostInputs, ProviderRates, SpotAssumptions, billed_hours, billing_comparison,
                        cost_report, job_billing, note_text, serving_cost, spot_expectation, usage_cost, usage_costs)
from tools.errors import InvalidCombination
from tools.schemas import GpuOffer


def test_twenty_minute_experiment_per_second_vs_hourly():
    # The guide's case: a 20-minute run at $3.00/hour.
    c = billing_comparison(20 / 60, 3.00)
    assert c["per_second_usd"] == pytest.approx(1.00)
    assert c["per_minute_usd"] == pytest.approx(1.00)
    assert c["per_hour_usd"] == pytest.approx(3.00)


@pytest.mark.parametrize("runtime_s, inc, minimum, billed_s", [
    (1200, 1, 60, 1200),        # 20 min per second
    (1230, 60, 0, 1260),        # 20.5 min per minute -> 21 min
    (10, 1, 60, 60),            # 10 s with AWS's 60 s minimum
    (3601, 3600, 0, 7200),      # one second over an hour billed hourly -> 2 h
    (7200, 3600, 0, 7200),      # exactly two hours
])
def test_billed_hours_rounds_up_to_the_increment(runtime_s, inc, minimum, billed_s):
    p = BillingPolicy(provider="x", increment_s=inc, minimum_s=minimum)
    assert billed_hours(runtime_s / 3600, p) == pytest.approx(billed_s / 3600)


def test_unknown_granularity_is_unknown():
    assert billed_hours(1.0, BillingPolicy(provider="x")) is None


def test_spot_expectation_by_hand():
    # 10 h of work, 0.1 interruptions/h, checkpoint every 1 h (no write cost), 12 min to restart:
    # loss per interruption = 0.5 + 0.2 = 0.7 h; wall = 10 / (1 - 0.07) = 10.7527 h
    a = SpotAssumptions(interruptions_per_hour=0.1, checkpoint_every_h=1.0, restart_h=0.2, checkpoint_write_h=0.0)
    e = spot_expectation(10.0, 1.50, a)
    assert e["wall_hours"] == pytest.approx(10 / 0.93)
    assert e["cost_usd"] == pytest.approx(1.50 * 10 / 0.93)
    assert e["expected_interruptions"] == pytest.approx(0.1 * 10 / 0.93)
    # checkpoint writes add write/interval of the work: 6 min every 30 min = +20 %
    b = SpotAssumptions(interruptions_per_hour=0.0, checkpoint_every_h=0.5, restart_h=0.0, checkpoint_write_h=0.1)
    assert spot_expectation(10.0, 1.0, b)["wall_hours"] == pytest.approx(12.0)


def test_spot_that_cannot_progress_says_so():
    a = SpotAssumptions(interruptions_per_hour=2.0, checkpoint_every_h=1.0, restart_h=0.5)
    e = spot_expectation(10.0, 1.0, a)
    assert e["cost_usd"] is None and "on-demand" in e["note"]


def test_serving_cost_by_hand():
    s = serving_cost(2.00, 1000.0)  # 3.6 M tokens an hour
    assert s["usd_per_million_tokens"] == pytest.approx(2.00 / 3.6)
    assert s["monthly_usd"] == pytest.approx(2.00 * 730)
    assert serving_cost(2.0, 0.0)["usd_per_million_tokens"] is None


def test_unknown_rates_are_never_zero():
    assert usage_cost(100, None) is None
    assert usage_cost(100, 0.08) == pytest.approx(8.0)


# ---- the cost policy moved out of assistant/service/api.py: pure functions over typed inputs ----------------

AWS = ProviderRates(provider="aws", billing_increment_s=1, minimum_charge_s=60, storage_usd_per_gb_month=0.08,
                    storage_type="EBS gp3", egress_usd_per_gb=0.09, spot_notice_s=120)
UNKNOWN = ProviderRates(provider="vast")


def test_egress_and_storage_costed_when_an_amount_is_given():
    # 500 GB out of AWS at $0.09/GB = $45; 200 GB kept 3 months at $0.08/GB-month = $48
    u = usage_costs(AWS, storage_gb=200, months=3, egress_gb=500)
    assert u.egress_usd == pytest.approx(45.0) and u.storage_usd == pytest.approx(48.0)
    assert [f.code for f in u.findings] == ["storage_cost", "egress_cost"]
    nothing = usage_costs(AWS)  # nothing asked, nothing costed
    assert nothing.storage_usd is None and nothing.egress_usd is None and nothing.findings == []


def test_unknown_rate_is_none_with_a_reason_code_never_zero():
    u = usage_costs(UNKNOWN, storage_gb=50, egress_gb=500)
    assert u.storage_usd is None and u.egress_usd is None
    assert [f.code for f in u.findings] == ["storage_rate_unknown", "egress_rate_unknown"]
    assert "unknown rate for vast" in note_text(u.findings[1])[0]


def test_provider_rates_from_a_providers_csv_row():
    r = ProviderRates.of("lambda", {"billing_increment_s": 60, "minimum_charge_s": None, "storage_usd_per_gb_month":
                                    0.1863, "egress_usd_per_gb": 0.0, "spot_notice_s": None, "source": "x", "spot": "no"})
    assert r.policy() == BillingPolicy(provider="lambda", increment_s=60, minimum_s=0, source="x")
    assert r.egress_usd_per_gb == 0.0  # a published zero stays zero; a blank stays None
    assert ProviderRates.of(None, {}).provider == "unknown"


def test_job_billing_known_and_unknown_granularity():
    # 20.5 min per minute -> 21 min billed; at $3/h: $1.05
    bill, found = job_billing(20.5 / 60, 3.0, ProviderRates(provider="x", billing_increment_s=60))
    assert bill["billed_hours"] == pytest.approx(21 / 60) and bill["on_demand_cost_usd"] == pytest.approx(1.05)
    assert found[0].code == "billing_rule" and bill["per_hour_usd"] == pytest.approx(3.0)
    # unknown granularity: started hours (worst case) -> 1 h billed
    bill, found = job_billing(20.5 / 60, 3.0, UNKNOWN)
    assert bill["billed_hours"] == 1.0 and bill["increment_s"] is None and found[0].code == "billing_unknown"


def _offer(spot=None):
    return GpuOffer(provider="aws", instance_type="g6.xlarge", accelerator_name="L4", gpu_id="l4", gpu_name="L4",
                    gpu_count=1, price_usd_per_hour=0.80, spot_price_usd_per_hour=spot)


def test_cost_report_totals_and_the_part_that_is_unknown():
    # 10 h at $0.80 on AWS (per second) = $8.00; 100 GB egress $9.00; total $17.00
    d = cost_report(CostInputs(gpu="L4", price_usd_per_hour=0.80, rates=AWS, offer=_offer(), runtime_hours=10,
                               egress_gb=100))
    assert d["on_demand_cost_usd"] == pytest.approx(8.0) and d["egress_usd"] == pytest.approx(9.0)
    assert d["total_usd"] == pytest.approx(17.0) and "storage_usd" not in d and d["spot"] is None
    assert "No spot price for this GPU in the catalog." in d["assumptions"]
    d = cost_report(CostInputs(gpu="L4", price_usd_per_hour=0.80, rates=UNKNOWN, offer=_offer(), runtime_hours=10,
                               storage_gb=10))
    assert d["storage_usd"] is None and d["total_usd"] is None
    assert {"code": "total_unknown", "params": {"unknown": ["storage_usd"]}} in d["findings"]


def test_cost_report_spot_uses_the_stated_assumptions():
    a = SpotAssumptions(interruptions_per_hour=0.1, checkpoint_every_h=1.0, restart_h=0.2, checkpoint_write_h=0.0)
    d = cost_report(CostInputs(gpu="L4", price_usd_per_hour=0.80, rates=AWS, offer=_offer(0.30),
                               spot_offer=_offer(0.30), runtime_hours=10, spot=a))
    assert d["spot"]["wall_hours"] == pytest.approx(10 / 0.93)  # as in test_spot_expectation_by_hand
    assert d["spot"]["cost_usd"] == pytest.approx(0.30 * 10 / 0.93)
    assert any(x["code"] == "spot_assumptions" for x in d["findings"])


def test_cost_report_needs_a_runtime_or_a_serving_estimate():
    with pytest.raises(InvalidCombination, match="--hours"):
        cost_report(CostInputs(gpu="L4", price_usd_per_hour=0.8, rates=AWS))


def test_egress_question_without_a_gpu_job_through_the_service():
    from assistant.service import api

    # "500 GB out of AWS": 500 GB x $0.09/GB (providers.csv, AWS's first 10 TB a month) = $45.00
    u = api.transfer_cost(provider="AWS", egress_gb=500)
    assert u.egress_usd == pytest.approx(45.0) and u.storage_usd is None
    u = api.transfer_cost(provider="vast", egress_gb=500)  # host-priced: not in the sources read
    assert u.egress_usd is None and u.findings[0].code == "egress_rate_unknown"
    with pytest.raises(Exception, match="Invalid provider"):
        api.transfer_cost(provider="nowhere", egress_gb=1)


def test_hours_for_budget_never_cost_more_than_the_budget():
    # $300 at $1.64/h billed per second buys 182.93 h; a provider billing whole hours sells 182 h;
    # an unknown increment is counted as whole hours (the worst case the cost report bills)
    from tools.cost import BillingPolicy, hours_for_budget

    assert abs(hours_for_budget(300, 1.64, BillingPolicy(provider="p", increment_s=1)) - 300 / 1.64) < 1e-3
    assert hours_for_budget(300, 1.64, BillingPolicy(provider="p", increment_s=3600)) == 182
    assert hours_for_budget(300, 1.64, BillingPolicy(provider="p")) == 182
    assert hours_for_budget(300, 1.64) == 300 / 1.64
    with pytest.raises(ValueError):
        hours_for_budget(300, 0)
