"""Compose: the typed answer (`Sections`) from the Query and this turn's tool results.

    compose(query, done) -> Sections

`done` is [(tool name, args, result dict)] as `assistant.service.registry.run_tool` returns them. Numbers
are only copied from tool results or the user's words, never computed here; every statement is a
Finding (a message code and its parameters) that the renderers put into words per language.
"""

from __future__ import annotations

import math
import re

__all__ = ["compose", "understood"]

import logging
from typing import Any

from assistant.engine.answer import CitationRef, Finding, Sections
from assistant.engine.compose.citations import cite, known_ids
from assistant.engine.compose.common import (Done, catalog_model_name, chat_text, engine_name, error_info, model_name,
                                             q_, results, set_verdict, user_number)
from assistant.engine.compose.compare import decision_part
from assistant.engine.compose.forward import (drop_repeated_defaults, image_placements_part, image_variants,
                                              levers_part, solve_part)
from assistant.engine.compose.memory import fit_part, speed_part, train_part
from assistant.engine.compose.money import cost_part, prices_part
from assistant.engine.compose.recommend import recommend_part
from assistant.engine.plan_args import named_format
from assistant.engine.intents import REQUESTS_PER_DAILY_USER
from assistant.engine.query import NUMBER_FACTS, Query
from assistant.engine.render.catalog import message
from knowledge.catalog import gpu_names, is_image_pipeline, resolve_gpu
from knowledge.prices.regions import resolve_place
from tools.errors import AdvisorError, UnknownName
from tools.units import BYTES_PER_GIB

_PARTS = {"solve": solve_part, "vram_calculator": fit_part, "speed_estimator": speed_part, "training_time": train_part,
          "cost_estimator": cost_part, "recommend_gpus": recommend_part, "price_query": prices_part,
          "way_forward": levers_part, "image_placements": image_placements_part}
_FIRST = {"fit": "vram_calculator", "speed": "speed_estimator", "compare": "speed_estimator",
          "train_time": "training_time", "cost": "cost_estimator", "recommend": "recommend_gpus",
          "prices": "price_query"}
_MAX_CITATIONS = 4
log = logging.getLogger(__name__)


