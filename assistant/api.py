"""The one entry point for front ends (CLI, app, Slack): resolve names, call the tools.

Imports stay light (no LangChain, no Gradio) so `gpu-advisor vram` starts fast.
"""

from __future__ import annotations

__all__ = ["list_gpus", "list_models", "resolve_model_arch", "speed", "train_time", "vram"]

import math
from typing import Any

from knowledge.catalog import (load_diffusion_models, load_gpus, load_models, model_from_config_file,
                               load_training_efficiency, resolve_diffusion, resolve_engine, resolve_gpu,
                               resolve_model)
from tools.architecture import arch_from_params, count_params
from tools.diffusion import estimate_diffusion_vram
from tools.errors import InvalidCombination, InvalidInput, UnknownModel
from tools.schemas import MAX_PARAMS_B, ModelArch, VramEstimate, VramRequest, validated
from tools.throughput import EngineProfile, SpeedEstimate, SpeedRequest, estimate_speed, max_batch_for_memory
from tools.training import TrainEstimate, TrainRequest, estimate_train_time
from tools.vram import estimate_vram


def resolve_model_arch(model: str | None = None, config: str | None = None,
                       params_b: float | None = None) -> ModelArch:
    """Exactly one of a catalog name, a config.json path or a parameter count (billions)."""
    given = [x is not None for x in (model, config, params_b)]
    if sum(given) != 1:
        raise InvalidCombination("give exactly one of --model NAME, --config PATH or --params-b N")
    if model is not None:
        if not str(model).strip():
            raise InvalidInput("model", model, "a model name such as llama-3.1-8b")
        return resolve_model(model)
    if config is not None:
        return model_from_config_file(config)
    assert params_b is not None
    if not isinstance(params_b, (int, float)) or not math.isfinite(params_b) or not 0 < params_b <= MAX_PARAMS_B:
        raise InvalidInput("params_b", params_b,
                           f"a number of billions of parameters above 0 and at most {MAX_PARAMS_B:,.0f}")
    return arch_from_params(float(params_b))


def _gpu_memory(gpu: str | None) -> tuple[Any, str]:
    if gpu is None:
        return None, ""
    match = resolve_gpu(gpu)
    gpu_mem, note = match.gpu.as_gpu_memory(), match.note
    if gpu_mem is None:
        note = (note + " " if note else "") + f"The memory of {match.gpu.name} is not in the GPU data, so no fit verdict."
    return gpu_mem, note


def vram(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
         gpu: str | None = None, offload_text_encoders: bool = False, **request: Any) -> VramEstimate:
    """Per-GPU memory estimate for a model, with an optional fit verdict against `gpu`.

    LLMs get the full breakdown (tools.vram); image pipelines (SDXL, SD3, FLUX.1...) their
    component weights (tools.diffusion).

    Raises:
        AdvisorError subclasses with user-facing messages (unknown model/GPU, invalid input).
    """
    try:
        arch = resolve_model_arch(model, config, params_b)
    except UnknownModel as llm_error:
        pipe = resolve_diffusion(model) if model is not None else None
        if pipe is None:
            raise llm_error from None
        if request.get("method") not in (None, "inference"):
            raise InvalidInput("method", request["method"],
                               "inference for image pipelines (fine-tuning memory of diffusion models is not modelled)")
        gpu_mem, note = _gpu_memory(gpu)
        est = estimate_diffusion_vram(pipe, request.get("weight_precision"), offload_text_encoders, gpu_mem)
        if note:
            est.assumptions.insert(0, note)
        return est
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    gpu_mem, note = _gpu_memory(gpu)
    est = estimate_vram(arch, req, gpu_mem)
    if gpu_mem is not None:
        gib = gpu_mem.memory_gb * 1e9 / 2**30
        est.assumptions.append(f"{gpu_mem.name}: {gib:g} GiB as the vendor states it (nvidia-smi counts GiB) "
                               f"= {gpu_mem.memory_gb:.1f} GB; fits means the total, CUDA context included, is within it.")
    if note:
        est.assumptions.insert(0, note)
    return est


