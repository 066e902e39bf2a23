"""Inference speed: decode tokens/s, time to first token and request latency on a given GPU.

Roofline per decode step (Williams et al. 2009, applied to LLM decoding as in Kwon et al. 2023
and the gpt-fast / "LLM inference speed of light" analyses):
    memory time  = (weight bytes read + KV-cache bytes read) / (bandwidth x engine efficiency)
    compute time = (2 x active params + attention) FLOPs x batch / (peak tensor rate x efficiency)
    step time    = max(memory, compute) + tensor-parallel all-reduces + engine overhead
Prefill is compute-bound: 2 x active params x prompt tokens (+ causal attention) at the engine's
prefill efficiency. Engine efficiencies and overheads are data (knowledge/engines.csv), each row
derived from the published measurements it cites.
"""

from __future__ import annotations

__all__ = ["EngineProfile", "SpeedRequest", "SpeedEstimate", "estimate_speed", "max_batch_for_memory",
           "weight_bytes_read"]

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architecture import block_linears, count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import MAX_SEQ_LEN, GpuSpec, ModelArch, VramEstimate
from tools.units import WeightFormat, dtype_bytes, weight_format
from tools.vram import kv_cache_bytes_per_token


class EngineProfile(BaseModel):
    """How efficiently one serving engine uses a GPU (knowledge/engines.csv)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    bw_eff_hbm: float = Field(gt=0, le=1, description="fraction of HBM bandwidth reached by 16-bit decode")
    bw_eff_gddr: float = Field(gt=0, le=1, description="fraction of GDDR bandwidth reached by 16-bit decode")
    quant_bw_factor: float = Field(gt=0, le=1.5, description="bandwidth efficiency of weight-only quantised kernels, relative")
    overhead_ms_per_layer: float = Field(ge=0, description="fixed per-step cost per transformer layer (launches, Python)")
    overhead_ms_per_step: float = Field(0.0, ge=0, description="fixed per-step cost (scheduler, sampling, detokenising)")
    compute_eff: float = Field(gt=0, le=1, description="fraction of peak tensor FLOPs in batched decode")
    prefill_eff: float = Field(gt=0, le=1, description="fraction of peak tensor FLOPs in prefill")
    multi_gpu: Literal["tensor", "layer"] = "tensor"
    allreduce_us: float = Field(0.0, ge=0, description="fixed cost of one all-reduce (tensor parallel)")
    fp8_compute: bool = True
    source: str = ""
    notes: str = ""

    def bw_eff(self, gpu: GpuSpec) -> float:
        return self.bw_eff_hbm if gpu.is_hbm else self.bw_eff_gddr


class SpeedRequest(BaseModel):
    """What to estimate. Contexts in tokens; batch = concurrent sequences."""

    model_config = ConfigDict(extra="forbid")

    precision: str = Field("bf16", description="bf16, fp16, fp8, int8, int4, or GGUF q4_0, q4_k_m, q5_k_m, q6_k, q8_0, f16")
    kv_precision: Literal["fp16", "bf16", "fp8", "int8"] = Field("bf16", description="fp16 | bf16 | fp8 | int8")
    batch: int = Field(1, ge=1, le=100_000, description="concurrent sequences, an integer from 1 to 100,000")
    prompt_tokens: int = Field(512, ge=0, le=MAX_SEQ_LEN, description="prompt tokens per sequence, 0 to 100,000,000")
    output_tokens: int = Field(256, ge=1, le=MAX_SEQ_LEN, description="generated tokens per sequence, 1 to 100,000,000")
    gpus: int = Field(1, ge=1, le=64, description="GPUs the model is split over, 1 to 64")


class SpeedEstimate(BaseModel):
    """Estimated speed; every figure is an estimate with the bound that limits it."""

    decode_tokens_per_s: float
    aggregate_tokens_per_s: float
    time_to_first_token_s: float
    request_latency_s: float
    bound: Literal["memory", "compute", "interconnect"]
    step_ms: dict[str, float]
    gpu: dict
    engine: str
    inputs: dict
    assumptions: list[str]
    memory: dict | None = None


def max_batch_for_memory(one_sequence: VramEstimate, gpu_memory_gb: float, layer_split: int = 1) -> dict:
    """Largest batch whose KV cache fits beside the weights at this context.

    Formula: floor((GPU memory - (total at batch 1 - KV of one sequence)) / KV of one sequence),
    per GPU; with a layer split over n GPUs each holds 1/n of the weights and KV cache.
    """
    kv = one_sequence.components_gb.get("kv_cache", 0.0) / layer_split
    fixed = one_sequence.total_gb / layer_split - kv
    free = gpu_memory_gb - fixed
    if kv <= 0:
        best = 0 if free < 0 else 100_000
    else:
        best = max(0, min(100_000, int(math.floor(free / kv))))
    return {"vram_per_gpu_gb_at_batch_1": fixed + kv, "kv_cache_gb_per_sequence": kv,
            "gpu_memory_gb": gpu_memory_gb, "fits": best >= 1, "max_batch": best}


def _compute_rate_tflops(gpu: GpuSpec, fmt: WeightFormat, engine: EngineProfile) -> tuple[float | None, str]:
    """Peak dense tensor rate the matmuls run at: FP8 kernels where the GPU and engine support FP8;
    weight-only formats (int4, GGUF, int8 W8A16) dequantise to 16-bit and use the BF16/FP16 rate."""
    if fmt.name == "fp8" and gpu.fp8_support and engine.fp8_compute and gpu.fp8_dense_tflops:
        return gpu.fp8_dense_tflops, "FP8 tensor cores"
    if fmt.name == "fp8":
        return gpu.bf16_dense_tflops, "FP8 weights dequantised to 16-bit (no FP8 tensor cores)"
    return gpu.bf16_dense_tflops, "16-bit tensor cores"


def weight_bytes_read(a: ModelArch, fmt: WeightFormat, batch: int) -> float:
    """Weight bytes streamed per decode step.

    Every linear layer and norm is read once per step; the input embedding is a lookup (only
    `batch` rows, not counted), the LM head is read whole. MoE: of E experts with k routed per token, a batch touches
    on average E * (1 - (1 - k/E)^batch) distinct experts, each read once.
    """
    c = count_params(a)
    per_param = fmt.bytes_per_param + fmt.constant_bytes_per_param
    if a.is_moe:
        linears = block_linears(a)
        experts = [x for x in linears if x.name.startswith("experts.")]
        e, k = a.num_experts, max(1, a.experts_per_token)
        touched = e * (1.0 - (1.0 - k / e) ** batch)
        per_expert = sum(x.in_features * x.out_features * x.copies for x in experts) / e
        dense = sum(x.params for x in linears) - per_expert * e
        blocks = a.num_layers * (dense + per_expert * touched)
    else:
        blocks = c.blocks_linear
    head = (c.embedding if a.tied_embeddings else c.lm_head) + c.norms_and_biases
    if fmt.is_quantized and not fmt.quantizes_embeddings:
        return blocks * per_param + head * 2.0  # LM head and norms stay 16-bit
    return (blocks + head) * per_param


def estimate_speed(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, req: SpeedRequest) -> SpeedEstimate:
    """Estimate decode speed, time to first token and request latency.

    Raises:
        InvalidInput: a precision the tool does not know.
        InvalidCombination: GPU facts missing for the estimate (bandwidth unknown).
    """
    try:
        fmt = weight_format(req.precision)
    except KeyError:
        raise InvalidInput("precision", req.precision,
                           "bf16, fp16, fp8, int8, int4, nf4, q4_0, q4_k_m, q5_k_m, q6_k, q8_0, f16") from None
    if gpu.mem_bandwidth_gb_per_s is None:
        raise InvalidCombination(f"the memory bandwidth of {gpu.name} is not in the GPU data, so its speed "
                                 "cannot be estimated")
    n = req.gpus
    if engine.multi_gpu == "tensor" and n > 1 and a.num_attention_heads % n:
        raise InvalidInput("gpus", n, f"a divisor of {a.name}'s {a.num_attention_heads} attention heads "
                           f"for tensor parallelism")
    tp = n if engine.multi_gpu == "tensor" else 1
    assumptions: list[str] = [f"An estimate from the memory/compute roofline, not a measurement; engine {engine.name}."]
    counts = count_params(a)

    bw = gpu.mem_bandwidth_gb_per_s * 1e9 * engine.bw_eff(gpu)
    if fmt.is_quantized and fmt.name != "fp8":
        bw *= engine.quant_bw_factor
    peak, how = _compute_rate_tflops(gpu, fmt, engine)
    kv_b = dtype_bytes(req.kv_precision)
    kv_tok = kv_cache_bytes_per_token(a, kv_b, tp)  # per GPU, all layers
    avg_ctx = req.prompt_tokens + req.output_tokens / 2.0

    w_bytes = weight_bytes_read(a, fmt, req.batch)
    t_mem = (w_bytes / tp + req.batch * avg_ctx * kv_tok) / bw
    q_width = a.num_attention_heads * a.head_dim
    flops_tok = 2.0 * counts.active + 4.0 * a.num_layers * q_width * avg_ctx
    if peak:
        t_comp = req.batch * flops_tok / tp / (peak * 1e12 * engine.compute_eff)
    else:
        t_comp = 0.0
        assumptions.append(f"The tensor rate of {gpu.name} is not in the GPU data: compute time not counted "
                           "(fine at small batch, optimistic at large batch).")
    t_comm = 0.0
    link = ""
    if n > 1 and engine.multi_gpu == "tensor":
        if gpu.has_nvlink:
            link_bw, link = gpu.nvlink_gb_per_s / 2 * 1e9, f"NVLink-class link {gpu.nvlink_gb_per_s:g} GB/s"
        else:
            link_bw, link = 25e9, "PCIe (about 25 GB/s per direction)"
        msg = req.batch * a.hidden_size * 2.0
        per_ar = engine.allreduce_us * 1e-6 * (1.0 if gpu.has_nvlink else 2.5) + 2.0 * (n - 1) / n * msg / link_bw
        t_comm = 2 * a.num_layers * per_ar
    overhead = (engine.overhead_ms_per_layer * a.num_layers + engine.overhead_ms_per_step) * 1e-3
    if n > 1 and engine.multi_gpu == "layer":
        overhead *= 1.0 + 0.1 * (n - 1)  # each extra GPU adds a hop per step
    step = max(t_mem, t_comp) + t_comm + overhead
    bound: Literal["memory", "compute", "interconnect"]
    if t_comm > max(t_mem, t_comp):
        bound = "interconnect"
    else:
        bound = "memory" if t_mem >= t_comp else "compute"

    # Prefill: compute-bound matmuls + causal attention, plus one read of the weights.
    p_tok = max(req.prompt_tokens, 1)
    prefill_flops = req.batch * (2.0 * counts.active * p_tok + 2.0 * a.num_layers * q_width * p_tok * p_tok)
    t_prefill = (prefill_flops / tp / (peak * 1e12 * engine.prefill_eff) if peak else 0.0) + w_bytes / tp / bw \
        + t_comm + overhead
    latency = t_prefill + req.output_tokens * step

    for v in (step, t_prefill, latency):
        if not math.isfinite(v) or v <= 0:
            raise InvalidCombination("the inputs are too large to give a finite time")
    if fmt.name == "fp8" and not (gpu.fp8_support and peak == gpu.fp8_dense_tflops):
        assumptions.append(f"{gpu.name} has no FP8 tensor cores: FP8 halves the bytes read but computes in 16-bit.")
    if n > 1:
        assumptions.append(
            f"Tensor parallel over {n} GPUs ({link}): weights and KV heads split, 2 all-reduces per layer."
            if engine.multi_gpu == "tensor" else
            f"{engine.name} splits layers across {n} GPUs (pipeline, one GPU busy at a time): no speed-up per token.")
    assumptions.append(f"Compute at {how}; {engine.name} reaches ~{engine.bw_eff(gpu):.0%} of "
                       f"{'HBM' if gpu.is_hbm else 'GDDR'} bandwidth at 16-bit"
                       + (f" and {engine.quant_bw_factor:.0%} of that with quantised kernels" if fmt.is_quantized and fmt.name != 'fp8' else "")
                       + ".")
    assumptions.append(f"Average context {avg_ctx:,.0f} tokens (prompt + half the output) for the KV-cache reads.")
    return SpeedEstimate(
        decode_tokens_per_s=1.0 / step,
        aggregate_tokens_per_s=req.batch / step,
        time_to_first_token_s=t_prefill,
        request_latency_s=latency,
        bound=bound,
        step_ms={"memory": t_mem * 1e3, "compute": t_comp * 1e3, "interconnect": t_comm * 1e3,
                 "overhead": overhead * 1e3, "total": step * 1e3},
        gpu={"id": gpu.id, "name": gpu.name, "mem_bandwidth_gb_per_s": gpu.mem_bandwidth_gb_per_s,
             "bf16_dense_tflops": gpu.bf16_dense_tflops, "fp8_dense_tflops": gpu.fp8_dense_tflops,
             "memory_type": gpu.memory_type, "interconnect": gpu.interconnect},
        engine=engine.id,
        inputs=req.model_dump() | {"model": a.id},
        assumptions=assumptions,
    )
