"""The recommender for image workloads: the cheapest GPU for N images by a deadline, and an endpoint
for N concurrent users.

For each GPU type in the offers: the first placement that fits with 5 % headroom (all on GPU, text
encoders dropped, model offload, sequential offload) and the first allowed precision that fits, then
seconds per call (tools.image_speed), then the job's time and cost (tools.image_cost). A batch job
scales out over instances until the deadline is met (images are independent); an endpoint adds
replicas until each user's image comes back within the latency asked.
"""

from __future__ import annotations

__all__ = ["ImageRecommendRequest", "recommend_image_batch", "recommend_image_endpoint"]

import math
from typing import Any, Literal, Sequence

from pydantic import BaseModel, Field

from tools.cost import BillingPolicy, SpotAssumptions
from tools.jobs import JobRequest, job_totals
from tools.diffusion import PLACEMENTS, DiffusionArch, ImageRequest, estimate_image_memory
from tools.errors import AdvisorError
from tools.image_cost import BatchJobRequest, batch_job_cost, endpoint_cost
from tools.image_speed import ImageFramework, estimate_image_speed
from tools.recommend import HEADROOM, Recommendation, cheapest_offer, offer_summary
from tools.schemas import DiffusionComponent, GpuMemory, GpuOffer, GpuSpec

_MAX_INSTANCES = 64


class ImageRecommendRequest(BaseModel):
    """An image goal: a batch job of `images` by `deadline_hours`, or an endpoint for `concurrent_users`."""

    workload: Literal["batch", "endpoint"] = "batch"
    images: int | None = Field(None, ge=1, le=10**10, description="images in the batch job")
    deadline_hours: float | None = Field(None, gt=0, le=1e5, allow_inf_nan=False)
    budget_usd: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False)
    concurrent_users: int = Field(1, ge=1, le=100_000, description="requests in flight at once (endpoint)")
    max_latency_s: float | None = Field(None, gt=0, le=3600, allow_inf_nan=False,
                                        description="endpoint: seconds a user may wait for an image")
    images_per_hour: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False, description="endpoint load")
    precisions: tuple[str | None, ...] = Field((None,), description="denoiser precisions to try, in order")
    placements: tuple[str, ...] = Field(PLACEMENTS, description="placements to try, in order")
    spot_allowed: bool = False
    max_gpus: int = Field(8, ge=1, le=64)
    objective: Literal["cheapest", "fastest"] = "cheapest"
    top_n: int = Field(5, ge=1, le=50)
    startup_s_per_gb: float = Field(0.5, ge=0, le=100, allow_inf_nan=False,
                                    description="model load seconds per GB of weights (0.5 = 2 GB/s, an assumption)")


def _fitting(components: Sequence[DiffusionComponent], arch: DiffusionArch, g: GpuSpec, mem_gb: float,
             base: ImageRequest, req: ImageRecommendRequest) -> tuple[ImageRequest, Any] | None:
    for prec in req.precisions:
        for placement in req.placements:
            r = base.model_copy(update={"precision": prec, "placement": placement})
            est = estimate_image_memory(components, arch, r, GpuMemory(name=g.name, memory_gb=mem_gb))
            if est.total_gb <= mem_gb * (1 - HEADROOM):
                return r, est
    return None


def _groups(offers: list[GpuOffer], gpus: dict[str, GpuSpec], max_gpus: int) -> dict[tuple[str, int], list[GpuOffer]]:
    out: dict[tuple[str, int], list[GpuOffer]] = {}
    for o in offers:
        if o.gpu_id and o.gpu_id in gpus and 1 <= o.gpu_count <= max_gpus:
            out.setdefault((o.gpu_id, o.gpu_count), []).append(o)
    return out