def compose(query: Query, done: Done, scenarios: list[dict[str, Any]] | None = None) -> Sections:
    """The typed answer for `query` from this turn's tool calls (verdict first; see Sections); `scenarios`
    are the resolved sides (assistant/engine/scenario.py): how a GPU family was resolved is said first."""
    lang = "ur" if query.answer_lang == "ur" else "en"
    s = Sections(lang=lang, kind=query.intent, not_used=list(query.not_used), understood=understood(query, done))
    s.assumptions += [_gpu_choice(x["gpu_choice"]) for x in scenarios or [] if x.get("gpu_choice")]
    s.notices += [_out_of_range(query, x) for x in query.out_of_range]
    s.notices += [Finding(code="notice.invalid_number", params={
        "field": f"field.{f}", "value": v, "accepted": {"code": "accepted.count" if NUMBER_FACTS.get(f, (float,))[0]
                                                         is int else "accepted.positive"}})
        for f, v in query.invalid_numbers.items()]
    if query.injection:
        s.notices.append(Finding(code="notice.injection"))
    if query.daily_users and query.requests_per_day:
        s.assumptions.append(Finding(code="assume.daily_users", params={
            "users": q_(query.daily_users, "int"), "per": REQUESTS_PER_DAILY_USER,
            "total": q_(query.requests_per_day, "int")}))
    if query.images_per_day and query.images and query.images != query.images_per_day:
        s.assumptions.append(Finding(code="assume.images_month", params={
            "per_day": q_(query.images_per_day, "int"), "month": q_(query.images, "int")}))
    if query.office_hours:
        hours = query.alternatives.get("duration_hours") or query.duration_hours
        s.assumptions.append(Finding(code="assume.office_hours", params={
            "per_day": user_number(query.office_hours), "hours": q_(hours, "h")}))
    conflict = _memory_conflict(query)
    if conflict:
        s.headline.append(conflict)
        set_verdict(s, "ask")
    if query.model_elsewhere_kind:  # a closed API model or a speech model: what it is, and what can be sized
        s.headline.append(Finding(code=f"model.elsewhere_{query.model_elsewhere_kind}" +
                                  ("_beside" if query.has_model else ""), params={
                                      "name": query.model_elsewhere,
                                      "examples": ", ".join(catalog_model_name(m) for m in OPEN_ALTERNATIVES)}))
    if query.engine_implied and query.engine:
        s.assumptions.append(Finding(code="assume.engine_from_format", params={
            "engine": engine_name(query.engine), "format": (query.precision or "").upper()}))
    if query.model_assumed and query.model:
        s.notices.append(Finding(code="notice.model_assumed", params={"name": catalog_model_name(query.model)}))
    priced_api = query.unpriced_alternative == "hosted_api" and any(
        "api_comparison" in (r.get("serving") or {}) for _, r in results(done, "cost_estimator"))
    if query.unpriced_alternative and query.intent not in ("help", "out_of_scope") and not priced_api:
        s.notices.append(Finding(code=f"cost.vs_{query.unpriced_alternative}"))  # API/hardware prices: not in the data
    if query.model and query.model_text and re.fullmatch(r"[a-z]+[\s-]?\d+(?:\.\d+)?\s?b", query.model_text.strip().lower()):
        # "llama 70b": the newest catalog model of that family and size, said so
        s.assumptions.append(Finding(code="assume.family_size", params={
            "written": query.model_text, "name": catalog_model_name(query.model)}))
    if query.intent in ("help", "out_of_scope") and not _computed(done):
        s.headline.append(Finding(code=f"answer.{query.intent}"))
        return s
    _errors(query, done, s)
    _concepts(query, done, s)
    if _computed(done):
        order = [_FIRST.get(query.intent, "vram_calculator")]
        if query.solve_for:
            order.insert(0, "solve")
        variants = image_variants(query, done)  # way-forward material, not the answer's own verdict
        own = [d for i, d in enumerate(done) if i not in variants]
        for i, key in enumerate(order + [k for k in _PARTS if k not in order]):
            had = len(s.key_numbers)
            try:
                _PARTS[key](query, done if key == "image_placements" else own, s)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError):
                # a result of an unexpected shape: the rest of the answer still stands, and says so
                log.exception("compose: %s part failed", key)
                s.notices.append(Finding(code="notice.part_failed"))
            if i and key == "vram_calculator" and had:
                del s.key_numbers[had:]  # the main part's numbers stand; a check at other settings adds its verdict
        decision_part(query, done, s)
        drop_repeated_defaults(s)
        s.key_numbers = _first_of_each(s.key_numbers)
        s.explanation = [f for i, f in enumerate(s.explanation)  # one reason of each kind, the first
                         if _reason_key(f) not in {_reason_key(g) for g in s.explanation[:i]}]
        s.assumptions = [f for i, f in enumerate(s.assumptions) if f not in s.assumptions[:i]]
    elif s.verdict != "ask":
        _nothing_computed(query, done, s)
    s.citations = _citations(query, done, s)
    if s.verdict in ("ask", "error") and not _computed(done):
        s.kind = s.verdict
    return s


def _concepts(q: Query, done: Done, s: Sections) -> None:
    """The topics asked about, explained (knowledge/concepts.json via search_guide): first for an
    explanation, as the likely causes for an observation (after what the tools found)."""
    texts = [Finding(code="concept.text", params={"text": c["text"]}, passage_id=(c.get("passages") or [None])[0])
             for _, r in results(done, "search_guide") for c in r.get("concepts") or []]
    if q.observed and not (q.observed_tokens_per_s or q.observed_ttft_s) and texts:
        s.headline += texts  # "OOM at step 300, why?": the usual cause first, the memory figures under it
    elif q.explain:
        s.headline += texts
        s.kind = "explain"
        if q.model and is_image_pipeline(q.model) and q.method in ("lora", "qlora", "full", "finetune"):
            s.notices.append(Finding(code="notice.image_training_not_sized", params={"model": catalog_model_name(q.model)}))
    else:
        s.explanation += texts


def _reason_key(f: Finding) -> str:
    """Reasons of one kind say the same thing; each explained concept is its own."""
    return f.code + (str(f.params.get("text")) if f.code == "concept.text" else "")


