"""Host (CPU) time in a decode step: eager PyTorch overlapping Python with the GPU, kernels that stall it,
desktop hosts, and kernel generations. Formulas worked by hand; levels checked against cited rows of
tests/data/speed_measurements.csv.
"""

import pytest

from assistant.service import api
from knowledge.catalog import resolve_engine, resolve_kernel
from tools.kernels import KernelProfile
from tools.schemas import GpuSpec, ModelArch, validated
from tools.throughput import EngineProfile, SpeedRequest, estimate_speed

TINY = ModelArch(id="tiny", name="tiny", num_layers=10, hidden_size=1024, num_attention_heads=8, num_kv_heads=8,
                 head_dim=128, intermediate_size=4096, vocab_size=1000, attention_kind="MHA", max_context=4096)
# 1,000 GB/s and no tensor rate: the device time is bytes / bandwidth only
GPU = GpuSpec(id="g", name="g", memory_gib=24, memory_type="GDDR6X", mem_bandwidth_gb_per_s=1000,
              gpu_class="datacenter")
DESKTOP = GPU.model_copy(update={"id": "d", "gpu_class": "consumer"})
EAGER = EngineProfile(id="eager", name="eager", bw_eff_hbm=1.0, bw_eff_gddr=1.0, overhead_ms_per_layer=2.0,
                      compute_eff=1.0, prefill_eff=1.0, host_overlap=True, host_sync_share=0.25,
                      host_factor_consumer=0.5)
REQ = validated(SpeedRequest, precision="bf16", batch=1, prompt_tokens=0, output_tokens=1, kv_precision="bf16")


def _device_ms(est) -> float:
    return est.step_ms["weights"] + est.step_ms["attention"] + est.step_ms["interconnect"]


def test_eager_step_is_the_longer_of_host_and_gpu_plus_a_share_of_the_shorter():
    # host 10 layers x 2 ms = 20 ms; GPU = weights / 1 TB/s (a few ms) -> step = 20 + 0.25 x GPU
    est = estimate_speed(TINY, GPU, EAGER, REQ)
    gpu_ms = _device_ms(est)
    assert gpu_ms < 20.0
    assert est.step_ms["total"] == pytest.approx(20.0 + 0.25 * gpu_ms, rel=1e-9)
    serial = estimate_speed(TINY, GPU, EAGER.model_copy(update={"host_overlap": False}), REQ)
    assert serial.step_ms["total"] == pytest.approx(20.0 + gpu_ms, rel=1e-9)


def test_a_desktop_host_runs_python_faster_only_for_eager_engines():
    # consumer GPU: host 0.5 x 20 ms = 10 ms; an engine without host_overlap keeps its fitted overhead
    est = estimate_speed(TINY, DESKTOP, EAGER, REQ)
    gpu_ms = _device_ms(est)
    assert est.step_ms["total"] == pytest.approx(max(10.0, gpu_ms) + 0.25 * min(10.0, gpu_ms), rel=1e-9)
    compiled = EAGER.model_copy(update={"host_overlap": False})
    assert estimate_speed(TINY, DESKTOP, compiled, REQ).step_ms["total"] == pytest.approx(
        estimate_speed(TINY, GPU, compiled, REQ).step_ms["total"], rel=1e-9)


def test_a_kernel_that_reads_back_a_size_every_call_stalls_the_eager_loop():
    # LLM.int8() with an outlier threshold: `outliers.any()` / argwhere sync on every linear layer
    # (bitsandbytes 0.45 int8_vectorwise_quant), so host and GPU time add: 20 ms + 70 x 100 us + GPU
    i8 = KernelProfile(id="i8", name="i8", formats=("int8",), launch_us_per_linear=100.0, host_sync=True)
    req = REQ.model_copy(update={"precision": "int8"})
    est = estimate_speed(TINY, GPU, EAGER, req, kernel=i8)
    assert est.step_ms["total"] == pytest.approx(20.0 + 70 * 0.1 + _device_ms(est), rel=1e-9)
    overlapped = estimate_speed(TINY, GPU, EAGER, req, kernel=i8.model_copy(update={"host_sync": False}))
    assert overlapped.step_ms["total"] < est.step_ms["total"]


def test_llm_int8_is_a_syncing_kernel_in_both_generations():
    for kid in ("bnb-int8", "bnb-int8-legacy"):
        assert resolve_kernel(kid, resolve_engine("transformers")).host_sync
    assert not resolve_kernel("bnb-nf4", resolve_engine("transformers")).host_sync
    # old transformers runs the pre-0.45 kernel by default, current transformers the rewritten one
    assert resolve_engine("pytorch-eager-legacy").kernels["int8"].id == "bnb-int8-legacy"
    assert resolve_engine("transformers").kernels["int8"].id == "bnb-int8"


