"""Solving for the unknown, with hand-worked numbers.

Shared arithmetic (tools.vram, inference, bf16, no tensor parallel):
  Llama 3.1 8B: 8,030,261,248 params x 2 B = 16.0605 GB of weights;
  KV cache per token = 2 (K, V) x 8 kv heads x 128 head dim x 2 B x 32 layers = 131,072 B;
  prefill workspace per prompt token = 2 B x (3 x 4096 + 2 x 4096 + 3 x 14336) = 126,976 B
  (transformers prefills the whole prompt at once), plus fp32 logits of the last token
  4 B x 128,256 vocab = 513,024 B per sequence;
  CUDA context = 0.5 GB + 5 % of everything allocated.
  GPU memory: a "24 GB" card is 24 GiB = 25.7698 GB, a "48 GB" one 51.5396 GB, "80 GB" 85.8993 GB.
"""

import pytest

from knowledge.catalog import load_engines, load_gpus, load_training_efficiency, resolve_model
from tools.cost import BillingPolicy, ServingRequest, serving_economics
from tools.errors import InvalidInput
from tools.recommend import RecommendRequest
from tools.schemas import GpuOffer, VramRequest
from tools.solve import best_gpu_by_cost, max_batch_that_fits, max_context_that_fits, min_gpu_count, min_gpu_memory
from tools.vram import estimate_vram

GPUS = {g.id: g for g in load_gpus()}
L8B = resolve_model("llama-3.1-8b")
W_8B_GB = 8_030_261_248 * 2 / 1e9


def test_max_context_of_llama_3_1_8b_bf16_on_one_l4():
    # The L4's usable memory is the 23,034 MiB nvidia-smi reports = 24.1527 GB (not 24 GiB = 25.77 GB).
    # total(s) = 1.05 x (16.0605 + s x (131,072 + 126,976) B + 513,024 B) + 0.5 <= 24.1527 GB
    # s <= ((24.1527 - 0.5) / 1.05 - 16.0605 - 0.000513) / 0.000258048 = 25,055.6 -> 25,055 tokens
    by_hand = ((23_034 * 2**20 / 1e9 - 0.5) / 1.05 - W_8B_GB - 513_024 / 1e9) / (258_048 / 1e9)
    assert int(by_hand) == 25_055
    r = max_context_that_fits(L8B, VramRequest(), GPUS["l4"].memory_gb)
    assert r.solved and r.value == 25_055 and r.unit == "tokens"
    assert r.limited_by == "kv_cache"  # the KV cache grows fastest with the context
    assert r.memory_gb <= GPUS["l4"].memory_gb < estimate_vram(L8B, VramRequest(seq_len=25_056)).total_gb
    assert r.config["seq_len"] == 25_055 and r.config["weight_precision"] == "bf16"


def test_max_concurrent_users_at_8k_on_an_l40s():
    # per sequence of 8,192 tokens: KV 8,192 x 131,072 B = 1.0737 GB (+ 513,024 B of logits);
    # fixed: 16.0605 GB weights + 8,192 x 126,976 B = 1.0402 GB prefill workspace;
    # usable: the 46,068 MiB nvidia-smi reports = 48.3055 GB (ECC on; 48 GiB would be 51.54 GB)
    # b <= ((48.3055 - 0.5) / 1.05 - 16.0605 - 1.0402) / 1.07425 = 26.46 -> 26 users
    by_hand = ((46_068 * 2**20 / 1e9 - 0.5) / 1.05 - W_8B_GB - 8192 * 126_976 / 1e9) / ((8192 * 131_072 + 513_024) / 1e9)
    assert int(by_hand) == 26
    r = max_batch_that_fits(L8B, VramRequest(seq_len=8192), GPUS["l40s"].memory_gb)
    assert r.solved and r.value == 26 and r.unit == "sequences" and r.limited_by == "kv_cache"
    assert not r.findings  # under vLLM's default cap of 256 sequences


def test_min_h100_count_to_serve_llama_3_1_405b_in_fp8():
    # fp8 weights: 401.65 B linear params x 1 B + 4.21 B embedding/LM-head params x 2 B = 410.06 GB.
    # Tensor parallel must divide 128 heads: 1, 2, 4, 8 ... At 4 GPUs the weights alone are
    # 410.06 / 4 = 102.5 GB > 85.9 GB; at 8 they are 51.3 GB and all of it 55.4 GB: 8 H100s, the single
    # 8-GPU node Meta's Llama 3.1 release says the FP8 405B runs on.
    a = resolve_model("llama-3.1-405b")
    assert (401_646_551_040 * 1 + 4_206_837_760 * 2) / 1e9 / 4 > GPUS["h100-sxm"].memory_gb
    r = min_gpu_count(a, VramRequest(weight_precision="fp8", seq_len=8192), GPUS["h100-sxm"].memory_gb)
    assert r.solved and r.value == 8 and r.unit == "GPUs"
    assert r.config["tensor_parallel"] == 8 and r.limited_by == "weights"
    assert 51 < r.memory_gb < 60


