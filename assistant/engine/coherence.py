"""The coherence guard: invariants an answer must hold, checked on every turn beside the grounding guard.

    check(scenarios, done) -> {"ok": bool, "violations": [{"rule", "detail"}]}

Each rule reads the resolved scenarios (scenario.py) and this turn's tool calls, never the rendered text:
- `one_gpu`: every tool that checks, times or prices a named card uses a card of the scenarios (a
  recommendation or the way forward may name others);
- `filters`: every offer a tool returns for the answer is in the regions and providers asked for, and
  no spot offer is used when the user ruled spot out;
- `per_user_speed`: the speed for one user is at most the total throughput of the batch;
- `tensor_parallel`: a tensor-parallel degree divides the model's attention heads (a layer split, llama.cpp's,
  takes any GPU count).
A violation is a defect to fix: `benchmarks/` counts them over the evaluation questions (target 0).
"""

from __future__ import annotations

__all__ = ["check"]

from typing import Any

from knowledge.catalog import resolve_engine, resolve_model
from knowledge.prices.regions import locate, resolve_place
from tools.errors import AdvisorError

_CHECKED = ("vram_calculator", "speed_estimator", "cost_estimator", "training_time")
_FREE_TO_NAME = ("recommend_gpus", "way_forward", "solve_for", "search_guide", "job_replicas")


def _offers(name: str, r: dict[str, Any]) -> list[dict[str, Any]]:
    if name == "price_query":
        return [o for o in r.get("offers") or [] if isinstance(o, dict)]
    if name == "cost_estimator":
        return [o for o in (r.get("offer"),) if isinstance(o, dict)]
    if name == "recommend_gpus":
        return [o["offer"] for o in r.get("options") or [] if isinstance(o, dict) and isinstance(o.get("offer"), dict)]
    return []


def _in_regions(offer: dict[str, Any], regions: list[str]) -> bool:
    if not regions or not offer.get("region"):
        return True
    place = locate(offer.get("provider", ""), offer.get("region"))
    for word in regions:
        want = resolve_place(word)
        continents, countries = set(getattr(want, "continents", ()) or ()), set(getattr(want, "countries", ()) or ())
        if not continents and not countries:
            return True  # a substring of region names: the price tool matched it itself
        if place.continent in continents or place.country in countries:
            return True
    return False


def _gpu_rule(scenarios: list[dict[str, Any]], done: list[Any]) -> list[dict[str, str]]:
    cards = {s["gpu"] for s in scenarios if s.get("gpu")}
    if not cards:
        return []
    out = []
    for name, args, r in done:
        if name in _CHECKED and args.get("gpu") and args["gpu"] not in cards and isinstance(r, dict) \
                and "error" not in r:
            out.append({"rule": "one_gpu", "detail": f"{name} ran on {args['gpu']}, the answer is about "
                                                     f"{', '.join(sorted(cards))}"})
    return out


def _filter_rule(scenarios: list[dict[str, Any]], done: list[Any]) -> list[dict[str, str]]:
    if not scenarios:
        return []
    f = scenarios[0].get("filters") or {}
    regions, providers, spot = f.get("regions") or [], {p.lower() for p in f.get("providers") or []}, f.get("spot")
    out = []
    for name, args, r in done:
        if not isinstance(r, dict) or args.get("region") is None and name == "price_query" and regions:
            continue  # a relaxed lookup (the filter dropped on purpose, and said so) is not shown as a match
        for o in _offers(name, r):
            if not _in_regions(o, regions):
                out.append({"rule": "filters", "detail": f"{name}: {o.get('provider')} {o.get('region')} is outside "
                                                         f"{', '.join(regions)}"})
            if providers and str(o.get("provider", "")).lower() not in providers and args.get("provider"):
                out.append({"rule": "filters", "detail": f"{name}: provider {o.get('provider')} was not asked for"})
        if spot is False and args.get("pricing") == "spot":
            out.append({"rule": "filters", "detail": f"{name}: spot prices used though spot was ruled out"})
    return out


def _heads(model: Any) -> int | None:
    try:
        return resolve_model(str(model)).num_attention_heads if model else None
    except AdvisorError:
        return None


def _layer_split(engine: Any) -> bool:
    try:
        return bool(engine) and resolve_engine(str(engine)).multi_gpu == "layer"
    except AdvisorError:
        return False


def _speed_rule(done: list[Any]) -> list[dict[str, str]]:
    out = []
    for name, args, r in done:
        if name != "speed_estimator" or not isinstance(r, dict):
            continue
        one, total = r.get("decode_tokens_per_s"), r.get("aggregate_tokens_per_s")
        if isinstance(one, (int, float)) and isinstance(total, (int, float)) and one > total * 1.0001:
            out.append({"rule": "per_user_speed", "detail": f"{one:.1f} tok/s per user above {total:.1f} in total"})
        tp, heads = (r.get("inputs") or {}).get("gpus"), _heads((r.get("inputs") or {}).get("model"))
        split_by_layers = _layer_split(r.get("engine"))  # llama.cpp splits layers: any GPU count
        if isinstance(tp, int) and isinstance(heads, int) and tp > 1 and heads % tp and not split_by_layers:
            out.append({"rule": "tensor_parallel", "detail": f"{tp}-way tensor parallelism over {heads} heads"})
    return out


def check(scenarios: list[dict[str, Any]], done: list[Any]) -> dict[str, Any]:
    """The guard's verdict on one turn (see the module docstring)."""
    violations = _gpu_rule(scenarios, done) + _filter_rule(scenarios, done) + _speed_rule(done)
    return {"ok": not violations, "violations": violations}
