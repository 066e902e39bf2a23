"""The recommender: from a model and a goal to ranked, explained GPU options.

Following the guides (ft-14, ga-31): start from the model and the method, work back to the VRAM
(does it fit, with headroom), then bandwidth (speed) and interconnect (splits across GPUs), then
price (job cost, or $ per million tokens and per month). Every reason is a sentence carrying the
computed numbers and the id of the guide passage it rests on.
"""

from __future__ import annotations

__all__ = ["cheapest_offer", "offer_summary", "RecommendRequest", "Recommendation", "recommend"]

import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from tools.cost import BillingPolicy, ServingRequest, SpotAssumptions, billed_hours, serving_economics, spot_expectation
from tools.serving import HOURS_PER_MONTH
from tools.deployable import CLEARLY_CHEAPER, drawbacks, order, reject_reason
from tools.load import TRAFFIC_FIELDS, TrafficRequest
from tools.errors import AdvisorError
from tools.jobs import JobRequest, job_totals
from tools.schemas import DEFAULT_ENGINE, TIGHT_HEADROOM_FRACTION, GpuMemory, GpuOffer, GpuSpec, ModelArch, VramRequest
from tools.throughput import EngineProfile, SpeedRequest, estimate_speed
from tools.training import TrainRequest, estimate_train_time
from tools.vram import estimate_vram

MAX_HOURS_PER_MONTH = 744  # 31 days x 24 h
HEADROOM = TIGHT_HEADROOM_FRACTION  # keep 5 % of usable GPU memory free (fragmentation, spikes): ft-40 "enough room"


