"""An hourly price the user says they pay is a price, costed as given; a cap is a cap; a price unit is a unit."""

import pytest

from assistant.engine.understand import understand


@pytest.mark.parametrize("text, price, cap", [
    pytest.param("LoRA of llama 3.1 8b on an H100 at $2.50/hr, 100k examples", 2.5, None, id="at"),
    pytest.param("4090 ka price ~$1800 hai, runpod pe $0.40/hr mil raha", 0.4, None, id="roman-mil-raha"),
    pytest.param("A100 کا ریٹ 1.8 ڈالر فی گھنٹہ ہے", 1.8, None, id="urdu-rate"),
    pytest.param("cheapest h100 under $2/hr", None, 2.0, id="under-is-a-cap"),
    pytest.param("budget $1.5/hr for an A100", None, 1.5, id="budget-is-a-cap"),
    pytest.param("مجھے ایسا GPU بتائیں جس کا کرایہ صفر ڈالر فی گھنٹہ ہو", None, 0.0, id="zero-is-never-a-price"),
])
def test_price_or_cap(text, price, cap):
    q = understand(text)
    assert (q.price_usd_per_gpu_hour, q.budget_usd_per_hour) == (price, cap)


def test_a_training_job_is_costed_at_the_users_price_with_the_catalog_beside(adv):
    a = adv.ask("what would a LoRA finetune of llama 3.1 8b cost on an H100 at $2.50/hr? 100k examples, "
                "~1k tokens each, 2 epochs")
    (c,) = [c for c in a.tool_calls if c.name == "cost_estimator"]
    assert c.args["price_usd_per_hour"] == 2.5
    r = c.result
    # started hours billed (no provider named): ceil(runtime) x $2.50
    import math
    assert r["on_demand_cost_usd"] == pytest.approx(math.ceil(r["runtime_hours"]) * 2.5)
    head = a.answer.split("\n\n")[1]
    assert "your price of $2.50/h" in head and f"${r['on_demand_cost_usd']:.3g}" in head
    assert "For comparison, the cheapest H100 SXM in the price data is" in a.answer


def test_two_gpus_at_a_per_gpu_price_cost_twice_that_an_hour(adv):
    a = adv.ask("cost per 1M output tokens if we self-host llama 3.1 70b on 2x H100 at ~$2.50/gpu-hr with vllm")
    (c,) = [c for c in a.tool_calls if c.name == "cost_estimator"]
    assert c.args["price_usd_per_hour"] == 5.0 and c.args.get("gpus") == 2
    sv = c.result["serving"]
    assert sv["monthly_usd"] == pytest.approx(5.0 * 730)
    # "per 1M output tokens" is the unit of the price asked for, not a million-token answer to size
    assert a.query.get("output_tokens") is None
    fit = next(x for x in a.tool_calls if x.name == "vram_calculator")
    assert fit.result["fit"]["fits"]