def _gpu_choice(c: dict[str, Any]) -> Finding:
    """'A100' resolved to one card for every tool of the turn, and why."""
    return Finding(code=f"assume.gpu_choice.{c['why']}", params={
        "written": c["written"], "chosen": c["chosen"], "need": q_(c.get("need_gb") or 0, "gb"),
        "price": q_(c["usd_per_gpu_hour"], "usd_gpu_h") if c.get("usd_per_gpu_hour") else {"code": "value.unknown"},
        "others": ", ".join(c.get("others") or []), "fits_on": ", ".join(c.get("fits_on") or [])})


def _out_of_range(q: Query, what: str) -> Finding:
    """A value the understanding found out of range: the field in words and the value as given."""
    unit = next((u for f, _, u in _QUANTITIES if f == what), "")
    value = getattr(q, what, None) if what in Query.model_fields else None
    if what == "context_tokens" and value is not None:
        name = catalog_model_name(q.model) if q.model else (q.model_text or "")
        return Finding(code="notice.context_over_window", params={"value": q_(user_number(value), "tokens"),
                                                                   "model": name})
    if value is not None and not isinstance(value, (list, dict)):
        return Finding(code="notice.out_of_range_field", params={"field": f"field.{what}",
                                                                  "value": q_(user_number(value), unit)})
    return Finding(code="notice.out_of_range", params={"what": what.replace("_", " ")})


def _first_of_each(numbers: list) -> list:
    """One key number per label, in order: the main part's. Two tools may give the same label at different
    settings (the cost at the throughput-optimal batch, the speed at batch 1); the other figure stays in its
    own sentence, which names its setting, so no label shows two values."""
    seen: set[str] = set()
    out = []
    dropped_batch = False
    for k in numbers:
        key = repr(k.label)
        if "num.max_batch" in key:
            dropped_batch = key in seen
        if key not in seen and not ("num.total_at_max_batch" in key and dropped_batch):  # "at that batch": its own
            seen.add(key)
            out.append(k)
    return out


def _computed(done: Done) -> bool:
    return any(n != "search_guide" and isinstance(r, dict) and "error" not in r for n, _, r in done)


def _nothing_computed(q: Query, done: Done, s: Sections) -> None:
    guide = results(done, "search_guide")
    if q.intent == "cost" and (q.egress_gb or q.storage_gb) and not q.has_model:
        for kind, amount in (("egress", q.egress_gb), ("storage", q.storage_gb)):
            if amount:
                s.headline.append(Finding(code=f"cost.{kind}_not_costed", params={"gb": q_(user_number(amount), "gb")}))
    elif q.explain and any(r.get("concepts") for _, r in guide):
        s.kind = "explain"  # the concept asked about is the answer: no GPU to ask for
    elif q.intent in ("speed", "compare", "train_time") and not q.has_gpu:
        s.headline.append(Finding(code="ask.gpu"))
        s.verdict = "ask"
    elif q.intent in ("fit", "recommend", "cost", "train_time", "speed") and not q.has_model and not q.model_elsewhere:
        s.headline.append(Finding(code="ask.model"))
        s.verdict = "ask"
    elif guide and any(r.get("passages") for _, r in guide):
        s.kind = "guide"
    elif not s.headline and not s.notices:
        s.headline.append(Finding(code="answer.out_of_scope"))


def _errors(q: Query, done: Done, s: Sections) -> None:
    """Unknown names asked back with the closest known ones; invalid values named; nothing guessed."""
    seen: set[str] = set()
    computed = _computed(done)
    for name, a, r in done:
        if not isinstance(r, dict) or "error" not in r:
            continue
        info = error_info(r)
        key = repr(sorted((k, str(v)) for k, v in info.items()))
        if key in seen:
            continue
        seen.add(key)
        kind = info.get("type")
        if kind in ("UnknownModel", "UnknownGpu", "Ambiguous"):
            code = {"UnknownModel": "ask.unknown_model", "UnknownGpu": "ask.unknown_gpu",
                    "Ambiguous": "ask.ambiguous"}[kind]
            close = info.get("suggestions") or []
            f = Finding(code=code if close else code + "_noclose",
                        params={"name": info.get("name", ""), "close": close})
            (s.notices if computed else s.headline).append(f)
            if not computed:
                s.verdict = "ask"
        elif kind == "InvalidInput":
            field = str(info.get("field", ""))
            s.notices.append(Finding(code="error.invalid", params={
                "field": f"field.{field}" if field.isidentifier() else chat_text(field),
                "value": _as_written(info.get("value", "")),
                "accepted": chat_text(str(info.get("accepted", "")))}))
            if not computed:
                s.verdict = "error"
        elif info.get("missing") == "dataset":
            s.notices.append(Finding(code="ask.dataset"))  # a training time needs the data's size
            if not computed:
                s.verdict = "ask"
        else:
            s.notices.append(Finding(code="error.other", params={"text": chat_text(info.get("message", ""))}))
            if not computed:
                s.verdict = "error"
    _unknown_names_from_query(q, s, seen_names={str(f.params.get("name", "")).lower() for f in s.headline + s.notices})


