"""Kernel families and engine generations of issue 18, each worked by hand from the measurement it cites.

Host operations per quantised linear are counted from the kernels' code (knowledge/quant_kernels.csv
host_ops, with the count in its notes); the dequantise-then-GEMM thresholds are read from the GPTQ
kernels' code; vLLM V1 borrows the torch.compile fit out of sample because V1 compiles the model with
torch.compile and replays CUDA graphs. Measured rows: tests/data/speed_measurements.csv.
"""

import pytest

from benchmarks.calibrate_speed import _prior_from
from knowledge.catalog import load_engines, load_kernels
from tests.tools.speed_cases import estimate_for, load_cases
from tools.kernels import KernelProfile, linear_time_s

KERNELS = {k.id: k for k in load_kernels()}
ENGINES = {e.id: e for e in load_engines()}
CASES = {c.id.split("-")[0]: c for c in load_cases()}


def est(row: str) -> float:
    return estimate_for(CASES[row])


def ms_per_step(row: str) -> float:
    """Milliseconds per decode step from a row's tokens/s (per sequence, or summed over the batch)."""
    c = CASES[row]
    return 1e3 * int(c.row["batch"]) / c.measured if c.row["metric"] != "decode_per_sequence" else 1e3 / c.measured


# ---- counted host operations ---------------------------------------------------------------------

def test_host_ops_are_paid_per_linear_in_eager_engines_only():
    # 25 counted operations at 10 us = 250 us, plus a 20 us residual: 270 us x 224 linears = 60.48 ms
    k = KernelProfile(id="i8", name="i8", host_ops=25, launch_us_per_linear=20, host_sync=True)
    args = dict(weight_bytes=9e9, quantized_params=7.5e9, batch=1, bandwidth=3e12, matmul_flops=1.6e10,
                peak_flops=None, engine_compute_eff=0.5, quantized_linears=224, host_op_us=10.0)
    assert linear_time_s(k, cuda_graphs=False, **args)[2] == pytest.approx(60.48e-3)
    assert linear_time_s(k, cuda_graphs=True, **args)[2] == 0.0


def test_llm_int8_045_host_time_per_linear_matches_the_bitsandbytes_readme():
    # H100 SXM, Llama 3.1 8B, bitsandbytes 0.45 README: INT8+Decomp batch 1 = 81.7 ms per token, BF16 =
    # 24.4 ms on the same machine; the difference over 32 layers x 7 linears = 224 calls is
    # (81.7 - 24.4) / 224 = 256 us per linear, almost all host time (the GPU reads 9 GB in ~2.7 ms)
    per_linear_measured = (ms_per_step("s183") - ms_per_step("s177")) / 224 * 1e3
    assert per_linear_measured == pytest.approx(256, abs=2)
    k, e = KERNELS["bnb-int8"], ENGINES["pytorch-eager"]
    per_linear_model = k.launch_us_per_linear + k.host_ops * e.host_op_us
    assert per_linear_model == pytest.approx(per_linear_measured, rel=0.25)
    assert k.host_sync  # outliers.any() / argwhere read back every call: host and GPU time add


def test_llm_int8_legacy_counts_twice_the_operations_of_045():
    # 0.37 MatMul8bitLt: 49 counted operations (double_quant with two .item() syncs, COO outliers, col32
    # transforms); 0.45: 25. At one host_op_us the 2022 kernel costs 49 / 25 = 1.96x the host time per call
    old, new = KERNELS["bnb-int8-legacy"], KERNELS["bnb-int8"]
    assert (old.host_ops, new.host_ops) == (49, 25)
    assert old.host_sync and new.host_sync


