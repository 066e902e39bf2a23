"""The VRAM calculator: per-GPU memory for inference, full fine-tuning, LoRA and QLoRA.

`estimate_vram(arch, request, gpu=None)` returns a `VramEstimate` split into named components
(decimal GB, per GPU). The arithmetic (`compute_vram_components`: bytes per component and the
facts behind them) is kept apart from the explanation (tools.vram_explain: each component's
formula in words, its source, the assumptions). Calibration constants live in `_CAL` with the
measurement that set them.
"""

from __future__ import annotations

__all__ = ["VramComponent", "compute_vram_components", "estimate_vram", "explain_vram_component",
           "lora_param_count", "kv_cache_bytes_per_token"]

import math
from dataclasses import dataclass

from tools.architecture import ParamCounts, block_linears, count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import (TIGHT_HEADROOM_FRACTION, FitVerdict, GpuMemory, MemoryComponent, ModelArch, VramEstimate,
                           VramRequest)
from tools.units import WeightFormat, bytes_to_gb, dtype_bytes, weight_format
from tools.vram_explain import component_text, vram_assumptions


@dataclass(frozen=True)
class _Calibration:
    """Constants that are not pure arithmetic, each with what it rests on."""

    # CUDA context + cuBLAS/cuDNN workspaces, PyTorch 2.x with CUDA lazy loading: ~0.3-0.6 GB
    # per process in nvidia-smi (PyTorch docs "CUDA semantics", memory management notes).
    cuda_context_gb: float = 0.5
    # Caching-allocator reserve over the allocated peak (reserved - allocated), fraction.
    allocator_reserve_fraction: float = 0.05
    # Bytes per (token x vocabulary entry) live at the loss: bf16 logits (2) + their fp32 upcast
    # (4) + the fp32 log-softmax kept for the backward (4) (transformers ForCausalLMLoss upcasts
    # logits to fp32 before cross_entropy). Checked against the measurement table: 10 B gives the
    # lowest error of 4/6/8/10 (benchmarks/vram_accuracy.py).
    loss_bytes_per_logit: float = 10.0
    # Chunked cross-entropy keeps the bf16 logits (2) and upcasts one of 8 chunks at a time (4/8).
    chunked_loss_bytes_per_logit: float = 2.0 + 4.0 / 8


_CAL = _Calibration()


def _layer_activation_bytes_per_token(a: ModelArch, req: VramRequest, saves_linear_inputs: bool) -> float:
    """Bytes one transformer layer saves for the backward pass, per token (16-bit activations).

    Tensor-by-tensor count of what autograd keeps (Korthikanti et al. 2022, "Reducing Activation
    Recomputation in Large Transformer Models", sec. 4.1, extended to RMSNorm, GQA and gated MLPs):
    - each RMSNorm keeps its fp32 input (4h; HF/litgpt/torchtune norms compute in fp32);
    - attention (SDPA/flash) keeps q, k, v with k/v expanded to all heads, its output and the
      fp32 log-sum-exp: 2*(4 * n_heads * head_dim) + 4 * n_heads; eager attention also keeps
      the softmax (fp32 + 16-bit copy: 6 * n_heads * seq_len);
    - a gated MLP keeps gate, up and SiLU outputs (3 * 2I); a plain MLP keeps fc1 output (2I);
    - MoE: each token's `experts_per_token` expert MLPs, its routed copies and fp32 router logits;
    - the inputs of the linear layers (norm outputs 2h each, o_proj input, down_proj/fc2 input 2I)
      when the layer's weight trains (full fine-tuning) or when a bitsandbytes 4/8-bit layer saves
      its input for the backward (bnb MatMul4Bit/MatMul8bitLt keep `A`): `saves_linear_inputs`;
    - LoRA with dropout p > 0: each adapted linear keeps its dropout output and mask (3 bytes x
      in_features); with p = 0 the adapter shares the layer input, kept once.
    Frozen plain linear layers keep no input: autograd saves an input only for its weight's gradient.
    """
    h = a.hidden_size
    if a.attention_kind == "MLA":
        q_width = a.num_attention_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        o_width = a.num_attention_heads * a.v_head_dim
    else:
        q_width = a.num_attention_heads * a.head_dim
        o_width = q_width
    kv_width = 2 * q_width  # k and v expanded to every query head before SDPA
    targets = req.lora_targets if req.method in ("lora", "qlora") else ()
    dropout = req.lora_dropout > 0 and bool(targets)
    linears = {x.target: x for x in block_linears(a)}

    def linear_input(target: str, width: float) -> float:
        """Bytes kept for one linear's input: by the layer itself or by its adapter."""
        if saves_linear_inputs or (target in targets and not dropout):
            return 2.0 * width
        return 0.0

    total = 4.0 * h  # norm 1: fp32 input
    total += max(linear_input(t, h) for t in ("q", "k", "v"))  # q/k/v share one input tensor
    total += 2.0 * (q_width + kv_width + o_width) + 4.0 * a.num_attention_heads  # SDPA saves
    total += linear_input("o", o_width)
    if req.attention == "eager":
        total += 6.0 * a.num_attention_heads * req.seq_len
    total += 4.0 * h  # norm 2
    total += max(linear_input(t, h) for t in ("gate", "up"))
    if a.is_moe:
        dense_frac = min(a.first_dense_layers, a.num_layers) / a.num_layers
        expert_i = a.moe_intermediate_size or a.intermediate_size
        mlp_widths = [(a.intermediate_size, dense_frac),
                      (expert_i, (1 - dense_frac) * a.experts_per_token),
                      (expert_i * a.num_shared_experts, (1 - dense_frac))]
        total += (1 - dense_frac) * (4 * a.num_experts + 2 * h * a.experts_per_token)
    else:
        mlp_widths = [(a.intermediate_size, 1.0)]
    for inter, weight in mlp_widths:
        if not inter or not weight:
            continue
        per = (3 if a.gated_mlp else 1) * 2.0 * inter + linear_input("down", inter)
        total += weight * per
    if dropout:
        total += sum(3.0 * x.in_features * x.active_copies for t, x in linears.items() if t in targets)
    return total


