"""Models and GPUs: resolve names, then memory, speed and training time (tools.vram, throughput, training)."""

from __future__ import annotations

import math
from typing import Any

from knowledge.catalog import (load_diffusion_models, load_gpus, load_models, load_training_efficiency,
                               load_kernels, model_from_config_file, resolve_diffusion, resolve_engine, resolve_gpu,
                               resolve_kernel, resolve_model)
from tools.architecture import arch_from_params, count_params
from assistant.service.images import image_speed, image_vram
from knowledge.catalog import is_image_pipeline
from tools.errors import InvalidCombination, InvalidInput, UnknownModel
from tools.schemas import ENGINE_PREFILL_CHUNK_TOKENS, MAX_PARAMS_B, ModelArch, VramEstimate, VramRequest, validated
from tools.throughput import (EngineProfile, SpeedEstimate, SpeedRequest, check_context_window, estimate_speed,
                              max_batch_for_memory)
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
         gpu: str | None = None, gpu_memory_gb: float | None = None, offload_text_encoders: bool = False,
         **request: Any) -> VramEstimate:
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
        return image_vram(model=model, gpu=gpu, gpu_memory_gb=gpu_memory_gb,
                          offload_text_encoders=offload_text_encoders, **request)
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    gpu_mem, note = _gpu_memory(gpu)
    if gpu_mem is None and gpu_memory_gb is not None:
        if not isinstance(gpu_memory_gb, (int, float)) or not math.isfinite(gpu_memory_gb) or not 0 < gpu_memory_gb <= 10_000:
            raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory size in GB above 0 and at most 10,000")
        from tools.schemas import GpuMemory
        # a "24 GB GPU" is 24 GiB as vendors count it
        gpu_mem = GpuMemory(name=f"a {gpu_memory_gb:g} GB GPU", memory_gb=gpu_memory_gb * 2**30 / 1e9)
    est = estimate_vram(arch, req, gpu_mem)
    if gpu_mem is not None:
        est.assumptions.append(gpu_mem.sentence())
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
          engine: str | None = None, engine_profile: EngineProfile | None = None, kernel: str | None = None,
          **request: Any) -> SpeedEstimate:
    """Decode speed, time to first token and latency of a model on a GPU (labelled estimates),
    with the memory check: does it fit, and the largest batch whose KV cache fits. `kernel` names the
    quantised-matmul kernel family (knowledge/quant_kernels.csv) when the precision does not; by
    default the engine's kernel for the precision is assumed and named in the answer.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    if config is None and params_b is None and engine_profile is None and is_image_pipeline(model):
        return image_speed(model=model, gpu=gpu, engine=engine, kernel=kernel, **request)  # type: ignore[return-value]
    arch = resolve_model_arch(model, config, params_b)
    match = resolve_gpu(gpu)
    eng = engine_profile or resolve_engine(engine)
    req = validated(SpeedRequest, **{k: v for k, v in request.items() if v is not None})
    ctx = req.prompt_tokens + req.output_tokens
    window_warning = check_context_window(arch, ctx)  # over the window: a warning; far over: refused
    kern = resolve_kernel(kernel or req.precision, eng)
    if kernel and kern is None:
        raise InvalidInput("kernel", kernel, ", ".join(k.id for k in load_kernels()))
    est = estimate_speed(arch, match.gpu, eng, req, kernel=kern)
    if window_warning:
        est.warnings.append(window_warning)
        est.assumptions.insert(0, window_warning)
    tp = req.gpus if eng.multi_gpu == "tensor" else 1
    if match.gpu.memory_gb is not None:
        vreq = validated(VramRequest, method="inference", weight_precision=req.precision, batch=1, seq_len=ctx,
                         kv_precision=req.kv_precision, gpus=req.gpus, tensor_parallel=tp,
                         prefill_chunk_tokens=ENGINE_PREFILL_CHUNK_TOKENS.get(eng.id))
        one = estimate_vram(arch, vreq)
        # Layer-split engines spread the weights over the GPUs (each holds 1/n of the layers).
        split = req.gpus if eng.multi_gpu == "layer" else 1
        est.memory = max_batch_for_memory(one, match.gpu.memory_gb, split)
        if est.memory["max_batch"] >= 1:
            at_max = estimate_speed(arch, match.gpu, eng, req.model_copy(update={"batch": est.memory["max_batch"]}),
                                    kernel=kern)
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
            raise InvalidCombination("the dataset size is missing: give its tokens (e.g. '100M tokens', "
                                     "--dataset-tokens N), or examples and tokens per example (e.g. '50k examples "
                                     "of 512 tokens', --examples N --tokens-per-example T)", missing="dataset")
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


_DBS: dict[str, Any] = {}


def sizing(model: str | None, config: str | None, params_b: float | None, gpu: str | None,
            gpu_memory_gb: float | None, request: dict[str, Any]) -> tuple[ModelArch, VramRequest, Any, float | None]:
    """Resolve the model, the VramRequest and the GPU (or a bare memory size, vendor GiB) for solve/levers."""
    arch = resolve_model_arch(model, config, params_b)
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    spec = resolve_gpu(gpu).gpu if gpu is not None else None
    mem = spec.memory_gb if spec is not None else None
    if mem is None and gpu_memory_gb is not None:
        if not isinstance(gpu_memory_gb, (int, float)) or not 0 < gpu_memory_gb <= 10_000:
            raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory size in GB above 0 and at most 10,000")
        mem = gpu_memory_gb * 2**30 / 1e9  # a "24 GB GPU" is 24 GiB as vendors count it
    return arch, req, spec, mem