def test_bnb_4bit_gemv_at_one_row_dequantises_from_two():
    # bitsandbytes matmul_4bit: one row -> gemv_4bit (4 counted ops); more rows -> dequantize_4bit +
    # F.linear (5 more). By hand at 10 us per op, 100 linears, 20 us residual: 6.0 ms, then 11.0 ms; the
    # dequantised path streams the packed weights plus a 16-bit copy written and read: (1 + 4 x 2) GB
    # at 1 TB/s = 9 ms against 1 GB / (1 TB/s x 0.9) = 1.11 ms fused
    k = KERNELS["bnb-4bit"].model_copy(update={"bw_eff": 0.9, "launch_us_per_linear": 20,
                                               "reconstruct_launch_us_per_linear": 0})
    assert (k.host_ops, k.reconstruct_host_ops, k.reconstruct_batch) == (4, 5, 2)
    args = dict(weight_bytes=1e9, quantized_params=2e9, bandwidth=1e12, matmul_flops=1e9, peak_flops=None,
                engine_compute_eff=0.5, quantized_linears=100, cuda_graphs=False, host_op_us=10.0)
    m1, _, l1 = linear_time_s(k, batch=1, **args)
    m2, _, l2 = linear_time_s(k, batch=2, **args)
    assert (m1, l1) == (pytest.approx(1e9 / 0.9e12), pytest.approx(6.0e-3))
    assert (m2, l2) == (pytest.approx(9e-3), pytest.approx(11.0e-3))


def test_bnb_nf4_step_growth_from_batch_1_to_8_matches_the_readme():
    # H100, Llama 3.1 8B NF4: 30.1 tok/s at batch 1 (33.2 ms), 168.1 tok/s summed at batch 8 (47.6 ms):
    # the step grows 1.43x when the weights are dequantised for 8 rows
    measured = ms_per_step("s181") / ms_per_step("s180")
    assert measured == pytest.approx(1.43, abs=0.01)
    model = (8 / est("s181")) / (1 / est("s180"))
    assert model == pytest.approx(measured, rel=0.25)


# ---- dequantise thresholds read from the GPTQ kernels' code ------------------------------------------

@pytest.mark.parametrize("kid, first_dequantised_rows", [
    ("gptq-exllama", 8),     # AutoGPTQ 0.4 auto_gptq/modeling/_utils.py: matmul_recons_thd = 8
    ("gptq-exllamav2", 51),  # autogptq_extension/exllamav2/config.h: MAX_Q_GEMM_ROWS 50
    ("gptq-cuda-old", 128),  # qlinear_cuda_old: kernel_switch_threshold = 128
])
def test_gptq_kernels_switch_to_dequantise_then_gemm_at_their_coded_row_count(kid, first_dequantised_rows):
    # by hand: below the threshold the fused kernel streams 4 GB at 2 TB/s x bw_eff (x the per-row
    # growth); from it, 4 GB + 4 B x 7e9 params = 32 GB at 2 TB/s = 16 ms
    k = KERNELS[kid]
    assert k.reconstruct_batch == first_dequantised_rows
    args = dict(weight_bytes=4e9, quantized_params=7e9, bandwidth=2e12, matmul_flops=1e9, peak_flops=None,
                engine_compute_eff=0.5, quantized_linears=0, cuda_graphs=False)
    below, _, _ = linear_time_s(k, batch=first_dequantised_rows - 1, **args)
    at, _, _ = linear_time_s(k, batch=first_dequantised_rows, **args)
    assert below == pytest.approx(4e9 / (2e12 * k.bw_eff) * (1 + k.batch_slope * (first_dequantised_rows - 2)))
    assert at == pytest.approx(16e-3)


def test_exllama_v1_step_from_batch_1_to_16_matches_optimum():
    # optimum benchmark, A100 80GB, Llama-2-13B GPTQ exllama: 29.66 tok/s at batch 1 (33.7 ms) and 167.68
    # summed at batch 16 (95.4 ms), x2.83: at 16 rows the kernel dequantises 12.7e9 params to fp16 every step.
    # (Between 1 and 8 rows the model keeps the fused kernel flat; batch 4 is estimated 25 % fast.)
    measured = ms_per_step("s104") / ms_per_step("s100")
    assert measured == pytest.approx(2.83, abs=0.01)
    model = (16 / est("s104")) / (1 / est("s100"))
    assert model == pytest.approx(measured, rel=0.2)