class RecommendRequest(BaseModel):
    """A goal. `workload` serve: context, users, speed target; finetune: method, data, limits."""

    workload: Literal["serve", "finetune"] = "serve"
    # serving
    context_tokens: int = Field(4096, ge=1, le=10_000_000, description="prompt + output tokens per request")
    concurrent_users: int | None = Field(None, ge=1, le=100_000,
                                         description="sequences decoded at once; not given: memory sized for one, "
                                                     "$/M tokens at the throughput-optimal batch")
    min_tokens_per_s_per_user: float | None = Field(None, gt=0, le=100_000, allow_inf_nan=False)
    users_online: int | None = Field(None, ge=1, le=10_000_000, description="serve: people using it at once "
                                     "(with think_time_s; not concurrent generations)")
    requests_per_minute: float | None = Field(None, gt=0, le=1e7, allow_inf_nan=False, description="serve")
    requests_per_hour: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False, description="serve")
    requests_per_day: float | None = Field(None, gt=0, le=1e10, allow_inf_nan=False, description="serve")
    think_time_s: float | None = Field(None, ge=0, le=86_400, allow_inf_nan=False,
                                       description="serve: seconds between a reply and the user's next request")
    peak_factor: float | None = Field(None, ge=1, le=100, allow_inf_nan=False, description="serve: peak / average rate")
    prompt_tokens: int | None = Field(None, ge=1, le=10_000_000, description="serve: prompt tokens per request")
    output_tokens: int | None = Field(None, ge=1, le=10_000_000, description="serve: output tokens per request")
    production: bool = Field(False, description="production, compliance or regulated data: datacenter GPUs from "
                                                "non-marketplace providers only")
    precisions: tuple[str, ...] = Field(("bf16",), description="weight precisions allowed, tried in order")
    engine: str = DEFAULT_ENGINE
    # fine-tuning
    method: Literal["full", "lora", "qlora"] | None = None
    dataset_tokens: float | None = Field(None, gt=0, le=1e15, allow_inf_nan=False)
    epochs: float = Field(1.0, gt=0, le=1000, allow_inf_nan=False)
    seq_len: int = Field(2048, ge=1, le=1_000_000)
    batch: int = Field(4, ge=1, le=10_000)
    deadline_hours: float | None = Field(None, gt=0, le=1e6, allow_inf_nan=False)
    budget_usd: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False)
    max_usd_per_hour: float | None = Field(None, ge=0, le=1e6, allow_inf_nan=False,
                                           description="the most an option may cost an hour, every GPU and "
                                                       "replica together (a stated hourly or monthly budget)")
    hours_per_month: float = Field(HOURS_PER_MONTH, gt=0, le=MAX_HOURS_PER_MONTH, allow_inf_nan=False,
                                   description="serve: hours a month the endpoint is up and billed (office hours "
                                               "9 to 6 on weekdays ~ 195); 730 = always on")
    # preferences
    spot_allowed: bool = False
    needs_nvlink: bool = False
    max_gpus: int = Field(8, ge=1, le=64)
    objective: Literal["cheapest", "fastest", "value", "largest"] = Field(
        "cheapest", description="rank by cost per result, speed, value, or the most GPU memory (within the budget)")
    top_n: int = Field(5, ge=1, le=50)

    @property
    def traffic(self) -> TrafficRequest | None:
        """The stated traffic (tools.load), None when no rate or users online is given."""
        given = {k: getattr(self, k) for k in TRAFFIC_FIELDS if getattr(self, k) is not None}
        return TrafficRequest(**given) if given.keys() - {"peak_factor", "think_time_s"} else None

    def request_shape(self) -> tuple[int, int]:
        """(prompt, output) tokens per request: as given, else context_tokens split 3/4 prompt, 1/4 output."""
        prompt = self.prompt_tokens or max(1, self.context_tokens * 3 // 4)
        return prompt, self.output_tokens or max(1, self.context_tokens - prompt)


class Recommendation(BaseModel):
    status: Literal["ok", "needs_input", "nothing_fits"]
    missing: list[str] = []
    options: list[dict[str, Any]] = []
    ruled_out: list[dict[str, Any]] = []
    rejected: list[dict[str, str]] = []  # every option not offered: {option, reason}
    not_in_data: list[str] = []  # providers, GPUs or regions named that the price data does not hold, in words
    suggestions: list[str] = []
    chart: dict[str, list] = {}
    assumptions: list[str] = []
    citations: list[str] = []
    over_budget: list[dict[str, Any]] = []  # nothing within the budget: the cheapest options it ruled out


def cheapest_offer(offers: list[GpuOffer], key: str) -> GpuOffer | None:
    c = [o for o in offers if getattr(o, key) is not None]
    return min(c, key=lambda o: (getattr(o, key), o.provider, o.instance_type or "")) if c else None


def recommend(a: ModelArch, req: RecommendRequest, offers: list[GpuOffer], gpus: dict[str, GpuSpec],
              engine: EngineProfile, mfu_table: dict[str, tuple[float, str]],
              billing: dict[str, BillingPolicy], marketplaces: frozenset[str] = frozenset()) -> Recommendation:
    """Rank GPU configurations (type x count) from the offers for the goal in `req`.

    Args:
        a: the model.
        req: the goal and preferences.
        offers: candidate offers (already filtered by provider/region by the caller).
        gpus: GPU catalog by id. engine: serving engine profile. mfu_table: training utilisation.
        billing: billing policy per provider. marketplaces: providers that are marketplaces of hosts.

    Returns:
        Recommendation with ranked options, what was ruled out and why, and chart series.
    """
    if req.workload == "finetune":
        missing = [n for n, v in (("method", req.method), ("dataset_tokens", req.dataset_tokens)) if v is None]
        if missing:
            return Recommendation(status="needs_input", missing=missing,
                                  assumptions=["A fine-tuning recommendation needs the method (full, LoRA or QLoRA) "
                                               "and the data size (tokens, or examples x tokens each)."])
    groups: dict[tuple[str, int], list[GpuOffer]] = {}
    for o in offers:
        if o.gpu_id and o.gpu_id in gpus and 1 <= o.gpu_count <= req.max_gpus:
            groups.setdefault((o.gpu_id, o.gpu_count), []).append(o)
    options: list[dict[str, Any]] = []
    ruled: dict[str, dict[str, Any]] = {}
    rejected: list[dict[str, str]] = []
    fits_with: dict[str, int] = {}  # smallest GPU count that fits, per GPU type
    over: list[dict[str, Any]] = []  # fit, but over the budget

    def rule_out(gid: str, n: int, reason: str, cite: str = "") -> None:
        rejected.append({"option": f"{n} x {gpus[gid].name}", "reason": reason})
        key = gid
        # keep the most informative reason per GPU type: the largest count tried
        if key not in ruled or ruled[key]["gpu_count"] <= n:
            ruled[key] = {"gpu": gpus[gid].name, "gpu_id": gid, "gpu_count": n, "reason": reason, "citation": cite}

    for (gid, n), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        g = gpus[gid]
        if gid in fits_with and n > fits_with[gid]:
            continue  # ga-32: a bigger box than the model needs is not an option
        mem_gb = g.memory_gb or next((o.gpu_memory_gb for o in group if o.gpu_memory_gb), None)
        if not mem_gb:
            rule_out(gid, n, f"{g.name}: memory unknown in the GPU data")
            continue
        nvlink = any(o.nvlink for o in group)
        why = reject_reason(a, g, n, nvlink, req.workload == "serve", req.production)
        if why:
            rule_out(gid, n, why, "ga-09" if "NVLink" in why else "")
            continue
        if req.production and all(o.provider in marketplaces for o in group):
            rule_out(gid, n, f"{n} x {g.name}: offered only by marketplaces of hosts "
                             f"({', '.join(sorted({o.provider for o in group}))}); production asks for a cloud provider")
            continue
        if req.production:
            group = [o for o in group if o.provider not in marketplaces]
        od = cheapest_offer(group, "price_usd_per_hour")
        sp = cheapest_offer(group, "spot_price_usd_per_hour") if req.spot_allowed else None
        if od is None and sp is None:
            rule_out(gid, n, f"{n} x {g.name}: no on-demand price" + ("" if req.spot_allowed else " (spot not allowed)"))
            continue
        try:
            opt = (_serve_option if req.workload == "serve" else _train_option)(
                a, req, g, n, mem_gb, od, sp, nvlink, engine, mfu_table, billing)
        except AdvisorError as exc:
            rule_out(gid, n, f"{n} x {g.name}: {exc}")
            continue
        if opt.get("ruled_out") or _over_budget(req, opt):
            rule_out(gid, n, opt.get("ruled_out") or f"{n} x {g.name}: {_over_budget(req, opt)}", opt.get("citation", ""))
            over += [opt] if not opt.get("ruled_out") else []
            continue
        fits_with.setdefault(gid, n)
        ruled.pop(gid, None)
        opt["drawbacks"] = drawbacks(g, n, nvlink, opt["offer"]["provider"] in marketplaces)
        options.append(opt)

    rec = _ranked(a, req, options, ruled)
    dearer = sorted(over, key=lambda o: o["rank_cost"])[:3] if not rec.options else []
    return rec.model_copy(update={"rejected": rejected + rec.rejected, "over_budget": dearer})


def _over_budget(req: RecommendRequest, opt: dict[str, Any]) -> str:
    """Why an option breaks the hourly cap (its price x replicas, spot when that is what it ranks on), or ""."""
    if req.max_usd_per_hour is None:
        return ""
    price = opt.get("price_usd_per_hour")
    if req.spot_allowed and opt.get("spot_price_usd_per_hour") is not None:
        price = min(p for p in (price, opt["spot_price_usd_per_hour"]) if p is not None)
    hourly = (price or 0) * (opt.get("replicas") or 1)
    if hourly <= req.max_usd_per_hour * (1 + 1e-9):
        return ""
    copies = f" for {opt['replicas']} replicas" if (opt.get("replicas") or 1) > 1 else ""
    return f"${hourly:,.2f}/h{copies}, over the budget of ${req.max_usd_per_hour:,.2f}/h"


def _ranked(a: ModelArch, req: RecommendRequest, options: list[dict[str, Any]],
            ruled: dict[str, dict[str, Any]]) -> Recommendation:
    """Sort by the objective, keep the top N, and say what was ruled out, the citations and the chart."""
    memory = lambda o: -(o.get("gpu_memory_gb") or 0) * o["gpu_count"]  # noqa: E731
    key = {"cheapest": lambda o: (o["rank_cost"], -o["rank_speed"]),
           "fastest": lambda o: (-o["rank_speed"], o["rank_cost"]),
           "value": lambda o: (o["rank_value"], o["rank_cost"]),
           "largest": lambda o: (memory(o), o["rank_cost"])}[req.objective]
    crit = {"cheapest": lambda o: o["rank_cost"], "fastest": lambda o: -o["rank_speed"],
            "value": lambda o: o["rank_value"], "largest": memory}[req.objective]
    options = order(options, crit, lambda o: (*key(o), o["gpu_count"], o["offer"]["provider"]))
    top = options[: req.top_n]
    lower = [{"option": f"{o['gpu_count']} x {o['gpu']} ({o['offer']['provider']})",
              "reason": "ranked after the single-GPU options: " + "; ".join(o["drawbacks"] or ["tensor parallelism"])}
             for o in options if o["tier"] and options[0]["tier"] == 0 and o in top]
    for o in top:
        if o["drawbacks"]:
            o["reasons"].append("Drawback: " + "; ".join(o["drawbacks"]) + (
                f" (listed this high as {o['promoted_because']})." if o.get("promoted_because") else "."))
    for i, o in enumerate(top, 1):
        o["rank"] = i
    ruled_list = sorted(ruled.values(), key=lambda r: r["gpu"])
    status = "ok" if top else "nothing_fits"
    suggestions = _suggestions(a, req) if not top else []
    citations = sorted({c for o in top for c in o["citations"]} | {r["citation"] for r in ruled_list if r["citation"]})
    chart = {
        "options": [f"{o['gpu_count']}x {o['gpu']} ({o['offer']['provider']})" for o in top],
        "cost": [o["rank_cost"] for o in top],
        "throughput_tokens_per_s": [o["tokens_per_s"] for o in top],
        "memory_components_gb": [o["memory_components_gb"] for o in top],
        "gpu_memory_gb": [o["gpu_memory_gb"] for o in top],
    }
    assumptions = [
        f"Fits means the per-GPU estimate leaves at least {HEADROOM:.0%} of the GPU's memory free.",
        "A bigger instance of the same GPU is not listed once a smaller one fits (guide ga-32).",
        "Speeds and times are estimates; prices are the catalog's cheapest matching offer (see its date).",
    ]
    assumptions.append("Deployable first: one GPU before tensor parallelism, NVLink for more than 2 GPUs, degrees "
                       "that divide the attention and KV heads; several GPUs first only at "
                       f"{CLEARLY_CHEAPER:.0%} of the best single GPU's cost or less, with its drawback said.")
    if req.production:
        assumptions.append("Production: datacenter GPUs from cloud providers only (no consumer cards, no marketplaces).")
    return Recommendation(status=status, options=top, ruled_out=ruled_list, suggestions=suggestions, chart=chart,
                          assumptions=assumptions, citations=citations, rejected=lower)


def _fit(a: ModelArch, vreq: VramRequest, g: GpuSpec, n: int, mem_gb: float) -> tuple[Any, bool, str]:
    est = estimate_vram(a, vreq, GpuMemory(name=g.name, memory_gb=mem_gb))
    ok = est.total_gb <= mem_gb * (1 - HEADROOM)
    why = f"needs {est.total_gb:.1f} GB per GPU of {mem_gb:.1f} GB" + ("" if n == 1 else f" ({n} GPUs)")
    return est, ok, why


def _serve_option(a, req, g, n, mem_gb, od, sp, nvlink, engine, mfu_table, billing) -> dict[str, Any]:
    if n > 1 and req.needs_nvlink and not nvlink:
        return {"ruled_out": f"{n} x {g.name}: no NVLink between the GPUs (you asked for it)", "citation": "ga-09"}
    last_why, (prompt, output) = "", req.request_shape()
    ctx = prompt + output if req.prompt_tokens or req.output_tokens else req.context_tokens
    for prec in req.precisions:
        users = req.concurrent_users or 1
        vreq = VramRequest(method="inference", weight_precision=prec, batch=users,
                           seq_len=ctx, gpus=n, tensor_parallel=n, prefill_chunk_tokens=8192)
        est, ok, why = _fit(a, vreq, g, n, mem_gb)
        if not ok:
            last_why = f"{n} x {g.name}: does not fit at {prec}, {why}"
            continue
        price = od.price_usd_per_hour if od else None
        econ, users, est = _traffic_fit(a, g, engine, ServingRequest(
            precision=prec, prompt_tokens=prompt, output_tokens=output, gpus=n,
            concurrent_users=req.concurrent_users, gpu_memory_gb=mem_gb,
            headroom_fraction=HEADROOM, traffic=req.traffic), vreq, n, mem_gb,
            price, sp.spot_price_usd_per_hour if sp else None, users, est)
        spd = estimate_speed(a, g, engine, SpeedRequest(precision=prec, batch=users,
                                                        prompt_tokens=prompt, output_tokens=output, gpus=n))
        if req.min_tokens_per_s_per_user and spd.decode_tokens_per_s < req.min_tokens_per_s_per_user:
            last_why = (f"{n} x {g.name}: {spd.decode_tokens_per_s:.0f} tokens/s per user at {prec}, "
                        f"below the {req.min_tokens_per_s_per_user:g} asked")
            continue
        at = econ.at_load
        offer = od or sp
        reasons, cites = _serve_reasons(req, g, n, est, econ, spd, prec, users, ctx, mem_gb, price, offer, sp, nvlink)
        cost_rank = at.usd_per_million_tokens or at.spot_usd_per_million_tokens or math.inf
        return {
            "gpu": g.name, "gpu_id": g.id, "gpu_count": n, "precision": prec,
            "fits": True, "vram_per_gpu_gb": est.total_gb, "gpu_memory_gb": mem_gb,
            "headroom_gb": mem_gb - est.total_gb, "memory_components_gb": est.components_gb,
            "tokens_per_s": spd.aggregate_tokens_per_s, "tokens_per_s_per_user": spd.decode_tokens_per_s,
            "time_to_first_token_s": spd.time_to_first_token_s, "bound": spd.bound,
            "price_usd_per_hour": price, "spot_price_usd_per_hour": sp.spot_price_usd_per_hour if sp else None,
            "usd_per_million_tokens": at.usd_per_million_tokens,
            "monthly_usd": None if econ.monthly_usd is None else econ.monthly_usd * req.hours_per_month / HOURS_PER_MONTH,
            "hours_per_month": req.hours_per_month, "always_on_monthly_usd": econ.monthly_usd,
            "spot_usd_per_million_tokens": at.spot_usd_per_million_tokens,
            "usd_per_million_tokens_batch_1": econ.batch_1.usd_per_million_tokens,
            "serving_basis": at.basis, "serving_batch": at.batch, "replicas": econ.replicas,
            "load": econ.load.model_dump() if econ.load else None,
            "usd_per_million_tokens_served": econ.usd_per_million_tokens_served, "busy_fraction": econ.busy_fraction,
            "tight": est.total_gb > mem_gb * (1 - HEADROOM), "headroom_pct": 100 * (mem_gb - est.total_gb) / mem_gb,
            "gpu_memory_display": g.memory_display,
            "tokens_per_s_at_serving_batch": at.aggregate_tokens_per_s,
            "offer": offer_summary(offer), "nvlink": nvlink, "reasons": reasons, "citations": cites,
            "rank_cost": econ.monthly_usd if econ.monthly_usd is not None else math.inf, "rank_speed": spd.aggregate_tokens_per_s,
            "rank_value": econ.usd_per_million_tokens_served or cost_rank,
        }
    return {"ruled_out": last_why or f"{n} x {g.name}: does not fit"}


def _serve_reasons(req, g, n, est, econ, spd, prec, users, ctx, mem_gb, price, offer, sp, nvlink
                   ) -> tuple[list[str], list[str]]:
    """The reasons (with guide passage ids) one serving option is shown: fit, speed, split, precision, cost, load."""
    at = econ.at_load
    kv = est.components_gb.get("kv_cache", 0.0)
    w = est.components_gb.get("weights", 0.0)
    reasons = [f"Fits: {est.total_gb:.1f} GB per GPU of {mem_gb:.1f} GB at {prec} "
               f"(weights {w:.1f} GB, KV cache {kv:.1f} GB for {users} x {ctx:,} tokens) [ga-31]."]
    cites = ["ga-31"]
    if kv >= 0.5 * w:
        reasons.append(f"The KV cache ({kv:.1f} GB) is {kv / w:.0%} of the weights: long contexts and many users "
                       "need memory beyond the model [ga-17].")
        cites.append("ga-17")
    reasons.append(f"{spd.decode_tokens_per_s:.0f} tokens/s per user, {spd.aggregate_tokens_per_s:,.0f} in total "
                   f"({spd.bound}-bound; {g.memory_type or 'memory'} at {g.mem_bandwidth_gb_per_s or 0:,.0f} GB/s) [ga-07].")
    cites.append("ga-07")
    if n > 1:
        reasons.append(f"Split over {n} GPUs (tensor parallel) "
                       + ("with NVLink, which keeps the split fast [ga-09]." if nvlink else
                          "over PCIe only: it works, but the all-reduces slow each token [ga-09]."))
        cites.append("ga-09")
    if prec != "bf16":
        reasons.append(f"{prec.upper()} weights halve or quarter the bytes each token reads, so the model fits and runs faster [ga-08].")
        cites.append("ga-08")
    if at.usd_per_million_tokens is not None and econ.monthly_usd is not None:
        load = {"concurrent_users": f"{at.batch} concurrent users",
                "traffic": f"the traffic's load (batch {at.batch})"}.get(
            at.basis, f"full load (batch {at.batch}, the throughput-optimal batch that fits)")
        reasons.append(f"${at.usd_per_million_tokens:.3f} per million tokens at {load}, "
                       f"${econ.batch_1.usd_per_million_tokens:.3f} at batch 1; "
                       f"${econ.monthly_usd * req.hours_per_month / HOURS_PER_MONTH:,.0f} a month "
                       + ("always on" if req.hours_per_month == HOURS_PER_MONTH else f"for {req.hours_per_month:g} h up")
                       + f" (${price:.2f}/h, {offer.provider}).")
    reasons += _load_reasons(econ, n, g)
    if sp:
        reasons.append("Spot would be cheaper but is risky for a user-facing endpoint that must stay up [ga-34].")
        cites.append("ga-34")
    return reasons, cites


def _load_reasons(econ, n: int, g: GpuSpec) -> list[str]:
    """The traffic's load and the $ per million tokens served, as reasons (none without traffic)."""
    if econ.load is None:
        return []
    out = [econ.load.assumption + (f" {econ.replicas} replicas of {n} x {g.name}." if econ.replicas > 1 else "")]
    if econ.usd_per_million_tokens_served is not None:
        out.append(f"${econ.usd_per_million_tokens_served:.3f} per million tokens served, always on "
                   f"(idle time counted; busy {econ.busy_fraction or 0:.0%} of the time).")
    return out


def _traffic_fit(a, g, engine, sreq, vreq, n, mem_gb, price, spot, users, est):
    """Serving economics, and with traffic the per-replica batch it picked, lowered (more replicas) until
    the memory estimate leaves HEADROOM free: the KV-cache bound and the full estimate can differ by one."""
    econ = serving_economics(a, g, engine, sreq, price, spot)
    while econ.load is not None and econ.at_load.batch != users:
        users = econ.at_load.batch
        est, ok, _ = _fit(a, vreq.model_copy(update={"batch": users}), g, n, mem_gb)
        if ok or users <= 1:
            break
        econ = serving_economics(a, g, engine, sreq.model_copy(update={"max_batch": users - 1}), price, spot)
    return econ, users, est


def _train_option(a, req, g, n, mem_gb, od, sp, nvlink, engine, mfu_table, billing) -> dict[str, Any]:
    method = req.method
    if n > 1 and req.needs_nvlink and not nvlink:
        return {"ruled_out": f"{n} x {g.name}: no NVLink between the GPUs (you asked for it)", "citation": "ft-17"}
    if n > 1 and method == "full" and not nvlink:
        return {"ruled_out": f"{n} x {g.name}: full fine-tuning split over GPUs needs NVLink or an equivalent fabric; "
                             "this instance has PCIe only", "citation": "ft-17"}
    # As recipes do: try without activation checkpointing, then with it (slower, far less memory).
    for ckpt in ((False, True) if method != "qlora" else (True,)):
        vreq = VramRequest(method=method, batch=req.batch, seq_len=req.seq_len, gpus=n,
                           sharding="fsdp" if n > 1 else "none", grad_checkpointing=ckpt,
                           training_precision="bf16" if method == "full" else "mixed")
        est, ok, why = _fit(a, vreq, g, n, mem_gb)
        if ok:
            break
    if not ok:
        cite = "ft-06" if method == "full" else "ft-09"
        return {"ruled_out": f"{n} x {g.name}: does not fit even with activation checkpointing, {why}", "citation": cite}
    tt = estimate_train_time(a, g, TrainRequest(method=method, dataset_tokens=req.dataset_tokens, epochs=req.epochs,
                                                gpus=n, batch=req.batch, seq_len=req.seq_len, grad_checkpointing=ckpt),
                             mfu_table)
    offer = od or sp
    policy = billing.get(offer.provider, BillingPolicy(provider=offer.provider))
    unknown_billing = policy.increment_s is None
    if unknown_billing:  # unknown granularity: count started hours, the worst case
        policy = policy.model_copy(update={"increment_s": 3600})
    price = od.price_usd_per_hour if od else None
    cost = billed_hours(tt.hours, policy) * price if price else None
    spot_cost = None
    if sp:
        spot_cost = spot_expectation(tt.hours, sp.spot_price_usd_per_hour, SpotAssumptions())["cost_usd"]
    best_cost = min(c for c in (cost, spot_cost) if c is not None)
    job = job_totals(JobRequest(units=tt.total_tokens, unit="tokens", units_per_s=tt.tokens_per_s / n,
                                deadline_hours=req.deadline_hours, gpus=None if req.deadline_hours else n,
                                gpus_per_instance=n))
    if req.deadline_hours and tt.hours > req.deadline_hours:
        return {"ruled_out": f"{n} x {g.name}: about {tt.hours:.1f} h, past the {req.deadline_hours:g} h deadline "
                             f"({job.gpus} GPUs, {job.instances} such instances, would meet it: {job.formula})"}
    if req.budget_usd and best_cost > req.budget_usd:
        return {"ruled_out": f"{n} x {g.name}: about ${best_cost:,.0f}, over the ${req.budget_usd:,.0f} budget"}
    reasons = [f"Fits: {est.total_gb:.1f} GB per GPU of {mem_gb:.1f} GB for {method} "
               f"(micro-batch {req.batch} x {req.seq_len:,} tokens"
               + (", activation checkpointing on" if ckpt else "") + ") [ft-14]."]
    cites = ["ft-14"]
    if method == "qlora":
        reasons.append("QLoRA keeps the frozen base model in 4-bit, so it fits on one card where full fine-tuning "
                       "would need several [ft-09].")
        cites.append("ft-09")
    elif method == "full":
        reasons.append("Full fine-tuning holds weights, gradients and optimizer states: the most memory of any method [ft-06].")
        cites.append("ft-06")
    reasons.append(f"About {tt.hours:.2f} h ({tt.tokens_per_s:,.0f} tokens/s, estimate) for "
                   f"{tt.total_tokens:,.0f} tokens.")
    if n > 1:
        reasons.append(f"{n} GPUs " + ("with NVLink: gradients and shards are exchanged without a bottleneck [ft-17]."
                                        if nvlink else "over PCIe: fine for adapters, slower for sharded weights [ft-17]."))
        cites.append("ft-17")
    if cost is not None:
        unit = {1: "per second", 60: "per minute", 3600: "per hour"}.get(policy.increment_s or 0, "")
        how = (f"{offer.provider}'s billing unit is unknown, so started hours are counted" if unknown_billing
               else f"{offer.provider} bills {unit}")
        reasons.append(f"${cost:,.2f} on demand at ${price:.2f}/h ({how}) [ft-28].")
        cites.append("ft-28")
    if spot_cost is not None:
        reasons.append(f"About ${spot_cost:,.2f} on spot ({sp.provider}) with checkpoints every 30 min [ft-27].")
        cites.append("ft-27")
    return {
        "gpu": g.name, "gpu_id": g.id, "gpu_count": n, "method": method, "fits": True,
        "vram_per_gpu_gb": est.total_gb, "gpu_memory_gb": mem_gb, "headroom_gb": mem_gb - est.total_gb,
        "memory_components_gb": est.components_gb, "tokens_per_s": tt.tokens_per_s, "hours": tt.hours,
        "gpu_hours": tt.gpu_hours, "price_usd_per_hour": price, "grad_checkpointing": ckpt, "job": job.model_dump(),
        "spot_price_usd_per_hour": sp.spot_price_usd_per_hour if sp else None,
        "job_cost_usd": cost, "spot_job_cost_usd": spot_cost, "offer": offer_summary(offer), "spot_offer": offer_summary(sp) if sp else None,
        "nvlink": nvlink, "reasons": reasons, "citations": cites,
        "rank_cost": best_cost, "rank_speed": tt.tokens_per_s, "rank_value": best_cost,
    }


def offer_summary(o: GpuOffer) -> dict[str, Any]:
    return {"provider": o.provider, "instance_type": o.instance_type, "region": o.region, "as_of": o.as_of,
            "price_usd_per_hour": o.price_usd_per_hour, "spot_price_usd_per_hour": o.spot_price_usd_per_hour,
            "gpu_count": o.gpu_count, "source": o.source}


def _suggestions(a: ModelArch, req: RecommendRequest) -> list[str]:
    out = []
    if req.workload == "serve":
        if "int4" not in req.precisions:
            out.append("Allow 4-bit (int4/AWQ/GPTQ) or FP8 weights: they cut the weights' memory 2-4x [ga-08].")
        out.append(f"Allow more GPUs than {req.max_gpus} per instance, or shorten the context / fewer concurrent users "
                   "(the KV cache grows with both) [ga-17].")
    else:
        if req.method == "full":
            out.append("Use LoRA or QLoRA instead of full fine-tuning: the frozen base needs no gradients or optimizer "
                       "states [ft-09].")
        elif req.method == "lora":
            out.append("Use QLoRA: the 4-bit base model fits on a single card where 16-bit does not [ft-09].")
        out.append("Lower the micro-batch or sequence length, or turn on gradient checkpointing [ft-40].")
        if req.budget_usd or req.deadline_hours:
            out.append("Raise the budget or the deadline, or allow spot capacity with checkpoints [ft-27].")
        if req.max_gpus < 8:
            out.append(f"Allow more than {req.max_gpus} GPUs per instance [ft-17].")
    return out