def recommend_image_batch(components: Sequence[DiffusionComponent], arch: DiffusionArch, base: ImageRequest,
                          req: ImageRecommendRequest, offers: list[GpuOffer], gpus: dict[str, GpuSpec],
                          fw: ImageFramework, billing: dict[str, BillingPolicy]) -> Recommendation:
    """Cheapest (or fastest) GPU instances for `req.images` images, scaled out to meet the deadline.

    Returns:
        Recommendation: options with seconds per image, hours, instances and cost; what was ruled out.
    """
    if req.images is None:
        return Recommendation(status="needs_input", missing=["images"],
                              assumptions=["A batch-job recommendation needs the number of images."])
    options, ruled = [], {}
    for (gid, n), group in sorted(_groups(offers, gpus, req.max_gpus).items()):
        g = gpus[gid]
        try:
            opt = _batch_option(components, arch, base, req, g, n, group, fw, billing)
        except AdvisorError as exc:
            opt = {"ruled_out": f"{n} x {g.name}: {exc}"}
        if "ruled_out" in opt:
            ruled.setdefault(gid, {"gpu": g.name, "gpu_id": gid, "gpu_count": n, "reason": opt["ruled_out"]})
            continue
        ruled.pop(gid, None)
        options.append(opt)
    return _ranked(options, ruled, req, arch)


def _batch_option(components, arch, base, req, g, n, group, fw, billing) -> dict[str, Any]:
    mem_gb = g.memory_gb or next((o.gpu_memory_gb for o in group if o.gpu_memory_gb), None)
    od = cheapest_offer(group, "price_usd_per_hour")
    sp = cheapest_offer(group, "spot_price_usd_per_hour") if req.spot_allowed else None
    if not mem_gb or (od is None and sp is None):
        return {"ruled_out": f"{n} x {g.name}: memory or price unknown"}
    fit = _fitting(components, arch, g, mem_gb, base, req)
    if fit is None:
        return {"ruled_out": f"{n} x {g.name}: does not fit in {mem_gb:.1f} GB even with sequential CPU offload"}
    r, mem = fit
    spd = estimate_image_speed(components, arch, g, fw, r)
    startup = sum(mem.weights_gb.values()) * req.startup_s_per_gb
    instances = 1
    if req.deadline_hours:
        room = req.deadline_hours - startup / 3600
        instances = job_totals(JobRequest(
            units=math.ceil(req.images / r.batch), unit="calls", seconds_per_unit=spd.seconds_per_batch,
            deadline_hours=req.deadline_hours, gpus_per_instance=n, overhead_hours=startup / 3600)).instances \
            if room > 0 else _MAX_INSTANCES + 1
        if instances > _MAX_INSTANCES:
            return {"ruled_out": f"{n} x {g.name}: would need more than {_MAX_INSTANCES} instances to finish "
                                 f"{req.images:,} images in {req.deadline_hours:g} h"}
    offer = od or sp
    policy = billing.get(offer.provider, BillingPolicy(provider=offer.provider))
    unknown_billing = policy.increment_s is None
    if unknown_billing:  # unknown granularity: started hours, the worst case
        policy = policy.model_copy(update={"increment_s": 3600})
    job = batch_job_cost(BatchJobRequest(images=req.images, images_per_batch=r.batch, seconds_per_batch=spd.seconds_per_batch,
                                         startup_s=startup, gpus=n * instances),
                         od.price_usd_per_hour / n if od else None, policy,
                         sp.spot_price_usd_per_hour / n if sp else None, SpotAssumptions() if sp else None)
    costs = [c for c in (job.get("on_demand_cost_usd"), (job.get("spot") or {}).get("cost_usd")) if c is not None]
    if not costs:
        return {"ruled_out": f"{n} x {g.name}: no usable price"}
    best = min(costs)
    if req.budget_usd and best > req.budget_usd:
        return {"ruled_out": f"{n} x {g.name}: about ${best:,.0f}, over the ${req.budget_usd:,.0f} budget"}
    reasons = [f"Fits: {mem.total_gb:.1f} GB of {mem_gb:.1f} GB with {r.placement}"
               + (f" at {r.precision}" if r.precision else "") + f" ({r.width}x{r.height}, batch {r.batch}).",
               f"{spd.seconds_per_image:.2f} s per image ({spd.images_per_hour:,.0f} images/hour per GPU, {spd.bound}-bound, "
               f"{spd.engine}, estimate).",
               f"{req.images:,} images on {instances} x {n} GPU(s): about {job['runtime_hours']:.2f} h"
               + (f" (within the {req.deadline_hours:g} h deadline)" if req.deadline_hours else "") + "."]
    if job.get("on_demand_cost_usd") is not None:
        how = (f"{offer.provider}'s billing unit is unknown, so started hours are counted" if unknown_billing
               else f"{offer.provider} bills per {_unit(policy.increment_s)}")
        reasons.append(f"${job['on_demand_cost_usd']:,.2f} on demand (${job['usd_per_1000_images']:.3f} per 1,000 images; "
                       f"{how}).")
    if job.get("spot") and job["spot"].get("cost_usd") is not None:
        reasons.append(f"About ${job['spot']['cost_usd']:,.2f} on spot: each saved image is a checkpoint, so an "
                       "interruption costs a reload, not the job.")
    return {"kind": "image-batch", "gpu": g.name, "gpu_id": g.id, "gpu_count": n, "instances": instances,
            "placement": r.placement, "precision": r.precision, "vram_gb": mem.total_gb, "vram_per_gpu_gb": mem.total_gb,
            "gpu_memory_gb": mem_gb, "price_usd_per_hour": od.price_usd_per_hour if od else None,
            "job_cost_usd": job.get("on_demand_cost_usd"), "spot_job_cost_usd": (job.get("spot") or {}).get("cost_usd"),
            "seconds_per_image": spd.seconds_per_image, "images_per_hour_per_gpu": spd.images_per_hour,
            "hours": job["runtime_hours"], "job": job, "offer": offer_summary(offer), "reasons": reasons, "citations": [],
            "rank_cost": best, "rank_speed": -job["runtime_hours"]}


