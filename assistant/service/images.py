"""Image-generation entry points for the front ends: memory, speed, cost and recommendations.

assistant.service.api re-exports these and routes diffusion pipeline names to them from vram(), speed(),
cost() and recommend(). Resolution is `resolution` (1024 or "1024x768") or `width`/`height`.
"""

from __future__ import annotations

__all__ = ["image_cost", "image_recommend", "image_speed", "image_vram"]

import math
import re
from typing import Any

from knowledge.catalog import (load_diffusion_arch, load_gpus, load_providers,
                               resolve_diffusion, resolve_gpu,
                               resolve_image_framework)
from tools.cost import BillingPolicy, SpotAssumptions
from tools.diffusion import ImageRequest, ImageVramEstimate, estimate_image_memory
from tools.errors import InvalidCombination, InvalidInput, UnknownModel
from tools.image_cost import BatchJobRequest, EndpointRequest, batch_job_cost, endpoint_cost
from tools.image_speed import ImageSpeedEstimate, estimate_image_speed
from tools.schemas import GpuMemory, validated
from assistant.service.offers import offers_and_billing, prices

# LLM-only request fields: ignored when unset, refused when set for an image pipeline
_LLM_ONLY = ("seq_len", "training_precision", "optimizer", "grad_checkpointing", "attention", "lora_rank",
             "lora_targets", "lora_dropout", "chunked_loss", "sharding", "tensor_parallel", "kv_precision",
             "prefill_chunk_tokens", "double_quant", "prompt_tokens", "output_tokens", "kernel", "dataset_tokens",
             "examples", "tokens_per_example", "epochs", "hours", "context_tokens", "min_tokens_per_s_per_user",
             "needs_nvlink")
_IMAGE_HINT = "image pipelines take --resolution, --steps, --guidance, --batch, --precision and --placement"


def _pipeline(model: str) -> tuple[Any, Any]:
    pipe = resolve_diffusion(model)
    if pipe is None:
        raise UnknownModel(model, sorted(load_diffusion_arch()))
    return pipe, load_diffusion_arch()[pipe[0].model_id]


def _size(resolution: Any, width: int | None, height: int | None, default: int) -> tuple[int, int]:
    if resolution is not None:
        m = re.fullmatch(r"\s*(\d{2,5})\s*(?:[x×*]\s*(\d{2,5}))?\s*(?:px)?\s*", str(resolution).lower())
        if not m:
            raise InvalidInput("resolution", resolution, "pixels as 1024 or 1024x768")
        return int(m.group(1)), int(m.group(2) or m.group(1))
    return width or height or default, height or width or default


def _ignored(extra: dict[str, Any]) -> list[str]:
    """A note naming the language-model options that were given but do not apply (none: empty)."""
    bad = [k for k in _LLM_ONLY if extra.get(k) is not None]
    return [f"Ignored for an image pipeline: {', '.join(bad)} (language-model options); {_IMAGE_HINT}."] if bad else []


def _request(arch: Any, extra: dict[str, Any], **kw: Any) -> ImageRequest:
    unknown = [k for k in extra if k not in _LLM_ONLY and k not in ("method", "gpus") and extra[k] is not None]
    if unknown:
        raise InvalidInput(unknown[0], extra[unknown[0]], _IMAGE_HINT)
    if extra.get("method") not in (None, "inference"):
        raise InvalidInput("method", extra["method"],
                           "inference for image pipelines (fine-tuning memory of diffusion models is not modelled)")
    w, h = _size(kw.pop("resolution", None), kw.pop("width", None), kw.pop("height", None), arch.default_resolution)
    kw.setdefault("steps", None)
    if kw["steps"] is None:
        kw["steps"] = arch.default_steps
    return validated(ImageRequest, width=w, height=h, **{k: v for k, v in kw.items() if v is not None})


