"""Job totals that add up: a batch job of N units (images, tokens, examples) at a measured or estimated
rate per GPU becomes GPU-hours, the GPUs a deadline needs, the wall time on them and the cost.

One computation shared by cost, recommend and solve (image batch jobs, fine-tuning, token batches):

    GPU-hours       = N x seconds per unit / 3600           (or N / units per second / 3600)
    GPUs (deadline) = ceil(GPU-hours / (deadline - overhead hours)), rounded up to whole instances
    wall hours      = overhead + GPU-hours / GPUs
    cost            = GPUs x wall hours x price per GPU-hour  (None when the price is unknown)

Work split evenly over GPUs (independent units: images, prompts, shards of data-parallel training).
"""

from __future__ import annotations

__all__ = ["JobRequest", "JobTotals", "job_totals"]

import math

from pydantic import BaseModel, Field, model_validator

from tools.errors import InvalidCombination


class JobRequest(BaseModel):
    """N units at a rate per GPU; optional deadline, per-instance GPU count, start-up and price."""

    model_config = {"extra": "forbid"}

    units: float = Field(gt=0, le=1e15, allow_inf_nan=False, description="images, tokens or examples to process")
    unit: str = Field("units", max_length=30, description="what a unit is: images, tokens, examples")
    seconds_per_unit: float | None = Field(None, gt=0, le=1e7, allow_inf_nan=False, description="per GPU")
    units_per_s: float | None = Field(None, gt=0, le=1e12, allow_inf_nan=False, description="per GPU")
    deadline_hours: float | None = Field(None, gt=0, le=1e6, allow_inf_nan=False)
    gpus: int | None = Field(None, ge=1, le=100_000, description="GPUs given (else the fewest for the deadline, or 1)")
    gpus_per_instance: int = Field(1, ge=1, le=64, description="GPUs are rented in instances of this many")
    overhead_hours: float = Field(0.0, ge=0, le=1e4, allow_inf_nan=False, description="start-up before the work")
    price_usd_per_gpu_hour: float | None = Field(None, ge=0, le=1e5, allow_inf_nan=False)

    @model_validator(mode="after")
    def _one_rate(self) -> "JobRequest":
        if (self.seconds_per_unit is None) == (self.units_per_s is None):
            raise InvalidCombination("give the rate once: seconds per unit or units per second (per GPU)")
        return self


class JobTotals(BaseModel):
    units: float
    unit: str
    seconds_per_unit: float
    gpu_hours: float
    gpus: int
    instances: int
    wall_hours: float
    meets_deadline: bool | None
    cost_usd: float | None
    formula: str


def job_totals(req: JobRequest) -> JobTotals:
    """GPU-hours, the GPUs for the deadline (or as given), the wall time and the cost (module formulas).

    Raises:
        InvalidCombination: the start-up alone is past the deadline.
    """
    spu = req.seconds_per_unit if req.seconds_per_unit is not None else 1.0 / (req.units_per_s or 1.0)
    gpu_h = req.units * spu / 3600.0
    per = req.gpus_per_instance
    if req.gpus is not None:
        gpus = req.gpus
    elif req.deadline_hours is not None:
        room = req.deadline_hours - req.overhead_hours
        if room <= 0:
            raise InvalidCombination(f"the start-up ({req.overhead_hours:g} h) is past the {req.deadline_hours:g} h deadline")
        gpus = max(1, math.ceil(gpu_h / room - 1e-9))
    else:
        gpus = per
    instances = math.ceil(gpus / per)
    gpus = instances * per
    wall = req.overhead_hours + gpu_h / gpus
    cost = None if req.price_usd_per_gpu_hour is None else gpus * wall * req.price_usd_per_gpu_hour
    meets = None if req.deadline_hours is None else wall <= req.deadline_hours + 1e-9
    formula = (f"{req.units:,.0f} {req.unit} x {spu:g} s / 3600 = {gpu_h:,.1f} GPU-hours; "
               + (f"over {req.deadline_hours:g} h: ceil({gpu_h:,.1f} / {req.deadline_hours - req.overhead_hours:g}) "
                  f"= {gpus} GPUs" if req.deadline_hours is not None and req.gpus is None else f"on {gpus} GPU(s)")
               + f", {wall:,.2f} h wall")
    return JobTotals(units=req.units, unit=req.unit, seconds_per_unit=spu, gpu_hours=gpu_h, gpus=gpus,
                     instances=instances, wall_hours=wall, meets_deadline=meets, cost_usd=cost, formula=formula)
