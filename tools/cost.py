"""What a job really costs: billing granularity, spot with interruptions, storage, egress, serving.

All functions are pure; prices come from the offer catalog, rates from knowledge/providers.csv
(the caller passes them in as `ProviderRates`). An unknown rate stays unknown (None, with the
reason code `rate_unknown`), never zero.

Serving economics (`serving_economics`, in tools.serving, re-exported here) is the one place that turns a
configuration into $ per million tokens: chat, recommend, cost and the charts all call it, so they agree.
"""

from __future__ import annotations

__all__ = ["BillingPolicy", "SpotAssumptions", "Finding", "ProviderRates", "ServingRequest", "ServingPoint",
           "ServingEconomics", "UsageCosts", "CostInputs", "billed_hours", "billing_comparison", "spot_expectation",
           "serving_cost", "usage_cost", "usage_costs", "serving_economics", "job_billing", "cost_report",
           "note_text", "HOURS_PER_MONTH", "ENGINE_MAX_NUM_SEQS", "SERVING_HEADROOM_FRACTION", "hours_for_budget"]

import math
from typing import Any

from pydantic import BaseModel, Field

from tools.errors import InvalidCombination
from tools.findings import Finding
from tools.schemas import GpuOffer
from tools.serving import (ENGINE_MAX_NUM_SEQS, api_vs_self_host, HOURS_PER_MONTH, SERVING_HEADROOM_FRACTION, ServingEconomics,
                           ServingPoint, ServingRequest, usd_per_million, serving_economics)
from tools.volume import serving_volume


class BillingPolicy(BaseModel):
    """How a provider rounds usage. increment_s None = not known from the sources read."""

    provider: str
    increment_s: int | None = Field(None, ge=1)
    minimum_s: int = Field(0, ge=0)
    source: str = ""


class ProviderRates(BaseModel):
    """One provider's facts (knowledge/providers.csv); None = not found in the sources read."""

    provider: str = "unknown"
    billing_increment_s: int | None = Field(None, ge=1)
    minimum_charge_s: int = Field(0, ge=0)
    storage_usd_per_gb_month: float | None = Field(None, ge=0)
    storage_type: str = ""
    egress_usd_per_gb: float | None = Field(None, ge=0)
    spot_notice_s: int | None = Field(None, ge=0)
    source: str = ""

    @classmethod
    def of(cls, provider: str | None, facts: dict[str, Any]) -> "ProviderRates":
        """From a load_providers() row (blank fields stay None)."""
        keep = {k: v for k, v in facts.items() if k in cls.model_fields and v not in (None, "")}
        keep["minimum_charge_s"] = keep.get("minimum_charge_s") or 0
        return cls(**(keep | {"provider": provider or "unknown"}))

    def policy(self) -> BillingPolicy:
        return BillingPolicy(provider=self.provider, increment_s=self.billing_increment_s,
                             minimum_s=self.minimum_charge_s, source=self.source)


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

# ---- a job's bill: billing policy, spot, storage, egress, total -----------------------------------


class UsageCosts(BaseModel):
    """Storage and egress in USD; None = not asked (field absent) or the rate is unknown (see findings)."""

    storage_usd: float | None = None
    egress_usd: float | None = None
    findings: list[Finding] = []


def hours_for_budget(budget_usd: float, usd_per_hour: float, policy: BillingPolicy | None = None) -> float:
    """The running hours a budget buys at an hourly price: budget / price, rounded down to the billing
    increment (a provider billing whole hours sells whole hours; an unknown increment counts as whole
    hours, the worst case cost_report bills), so the hours bought never cost more than the budget.

    Units: USD, USD per hour (the instance, every GPU in it), hours. Raises ValueError on a price of 0.
    """
    if not (budget_usd >= 0 and usd_per_hour > 0):
        raise ValueError("a budget of 0 or more and an hourly price above 0")
    h = budget_usd / usd_per_hour
    step = (policy.increment_s or 3600) / 3600 if policy is not None else 0
    return math.floor(h / step + 1e-9) * step if step else h