def _gpu_mem(gpu: str | None, gpu_memory_gb: float | None) -> tuple[GpuMemory | None, str]:
    if gpu is not None:
        m = resolve_gpu(gpu)
        mem = m.gpu.as_gpu_memory()
        return mem, m.note if mem else (m.note + f" The memory of {m.gpu.name} is not in the GPU data.").strip()
    if gpu_memory_gb is not None:
        if not isinstance(gpu_memory_gb, (int, float)) or not math.isfinite(gpu_memory_gb) or not 0 < gpu_memory_gb <= 10_000:
            raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory size in GB above 0 and at most 10,000")
        # a "16 GB card" is 16 GiB as vendors count it
        return GpuMemory(name=f"a {gpu_memory_gb:g} GB GPU", memory_gb=gpu_memory_gb * 2**30 / 1e9), ""
    return None, ""


def image_vram(*, model: str, gpu: str | None = None, gpu_memory_gb: float | None = None,
               offload_text_encoders: bool = False, weight_precision: str | None = None, precision: str | None = None,
               text_encoder_precision: str | None = None, resolution: Any = None, width: int | None = None,
               height: int | None = None, steps: int | None = None, guidance: float | None = None,
               batch: int | None = None, placement: str | None = None, vae_slicing: bool | None = None,
               **extra: Any) -> ImageVramEstimate:
    """Peak GPU memory of one text-to-image call, every placement's memory and copy cost, and the fit.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    pipe, arch = _pipeline(model)
    if offload_text_encoders and placement in (None, "all-on-gpu"):
        placement = "text-encoders-dropped"
    req = _request(arch, extra, resolution=resolution, width=width, height=height, steps=steps, guidance=guidance,
                   batch=batch, precision=precision or weight_precision, text_encoder_precision=text_encoder_precision,
                   placement=placement, vae_slicing=vae_slicing)
    mem, note = _gpu_mem(gpu, gpu_memory_gb)
    est = estimate_image_memory(pipe, arch, req, mem)
    est.assumptions += _ignored(extra)
    if est.fit is not None and not est.fit.fits:
        fits = [p for p in est.placements if p["peak_gb"] <= est.fit.gpu_memory_gb]
        est.assumptions.insert(0, f"Does not fit with {req.placement}; " + (
            "what fits: " + "; ".join(f"{p['placement']} ({p['peak_gb']:.1f} GB, {p['speed_cost']})" for p in fits)
            if fits else "no placement fits at this precision: try fp8, GGUF (q8_0, q4_k_m) or nf4 weights "
                         "(--precision, --text-encoder-precision)") + ".")
    if mem is not None:
        est.assumptions.append(mem.sentence())
    if note:
        est.assumptions.insert(0, note)
    return est


def image_speed(*, model: str, gpu: str, engine: str | None = None, precision: str | None = None,
                text_encoder_precision: str | None = None, resolution: Any = None, width: int | None = None,
                height: int | None = None, steps: int | None = None, guidance: float | None = None,
                batch: int | None = None, placement: str | None = None, vae_slicing: bool | None = None,
                **extra: Any) -> ImageSpeedEstimate:
    """Seconds per image and images per hour of a pipeline on a GPU (labelled estimates), with the bound,
    the memory check and every placement.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    if extra.pop("gpus", None) not in (None, 1):
        raise InvalidCombination("one image pipeline runs on one GPU; for more throughput run copies (--gpus in cost)")
    pipe, arch = _pipeline(model)
    match = resolve_gpu(gpu)
    fw = resolve_image_framework(engine)
    req = _request(arch, extra, resolution=resolution, width=width, height=height, steps=steps, guidance=guidance,
                   batch=batch, precision=precision, text_encoder_precision=text_encoder_precision, placement=placement,
                   vae_slicing=vae_slicing)
    est = estimate_image_speed(pipe, arch, match.gpu, fw, req)
    est.assumptions += _ignored(extra)
    if est.memory and est.memory.get("fits") is False:
        fits = [p for p in est.memory["placements"] if match.gpu.memory_gb and p["peak_gb"] <= match.gpu.memory_gb]
        if fits:
            est.assumptions.insert(1, "What fits: " + "; ".join(
                f"{p['placement']} ({p['peak_gb']:.1f} GB, +{p['copy_s_per_call']:.1f} s per call)" for p in fits) + ".")
    if match.note:
        est.assumptions.insert(0, match.note)
    return est


