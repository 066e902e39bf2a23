"""Serving load from traffic: users online, request rates and think time become concurrent generations.

Little's law (J. D. C. Little, "A proof for the queuing formula L = lambda W", Operations Research 9(3),
1961): the mean number of requests in a system L equals the arrival rate lambda times the mean time
each spends in it W. For an LLM endpoint L is the number of sequences decoded at once (the batch),
lambda the requests per second at the peak, and W the request latency at that batch (time to first
token + output tokens / per-user decode rate, tools.throughput.estimate_speed). W depends on the batch,
so the batch is iterated to its fixed point: b = ceil(lambda x W(b)).

Pure functions over pydantic models; the speed comes in as a callable (batch -> (latency s, tokens/s per user)).
"""

from __future__ import annotations

__all__ = ["TrafficRequest", "ServingLoad", "arrival_rate", "serving_load", "DEFAULT_THINK_TIME_S", "TRAFFIC_FIELDS"]

import math
from typing import Callable, Literal

from pydantic import BaseModel, Field, model_validator

from tools.errors import InvalidCombination

# A chat user reads the reply and types the next message: one request a minute while online, the
# assumption stated whenever users online are given without a rate or a think time.
DEFAULT_THINK_TIME_S = 60.0
_MAX_ITERATIONS = 30


class TrafficRequest(BaseModel):
    """What the user said about the traffic. One rate (per minute, hour or day) or users online
    (with think time, default DEFAULT_THINK_TIME_S); peak_factor scales the average rate to the peak."""

    model_config = {"extra": "forbid"}

    users_online: int | None = Field(None, ge=1, le=10_000_000, description="people using it at once")
    requests_per_minute: float | None = Field(None, gt=0, le=1e7, allow_inf_nan=False)
    requests_per_hour: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False)
    requests_per_day: float | None = Field(None, gt=0, le=1e10, allow_inf_nan=False)
    think_time_s: float | None = Field(None, ge=0, le=86_400, allow_inf_nan=False,
                                       description="seconds a user waits between a reply and the next request")
    peak_factor: float = Field(1.0, ge=1, le=100, allow_inf_nan=False,
                               description="peak rate / average rate (1 = steady traffic)")

    @model_validator(mode="after")
    def _one_rate(self) -> "TrafficRequest":
        rates = [n for n in ("requests_per_minute", "requests_per_hour", "requests_per_day") if getattr(self, n)]
        if len(rates) > 1:
            raise InvalidCombination("give one request rate (per minute, per hour or per day), not " + " and ".join(rates))
        if not rates and self.users_online is None:
            raise InvalidCombination("traffic needs a request rate (per minute, hour or day) or the users online")
        return self


class ServingLoad(BaseModel):
    """The concurrency the traffic makes, and what it rests on."""

    basis: Literal["request_rate", "users_think_time"]
    average_requests_per_s: float
    peak_requests_per_s: float
    average_requests_per_minute: float = Field(0.0, description="average_requests_per_s x 60")
    peak_requests_per_minute: float = Field(0.0, description="peak_requests_per_s x 60")
    peak_factor: float = Field(1.0, description="peak / average rate, as given or assumed")
    seconds_per_request: float = Field(description="latency W at the concurrency: TTFT + output / decode rate")
    tokens_per_s_per_user: float
    concurrency: float = Field(description="Little's law L = peak lambda x W (mean sequences in flight)")
    concurrent_generations: int = Field(description="ceil(L), at least 1, at most the users online")
    iterations: int
    assumption: str


def arrival_rate(t: TrafficRequest, seconds_per_request: float) -> tuple[float, str]:
    """Average requests per second and the basis.

    A rate given: per minute / 60, per hour / 3600, per day / 86,400. Users online only: each user
    cycles think time + the request's own latency, so lambda = users / (think + W) (a closed system;
    Little's law applied to the users). The peak factor is applied by the caller.
    """
    if t.requests_per_minute:
        return t.requests_per_minute / 60.0, "request_rate"
    if t.requests_per_hour:
        return t.requests_per_hour / 3600.0, "request_rate"
    if t.requests_per_day:
        return t.requests_per_day / 86_400.0, "request_rate"
    think = DEFAULT_THINK_TIME_S if t.think_time_s is None else t.think_time_s
    return (t.users_online or 1) / (think + seconds_per_request), "users_think_time"


def serving_load(t: TrafficRequest, speed_at: Callable[[int], tuple[float, float]], output_tokens: int) -> ServingLoad:
    """Concurrent generations from traffic by Little's law, iterated with the speed at each batch.

    Args:
        t: the traffic.
        speed_at: batch -> (seconds per request, decode tokens/s per user) at that batch (estimate_speed).
        output_tokens: tokens generated per request (named in the assumption).

    Formula: W(b) from speed_at(b); lambda_avg from arrival_rate; lambda_peak = lambda_avg x peak_factor;
    b_next = max(1, ceil(lambda_peak x W(b))), capped at the users online; from b = 1 until b repeats
    (an oscillation takes the larger batch: sized for the peak). Units: requests/s, s, sequences.
    """
    b, seen, it = 1, set(), 0
    while True:
        it += 1
        w, per_user = speed_at(b)
        avg, basis = arrival_rate(t, w)
        peak = avg * t.peak_factor
        conc = peak * w
        nxt = max(1, math.ceil(conc - 1e-9))
        if t.users_online:
            nxt = min(nxt, t.users_online)
        if nxt == b or it >= _MAX_ITERATIONS or nxt in seen:
            b = max(b, nxt)
            break
        seen.add(b)
        b = nxt
    w, per_user = speed_at(b)
    avg, basis = arrival_rate(t, w)
    peak = avg * t.peak_factor
    return ServingLoad(basis=basis, average_requests_per_s=avg, peak_requests_per_s=peak,
                       average_requests_per_minute=avg * 60, peak_requests_per_minute=peak * 60,
                       peak_factor=t.peak_factor, seconds_per_request=w,
                       tokens_per_s_per_user=per_user, concurrency=peak * w, concurrent_generations=b,
                       iterations=it, assumption=_assumption(t, basis, avg, peak, w, b, output_tokens))


def _n(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _assumption(t: TrafficRequest, basis: str, avg: float, peak: float, w: float, b: int, out: int) -> str:
    if basis == "request_rate":
        src = f"{_n(avg * 60)} requests a minute"
    else:
        think = DEFAULT_THINK_TIME_S if t.think_time_s is None else t.think_time_s
        src = (f"{t.users_online:,} users online, each sending a request {think:g} s after the last reply"
               + (" (assumed)" if t.think_time_s is None else "") + f": {_n(avg * 60)} requests a minute")
    peak_txt = f", x {t.peak_factor:g} at the peak = {_n(peak * 60)} a minute" if t.peak_factor > 1 else ""
    return (f"Load: {src}{peak_txt}; each takes {w:.1f} s ({out:,} output tokens) at {b} at once, so by "
            f"Little's law {peak:.3g}/s x {w:.1f} s = {peak * w:.2f} generations in flight -> batch {b}.")


TRAFFIC_FIELDS = tuple(TrafficRequest.model_fields)  # the request fields every surface takes for traffic
