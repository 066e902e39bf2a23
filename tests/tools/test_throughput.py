"""Hand-worked checks of the speed and training-time estimators (explicit GPUs and engines)."""

import math

import pytest

from tools.architecture import count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import GpuSpec, ModelArch, validated
from tools.throughput import EngineProfile, SpeedRequest, estimate_speed, weight_bytes_read
from tools.training import QLORA_SPEED_FACTOR, TrainRequest, estimate_train_time
from tools.units import weight_format

LLAMA2_7B = ModelArch(id="l27", name="Llama 2 7B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                      num_kv_heads=32, head_dim=128, intermediate_size=11008, vocab_size=32000,
                      attention_kind="MHA", max_context=4096)
MIXTRAL = ModelArch(id="mx", name="Mixtral 8x7B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                    num_kv_heads=8, head_dim=128, intermediate_size=14336, vocab_size=32000,
                    num_experts=8, experts_per_token=2, max_context=32768)
# A100 80GB SXM figures from knowledge/gpus.csv (NVIDIA datasheet): 2,039 GB/s, 312 TFLOPS BF16, NVLink 600 GB/s.
A100 = GpuSpec(id="a100", name="A100", memory_gib=80, memory_type="HBM2e", mem_bandwidth_gb_per_s=2039,
               bf16_dense_tflops=312, fp8_support=False, nvlink_gb_per_s=600, interconnect="NVLink 3",
               architecture="Ampere")
H100 = GpuSpec(id="h100", name="H100", memory_gib=80, memory_type="HBM3", mem_bandwidth_gb_per_s=3350,
               bf16_dense_tflops=989, fp8_dense_tflops=1979, fp8_support=True, nvlink_gb_per_s=900,
               interconnect="NVLink 4", architecture="Hopper")
L4 = GpuSpec(id="l4", name="L4", memory_gib=24, memory_type="GDDR6", mem_bandwidth_gb_per_s=300,
             bf16_dense_tflops=121, fp8_dense_tflops=242.5, fp8_support=True, interconnect="PCIe Gen4",
             architecture="Ada Lovelace")
IDEAL = EngineProfile(id="ideal", name="ideal", bw_eff_hbm=1.0, bw_eff_gddr=1.0, quant_bw_factor=1.0,
                      overhead_ms_per_layer=0.0, compute_eff=1.0, prefill_eff=1.0, allreduce_us=0.0)


def req(**kw):
    return validated(SpeedRequest, **kw)


def test_batch1_decode_is_bandwidth_over_bytes():
    # Weights read per token: every linear + the untied LM head, not the embedding lookup.
    c = count_params(LLAMA2_7B)
    read = (c.total - c.embedding) * 2
    kv = 2 * 32 * 128 * 2 * 32 * (0 + 2 / 2)  # bytes per token x average context of 1 token
    e = estimate_speed(LLAMA2_7B, A100, IDEAL, req(batch=1, prompt_tokens=0, output_tokens=2))
    assert e.bound == "memory"
    assert e.decode_tokens_per_s == pytest.approx(2039e9 / (read + kv), rel=1e-6)
    assert weight_bytes_read(LLAMA2_7B, weight_format("bf16"), 1) == read


def test_hbm_beats_gddr_and_int8_halves_bytes():
    a100 = estimate_speed(LLAMA2_7B, A100, IDEAL, req(prompt_tokens=0, output_tokens=2))
    l4 = estimate_speed(LLAMA2_7B, L4, IDEAL, req(prompt_tokens=0, output_tokens=2))
    assert a100.decode_tokens_per_s / l4.decode_tokens_per_s == pytest.approx(2039 / 300, rel=0.01)
    i8 = estimate_speed(LLAMA2_7B, L4, IDEAL, req(precision="int8", prompt_tokens=0, output_tokens=2))
    # linear layers at 1 byte, LM head kept 16-bit: a bit under 2x
    assert 1.8 < i8.decode_tokens_per_s / l4.decode_tokens_per_s < 2.0


