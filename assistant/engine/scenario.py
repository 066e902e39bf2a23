"""One resolved scenario per answer: the concrete GPU, its count and every filter, fixed before any tool runs.

    scenarios(query, run_tool) -> (query with concrete GPUs, [Scenario, ...])

A family name ("A100", "H100", "V100") covers several cards of different memory and price. Left to
each tool, the memory check takes one variant and the price lookup the cheapest of all of them, so
one answer says "fits on an A100 80GB SXM" and prices an A100 40GB PCIe. Here the family is resolved
once — by the user's words when they name the memory or form, else the variant that fits at the lowest
the card people mean by the family name (`family_default` in gpus.csv: "H100" is the H100 SXM, not the
94 GB H100 NVL) when it fits and has an offer under the question's filters, else the variant that fits at
the lowest price, else (nothing fits) again the family's default card, so a "no" and its way forward
(more GPUs, a lower precision) are about the card meant — and every tool call of the turn is planned from
that variant. The choice, and why, is part of the answer.

A Scenario is one side of the answer (one per GPU side of a comparison): model, workload, precision,
context, load, engine, GPU variant and count, and the filters every offer shown must satisfy. The
coherence guard (coherence.py) checks the answer against it.
"""

from __future__ import annotations

__all__ = ["Filters", "GpuChoice", "Scenario", "resolve_scenarios"]

from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from assistant.engine.plan_args import context_of, count_for, is_training, model_args, train_method, vram_args
from assistant.engine.query import Query
from knowledge.catalog import gpu_ids_for, is_image_pipeline, load_gpus

RunTool = Callable[[str, dict], dict]


class Filters(BaseModel):
    """What every offer shown for a scenario must satisfy (the user's constraints, as understood)."""

    regions: list[str] = Field(default_factory=list, description="region words as the user said them ('europe')")
    providers: list[str] = Field(default_factory=list)
    spot: bool | None = Field(None, description="True spot only, False on-demand only, None either")
    max_usd_per_gpu_hour: float | None = None
    min_gpu_memory_gb: float | None = Field(None, description="memory per card the user requires, GB")


class GpuChoice(BaseModel):
    """How a GPU family name was resolved to one card."""

    written: str = Field(description="the name as the user gave it ('A100')")
    chosen: str = Field(description="the catalog card used by every tool ('A100 80GB SXM')")
    why: Literal["family_default", "cheapest_fit", "only_fit", "none_fit_default", "no_offers_fit",
                 "default_no_fit"] = "cheapest_fit"
    need_gb: float | None = Field(None, description="memory needed per GPU, GB")
    usd_per_gpu_hour: float | None = Field(None, description="cheapest offer of the chosen card under the filters")
    others: list[str] = Field(default_factory=list, description="the family's other cards")
    fits_on: list[str] = Field(default_factory=list, description="default_no_fit: the family's cards that do hold it")


class Scenario(BaseModel):
    """One fully specified side of an answer; every tool call of the turn derives from it."""

    model: str | None = None
    params_b: float | None = None
    workload: Literal["inference", "full", "lora", "qlora", "image"] = "inference"
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    concurrency: int | None = Field(None, description="sequences at once (users or batch)")
    engine: str | None = None
    gpu: str | None = Field(None, description="the concrete card")
    gpu_count: int = 1
    gpu_choice: GpuChoice | None = None
    hours: float | None = None
    filters: Filters = Field(default_factory=Filters)


def filters_of(q: Query) -> Filters:
    return Filters(regions=list(q.regions), providers=list(q.providers),
                   spot=None if q.both_pricing else q.spot,
                   max_usd_per_gpu_hour=q.budget_usd_per_hour,
                   min_gpu_memory_gb=q.gpu_memory_gb if q.gpus else None)


def _price_args(q: Query, card: str, n: int) -> dict[str, Any]:
    a: dict[str, Any] = {"gpu": card, "limit": 1, "gpus": n,  # the instance the cost tool will price: n GPUs
                         "pricing": "spot" if q.spot and not q.both_pricing else "on-demand"}
    if q.providers:
        a["provider"] = ",".join(q.providers)
    if q.regions:
        a["region"] = q.regions[0]
    return a


def _cheapest(r: dict[str, Any], spot: bool) -> float | None:
    key = "spot_price_usd_per_gpu_hour" if spot else "price_usd_per_gpu_hour"
    prices = [o.get(key) for o in (r.get("offers") or []) if isinstance(o, dict) and o.get(key)]
    return min(prices) if prices else None