def test_min_gpu_count_for_training_uses_fsdp_and_says_when_nothing_fits():
    a = resolve_model("llama-3.1-70b")
    # full fine-tuning without checkpointing: the activations of one 2,048-token sequence (~96 GB
    # on each GPU) do not shrink with sharding, so no number of 80 GB GPUs holds it
    r = min_gpu_count(a, VramRequest(method="full"), GPUS["h100-sxm"].memory_gb, max_gpus=64)
    assert not r.solved and r.limited_by == "activations" and r.findings[0].code == "exceeds_max_gpus"
    # bf16 training with checkpointing: 70.55 B params x 8 B (2 weights + 2 grads + 4 AdamW moments) =
    # 564.4 GB sharded over n, + 2 gathered layers (2 x 1.71 GB), activations 4.36 GB, logits 2.63 GB,
    # CUDA context 0.5 GB + 5 %:
    #   n = 7: 564.4 / 7 + 3.42 + 4.36 + 2.63 = 91.04 GB -> x 1.05 + 0.5 = 96.1 GB > 85.9 GB
    #   n = 8: 564.4 / 8 + 3.42 + 4.36 + 2.63 = 80.97 GB -> x 1.05 + 0.5 = 85.5 GB <= 85.9 GB (just)
    def by_hand(n):
        return 1.05 * (70_553_706_496 * 8 / 1e9 / n + 3.42 + 4.363 + 2.627) + 0.5
    assert by_hand(7) > GPUS["h100-sxm"].memory_gb > by_hand(8) - 0.1
    r = min_gpu_count(a, VramRequest(method="full", training_precision="bf16", grad_checkpointing=True),
                      GPUS["h100-sxm"].memory_gb, max_gpus=64)
    assert r.solved and r.value == 8 and r.config["sharding"] == "fsdp" and r.config["gpus"] == 8
    assert r.memory_gb == pytest.approx(by_hand(8), abs=0.1)
    assert r.limited_by == "optimizer"  # the largest part at 7 GPUs


def test_min_gpu_memory_and_the_gpus_that_have_it():
    r = min_gpu_memory(L8B, VramRequest(seq_len=8192), list(GPUS.values()))
    # 1.05 x (16.0605 + 1.0737 + 1.0402 + 0.0005) + 0.5 = 19.58 GB = 18.24 GiB: no 16 GB card, every 24 GB one
    assert r.value == pytest.approx(1.05 * (W_8B_GB + 8192 * 131_072 / 1e9 + 8192 * 126_976 / 1e9 + 513_024 / 1e9)
                                    + 0.5, abs=1e-4)
    assert r.details["required_gib"] == pytest.approx(r.value * 1e9 / 2**30)
    names = [g["name"] for g in r.details["gpus"]]
    assert "L4" in names and "RTX 4090" in names and "T4" not in names and "RTX 4080" not in names
    mems = [g["memory_gb"] for g in r.details["gpus"]]
    assert mems == sorted(mems) and mems[0] >= r.value
    assert r.limited_by == "weights"


def test_best_gpu_by_cost_for_serving_is_the_lowest_dollars_per_million_tokens():
    def offer(gid, price):
        g = GPUS[gid]
        return GpuOffer(provider="p", instance_type=gid, accelerator_name=g.name, gpu_id=gid, gpu_name=g.name,
                        gpu_count=1, gpu_memory_gb=g.memory_gb, price_usd_per_hour=price, as_of="2026-05-20")
    prices = {"l4": 0.70, "l40s": 0.90, "h100-sxm": 2.50}
    vllm = next(e for e in load_engines() if e.id == "vllm")
    req = RecommendRequest(workload="serve", context_tokens=4096, concurrent_users=16)
    r = best_gpu_by_cost(L8B, req, [offer(g, p) for g, p in prices.items()], GPUS, vllm, load_training_efficiency(),
                         {"p": BillingPolicy(provider="p", increment_s=1)})
    # each candidate priced independently with the one serving-economics function (3,072 + 1,024 tokens)
    each = {g: serving_economics(L8B, GPUS[g], vllm, ServingRequest(prompt_tokens=3072, output_tokens=1024,
                                                                     concurrent_users=16), p).at_load
            for g, p in prices.items()}
    best = min(each, key=lambda g: each[g].usd_per_million_tokens)
    assert r.solved and r.unit == "usd_per_million_tokens" and r.config["gpu_id"] == best
    assert r.value == pytest.approx(each[best].usd_per_million_tokens)
    assert all(o["value"] >= r.value for o in r.details["runners_up"])