def recommend_image_endpoint(components: Sequence[DiffusionComponent], arch: DiffusionArch, base: ImageRequest,
                             req: ImageRecommendRequest, offers: list[GpuOffer], gpus: dict[str, GpuSpec],
                             fw: ImageFramework, billing: dict[str, BillingPolicy]) -> Recommendation:
    """Always-on endpoints for `concurrent_users` requests at once: replicas, latency, $ a month, $ per 1,000 images."""
    options, ruled = [], {}
    for (gid, n), group in sorted(_groups(offers, gpus, 1).items()):
        g = gpus[gid]
        od = cheapest_offer(group, "price_usd_per_hour")
        mem_gb = g.memory_gb or next((o.gpu_memory_gb for o in group if o.gpu_memory_gb), None)
        if od is None or not mem_gb:
            continue
        try:
            opt = _endpoint_option(components, arch, base, req, g, mem_gb, od, fw)
        except AdvisorError as exc:
            opt = {"ruled_out": f"{g.name}: {exc}"}
        if "ruled_out" in opt:
            ruled.setdefault(gid, {"gpu": g.name, "gpu_id": gid, "gpu_count": n, "reason": opt["ruled_out"]})
            continue
        options.append(opt)
    return _ranked(options, ruled, req, arch)


def _endpoint_option(components, arch, base, req, g, mem_gb, od, fw) -> dict[str, Any]:
    u = req.concurrent_users
    for replicas in range(1, min(u, _MAX_INSTANCES) + 1):
        batch = math.ceil(u / replicas)
        fit = _fitting(components, arch, g, mem_gb, base.model_copy(update={"batch": batch}),
                       req.model_copy(update={"placements": ("all-on-gpu", "text-encoders-dropped")}))
        if fit is None:
            continue
        r, mem = fit
        spd = estimate_image_speed(components, arch, g, fw, r)
        if req.max_latency_s and spd.seconds_per_batch > req.max_latency_s:
            continue
        load = req.images_per_hour or replicas * spd.images_per_hour
        ec = endpoint_cost(_endpoint_req(load, r.batch, spd.seconds_per_batch), od.price_usd_per_hour)
        replicas = max(replicas, ec["replicas"])
        monthly = replicas * od.price_usd_per_hour * 730.0
        reasons = [f"{replicas} replica(s), each batching {batch} request(s): an image comes back in about "
                   f"{spd.seconds_per_batch:.1f} s (estimate, {spd.engine}).",
                   f"Fits: {mem.total_gb:.1f} GB of {mem_gb:.1f} GB ({r.placement}).",
                   f"${monthly:,.0f} a month always on; ${ec['usd_per_1000_images']:.3f} per 1,000 images at "
                   f"{load:,.0f} images/hour (${od.price_usd_per_hour:.2f}/h, {od.provider}).",
                   "Spot is not advisable for a user-facing endpoint: an interruption takes it down."]
        return {"kind": "image-endpoint", "gpu": g.name, "gpu_id": g.id, "gpu_count": 1, "replicas": replicas,
                "batch_per_replica": batch, "placement": r.placement, "latency_s": spd.seconds_per_batch,
                "seconds_per_image": spd.seconds_per_image, "images_per_hour_per_replica": spd.images_per_hour,
                "vram_gb": mem.total_gb, "vram_per_gpu_gb": mem.total_gb, "price_usd_per_hour": od.price_usd_per_hour,
                "gpu_memory_gb": mem_gb, "monthly_usd": monthly, "usd_per_1000_images": ec["usd_per_1000_images"],
                "offer": offer_summary(od), "reasons": reasons, "citations": [], "rank_cost": monthly,
                "rank_speed": -spd.seconds_per_batch}
    why = f"within {req.max_latency_s:g} s" if req.max_latency_s else "in memory"
    return {"ruled_out": f"{g.name}: {u} concurrent request(s) cannot be served {why} with up to {_MAX_INSTANCES} replicas"}