def usage_costs(rates: ProviderRates, storage_gb: float | None = None, months: float = 1.0,
                egress_gb: float | None = None) -> UsageCosts:
    """Storage and egress cost when an amount is given.

    When to use: "keep 500 GB for 3 months", "download 200 GB out of AWS".
    Formula: storage = GB x months x $/GB-month; egress = GB x $/GB (providers.csv rates).
    An unknown rate gives None with the code `rate_unknown`, never a silent zero.
    """
    out = UsageCosts()
    if storage_gb is not None:
        rate = rates.storage_usd_per_gb_month
        out.storage_usd = usage_cost(storage_gb * months, rate)
        out.findings.append(Finding(code="storage_cost" if rate is not None else "storage_rate_unknown", params={
            "storage_gb": storage_gb, "months": months, "usd_per_gb_month": rate, "provider": rates.provider,
            "storage_type": rates.storage_type, "usd": out.storage_usd}))
    if egress_gb is not None:
        rate = rates.egress_usd_per_gb
        out.egress_usd = usage_cost(egress_gb, rate)
        out.findings.append(Finding(code="egress_cost" if rate is not None else "egress_rate_unknown", params={
            "egress_gb": egress_gb, "usd_per_gb": rate, "provider": rates.provider, "usd": out.egress_usd}))
    return out


def job_billing(runtime_h: float, price_usd_per_hour: float, rates: ProviderRates) -> tuple[dict[str, Any], list[Finding]]:
    """The bill for `runtime_h` hours on demand under the provider's billing rule.

    Formula: billed hours = ceil(max(runtime, minimum) / increment) x increment (billed_hours);
    cost = billed hours x price per hour. Unknown increment: started hours are counted (the worst
    case), code `billing_unknown`. Returns (billing dict with per-second/minute/hour totals, findings).
    """
    policy = rates.policy()
    bh = billed_hours(runtime_h, policy)
    billing = {"provider": policy.provider, "increment_s": policy.increment_s,
               "minimum_s": policy.minimum_s} | billing_comparison(runtime_h, price_usd_per_hour)
    found = Finding(code="billing_rule", params={"provider": policy.provider, "increment_s": policy.increment_s,
                                                 "minimum_s": policy.minimum_s, "runtime_h": runtime_h, "billed_h": bh})
    if bh is None:  # unknown granularity: count started hours, the worst case
        bh = billed_hours(runtime_h, policy.model_copy(update={"increment_s": 3600})) or 0.0
        found = Finding(code="billing_unknown", params={"provider": policy.provider})
    return billing | {"billed_hours": bh, "on_demand_cost_usd": bh * price_usd_per_hour}, [found]


def _total(parts: dict[str, float | None]) -> tuple[float | None, list[Finding]]:
    """Sum of the parts asked for; None (code `total_unknown`) when any part is unknown."""
    if not parts:
        return None, []
    if any(v is None for v in parts.values()):
        return None, [Finding(code="total_unknown", params={"unknown": [k for k, v in parts.items() if v is None]})]
    return sum(v for v in parts.values() if v is not None), []


class CostInputs(BaseModel):
    """Everything `cost_report` needs, names already resolved and estimators already run."""

    gpu: str
    gpus: int = Field(1, ge=1)
    price_usd_per_hour: float | None = None
    price_given: bool = False
    provider_filter: str | None = None
    rates: ProviderRates = ProviderRates()
    offer: GpuOffer | None = None
    spot_offer: GpuOffer | None = None
    runtime_hours: float | None = Field(None, ge=0)
    serving: ServingEconomics | None = None
    serving_info: dict[str, Any] = Field({}, description="engine, bound, memory from the speed check")
    storage_gb: float | None = Field(None, ge=0)
    months: float = Field(1.0, ge=0)
    egress_gb: float | None = Field(None, ge=0)
    spot: SpotAssumptions = SpotAssumptions()
    tokens_per_day: float | None = Field(None, gt=0, le=1e15, description="a serving volume to check (tools.volume)")
    hours_up_per_month: float | None = Field(None, gt=0, le=744, allow_inf_nan=False,
                                             description="serving: hours a month the endpoint is up (office hours)")
    api_usd_per_million_tokens: float | None = Field(None, gt=0, le=1e4, allow_inf_nan=False,
                                                     description="a hosted API's price to weigh the endpoint against")
    prompt_tokens: int = Field(512, ge=0)
    output_tokens: int = Field(256, ge=1)
    gpu_note: str = ""
    estimator_assumptions: list[str] = Field([], description="the speed or training estimator's own notes")


