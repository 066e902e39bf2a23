"""The one entry point for front ends (CLI, app, Slack): resolve names, call the tools.

Imports stay light (no LangChain, no Gradio) so `gpu-advisor vram` starts fast.
"""

from __future__ import annotations

__all__ = ["resolve_model_arch", "vram"]

import math
from typing import Any

from knowledge.catalog import model_from_config_file, resolve_gpu, resolve_model
from tools.architecture import arch_from_params
from tools.errors import InvalidCombination, InvalidInput
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


def vram(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
         gpu: str | None = None, **request: Any) -> VramEstimate:
    """Per-GPU memory estimate for a model, with an optional fit verdict against `gpu`.

    Raises:
        AdvisorError subclasses with user-facing messages (unknown model/GPU, invalid input).
    """
    arch = resolve_model_arch(model, config, params_b)
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    gpu_mem, note = None, ""
    if gpu is not None:
        match = resolve_gpu(gpu)
        gpu_mem = match.gpu.as_gpu_memory()
        note = match.note
        if gpu_mem is None:
            note = (note + " " if note else "") + f"The memory of {match.gpu.name} is not in the GPU data, so no fit verdict."
    est = estimate_vram(arch, req, gpu_mem)
    if gpu_mem is not None:
        gib = gpu_mem.memory_gb * 1e9 / 2**30
        est.assumptions.append(f"{gpu_mem.name}: {gib:g} GiB as the vendor states it (nvidia-smi counts GiB) "
                               f"= {gpu_mem.memory_gb:.1f} GB; fits means the total, CUDA context included, is within it.")
    if note:
        est.assumptions.insert(0, note)
    return est
