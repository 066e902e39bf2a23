"""Choosing: guide passages, recommendations, solving for the unknown and the way forward."""

from __future__ import annotations

from typing import Any

from knowledge.catalog import (load_gpus, load_models, load_training_efficiency,
                               resolve_engine)
from assistant.service.images import image_recommend
from knowledge.catalog import is_image_pipeline
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import PriceQuery, validated
from assistant.service.models import sizing, resolve_model_arch
from assistant.service.offers import offers_and_billing, price_db, providers_in_data


def guide(question: str, lang: str | None = None, k: int = 3) -> list[Any]:
    """Guide passages that answer `question`, in its language (or `lang`)."""
    from knowledge.guide_index import search_guide

    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("question", question, "a question in English or Urdu")
    if lang is not None and lang not in ("en", "ur"):
        raise InvalidInput("lang", lang, "en or ur")
    if not isinstance(k, int) or not 1 <= k <= 10:
        raise InvalidInput("k", k, "an integer from 1 to 10")
    return search_guide(question[:4000], lang, k)


def recommend(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
              providers: list[str] | None = None, regions: list[str] | None = None, **goal: Any) -> Any:
    """Ranked GPU options for serving or fine-tuning `model`, with reasons and what was ruled out.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools.recommend import RecommendRequest, recommend as _recommend

    if config is None and params_b is None and is_image_pipeline(model):
        return image_recommend(model=model, providers=providers, regions=regions, **goal)
    arch = resolve_model_arch(model, config, params_b)
    if goal.get("examples") is not None or goal.get("tokens_per_example") is not None:
        ex, tpe = goal.pop("examples", None), goal.pop("tokens_per_example", None)
        if ex is None or tpe is None:
            raise InvalidCombination("give --examples N together with --tokens-per-example T")
        for name, v in (("examples", ex), ("tokens_per_example", tpe)):
            if not isinstance(v, int) or not 1 <= v <= 10**12:
                raise InvalidInput(name, v, "a whole number from 1 to 1,000,000,000,000")
        goal["dataset_tokens"] = float(ex) * tpe
        if goal.get("seq_len") is None:  # examples of ~T tokens are trained as sequences of T tokens
            goal["seq_len"] = tpe
    if goal.get("precisions") is not None:
        from tools.units import weight_format
        for p in goal["precisions"]:
            try:
                weight_format(p)
            except KeyError:
                raise InvalidInput("precision", p, "bf16, fp16, fp8, int8, int4, q4_k_m, q8_0 ...") from None
    req = validated(RecommendRequest, **{k: v for k, v in goal.items() if v is not None})
    if req.workload == "serve":
        validated_traffic(req)
    eng = resolve_engine(req.engine)
    providers, absent = providers_in_data(providers) if providers else (providers, [])
    offers, data_note, gpus, billing = offers_and_billing(providers, regions)
    rec = _recommend(arch, req, offers, gpus, eng, load_training_efficiency(), billing, _marketplaces())
    rec.not_in_data = absent + rec.not_in_data
    dates = sorted({o["offer"]["as_of"] for o in rec.options if o["offer"]["as_of"]})
    rec.assumptions.append(data_note if offers else "No offer matched the provider/region filters.")
    if arch.rough:
        rec.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return rec.model_copy(update={"chart": rec.chart | {"as_of": dates}})


def validated_traffic(req: Any) -> Any:
    """The request's traffic (tools.load.TrafficRequest), validated with a message naming the values."""
    from tools.load import TRAFFIC_FIELDS, TrafficRequest

    given = {k: getattr(req, k) for k in TRAFFIC_FIELDS if getattr(req, k) is not None}
    return validated(TrafficRequest, **given) if given.keys() - {"peak_factor", "think_time_s"} else None


def _marketplaces() -> frozenset[str]:
    """Providers that are marketplaces of third-party hosts (knowledge/providers.csv `marketplace`)."""
    from knowledge.catalog import load_providers

    return frozenset(p for p, f in load_providers().items() if str(f.get("marketplace", "")).lower() == "yes")