def _serving_part(inp: CostInputs, econ: ServingEconomics) -> tuple[dict[str, Any], list[Finding]]:
    at, b1 = econ.at_load, econ.batch_1
    out: dict[str, Any] = {"aggregate_tokens_per_s": at.aggregate_tokens_per_s, "batch": at.batch} | inp.serving_info
    out |= {"basis": at.basis, "max_batch_in_memory": econ.max_batch_in_memory,
            "batch_1": b1.model_dump(exclude={"basis"})}
    if inp.price_usd_per_hour is not None:
        out |= serving_cost(inp.price_usd_per_hour, at.aggregate_tokens_per_s)
        out["usd_per_million_tokens_batch_1"] = b1.usd_per_million_tokens
    spot = inp.spot_offer.spot_price_usd_per_hour if inp.spot_offer else None
    if spot:
        out["spot_usd_per_million_tokens"] = usd_per_million(spot, at.aggregate_tokens_per_s)
    if econ.load is not None:
        out |= {"load": econ.load.model_dump(), "replicas": econ.replicas, "busy_fraction": econ.busy_fraction,
                "usd_per_million_tokens_served": econ.usd_per_million_tokens_served}
        if econ.monthly_usd is not None:
            out["monthly_usd"] = econ.monthly_usd
    if inp.hours_up_per_month and out.get("monthly_usd") is not None:  # up only those hours: billed for them
        out["hours_up_per_month"] = inp.hours_up_per_month
        out["monthly_usd_hours_up"] = out["monthly_usd"] * inp.hours_up_per_month / HOURS_PER_MONTH
    if inp.api_usd_per_million_tokens and econ.load is not None and out.get("monthly_usd"):
        out["api_comparison"] = api_vs_self_host(econ.load.average_requests_per_s, inp.prompt_tokens, inp.output_tokens,
                                                 inp.api_usd_per_million_tokens, out["monthly_usd"]).model_dump()
    if inp.tokens_per_day and at.aggregate_tokens_per_s > 0:
        out["volume"] = serving_volume(inp.tokens_per_day, at.aggregate_tokens_per_s, inp.price_usd_per_hour,
                                       HOURS_PER_MONTH).model_dump()
    found = [Finding(code="serving_always_on", params={"hours_per_month": HOURS_PER_MONTH, "batch": at.batch,
                                                       "basis": at.basis}),
             Finding(code="serving_spot_not_advisable", params={"spot_notice_s": inp.rates.spot_notice_s}),
             *econ.findings,
             Finding(code="estimator_notes", params={"texts": inp.estimator_assumptions})]
    return out, found


