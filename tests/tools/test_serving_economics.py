"""Serving economics: one $/M-tokens method, labelled at batch 1 and at the load, the same in recommend and cost."""

import pytest

from knowledge.catalog import load_engines, load_gpus, resolve_model
from tools.cost import ENGINE_MAX_NUM_SEQS, ServingRequest, serving_economics
from tools.throughput import SpeedRequest, estimate_speed

GPUS = {g.id: g for g in load_gpus()}
VLLM = next(e for e in load_engines() if e.id == "vllm")
L8B = resolve_model("llama-3.1-8b")


def test_both_figures_are_price_over_tokens_per_hour():
    e = serving_economics(L8B, GPUS["l40s"], VLLM, ServingRequest(concurrent_users=16, prompt_tokens=3072,
                                                                   output_tokens=1024), 0.90, 0.45)
    for p in (e.batch_1, e.at_load):
        # $/M = price per hour / (tokens/s x 3600 s) x 1e6
        assert p.usd_per_million_tokens == pytest.approx(0.90 / (p.aggregate_tokens_per_s * 3600) * 1e6)
        assert p.spot_usd_per_million_tokens == pytest.approx(0.45 / (p.aggregate_tokens_per_s * 3600) * 1e6)
    assert (e.batch_1.basis, e.batch_1.batch) == ("batch_1", 1)
    assert (e.at_load.basis, e.at_load.batch) == ("concurrent_users", 16)
    # the load's figure is the speed estimator's at batch 16, not a separate formula
    spd = estimate_speed(L8B, GPUS["l40s"], VLLM, SpeedRequest(batch=16, prompt_tokens=3072, output_tokens=1024))
    assert e.at_load.aggregate_tokens_per_s == pytest.approx(spd.aggregate_tokens_per_s)
    # 16 sequences share each step's weight read, so a token costs far less than at batch 1
    assert e.at_load.usd_per_million_tokens < e.batch_1.usd_per_million_tokens / 5
    assert e.monthly_usd == pytest.approx(0.90 * 730)


def test_without_a_load_the_throughput_optimal_batch_within_memory():
    e = serving_economics(L8B, GPUS["l40s"], VLLM, ServingRequest(prompt_tokens=3072, output_tokens=1024), 1.0)
    assert e.at_load.basis == "throughput_optimal"
    assert 1 < e.at_load.batch <= min(e.max_batch_in_memory, ENGINE_MAX_NUM_SEQS)
    # KV per token = 2 (K,V) x 8 kv heads x 128 x 2 B x 32 layers = 131,072 B; 4,096 tokens = 0.537 GB a
    # sequence; L40S 51.54 GB x 0.95 = 48.96 GB, minus ~18 GB of weights and workspace: ~57 sequences.
    assert 50 <= e.max_batch_in_memory <= 60
    limit = next(f for f in e.findings if f.code == "batch_limited_by")
    assert limit.params["limit"] == "memory" and limit.params["batch"] == e.at_load.batch


def test_short_requests_hit_the_engine_cap_not_memory():
    e = serving_economics(L8B, GPUS["h100-sxm"], VLLM, ServingRequest(prompt_tokens=512, output_tokens=256), 2.0)
    assert e.max_batch_in_memory > ENGINE_MAX_NUM_SEQS and e.at_load.batch == ENGINE_MAX_NUM_SEQS
    assert next(f for f in e.findings if f.code == "batch_limited_by").params["limit"] == "engine_max_num_seqs"


def test_a_load_beyond_memory_is_flagged_and_unknown_price_stays_unknown():
    e = serving_economics(L8B, GPUS["l4"], VLLM, ServingRequest(concurrent_users=200, prompt_tokens=6144,
                                                                 output_tokens=2048), None)
    assert e.at_load.usd_per_million_tokens is None and e.monthly_usd is None
    codes = {f.code for f in e.findings}
    assert {"load_exceeds_memory", "price_unknown"} <= codes


@pytest.mark.parametrize("users", [16, None], ids=["16-users", "no-load-given"])
def test_recommend_and_cost_give_the_same_dollars_per_million_tokens(users):
    """Llama 3.1 8B on one L40S, 4,096-token requests (3,072 prompt + 1,024 output), same offer."""
    from assistant.service import api

    rec = api.recommend(model="llama-3.1-8b", workload="serve", context_tokens=4096, concurrent_users=users,
                        top_n=50)
    opt = next(o for o in rec.options if o["gpu_id"] == "l40s" and o["gpu_count"] == 1)
    c = api.cost(gpu="L40S", provider=opt["offer"]["provider"], model="llama-3.1-8b", serve=True, batch=users,
                 prompt_tokens=3072, output_tokens=1024)
    assert c["offer"]["price_usd_per_hour"] == opt["price_usd_per_hour"]
    s = c["serving"]
    assert s["basis"] == opt["serving_basis"] == ("concurrent_users" if users else "throughput_optimal")
    assert s["batch"] == opt["serving_batch"]
    assert s["usd_per_million_tokens"] == pytest.approx(opt["usd_per_million_tokens"], rel=1e-9)
    assert s["usd_per_million_tokens_batch_1"] == pytest.approx(opt["usd_per_million_tokens_batch_1"], rel=1e-9)
