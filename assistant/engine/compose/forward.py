"""Answer parts for the way forward (tools/levers.py results) and solved unknowns (tools/solve.py results)."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Option, Sections, Table
from assistant.engine.compose.common import Done, catalog_model_name, engine_name, kn, q_, results, set_verdict
from assistant.engine.compose.memory import vram_assumptions
from assistant.engine.query import Query
from tools.schemas import DEFAULT_ENGINE

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
    return Finding(code="lever.stack", params={"items": joined(_lever_names(parts, params))})


def joined(items: list[dict[str, Any]]) -> Any:
    """Phrases joined with "+" (nested lever.combo phrases): "A + B + C"; "" for none."""
    if not items:
        return ""
    out = items[-1]
    for x in reversed(items[:-1]):
        out = {"code": "lever.combo", "params": {"a": x, "b": out}}
    return out


def _lever_names(codes: list[str], params: dict[str, Any]) -> list[dict[str, Any]]:
    """Lever titles as phrases; "n GPUs" and "a bigger GPU: X" read as one "n x X" when both are there."""
    p = _lever_params(params)
    out = [{"code": f"lever.{c}", "params": p} for c in codes if c not in ("bigger_gpu", "as_given")]
    if "bigger_gpu" in codes and p.get("gpu"):
        n = p.get("gpus") or 1
        out = [x for x in out if not x["code"].startswith("lever.more_gpus")]
        how = next((_HOW[c] for c in codes if c in _HOW), None)
        out.append({"code": "lever.on_gpus_how" if how else "lever.on_gpus",
                    "params": {"n": n, "gpu": p["gpu"], "how": {"code": how} if how else ""}})
    return out


_HOW = {"more_gpus_tensor_parallel": "term.tensor_parallel", "more_gpus_fsdp": "term.fsdp"}


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
    codes = [c for c in p.get("levers") or [] if c != "bigger_gpu" and not c.startswith("more_gpus")]
    levers = _lever_names(codes, p.get("lever_params") or {})
    setup = {"code": "forward.setup" if levers else "forward.setup_plain",
             "params": {"n": p.get("gpus") or 1, "gpu": p.get("gpu", ""), "levers": joined(levers)}}
    where = {"setup": setup}
    if p.get("problem") in _NOTHING:
        code, unit = _NOTHING[p["problem"]]
        target = {"too_slow": q.min_tokens_per_s or a.get("min_tokens_per_s_per_user"),
                  "past_deadline": q.deadline_hours or a.get("deadline_hours"),
                  "over_budget": q.budget_usd_total or a.get("budget_usd")}[p["problem"]]
        return Finding(code=code, params=where | {"best": q_(p.get("best"), unit), "target": q_(target, unit)})
    return Finding(code="forward.nothing_fits", params=where | {
        "memory": q_(p.get("memory_gb"), "gb"), "gpu_gb": q_(p.get("gpu_memory_gb"), "gb"),
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
        if a.get("kv_precision") == "fp8" and q.kv_precision != "fp8":  # the lever, beside the answer
            if r.get("solved") and r["unknown"] in ("max_context", "max_batch"):
                kind = "context" if r["unknown"] == "max_context" else "batch"
                s.headline.append(Finding(code=f"solve.fp8_kv_{kind}", params={
                    "value": q_(r.get("value"), "tokens") if kind == "context" else r.get("value")}))
            continue
        _one_solution(q, a, r, s)
    _replicas_for_job(q, done, s)


def _replicas_for_job(q: Query, done: Done, s: Sections) -> None:
    """N requests by a deadline: the replicas the job needs (tools.solve.job_replicas), the memory per copy."""
    job = next((r for _, r in results(done, "job_replicas") if "replicas" in r), None)
    solved = next((r for _, r in results(done, "solve_for") if r.get("unknown") == "min_gpu_count" and r.get("solved")), None)
    if job is None:
        return
    gpu = q.gpus[0] if q.gpus else ""
    s.headline[:] = [f for f in s.headline if not f.code.startswith("solve.min_gpu_count")]
    images = job.get("images") is not None
    s.headline[:0] = [Finding(code="solve.replicas_for_images" if images else "solve.replicas_for_job", params={
        "value": job["gpus_total"], "gpu": gpu, "replicas": job["replicas"], "hours": q_(job["deadline_hours"], "h"),
        "took": q_(job["hours_at_that_count"], "h"),
        "tokens": q_(job.get("images") if images else job.get("total_output_tokens"), "images" if images else "tokens"),
        "rate": q_(job.get("images_per_hour_per_replica") if images else job.get("tokens_per_s_per_replica"),
                   "images_h" if images else "tok_s")})]
    if solved:
        s.headline.insert(1, Finding(code="solve.replica_memory", params={
            "per": job["gpus_per_replica"], "gpu": gpu, "memory": q_(solved.get("memory_gb"), "gb"),
            "gpu_gb": q_(solved.get("gpu_memory_gb"), "gb")}))
    s.key_numbers[:] = [kn("num.gpu_count", job["gpus_total"], "int")] + [k for k in s.key_numbers if k.label != "num.gpu_count"]


def _largest_model(cfg: dict[str, Any], r: dict[str, Any], base: dict[str, Any], s: Sections) -> None:
    """The largest size that fits, the real models that do, and a tight fit said as tight."""
    method = cfg.get("method", "inference")
    how = {"code": "value.method_precision", "params": {"method": {"code": f"term.{method}"},
                                                         "precision": cfg.get("weight_precision") or "bf16"}}
    s.headline.append(Finding(code="solve.max_params", params=base | {
        "value": f"{r['value']:g}B", "how": how, "seq": q_(cfg.get("seq_len"), "tokens")}))
    models = (r.get("details") or {}).get("models") or []
    if models:
        s.headline.append(Finding(code="solve.max_params_models", params={
            "names": [f"{m['name']} ({m['memory_gb']:.1f} GB)" for m in models]}))
    s.key_numbers.append(kn("num.max_params", r["value"], "b"))
    mem, need = r.get("gpu_memory_gb") or 0, r.get("memory_gb") or 0
    if mem and need > 0.95 * mem:
        s.headline.append(Finding(code="solve.max_params_tight"))
    set_verdict(s, "yes")


def _one_solution(q: Query, a: dict[str, Any], r: dict[str, Any], s: Sections) -> None:
    unknown, cfg = r["unknown"], r.get("config") or {}
    gpu = a.get("gpu") or (q.gpus[0] if q.gpus else (f"{q.gpu_memory_gb:g} GB" if q.gpu_memory_gb else ""))
    base = {"gpu": gpu, "model": catalog_model_name(q.model) if q.model else (q.model_text or (
                f"{q.params_b:g}B" if q.params_b else "")),
            "memory": q_(r.get("memory_gb"), "gb"), "gpu_gb": q_(r.get("gpu_memory_gb"), "gb"),
            "limit": _limit(r.get("limited_by", ""))}
    s.assumptions += practitioner_defaults(r.get("findings"))
    if a.get("headroom_fraction"):  # solved within what a serving engine allocates (vLLM: 90 % of each GPU)
        s.assumptions.append(Finding(code="assume.engine_reserve", params={
            "engine": engine_name(q.engine or DEFAULT_ENGINE), "pct": q_(round(100 * (1 - a["headroom_fraction"])), "pct")}))
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
    if unknown == "max_params":
        _largest_model(cfg, r, base, s)
    elif unknown == "max_context":
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


# How much an image-pipeline change costs the user (smaller first): dropping the text encoders after
# encoding costs nothing in a batch job; 8-bit weights a little quality; model offload a copy per call;
# 4-bit weights more quality; sequential offload a copy of the denoiser at every step.
_PLACEMENT_SIZE = {"all-on-gpu": 0, "text-encoders-dropped": 1, "model-offload": 2, "sequential-offload": 5}
_PRECISION_SIZE = {"fp8": 2, "q8_0": 2, "int8": 2, "q4_k_m": 3, "nf4": 3, "int4": 3}


def image_variants(q: Query, done: Done) -> set[int]:
    """Indexes in `done` of the image pipeline's memory at a lower precision than asked: way-forward
    material (the planner's second round), not the answer's own verdict."""
    return {i for i, (n, a, _r) in enumerate(done) if n == "vram_calculator" and a.get("weight_precision")
            in _PRECISION_SIZE and a.get("weight_precision") != q.precision and i > 0}


def image_placements_part(q: Query, done: Done, s: Sections) -> None:
    """An image pipeline that does not fit all on the GPU: the changes that make it fit, smallest first —
    the placements (text encoders dropped, model or sequential CPU offload) and the lower weight
    precisions the image memory tool supports (fp8, GGUF Q4_K_M, NF4), alone or with a placement;
    each with its peak and copy time. At least one precision is shown when one works."""
    variants = image_variants(q, done)
    main = [(a, r) for i, (n, a, r) in enumerate(done) if n == "vram_calculator" and i not in variants
            and isinstance(r, dict) and r.get("placements")]
    main = [(a, r) for a, r in main if (r.get("fit") or {}).get("fits") is False and (r.get("fit") or {}).get("gpu_memory_gb")]
    if not main:
        return
    a0, r0 = main[0]
    mem = r0["fit"]["gpu_memory_gb"]
    cands: list[tuple[int, Option]] = [c for c in (_image_option(None, p, mem) for p in r0["placements"]) if c]
    for i in sorted(variants):
        _n, a, r = done[i]
        if not isinstance(r, dict) or "error" in r or a.get("gpu") != a0.get("gpu"):
            continue
        best = min((c for c in (_image_option(a["weight_precision"], p, mem) for p in r.get("placements") or []) if c),
                   key=lambda c: c[0], default=None)
        if best:
            cands.append(best)
    cands.sort(key=lambda c: c[0])
    chosen = [o for _, o in cands[:3]]
    precise = next((o for _, o in cands if o.title.params.get("precision")), None)
    if precise is not None and precise not in chosen:
        chosen = chosen[:2] + [precise]
    s.way_forward += chosen[:max(0, 3 - len(s.way_forward))]


def _image_option(precision: str | None, p: dict[str, Any], mem: float) -> tuple[int, Option] | None:
    if p.get("peak_gb") is None or p["peak_gb"] > mem:
        return None
    nums = [kn("num.memory_per_gpu", {"code": "value.of", "params": {"a": q_(p["peak_gb"], "gb"), "b": q_(mem, "gb")}})]
    if p.get("copy_s_per_call"):
        nums.append(kn("num.copy_per_image", p["copy_s_per_call"], "s"))
    place = {"code": f"term.placement_{p['placement']}", "params": {}}
    if precision is None:
        title = Finding(code="lever.image_placement", params={"placement": place})
    elif p["placement"] == "all-on-gpu":
        title = Finding(code="lever.image_precision", params={"precision": precision})
    else:
        title = Finding(code="lever.image_precision_placement", params={"precision": precision, "placement": place})
    size = _PLACEMENT_SIZE.get(p["placement"], 9) + (_PRECISION_SIZE.get(precision or "", 0))
    return size, Option(title=title, numbers=nums)
