"""The VRAM calculator's explanations: each component's formula in words and its source, and the
assumptions of an estimate. Text only — the arithmetic is in tools.vram (compute_vram_components);
each function reads the numbers it shows from the facts the computation recorded.
"""

from __future__ import annotations

__all__ = ["component_text", "vram_assumptions"]

from tools.architecture import ParamCounts
from tools.schemas import ModelArch, VramRequest
from tools.units import WeightFormat, billions

_ZERO_SOURCE = "ZeRO paper (Rajbhandari et al. 2020, sec. 3.1): 2+2+12 bytes/param for mixed-precision Adam"

_WEIGHTS_SOURCE = ("parameter count from the config (tools.architecture.count_params); bitsandbytes/GPTQ/AWQ keep "
                   "embeddings and lm_head in 16-bit (transformers llm_int8_skip_modules); ")


def _explain_weights(f: dict) -> tuple[str, str]:
    counts, fmt = f["counts"], f["fmt"]
    text = (f"{counts.total_b:.2f}B params x {fmt.bytes_per_param:g} B ({fmt.name})"
            if not fmt.is_quantized or fmt.quantizes_embeddings else
            f"{billions(counts.blocks_linear):.2f}B linear params x {fmt.bytes_per_param:g} B ({fmt.name})"
            f" + {billions(counts.unquantized):.2f}B embedding/LM-head/norm params x 2 B (kept 16-bit)")
    if f["tp"] > 1:
        text += f", split over tensor-parallel {f['tp']}"
    if f["shard_w"] > 1:
        text += f", sharded over {f['n']} GPUs ({f['shard']}) + 2 gathered layers"
    return text, _WEIGHTS_SOURCE + fmt.source


def _explain_gradients(f: dict) -> tuple[str, str]:
    if "lp" in f:
        return (f"{f['lp'] / 1e6:.1f}M adapter params x {f['ad_b']:g} B",
                "only adapter weights receive gradients (frozen base)")
    text = f"{f['counts'].total_b:.2f}B params x {f['grad_b']:g} B"
    text += f" / {f['n']} GPUs ({f['shard']})" if f["shard_grad"] > 1 else ""
    return text, (_ZERO_SOURCE if f["mixed"] else "pure bf16 training (litgpt bf16-true, torchtune): bf16 gradients")


def _explain_optimizer(f: dict) -> tuple[str, str]:
    if "lp" in f:
        return (f"{f['lp'] / 1e6:.1f}M adapter params x {f['optimizer']} state",
                "optimizer state for the adapters only (QLoRA paper, fig. 1)")
    ada = f["optimizer"] == "adafactor"
    text = ("Adafactor factored moments (m + n fp32 per m x n matrix)" if ada
            else f"{f['counts'].total_b:.2f}B params x ({f['what']}")
    if f["master"]:
        text += " + 4 B fp32 master weights"
    text += "" if ada else ")"
    if f["shard_opt"] > 1:
        text += f" / {f['n']} GPUs ({f['shard']})"
    return text, _ZERO_SOURCE + "; bf16 states as in litgpt bf16-true / torchtune; bitsandbytes 8-bit optimizers"


def _explain_activations(f: dict) -> tuple[str, str]:
    if "chunk" in f:
        return (f"prefill workspace for {f['chunk']:,.0f} tokens (hidden, q/k/v, MLP intermediates of one layer) "
                "+ fp32 logits for the last token of each sequence",
                "one sequence's prompt per forward (transformers generate); vLLM/SGLang chunk it (8192 tokens)")
    if f["ckpt"]:
        text = (f"checkpointing: {f['layers']} layers x batch x seq x 2h B (layer inputs) "
                f"+ 2 x one layer's {f['per_layer'] / 1e3:.0f} kB/token (recompute + its gradients)")
    else:
        text = f"batch {f['batch']} x seq {f['seq']} x {f['layers']} layers x {f['per_layer'] / 1e3:.0f} kB/token/layer"
    return text, "Korthikanti et al. 2022 sec. 4.1 per-tensor count, adapted (see tools.vram docstring)"


def _explain_logits(f: dict) -> tuple[str, str]:
    if f["chunked"]:
        return (f"batch x seq x vocab {f['vocab']:,} x {f['per_logit']:g} B "
                "(bf16 logits + one fp32 chunk of 8)", "torchtune CEWithChunkedOutputLoss (8 chunks upcast one at a time)")
    return (f"batch x seq x vocab {f['vocab']:,} x {f['per_logit']:g} B (bf16 logits + fp32 upcast + "
            "fp32 log-softmax)", "transformers ForCausalLMLoss: logits.float() before cross_entropy")


def _explain_kv(f: dict) -> tuple[str, str]:
    note = (f" (sliding window {f['window']:,} on {f['local']:.0%} of layers: {f['eff']:,.0f} effective tokens)"
            if f["windowed"] else "")
    return (f"batch {f['batch']} x {f['seq']:,} tokens x {f['per_tok'] / 1e3:.1f} kB/token ({f['kv_precision']}){note}",
            "2 x kv_heads x head_dim x bytes x layers per token (vLLM/PagedAttention sizing); MLA latent for DeepSeek")


_EXPLAIN = {
    "weights": _explain_weights,
    "quantization_constants": lambda f: (
        f"{billions(f['counts'].blocks_linear):.2f}B quantised params x {f['const_bits']:.3f} bits of block constants",
        "QLoRA paper (Dettmers et al. 2023) sec. 3; GPTQ group-128 scales/zeros"),
    "dequant_workspace": lambda f: (
        "two 16-bit copies of the largest linear layer, dequantised for the matmul and its backward",
        "bitsandbytes dequantizes 4-bit/8-bit weights to 16-bit per layer before matmul"),
    "lora_adapters": lambda f: (
        f"rank {f['rank']} on {','.join(f['targets'])}: {f['lp'] / 1e6:.1f}M params x {f['ad_b']:g} B "
        f"({'fp32, PEFT autocast_adapter_dtype' if f['mixed'] else 'bf16'})",
        "LoRA (Hu et al. 2021): r x (in + out) per adapted matrix per layer"),
    "gradients": _explain_gradients,
    "optimizer": _explain_optimizer,
    "activations": _explain_activations,
    "logits": _explain_logits,
    "kv_cache": _explain_kv,
    "cuda_context": lambda f: (
        f"{f['context_gb']} GB CUDA context + {f['reserve']:.0%} allocator reserve",
        "PyTorch CUDA semantics notes; nvidia-smi minus torch.cuda.max_memory_allocated on typical runs"),
}


def component_text(name: str, facts: dict) -> tuple[str, str]:
    """(formula in words with this estimate's numbers, source) for the component `name`."""
    return _EXPLAIN[name](facts)


def vram_assumptions(a: ModelArch, req: VramRequest, fmt: WeightFormat, counts: ParamCounts) -> list[str]:
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
