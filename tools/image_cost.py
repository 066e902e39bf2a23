"""What image generation costs: a batch job of N images, on demand or on spot, and an always-on endpoint.

Batch job: the model loads once (weights / load rate), then ceil(N / batch) calls of
`seconds_per_batch` each. Billing rounds the runtime to the provider's increment (tools.cost).
Spot: every finished image is saved, so an interruption loses at most the batch in flight; a restart
reloads the model (tools.cost.spot_expectation with the batch as the checkpoint interval).
Endpoint: replicas = ceil(load / capacity of one GPU); $ per 1,000 images = replicas x price per hour
/ images per hour x 1,000; an always-on endpoint is billed every hour of the month.
"""

from __future__ import annotations

__all__ = ["BatchJobRequest", "EndpointRequest", "batch_job_cost", "endpoint_cost"]

import math
from typing import Any

from pydantic import BaseModel, Field

from tools.cost import HOURS_PER_MONTH, BillingPolicy, SpotAssumptions, billed_hours, billing_comparison, spot_expectation
from tools.errors import InvalidCombination


class BatchJobRequest(BaseModel):
    """N images on one GPU type: the speed of one call and how long the model takes to load."""

    images: int = Field(ge=1, le=10**10, description="images to generate, 1 to 10,000,000,000")
    images_per_batch: int = Field(1, ge=1, le=1024, description="images per call")
    seconds_per_batch: float = Field(gt=0, le=1e7, allow_inf_nan=False, description="seconds of one call")
    startup_s: float = Field(0.0, ge=0, le=1e6, allow_inf_nan=False, description="model load before the first image")
    gpus: int = Field(1, ge=1, le=1024, description="GPUs working in parallel, each with its own copy of the model")


class EndpointRequest(BaseModel):
    """An always-on endpoint: the load it must carry and the speed of one replica."""

    images_per_hour: float = Field(gt=0, le=1e9, allow_inf_nan=False, description="requested images per hour")
    images_per_batch: int = Field(1, ge=1, le=1024, description="images generated together by one replica")
    seconds_per_batch: float = Field(gt=0, le=1e7, allow_inf_nan=False, description="seconds of one call")


def batch_job_cost(req: BatchJobRequest, price_usd_per_hour: float | None, policy: BillingPolicy,
                   spot_usd_per_hour: float | None = None, spot: SpotAssumptions | None = None) -> dict[str, Any]:
    """Wall time and cost of a batch job.

    runtime_h = (startup_s + ceil(N / batch / gpus) x seconds_per_batch) / 3600 per GPU;
    on-demand = billed hours (rounded to the provider's increment) x price x gpus;
    spot = expected wall hours (checkpoint = one batch, restart = reload) x spot price x gpus.
    Prices are per GPU-hour. None = unknown, never zero.
    """
    calls = math.ceil(req.images / req.images_per_batch / req.gpus)
    work_s = calls * req.seconds_per_batch
    runtime_h = (req.startup_s + work_s) / 3600.0
    out: dict[str, Any] = {"calls_per_gpu": calls, "runtime_hours": runtime_h, "gpus": req.gpus,
                           "gpu_hours": runtime_h * req.gpus, "images": req.images}
    if price_usd_per_hour is not None:
        bh = billed_hours(runtime_h, policy)
        out["billed_hours"] = bh
        out["on_demand_cost_usd"] = None if bh is None else bh * price_usd_per_hour * req.gpus
        out["billing"] = {k: v * req.gpus for k, v in billing_comparison(runtime_h, price_usd_per_hour).items()}
        if out["on_demand_cost_usd"] is not None:
            out["usd_per_1000_images"] = out["on_demand_cost_usd"] / req.images * 1000.0
    if spot_usd_per_hour is not None:
        a = (spot or SpotAssumptions()).model_copy(update={
            "checkpoint_every_h": max(req.seconds_per_batch / 3600.0, 1e-6), "checkpoint_write_h": 0.0,
            "restart_h": (spot or SpotAssumptions()).restart_h + req.startup_s / 3600.0})
        exp = spot_expectation(runtime_h, spot_usd_per_hour, a)
        out["spot"] = exp | {"cost_usd": None if exp["cost_usd"] is None else exp["cost_usd"] * req.gpus,
                             "assumptions": a.model_dump()}
        if exp["cost_usd"] is not None:
            out["spot"]["usd_per_1000_images"] = exp["cost_usd"] * req.gpus / req.images * 1000.0
    return out


def endpoint_cost(req: EndpointRequest, price_usd_per_hour: float) -> dict[str, Any]:
    """Replicas, utilisation, $ per 1,000 images and $ a month of an always-on endpoint.

    capacity = 3600 x images_per_batch / seconds_per_batch images per hour per replica;
    replicas = ceil(load / capacity); $/1,000 images = replicas x price / load x 1,000;
    monthly = replicas x price x 730 h.

    Raises:
        InvalidCombination: a non-positive price.
    """
    if not price_usd_per_hour > 0:
        raise InvalidCombination("an endpoint's cost needs a positive price per hour")
    capacity = 3600.0 * req.images_per_batch / req.seconds_per_batch
    replicas = max(1, math.ceil(req.images_per_hour / capacity - 1e-9))
    return {"capacity_images_per_hour_per_replica": capacity, "replicas": replicas,
            "utilisation": req.images_per_hour / (replicas * capacity),
            "usd_per_1000_images": replicas * price_usd_per_hour / req.images_per_hour * 1000.0,
            "usd_per_1000_images_at_full_load": price_usd_per_hour / capacity * 1000.0,
            "monthly_usd": replicas * price_usd_per_hour * HOURS_PER_MONTH}