def test_batching_raises_aggregate_until_compute_bound():
    speeds = {b: estimate_speed(LLAMA2_7B, H100, IDEAL, req(batch=b, prompt_tokens=0, output_tokens=2))
              for b in (1, 16, 256, 4096)}
    assert speeds[16].aggregate_tokens_per_s > 10 * speeds[1].aggregate_tokens_per_s
    assert speeds[1].decode_tokens_per_s > speeds[16].decode_tokens_per_s  # each user waits a bit longer
    assert speeds[4096].bound == "compute"
    # The linear layers are compute-bound; attention stays a separate, memory-bound phase that reads
    # the KV cache (avg context 1 token): step = b x 2 x active / peak + b x KV bytes/token / bandwidth.
    c = count_params(LLAMA2_7B)
    kv_tok = 2 * 32 * 128 * 2 * 32  # K and V x heads x head_dim x 2 bytes x layers = 524,288 B
    step = 4096 * 2 * c.active / 989e12 + 4096 * kv_tok / 3350e9
    assert speeds[4096].aggregate_tokens_per_s == pytest.approx(4096 / step, rel=1e-6)


def test_fp8_uses_fp8_tensor_cores_only_where_they_exist():
    big = dict(batch=4096, prompt_tokens=0, output_tokens=2)
    h_bf = estimate_speed(LLAMA2_7B, H100, IDEAL, req(precision="bf16", **big))
    h_f8 = estimate_speed(LLAMA2_7B, H100, IDEAL, req(precision="fp8", **big))
    # compute-bound linear layers run twice as fast on FP8 tensor cores; the (16-bit KV) attention phase does not
    assert h_f8.step_ms["weights"] == pytest.approx(h_bf.step_ms["weights"] / 2, rel=0.01)
    assert h_f8.step_ms["attention"] == pytest.approx(h_bf.step_ms["attention"], rel=1e-9)
    a_f8 = estimate_speed(LLAMA2_7B, A100, IDEAL, req(precision="fp8", **big))
    a_bf = estimate_speed(LLAMA2_7B, A100, IDEAL, req(precision="bf16", **big))
    assert a_f8.aggregate_tokens_per_s == pytest.approx(a_bf.aggregate_tokens_per_s, rel=0.01)
    assert any("no FP8 tensor cores" in s for s in a_f8.assumptions)


def test_tensor_parallel_splits_weights_and_pays_all_reduces():
    eng = IDEAL.model_copy(update={"allreduce_us": 10.0})
    one = estimate_speed(LLAMA2_7B, A100, eng, req(prompt_tokens=0, output_tokens=2))
    two = estimate_speed(LLAMA2_7B, A100, eng, req(prompt_tokens=0, output_tokens=2, gpus=2))
    # 2 all-reduces per layer x 32 layers x (10 us + ring transfer of 4096 x 2 bytes over 300 GB/s)
    comm = 64 * (10e-6 + 2 * 0.5 * 4096 * 2 / 300e9)
    assert two.step_ms["interconnect"] == pytest.approx(comm * 1e3, rel=1e-6)
    assert two.step_ms["memory"] == pytest.approx(one.step_ms["memory"] / 2, rel=0.01)
    pcie = A100.model_copy(update={"nvlink_gb_per_s": None, "interconnect": "PCIe Gen4"})
    eight = estimate_speed(LLAMA2_7B, pcie, eng, req(prompt_tokens=0, output_tokens=2, gpus=8))
    assert eight.bound == "interconnect"


def test_layer_split_engines_do_not_speed_up_a_token():
    llamacpp = IDEAL.model_copy(update={"multi_gpu": "layer"})
    one = estimate_speed(LLAMA2_7B, A100, llamacpp, req(prompt_tokens=0, output_tokens=2))
    four = estimate_speed(LLAMA2_7B, A100, llamacpp, req(prompt_tokens=0, output_tokens=2, gpus=4))
    assert four.decode_tokens_per_s == pytest.approx(one.decode_tokens_per_s, rel=1e-6)