def lora_param_count(a: ModelArch, rank: int, targets: tuple[str, ...]) -> float:
    """LoRA adapter parameters: sum over targeted linears of rank * (in + out), times layers.

    Source: Hu et al. 2021 (LoRA), W + B A with A: r x in, B: out x r. Expert linears of MoE
    models get one adapter per expert (PEFT behaviour when experts are nn.Linear).
    """
    per_layer = sum(rank * (x.in_features + x.out_features) * x.copies
                    for x in block_linears(a) if x.target in targets)
    head = rank * (a.hidden_size + a.vocab_size) if "lm_head" in targets else 0
    return per_layer * a.num_layers + head


def kv_cache_bytes_per_token(a: ModelArch, kv_bytes: float, tensor_parallel: int = 1) -> float:
    """KV-cache bytes per cached token over all layers, on one GPU.

    MHA/GQA/MQA: 2 (K and V) * n_kv_heads * head_dim * bytes * layers; with tensor parallelism
    each GPU holds ceil(n_kv_heads / tp) heads (heads are replicated when tp > n_kv_heads, as in
    vLLM). MLA (DeepSeek-V2/V3): the compressed latent, (kv_lora_rank + qk_rope_head_dim) *
    bytes * layers, replicated on every GPU (DeepSeek-V2 paper, sec. 2.1.2; vLLM MLA backend).
    Source: vLLM/PagedAttention paper (Kwon et al. 2023) KV-cache sizing.
    """
    if a.attention_kind == "MLA":
        return (a.kv_lora_rank + a.qk_rope_head_dim) * kv_bytes * a.num_layers
    heads = math.ceil(a.num_kv_heads / tensor_parallel)
    return 2.0 * heads * a.head_dim * kv_bytes * a.num_layers


def _weights_bytes(counts: ParamCounts, fmt: WeightFormat) -> float:
    if fmt.quantizes_embeddings or not fmt.is_quantized:
        return counts.total * fmt.bytes_per_param
    return counts.blocks_linear * fmt.bytes_per_param + counts.unquantized * 2.0


def _quant_constant_bits(fmt: WeightFormat, double_quant: bool) -> float:
    """Block constants per weight. nf4/fp4: one fp32 absmax per 64 weights = 0.5 bit; with double
    quantisation an 8-bit absmax per 64 plus one fp32 per 256 blocks = 8/64 + 32/(64*256) = 0.127
    bit (QLoRA paper, sec. 3 "Double Quantization")."""
    if double_quant and fmt.name in ("nf4", "fp4"):
        return 8 / 64 + 32 / (64 * 256)
    return fmt.constant_bits_per_param