def list_models() -> list[dict[str, Any]]:
    """Every catalog model: id, name, parameter count (billions), kind, source."""
    out = [{"id": m.id, "name": m.name, "params_b": round(count_params(m).total_b, 3),
            "kind": "llm-moe" if m.is_moe else "llm", "source": m.source} for m in load_models()]
    for mid, comps in load_diffusion_models().items():
        out.append({"id": mid, "name": comps[0].model_name, "params_b": round(sum(c.params_m for c in comps) / 1e3, 3),
                    "kind": "image-generation", "source": comps[0].source})
    return out


def list_gpus() -> list[dict[str, Any]]:
    """Every catalog GPU with its facts (None = unknown)."""
    return [g.model_dump(mode="json") for g in load_gpus()]


def speed(*, model: str | None = None, config: str | None = None, params_b: float | None = None, gpu: str,
          engine: str | None = None, engine_profile: EngineProfile | None = None, **request: Any) -> SpeedEstimate:
    """Decode speed, time to first token and latency of a model on a GPU (labelled estimates),
    with the memory check: does it fit, and the largest batch whose KV cache fits.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    arch = resolve_model_arch(model, config, params_b)
    match = resolve_gpu(gpu)
    eng = engine_profile or resolve_engine(engine)
    req = validated(SpeedRequest, **{k: v for k, v in request.items() if v is not None})
    ctx = req.prompt_tokens + req.output_tokens
    if arch.max_context and ctx > arch.max_context:
        raise InvalidInput("prompt_tokens + output_tokens", ctx,
                           f"at most {arch.max_context:,} tokens, the context window of {arch.name}")
    est = estimate_speed(arch, match.gpu, eng, req)
    tp = req.gpus if eng.multi_gpu == "tensor" else 1
    if match.gpu.memory_gb is not None:
        vreq = validated(VramRequest, method="inference", weight_precision=req.precision, batch=1, seq_len=ctx,
                         kv_precision=req.kv_precision, gpus=req.gpus, tensor_parallel=tp,
                         prefill_chunk_tokens=8192 if eng.id in ("vllm", "sglang", "tensorrt-llm") else None)
        one = estimate_vram(arch, vreq)
        # Layer-split engines spread the weights over the GPUs (each holds 1/n of the layers).
        split = req.gpus if eng.multi_gpu == "layer" else 1
        est.memory = max_batch_for_memory(one, match.gpu.memory_gb, split)
        if est.memory["max_batch"] >= 1:
            at_max = estimate_speed(arch, match.gpu, eng, req.model_copy(update={"batch": est.memory["max_batch"]}))
            est.memory["aggregate_tokens_per_s_at_max_batch"] = at_max.aggregate_tokens_per_s
        if req.batch > est.memory["max_batch"]:
            est.assumptions.insert(0, (
                f"Does not fit: {arch.name} at batch {req.batch} x {ctx:,} tokens needs more than the "
                f"{match.gpu.memory_gb:.1f} GB of each {match.gpu.name}"
                + (f"; at most {est.memory['max_batch']} sequences fit." if est.memory["max_batch"] >= 1
                   else "; even one sequence does not fit — quantise, add GPUs or pick a bigger GPU.")))
    if match.note:
        est.assumptions.insert(0, match.note)
    if arch.rough:
        est.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return est


def train_time(*, model: str | None = None, config: str | None = None, params_b: float | None = None, gpu: str,
               examples: int | None = None, tokens_per_example: int | None = None, **request: Any) -> TrainEstimate:
    """Fine-tuning throughput, hours and GPU-hours (labelled estimates).

    `dataset_tokens` or `examples` x `tokens_per_example` give the data size.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    arch = resolve_model_arch(model, config, params_b)
    match = resolve_gpu(gpu)
    if request.get("dataset_tokens") is None:
        if examples is None or tokens_per_example is None:
            raise InvalidCombination("give --dataset-tokens N, or --examples N with --tokens-per-example T")
        for name, v in (("examples", examples), ("tokens_per_example", tokens_per_example)):
            if not isinstance(v, int) or v < 1 or v > 10**12:
                raise InvalidInput(name, v, "a whole number from 1 to 1,000,000,000,000")
        request["dataset_tokens"] = float(examples) * tokens_per_example
    req = validated(TrainRequest, **{k: v for k, v in request.items() if v is not None})
    est = estimate_train_time(arch, match.gpu, req, load_training_efficiency())
    if match.note:
        est.assumptions.insert(0, match.note)
    if arch.rough:
        est.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return est