def test_autogptq_cuda_old_grows_with_every_row_as_its_grid_does():
    # vecquant4matmul_faster_cuda_old launches one grid slice per batch row (blockIdx.z): each row streams
    # the weights again. optimum: 46.44 ms per step at batch 1, 192.48 ms at 16 (x4.14)
    assert KERNELS["gptq-cuda-old"].batch_slope > 0.3
    measured = ms_per_step("s109") / ms_per_step("s105")
    assert measured == pytest.approx(4.14, abs=0.01)
    model = (16 / est("s109")) / (1 / est("s105"))
    assert model == pytest.approx(measured, rel=0.25)


# ---- engine generations ------------------------------------------------------------------------

def test_vllm_v1_borrows_the_torch_compile_fit_and_matches_its_own_measurement():
    # vLLM V1 runs the model through torch.compile with piecewise CUDA graphs, as gpt-fast does: out of
    # sample it borrows that fit. vLLM PR #23197, H100, Llama 3.1 8B BF16, 256 in / 32 out, batch 1:
    # 0.236 s per request = 135.6 tok/s including the prefill
    assert _prior_from()["vllm"] == "torch-compile"
    assert ENGINES["vllm"].cuda_graphs and ENGINES["torch-compile"].cuda_graphs
    assert CASES["s139"].measured == pytest.approx(32 / 0.236, rel=0.002)
    assert est("s139") == pytest.approx(135.6, rel=0.10)
    assert ENGINES["vllm"].overhead_ms_per_layer <= ENGINES["vllm-v0"].overhead_ms_per_layer


def test_llama_cpp_decode_at_32k_context_reads_the_kv_cache_every_step():
    # llama.cpp PR #17505, RTX 4090, Llama 3.1 8B Q4_0, one token per step after 32,768 tokens: 98.14 t/s.
    # By hand: KV per token = 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B; at the average
    # context 32,768 + 256 = 33,024 tokens that is 4.33 GB read per step, about as much as the weights
    c = CASES["s257"]
    assert (int(c.row["prompt_tokens"]), int(c.row["output_tokens"])) == (32768, 512)
    kv_bytes = 32 * 8 * 128 * 2 * 2 * (32768 + 512 / 2)
    assert kv_bytes == pytest.approx(4.33e9, rel=0.002)
    from assistant.service import api
    short = api.speed(model="meta-llama/Llama-3.1-8B", gpu="rtx-4090", engine="llama.cpp", precision="q4_0",
                      prompt_tokens=0, output_tokens=128)
    long = api.speed(model="meta-llama/Llama-3.1-8B", gpu="rtx-4090", engine="llama.cpp", precision="q4_0",
                     prompt_tokens=32768, output_tokens=512)
    bw = 1008e9 * ENGINES["llama.cpp"].bw_eff_gddr
    assert long.step_ms["attention"] == pytest.approx(kv_bytes / bw * 1e3, rel=0.01)
    assert long.step_ms["total"] - short.step_ms["total"] == pytest.approx(kv_bytes / bw * 1e3, rel=0.05)
    # the 2024-fitted profile is slower than these late-2025 builds: -18 % measured, kept under 25 %
    assert long.decode_tokens_per_s == pytest.approx(c.measured, rel=0.25)