def _job_part(inp: CostInputs, hrs: float) -> tuple[dict[str, Any], list[Finding]]:
    out: dict[str, Any] = {"runtime_hours": hrs}
    found = [Finding(code="estimator_notes", params={"texts": inp.estimator_assumptions})]
    if inp.price_usd_per_hour is not None:
        bill, f = job_billing(hrs, inp.price_usd_per_hour, inp.rates)
        out["billing"] = {k: v for k, v in bill.items() if k not in ("billed_hours", "on_demand_cost_usd")}
        out["billed_hours"], out["on_demand_cost_usd"] = bill["billed_hours"], bill["on_demand_cost_usd"]
        found += f
    so = inp.spot_offer
    if so and so.spot_price_usd_per_hour:
        exp = spot_expectation(hrs, so.spot_price_usd_per_hour, inp.spot)
        out["spot"] = exp | {"provider": so.provider, "spot_price_usd_per_hour": so.spot_price_usd_per_hour,
                             "assumptions": inp.spot.model_dump()}
        od = out.get("on_demand_cost_usd")
        if od and exp.get("cost_usd") is not None:  # what spot saves against on-demand (negative: it costs more)
            out["spot"] |= {"saves_usd": od - exp["cost_usd"], "saves_pct": 100 * (od - exp["cost_usd"]) / od}
        found.append(Finding(code="spot_assumptions", params=inp.spot.model_dump()))
    else:
        out["spot"] = None
        found.append(Finding(code="spot_price_unknown", params={"provider": inp.provider_filter}))
    return out, found


def cost_report(inp: CostInputs) -> dict[str, Any]:
    """The cost of a job (runtime known) or of an always-on endpoint (`serving` given).

    When to use: "what does it cost", "per second or per hour", "on spot", "plus storage and egress".
    Formulas: job_billing (billing increments), spot_expectation (interruptions), usage_costs
    (storage, egress), serving_economics ($ per million tokens); total = on-demand + storage +
    egress, unknown (None, code `total_unknown`) when a part is unknown. USD, hours, GB.

    Returns:
        The `cost --json` fields (gpu, gpus, offer, spot_offer, serving | runtime_hours, billing,
        billed_hours, on_demand_cost_usd, spot; storage_usd, egress_usd, total_usd, assumptions,
        estimate) plus `findings` (reason codes with their parameters, for the renderers).

    Raises:
        InvalidCombination: neither a runtime nor a serving estimate was given.
    """
    if inp.serving is None and inp.runtime_hours is None:
        raise InvalidCombination("give --hours H, or a model with --method and the data size to estimate them")
    found: list[Finding] = []
    if inp.price_given and inp.price_usd_per_hour is not None:
        found.append(Finding(code="price_given", params={"usd_per_hour": inp.price_usd_per_hour, "gpus": inp.gpus}))
    found += [Finding(code="gpu_note", params={"text": inp.gpu_note})] if inp.gpu_note else []
    out: dict[str, Any] = {"gpu": inp.gpu, "gpus": inp.gpus, "offer": inp.offer.to_contract() if inp.offer else None,
                           "spot_offer": inp.spot_offer.to_contract() if inp.spot_offer else None}
    if inp.serving is not None:
        part, f = _serving_part(inp, inp.serving)
        out["serving"] = part
    else:
        part, f = _job_part(inp, inp.runtime_hours or 0.0)
        out |= part
    found += f
    usage = usage_costs(inp.rates, inp.storage_gb, inp.months, inp.egress_gb)
    out |= {k: getattr(usage, k) for k, v in (("storage_usd", inp.storage_gb), ("egress_usd", inp.egress_gb))
            if v is not None}
    found += usage.findings
    if inp.serving is None:
        parts = {k: out[k] for k in ("on_demand_cost_usd", "storage_usd", "egress_usd") if k in out}
        out["total_usd"], f = _total(parts)
        found += f
    out["assumptions"] = [t for x in found for t in note_text(x)]
    out["estimate"] = True
    out["findings"] = [x.model_dump() for x in found if x.code not in ("estimator_notes", "gpu_note")]
    return out


def _billing_text(p: dict[str, Any]) -> str:
    inc = p["increment_s"]
    unit = {1: "second", 60: "minute", 3600: "hour"}.get(inc, f"{inc} s")
    return (f"{p['provider']} bills per {unit}" + (f" with a {p['minimum_s']} s minimum" if p["minimum_s"] else "")
            + f": {p['runtime_h']:.3f} h of running is billed as {p['billed_h']:.3f} h.")


