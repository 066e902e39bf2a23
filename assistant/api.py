"""The one entry point for front ends (CLI, app, Slack): resolve names, call the tools.

Imports stay light (no LangChain, no Gradio) so `gpu-advisor vram` starts fast.
"""

from __future__ import annotations

__all__ = ["list_gpus", "list_models", "resolve_model_arch", "vram"]

import math
from typing import Any

from knowledge.catalog import (load_diffusion_models, load_gpus, load_models, model_from_config_file,
                               resolve_diffusion, resolve_gpu, resolve_model)
from tools.architecture import arch_from_params, count_params
from tools.diffusion import estimate_diffusion_vram
from tools.errors import InvalidCombination, InvalidInput, UnknownModel
from tools.schemas import MAX_PARAMS_B, ModelArch, VramEstimate, VramRequest, validated
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
