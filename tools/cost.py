"""What a job really costs: billing granularity, spot with interruptions, storage, egress, serving.

All functions are pure; prices come from the offer catalog, rates from knowledge/providers.csv.
An unknown rate stays unknown (None) and the result says so, never zero.
"""

from __future__ import annotations

__all__ = ["BillingPolicy", "SpotAssumptions", "billed_hours", "billing_comparison", "spot_expectation",
           "serving_cost", "usage_cost", "HOURS_PER_MONTH"]

import math

from pydantic import BaseModel, Field

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12, the convention cloud price pages use


class BillingPolicy(BaseModel):
    """How a provider rounds usage. increment_s None = not known from the sources read."""

    provider: str
    increment_s: int | None = Field(None, ge=1)
    minimum_s: int = Field(0, ge=0)
    source: str = ""


class SpotAssumptions(BaseModel):
    """Stated assumptions for spot (interruptible) runs; every one can be overridden."""

    interruptions_per_hour: float = Field(0.05, ge=0, le=10, allow_inf_nan=False,
                                          description="expected interruptions per hour of running, 0 to 10")
    checkpoint_every_h: float = Field(0.5, gt=0, le=1000, allow_inf_nan=False,
                                      description="hours between checkpoints, above 0")
    restart_h: float = Field(10 / 60, ge=0, le=100, allow_inf_nan=False,
                             description="hours to get a new instance and resume, 0 to 100")
    checkpoint_write_h: float = Field(1 / 60, ge=0, le=100, allow_inf_nan=False,
                                      description="hours spent writing one checkpoint, 0 to 100")


def billed_hours(runtime_h: float, policy: BillingPolicy) -> float | None:
    """Hours charged: runtime rounded up to the billing increment, at least the minimum charge.

    Formula: ceil(max(runtime_s, minimum_s) / increment_s) * increment_s / 3600. None when the
    provider's increment is unknown.
    """
    if policy.increment_s is None:
        return None
    secs = max(runtime_h * 3600.0, float(policy.minimum_s))
    # tolerate float noise (20 min = 1200.0000001 s must not bill a second minute)
    units = math.ceil(secs / policy.increment_s - 1e-9)
    return units * policy.increment_s / 3600.0


def billing_comparison(runtime_h: float, price_usd_per_hour: float) -> dict[str, float]:
    """The same run billed per second, per minute and per hour (no minimum charge)."""
    out = {}
    for name, inc in (("per_second", 1), ("per_minute", 60), ("per_hour", 3600)):
        hours = billed_hours(runtime_h, BillingPolicy(provider="-", increment_s=inc))
        out[f"{name}_usd"] = hours * price_usd_per_hour
    return out


def spot_expectation(work_h: float, spot_usd_per_hour: float, a: SpotAssumptions) -> dict[str, float | str | None]:
    """Expected wall time and cost of `work_h` hours of work on interruptible capacity.

    Renewal model: each interruption (Poisson, rate r per running hour) loses on average half a
    checkpoint interval of work plus the restart time; checkpoints add write_h per interval.
        wall = work * (1 + write_h / interval) / (1 - r * (interval / 2 + restart_h))
        expected interruptions = r * wall;  cost = wall * spot price
    Returns an explanation instead of numbers when interruptions arrive faster than progress.
    """
    loss = a.checkpoint_every_h / 2 + a.restart_h
    denom = 1.0 - a.interruptions_per_hour * loss
    if denom <= 0.05:
        return {"wall_hours": None, "cost_usd": None, "expected_interruptions": None,
                "note": (f"At {a.interruptions_per_hour:g} interruptions per hour, each losing about {loss:.2f} h, "
                         "the job would barely progress: checkpoint more often or use on-demand.")}
    wall = work_h * (1 + a.checkpoint_write_h / a.checkpoint_every_h) / denom
    return {"wall_hours": wall, "cost_usd": wall * spot_usd_per_hour,
            "expected_interruptions": a.interruptions_per_hour * wall, "note": ""}


def serving_cost(price_usd_per_hour: float, aggregate_tokens_per_s: float, utilisation: float = 1.0
                 ) -> dict[str, float | None]:
    """Cost of generated tokens and of an always-on endpoint.

    usd_per_million_tokens = price per hour / (tokens/s x 3600 x utilisation) x 1e6;
    monthly = price per hour x 730 h (always on, whatever the load).
    """
    tokens_per_hour = aggregate_tokens_per_s * 3600.0 * utilisation
    return {"usd_per_million_tokens": price_usd_per_hour / tokens_per_hour * 1e6 if tokens_per_hour > 0 else None,
            "monthly_usd": price_usd_per_hour * HOURS_PER_MONTH, "tokens_per_hour": tokens_per_hour}


def usage_cost(quantity: float, rate: float | None) -> float | None:
    """quantity x rate, or None when the rate is unknown (never a silent zero)."""
    return None if rate is None else quantity * rate
