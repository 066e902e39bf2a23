"""Answer parts for the way forward (tools/levers.py results) and solved unknowns (tools/solve.py results)."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Option, Sections, Table
from assistant.engine.compose.common import Done, catalog_model_name, kn, q_, set_verdict
from assistant.engine.compose.memory import vram_assumptions
from assistant.engine.query import Query

_COMPONENTS = ("weights", "kv_cache", "activations", "gradients", "optimizer", "cuda_context", "logits",
               "lora_adapters", "quantization_constants", "dequant_workspace")


def _lever_title(code: str, params: dict[str, Any]) -> Finding:
    parts = code.split("+")
    p = _lever_params(params)
    if len(parts) == 1:
        return Finding(code=f"lever.{code}", params=p)
    if len(parts) == 2:
        return Finding(code="lever.combo", params={"a": {"code": f"lever.{parts[0]}", "params": p},
                                                   "b": {"code": f"lever.{parts[1]}", "params": p}})
    return Finding(code="lever.stack", params={"items": _lever_names(parts, params)})


def _lever_names(codes: list[str], params: dict[str, Any]) -> list[dict[str, Any]]:
    """Lever titles as phrases; "n GPUs" and "a bigger GPU: X" read as one "n x X" when both are there."""
    p = _lever_params(params)
    out = [{"code": f"lever.{c}", "params": p} for c in codes if c not in ("bigger_gpu", "as_given")]
    if "bigger_gpu" in codes and p.get("gpu"):
        n = p.get("gpus") or 1
        out = [x for x in out if not x["code"].startswith("lever.more_gpus")]
        how = next((c for c in codes if c.startswith("more_gpus")), None)
        out.append({"code": "lever.on_gpus", "params": {"n": n, "gpu": p["gpu"],
                                                         "how": {"code": f"term.{how}"} if how else ""}})
    return out


def _lever_params(p: dict[str, Any]) -> dict[str, Any]:
    out = dict(p)
    if "seq_len" in p:
        out["seq_len"] = q_(p["seq_len"], "tokens")
    if "weight_precision" in p and p["weight_precision"]:
        out["precision"] = p["weight_precision"]
    if "grad_accumulation_steps" in p:
        out["steps"] = p["grad_accumulation_steps"]
    return out


def _lever_option(lv: dict[str, Any]) -> Option:
    nums = [kn("num.memory_per_gpu", {"code": "value.of", "params": {"a": q_(lv.get("memory_gb"), "gb"),
                                                                      "b": q_(lv.get("gpu_memory_gb"), "gb")}})]
    if lv.get("headroom_gb") is not None:
        nums.append(kn("num.headroom", lv["headroom_gb"], "gb"))
    if lv.get("tokens_per_s_per_user") is not None:
        nums.append(kn("num.per_user", lv["tokens_per_s_per_user"], "tok_s"))
    if lv.get("hours") is not None:
        nums.append(kn("num.hours", lv["hours"], "h"))
    if lv.get("cost_usd") is not None:
        nums.append(kn("num.job_cost", lv["cost_usd"], "usd"))
    if lv.get("gpu") and "gpu" in (lv.get("params") or {}):
        nums.append(kn("num.gpu", lv["gpu"]))
    return Option(title=_lever_title(lv.get("code", ""), lv.get("params") or {}), numbers=nums, offer=lv.get("offer"))


def levers_part(q: Query, done: Done, s: Sections) -> None:
    said_nothing = False
    for name, a, r in done:
        if name != "way_forward" or not isinstance(r, dict) or "error" in r:
            continue
        base = r.get("baseline") or {}
        problem = r.get("problem", "")
        s.assumptions += practitioner_defaults(r.get("defaults_applied"))
        if problem == "fits":
            continue
        if not s.headline and base:
            s.headline.append(Finding(code=f"lever.problem_{problem}", params={
                "memory": q_(base.get("memory_gb"), "gb"), "gpu": base.get("gpu", ""),
                "gpu_gb": q_(base.get("gpu_memory_gb"), "gb"), "per": q_(base.get("tokens_per_s_per_user"), "tok_s"),
                "hours": q_(base.get("hours"), "h"), "usd": q_(base.get("cost_usd"), "usd")}))
            set_verdict(s, "no")
        levers = r.get("levers") or []
        nothing = r.get("nothing_works")
        if not levers and nothing and not said_nothing:
            s.headline.append(nothing_finding(q, a, nothing))
            said_nothing = True
        elif not levers and not nothing and not said_nothing:
            s.notices.append(Finding(code="lever.none_found"))
            said_nothing = True
        titles = {o.title.model_dump_json() for o in s.way_forward}
        for lv in levers:
            o = _lever_option(lv)
            if len(s.way_forward) < 3 and o.title.model_dump_json() not in titles:
                s.way_forward.append(o)


_NOTHING = {"too_slow": ("forward.nothing_fast_enough", "tok_s"), "past_deadline": ("forward.nothing_in_time", "h"),
            "over_budget": ("forward.nothing_in_budget", "usd")}


def nothing_finding(q: Query, a: dict[str, Any], f: dict[str, Any]) -> Finding:
    """The levers' `nothing_works` finding said plainly: what was tried, on what, and the numbers."""
    p = f.get("params") or {}
    levers = _lever_names(list(p.get("levers") or []), p.get("lever_params") or {})
    where = {"n": p.get("gpus") or 1, "gpu": p.get("gpu", "")}
    if p.get("problem") in _NOTHING:
        code, unit = _NOTHING[p["problem"]]
        target = {"too_slow": q.min_tokens_per_s or a.get("min_tokens_per_s_per_user"),
                  "past_deadline": q.deadline_hours or a.get("deadline_hours"),
                  "over_budget": q.budget_usd_total or a.get("budget_usd")}[p["problem"]]
        return Finding(code=code, params=where | {"best": q_(p.get("best"), unit), "target": q_(target, unit),
                                                  "levers": levers})
    return Finding(code="forward.nothing_fits" if levers else "forward.nothing_fits_plain", params=where | {
        "levers": levers, "memory": q_(p.get("memory_gb"), "gb"), "gpu_gb": q_(p.get("gpu_memory_gb"), "gb"),
        "part": _limit(str(p.get("largest_component", ""))), "part_gb": q_(p.get("largest_gb"), "gb")})


