"""Cost formulas worked by hand."""

import pytest

from tools.cost import (BillingPolicy, SpotAssumptions, billed_hours, billing_comparison, serving_cost,
                        spot_expectation, usage_cost)


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
