"""Deployable configurations first (tools.deployable, tools.recommend) and names the data lacks (service)."""

from __future__ import annotations


from knowledge.catalog import resolve_model
from tools.deployable import CLEARLY_CHEAPER, order, tp_reason
from tools.recommend import RecommendRequest, recommend
from tests.tools.test_recommend import BILLING, GPUS, MFU, VLLM, offer

L8B = resolve_model("llama-3.1-8b")  # 32 attention heads, 8 KV heads


def _rec(offers, model=L8B, marketplaces=frozenset(), **kw):
    return recommend(model, RecommendRequest(**kw), offers, GPUS, VLLM, MFU, BILLING, marketplaces)


def test_tp_degrees_must_split_the_heads():
    assert tp_reason(L8B, 1) is None and tp_reason(L8B, 2) is None and tp_reason(L8B, 8) is None
    assert "does not divide 32 attention heads" in tp_reason(L8B, 3)
    assert "does not divide 32 attention heads" in tp_reason(L8B, 5)
    qwen7 = resolve_model("qwen2.5-7b")  # 28 heads, 4 KV heads: 4 splits both, 8 does not divide 28
    assert qwen7.num_attention_heads == 28 and qwen7.num_kv_heads == 4
    assert tp_reason(qwen7, 4) is None and "28" in tp_reason(qwen7, 8)


def test_no_option_offers_3_or_5_gpus_of_tp_to_heads_they_do_not_divide():
    offers = [offer("h100-sxm", 3, 7.5, nvlink=True), offer("h100-sxm", 5, 12.5, nvlink=True),
              offer("a100-80gb-sxm", 1, 1.50), offer("h100-sxm", 8, 20.0, nvlink=True)]
    l70 = resolve_model("llama-3.1-70b")
    r = _rec(offers, model=l70, context_tokens=8192)
    assert r.options and all(l70.num_attention_heads % o["gpu_count"] == 0 for o in r.options)
    reasons = {x["option"]: x["reason"] for x in r.rejected}
    assert "does not divide 64 attention heads" in reasons["3 x H100 SXM"]
    assert "does not divide 64 attention heads" in reasons["5 x H100 SXM"]


def test_a_7_8b_model_for_production_is_served_on_one_gpu_not_a_4_gpu_pcie_box():
    offers = [offer("rtx-3060", 4, 0.40), offer("rtx-a4000", 4, 0.60), offer("l4", 1, 0.70), offer("l40s", 1, 0.90)]
    r = _rec(offers, production=True, concurrent_users=8)
    assert r.options and all(o["gpu_count"] == 1 for o in r.options)
    assert r.options[0]["gpu"] in ("L4", "L40S")
    reasons = {x["option"]: x["reason"] for x in r.rejected}
    assert "consumer card" in reasons["4 x RTX 3060"] and "workstation card" in reasons["4 x RTX A4000"]
    # without production the 4-GPU PCIe boxes are still rejected: TP beyond 2 needs NVLink
    r2 = _rec(offers, concurrent_users=8)
    assert r2.options[0]["gpu_count"] == 1
    assert "needs NVLink" in {x["option"]: x["reason"] for x in r2.rejected}["4 x RTX 3060"]


def test_production_drops_marketplace_hosts():
    offers = [offer("l40s", 1, 0.50, provider="p2"), offer("l40s", 1, 0.90, provider="p1")]
    r = _rec(offers, production=True, marketplaces=frozenset({"p2"}))
    assert [o["offer"]["provider"] for o in r.options] == ["p1"]
    r2 = _rec(offers, marketplaces=frozenset({"p2"}))
    assert r2.options[0]["offer"]["provider"] == "p2" and any("marketplace" in d for d in r2.options[0]["drawbacks"])


def test_a_pcie_box_goes_first_only_at_half_the_best_single_gpu_cost():
    def opt(n, cost, nvlink=False):
        return {"gpu_count": n, "nvlink": nvlink, "cost": cost}
    cost = lambda o: o["cost"]  # noqa: E731
    key = lambda o: (o["cost"],)  # noqa: E731
    assert CLEARLY_CHEAPER == 0.5
    # 2 x PCIe at 60 % of the single GPU's cost: after it; at 50 %: first, with the reason
    ranked = order([opt(1, 100.0), opt(2, 60.0)], cost, key)
    assert [o["gpu_count"] for o in ranked] == [1, 2] and ranked[1]["tier"] == 2
    ranked = order([opt(1, 100.0), opt(2, 50.0)], cost, key)
    assert [o["gpu_count"] for o in ranked] == [2, 1] and "50%" in ranked[0]["promoted_because"]
    # NVLink tensor parallelism too: 80 % of the cost is not enough to put two GPUs before one
    ranked = order([opt(1, 100.0), opt(2, 80.0, nvlink=True)], cost, key)
    assert [o["gpu_count"] for o in ranked] == [1, 2]
    # with no single GPU, NVLink before PCIe unless the PCIe box is at half the cost
    ranked = order([opt(4, 100.0, nvlink=True), opt(2, 60.0)], cost, key)
    assert [o["gpu_count"] for o in ranked] == [4, 2]


def test_providers_the_price_data_lacks_are_named():
    from assistant.service import api

    r = api.prices(provider="lambda,coreweave", limit=5)
    assert r.not_in_data == ["coreweave is not in the price data dated 2026-05-20"] and r.offers
    assert all(o.provider == "lambda" for o in r.offers)
    rec = api.recommend(model="llama-3.1-8b", providers=["lambda", "coreweave"], top_n=1)
    assert rec.not_in_data == ["coreweave is not in the price data dated 2026-05-20"]
    assert rec.options and rec.options[0]["offer"]["provider"] == "lambda"
    # RunPod is in the data with A100s only: an H100 there is said to be absent, not swapped
    runpod = api.prices(gpu="H100", provider="runpod")
    assert runpod.offers == [] and runpod.not_in_data == ["No H100 offer from runpod is in the price data dated 2026-05-20"]