def image_cost(*, model: str, gpu: str, images: int | None = None, images_per_hour: float | None = None,
               serve: bool = False, gpus: int | None = None, provider: str | None = None, region: str | None = None,
               price_usd_per_hour: float | None = None, engine: str | None = None, startup_s: float | None = None,
               interruptions_per_hour: float | None = None, restart_h: float | None = None,
               **shape: Any) -> dict[str, Any]:
    """Time and cost of N images (batch job, on demand and spot) or of an always-on endpoint at a load.

    `gpus` GPUs each run a copy of the pipeline (priced per GPU-hour from the cheapest offer). The
    model load before the first image is `startup_s` (default: weights at 2 GB/s, an assumption).

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    if images is None and images_per_hour is None and not serve:
        raise InvalidCombination("give --images N for a batch job, or --serve (with --images-per-hour) for an endpoint")
    n = gpus or 1
    if not isinstance(n, int) or not 1 <= n <= 1024:
        raise InvalidInput("gpus", gpus, "a whole number from 1 to 1,024")
    sp = image_speed(model=model, gpu=gpu, engine=engine, **shape)
    mem = image_vram(model=model, **{k: v for k, v in shape.items() if k != "gpus"})
    res_od = prices(gpu=gpu, provider=provider, region=region, pricing="on-demand", limit=1)
    res_sp = prices(gpu=gpu, provider=provider, region=region, pricing="spot", limit=1)
    offer = res_od.offers[0] if res_od.offers else None
    spot_offer = res_sp.offers[0] if res_sp.offers else None
    if price_usd_per_hour is not None:
        if not isinstance(price_usd_per_hour, (int, float)) or not math.isfinite(price_usd_per_hour) or not 0 < price_usd_per_hour <= 1e6:
            raise InvalidInput("price_usd_per_hour", price_usd_per_hour, "a price per GPU-hour above 0")
        price, prov = float(price_usd_per_hour), (provider or "").lower() or None
    elif offer is not None:
        price, prov = offer.price_usd_per_hour / offer.gpu_count, offer.provider
    elif spot_offer is None:
        raise InvalidCombination(f"no offer in the catalog matches {gpu}" + (f" at {provider}" if provider else "")
                                 + "; give --price-usd-per-hour")
    else:
        price, prov = None, spot_offer.provider
    facts = load_providers().get(prov or "", {})
    policy = BillingPolicy(provider=prov or "unknown", increment_s=facts.get("billing_increment_s"),
                           minimum_s=facts.get("minimum_charge_s") or 0)
    assumptions = list(sp.assumptions)
    known_billing = policy.increment_s is not None
    if not known_billing:
        policy = policy.model_copy(update={"increment_s": 3600})
        assumptions.append((f"Billing granularity of {policy.provider} is unknown" if prov else "No provider given")
                           + ": started hours are counted (the worst case).")
    out: dict[str, Any] = {"as_of": res_od.as_of or res_sp.as_of, "stale": res_od.stale, "data_note": res_od.data_note,
                           "gpu": gpu, "gpus": n, "model": sp.model, "offer": offer.to_contract() if offer else None,
                           "spot_offer": spot_offer.to_contract() if spot_offer else None,
                           "price_usd_per_gpu_hour": price,
                           "speed": {"seconds_per_image": sp.seconds_per_image, "images_per_hour": sp.images_per_hour,
                                     "seconds_per_batch": sp.seconds_per_batch, "bound": sp.bound, "engine": sp.engine,
                                     "inputs": sp.inputs}, "vram_gb": mem.total_gb}
    start = startup_s if startup_s is not None else 0.5 * sum(mem.weights_gb.values())
    if images is not None:
        spot_price = spot_offer.spot_price_usd_per_hour / spot_offer.gpu_count if spot_offer and spot_offer.spot_price_usd_per_hour else None
        sa = validated(SpotAssumptions, **{k: v for k, v in (("interruptions_per_hour", interruptions_per_hour),
                                                             ("restart_h", restart_h)) if v is not None})
        job = batch_job_cost(validated(BatchJobRequest, images=images, images_per_batch=sp.inputs["batch"],
                                       seconds_per_batch=sp.seconds_per_batch, startup_s=start, gpus=n),
                             price, policy, spot_price, sa)
        out["batch_job"] = job
        unit = {1: "second", 60: "minute", 3600: "hour"}.get(policy.increment_s, f"{policy.increment_s} s")
        assumptions.append(f"{images:,} images on {n} GPU(s) after a {start:.0f} s model load"
                           + ("" if startup_s is not None else " (weights at 2 GB/s, an assumption)")
                           + (f"; {policy.provider} bills per {unit}." if known_billing else "."))
        if job.get("spot"):
            assumptions.append(f"Spot: {sa.interruptions_per_hour:g} interruptions per hour (an assumption); every finished "
                               "image is saved, so an interruption loses the batch in flight and a restart reloads the model.")
    if serve or images_per_hour is not None:
        if price is None:
            raise InvalidCombination(f"no on-demand price for {gpu}: an endpoint needs one (give --price-usd-per-hour)")
        load = images_per_hour if images_per_hour is not None else sp.images_per_hour
        out["endpoint"] = endpoint_cost(validated(EndpointRequest, images_per_hour=load, images_per_batch=sp.inputs["batch"],
                                                  seconds_per_batch=sp.seconds_per_batch), price)
        assumptions.append("Endpoint: billed every hour it is up (730 h a month) whatever the load; "
                           + ("at full load." if images_per_hour is None else f"at {load:,.0f} images/hour."))
    out["assumptions"] = assumptions
    out["estimate"] = True
    return out


def image_recommend(*, model: str, workload: str | None = None, images: int | None = None,
                    deadline_hours: float | None = None, budget_usd: float | None = None,
                    concurrent_users: int | None = None, max_latency_s: float | None = None,
                    images_per_hour: float | None = None, precisions: list[str] | None = None,
                    spot_allowed: bool | None = None, max_gpus: int | None = None, objective: str | None = None,
                    top_n: int | None = None, engine: str | None = None, providers: list[str] | None = None,
                    regions: list[str] | None = None, **shape: Any) -> Any:
    """Cheapest GPU for N images by a deadline (workload batch), or an endpoint for N concurrent users
    (workload endpoint), from the price catalog.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools.image_recommend import ImageRecommendRequest, recommend_image_batch, recommend_image_endpoint

    pipe, arch = _pipeline(model)
    wl = workload or ("endpoint" if concurrent_users or max_latency_s or images_per_hour else "batch")
    wl = {"serve": "endpoint", "finetune": "batch"}.get(wl, wl)
    goal = validated(ImageRecommendRequest, **{k: v for k, v in dict(
        workload=wl, images=images, deadline_hours=deadline_hours, budget_usd=budget_usd,
        concurrent_users=concurrent_users, max_latency_s=max_latency_s, images_per_hour=images_per_hour,
        precisions=tuple(precisions) if precisions else None, spot_allowed=spot_allowed, max_gpus=max_gpus,
        objective=objective, top_n=top_n).items() if v is not None})
    base = _request(arch, {k: v for k, v in shape.items() if k in _LLM_ONLY or k == "method"},
                    **{k: v for k, v in shape.items() if k not in _LLM_ONLY and k != "method"})
    fw = resolve_image_framework(engine)
    offers, data_note, gpu_specs, billing = offers_and_billing(providers, regions)
    run = recommend_image_batch if goal.workload == "batch" else recommend_image_endpoint
    rec = run(pipe, arch, base, goal, offers, gpu_specs or {g.id: g for g in load_gpus()}, fw, billing)
    rec.assumptions.append(data_note if offers else "No offer matched the provider/region filters.")
    return rec
