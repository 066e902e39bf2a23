"""Recommender scenarios (from shared/questions.md) on a small synthetic offer list with real GPU specs."""

import math

import pytest

from knowledge.catalog import load_engines, load_gpus, load_training_efficiency, resolve_model
from tools.cost import BillingPolicy
from tools.recommend import RecommendRequest, recommend
from tools.schemas import GpuOffer

GPUS = {g.id: g for g in load_gpus()}
VLLM = next(e for e in load_engines() if e.id == "vllm")
MFU = load_training_efficiency()
BILLING = {p: BillingPolicy(provider=p, increment_s=1) for p in ("p1", "p2")}


def offer(gid, n, price, spot=None, provider="p1", nvlink=None):
    g = GPUS[gid]
    return GpuOffer(provider=provider, instance_type=f"{gid}-x{n}", accelerator_name=g.name, gpu_id=gid,
                    gpu_name=g.name, gpu_count=n, gpu_memory_gb=g.memory_gb, price_usd_per_hour=price,
                    price_usd_per_gpu_hour=price / n, spot_price_usd_per_hour=spot,
                    spot_price_usd_per_gpu_hour=None if spot is None else spot / n,
                    region="r1", nvlink=(g.has_nvlink and n > 1) if nvlink is None else nvlink, as_of="2026-05-20",
                    source="test")


OFFERS = [offer("rtx-4090", 1, 0.40), offer("rtx-4090", 2, 0.80), offer("l4", 1, 0.70), offer("t4", 1, 0.35),
          offer("a100-80gb-sxm", 1, 1.50, spot=0.60), offer("a100-80gb-sxm", 8, 12.0), offer("h100-sxm", 1, 2.50),
          offer("h100-sxm", 8, 20.0), offer("l40s", 1, 0.90), offer("rtx-a4000", 4, 1.00)]


def rec(model, **kw):
    return recommend(resolve_model(model), RecommendRequest(**kw), OFFERS, GPUS, VLLM, MFU, BILLING)


def test_100_dollars_to_finetune_llama3_8b_on_20k_samples():
    r = rec("llama-3-8b", workload="finetune", method="qlora", dataset_tokens=20_000 * 512, seq_len=512,
            budget_usd=100)
    assert r.status == "ok" and r.options
    costs = [o["job_cost_usd"] for o in r.options]
    assert costs == sorted(costs) and all(c <= 100 for c in costs)
    for o in r.options:
        assert o["fits"] and o["hours"] > 0 and o["offer"]["provider"] and o["offer"]["as_of"] == "2026-05-20"
        assert any("[ft-09]" in s for s in o["reasons"]) and "ft-09" in o["citations"]
        # cost = hours rounded up to the second (per-second billing in this test) x price
        assert o["job_cost_usd"] == pytest.approx(math.ceil(o["hours"] * 3600) / 3600 * o["price_usd_per_hour"])


def test_smallest_gpu_for_qlora_13b_rules_out_the_small_cards():
    r = rec("llama-2-13b", workload="finetune", method="qlora", dataset_tokens=1e7, seq_len=2048, batch=4)
    names = {o["gpu"] for o in r.options}
    assert "RTX 4090" in names  # 24 GB is enough for QLoRA on 13B
    t4 = next(x for x in r.ruled_out if x["gpu"] == "T4")
    assert "does not fit" in t4["reason"] and "GB" in t4["reason"]


def test_serving_70b_4bit_32k_8_users_needs_80gb_class_or_several_gpus():
    r = rec("llama-3.1-70b", workload="serve", precisions=("int4",), context_tokens=32768, concurrent_users=8,
            top_n=10)
    assert r.status == "ok"
    for o in r.options:
        assert o["gpu_count"] > 1 or o["gpu_memory_gb"] >= 80
        assert o["memory_components_gb"]["kv_cache"] > 0.5 * o["memory_components_gb"]["weights"]  # KV rivals weights
        assert "ga-17" in o["citations"]
    assert any(x["gpu"] == "RTX 4090" for x in r.ruled_out) or any(o["gpu"] == "RTX 4090" and o["gpu_count"] == 2
                                                                  for o in r.options)


def test_bigger_box_of_the_same_gpu_is_not_listed_once_a_smaller_fits():
    r = rec("llama-3.1-8b", workload="serve", context_tokens=4096, concurrent_users=1, top_n=20)
    counts = {}
    for o in r.options:
        counts.setdefault(o["gpu_id"], set()).add(o["gpu_count"])
    assert counts["a100-80gb-sxm"] == {1} and counts["h100-sxm"] == {1}


def test_objectives_order_the_options():
    fast = rec("llama-3.1-8b", workload="serve", objective="fastest", top_n=10).options
    speeds = [o["tokens_per_s"] for o in fast]
    assert speeds == sorted(speeds, reverse=True)
    cheap = rec("llama-3.1-8b", workload="serve", objective="cheapest", top_n=10).options
    monthly = [o["monthly_usd"] for o in cheap]
    assert monthly == sorted(monthly)


def test_full_finetune_over_pcie_is_ruled_out_with_the_guide_reason():
    r = recommend(resolve_model("llama-3.1-8b"), RecommendRequest(workload="finetune", method="full", dataset_tokens=1e7),
                  [offer("rtx-a4000", 4, 1.0)], GPUS, VLLM, MFU, BILLING)
    assert r.status == "nothing_fits"
    x = r.ruled_out[0]
    assert "NVLink" in x["reason"] and x["citation"] == "ft-17"
    assert any("LoRA" in s for s in r.suggestions)


def test_missing_inputs_are_named():
    r = rec("llama-3.1-8b", workload="finetune", method="lora")
    assert r.status == "needs_input" and r.missing == ["dataset_tokens"]


def test_nothing_fits_suggests_what_would():
    r = rec("llama-3.1-405b", workload="serve", context_tokens=8192, max_gpus=2)
    assert r.status == "nothing_fits" and r.options == []
    assert any("4-bit" in s for s in r.suggestions)


def test_chart_series_line_up_with_the_options():
    r = rec("mistral-7b", workload="serve", top_n=4)
    c = r.chart
    assert len(c["options"]) == len(c["cost"]) == len(c["throughput_tokens_per_s"]) == len(r.options)
    assert all("weights" in m for m in c["memory_components_gb"])


def test_a_budget_cap_drops_dearer_options_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service.api import recommend

    r = recommend(model="mistral-7b", workload="serve", max_usd_per_hour=0.30)
    assert r.options and all(o["price_usd_per_hour"] <= 0.30 for o in r.options)
    assert any("over the budget of $0.30/h" in x["reason"] for x in r.rejected)
    free = recommend(model="mistral-7b", workload="serve")
    assert any(o["price_usd_per_hour"] > 0.30 for o in free.options)  # the cap is what removed them


def test_the_largest_objective_ranks_by_memory_within_the_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service.api import recommend

    r = recommend(model="llama-3.1-8b", workload="serve", objective="largest", max_usd_per_hour=500 / 730)
    mem = [o["gpu_memory_gb"] * o["gpu_count"] for o in r.options]
    assert mem == sorted(mem, reverse=True) and all(o["monthly_usd"] <= 500 + 1e-6 for o in r.options)