def test_transformers_bf16_on_h100_is_host_bound_and_flat_with_batch():
    # bitsandbytes benchmarking/README.md (transformers 4.46.3, H100 80GB SXM, Llama 3.1 8B, 64 in / 64
    # out): BF16 per-token latency 24.4 ms at batch 1, 25.5 at 8, 26.1 at 32 -- Python sets the pace.
    kw = dict(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", engine="transformers", prompt_tokens=64,
              output_tokens=64)
    ms = {b: api.speed(batch=b, **kw).step_ms["total"] for b in (1, 8, 32)}
    assert ms[1] == pytest.approx(24.4, rel=0.15)
    assert ms[32] / ms[1] < 1.25
    est = api.speed(batch=1, **kw)
    assert any("host overhead" in a.lower() for a in est.assumptions)
    assert est.bound == "host"  # not "memory": the GPU waits for Python
    assert api.speed(batch=1, **(kw | {"engine": "vllm"})).bound == "memory"


def test_a_desktop_4090_runs_the_same_python_faster_than_the_h100_server():
    # same README: NF4 batch 1, Llama 3.1 8B: 14.8 ms/token on the RTX 4090 desktop, 33.1 ms on the H100
    # server -- a GPU with 1/3 of the bandwidth is 2.2x faster because the host is faster.
    kw = dict(model="meta-llama/Llama-3.1-8B", engine="transformers", precision="bnb-nf4", prompt_tokens=64,
              output_tokens=64)
    desk = api.speed(gpu="rtx-4090", **kw).step_ms["total"]
    server = api.speed(gpu="h100-sxm", **kw).step_ms["total"]
    assert desk < server
    assert resolve_engine("transformers").host_factor_consumer < 1.0


def test_an_eager_layer_costs_its_counted_torch_operations_at_the_per_operation_host_time():
    # 61 torch calls per Llama layer (transformers 4.45, knowledge/engines.csv notes) x 10 us = 0.61 ms;
    # TINY has 10 layers -> 6.1 ms of host time, and the fitted per-layer overhead is no longer read
    counted = EAGER.model_copy(update={"host_ops_per_layer": 61.0, "host_op_us": 10.0, "overhead_ms_per_layer": 9.0})
    assert counted.layer_host_ms() == pytest.approx(0.61, rel=1e-12)
    est = estimate_speed(TINY, GPU, counted, REQ)
    gpu_ms = _device_ms(est)
    assert gpu_ms < 6.1
    assert est.step_ms["total"] == pytest.approx(6.1 + 0.25 * gpu_ms, rel=1e-9)
    # a quantised kernel's wrapper operations are priced at the same per-operation time
    slower = estimate_speed(TINY, GPU, counted.model_copy(update={"host_op_us": 20.0}), REQ)
    assert slower.step_ms["total"] == pytest.approx(12.2 + 0.25 * gpu_ms, rel=1e-9)


def test_shipped_eager_profiles_count_more_operations_in_the_older_generation():
    # transformers before 4.36 sliced the rotary cache and concatenated a tuple cache in every layer
    # (73 calls) where 4.45 computes rotary once per step and runs SDPA (61 calls)
    new, old = resolve_engine("pytorch-eager"), resolve_engine("pytorch-eager-legacy")
    assert (new.host_ops_per_layer, old.host_ops_per_layer) == (61, 73)
    assert old.layer_host_ms() / new.layer_host_ms() == pytest.approx(73 / 61 * old.host_op_us / new.host_op_us)


def test_llm_int8_on_h100_is_the_counted_host_work_of_every_layer():
    # bitsandbytes benchmarking/README.md (transformers 4.46.3, bitsandbytes 0.45, H100 SXM, Llama 3.1 8B,
    # batch 1): INT8 12.24 tokens/s = 81.7 ms per token. By hand with the shipped profiles: 32 layers x
    # (61 layer ops + 7 linears x 25 wrapper ops) x 10 us + 224 linears x 20 us launch = 75.5 + 4.5 =
    # 80.0 ms of host time, which a syncing kernel cannot overlap with the ~5 ms of GPU work.
    e, k = resolve_engine("pytorch-eager"), resolve_kernel("bnb-int8", resolve_engine("pytorch-eager"))
    host_ms = 32 * (e.host_ops_per_layer + 7 * k.host_ops) * e.host_op_us / 1000 + 224 * k.launch_us_per_linear / 1000
    assert host_ms == pytest.approx(80.0, abs=0.1)
    est = api.speed(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", engine="transformers", precision="bnb-int8",
                    batch=1, prompt_tokens=64, output_tokens=64)
    assert est.step_ms["overhead"] == pytest.approx(host_ms + e.overhead_ms_per_step, rel=0.02)
    assert est.decode_tokens_per_s == pytest.approx(12.24, rel=0.10)