def _optimizer_bytes_per_param(req: VramRequest, state_bytes: float) -> tuple[float, str]:
    opt = req.optimizer
    if opt == "adamw":
        return 2 * state_bytes, f"2 moments x {state_bytes:g} B"
    if opt in ("adamw8bit", "paged-adamw8bit"):
        # bitsandbytes block-wise 8-bit states (Dettmers et al. 2022, "8-bit Optimizers via
        # Block-wise Quantization"): 2 x 1 byte + one fp32 absmax per 2048 values.
        return 2 * (1 + 4 / 2048), "2 moments x 1 B (8-bit, block-wise)"
    if opt == "sgd":
        return state_bytes, f"1 momentum buffer x {state_bytes:g} B"
    return 0.0, "factored second moment (row + column sums)"  # adafactor: counted separately


def _adafactor_state_bytes(a: ModelArch, counts: ParamCounts, full: bool, rank: int,
                           targets: tuple[str, ...]) -> float:
    """Adafactor (Shazeer & Stern 2018) without momentum: per m x n matrix, m + n fp32 values;
    vectors keep a full fp32 second moment."""
    per_layer = 0.0
    for x in block_linears(a):
        if full:
            per_layer += (x.in_features + x.out_features) * x.copies * 4
        elif x.target in targets:  # adapters A (r x in) and B (out x r)
            per_layer += (rank + x.in_features + x.out_features + rank) * x.copies * 4
    total = per_layer * a.num_layers
    if full:
        total += (a.vocab_size + a.hidden_size) * 4 * (1 if a.tied_embeddings else 2)
        total += counts.norms_and_biases * 4
    return total


def _validate_against_model(a: ModelArch, req: VramRequest) -> None:
    if req.method in ("lora", "qlora") and req.lora_rank > a.hidden_size:
        raise InvalidInput("lora_rank", req.lora_rank,
                           f"an integer from 1 to the hidden size of {a.name} ({a.hidden_size})")
    if req.tensor_parallel > 1 and a.num_attention_heads % req.tensor_parallel:
        raise InvalidInput("tensor_parallel", req.tensor_parallel,
                           f"a divisor of {a.name}'s {a.num_attention_heads} attention heads")
    if req.method == "inference" and a.max_context and req.seq_len > 64 * a.max_context:
        raise InvalidInput("seq_len", req.seq_len,
                           f"at most 64 x the model's context of {a.max_context:,} tokens")


@dataclass(frozen=True)
class VramComponent:
    """One computed part of the per-GPU memory, before it is explained: bytes and the facts its
    formula text needs (tools.vram.explain_vram_component)."""

    name: str
    n_bytes: float
    facts: dict


@dataclass(frozen=True)
class _Setup:
    """Derived settings every component reads."""

    counts: ParamCounts
    fmt: WeightFormat
    training: bool
    tokens: float
    n: int
    tp: int
    shard: str
    shard_opt: int
    shard_grad: int
    shard_w: int
    mixed: bool


def _setup(a: ModelArch, req: VramRequest) -> _Setup:
    training = req.method != "inference"
    n = req.gpus
    shard = req.sharding if training else "none"
    return _Setup(counts=count_params(a), fmt=weight_format(req.resolved_weight_precision), training=training,
                  tokens=float(req.batch) * req.seq_len, n=n,
                  tp=1 if training else n if req.layer_split else req.tensor_parallel,
                  shard=shard, shard_opt=n if shard in ("zero1", "zero2", "zero3", "fsdp") else 1,
                  shard_grad=n if shard in ("zero2", "zero3", "fsdp") else 1,
                  shard_w=n if shard in ("zero3", "fsdp") else 1, mixed=req.training_precision == "mixed")


