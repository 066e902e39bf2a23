"""A serving volume: the tokens an endpoint must write a day, against what one copy of the model writes.

A user who states a volume ("2M tokens a day") wants to know whether one GPU keeps up, how long it is
busy, and what the month costs: always on, or only for the hours the volume needs (a scheduled batch job,
or an endpoint that scales to zero).
"""

from __future__ import annotations

__all__ = ["VolumeResult", "serving_volume"]

import math

from pydantic import BaseModel, Field


class VolumeResult(BaseModel):
    tokens_per_day: float
    busy_hours_per_day: float = Field(description="hours one copy needs to write a day's tokens at the load's batch")
    copies_needed: int = Field(description="copies of the model running all day that keep up with the volume")
    days_per_month: float
    tokens_per_month: float
    usd_per_month_busy_hours: float | None = Field(None, description="paying only while busy (scheduled or scaled to zero)")
    usd_per_month_always_on: float | None = Field(None, description="copies needed x price x hours in a month")
    usd_per_million_own_tokens_always_on: float | None = Field(None, description="always-on cost over the tokens written")


def serving_volume(tokens_per_day: float, aggregate_tokens_per_s: float, price_usd_per_hour: float | None,
                   hours_per_month: float) -> VolumeResult:
    """What a daily volume asks of one copy, and what a month of it costs.

    Formula: busy hours a day = tokens a day / (aggregate tokens/s x 3600); copies = ceil(busy hours / 24);
    days a month = hours_per_month / 24; busy-hours cost = busy hours a day x days x price per hour;
    always-on cost = copies x price x hours_per_month; per million own tokens = always-on cost /
    (tokens a day x days) x 1e6. The rate is the throughput at the load's batch (tools.cost serving_economics).
    """
    if not (tokens_per_day > 0 and aggregate_tokens_per_s > 0 and math.isfinite(tokens_per_day)):
        raise ValueError("tokens_per_day and aggregate_tokens_per_s must be positive and finite")
    busy = tokens_per_day / (aggregate_tokens_per_s * 3600.0)
    copies = max(1, math.ceil(busy / 24.0 - 1e-9))
    days = hours_per_month / 24.0
    per_month = tokens_per_day * days
    out = VolumeResult(tokens_per_day=tokens_per_day, busy_hours_per_day=busy, copies_needed=copies,
                       days_per_month=days, tokens_per_month=per_month)
    if price_usd_per_hour is not None:
        always = copies * price_usd_per_hour * hours_per_month
        out = out.model_copy(update={"usd_per_month_busy_hours": busy * days * price_usd_per_hour,
                                     "usd_per_month_always_on": always,
                                     "usd_per_million_own_tokens_always_on": always / per_month * 1e6})
    return out