_LABEL_OF_FIELD = {"grad_checkpointing": "num.checkpointing", "double_quant": "num.double_quant",
                   "weight_precision": "num.weight_precision"}


def drop_repeated_defaults(s: Sections) -> None:
    """A value said as a practitioner default is not said again as a plain default."""
    said = {_LABEL_OF_FIELD.get(str(f.params.get("field", "")).removeprefix("field."))
            for f in s.assumptions if f.code == "assume.practitioner_default"}
    s.assumptions = [f for f in s.assumptions if not (f.code == "assume.default" and f.params.get("label") in said)]


def practitioner_defaults(findings: list[dict[str, Any]] | None) -> list[Finding]:
    """`default_applied` findings of the tools: what practitioners run, said as such."""
    out = []
    for f in findings or []:
        if f.get("code") != "default_applied":
            continue
        p = f.get("params") or {}
        v = p.get("value")
        val = {"code": "term.on" if v else "term.off"} if isinstance(v, bool) else v
        out.append(Finding(code="assume.practitioner_default",
                           params={"field": f"field.{p.get('field', '')}", "value": val}))
    return out


def _limit(limited_by: str) -> dict[str, Any]:
    if limited_by in _COMPONENTS:
        return {"code": f"comp.{limited_by}"}
    return {"code": f"limit.{limited_by}"}


# The value solved for is the answer, not an assumption.
_SOLVED_LABELS = {"max_context": ("num.context", "num.seq_len"), "max_batch": ("num.sequences", "num.micro_batch")}


def solve_part(q: Query, done: Done, s: Sections) -> None:
    for name, a, r in done:
        if not name.startswith("solve_") or not isinstance(r, dict) or "error" in r or "unknown" not in r:
            continue
        _one_solution(q, a, r, s)


