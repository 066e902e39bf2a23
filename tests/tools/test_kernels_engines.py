"""Engine generations, attention over a growing KV cache, and prompts longer than the context window.

Numbers come from the cited rows of tests/data/speed_measurements.csv or are worked by hand.
"""

import pytest

from assistant.service import api
from knowledge.catalog import load_engines, resolve_engine
from tools.errors import InvalidInput
from tools.schemas import GpuSpec, ModelArch, validated
from tools.throughput import CONTEXT_REFUSE_FACTOR, EngineProfile, SpeedRequest, check_context_window, estimate_speed

LLAMA2_7B = ModelArch(id="l27", name="Llama 2 7B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                      num_kv_heads=32, head_dim=128, intermediate_size=11008, vocab_size=32000,
                      attention_kind="MHA", max_context=4096)
H100 = GpuSpec(id="h100", name="H100", memory_gib=80, memory_type="HBM3", mem_bandwidth_gb_per_s=3350,
               bf16_dense_tflops=989, fp8_dense_tflops=1979, fp8_support=True, nvlink_gb_per_s=900,
               interconnect="NVLink 4", architecture="Hopper")
IDEAL = EngineProfile(id="ideal", name="ideal", bw_eff_hbm=1.0, bw_eff_gddr=1.0, overhead_ms_per_layer=0.0,
                      compute_eff=1.0, prefill_eff=1.0)


# ---- generations ---------------------------------------------------------------------------------


def test_defaults_are_the_current_releases_and_say_so():
    assert resolve_engine(None).id == "vllm" and "V1" in resolve_engine(None).generation
    assert resolve_engine("ollama").id == "llama.cpp" and resolve_engine("llama.cpp").cuda_graphs
    assert resolve_engine("transformers").id == "pytorch-eager"
    est = api.speed(model="llama-3.1-8b", gpu="H100")
    assert "V1 engine" in est.assumptions[0] or any("V1 engine" in a for a in est.assumptions)
    for e in load_engines():
        assert e.generation and e.source


def test_llama_cpp_cuda_graphs_generation():
    # llama.cpp issue #6763 (NVIDIA): llama-2-7b Q4_K_M on H100 PCIe, -n 128: 143.35 tok/s before CUDA
    # graphs, 163.83 with them (x1.14). Both generations are fitted, sharing one bandwidth efficiency (the
    # same MMVQ kernels; bw_group 'ggml') and pulled towards each other (FAMILY_WEIGHT); the per-layer
    # overheads come out equal at the grid's 0.05 ms steps (finer steps overfit: see calibrate_speed), so
    # the newer generation is never slower and each row is within the fit's in-sample error (+11.5 %, -2.4 %).
    kw = dict(model="meta-llama/Llama-2-7b-hf", gpu="h100-pcie", precision="q4_k_m", prompt_tokens=16,
              output_tokens=128)
    old = api.speed(engine="llama.cpp-legacy", **kw).decode_tokens_per_s
    new = api.speed(engine="llama.cpp", **kw).decode_tokens_per_s
    assert old == pytest.approx(143.35, rel=0.15) and new == pytest.approx(163.83, rel=0.1)
    assert new >= old
    assert resolve_engine("llama.cpp").cuda_graphs and not resolve_engine("llama.cpp-legacy").cuda_graphs


def test_vllm_v1_has_less_per_step_overhead_than_v0():
    # vLLM V0 (0.6.3, Qwen2.5 speed benchmark): Qwen2.5-7B bf16 on A100, 2048 new tokens: 84.28 tok/s.
    # vLLM V1 (PR #23197, H100): Llama 3.1 8B bf16 batch 1, 256 in / 32 out: 0.236 s for the request.
    v0, v1 = resolve_engine("vllm-v0"), resolve_engine("vllm")
    per_step = {e.id: e.overhead_ms_per_layer * 28 + e.overhead_ms_per_step for e in (v0, v1)}
    assert per_step["vllm"] < per_step["vllm-v0"] + 1e-9
    q = api.speed(model="Qwen/Qwen2.5-7B-Instruct", gpu="a100-80gb-sxm", engine="vllm-v0", prompt_tokens=1,
                  output_tokens=2048)
    assert q.decode_tokens_per_s == pytest.approx(84.28, rel=0.1)
    r = api.speed(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", engine="vllm", prompt_tokens=256,
                  output_tokens=32)
    assert r.request_latency_s == pytest.approx(0.236, rel=0.15)