def test_exllamav2_long_context_decode_reads_the_kv_cache_at_about_half_the_weight_bandwidth():
    # matt-c1/llama-cpp-speed-measurements, ExLlamaV2 0.1.5 with flash-attention, RTX 4090, Llama-3-8B exl2
    # 8.0 bpw, 16-bit cache, 257 output tokens: 91.25 tok/s after 138 prompt tokens (10.96 ms per step),
    # 67.47 tok/s after 15,985 (14.82 ms). By hand: 15,847 more cache tokens x 131,072 B = 2.077 GB more
    # read per step in 3.86 ms more = 538 GB/s, 0.59 of the 917 GB/s (1008 x 0.91) the weights stream at
    step_short, step_long = ms_per_step("s273"), ms_per_step("s280")
    assert (step_short, step_long) == (pytest.approx(10.96, abs=0.01), pytest.approx(14.82, abs=0.01))
    extra_kv = (15985 - 138) * 131_072
    e = ENGINES["exllamav2"]
    weight_bw = 1008e9 * e.bw_eff_gddr
    attn_share = extra_kv / ((step_long - step_short) * 1e-3) / weight_bw
    assert attn_share == pytest.approx(0.59, abs=0.01)
    # fitted on the engine's rows with 2048+ cache tokens (a 0.1 grid, with the blog's 2023 rows): 0.5
    assert e.attn_bw_eff == pytest.approx(attn_share, abs=0.15)
    from assistant.service import api
    ask = dict(model="meta-llama/Meta-Llama-3-8B-Instruct", gpu="rtx-4090", engine="exllamav2", precision="int8",
               output_tokens=257)
    short, long = api.speed(prompt_tokens=138, **ask), api.speed(prompt_tokens=15985, **ask)
    assert long.kernel == "exl2"
    kv_long = (15985 + 257 / 2) * 131_072
    assert long.step_ms["attention"] == pytest.approx(kv_long / (weight_bw * e.attn_bw_eff) * 1e3, rel=0.01)
    assert long.step_ms["total"] - short.step_ms["total"] == pytest.approx(step_long - step_short, rel=0.25)
    assert long.decode_tokens_per_s == pytest.approx(CASES["s280"].measured, rel=0.15)
    assert any(f"reads the KV cache at ~{e.attn_bw_eff:.0%}" in line for line in long.assumptions)


def test_attention_efficiency_is_fitted_only_on_rows_with_a_long_cache():
    # batch x (prompt + output / 2): 4 x (400 + 128) = 2,112 cache tokens counts as long (>= 2,048);
    # 1 x (1,900 + 128 / 2) = 1,964 does not. An engine needs two long rows, and one whose KV-pass count
    # is fitted (the concatenating transformers cache) does not get a second knob on the same term
    from benchmarks.speed_rows import ATTN_MIN_ROWS, ATTN_ROWS_TOKENS, kv_tokens, relevant

    def case(batch, prompt, output):
        return CASES["s273"].__class__("x", {"batch": batch, "prompt_tokens": prompt, "output_tokens": output})

    assert (ATTN_ROWS_TOKENS, ATTN_MIN_ROWS) == (2048, 2)
    assert kv_tokens({"batch": "4", "prompt_tokens": "400", "output_tokens": "256"}) == 2112
    assert kv_tokens({"batch": "1", "prompt_tokens": "1900", "output_tokens": "128"}) == 1964
    long, short = case("4", "400", "256"), case("1", "1900", "128")
    assert relevant("some-engine", "attn_bw_eff", [long, long, short], False)
    assert not relevant("some-engine", "attn_bw_eff", [long, short, short], False)
    assert not relevant("pytorch-eager-legacy", "attn_bw_eff", [long, long], False)
    # shipped: of the engines with long rows only ExLlamaV2 reads the cache slower than the weights
    assert {i for i, e in ENGINES.items() if e.attn_bw_eff < 1} == {"exllamav2"}


# ---- a GPU's decode share where no engine measured elsewhere pins it -------------------------------