def _spot_text(p: dict[str, Any]) -> str:
    return (f"Spot: {p['interruptions_per_hour']:g} interruptions per running hour (an assumption; override it), "
            f"a checkpoint every {p['checkpoint_every_h'] * 60:g} min taking {p['checkpoint_write_h'] * 60:g} min, "
            f"{p['restart_h'] * 60:g} min to restart; each interruption loses half a checkpoint interval.")


def _batch_text(p: dict[str, Any]) -> str:
    if p["limit"] == "does_not_fit":
        return "Not even one sequence fits in memory at this context: the figures assume it did."
    why = ("as many sequences as the KV cache fits" if p["limit"] == "memory"
           else f"the engine's cap of {p['engine_cap']} concurrent sequences (vLLM max_num_seqs)")
    return (f"No load was given: $/million tokens is at the throughput-optimal batch {p['batch']} "
            f"({why}); the batch-1 figure is what a single user at a time costs.")


_NOTE_TEXT: dict[str, Any] = {
    "price_given": lambda p: f"Price given: ${p['usd_per_hour']:,.2f}/hour for {p['gpus']} GPU(s).",
    "gpu_note": lambda p: p["text"],
    "serving_always_on": lambda p: ("Serving: the endpoint is billed every hour it is up "
                                    f"({p['hours_per_month']:g} h a month); $/million tokens assumes it is busy at "
                                    f"batch {p['batch']} the whole time."),
    "serving_spot_not_advisable": lambda p: (
        "Spot is not advisable for a user-facing endpoint that must stay up: an interruption takes it down (notice "
        + (f"{p['spot_notice_s']} s" if p.get("spot_notice_s") else "period unknown") + ")."),
    "batch_limited_by": _batch_text,
    "serving_load_from_traffic": lambda p: (p["assumption"] + (
        f" One instance holds {p['max_batch_in_memory']} sequences, so {p['replicas']} replicas of batch {p['batch']}."
        if p["replicas"] > 1 else "") + " The $ per million tokens served counts the idle time of an always-on "
        "endpoint (price x replicas / the tokens the traffic asks for)."),
    "load_exceeds_memory": lambda p: (f"{p['concurrent_users']} concurrent sequences need more KV cache than fits: "
                                      f"at most {p['max_batch_in_memory']} fit."),
    "gpu_memory_unknown": lambda p: f"The memory of {p['gpu']} is not in the GPU data: the batch is not memory-checked.",
    "price_unknown": lambda p: "No on-demand price: $ per million tokens is unknown.",
    "billing_unknown": lambda p: (f"Billing granularity of {p['provider']} is unknown: started hours are counted "
                                  "(the worst case); per-second and per-minute totals are shown too."),
    "billing_rule": _billing_text,
    "spot_assumptions": _spot_text,
    "spot_price_unknown": lambda p: ("No spot price for this GPU in the catalog"
                                     + (f" at {p['provider']}" if p.get("provider") else "") + "."),
    "storage_cost": lambda p: (f"Storage: {p['storage_gb']:g} GB for {p['months']:g} month(s) at "
                               f"${p['usd_per_gb_month']:g}/GB-month ({p['storage_type'] or 'default volume'})."),
    "storage_rate_unknown": lambda p: (f"Storage: {p['storage_gb']:g} GB for {p['months']:g} month(s) at "
                                       f"an unknown rate for {p['provider']} (not found in the sources read)."),
    "egress_cost": lambda p: f"Egress: {p['egress_gb']:g} GB at ${p['usd_per_gb']:g}/GB.",
    "egress_rate_unknown": lambda p: f"Egress: {p['egress_gb']:g} GB at an unknown rate for {p['provider']}.",
    "total_unknown": lambda p: "Total not given: a part of it is unknown (never counted as zero).",
}


def note_text(f: Finding) -> list[str]:
    """English sentences for one finding (the `assumptions` list of `cost --json`); renderers for
    other languages read the code and parameters instead."""
    if f.code == "estimator_notes":
        return list(f.params.get("texts", []))
    render = _NOTE_TEXT.get(f.code)
    return [render(f.params)] if render else []
