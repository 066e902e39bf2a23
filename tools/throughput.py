"""Inference speed: decode tokens/s, time to first token and request latency on a given GPU.

One decode step is a sum of phases that run one after the other (Williams et al. 2009 roofline per
phase, as applied to LLM decoding by Kwon et al. 2023 and the gpt-fast / "LLM inference speed of
light" analyses):
    linear layers  = max(weight bytes / bandwidth, matmul FLOPs / tensor rate), per the quantised
                     kernel family (tools/kernels.py: dequantisation cost and its growth with batch)
    attention      = max(KV bytes x passes / bandwidth, attention FLOPs / tensor rate); the KV cache
                     grows with the output, so long outputs at large batch are attention-bound;
                     `kv_passes` = how often an engine streams the cache per step (1 for paged/flash
                     attention; 3 for transformers' concatenating cache: copy read + write + attention)
    interconnect   = 2 all-reduces per layer (tensor parallel)
    overhead       = per-layer and per-step host/launch cost (small with CUDA graphs), plus a hop per
                     extra GPU for engines that split layers across GPUs
Prefill is compute-bound: 2 x active params x prompt tokens (+ causal attention) at the engine's
prefill efficiency. Engine and kernel figures are data (knowledge/engines.csv,
knowledge/quant_kernels.csv), each row citing the published measurements it was fitted on.
"""

from __future__ import annotations

__all__ = [
    "CONTEXT_REFUSE_FACTOR",
    "EngineProfile",
    "KernelProfile",
    "SpeedEstimate",
    "SpeedRequest",
    "check_context_window",
    "estimate_speed",
    "max_batch_for_memory",
    "weight_bytes_read",
]

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architecture import LinearShape, ParamCounts, block_linears, count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.kernels import DENSE, KernelProfile, linear_time_s
from tools.schemas import KV_PRECISIONS, MAX_SEQ_LEN, GpuSpec, KvPrecision, ModelArch, VramEstimate
from tools.units import WeightFormat, dtype_bytes, weight_format
from tools.vram import kv_cache_bytes_per_token

# Beyond this multiple of the model's context window an estimate is refused (the same limit as the
# memory calculator's inference check); between 1x and this it is given with a warning.
CONTEXT_REFUSE_FACTOR = 64