def _weight_components(a: ModelArch, req: VramRequest, s: _Setup) -> list[VramComponent]:
    """Weights (split by tensor parallel, sharded by ZeRO-3/FSDP plus two gathered layers),
    quantisation block constants and the dequantisation workspace."""
    counts, fmt, tp, shard_w = s.counts, s.fmt, s.tp, s.shard_w
    per_layer_w = (counts.blocks_linear / a.num_layers) * fmt.bytes_per_param
    gathered = 2 * per_layer_w if shard_w > 1 else 0.0  # FSDP/ZeRO-3: current + prefetched unit, unsharded
    out = [VramComponent("weights", _weights_bytes(counts, fmt) / (tp * shard_w) + gathered,
                         {"counts": counts, "fmt": fmt, "tp": tp, "shard_w": shard_w, "n": s.n, "shard": s.shard})]
    const_bits = _quant_constant_bits(fmt, req.double_quant)
    if const_bits:
        out.append(VramComponent("quantization_constants", counts.blocks_linear * const_bits / 8 / (tp * shard_w),
                                 {"counts": counts, "const_bits": const_bits}))
        if fmt.name in ("nf4", "fp4", "int8"):
            big = max(x.in_features * x.out_features for x in block_linears(a))
            out.append(VramComponent("dequant_workspace", 2.0 * big * 2 / tp, {}))
    return out


def _trainable_components(a: ModelArch, req: VramRequest, s: _Setup) -> list[VramComponent]:
    """Gradients and optimizer states (full fine-tuning) or adapters, their gradients and states (LoRA)."""
    counts, fmt, n, shard = s.counts, s.fmt, s.n, s.shard
    if req.method == "full":
        state_b = 4.0 if fmt.name == "fp32" else (4.0 if s.mixed else 2.0)
        grad_b = 4.0 if fmt.name == "fp32" else 2.0
        master = 4.0 if (s.mixed and fmt.name != "fp32") else 0.0
        if req.optimizer == "adafactor":
            opt_bytes = _adafactor_state_bytes(a, counts, True, 0, ()) + master * counts.total
            what = ""
        else:
            per, what = _optimizer_bytes_per_param(req, state_b)
            opt_bytes = (per + master) * counts.total
        facts = {"counts": counts, "grad_b": grad_b, "master": master, "what": what, "n": n, "shard": shard,
                 "shard_grad": s.shard_grad, "shard_opt": s.shard_opt, "mixed": s.mixed, "optimizer": req.optimizer}
        return [VramComponent("gradients", counts.total * grad_b / s.shard_grad, facts),
                VramComponent("optimizer", opt_bytes / s.shard_opt, facts)]
    if req.method not in ("lora", "qlora"):
        return []
    targets = req.lora_targets
    lp = lora_param_count(a, req.lora_rank, targets)
    ad_b = 4.0 if s.mixed else 2.0
    if req.optimizer == "adafactor":
        opt_bytes = _adafactor_state_bytes(a, counts, False, req.lora_rank, targets)
    else:
        opt_bytes = _optimizer_bytes_per_param(req, ad_b)[0] * lp
    facts = {"lp": lp, "ad_b": ad_b, "rank": req.lora_rank, "targets": targets, "mixed": s.mixed,
             "optimizer": req.optimizer}
    return [VramComponent("lora_adapters", lp * ad_b / s.shard_w, facts),
            VramComponent("gradients", lp * ad_b / s.shard_grad, facts),
            VramComponent("optimizer", opt_bytes / s.shard_opt, facts)]


def _training_activation_components(a: ModelArch, req: VramRequest, s: _Setup) -> list[VramComponent]:
    """Saved activations (all layers, or layer inputs + one layer with checkpointing) and the loss's logits."""
    tokens = s.tokens
    bnb_frozen = req.method in ("lora", "qlora") and s.fmt.name in ("nf4", "fp4", "int8")
    per_layer = _layer_activation_bytes_per_token(a, req, req.method == "full" or bnb_frozen)
    ckpt = req.resolved_grad_checkpointing
    if ckpt:
        act = tokens * (a.num_layers * 2.0 * a.hidden_size + 2 * per_layer)
    else:
        act = tokens * a.num_layers * per_layer
    per_logit = _CAL.chunked_loss_bytes_per_logit if req.chunked_loss else _CAL.loss_bytes_per_logit
    facts = {"ckpt": ckpt, "per_layer": per_layer, "layers": a.num_layers, "batch": req.batch, "seq": req.seq_len,
             "vocab": a.vocab_size, "chunked": req.chunked_loss, "per_logit": per_logit}
    return [VramComponent("activations", act, facts), VramComponent("logits", tokens * a.vocab_size * per_logit, facts)]