def _choose(q: Query, written: str, cards: list[str], run_tool: RunTool, default: str) -> GpuChoice:
    """The family's default card when it fits and is offered, else the one that fits at the lowest price,
    else the default (see the module docstring)."""
    n = count_for(q, written) or 1
    base = vram_args(q) | ({"gpus": n} if n > 1 else {})
    fitted: list[tuple[str, float, float | None]] = []  # card, need GB, $/GPU-h
    memory: dict[str, float] = {}
    need = None
    for card in cards:
        v = run_tool("vram_calculator", base | {"gpu": card})
        fit = v.get("fit") if isinstance(v, dict) else None
        if not fit:
            continue
        need = v.get("total_gb", need)
        memory[card] = float(fit.get("gpu_memory_gb") or 0)
        if fit.get("fits"):
            price = _cheapest(run_tool("price_query", _price_args(q, card, n)), bool(q.spot and not q.both_pricing))
            fitted.append((card, float(v.get("total_gb") or 0), price))
    others = [c for c in cards]
    priced = [f for f in fitted if f[2] is not None]
    own = next((f for f in priced if f[0] == default), None)
    if own:
        card, _, price = own
        why = "family_default"
    elif fitted and default in memory and default not in {f[0] for f in fitted}:
        # "H100" for a model the 80 GB SXM cannot hold but the 94 GB NVL can: the answer is "no" on the card
        # meant, with the variant that works named, never a silent switch to it
        return GpuChoice(written=written, chosen=default, why="default_no_fit", need_gb=need,
                         others=[c for c in cards if c != default], fits_on=[f[0] for f in fitted])
    elif fitted:
        if priced:
            card, _, price = min(priced, key=lambda f: f[2])
            why = "only_fit" if len(fitted) == 1 else "cheapest_fit"
        else:
            card, _, price = max(fitted, key=lambda f: -memory.get(f[0], 0))  # the smallest that fits
            why = "no_offers_fit"
    else:
        card = default
        price, why = None, "none_fit_default"
    return GpuChoice(written=written, chosen=card, why=why, need_gb=need, usd_per_gpu_hour=price,
                     others=[c for c in others if c != card])


def _family_cards(name: str) -> tuple[list[str], str]:
    """The cards a family name covers and the one the name means by default (first if none is marked)."""
    ids, _ = gpu_ids_for(name)
    if len(ids) < 2:
        return [], ""
    gpus = {g.id: g for g in load_gpus()}
    cards = [gpus[i] for i in ids if i in gpus]
    default = next((g for g in cards if g.family_default), cards[0])
    return [g.name for g in cards], default.name


def _resolve_gpus(q: Query, run_tool: RunTool) -> tuple[Query, list[GpuChoice]]:
    """The query with each GPU family replaced by the card chosen for it (only when a model gives a need)."""
    if not (q.model or q.params_b) or (q.model and is_image_pipeline(q.model)) or not q.gpus:
        return q, []
    choices: list[GpuChoice] = []
    gpus, counts = list(q.gpus), dict(q.gpu_counts)
    for i, g in enumerate(q.gpus):
        cards, default = _family_cards(g)
        if not cards:
            continue
        c = _choose(q, g, cards, run_tool, default)
        if c.chosen in gpus:  # "A100 or A100 80GB": the other side already names it
            continue
        choices.append(c)
        gpus[i] = c.chosen
        if g in counts:
            counts[c.chosen] = counts.pop(g)
    if not choices:
        return q, []
    seen = [next((c.chosen for c in choices if c.written == s), s) for s in q.seen_gpus]
    return q.model_copy(update={"gpus": gpus, "gpu_counts": counts, "seen_gpus": seen}), choices


def resolve_scenarios(q: Query, run_tool: RunTool) -> tuple[Query, list[Scenario]]:
    """The Query with concrete GPUs, and one Scenario per GPU side (one with no GPU when none is named)."""
    q, choices = _resolve_gpus(q, run_tool)
    by_card = {c.chosen: c for c in choices}
    image = bool(q.model) and is_image_pipeline(q.model)
    workload = "image" if image else train_method(q) if is_training(q) else "inference"
    m = model_args(q)
    common = dict(model=m.get("model"), params_b=m.get("params_b"), workload=workload, precision=q.precision,
                  kv_precision=q.kv_precision, context_tokens=None if image else context_of(q),
                  concurrency=q.concurrent_users or q.batch, engine=q.engine, hours=q.duration_hours,
                  filters=filters_of(q))
    sides = q.gpus or [None]
    return q, [Scenario(**common, gpu=g, gpu_count=count_for(q, g) or 1, gpu_choice=by_card.get(g or ""))
               for g in sides]