def test_moe_reads_only_the_experts_a_batch_touches():
    fmt = weight_format("bf16")
    linears_full = weight_bytes_read(MIXTRAL, fmt, 10_000)
    c = count_params(MIXTRAL)
    assert linears_full == pytest.approx((c.total - c.embedding) * 2, rel=1e-3)  # all 8 experts
    one = weight_bytes_read(MIXTRAL, fmt, 1)
    assert one == pytest.approx((c.active - c.embedding) * 2, rel=1e-3)  # 2 of 8 experts
    # batch 2: expected distinct experts 8 * (1 - (6/8)^2) = 3.5
    expert = 3 * 4096 * 14336 * 32 * 2
    assert weight_bytes_read(MIXTRAL, fmt, 2) - one == pytest.approx(1.5 * expert, rel=1e-6)


def test_prefill_is_compute_bound_time_to_first_token():
    e = estimate_speed(LLAMA2_7B, A100, IDEAL, req(prompt_tokens=2000, output_tokens=1))
    c = count_params(LLAMA2_7B)
    flops = 2 * c.active * 2000 + 2 * 32 * 4096 * 2000 ** 2
    weights = (c.total - c.embedding) * 2
    assert e.time_to_first_token_s == pytest.approx(flops / 312e12 + weights / 2039e9, rel=1e-6)


@pytest.mark.parametrize("kw, field", [(dict(batch=0), "batch"), (dict(prompt_tokens=-1), "prompt_tokens"),
                                       (dict(output_tokens=0), "output_tokens"), (dict(gpus=0), "gpus")])
def test_speed_bad_inputs(kw, field):
    with pytest.raises(InvalidInput) as exc:
        req(**kw)
    assert exc.value.field == field


def test_unknown_bandwidth_and_bad_tp_are_refused():
    blank = A100.model_copy(update={"mem_bandwidth_gb_per_s": None, "name": "Mystery"})
    with pytest.raises(InvalidCombination, match="bandwidth of Mystery"):
        estimate_speed(LLAMA2_7B, blank, IDEAL, req())
    with pytest.raises(InvalidInput, match="divisor"):
        estimate_speed(LLAMA2_7B, A100, IDEAL, req(gpus=3))


MFU = {"ampere-hbm": (0.5, "test"), "hopper": (0.4, "test"), "blackwell": (0.4, "test"), "other": (0.4, "test")}


def test_full_finetune_time_by_hand():
    c = count_params(LLAMA2_7B)
    r = validated(TrainRequest, method="full", dataset_tokens=1e9, gpus=1, batch=4, seq_len=2048)
    e = estimate_train_time(LLAMA2_7B, A100, r, MFU)
    per_tok = 6 * c.active + 12 * 32 * 2048 * 4096
    assert e.tokens_per_s == pytest.approx(312e12 * 0.5 / per_tok, rel=1e-6)
    assert e.hours == pytest.approx(1e9 / e.tokens_per_s / 3600, rel=1e-9)
    lora = estimate_train_time(LLAMA2_7B, A100, validated(TrainRequest, method="lora", dataset_tokens=1e9), MFU)
    qlora = estimate_train_time(LLAMA2_7B, A100, validated(TrainRequest, method="qlora", dataset_tokens=1e9,
                                                             grad_checkpointing=False), MFU)
    assert lora.tokens_per_s > e.tokens_per_s  # no weight gradients
    assert qlora.tokens_per_s == pytest.approx(lora.tokens_per_s * QLORA_SPEED_FACTOR, rel=1e-6)


def test_multi_gpu_scaling_depends_on_the_interconnect():
    # micro-batch 1 x 2048 tokens: 0.53 s of compute per step; FSDP moves 6 B/param x 7/8 per step
    r8 = validated(TrainRequest, method="full", dataset_tokens=1e9, gpus=8, sharding="fsdp", batch=1)
    nv = estimate_train_time(LLAMA2_7B, A100, r8, MFU)
    pcie = estimate_train_time(LLAMA2_7B, A100.model_copy(update={"nvlink_gb_per_s": None}), r8, MFU)
    one = estimate_train_time(LLAMA2_7B, A100, validated(TrainRequest, method="full", dataset_tokens=1e9, batch=1), MFU)
    assert nv.tokens_per_s == pytest.approx(8 * one.tokens_per_s, rel=0.01)  # NVLink hides the traffic
    assert pcie.bound == "interconnect" and pcie.tokens_per_s < nv.tokens_per_s / 2
    assert math.isfinite(pcie.hours) and pcie.gpu_hours == pytest.approx(pcie.hours * 8)