def test_h20_share_worked_from_the_qwen3_32b_row():
    # Qwen speed benchmark (s61): SGLang, Qwen3-32B bf16, batch 1, 2048 output tokens, 20.72 tokens/s =
    # 48.26 ms per step. By hand: 64 layers x (q 5120x8192 + k, v 5120x1024 + o 8192x5120 + MLP 3 x
    # 5120x25600 = 487.6M) = 31.21B + LM head 151936 x 5120 = 0.78B -> 63.98 GB of bf16 weights per step
    # (the 1,024-token average KV cache adds 0.27 GB, 0.4 %). SGLang's fitted per-layer and per-step
    # overheads take 64 x 0.07 + 0.25 = 4.73 ms, leaving 43.53 ms: 1.47 TB/s, against the 4.0 TB/s the
    # torch bandwidth group reaches on HBM3 elsewhere (0.84 x 1.25, capped at 1): a share of 0.37.
    from knowledge.catalog import resolve_gpu
    sg, h20 = ENGINES["sglang"], resolve_gpu("h20").gpu
    step_ms = 1e3 / CASES["s61"].measured
    assert step_ms == pytest.approx(48.26, abs=0.01)
    left_ms = step_ms - 64 * sg.overhead_ms_per_layer - sg.overhead_ms_per_step
    share = 63.98e9 / (left_ms * 1e-3) / (h20.mem_bandwidth_gb_per_s * 1e9 * min(1.0, sg.bw_eff_hbm * sg.hbm3_factor))
    assert share == pytest.approx(0.37, abs=0.01)
    # the fit over all eight H20 rows (0.6B to 32B, where fixed overhead weighs more) lands one grid step above
    assert h20.decode_bw_share == pytest.approx(share, abs=0.05)
    assert est("s61") == pytest.approx(CASES["s61"].measured, rel=0.10)


def test_sglang_takes_the_torch_group_bandwidth_so_the_h20_shortfall_stays_with_the_h20():
    # SGLang runs 16-bit linears on torch / cuBLAS like vLLM (engines.csv bw_group torch); its only rows are
    # on the H20, so without the GPU share its fit read 0.30 of HBM bandwidth and put SGLang on an H100 at
    # half vLLM's speed. Now Llama 3.1 8B bf16 at batch 1 on an H100 is within 10 % for the two engines.
    from assistant.service import api
    kw = dict(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", precision="bf16", batch=1, prompt_tokens=512,
              output_tokens=256)
    vllm, sglang = (api.speed(engine=e, **kw).decode_tokens_per_s for e in ("vllm", "sglang"))
    assert sglang == pytest.approx(vllm, rel=0.10)
    assert ENGINES["sglang"].bw_eff_hbm == ENGINES["vllm"].bw_eff_hbm
    on_h20 = api.speed(engine="vllm", **(kw | {"gpu": "h20"}))
    assert any("Published decode measurements on H20" in a for a in on_h20.assumptions)
    # 4.0 TB/s on paper against the H100's 3.35, but ~1.6 TB/s as measured: slower than the H100
    assert on_h20.decode_tokens_per_s < 0.65 * vllm


def test_share_is_fitted_only_where_no_engine_measured_elsewhere_pins_the_gpu():
    from benchmarks.speed_rows import share_gpus
    from tests.tools.speed_cases import SpeedCase

    def row(engine, gpu):
        return SpeedCase(f"x-{engine}-{gpu}", {"engine_id": engine, "gpu_id": gpu}, 1.0)

    eng = {e: ENGINES[e] for e in ("sglang", "vllm", "pytorch-eager")}
    lone = [row("sglang", "h20"), row("vllm", "h100-sxm"), row("vllm", "a100-80gb-sxm")]
    assert set(share_gpus(lone, eng)) == {"h20"}
    # a host-bound (eager) engine measured elsewhere does not pin the GPU: Python sets its pace
    assert set(share_gpus(lone + [row("pytorch-eager", "h20"), row("pytorch-eager", "h100-sxm")], eng)) == {"h20"}
    # vLLM on the H20 too: vLLM's own efficiency is measured on other GPUs, so the H20 is pinned
    assert set(share_gpus(lone + [row("vllm", "h20")], eng)) == set()