def _inference_activation_components(a: ModelArch, req: VramRequest, s: _Setup) -> list[VramComponent]:
    """KV cache (sliding-window layers hold at most the window) and the prefill workspace."""
    tp = s.tp
    per_tok = kv_cache_bytes_per_token(a, dtype_bytes(req.kv_precision)) / tp if req.layer_split else \
        kv_cache_bytes_per_token(a, dtype_bytes(req.kv_precision), tp)  # a layer split holds its layers' whole KV
    if a.sliding_window and a.local_layer_fraction and req.seq_len > a.sliding_window:
        eff = a.local_layer_fraction * a.sliding_window + (1 - a.local_layer_fraction) * req.seq_len
        windowed = True
    else:
        eff, windowed = float(req.seq_len), False
    chunk = float(min(req.seq_len, req.prefill_chunk_tokens or req.seq_len))
    h = a.hidden_size
    q_width = a.num_attention_heads * a.head_dim
    inter = (a.moe_intermediate_size or a.intermediate_size) * max(1, a.experts_per_token) if a.is_moe else a.intermediate_size
    per_tok_act = 2.0 * (3 * h + q_width * 2 + (3 if a.gated_mlp else 2) * inter) / tp
    kv_facts = {"batch": req.batch, "seq": req.seq_len, "per_tok": per_tok, "kv_precision": req.kv_precision,
                "windowed": windowed, "window": a.sliding_window, "local": a.local_layer_fraction, "eff": eff}
    return [VramComponent("kv_cache", req.batch * eff * per_tok, kv_facts),
            VramComponent("activations", chunk * per_tok_act + req.batch * a.vocab_size * 4.0, {"chunk": chunk})]


def compute_vram_components(a: ModelArch, req: VramRequest) -> list[VramComponent]:
    """Per-GPU memory components in bytes, in the order the estimate lists them (zeros included).

    The arithmetic only; `explain_vram_component` gives each one's formula text and source.
    cuda_context = 0.5 GB + 5 % of everything allocated (PyTorch caching allocator reserve).
    """
    s = _setup(a, req)
    parts = _weight_components(a, req, s) + _trainable_components(a, req, s)
    parts += (_training_activation_components if s.training else _inference_activation_components)(a, req, s)
    allocated = sum(bytes_to_gb(max(0.0, p.n_bytes)) for p in parts)
    parts.append(VramComponent("cuda_context", (_CAL.cuda_context_gb + _CAL.allocator_reserve_fraction * allocated) * 1e9,
                               {"context_gb": _CAL.cuda_context_gb, "reserve": _CAL.allocator_reserve_fraction}))
    return parts


def explain_vram_component(c: VramComponent) -> tuple[str, str]:
    """(formula in words with this estimate's numbers, source) for one computed component."""
    return component_text(c.name, c.facts)


def estimate_vram(a: ModelArch, req: VramRequest, gpu: GpuMemory | None = None) -> VramEstimate:
    """Estimate per-GPU memory (decimal GB) for running or fine-tuning `a` as `req` describes.

    Computes the components (compute_vram_components), explains each (explain_vram_component)
    and adds the assumptions and the fit verdict.

    Args:
        a: the model's architecture.
        req: method, precisions, batch, sequence length, LoRA and parallelism settings.
        gpu: optional GPU to judge the fit against.

    Returns:
        VramEstimate with components weights, quantization_constants, lora_adapters, gradients,
        optimizer, activations, logits, kv_cache, cuda_context (zero components are dropped).

    Raises:
        InvalidInput: a setting that does not suit this model (LoRA rank > hidden size, ...).
    """
    _validate_against_model(a, req)
    comps = [MemoryComponent(name=p.name, gb=bytes_to_gb(max(0.0, p.n_bytes)), formula=text, source=source)
             for p in compute_vram_components(a, req) for text, source in [explain_vram_component(p)]]
    comps = [c for c in comps if c.gb > 0]
    total = sum(c.gb for c in comps)
    if not math.isfinite(total):
        raise InvalidCombination("the inputs are too large to compute a finite memory figure")
    counts = count_params(a)
    fit = None
    if gpu is not None:
        fit = FitVerdict.of(total, gpu.name, gpu.memory_gb, gpu.marketing_memory_gb, gpu.source)
        if fit.tight or (not fit.fits and total <= gpu.memory_gb * 1.1):
            fit.margin_levers = margin_levers(a, req, gpu.memory_gb)
    return VramEstimate(
        total_gb=round(total, 6),
        components_gb={c.name: round(c.gb, 6) for c in comps},
        components=comps,
        model={"id": a.id, "name": a.name, "params_b": round(counts.total_b, 3),
               "active_params_b": round(counts.active_b, 3), "layers": a.num_layers,
               "hidden_size": a.hidden_size, "attention": a.attention_kind,
               "kv_heads": a.num_kv_heads, "vocab_size": a.vocab_size, "moe": a.is_moe,
               "rough": a.rough, "source": a.source},
        inputs=_inputs_dict(req),
        assumptions=vram_assumptions(a, req, weight_format(req.resolved_weight_precision), counts),
        fit=fit,
    )