class EngineProfile(BaseModel):
    """How efficiently one serving engine generation uses a GPU (knowledge/engines.csv)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    generation: str = Field("", description="release line this profile describes, e.g. 'v0.6+ (CUDA graphs)'")
    bw_eff_hbm: float = Field(gt=0, le=1, description="fraction of HBM bandwidth reached by 16-bit decode")
    bw_eff_gddr: float = Field(gt=0, le=1, description="fraction of GDDR bandwidth reached by 16-bit decode")
    hbm3_factor: float = Field(1.0, gt=0, le=1.5, description="efficiency on HBM3/HBM3e GPUs (H100 SXM, H200, "
                               "B200) relative to HBM2e ones; one value for every engine, fitted jointly. Fitted "
                               "1.3: more than memory technology (sustained-bandwidth shares are alike); it also "
                               "carries the newer hosts and software these GPUs are measured with")
    quant_bw_factor: float = Field(1.0, gt=0, le=1.5, description="kept for old profiles; kernels carry this now")
    overhead_ms_per_layer: float = Field(0.0, ge=0, description="fixed per-step cost per transformer layer (launches, "
                                         "scheduling); engines that count their host operations use those instead")
    host_ops_per_layer: float = Field(0.0, ge=0, description="torch operations one transformer layer issues from "
                                      "Python per decode step (eager engines; counted from the model code, "
                                      "knowledge/engines.csv notes), each costing host_op_us; 0 = use "
                                      "overhead_ms_per_layer")
    overhead_ms_per_step: float = Field(0.0, ge=0, description="fixed per-step cost (scheduler, sampling, detokenising)")
    compute_eff: float = Field(gt=0, le=1, description="fraction of peak tensor FLOPs in batched decode")
    prefill_eff: float = Field(gt=0, le=1, description="fraction of peak tensor FLOPs in prefill")
    multi_gpu: Literal["tensor", "layer"] = "tensor"
    allreduce_us: float = Field(0.0, ge=0, description="fixed cost of one all-reduce (tensor parallel)")
    layer_hop_ms: float = Field(0.0, ge=0, description="per-step cost of each extra GPU in a layer split")
    kv_passes: float = Field(1.0, ge=1, le=16, description="times the KV cache is streamed per decode step "
                             "(effective: unfused eager attention streams it at low efficiency)")
    attn_bw_eff: float = Field(1.0, gt=0, le=1, description="share of the engine's weight-streaming bandwidth its "
                               "decode attention kernel reaches reading the KV cache (a batch-1 step gives it few "
                               "heads to spread over the SMs); 1 = as fast as the weights")
    cuda_graphs: bool = Field(False, description="decode steps replayed as CUDA graphs (no per-kernel launch cost)")
    host_overlap: bool = Field(False, description="the host enqueues a step's kernels while the GPU runs them "
                               "(eager PyTorch): a step takes the longer of the two plus the part that cannot "
                               "overlap (host_sync_share), not their sum")
    host_sync_share: float = Field(1.0, ge=0, le=1, description="with host_overlap: share of the shorter of host "
                                   "and GPU time that does not overlap (the per-step sync on the sampled token, "
                                   "the queue refilling after it); 1 = their sum, 0 = the longer alone")
    host_factor_consumer: float = Field(1.0, gt=0, le=2, description="Python host time per step (host_overlap "
                                        "engines) on consumer GPUs relative to datacenter servers: desktops run "
                                        "fewer, faster-clocked "
                                        "cores (e.g. 5.8 GHz vs 3.8 GHz max turbo for the same Golden Cove core "
                                        "generation); one value for every engine, fitted jointly")
    host_op_us: float = Field(10.0, gt=0, le=100, description="host time of one counted operation in a quantised "
                              "kernel's Python wrapper (eager engines; tools/kernels.py host_ops); one value for "
                              "every engine, fitted jointly")
    fp8_compute: bool = True
    kernels: dict[str, KernelProfile] = Field(default_factory=dict,
                                             description="default kernel per weight format (int4, int8, nf4, fp8, gguf)")
    source: str = ""
    notes: str = ""

    def memory_eff(self, gpu: GpuSpec) -> float:
        """The engine's own efficiency on the GPU's memory type (x the shared HBM3 factor on HBM3)."""
        if not gpu.is_hbm:
            return self.bw_eff_gddr
        if gpu.memory_type.upper().startswith("HBM3"):
            return min(1.0, self.bw_eff_hbm * self.hbm3_factor)
        return self.bw_eff_hbm

    def bw_eff(self, gpu: GpuSpec) -> float:
        """Share of the GPU's datasheet bandwidth the engine streams weights at: memory_eff x the GPU's
        measured decode share where one is known (GpuSpec.decode_bw_share)."""
        return self.memory_eff(gpu) * (gpu.decode_bw_share or 1.0)

    def layer_host_ms(self) -> float:
        """Host time per transformer layer per decode step: the counted torch operations at the shared
        per-operation cost where the engine counts them (eager PyTorch), else the fitted overhead."""
        return self.host_ops_per_layer * self.host_op_us * 1e-3 if self.host_ops_per_layer else self.overhead_ms_per_layer

    def host_scale(self, gpu: GpuSpec) -> float:
        """Multiplier on the host time of a Python-driven step (eager PyTorch: interpreter and launch
        work per operator, bound by one core's speed) for the machine class a GPU sits in; engines
        that replay CUDA graphs or run a compiled loop keep their fitted overheads as they are."""
        return self.host_factor_consumer if self.host_overlap and gpu.gpu_class == "consumer" else 1.0

    def kernel_for(self, fmt: WeightFormat) -> KernelProfile:
        """The kernel this engine runs a weight format on by default (16-bit: the dense GEMM)."""
        if not fmt.is_quantized:
            return DENSE
        key = "gguf" if fmt.quantizes_embeddings else fmt.name
        return self.kernels.get(key, DENSE)


class SpeedRequest(BaseModel):
    """What to estimate. Contexts in tokens; batch = concurrent sequences."""

    model_config = ConfigDict(extra="forbid")

    precision: str = Field("bf16", description="bf16, fp16, fp8, int8, int4, nf4, a kernel (gptq, gptq-marlin, awq, "
                           "bnb-nf4, bnb-int8 ...), or GGUF q4_0, q4_k_m, q5_k_m, q6_k, q8_0, f16")
    kv_precision: KvPrecision = Field("bf16", description=" | ".join(KV_PRECISIONS))
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
    bound: Literal["memory", "compute", "interconnect", "host"] = Field(
        description="what limits a decode step: memory bandwidth, compute, the interconnect, or the host (Python "
                    "launching kernels takes longer than the GPU work)")
    step_ms: dict[str, float]
    gpu: dict
    engine: str
    inputs: dict
    assumptions: list[str]
    memory: dict | None = None
    kernel: str = ""
    warnings: list[str] = Field(default_factory=list)


def check_context_window(a: ModelArch, tokens: int) -> str | None:
    """Judge prompt + output tokens against the model's context window.

    Returns a warning when the tokens exceed the window (engines run it with RoPE scaling or a
    sliding window, or stop at the limit, and quality past the trained length is not assured), None
    when within it.

    Raises:
        InvalidInput: more than CONTEXT_REFUSE_FACTOR x the window (the memory calculator's limit).
    """
    if not a.max_context or tokens <= a.max_context:
        return None
    if tokens > CONTEXT_REFUSE_FACTOR * a.max_context:
        raise InvalidInput("prompt_tokens + output_tokens", tokens,
                           f"at most {CONTEXT_REFUSE_FACTOR} x the context window of {a.name} "
                           f"({CONTEXT_REFUSE_FACTOR} x {a.max_context:,} = {CONTEXT_REFUSE_FACTOR * a.max_context:,} "
                           "tokens); slightly over the window is estimated with a warning")
    return (f"Prompt + output ({tokens:,} tokens) exceed {a.name}'s context window of {a.max_context:,} tokens "
            f"({tokens / a.max_context:.2f}x): engines stop at the window unless RoPE scaling or a sliding window "
            "is configured, and quality past the trained length is not assured; the figures assume it runs.")


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


def _linear_params_read(a: ModelArch, batch: int, c: ParamCounts | None = None,
                        linears: tuple[LinearShape, ...] | None = None) -> tuple[float, float]:
    """(block linear weights, LM head + norms) read per decode step, in parameters.

    Every linear layer and norm is read once per step; the input embedding is a lookup (only
    `batch` rows, not counted), the LM head is read whole. MoE: of E experts with k routed per
    token, a batch touches on average E * (1 - (1 - k/E)^batch) distinct experts, each read once.
    `c` and `linears` are count_params(a) and block_linears(a) when the caller has them already.
    """
    c = c or count_params(a)
    if a.is_moe:
        linears = linears or block_linears(a)
        experts = [x for x in linears if x.name.startswith("experts.")]
        e, k = a.num_experts, max(1, a.experts_per_token)
        touched = e * (1.0 - (1.0 - k / e) ** batch)
        per_expert = sum(x.in_features * x.out_features * x.copies for x in experts) / e
        dense = sum(x.params for x in linears) - per_expert * e
        blocks = a.num_layers * (dense + per_expert * touched)
    else:
        blocks = c.blocks_linear
    head = (c.embedding if a.tied_embeddings else c.lm_head) + c.norms_and_biases
    return blocks, head


def _bytes_read(fmt: WeightFormat, blocks: float, head: float) -> float:
    per_param = fmt.bytes_per_param + fmt.constant_bytes_per_param
    if fmt.is_quantized and not fmt.quantizes_embeddings:
        return blocks * per_param + head * 2.0
    return (blocks + head) * per_param


def weight_bytes_read(a: ModelArch, fmt: WeightFormat, batch: int) -> float:
    """Weight bytes streamed per decode step (see _linear_params_read); GPU quantisation formats
    keep the LM head and norms in 16-bit, GGUF files quantise them too."""
    return _bytes_read(fmt, *_linear_params_read(a, batch))


def _comm_s(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, n: int, batch: int) -> tuple[float, str]:
    """Two ring all-reduces of the hidden state per layer (tensor parallel)."""
    if n <= 1 or engine.multi_gpu != "tensor":
        return 0.0, ""
    if gpu.has_nvlink:
        link_bw, link = gpu.nvlink_gb_per_s / 2 * 1e9, f"NVLink-class link {gpu.nvlink_gb_per_s:g} GB/s"
    else:
        link_bw, link = 25e9, "PCIe (about 25 GB/s per direction)"
    msg = batch * a.hidden_size * 2.0
    per_ar = engine.allreduce_us * 1e-6 * (1.0 if gpu.has_nvlink else 2.5) + 2.0 * (n - 1) / n * msg / link_bw
    return 2 * a.num_layers * per_ar, link


def _check(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, req: SpeedRequest) -> WeightFormat:
    try:
        fmt = weight_format(req.precision)
    except KeyError:
        raise InvalidInput("precision", req.precision,
                           "bf16, fp16, fp8, int8, int4, nf4, gptq, gptq-marlin, awq, bnb-nf4, bnb-int8, "
                           "q4_0, q4_k_m, q5_k_m, q6_k, q8_0, f16") from None
    if gpu.mem_bandwidth_gb_per_s is None:
        raise InvalidCombination(f"the memory bandwidth of {gpu.name} is not in the GPU data, so its speed "
                                 "cannot be estimated")
    if engine.multi_gpu == "tensor" and req.gpus > 1 and a.num_attention_heads % req.gpus:
        raise InvalidInput("gpus", req.gpus, f"a divisor of {a.name}'s {a.num_attention_heads} attention heads "
                           f"for tensor parallelism")
    return fmt


def estimate_speed(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, req: SpeedRequest,
                   kernel: KernelProfile | None = None) -> SpeedEstimate:
    """Estimate decode speed, time to first token and request latency.

    Args:
        kernel: the quantised-matmul kernel family; None = the engine's default for the format.

    Raises:
        InvalidInput: a precision the tool does not know; a GPU count that does not divide the heads.
        InvalidCombination: GPU facts missing for the estimate (bandwidth unknown).
    """
    fmt = _check(a, gpu, engine, req)
    kern = kernel or engine.kernel_for(fmt)
    n = req.gpus
    tp = n if engine.multi_gpu == "tensor" else 1
    counts, linears = count_params(a), block_linears(a)
    bw = gpu.mem_bandwidth_gb_per_s * 1e9 * engine.bw_eff(gpu)
    peak, how = _compute_rate_tflops(gpu, fmt, engine)
    peak_flops = peak * 1e12 if peak else None
    avg_ctx = req.prompt_tokens + req.output_tokens / 2.0

    blocks, head = _linear_params_read(a, req.batch, counts, linears)
    w_bytes = _bytes_read(fmt, blocks, head)
    n_linears = a.num_layers * len(linears) if kern is not DENSE else 0
    t_wmem, t_wcomp, t_launch = linear_time_s(
        kern, weight_bytes=w_bytes / tp, quantized_params=blocks / tp if fmt.is_quantized else 0.0,
        batch=req.batch, bandwidth=bw, matmul_flops=req.batch * 2.0 * counts.active / tp, peak_flops=peak_flops,
        engine_compute_eff=engine.compute_eff, quantized_linears=n_linears, cuda_graphs=engine.cuda_graphs,
        host_op_us=engine.host_op_us)
    kv_bytes = req.batch * avg_ctx * kv_cache_bytes_per_token(a, dtype_bytes(req.kv_precision), tp)
    t_kvmem = kv_bytes * engine.kv_passes / (bw * engine.attn_bw_eff)
    q_width = a.num_attention_heads * a.head_dim
    t_acomp = (req.batch * 4.0 * a.num_layers * q_width * avg_ctx / tp / (peak_flops * engine.compute_eff)
               if peak_flops else 0.0)
    t_comm, link = _comm_s(a, gpu, engine, n, req.batch)
    device = max(t_wmem, t_wcomp) + max(t_kvmem, t_acomp) + t_comm
    step, host = _step_s(a, gpu, engine, kern, n, device, t_launch)
    overhead = step - device
    host_bound = host > device
    t_mem, t_comp = t_wmem + t_kvmem, t_wcomp + t_acomp
    bound = "host" if host_bound else _bound(t_wmem, t_wcomp, t_kvmem, t_acomp, t_comm)

    # Prefill: compute-bound matmuls + causal attention, plus one read of the weights.
    p_tok = max(req.prompt_tokens, 1)
    prefill_flops = req.batch * (2.0 * counts.active * p_tok + 2.0 * a.num_layers * q_width * p_tok * p_tok)
    t_prefill = (prefill_flops / tp / (peak_flops * engine.prefill_eff * kern.compute_eff) if peak_flops else 0.0) \
        + w_bytes / tp / bw + t_comm + overhead
    latency = t_prefill + req.output_tokens * step
    for v in (step, t_prefill, latency):
        if not math.isfinite(v) or v <= 0:
            raise InvalidCombination("the inputs are too large to give a finite time")
    return SpeedEstimate(
        decode_tokens_per_s=1.0 / step,
        aggregate_tokens_per_s=req.batch / step,
        time_to_first_token_s=t_prefill,
        request_latency_s=latency,
        bound=bound,
        step_ms={"memory": t_mem * 1e3, "compute": t_comp * 1e3, "interconnect": t_comm * 1e3,
                 "overhead": overhead * 1e3, "total": step * 1e3, "weights": max(t_wmem, t_wcomp) * 1e3,
                 "attention": max(t_kvmem, t_acomp) * 1e3},
        gpu={"id": gpu.id, "name": gpu.name, "mem_bandwidth_gb_per_s": gpu.mem_bandwidth_gb_per_s,
             "bf16_dense_tflops": gpu.bf16_dense_tflops, "fp8_dense_tflops": gpu.fp8_dense_tflops,
             "memory_type": gpu.memory_type, "interconnect": gpu.interconnect},
        engine=engine.id,
        kernel=kern.id,
        inputs=req.model_dump() | {"model": a.id},
        assumptions=_assumptions(a, gpu, engine, req, fmt, kern, how, link, peak, avg_ctx)
        + ([f"Mostly host overhead: {engine.name} spends {host * 1e3:.1f} ms per step launching kernels "
            f"and scheduling against {device * 1e3:.1f} ms of GPU work, so a faster GPU helps little; CUDA graphs "
            "or a compiled engine would."] if host_bound else []),
    )


def _step_s(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, kern: KernelProfile, n: int, device: float,
            t_launch: float) -> tuple[float, float]:
    """(decode step, host time) in seconds from the GPU time of the step.

    Host time adds to the GPU's where kernels are shorter than their launches (the GPU idles between
    them); an eager PyTorch loop enqueues kernels ahead of the GPU, so its step takes the longer of
    the two plus the share of the shorter that cannot overlap (host_overlap), unless a kernel reads a
    size back every call (host_sync) and the loop stalls. CUDA graphs shrink the per-layer part to the
    replay cost; a desktop host runs the Python part faster (host_scale).
    """
    hs = engine.host_scale(gpu)
    host = hs * (engine.layer_host_ms() * 1e-3 * a.num_layers + t_launch)
    fixed = hs * engine.overhead_ms_per_step * 1e-3
    if n > 1 and engine.multi_gpu == "layer":
        fixed += engine.layer_hop_ms * 1e-3 * (n - 1)
    if engine.host_overlap and not kern.host_sync:
        step = max(device, host) + engine.host_sync_share * min(device, host) + fixed
    else:
        step = device + host + fixed
    return step, host + fixed


def _bound(t_wmem: float, t_wcomp: float, t_kvmem: float, t_acomp: float,
           t_comm: float) -> Literal["memory", "compute", "interconnect"]:
    """What limits a decode step: the larger of the memory-limited and compute-limited phase times,
    unless the interconnect's share is larger still."""
    mem_limited = (t_wmem if t_wmem >= t_wcomp else 0.0) + (t_kvmem if t_kvmem >= t_acomp else 0.0)
    comp_limited = (t_wcomp if t_wcomp > t_wmem else 0.0) + (t_acomp if t_acomp > t_kvmem else 0.0)
    if t_comm > max(mem_limited, comp_limited):
        return "interconnect"
    return "memory" if mem_limited >= comp_limited else "compute"


def _assumptions(a: ModelArch, gpu: GpuSpec, engine: EngineProfile, req: SpeedRequest, fmt: WeightFormat,
                 kern: KernelProfile, how: str, link: str, peak: float | None, avg_ctx: float) -> list[str]:
    gen = f" ({engine.generation})" if engine.generation else ""
    out = [f"An estimate from the memory/compute roofline, not a measurement; engine {engine.name}{gen}."]
    if not peak:
        out.append(f"The tensor rate of {gpu.name} is not in the GPU data: compute time not counted "
                   "(fine at small batch, optimistic at large batch).")
    if fmt.name == "fp8" and not (gpu.fp8_support and peak == gpu.fp8_dense_tflops):
        out.append(f"{gpu.name} has no FP8 tensor cores: FP8 halves the bytes read but computes in 16-bit.")
    if req.gpus > 1:
        out.append(
            f"Tensor parallel over {req.gpus} GPUs ({link}): weights and KV heads split, 2 all-reduces per layer."
            if engine.multi_gpu == "tensor" else
            f"{engine.name} splits layers across {req.gpus} GPUs (pipeline, one GPU busy at a time): no speed-up "
            "per token.")
    out.append(f"Compute at {how}; {engine.name} reaches ~{engine.memory_eff(gpu):.0%} of "
               f"{'HBM' if gpu.is_hbm else 'GDDR'} bandwidth at 16-bit.")
    if gpu.decode_bw_share:
        out.append(f"Published decode measurements on {gpu.name} reach only ~{gpu.decode_bw_share:.0%} of that: "
                   f"~{gpu.mem_bandwidth_gb_per_s * engine.bw_eff(gpu):,.0f} of the {gpu.mem_bandwidth_gb_per_s:,.0f} "
                   "GB/s its datasheet gives, so it decodes slower than that figure suggests.")
    if kern is not DENSE:
        grow = (f", dequantising to 16-bit from batch {kern.reconstruct_batch}" if kern.reconstruct_batch else
                f", +{kern.batch_slope:.0%} weight-read time per extra sequence" if kern.batch_slope else "")
        out.append(f"Quantised weights ({fmt.name}) run on {kern.name} [{kern.id}] at ~{kern.bw_eff:.0%} of that "
                   f"bandwidth{grow}.")
    if engine.host_overlap:
        desk = (f"; on a desktop host (consumer GPU) Python takes {engine.host_scale(gpu):.2f}x the server's time"
                if engine.host_scale(gpu) != 1.0 else "")
        ops = (f" Host time: {engine.host_ops_per_layer:g} torch calls per layer at ~{engine.host_op_us:g} us each "
               f"= {engine.layer_host_ms():.2f} ms per layer." if engine.host_ops_per_layer else "")
        out.append(f"{engine.name} runs Python ahead of the GPU: a step is the longer of host and GPU time plus "
                   f"{engine.host_sync_share:.0%} of the shorter{desk}.{ops}"
                   + (f" {kern.name} reads a size back on every call, so here host and GPU time add."
                      if kern.host_sync else ""))
    if engine.kv_passes > 1:
        out.append(f"{engine.name} streams the KV cache {engine.kv_passes:g} times per step (the cache is "
                   "re-concatenated each step), so cost grows with batch x length.")
    if engine.attn_bw_eff < 1:
        out.append(f"{engine.name}'s decode attention reads the KV cache at ~{engine.attn_bw_eff:.0%} of the "
                   "bandwidth the weights stream at (fitted on its long-context measurements).")
    out.append(f"Average context {avg_ctx:,.0f} tokens (prompt + half the output) for the KV-cache reads.")
    return out
