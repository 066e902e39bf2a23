"""Answer part for recommendations: the best options side by side, why (guide passages), what was ruled out."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Option, Sections
from assistant.engine.compose.common import Done, add_details, error_info, kn, q_, results, set_verdict
from assistant.engine.compose.memory import stated
from assistant.engine.query import Query
from assistant.engine.render.catalog import catalog
from tools.load import DEFAULT_THINK_TIME_S, TRAFFIC_FIELDS


def _need(field: str) -> dict[str, str]:
    """What a recommendation still needs, as the catalog asks for it."""
    return {"code": f"need.{field}" if f"need.{field}" in catalog("en") else f"field.{field}"}


def _title(o: dict[str, Any]) -> Finding:
    off = o.get("offer") or {}
    return Finding(code="rec.option", params={"n": o.get("gpu_count") or 1, "gpu": o.get("gpu", ""),
                                              "provider": off.get("provider", "")})


def _image_numbers(o: dict[str, Any]) -> list:
    out = [kn("num.memory_per_gpu", {"code": "value.of", "params": {"a": q_(o.get("vram_per_gpu_gb"), "gb"),
                                                                     "b": q_(o.get("gpu_memory_gb"), "gb")}}),
           kn("num.seconds_per_image", o.get("seconds_per_image"), "s")]
    if o.get("kind") == "image-endpoint":
        out += [kn("num.replicas", o.get("replicas")), kn("num.monthly", o.get("monthly_usd"), "usd_month")]
    else:
        out += [kn("num.hours", o.get("hours"), "h"), kn("num.job_cost", o.get("job_cost_usd"), "usd")]
        if o.get("spot_job_cost_usd") is not None:
            out.append(kn("num.spot_job_cost", o["spot_job_cost_usd"], "usd"))
    per1k = o.get("usd_per_1000_images") or (o.get("job") or {}).get("usd_per_1000_images")
    out.append(kn("num.usd_per_1000_images", per1k, "usd"))
    return out + [kn("num.price_h", o.get("price_usd_per_hour"), "usd_h")]


def _numbers(o: dict[str, Any], train: bool, precisions: set[str] = frozenset()) -> list:
    if str(o.get("kind", "")).startswith("image"):
        return _image_numbers(o)
    out = [kn("num.memory_per_gpu", {"code": "value.of", "params": {"a": q_(o.get("vram_per_gpu_gb"), "gb"),
                                                                     "b": q_(o.get("gpu_memory_gb"), "gb")}})]
    if train:
        out += [kn("num.hours", o.get("hours"), "h"), kn("num.job_cost", o.get("job_cost_usd"), "usd")]
        if o.get("spot_job_cost_usd") is not None:
            out.append(kn("num.spot_job_cost", o["spot_job_cost_usd"], "usd"))
        out.append(kn("num.price_h", o.get("price_usd_per_hour"), "usd_h"))
        return out
    basis = {"code": f"term.basis_{o.get('serving_basis') or 'throughput_optimal'}"}
    if len(precisions) > 1:  # several precisions among the options: each one's is a row
        out.append(kn("num.weight_precision", o.get("precision") or "bf16"))
    optimal = (o.get("serving_basis") or "throughput_optimal") == "throughput_optimal"  # no load given: batch 1 vs full
    at_batch = Finding(code="note.at_batch", params={"batch": o.get("serving_batch"), "basis": basis})
    out += [kn("num.per_user_batch1" if optimal else "num.per_user", o.get("tokens_per_s_per_user"), "tok_s"),
            kn("num.total_throughput", o.get("tokens_per_s_at_serving_batch") or o.get("tokens_per_s"), "tok_s",
               note=at_batch),
            kn("num.usd_mtok_load", o.get("usd_per_million_tokens"), "usd_mtok",
               note=Finding(code="note.at_batch", params={"batch": o.get("serving_batch"), "basis": basis})),
            kn("num.usd_mtok_batch1", o.get("usd_per_million_tokens_batch_1"), "usd_mtok"),
            kn("num.price_h", o.get("price_usd_per_hour"), "usd_h"),
            kn("num.monthly", o.get("monthly_usd"), "usd_month") if _always_on(o) else
            kn("num.monthly_hours", o.get("monthly_usd"), "usd_month",
               note=Finding(code="note.hours_up", params={"hours": q_(o.get("hours_per_month"), "h")}))]
    if (o.get("replicas") or 1) > 1:
        out.insert(-1, kn("num.replicas", o["replicas"], "int"))
    return out


def _always_on(o: dict[str, Any]) -> bool:
    """The option is billed every hour of the month (no office hours given)."""
    return o.get("always_on_monthly_usd") is None or o.get("monthly_usd") == o.get("always_on_monthly_usd")


def _where(q: Query, o: dict[str, Any]) -> list:
    """The offer's region as a row when the question limits regions ("EU only", "must stay in India"), so
    every option shows that it meets the filter."""
    region = (o.get("offer") or {}).get("region")
    return [kn("col.region", region)] if q.regions and region else []


def _why(o: dict[str, Any], train: bool) -> list[Finding]:
    """Why the best option works, each claim resting on a guide passage (built from its fields)."""
    if str(o.get("kind", "")).startswith("image"):
        out = [Finding(code="why.fits_image", params={"total": q_(o.get("vram_per_gpu_gb"), "gb"),
                                                      "mem": q_(o.get("gpu_memory_gb"), "gb")}, passage_id="ga-31")]
        if o.get("kind") == "image-endpoint":
            out.append(Finding(code="why.spot_serving", passage_id="ga-34"))
        elif o.get("spot_job_cost_usd") is not None:
            out.append(Finding(code="why.spot_batch_images", passage_id="ga-45"))
        return out
    out = [Finding(code="why.fits_train" if train else "why.fits_serve", params={
        "total": q_(o.get("vram_per_gpu_gb"), "gb"), "mem": q_(o.get("gpu_memory_gb"), "gb"),
        "precision": o.get("precision") or "", "method": o.get("method") or ""},
        passage_id="ft-14" if train else "ga-31")]
    comps = o.get("memory_components_gb") or {}
    kv, w = comps.get("kv_cache", 0), comps.get("weights", 0)
    if not train and kv and w and kv >= 0.3 * w:
        out.append(Finding(code="why.kv_big", params={"kv": q_(kv, "gb"), "w": q_(w, "gb")}, passage_id="ga-17"))
    if not train and o.get("bound") == "memory":
        out.append(Finding(code="why.bandwidth", passage_id="ga-07"))
    n = o.get("gpu_count") or 1
    if n > 1:
        code = ("why.multi_nvlink" if o.get("nvlink") else "why.multi_pcie") + ("_train" if train else "")
        out.append(Finding(code=code, params={"n": n}, passage_id="ft-17" if train else "ga-09"))
    if train and o.get("method") == "qlora":
        out.append(Finding(code="why.qlora_fits", passage_id="ft-09"))
    if train and o.get("method") == "full":
        out.append(Finding(code="why.full_memory", passage_id="ft-06"))
    if train and o.get("spot_job_cost_usd") is not None:
        out.append(Finding(code="why.spot_checkpoints", passage_id="ft-27"))
    if not train and o.get("spot_price_usd_per_hour"):
        out.append(Finding(code="why.spot_serving", passage_id="ga-34"))
    return out


def recommend_part(q: Query, done: Done, s: Sections) -> None:
    rec = results(done, "recommend_gpus")
    if not rec:
        return
    a, r = next(((x, y) for x, y in rec if y.get("options")), rec[0])
    if r is not rec[0][1] and a.get("precisions"):  # the first found nothing at 16-bit: the lower precisions did
        s.notices.append(Finding(code="rec.lowered_precision", params={"precisions": list(a["precisions"])}))
    train = a.get("workload") == "finetune" or any(o.get("hours") is not None for o in r.get("options") or [])
    if r.get("status") == "needs_input":
        s.headline.append(Finding(code="rec.missing",
                                  params={"items": [_need(m) for m in r.get("missing", [])]}))
        set_verdict(s, "ask")
        return
    opts = r.get("options") or []
    for o in opts:
        d = (o.get("offer") or {}).get("as_of")
        if d and (s.data_date is None or d > s.data_date):
            s.data_date = d
    if not opts and _invalid_value(done):
        return  # everything was ruled out by a value the tools refuse: the notice says which, not "nothing fits"
    if not opts and r.get("over_budget"):  # it fits, only not within the budget: the cheapest that works, said
        cheapest = r["over_budget"][0]
        s.headline.append(Finding(code="rec.over_budget", params={
            "n": cheapest.get("gpu_count") or 1, "gpu": cheapest.get("gpu", ""),
            "provider": (cheapest.get("offer") or {}).get("provider", ""),
            "price": q_(cheapest.get("price_usd_per_hour"), "usd_h"), "monthly": q_(cheapest.get("monthly_usd"), "usd_month"),
            "cap": q_(a.get("max_usd_per_hour"), "usd_h"), "replicas": cheapest.get("replicas") or 1}))
        set_verdict(s, "no")
        s.options += [Option(title=_title(o), numbers=_numbers(o, train), offer=o.get("offer")) for o in r["over_budget"]]
    elif not opts:
        s.headline.append(Finding(code="rec.nothing_fits"))
        set_verdict(s, "no")
        if not results(done, "way_forward"):
            s.explanation += _generic_way_forward(a, train)
    else:
        best = opts[0]
        off = best.get("offer") or {}
        s.headline.append(Finding(code="rec.best", params={
            "n": best.get("gpu_count") or 1, "gpu": best.get("gpu", ""), "provider": off.get("provider", ""),
            "price": q_(best.get("price_usd_per_hour"), "usd_h")}))
        if best.get("kind") == "image-endpoint":
            s.headline.append(Finding(code="rec.best_image_endpoint", params={
                "replicas": best.get("replicas"), "monthly": q_(best.get("monthly_usd"), "usd_month")}))
        elif train:
            s.headline.append(Finding(code="rec.best_train", params={"hours": q_(best.get("hours"), "h"),
                                                                     "usd": q_(best.get("job_cost_usd"), "usd")}))
        elif (best.get("replicas") or 1) > 1 and not _always_on(best):  # office hours, several copies
            s.headline.append(Finding(code="rec.best_serve_replicas_hours", params={
                "replicas": best["replicas"], "batch": best.get("serving_batch"),
                "monthly": q_(best.get("monthly_usd"), "usd_month"), "hours": q_(best.get("hours_per_month"), "h"),
                "always": q_(best.get("always_on_monthly_usd"), "usd_month")}))
        elif (best.get("replicas") or 1) > 1:  # the traffic needs more than one copy: the bill is for all of them
            s.headline.append(Finding(code="rec.best_serve_replicas", params={
                "replicas": best["replicas"], "batch": best.get("serving_batch"),
                "monthly": q_(best.get("monthly_usd"), "usd_month"),
                "mtok": q_(best.get("usd_per_million_tokens_served") or best.get("usd_per_million_tokens"), "usd_mtok")}))
        elif _always_on(best):
            s.headline.append(Finding(code="rec.best_serve", params={
                "mtok": q_(best.get("usd_per_million_tokens"), "usd_mtok"), "batch": best.get("serving_batch"),
                "monthly": q_(best.get("monthly_usd"), "usd_month")}))
        else:  # office hours: the month billed for the hours it is up, always-on beside it
            s.headline.append(Finding(code="rec.best_serve_hours", params={
                "mtok": q_(best.get("usd_per_million_tokens"), "usd_mtok"), "batch": best.get("serving_batch"),
                "monthly": q_(best.get("monthly_usd"), "usd_month"), "hours": q_(best.get("hours_per_month"), "h"),
                "always": q_(best.get("always_on_monthly_usd"), "usd_month")}))
        if best.get("load"):
            s.assumptions.append(_load_assumption(best["load"], a))
        set_verdict(s, "yes")
        precisions = {o.get("precision") or "bf16" for o in opts} | set(a.get("precisions") or [])
        s.options += [Option(title=_title(o), numbers=_numbers(o, train, precisions) + _where(q, o),
                             offer=o.get("offer")) for o in opts]
        s.explanation += _why(best, train)
    ruled = r.get("ruled_out") or []
    if ruled:
        s.explanation.append(Finding(code="rec.ruled_out", params={
            "items": [f"{x.get('gpu_count', 1)} x {x.get('gpu', '')}" for x in ruled[:6]]}))
        add_details(s, [x.get("reason", "") for x in ruled[:4]])
    s.assumptions += _assumptions(q, a, opts, train)
    add_details(s, r.get("assumptions"))


def _load_assumption(load: dict[str, Any], a: dict[str, Any]) -> Finding:
    """How the traffic became sequences at once (tools.load: Little's law), in the answer's language."""
    w = load["seconds_per_request"]
    p = {"rpm": q_(load["average_requests_per_minute"], ""), "w": q_(w, "s"), "b": load["concurrent_generations"],
         "rps": q_(load["peak_requests_per_s"], ""), "conc": q_(load["concurrency"], "")}
    if load.get("basis") == "users_think_time":
        return Finding(code="assume.load_users", params=p | {
            "users": q_(a.get("users_online"), "int"), "think": q_(a.get("think_time_s") or DEFAULT_THINK_TIME_S, "s")})
    if load["peak_factor"] > 1:
        return Finding(code="assume.load_rate_peak", params=p | {
            "factor": f"{load['peak_factor']:g}", "peak_rpm": q_(load["peak_requests_per_minute"], "")})
    return Finding(code="assume.load_rate", params=p)


def _invalid_value(done: Done) -> bool:
    """A memory or speed tool of this turn refused one of the values as out of range."""
    return any(isinstance(r, dict) and "error" in r and error_info(r).get("type") == "InvalidInput"
               for n, _a, r in done if n in ("vram_calculator", "speed_estimator"))


def _assumptions(q: Query, a: dict[str, Any], opts: list[dict[str, Any]], train: bool) -> list[Finding]:
    out = [Finding(code="assume.rec_headroom"), Finding(code="assume.rec_estimates")]
    if a.get("images") and not q.images:
        out.append(Finding(code="assume.ranking_images", params={"n": q_(a["images"], "int")}))
    if q.examples and not q.tokens_per_example and a.get("tokens_per_example"):
        out.append(Finding(code="assume.tokens_per_example_default", params={"n": q_(a["tokens_per_example"], "int")}))
    if train and q.method in (None, "finetune") and opts and opts[0].get("method"):
        out.append(stated("num.method", {"code": f"term.{opts[0]['method']}"}, "", False))
    if not train:
        from tools.recommend import RecommendRequest  # the tool's own default, not restated here

        ctx = a.get("context_tokens") or RecommendRequest.model_fields["context_tokens"].default
        out.append(stated("num.context", ctx, "tokens", q.context_tokens is not None or bool(q.prompt_tokens)))
        if a.get("concurrent_users") is None and not any(a.get(f) for f in TRAFFIC_FIELDS):
            out.append(Finding(code="assume.no_load_given"))
    if train and a.get("epochs") is not None:
        out.append(stated("num.epochs", a["epochs"], "int", q.epochs is not None))
    return out


def _generic_way_forward(a: dict[str, Any], train: bool) -> list[Finding]:
    if not train:
        return [Finding(code="why.quantize", passage_id="ga-08"),
                Finding(code="why.shorter_or_more_gpus", passage_id="ga-17")]
    out = []
    if a.get("method") == "full":
        out.append(Finding(code="why.lora_instead", passage_id="ft-09"))
    elif a.get("method") == "lora":
        out.append(Finding(code="why.qlora", passage_id="ft-09"))
    out.append(Finding(code="why.smaller_batch", passage_id="ft-04"))
    return out