def test_nothing_fits_at_the_minimum_and_bad_memory_is_named():
    r = max_context_that_fits(resolve_model("llama-3.1-405b"), VramRequest(), GPUS["l4"].memory_gb)
    assert not r.solved and r.value is None and r.limited_by == "does_not_fit_at_minimum"
    assert r.findings[0].params["largest_component"] == "weights"
    with pytest.raises(InvalidInput, match="gpu_memory_gb"):
        max_batch_that_fits(L8B, VramRequest(), 0.0)


def test_service_wrapper_resolves_names_and_applies_practitioner_defaults():
    from assistant.service import api

    assert api.solve(unknown="max_context", model="Llama 3.1 8B", gpu="L4").value == 25_055
    # Qwen2.5 32B LoRA: checkpointing is the practitioners' default, so the need is 75.3 GB, not 111.1 GB
    r = api.solve(unknown="min_gpu_memory", model="qwen2.5-32b", method="lora")
    assert r.value == pytest.approx(75.32, abs=0.01)
    assert [(f.code, f.params["field"]) for f in r.findings] == [("default_applied", "grad_checkpointing")]
    assert r.details["gpus"][0]["memory_gb"] == pytest.approx(85.52, abs=0.01)  # an H100: 81,559 MiB usable
    assert api.solve(unknown="min_gpu_memory", model="qwen2.5-32b", method="lora", apply_defaults=False).value == \
        pytest.approx(111.07, abs=0.01)
    with pytest.raises(InvalidInput, match="unknown"):
        api.solve(unknown="max_ctx", model="llama-3.1-8b", gpu="L4")


@pytest.mark.parametrize("call, field", [
    (dict(unknown="min_gpu_count", model="llama-3.1-8b", gpu="L4", max_gpus="x"), "max_gpus"),
    (dict(unknown="min_gpu_count", model="llama-3.1-8b", gpu="L4", max_gpus=0), "max_gpus"),
    (dict(unknown="max_context", model="llama-3.1-8b", gpu="L4", headroom_fraction=2), "headroom_fraction"),
    (dict(unknown="min_gpu_memory", model="llama-3.1-8b", headroom_fraction="x"), "headroom_fraction"),
    (dict(unknown="max_context", model="llama-3.1-8b", gpu_memory_gb=float("nan")), "gpu_memory_gb"),
    (dict(unknown="max_batch", model="llama-3.1-8b", gpu="L4", seq_len=10**9), "seq_len"),
    (dict(unknown="max_context", model="llama-3.1-8b", gpu="L4", foo=1), "foo"),
], ids=["max-gpus-text", "max-gpus-zero", "headroom-2", "headroom-text", "memory-nan", "seq-too-long", "unknown-field"])
def test_bad_inputs_are_named_never_a_traceback(call, field):
    from assistant.service import api

    with pytest.raises(InvalidInput, match=f"Invalid {field}"):
        api.solve(**call)


def test_largest_model_is_the_memory_over_the_bytes_per_parameter():
    # bf16 weights are 2 bytes a parameter: 85.9 GB (80 GiB) less the CUDA context, KV cache and
    # activations of one 1,024-token sequence leaves room for about 40B; 8-bit weights double it
    from tools.schemas import VramRequest
    from tools.solve import largest_model_that_fits

    bf16 = largest_model_that_fits(VramRequest(seq_len=1024), 85.9, [])
    int8 = largest_model_that_fits(VramRequest(seq_len=1024, weight_precision="int8"), 85.9, [])
    assert 36 <= bf16.value <= 42.9 and bf16.memory_gb <= 85.9
    assert 1.8 <= int8.value / bf16.value <= 2.1
    assert largest_model_that_fits(VramRequest(seq_len=1024), 0.5, []).solved is False


def test_largest_model_lists_only_real_models_that_fit():
    from knowledge.catalog import load_models
    from tools.schemas import VramRequest
    from tools.solve import largest_model_that_fits

    r = largest_model_that_fits(VramRequest(seq_len=4096, weight_precision="int4"), 25.8,
                                [(m.name, m) for m in load_models()])
    models = r.details["models"]
    assert models and all(m["memory_gb"] <= 25.8 for m in models)
    assert [m["params_b"] for m in models] == sorted((m["params_b"] for m in models), reverse=True)
    assert all(m["params_b"] <= r.value * 1.15 for m in models)  # the generic shape and real ones agree roughly