def _total_gb(a: ModelArch, req: VramRequest) -> float:
    return sum(bytes_to_gb(max(0.0, p.n_bytes)) for p in compute_vram_components(a, req))


def _largest(a: ModelArch, req: VramRequest, field: str, hi: int, target_gb: float, step: int = 1) -> int | None:
    """The largest value of `field` (a multiple of `step`, below `hi`) whose total is within target_gb."""
    lo, best = 1, None
    hi = (hi - 1) // step
    while lo <= hi:
        mid = (lo + hi) // 2
        if _total_gb(a, req.model_copy(update={field: mid * step})) <= target_gb:
            best, lo = mid * step, mid + 1
        else:
            hi = mid - 1
    return best


def margin_levers(a: ModelArch, req: VramRequest, gpu_memory_gb: float) -> list[dict]:
    """The settings that leave TIGHT_HEADROOM_FRACTION (5 %) of usable memory free, for a tight fit.

    Inference: an FP8 KV cache (half the bytes of a 16-bit one), and the longest context that leaves
    the margin (the KV cache grows linearly with it; searched in steps of 256 tokens). Training: the
    largest micro-batch that leaves it (activations grow with the batch), and activation checkpointing
    when it is off. Each lever: code, params, total_gb and headroom_pct at that setting.
    """
    target = gpu_memory_gb * (1 - TIGHT_HEADROOM_FRACTION)
    out: list[dict] = []

    def add(code: str, params: dict, r: VramRequest) -> None:
        t = _total_gb(a, r)
        if t <= target:
            out.append({"code": code, "params": params, "total_gb": round(t, 2),
                        "headroom_pct": round(100 * (gpu_memory_gb - t) / gpu_memory_gb, 1)})

    if req.method == "inference":
        if req.kv_precision in ("fp16", "bf16"):
            add("fp8_kv_cache", {"kv_precision": "fp8"}, req.model_copy(update={"kv_precision": "fp8"}))
        ctx = _largest(a, req, "seq_len", req.seq_len, target, 256) if req.seq_len > 256 else None
        if ctx:
            add("shorter_context", {"seq_len": ctx}, req.model_copy(update={"seq_len": ctx}))
        return out
    b = _largest(a, req, "batch", req.batch, target) if req.batch > 1 else None
    if b:
        add("smaller_micro_batch", {"batch": b}, req.model_copy(update={"batch": b}))
    if not req.resolved_grad_checkpointing:
        add("grad_checkpointing", {"grad_checkpointing": True}, req.model_copy(update={"grad_checkpointing": True}))
    return out


def _inputs_dict(req: VramRequest) -> dict:
    d = req.model_dump()
    d["weight_precision"] = req.resolved_weight_precision
    d["grad_checkpointing"] = req.resolved_grad_checkpointing if req.method != "inference" else None
    d["lora_targets"] = list(req.lora_targets)
    if req.method not in ("lora", "qlora"):
        for k in ("lora_rank", "lora_targets", "lora_dropout"):
            d.pop(k)
    if req.method == "inference":
        for k in ("training_precision", "optimizer", "sharding", "grad_checkpointing", "chunked_loss"):
            d.pop(k)
    else:
        for k in ("kv_precision", "tensor_parallel", "prefill_chunk_tokens"):
            d.pop(k)
    return d