def solve(*, unknown: str, model: str | None = None, config: str | None = None, params_b: float | None = None,
          gpu: str | None = None, gpu_memory_gb: float | None = None, max_gpus: int = 64,
          headroom_fraction: float = 0.0, providers: list[str] | None = None, regions: list[str] | None = None,
          apply_defaults: bool = True, **request: Any) -> Any:
    """Solve for the unknown (tools.solve): max_context | max_batch | min_gpu_count | min_gpu_memory |
    best_gpu_by_cost. `request`: VramRequest fields (method, weight_precision, seq_len, batch ...), or for
    best_gpu_by_cost the recommend goal (workload, context_tokens, concurrent_users, method, dataset_tokens ...).
    Practitioner defaults fill what the user did not set (see `levers`); the result's findings say which.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools import solve as s

    if unknown == "best_gpu_by_cost":
        from tools.recommend import RecommendRequest

        arch = resolve_model_arch(model, config, params_b)
        req = validated(RecommendRequest, **{k: v for k, v in request.items() if v is not None})
        providers, absent = providers_in_data(providers) if providers else (providers, [])
        offers, _, gpus, billing = offers_and_billing(providers, regions)
        res = s.best_gpu_by_cost(arch, req, offers, gpus, resolve_engine(req.engine), load_training_efficiency(),
                                 billing, _marketplaces())
        return res.model_copy(update={"details": res.details | ({"not_in_data": absent} if absent else {})})
    from tools.levers import apply_practitioner_defaults

    solvers = {"max_context": s.max_context_that_fits, "max_batch": s.max_batch_that_fits}
    if unknown == "max_params":
        return _largest_model(gpu, gpu_memory_gb, headroom_fraction, apply_defaults, request)
    if unknown not in (*solvers, "min_gpu_count", "min_gpu_memory"):
        raise InvalidInput("unknown", unknown,
                           "max_context, max_batch, max_params, min_gpu_count, min_gpu_memory, best_gpu_by_cost")
    arch, vreq, _, mem = sizing(model, config, params_b, gpu, gpu_memory_gb, request)
    applied = []
    if apply_defaults:
        vreq, applied = apply_practitioner_defaults(vreq)
    if unknown == "min_gpu_memory":
        res = s.min_gpu_memory(arch, vreq, list(load_gpus()), headroom_fraction)
    elif mem is None:
        raise InvalidCombination(f"solving for {unknown} needs the GPU (--gpu NAME) or its memory (gpu_memory_gb)")
    elif unknown == "min_gpu_count":
        res = s.min_gpu_count(arch, vreq, mem, max_gpus, headroom_fraction)
    else:
        res = solvers[unknown](arch, vreq, mem, headroom_fraction)
    return res.model_copy(update={"findings": applied + res.findings})


def _largest_model(gpu: str | None, gpu_memory_gb: float | None, headroom_fraction: float, apply_defaults: bool,
                   request: dict[str, Any]) -> Any:
    """The largest model that fits on the GPU at the request's settings, and the catalog's language models
    that fit (tools.solve.largest_model_that_fits)."""
    from tools import solve as s
    from tools.levers import apply_practitioner_defaults

    _, vreq, _, mem = sizing(None, None, 1.0, gpu, gpu_memory_gb, request)
    if mem is None:
        raise InvalidCombination("solving for the largest model needs the GPU (--gpu NAME) or its memory (gpu_memory_gb)")
    applied = []
    if apply_defaults:
        vreq, applied = apply_practitioner_defaults(vreq)
    res = s.largest_model_that_fits(vreq, mem, [(m.name, m) for m in load_models()], headroom_fraction)
    return res.model_copy(update={"findings": applied + res.findings})


def levers(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
           gpu: str | None = None, gpu_memory_gb: float | None = None, engine: str | None = None,
           goal: dict[str, Any] | None = None, apply_defaults: bool = True, **request: Any) -> Any:
    """The way forward (tools.levers.find_levers) for `request` on `gpu`, each lever with its cheapest
    on-demand offer. `goal`: LeverGoal fields (min_tokens_per_s_per_user, deadline_hours, budget_usd,
    dataset_tokens, epochs, max_gpus ...). Each GPU is priced at its cheapest on-demand GPU-hour in the
    catalog (a budget is judged at that price, and a bigger GPU is the cheapest that works). With no
    GPU named (a recommendation that found nothing), the levers start from the catalog GPU with the
    most memory that has an offer. Practitioner defaults (checkpointing for fine-tuning, double quant
    for QLoRA) fill what the user did not set, and `defaults_applied` says which.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools.levers import LeverGoal, apply_practitioner_defaults, find_levers

    if goal is not None and not isinstance(goal, dict):
        raise InvalidInput("goal", goal, "a mapping of min_tokens_per_s_per_user, deadline_hours, budget_usd, "
                           "dataset_tokens, epochs, max_gpus ...")
    db = price_db()
    cheapest = _cheapest_gpu_hour(db)
    if gpu is None and gpu_memory_gb is None:
        offered = [g for g in load_gpus() if g.id in cheapest and g.memory_gb]
        if not offered:
            raise InvalidCombination("the way forward needs the GPU (gpu) or its memory (gpu_memory_gb)")
        gpu = max(offered, key=lambda g: (g.memory_gb or 0, -cheapest[g.id])).name
    arch, vreq, spec, mem = sizing(model, config, params_b, gpu, gpu_memory_gb, request)
    if spec is None:  # "a 12 GB card": a GPU of that memory and nothing else known (no speed levers)
        from tools.schemas import GpuSpec

        spec = GpuSpec(id="memory-only", name=f"a {gpu_memory_gb:g} GB GPU", memory_gib=gpu_memory_gb)
    applied = []
    if apply_defaults:
        vreq, applied = apply_practitioner_defaults(vreq)
    g = validated(LeverGoal, **{k: v for k, v in (goal or {}).items() if v is not None})
    if not g.usd_per_gpu_hour:
        g = g.model_copy(update={"usd_per_gpu_hour": cheapest})
    res = find_levers(arch, vreq, spec, goal=g, gpus_catalog=list(load_gpus()),
                      engine=resolve_engine(engine), mfu_table=load_training_efficiency())
    by_name = {x.name: x.id for x in load_gpus()}
    for lv in res.levers:
        n = int(lv.params.get("gpus", vreq.gpus))
        found = db.query(PriceQuery(gpus=n, pricing="on-demand", limit=1), [by_name.get(lv.gpu, spec.id)]).offers
        lv.offer = found[0].to_contract() if found else None
    return res.model_copy(update={"defaults_applied": applied})


def _cheapest_gpu_hour(db: Any) -> dict[str, float]:
    """{gpu id: cheapest on-demand price per GPU-hour} over the whole catalog (one lookup per GPU, as
    the catalog holds more offers than one query returns); kept until the price file changes."""
    import os

    path = str(getattr(db, "path", ""))
    try:
        stamp = (path, os.stat(path).st_mtime_ns)
    except OSError:
        stamp = (path, 0)
    if _CHEAPEST.get("stamp") != stamp:
        cheapest: dict[str, float] = {}
        for g in load_gpus():
            rows = db.query(PriceQuery(pricing="on-demand", sort="gpu-hour", limit=1), [g.id]).offers
            if rows and rows[0].price_usd_per_gpu_hour is not None:
                cheapest[g.id] = rows[0].price_usd_per_gpu_hour
        _CHEAPEST.clear()
        _CHEAPEST.update({"stamp": stamp, "prices": cheapest})
    return dict(_CHEAPEST["prices"])


_CHEAPEST: dict[str, Any] = {}
