"""The VRAM calculator: per-GPU memory for inference, full fine-tuning, LoRA and QLoRA.

`estimate_vram(arch, request, gpu=None)` returns a `VramEstimate` split into named components
(decimal GB, per GPU). Each component has its own function whose docstring gives the formula,
its unit and its source. Calibration constants live in `_CAL` with the measurement that set them.
"""

from __future__ import annotations

__all__ = ["estimate_vram", "lora_param_count", "kv_cache_bytes_per_token"]

import math
from dataclasses import dataclass

from tools.architecture import ParamCounts, block_linears, count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import FitVerdict, GpuMemory, MemoryComponent, ModelArch, VramEstimate, VramRequest
from tools.units import WeightFormat, bytes_to_gb, dtype_bytes, weight_format

_ZERO_SOURCE = "ZeRO paper (Rajbhandari et al. 2020, sec. 3.1): 2+2+12 bytes/param for mixed-precision Adam"


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


def estimate_vram(a: ModelArch, req: VramRequest, gpu: GpuMemory | None = None) -> VramEstimate:
    """Estimate per-GPU memory (decimal GB) for running or fine-tuning `a` as `req` describes.

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
    counts = count_params(a)
    fmt = weight_format(req.resolved_weight_precision)
    method = req.method
    training = method != "inference"
    tokens = float(req.batch) * req.seq_len
    n = req.gpus
    tp = req.tensor_parallel if method == "inference" else 1
    shard = req.sharding if training else "none"
    shard_opt = n if shard in ("zero1", "zero2", "zero3", "fsdp") else 1
    shard_grad = n if shard in ("zero2", "zero3", "fsdp") else 1
    shard_w = n if shard in ("zero3", "fsdp") else 1
    mixed = req.training_precision == "mixed"
    comps: list[MemoryComponent] = []
    assumptions: list[str] = []

    def add(name: str, n_bytes: float, formula: str, source: str) -> None:
        comps.append(MemoryComponent(name=name, gb=bytes_to_gb(max(0.0, n_bytes)), formula=formula, source=source))

    # --- weights -----------------------------------------------------------------------------
    w_bytes = _weights_bytes(counts, fmt)
    per_layer_w = (counts.blocks_linear / a.num_layers) * fmt.bytes_per_param
    gathered = 0.0
    if shard_w > 1:
        gathered = 2 * per_layer_w  # FSDP/ZeRO-3: current unit + prefetched next unit, unsharded
    w_formula = (f"{counts.total_b:.2f}B params x {fmt.bytes_per_param:g} B ({fmt.name})"
                 if not fmt.is_quantized or fmt.quantizes_embeddings else
                 f"{counts.blocks_linear / 1e9:.2f}B linear params x {fmt.bytes_per_param:g} B ({fmt.name})"
                 f" + {counts.unquantized / 1e9:.2f}B embedding/LM-head/norm params x 2 B (kept 16-bit)")
    if tp > 1:
        w_formula += f", split over tensor-parallel {tp}"
    if shard_w > 1:
        w_formula += f", sharded over {n} GPUs ({shard}) + 2 gathered layers"
    add("weights", w_bytes / (tp * shard_w) + gathered, w_formula,
        "parameter count from the config (tools.architecture.count_params); "
        "bitsandbytes/GPTQ/AWQ keep embeddings and lm_head in 16-bit (transformers llm_int8_skip_modules); "
        + fmt.source)
    const_bits = _quant_constant_bits(fmt, req.double_quant)
    if const_bits:
        add("quantization_constants", counts.blocks_linear * const_bits / 8 / (tp * shard_w),
            f"{counts.blocks_linear / 1e9:.2f}B quantised params x {const_bits:.3f} bits of block constants",
            "QLoRA paper (Dettmers et al. 2023) sec. 3; GPTQ group-128 scales/zeros")
        if fmt.name in ("nf4", "fp4", "int8"):
            big = max(x.in_features * x.out_features for x in block_linears(a))
            add("dequant_workspace", 2.0 * big * 2 / tp,
                "two 16-bit copies of the largest linear layer, dequantised for the matmul and its backward",
                "bitsandbytes dequantizes 4-bit/8-bit weights to 16-bit per layer before matmul")

    # --- trainable state ---------------------------------------------------------------------
    targets = req.lora_targets
    if method == "full":
        state_b = 4.0 if fmt.name == "fp32" else (4.0 if mixed else 2.0)
        grad_b = 4.0 if fmt.name == "fp32" else 2.0
        add("gradients", counts.total * grad_b / shard_grad,
            f"{counts.total_b:.2f}B params x {grad_b:g} B" + (f" / {n} GPUs ({shard})" if shard_grad > 1 else ""),
            _ZERO_SOURCE if mixed else "pure bf16 training (litgpt bf16-true, torchtune): bf16 gradients")
        master = 4.0 if (mixed and fmt.name != "fp32") else 0.0
        if req.optimizer == "adafactor":
            opt_bytes = _adafactor_state_bytes(a, counts, True, 0, ()) + master * counts.total
            opt_formula = "Adafactor factored moments (m + n fp32 per m x n matrix)"
        else:
            per, what = _optimizer_bytes_per_param(req, state_b)
            opt_bytes = (per + master) * counts.total
            opt_formula = f"{counts.total_b:.2f}B params x ({what}"
        if master:
            opt_formula += " + 4 B fp32 master weights"
        opt_formula += ")" if req.optimizer != "adafactor" else ""
        if shard_opt > 1:
            opt_formula += f" / {n} GPUs ({shard})"
        add("optimizer", opt_bytes / shard_opt, opt_formula,
            _ZERO_SOURCE + "; bf16 states as in litgpt bf16-true / torchtune; bitsandbytes 8-bit optimizers")
    elif method in ("lora", "qlora"):
        lp = lora_param_count(a, req.lora_rank, targets)
        ad_b = 4.0 if mixed else 2.0
        add("lora_adapters", lp * ad_b / shard_w,
            f"rank {req.lora_rank} on {','.join(targets)}: {lp / 1e6:.1f}M params x {ad_b:g} B "
            f"({'fp32, PEFT autocast_adapter_dtype' if mixed else 'bf16'})",
            "LoRA (Hu et al. 2021): r x (in + out) per adapted matrix per layer")
        add("gradients", lp * ad_b / shard_grad, f"{lp / 1e6:.1f}M adapter params x {ad_b:g} B",
            "only adapter weights receive gradients (frozen base)")
        if req.optimizer == "adafactor":
            opt_bytes = _adafactor_state_bytes(a, counts, False, req.lora_rank, targets)
        else:
            opt_bytes = _optimizer_bytes_per_param(req, ad_b)[0] * lp
        add("optimizer", opt_bytes / shard_opt,
            f"{lp / 1e6:.1f}M adapter params x {req.optimizer} state",
            "optimizer state for the adapters only (QLoRA paper, fig. 1)")

    # --- activations, logits, KV cache ---------------------------------------------------------
    if training:
        ckpt = req.resolved_grad_checkpointing
        bnb_frozen = method in ("lora", "qlora") and fmt.name in ("nf4", "fp4", "int8")
        per_layer = _layer_activation_bytes_per_token(a, req, method == "full" or bnb_frozen)
        if ckpt:
            act = tokens * (a.num_layers * 2.0 * a.hidden_size + 2 * per_layer)
            act_formula = (f"checkpointing: {a.num_layers} layers x batch x seq x 2h B (layer inputs) "
                           f"+ 2 x one layer's {per_layer / 1e3:.0f} kB/token (recompute + its gradients)")
        else:
            act = tokens * a.num_layers * per_layer
            act_formula = f"batch {req.batch} x seq {req.seq_len} x {a.num_layers} layers x {per_layer / 1e3:.0f} kB/token/layer"
        add("activations", act, act_formula,
            "Korthikanti et al. 2022 sec. 4.1 per-tensor count, adapted (see tools.vram docstring)")
        if req.chunked_loss:
            add("logits", tokens * a.vocab_size * _CAL.chunked_loss_bytes_per_logit,
                f"batch x seq x vocab {a.vocab_size:,} x {_CAL.chunked_loss_bytes_per_logit:g} B "
                "(bf16 logits + one fp32 chunk of 8)",
                "torchtune CEWithChunkedOutputLoss (8 chunks upcast one at a time)")
        else:
            add("logits", tokens * a.vocab_size * _CAL.loss_bytes_per_logit,
                f"batch x seq x vocab {a.vocab_size:,} x {_CAL.loss_bytes_per_logit:g} B (bf16 logits + fp32 upcast + fp32 log-softmax)",
                "transformers ForCausalLMLoss: logits.float() before cross_entropy")
    else:
        kv_b = dtype_bytes(req.kv_precision)
        per_tok = kv_cache_bytes_per_token(a, kv_b, tp)
        if a.sliding_window and a.local_layer_fraction and req.seq_len > a.sliding_window:
            eff = a.local_layer_fraction * a.sliding_window + (1 - a.local_layer_fraction) * req.seq_len
            kv_note = (f" (sliding window {a.sliding_window:,} on {a.local_layer_fraction:.0%} of layers:"
                       f" {eff:,.0f} effective tokens)")
        else:
            eff, kv_note = float(req.seq_len), ""
        add("kv_cache", req.batch * eff * per_tok,
            f"batch {req.batch} x {req.seq_len:,} tokens x {per_tok / 1e3:.1f} kB/token ({req.kv_precision}){kv_note}",
            "2 x kv_heads x head_dim x bytes x layers per token (vLLM/PagedAttention sizing); MLA latent for DeepSeek")
        chunk = float(min(req.seq_len, req.prefill_chunk_tokens or req.seq_len))
        h = a.hidden_size
        q_width = a.num_attention_heads * a.head_dim
        inter = (a.moe_intermediate_size or a.intermediate_size) * max(1, a.experts_per_token) if a.is_moe else a.intermediate_size
        per_tok_act = 2.0 * (3 * h + q_width * 2 + (3 if a.gated_mlp else 2) * inter) / tp
        add("activations", chunk * per_tok_act + req.batch * a.vocab_size * 4.0,
            f"prefill workspace for {chunk:,.0f} tokens (hidden, q/k/v, MLP intermediates of one layer) "
            "+ fp32 logits for the last token of each sequence",
            "one sequence's prompt per forward (transformers generate); vLLM/SGLang chunk it (8192 tokens)")

    allocated = sum(c.gb for c in comps)
    add("cuda_context", (_CAL.cuda_context_gb + _CAL.allocator_reserve_fraction * allocated) * 1e9,
        f"{_CAL.cuda_context_gb} GB CUDA context + {_CAL.allocator_reserve_fraction:.0%} allocator reserve",
        "PyTorch CUDA semantics notes; nvidia-smi minus torch.cuda.max_memory_allocated on typical runs")

    comps = [c for c in comps if c.gb > 0]
    total = sum(c.gb for c in comps)
    if not math.isfinite(total):
        raise InvalidCombination("the inputs are too large to compute a finite memory figure")

    assumptions += _assumptions(a, req, fmt, counts)
    fit = FitVerdict.of(total, gpu.name, gpu.memory_gb) if gpu is not None else None
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
        assumptions=assumptions,
        fit=fit,
    )


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


def _assumptions(a: ModelArch, req: VramRequest, fmt: WeightFormat, counts: ParamCounts) -> list[str]:
    out = ["Figures are per GPU, decimal GB (10^9 bytes); an estimate, not a measurement."]
    if a.rough:
        out.append(f"Only the parameter count was given: a Llama-like shape was assumed "
                   f"({a.num_layers} layers, hidden {a.hidden_size}); KV cache and activations are rough.")
    if a.is_moe:
        out.append(f"MoE: memory holds all {counts.total_b:.1f}B parameters, though only "
                   f"{counts.active_b:.1f}B are active per token.")
    if req.method == "inference":
        out.append(f"KV cache for {req.batch} sequence(s) of {req.seq_len:,} tokens (prompt + output) in {req.kv_precision}.")
        out.append("Prefill workspace for " + (f"chunks of {req.prefill_chunk_tokens:,} tokens"
                   if req.prefill_chunk_tokens else "one sequence's whole prompt at once (transformers)")
                   + "; engines that pre-allocate (vLLM gpu_memory_utilization=0.9) reserve more than this.")
        if req.tensor_parallel > 1:
            out.append(f"Tensor parallel over {req.tensor_parallel} GPUs: weights and KV heads split per GPU.")
    else:
        out.append(f"Micro-batch {req.batch} x {req.seq_len:,} tokens per GPU; "
                   f"gradient checkpointing {'on' if req.resolved_grad_checkpointing else 'off'}"
                   + (" (default for QLoRA)" if req.grad_checkpointing is None and req.method == "qlora" else "") + ".")
        if req.method == "full":
            out.append("Training precision " + (
                "mixed: 16-bit weights and gradients, fp32 master weights and optimizer states (16 B/param with AdamW)."
                if req.training_precision == "mixed" else
                "bf16: weights, gradients and optimizer states all bf16 (8 B/param with AdamW)."))
        else:
            out.append(f"LoRA rank {req.lora_rank} on {', '.join(req.lora_targets)}, dropout {req.lora_dropout:g}; adapters "
                       + ("fp32 (mixed)." if req.training_precision == "mixed" else "bf16."))
        out.append("Logits: bf16 plus " + ("one fp32 chunk (chunked cross-entropy)." if req.chunked_loss else
                   "fp32 copies for the loss (transformers); chunked cross-entropy (torchtune, Unsloth, Liger) "
                   "needs far less: --chunked-loss."))
        if req.optimizer == "paged-adamw8bit":
            out.append("Paged AdamW 8-bit can spill optimizer states to CPU RAM under pressure; counted on the GPU here.")
        if req.sharding != "none" and req.gpus > 1:
            out.append(f"{req.sharding} over {req.gpus} GPUs: "
                       + {"zero1": "optimizer states sharded.", "zero2": "optimizer states and gradients sharded.",
                          "zero3": "weights, gradients and optimizer states sharded.",
                          "fsdp": "weights, gradients and optimizer states sharded (FULL_SHARD)."}[req.sharding])
        elif req.gpus > 1:
            out.append(f"{req.gpus} GPUs without sharding (plain data parallel): every GPU holds a full copy.")
    if fmt.is_quantized and not fmt.quantizes_embeddings:
        out.append("Quantisation covers the transformer blocks' linear layers; embeddings, LM head and norms stay 16-bit.")
    out.append("cuda_context covers the CUDA context and the allocator's reserve; published peak figures "
               "(torch.cuda.max_memory_allocated) leave it out.")
    return out