def test_old_transformers_cost_grows_with_batch_times_length():
    # optimum GPTQ table (transformers 2023, A100, Llama-2-13B fp16, 512 in / 512 out): per-token
    # latency 36.96 ms at batch 1, 47.37 at 8, 69.94 at 16 -- the concatenated KV cache is copied
    # every step, so the rise follows batch x context, not the weights.
    kw = dict(model="meta-llama/Llama-2-13b-chat-hf", gpu="a100-80gb-sxm", engine="pytorch-eager-legacy",
              precision="fp16", prompt_tokens=512, output_tokens=512)
    est = {b: api.speed(batch=b, **kw) for b in (1, 8, 16)}
    per_token_ms = {b: e.request_latency_s / 512 * 1e3 for b, e in est.items()}  # optimum's metric: prefill included
    assert per_token_ms[16] / per_token_ms[1] == pytest.approx(69.94 / 36.96, rel=0.25)
    s = {b: e.step_ms for b, e in est.items()}
    assert s[16]["attention"] > 8 * s[1]["attention"]  # KV traffic ~ batch
    assert s[16]["weights"] == pytest.approx(s[1]["weights"], rel=0.05)  # weights read once per step
    assert resolve_engine("pytorch-eager-legacy").kv_passes > resolve_engine("vllm").kv_passes


# ---- attention over a long, growing KV cache ------------------------------------------------------


def test_attention_phase_is_the_kv_cache_over_bandwidth_by_hand():
    # batch 256, prompt 128, output 4000: average context 128 + 2000 = 2128 tokens;
    # KV bytes/token = 2 x 32 heads x 128 x 2 B x 32 layers = 524,288 B
    # reads per step = 256 x 2128 x 524,288 B = 285.6 GB -> at 3,350 GB/s: 85.3 ms
    r = validated(SpeedRequest, batch=256, prompt_tokens=128, output_tokens=4000)
    e = estimate_speed(LLAMA2_7B, H100, IDEAL, r)
    expected_ms = 256 * 2128 * 524_288 / 3350e9 * 1e3
    assert e.step_ms["attention"] == pytest.approx(expected_ms, rel=1e-6)
    assert e.step_ms["attention"] > 10 * e.step_ms["weights"]  # long outputs at large batch: attention-bound
    short = estimate_speed(LLAMA2_7B, H100, IDEAL, validated(SpeedRequest, batch=256, prompt_tokens=128,
                                                             output_tokens=128))
    assert short.aggregate_tokens_per_s > 5 * e.aggregate_tokens_per_s


def test_kv_passes_multiply_the_attention_reads():
    r = validated(SpeedRequest, batch=16, prompt_tokens=1000, output_tokens=200)
    one = estimate_speed(LLAMA2_7B, H100, IDEAL, r)
    three = estimate_speed(LLAMA2_7B, H100, IDEAL.model_copy(update={"kv_passes": 3.0}), r)
    assert three.step_ms["attention"] == pytest.approx(3 * one.step_ms["attention"], rel=1e-9)


def test_time_to_first_token_grows_quadratically_with_a_long_prompt():
    # causal attention FLOPs 2 x layers x width x p^2: 2 x 32 x 4096 x 32,000^2 = 2.68e17 at 989 TFLOPS = 271 s
    # on top of the matmuls 2 x 6.74e9 x 32,000 = 4.3e14 -> the attention term dominates at 32k tokens
    arch = LLAMA2_7B.model_copy(update={"max_context": 0})
    e = estimate_speed(arch, H100, IDEAL, validated(SpeedRequest, prompt_tokens=32_000, output_tokens=1))
    assert e.time_to_first_token_s == pytest.approx((2 * 32 * 4096 * 32_000 ** 2 + 2 * 6.74e9 * 32_000) / 989e12,
                                                    rel=0.01)


# ---- the context window: warn slightly over, refuse far over (one rule for every tool) ------------


def test_slightly_over_the_window_warns_and_estimates():
    est = api.speed(model="llama-2-7b", gpu="H100", prompt_tokens=4000, output_tokens=200)  # 4,200 > 4,096
    assert est.warnings and "context window of 4,096" in est.warnings[0]
    assert est.warnings[0] in est.assumptions[:2] and est.decode_tokens_per_s > 0
    assert check_context_window(LLAMA2_7B, 4096) is None


def test_far_over_the_window_is_refused_naming_the_limit():
    too_many = CONTEXT_REFUSE_FACTOR * 4096 + 1
    with pytest.raises(InvalidInput, match=r"context window of Llama 2 7B \(64 x 4,096 = 262,144 tokens\)"):
        check_context_window(LLAMA2_7B, too_many)
    with pytest.raises(InvalidInput, match="context window"):
        api.speed(model="llama-2-7b", gpu="H100", prompt_tokens=too_many, output_tokens=1)


def test_the_memory_calculator_refuses_at_the_same_limit():
    # tools/vram.py refuses inference beyond 64 x the model's context, the speed tool's CONTEXT_REFUSE_FACTOR
    with pytest.raises(Exception, match="64 x"):
        api.vram(model="llama-2-7b", seq_len=CONTEXT_REFUSE_FACTOR * 4096 + 1)
    assert api.vram(model="llama-2-7b", seq_len=5000).total_gb > 0  # over the window: no refusal