def _one_solution(q: Query, a: dict[str, Any], r: dict[str, Any], s: Sections) -> None:
    unknown, cfg = r["unknown"], r.get("config") or {}
    gpu = a.get("gpu") or (q.gpus[0] if q.gpus else (f"{q.gpu_memory_gb:g} GB" if q.gpu_memory_gb else ""))
    base = {"gpu": gpu, "model": catalog_model_name(q.model) if q.model else (q.model_text or (
                f"{q.params_b:g}B" if q.params_b else "")),
            "memory": q_(r.get("memory_gb"), "gb"), "gpu_gb": q_(r.get("gpu_memory_gb"), "gb"),
            "limit": _limit(r.get("limited_by", ""))}
    s.assumptions += practitioner_defaults(r.get("findings"))
    if unknown != "best_gpu_by_cost" and cfg.get("method"):
        solved = _SOLVED_LABELS.get(unknown, ())
        s.assumptions += [f for f in vram_assumptions(q, {"inputs": cfg}) if f.params.get("label") not in solved]
    if not r.get("solved"):
        f = next((x for x in r.get("findings") or [] if x.get("code") != "default_applied"), None)
        p = (f or {}).get("params") or {}
        code = f"solve.none_{(f or {}).get('code', unknown)}"
        s.headline.append(Finding(code=code, params=base | {
            "max_gpus": p.get("max_gpus"), "largest": _limit(p.get("largest_component", r.get("limited_by", ""))),
            "needed": q_(p.get("memory_gb") or p.get("memory_gb_at_max"), "gb")}))
        set_verdict(s, "no")
        return
    v = r.get("value")
    if unknown == "max_context":
        code = "solve.max_context_window" if r.get("limited_by") == "model_max_context" else "solve.max_context"
        s.headline.append(Finding(code=code, params=base | {"value": q_(v, "tokens"), "batch": cfg.get("batch", 1)}))
        s.key_numbers.append(kn("num.max_context", v, "tokens"))
    elif unknown == "max_batch":
        s.headline.append(Finding(code="solve.max_batch",
                                  params=base | {"value": v, "seq": q_(cfg.get("seq_len"), "tokens")}))
        s.key_numbers.append(kn("num.max_batch", v, "int"))
        if any(f.get("code") == "above_engine_default_cap" for f in r.get("findings") or []):
            cap = next(f["params"].get("engine_cap") for f in r["findings"]
                       if f.get("code") == "above_engine_default_cap")
            s.assumptions.append(Finding(code="assume.engine_cap", params={"cap": cap}))
    elif unknown == "min_gpu_count":
        code = "solve.min_gpu_count_one" if r.get("limited_by") == "fits_on_one" else "solve.min_gpu_count"
        s.headline.append(Finding(code=code, params=base | {"value": v, "how": {
            "code": "term.tensor_parallel" if cfg.get("method", "inference") == "inference" else "term.fsdp"}}))
        s.key_numbers.append(kn("num.gpu_count", v, "int"))
    elif unknown == "min_gpu_memory":
        gpus = [g.get("name") for g in (r.get("details") or {}).get("gpus", [])][:6]
        gib = (r.get("details") or {}).get("required_gib")
        s.headline.append(Finding(code="solve.min_gpu_memory",
                                  params=base | {"value": q_(v, "gb"), "gib": q_(gib, "gib")}))
        if gpus:
            s.headline.append(Finding(code="solve.gpus_with_memory", params={"names": gpus}))
        s.key_numbers.append(kn("num.total_per_gpu", v, "gb"))
    elif unknown == "best_gpu_by_cost":
        _best_by_cost(r, base, s)
        return
    if r.get("memory_gb") is not None and unknown != "min_gpu_memory":
        s.key_numbers.append(kn("num.memory_per_gpu", {"code": "value.of", "params": {
            "a": q_(r.get("memory_gb"), "gb"), "b": q_(r.get("gpu_memory_gb"), "gb")}}))
    set_verdict(s, "yes")


def _best_by_cost(r: dict[str, Any], base: dict[str, Any], s: Sections) -> None:
    cfg = r.get("config") or {}
    serve = r.get("unit") == "usd_per_million_tokens"
    unit = "usd_mtok" if serve else "usd"
    off = cfg.get("offer") or {}
    s.headline.append(Finding(code="solve.best_serve" if serve else "solve.best_train", params={
        "n": cfg.get("gpu_count") or 1, "gpu": cfg.get("gpu", ""), "provider": off.get("provider", ""),
        "value": q_(r.get("value"), unit), "price": q_(cfg.get("price_usd_per_hour"), "usd_h")}))
    rows = [[f"{cfg.get('gpu_count') or 1} x {cfg.get('gpu', '')}", off.get("provider", "—"),
             cfg.get("price_usd_per_hour"),
             r.get("value")]]
    for o in (r.get("details") or {}).get("runners_up", []):
        rows.append([f"{o.get('gpu_count') or 1} x {o.get('gpu', '')}", (o.get("offer") or {}).get("provider", "—"),
                     o.get("price_usd_per_hour"), o.get("value")])
    s.tables.append(Table(title=Finding(code="table.best_by_cost"),
                          columns=["col.gpus", "col.provider", "col.usd_h",
                                   "col.usd_mtok" if serve else "col.job_cost"],
                          rows=rows, units=["", "", "usd", "usd"]))
    set_verdict(s, "yes")


def image_placements_part(q: Query, done: Done, s: Sections) -> None:
    """An image pipeline that does not fit all on the GPU: the placements that do (dropping the text
    encoders after encoding, model or sequential CPU offload), each with its peak and copy time."""
    for name, _a, r in done:
        if name != "vram_calculator" or not isinstance(r, dict) or not r.get("placements"):
            continue
        fit = r.get("fit") or {}
        mem = fit.get("gpu_memory_gb")
        if fit.get("fits") is not False or not mem:
            continue
        for p in r["placements"]:
            if p.get("peak_gb") is None or p["peak_gb"] > mem:
                continue
            nums = [kn("num.memory_per_gpu", {"code": "value.of", "params": {"a": q_(p["peak_gb"], "gb"),
                                                                              "b": q_(mem, "gb")}})]
            if p.get("copy_s_per_call"):
                nums.append(kn("num.copy_per_image", p["copy_s_per_call"], "s"))
            title = Finding(code="lever.image_placement",
                            params={"placement": {"code": f"term.placement_{p['placement']}", "params": {}}})
            s.way_forward.append(Option(title=title, numbers=nums))
            if len(s.way_forward) >= 3:
                return