def _unit(increment_s: int | None) -> str:
    return {1: "second", 60: "minute", 3600: "hour"}.get(increment_s or 0, f"{increment_s} s")


def _endpoint_req(load: float, batch: int, seconds: float) -> Any:
    from tools.image_cost import EndpointRequest

    return EndpointRequest(images_per_hour=load, images_per_batch=batch, seconds_per_batch=seconds)


def _ranked(options: list[dict], ruled: dict, req: ImageRecommendRequest, arch: DiffusionArch) -> Recommendation:
    key = (lambda o: (o["rank_cost"], -o["rank_speed"])) if req.objective == "cheapest" else \
        (lambda o: (-o["rank_speed"], o["rank_cost"]))
    options.sort(key=lambda o: (*key(o), o["gpu_count"], o["offer"]["provider"]))
    top = options[: req.top_n]
    for i, o in enumerate(top, 1):
        o["rank"] = i
    suggestions = [] if top else [
        "Allow FP8 or GGUF/NF4 weights, or a smaller resolution or batch; sequential offload fits almost any "
        "card but copies the denoiser every step.",
        "Raise the deadline, the budget or the instance limit; allow spot for batch jobs."]
    return Recommendation(
        status="ok" if top else "nothing_fits", options=top, ruled_out=sorted(ruled.values(), key=lambda r: r["gpu"]),
        suggestions=suggestions,
        chart={"options": [f"{o['gpu_count']}x {o['gpu']} ({o['offer']['provider']})" for o in top],
               "cost": [o["rank_cost"] for o in top]},
        assumptions=[f"Fits means the peak estimate leaves at least {HEADROOM:.0%} of the GPU's memory free.",
                     "Speeds, times and costs are estimates; prices are the catalog's cheapest matching offer.",
                     f"Pipeline {arch.model_id}: FLOPs from its architecture; framework efficiency fitted on published runs."])