def _as_written(v: Any) -> str:
    """A rejected value as a person writes it: 2,000,000 rather than 2000000.0."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return f"{v:,.0f}" if float(v).is_integer() else f"{v:,}"
    return str(v).strip("'\"")


def _unknown_names_from_query(q: Query, s: Sections, seen_names: set[str]) -> None:
    """Names the understanding could not resolve, asked back even when no tool ran for them."""
    if q.model_unknown and q.params_b and not q.model:
        s.assumptions.append(Finding(code="assume.unknown_model_size", params={"name": q.model_unknown,
                                                                              "b": f"{q.params_b:g}B"}))
    elif q.model_unknown and q.model_unknown.lower() not in seen_names:
        close = _close("model", q.model_unknown)
        s.headline.append(Finding(code="ask.unknown_model" if close else "ask.unknown_model_noclose",
                                  params={"name": q.model_unknown, "close": close}))
        s.verdict = "ask"
    for g in q.gpu_unknown:
        if g.lower() not in seen_names:
            close = _close("gpu", g)
            s.notices.append(Finding(code="ask.unknown_gpu" if close else "ask.unknown_gpu_noclose",
                                     params={"name": g, "close": close}))
            set_verdict(s, "ask")


def _close(kind: str, name: str) -> list[str]:
    """Closest catalog names, as the catalog's resolver suggests them."""
    from knowledge import catalog

    try:
        (catalog.resolve_model if kind == "model" else catalog.resolve_gpu)(name)
    except UnknownName as exc:
        return list(exc.suggestions)[:5]
    except AdvisorError:
        return []
    return []


def _understood_settings(q: Query) -> list[Finding]:
    """The method, precisions, engine and optimizer understood (both sides when two are weighed)."""
    out: list[Finding] = []
    if q.method:
        out.append(Finding(code="u.method", params={"method": {"code": f"term.{q.method}"}}))
    weighed = q.setting_alternatives if "compare" in q.intents else {}
    for field, code, v in (("precision", "u.precision", named_format(q)), ("kv_precision", "u.kv_precision", q.kv_precision)):
        if v:
            out.append(Finding(code=code, params={"v": v}))
            for w in (weighed.get(field), weighed.get("quant_format") if field == "precision" else None):
                if w:  # "fp16 vs fp8", "awq vs gptq": both sides
                    out.append(Finding(code=code, params={"v": w}))
    if q.engine:
        out.append(Finding(code="u.engine", params={"v": engine_name(q.engine)}))
        if "engine" in weighed:
            out.append(Finding(code="u.engine", params={"v": engine_name(weighed["engine"])}))
    if q.optimizer:
        out.append(Finding(code="u.optimizer", params={"v": q.optimizer}))
    return out


