"""Deciding a comparison: the winner of two or more sides by the user's criterion.

    decide(CompareRequest) -> Decision

Criteria: `per_dollar` (work per dollar: the rate divided by the hourly price; a side without a price cannot
win it), `speed` (the higher rate), `price` (the lower hourly price among the sides that fit). A side that does
not fit never wins; when only one fits, it wins on that alone. The rate is whatever the sides share (decode
tokens/s, images per hour); the hourly price is the cheapest matching offer's $/GPU-hour times the GPUs used.
"""

from __future__ import annotations

__all__ = ["CompareSide", "CompareRequest", "Decision", "decide"]

import math
from typing import Literal

from pydantic import BaseModel, Field, field_validator

Criterion = Literal["per_dollar", "speed", "price"]


class CompareSide(BaseModel):
    name: str = Field(min_length=1)
    fits: bool | None = Field(None, description="None: not checked")
    rate_per_s: float | None = Field(None, ge=0, description="work per second: decode tokens/s or images/s")
    usd_per_hour: float | None = Field(None, ge=0, description="hourly price of the side as configured, USD")

    @field_validator("rate_per_s", "usd_per_hour")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v


class CompareRequest(BaseModel):
    sides: list[CompareSide] = Field(min_length=2)
    criterion: Criterion = "per_dollar"


class Decision(BaseModel):
    criterion: Criterion = Field(description="the criterion actually decided on (per_dollar falls back to speed "
                                             "when a side has no price)")
    winner: str | None = Field(None, description="None: a tie or nothing to decide on")
    ranked: list[str] = Field(default_factory=list, description="best first, sides that do not fit last")
    only_fit: bool = Field(False, description="the winner is the only side that fits")
    unpriced: list[str] = Field(default_factory=list, description="sides without a price (per_dollar and price)")


def _key(side: CompareSide, criterion: Criterion) -> float | None:
    if criterion == "speed":
        return side.rate_per_s
    if criterion == "price":
        return -side.usd_per_hour if side.usd_per_hour is not None else None
    if side.rate_per_s is None or not side.usd_per_hour:
        return None
    return side.rate_per_s / side.usd_per_hour  # work per dollar (per hour per hour cancels)


def decide(req: CompareRequest) -> Decision:
    """The winner by `criterion` among the sides that fit; per_dollar without every price falls back to speed."""
    fitting = [s for s in req.sides if s.fits is not False]
    criterion = req.criterion
    unpriced = [s.name for s in fitting if s.usd_per_hour is None] if criterion in ("per_dollar", "price") else []
    if criterion == "per_dollar" and unpriced:
        criterion = "speed"
    if len(fitting) == 1:
        rest = [s.name for s in req.sides if s is not fitting[0]]
        return Decision(criterion=criterion, winner=fitting[0].name, ranked=[fitting[0].name] + rest, only_fit=True,
                        unpriced=unpriced)
    scored = [(s, _key(s, criterion)) for s in fitting]
    if not fitting or any(k is None for _, k in scored):
        return Decision(criterion=criterion, ranked=[s.name for s in req.sides], unpriced=unpriced)
    scored.sort(key=lambda x: -x[1])
    best, second = scored[0][1], scored[1][1]
    winner = scored[0][0].name if best > second * 1.02 else None  # within 2 %: a tie at this precision
    ranked = [s.name for s, _ in scored] + [s.name for s in req.sides if s.fits is False]
    return Decision(criterion=criterion, winner=winner, ranked=ranked, unpriced=unpriced)