def understood(q: Query, done: Done | None = None) -> list[Finding]:
    """One line of what was understood (and what was carried over from earlier turns); none for an aside."""
    out: list[Finding] = []
    if q.intents in (["out_of_scope"], ["help"]):
        return out
    name = next((model_name(r) for _, r in results(done or [], "vram_calculator", "training_time", "speed_estimator")
                 if model_name(r)), None)
    if q.model or q.model_text:
        out.append(Finding(code="u.model", params={"name": name or (catalog_model_name(q.model) if q.model
                                                                     else q.model_text)}))
    elif q.params_b:
        out.append(Finding(code="u.params", params={"b": f"{q.params_b:g}B"}))
    if q.other_models and "compare" in q.intents:
        out += [Finding(code="u.model", params={"name": catalog_model_name(m)}) for m in q.other_models]
    out += _understood_settings(q)
    if q.gpus:
        def n(g: str) -> str:
            k = q.gpu_counts.get(g) or q.gpu_count
            return f"{k} x " if k and (k > 1 or q.gpu_counts) else ""
        out.append(Finding(code="u.gpus", params={"names": [n(g) + g for g in q.gpus]}))
    elif q.gpu_count:
        out.append(Finding(code="u.gpu_count", params={"n": q.gpu_count}))
    if q.gpu_memory_gb:
        gb = int(q.gpu_memory_gb) if float(q.gpu_memory_gb).is_integer() else q.gpu_memory_gb
        out.append(Finding(code="u.gpu_memory", params={"gb": q_(gb, "gb")}))
    out += _quantities(q)
    if q.providers:
        out.append(Finding(code="u.providers", params={"names": list(q.providers)}))
    if q.regions:
        out.append(Finding(code="u.regions", params={"names": [region_label(r) for r in q.regions]}))
    if q.both_pricing:
        out.append(Finding(code="u.both_pricing"))
    elif q.spot is not None:
        out.append(Finding(code="u.spot" if q.spot else "u.on_demand"))
    if q.grad_checkpointing is not None:
        out.append(Finding(code="u.checkpointing",
                           params={"v": {"code": "term.on" if q.grad_checkpointing else "term.off"}}))
    if q.solve_for:
        out.append(Finding(code="u.solve_for", params={"what": {"code": f"term.{q.solve_for}"}}))
    if q.changed:
        out.append(Finding(code="u.changed", params={"items": [
            {"code": "u.changed_item", "params": {"field": {"code": _CARRIED_LABEL.get(f, f"field.{f}")},
                                                  "was": _was(f, v)}} for f, v in q.changed.items()]}))
    if q.carried:
        out.append(Finding(code="u.carried", params={"fields": [{"code": _CARRIED_LABEL.get(f, f"field.{f}")}
                                                                for f in q.carried]}))
    return out


# open-weight models of the catalog named as what can be sized instead of a closed one (no ranking implied)
OPEN_ALTERNATIVES = ("llama-3.3-70b", "qwen2.5-72b", "mistral-small-24b")


def _memory_conflict(q: Query) -> Finding | None:
    """"An H100 with 24 GB": no card of that name has that memory (more than a tenth off every variant): the
    sizes it comes in, and which card is meant, asked; the figures are for the card the name means."""
    if not (q.gpu_memory_gb and len(q.gpus) == 1) or q.followup:
        return None
    _, families = gpu_names()
    try:
        family = resolve_gpu(q.gpus[0]).gpu.family or q.gpus[0]
    except AdvisorError:  # a name the catalog does not know has no sizes to weigh
        return None
    members = families.get(re.sub(r"[^a-z0-9]", "", family.lower()), [])
    sizes = sorted({m.memory_gib for m in members if m.memory_gib})
    gb_per_gib = BYTES_PER_GIB / 1e9  # a size said in GB or in GiB
    if not sizes or any(abs(g - q.gpu_memory_gb) <= 0.1 * g or abs(g * gb_per_gib - q.gpu_memory_gb) <= 0.1 * g
                        for g in sizes):
        return None
    more = all(g > q.gpu_memory_gb for g in sizes)
    return Finding(code="ask.gpu_memory_conflict_" + ("more" if more else "other"), params={
        "gpu": family, "gb": q_(user_number(q.gpu_memory_gb), "gb"), "names": ", ".join(m.name for m in members)})


def region_label(word: str) -> str:
    """A region word as the answer names it: its group or country ("eu" -> "the EU/EEA"), else as written."""
    place = resolve_place(word)
    return place.label if place.continents or place.countries else word


def _was(field: str, v: Any) -> Any:
    """An earlier value as the answer shows it: a yes/no as a word, a model by its name, a number as written."""
    if isinstance(v, bool):
        return {"code": "term.on" if v else "term.off"}
    if field == "model" and isinstance(v, str):
        return catalog_model_name(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


_CARRIED_LABEL = {"gpus": "field.gpu", "gpu_unknown": "field.gpu", "model_unknown": "field.model"}
_QUANTITIES = (("context_tokens", "u.context", "tokens"), ("prompt_tokens", "u.prompt", "tokens"),
               ("output_tokens", "u.output", "tokens"), ("batch", "u.batch", "int"),
               ("concurrent_users", "u.users", "int"),
               ("examples", "u.examples", "int"), ("tokens_per_example", "u.tokens_per_example", "tokens"),
               ("dataset_tokens", "u.dataset_tokens", "tokens"), ("generated_tokens", "u.generated_tokens", "tokens"),
               ("epochs", "u.epochs", "int"),
               ("budget_usd_total", "u.budget_total", "usd"), ("budget_usd_per_hour", "u.budget_hour", "usd_h"),
               ("price_usd_per_gpu_hour", "u.price_hour", "usd_h"), ("spot_price_usd_per_gpu_hour", "u.spot_price", "usd_h"),
               ("api_usd_per_million_tokens", "u.api_price", "usd_mtok"), ("checkpoint_every_hours", "u.checkpoint", "h"),
               ("deadline_hours", "u.deadline", "h"), ("min_tokens_per_s", "u.speed_target", "tok_s"),
               ("tokens_per_day", "u.tokens_per_day", "tokens"),
               ("daily_users", "u.daily_users", "int"), ("requests_per_day", "u.requests_per_day", "int"), ("requests_per_hour", "u.requests_per_hour", "int"),
               ("requests_per_minute", "u.requests_per_minute", "int"),
               ("host_ram_gb", "u.host_ram", "gb"),
               ("lora_rank", "u.lora_rank", "int"), ("storage_gb", "u.storage", "gb"), ("egress_gb", "u.egress", "gb"),
               ("duration_hours", "u.duration", "h"), ("images_per_day", "u.images_per_day", "int"),
               ("images", "u.images", "int"),
               ("resolution", "u.resolution", "int"),
               ("steps", "u.steps", "int"))


def _quantities(q: Query) -> list[Finding]:
    out = []
    for field, code, unit in _QUANTITIES:
        v = getattr(q, field)
        if v is not None:
            if isinstance(v, float) and v.is_integer():
                v = int(v)  # as the user said it: 80 GB, 3 epochs, $100
            if field in ("duration_hours", "checkpoint_every_hours") and v < 1 and abs(v * 60 - round(v * 60)) < 1e-6:
                v, unit = round(v * 60), "min"  # a run given in minutes stays in minutes
            if field == "concurrent_users" and v == 1:
                code = "u.one_user"  # "a single user": no count to read as a plural
            elif field == "concurrent_users" and not q.users_at_once:
                code = "u.users_online"  # "for 40 developers": users, not generations at once (Little's law)
            elif field == "examples" and q.method == "inference":
                code = "u.prompts"  # a generation job's rows are prompts to run, not training examples
            out.append(Finding(code=code, params={"v": q_(v, unit)}))
            if field in q.alternatives:  # "4k vs 32k context": the second value, weighed beside the first
                alt = q.alternatives[field]
                out.append(Finding(code=code, params={"v": q_(int(alt) if float(alt).is_integer() else alt, unit)}))
    return out


def _citations(q: Query, done: Done, s: Sections) -> list[CitationRef]:
    """Guide quotes: the searched passages (best sentence for the question), then the passages the
    answer's statements rest on (best sentence for that statement); only ids that exist."""
    ids = known_ids()
    out: list[CitationRef] = []
    explained = any(r.get("concepts") for _, r in results(done, "search_guide"))
    for _, r in ([] if explained else results(done, "search_guide")):  # a topic explained: no loose quotes
        for p in (r.get("passages") or [])[:2]:
            c = cite(p.get("id", ""), q.text, s.lang) if p.get("id") in ids else None
            if c and all(x.id != c.id for x in out):
                out.append(c)
    claims: list[Finding] = s.explanation + s.headline + s.notices + s.assumptions + [o.title for o in s.way_forward]
    for f in claims:
        pid = f.passage_id
        if pid and pid in ids and all(c.id != pid for c in out) and len(out) < _MAX_CITATIONS:
            about = message("en", f.code, f.params) + " " + q.text
            c = cite(pid, about, s.lang)
            if c:
                out.append(c)
    for f in claims:  # a statement may not point at a passage the guides do not have
        if f.passage_id and f.passage_id not in ids:
            f.passage_id = None
    return out[:_MAX_CITATIONS]

