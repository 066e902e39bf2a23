"""Answer parts for prices, costs (jobs, endpoints, storage, egress) and recommendations."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Option, Sections, Table
from assistant.engine.compose.common import (Done, add_details, instance, kn, model_label, note_data, offer_where, q_,
                                             results, set_verdict, user_number)
from assistant.engine.compose.memory import stated
from assistant.engine.compose.images import image_cost_part, is_image_cost
from assistant.engine.query import Query

_PRICE_COLUMNS = ["col.provider", "col.instance", "col.gpu", "col.gpus", "col.pricing", "col.usd_gpu_h", "col.usd_h",
                  "col.region"]


def prices_part(q: Query, done: Done, s: Sections) -> None:
    pq = results(done, "price_query")
    if not pq:
        return
    in_fit = bool(results(done, "vram_calculator"))
    asked, relaxed = _split_relaxed(pq)
    if relaxed and not any(r.get("offers") for _, r in asked):
        _no_offers_way_forward(asked, relaxed, s)
        return
    rows: list[list[Any]] = []
    variants: list[str] = []
    for a, r in pq:
        note_data(s, r)
        kind = "spot" if a.get("pricing") == "spot" else "on_demand"
        gpu = a.get("gpu") or (q_(a["min_vram_gb"], "gb") if a.get("min_vram_gb") else "GPU")
        offers = r.get("offers") or []
        if not offers:
            if in_fit and not a.get("gpu"):  # the offers with the memory needed: no card has that much
                total = next((x["total_gb"] for _, x in results(done, "vram_calculator")), None)
                s.explanation.append(Finding(code="fit.gpus_none", params={"total": q_(total, "gb")},
                                             passage_id="ga-09"))
            else:  # a named card with no offer of this kind ("no spot L40S")
                (s.notices if in_fit else s.headline).append(
                    Finding(code="prices.none", params={"kind": {"code": f"term.{kind}"}, "gpu": gpu}))
            continue
        o = offers[0]
        per_gpu = o.get("spot_price_usd_per_gpu_hour") if kind == "spot" else o.get("price_usd_per_gpu_hour")
        if in_fit and q.solve_for == "cheapest_gpu" and not rows:
            s.headline.append(Finding(code="solve.cheapest_holding", params={
                "gpu": o.get("gpu") or "", "price": q_(per_gpu, "usd_gpu_h"), "provider": o.get("provider", ""),
                "instance": instance(o.get("instance_type")), "need": q_(a.get("min_vram_gb"), "gb")}))
            s.assumptions.append(Finding(code="assume.cheapest_by_hour"))
        if not in_fit:
            s.headline.append(Finding(code="prices.cheapest", params={
                "kind": {"code": f"term.{kind}"}, "gpu": o.get("gpu") or gpu, "price": q_(per_gpu, "usd_gpu_h"),
                "provider": o.get("provider", ""), "instance": instance(o.get("instance_type"))}))
        for o in offers:
            inst = o.get("spot_price_usd_per_hour") if kind == "spot" else o.get("price_usd_per_hour")
            pg = o.get("spot_price_usd_per_gpu_hour") if kind == "spot" else o.get("price_usd_per_gpu_hour")
            rows.append([o.get("provider") or "—", instance(o.get("instance_type")) or "—", o.get("gpu") or "—",
                         o.get("gpu_count"), {"code": f"term.{kind}"}, pg, inst, o.get("region") or "—"])
            if o.get("gpu") and o["gpu"] not in variants:
                variants.append(o["gpu"])
        if r.get("gpu_note"):
            add_details(s, [r["gpu_note"]])
    if not rows and not in_fit:
        set_verdict(s, "no")  # no offer at all; one kind missing (no spot price) is not a "no"
    if rows:
        title = Finding(code="table.gpus_with_memory") if in_fit else Finding(code="table.prices")
        s.tables.append(Table(title=title, columns=_PRICE_COLUMNS, rows=rows,
                              units=["", "", "", "int", "", "usd", "usd", ""]))
    if len(variants) > 1 and s.lang != "en":
        s.assumptions.append(Finding(code="assume.gpu_variants", params={"names": variants}))


_FILTER_KEYS = ("provider", "region", "max_price_usd_per_gpu_hour", "gpus", "pricing")


def _dropped(a: dict[str, Any], b: dict[str, Any]) -> list[str] | None:
    """The filters of price query `a` that `b` leaves out (spot relaxed to on-demand counts), or None
    when `b` is not `a` with filters taken away."""
    if any(a.get(k) != b.get(k) for k in b if k not in ("limit", "pricing")) or b == a:
        return None
    out = [k for k in _FILTER_KEYS if k != "pricing" and k in a and k not in b]
    if a.get("pricing") == "spot" and b.get("pricing") != "spot":
        out.append("pricing")
    elif a.get("pricing") != b.get("pricing"):
        return None
    return out or None


def _split_relaxed(pq: list[tuple[dict, dict]]) -> tuple[list[tuple[dict, dict]], list[tuple[dict, dict, list[str]]]]:
    """(the queries as asked, the planner's relaxations of an empty one with the filters each drops)."""
    asked: list[tuple[dict, dict]] = []
    relaxed: list[tuple[dict, dict, list[str]]] = []
    for a, r in pq:
        drop = next((d for x, _ in asked if (d := _dropped(x, a))), None)
        if drop:
            relaxed.append((a, r, drop))
        else:
            asked.append((a, r))
    return asked, relaxed


def _filter_phrase(a: dict[str, Any], key: str) -> dict[str, Any]:
    v = a.get(key)
    if key == "provider":
        return {"code": "filter.provider", "params": {"names": [x.strip() for x in str(v).split(",")]}}
    if key == "max_price_usd_per_gpu_hour":
        return {"code": "filter.max_price", "params": {"price": q_(v, "usd_gpu_h")}}
    if key == "gpus":
        return {"code": "filter.gpus", "params": {"n": v}}
    if key == "pricing":
        return {"code": "filter.spot"}
    return {"code": "filter.region", "params": {"name": v}}


def _no_offers_way_forward(asked: list[tuple[dict, dict]], relaxed: list[tuple[dict, dict, list[str]]],
                           s: Sections) -> None:
    """No offer matched: which filter emptied the list, and the nearest offers without it."""
    a0, r0 = asked[0]
    note_data(s, r0)
    kind = "spot" if a0.get("pricing") == "spot" else "on_demand"
    filters = [_filter_phrase(a0, k) for k in _FILTER_KEYS if k in a0 and k != "pricing"]
    s.headline.append(Finding(code="forward.no_offers" if filters else "prices.none", params={
        "kind": {"code": f"term.{kind}"}, "gpu": a0.get("gpu") or "GPU", "filters": filters}))
    set_verdict(s, "no")
    rows: dict[tuple[Any, ...], list[Any]] = {}
    for a, r, drop in relaxed:
        spot = a.get("pricing") == "spot"
        offers = [o for o in r.get("offers") or [] if _price(o, spot)[0] is not None]
        if not offers:
            continue
        if len(s.way_forward) < 3:
            s.way_forward.append(Option(
                title=Finding(code="forward.without_filter", params={"filters": [_filter_phrase(a0, k) for k in drop]}),
                numbers=[kn("num.cheapest_gpu_hour", _price(offers[0], spot)[0], "usd_gpu_h")],
                offer=offers[0] | ({"price_usd_per_hour": _price(offers[0], spot)[1]} if spot else {})))
        for o in offers:
            pg, inst = _price(o, spot)
            rows.setdefault((o.get("provider"), o.get("instance_type"), spot, o.get("region")), [
                o.get("provider") or "—", instance(o.get("instance_type")) or "—", o.get("gpu") or "—",
                o.get("gpu_count"), {"code": "term.spot" if spot else "term.on_demand"}, pg, inst, o.get("region") or "—"])
    if not s.way_forward:
        s.notices.append(Finding(code="forward.no_offers_anywhere", params={"gpu": a0.get("gpu") or "GPU"}))
    if rows:
        ranked = sorted(rows.values(), key=lambda row: row[5])[:8]
        s.tables.append(Table(title=Finding(code="table.nearest_offers"), columns=_PRICE_COLUMNS, rows=ranked,
                              units=["", "", "", "int", "", "usd", "usd", ""]))


def _price(o: dict[str, Any], spot: bool) -> tuple[float | None, float | None]:
    """(per GPU-hour, per instance-hour) of an offer, spot or on-demand."""
    if spot:
        return o.get("spot_price_usd_per_gpu_hour"), o.get("spot_price_usd_per_hour")
    return o.get("price_usd_per_gpu_hour"), o.get("price_usd_per_hour")


# ---- cost ------------------------------------------------------------------------------------------
_UNIT_OF_INCREMENT = {1: "term.second", 60: "term.minute", 3600: "term.hour"}


def cost_finding(f: dict[str, Any], gpu: str = "") -> Finding | None:
    """A cost tool finding as a catalog message (codes of tools/cost.py; parameters made presentable)."""
    code, p = f.get("code", ""), dict(f.get("params") or {})
    if code == "batch_limited_by":
        return Finding(code=f"cost.batch_limited_by_{p.get('limit')}",
                       params={"batch": p.get("batch"), "cap": p.get("engine_cap"),
                               "max": p.get("max_batch_in_memory")})
    if code == "billing_rule":
        inc = p.get("increment_s")
        unit = {"code": _UNIT_OF_INCREMENT[inc]} if inc in _UNIT_OF_INCREMENT else q_(inc, "s")
        return Finding(code="cost.billing_rule", params={"provider": p.get("provider", ""), "unit": unit,
                                                         "run": q_(p.get("runtime_h"), "h"),
                                                         "billed": q_(p.get("billed_h"), "h")})
    if code == "spot_assumptions":
        return Finding(code="cost.spot_assumptions", params={
            "rate": p.get("interruptions_per_hour"), "every": q_(p.get("checkpoint_every_h", 0) * 60, "min"),
            "write": q_(p.get("checkpoint_write_h", 0) * 60, "min"), "restart": q_(p.get("restart_h", 0) * 60, "min")})
    if code in ("storage_cost", "storage_rate_unknown"):
        return Finding(code=f"cost.{code}", params={"gb": q_(p.get("storage_gb"), "gb"), "months": p.get("months"),
                                                    "rate": q_(p.get("usd_per_gb_month"), "usd_gb_month"),
                                                    "provider": p.get("provider") or ""})
    if code in ("egress_cost", "egress_rate_unknown"):
        return Finding(code=f"cost.{code}", params={"gb": q_(p.get("egress_gb"), "gb"),
                                                    "rate": q_(p.get("usd_per_gb"), "usd_gb"),
                                                    "provider": p.get("provider") or ""})
    if code in ("serving_always_on", "serving_spot_not_advisable", "load_exceeds_memory", "gpu_memory_unknown",
                "price_unknown", "billing_unknown", "spot_price_unknown", "total_unknown", "price_given"):
        if code == "spot_price_unknown":
            p = {"provider": p.get("provider") or "", "gpu": gpu}
        if code == "serving_always_on":
            p = {"hours": p.get("hours_per_month"), "batch": p.get("batch")}
        if code == "total_unknown":
            p = {}
        if code == "serving_spot_not_advisable":
            p = {"notice": q_(p["spot_notice_s"], "s") if p.get("spot_notice_s") else {"code": "value.unknown"}}
        if code == "price_given":
            p = {"price": q_(p.get("usd_per_hour"), "usd_h"), "gpus": p.get("gpus")}
        if code == "billing_unknown" and p.get("provider") in (None, "", "unknown"):
            return Finding(code="cost.billing_unknown_yours")  # the user's own price, at a provider not named
        if code == "load_exceeds_memory":
            p = {"users": p.get("concurrent_users"), "max": p.get("max_batch_in_memory")}
        return Finding(code=f"cost.{code}", params=p)
    return None


def _offer_gpu(r: dict[str, Any], a: dict[str, Any]) -> str:
    o = r.get("offer") or r.get("spot_offer") or {}
    n = r.get("gpus") or o.get("gpu_count") or 1
    return (f"{n} x " if n > 1 else "") + str(o.get("gpu") or a.get("gpu") or "GPU")


def _job_numbers(r: dict[str, Any]) -> list:
    out = []
    tr = r.get("training") or {}
    gen = r.get("generation_job") or {}
    if gen and r.get("nominal_job"):  # a capacity question: the rates, not a nominal job's totals
        return [kn("num.requests_per_day", gen["requests_per_day_per_copy"], "int"),
                kn("num.job_batch", gen["batch"], "int"),
                kn("num.read_per_copy", gen["prompt_tokens_per_s_per_copy"], "tok_s"),
                kn("num.written_per_copy", gen["output_tokens_per_s_per_copy"], "tok_s")]
    if tr.get("tokens_per_s"):
        out.append(kn("num.train_throughput", tr["tokens_per_s"], "tok_s"))
    if gen:
        out += [kn("num.prompts_to_run", gen["requests"], "int"), kn("num.job_batch", gen["batch"], "int"),
                kn("num.read_per_copy", gen["prompt_tokens_per_s_per_copy"], "tok_s"),
                kn("num.written_per_copy", gen["output_tokens_per_s_per_copy"], "tok_s"),
                kn("num.gpu_hours", gen["gpu_hours"], "h")]
        if gen.get("copies_for_deadline"):
            out.append(kn("num.copies_for_deadline", gen["copies_for_deadline"], "int"))
    out.append(kn("num.runtime", r.get("runtime_hours"), "h"))
    if gen:
        out.append(kn("num.prefill_time", gen["prefill_hours_one_copy"], "h"))
    o = r.get("offer") or {}
    price = r.get("price_usd_per_hour", o.get("price_usd_per_hour"))  # the price the cost is at (the user's, if given)
    if price is not None:
        out.append(kn("num.price_h", price, "usd_h"))
    if r.get("on_demand_cost_usd") is not None:
        out.append(kn("num.on_demand_cost", r["on_demand_cost_usd"], "usd"))
    b = r.get("billing") or {}
    for k, label in (("per_second_usd", "num.billed_per_second"), ("per_minute_usd", "num.billed_per_minute"),
                     ("per_hour_usd", "num.billed_per_hour")):
        if b.get(k) is not None:
            out.append(kn(label, b[k], "usd"))
    sp = r.get("spot") or {}
    if sp.get("cost_usd") is not None:
        out += [kn("num.spot_cost", sp["cost_usd"], "usd"),
                kn("num.spot_price_h", sp.get("spot_price_usd_per_hour"), "usd_h"),
                kn("num.interruptions", sp.get("expected_interruptions")),
                kn("num.wall_hours", sp.get("wall_hours"), "h")]
    for k, label in (("storage_usd", "num.storage_cost"), ("egress_usd", "num.egress_cost")):
        if k in r:
            out.append(kn(label, r[k], "usd"))
    if "total_usd" in r and ("storage_usd" in r or "egress_usd" in r):
        out.append(kn("num.total_cost", r["total_usd"], "usd"))
    return out


def _serve_numbers(sv: dict[str, Any]) -> list:
    b1 = sv.get("batch_1") or {}
    basis = {"code": f"term.basis_{sv.get('basis', 'throughput_optimal')}"}
    return [kn("num.usd_mtok_load", sv.get("usd_per_million_tokens"), "usd_mtok",
               note=Finding(code="note.at_batch", params={"batch": sv.get("batch"), "basis": basis})),
            kn("num.usd_mtok_batch1", sv.get("usd_per_million_tokens_batch_1", b1.get("usd_per_million_tokens")),
               "usd_mtok"),
            kn("num.total_throughput", sv.get("aggregate_tokens_per_s"), "tok_s"),
            kn("num.per_user_batch1", b1.get("tokens_per_s_per_user"), "tok_s"),
            kn("num.max_batch", sv.get("max_batch_in_memory"), "int")] + \
        ([kn("num.monthly_hours", sv["monthly_usd_hours_up"], "usd_month",
             note=Finding(code="note.hours_up", params={"hours": q_(sv["hours_up_per_month"], "h")}))]
         if sv.get("monthly_usd_hours_up") is not None else []) + \
        [kn("num.monthly", sv.get("monthly_usd"), "usd_month")]


def cost_part(q: Query, done: Done, s: Sections) -> None:
    cs = results(done, "cost_estimator")
    images = [(a, r) for a, r in cs if is_image_cost(r)]
    for a, r in images:
        note_data(s, r)
    if images:
        image_cost_part(q, images, s)
    cs = [(a, r) for a, r in cs if not is_image_cost(r)]
    if not cs:
        return
    for a, r in cs:
        note_data(s, r)
        if r.get("only_larger_instance"):
            li = r["only_larger_instance"]
            s.notices.append(Finding(code="cost.only_larger_instance", params={
                "gpu": a.get("gpu", ""), "provider": li["provider"], "n": li["gpus"], "instance": instance(li["instance"])}))
    if len(cs) == 1:
        a, r = cs[0]
        s.headline += _cost_headline(q, a, r)
        s.key_numbers += _serve_numbers(r["serving"]) if "serving" in r else \
            _job_numbers(r | ({"nominal_job": True} if q.solve_for == "max_requests" else {}))
    else:
        _cost_compare(q, cs, s)
    seen: set[str] = set()
    for a, r in cs:
        for f in r.get("findings") or []:
            fd = cost_finding(f, _offer_gpu(r, a))
            if fd is None or fd.model_dump_json() in seen:
                continue
            seen.add(fd.model_dump_json())
            (s.notices if fd.code.endswith("rate_unknown") or fd.code == "cost.load_exceeds_memory"
             else s.assumptions).append(fd)
        add_details(s, r.get("assumptions"))
    gens = [(a, r["generation_job"]) for a, r in cs if r.get("generation_job")]
    if any("serving" in r for _, r in cs):
        s.explanation.append(Finding(code="why.spot_serving", passage_id="ga-34"))
    elif gens and q.solve_for != "max_requests":  # a job (not an endpoint's capacity): restartable, spot suits it
        s.explanation.append(Finding(code="why.spot_batch", passage_id="ga-34"))
    elif any((r.get("spot") or {}).get("cost_usd") is not None for _, r in cs) and q.spot:
        s.explanation.append(Finding(code="why.spot_checkpoints", passage_id="ft-27"))
    if q.billing:
        s.explanation.append(Finding(code="why.billing", passage_id="ft-28"))
    for kind, amount in (("egress", q.egress_gb), ("storage", q.storage_gb)):
        said = any(f"{kind}_usd" in r or any(str(f.get("code", "")).startswith(kind) for f in r.get("findings") or [])
                   for _, r in cs)
        if amount and not said:
            s.notices.append(Finding(code=f"cost.{kind}_not_costed", params={"gb": q_(user_number(amount), "gb")}))
    _budget(q, cs, s)
    for a, gen in gens[:1]:
        s.assumptions.append(Finding(code="assume.job_batches", params={
            "batch": q_(gen["batch"], "int"), "limit": {"code": f"term.limit_{gen['batch_limit']}"}}))
        s.assumptions += [stated(f"num.{k}", gen[k], "tokens", getattr(q, k) is not None)
                          for k in ("prompt_tokens", "output_tokens")]
    a0, r0 = cs[0]
    if q.examples and not q.tokens_per_example and a0.get("tokens_per_example"):
        s.assumptions.append(Finding(code="assume.tokens_per_example_default",
                                     params={"n": q_(a0["tokens_per_example"], "int")}))
    if r0.get("training"):
        s.assumptions.append(stated("num.epochs", a0.get("epochs", 1), "int", q.epochs is not None))
    set_verdict(s, "info")


def _volume(sv: dict[str, Any]) -> list[Finding]:
    """"2M tokens a day": the hours one copy is busy, the copies that keep up, the month paid by the hour or always on."""
    v = sv.get("volume")
    if not v:
        return []
    out = [Finding(code="cost.volume", params={
        "tokens": q_(v["tokens_per_day"], "tokens"), "hours": q_(v["busy_hours_per_day"], "h"),
        "batch": sv.get("batch"), "copies": v["copies_needed"]})]
    if v.get("usd_per_month_busy_hours") is not None:
        out.append(Finding(code="cost.volume_month", params={
            "busy": q_(v["usd_per_month_busy_hours"], "usd_month"), "always": q_(v["usd_per_month_always_on"], "usd_month"),
            "per_m": q_(v["usd_per_million_own_tokens_always_on"], "usd_mtok")}))
    return out


def _cost_headline(q: Query, a: dict[str, Any], r: dict[str, Any]) -> list[Finding]:
    """The cost lines at the user's own price when they gave one (the catalog's cheapest said beside it)."""
    out = _cost_lines(q, a, r)
    given = a.get("price_usd_per_hour")
    if given is None:
        return out
    o = r.get("offer") or {}
    for f in out:
        if f.code in ("cost.job", "cost.serve", "cost.budget_hours"):
            f.code += "_given"
            f.params["price"] = q_(given, "usd_h")
    if o.get("price_usd_per_hour"):
        out.append(Finding(code="cost.catalog_beside", params={
            "gpu": _offer_gpu(r, a), "price": q_(o["price_usd_per_hour"], "usd_h"), "provider": o.get("provider", ""),
            "instance": instance(o.get("instance_type"))}))
    return out


def _cost_lines(q: Query, a: dict[str, Any], r: dict[str, Any]) -> list[Finding]:
    o = r.get("offer") or {}
    gpu = _offer_gpu(r, a)
    base = {"gpu": gpu, "provider": o.get("provider", ""), "instance": instance(o.get("instance_type")),
            "price": q_(o.get("price_usd_per_hour"), "usd_h")}
    if "serving" in r:
        sv = r["serving"]
        if sv.get("max_batch_in_memory") == 0:  # the endpoint as asked does not fit: no cost per token to give
            return [Finding(code="cost.serve_no_fit", params={"model": model_label(r, q), "gpu": gpu})]
        if sv.get("monthly_usd_hours_up") is not None:  # office hours: the month billed for the hours it is up
            base |= {"hours": q_(sv["hours_up_per_month"], "h"), "up": q_(sv["monthly_usd_hours_up"], "usd_month")}
        return _api_verdict(sv) + [Finding(code="cost.serve_hours" if "up" in base else "cost.serve", params=base | {
            "model": model_label(r, q), "mtok": q_(sv.get("usd_per_million_tokens"),
                                                   "usd_mtok"), "batch": sv.get("batch"),
            "basis": {"code": f"term.basis_{sv.get('basis', 'throughput_optimal')}"},
            "mtok1": q_(sv.get("usd_per_million_tokens_batch_1"), "usd_mtok"),
            "monthly": q_(sv.get("monthly_usd"), "usd_month")})] + _volume(sv)
    if r.get("hours_for_budget"):  # "how many hours does $300 buy?": the hours first
        hb = r["hours_for_budget"]
        return [Finding(code="cost.budget_hours", params=base | {
            "budget": q_(user_number(hb["budget_usd"]), "usd"), "hours": q_(hb["hours"], "h")})]
    out = []
    b = r.get("billing") or {}
    run = q_(r.get("runtime_hours"), "h")
    if q.duration_hours and abs(q.duration_hours * 60 - round(q.duration_hours * 60)) < 1e-6 and q.duration_hours < 1:
        run = q_(round(q.duration_hours * 60), "min")  # the minutes the user gave
    if q.billing and b:
        out.append(Finding(code="cost.billing_verdict", params={
            "gpu": gpu, "run": run, "ps": q_(b.get("per_second_usd"), "usd"),
            "pm": q_(b.get("per_minute_usd"), "usd"), "ph": q_(b.get("per_hour_usd"), "usd")}))
    nominal = r.get("training") and q.dataset_tokens is None and q.examples is None
    bb = r.get("budget_buys")
    if bb:  # the budget's hours at the price, and the tokens the training rate gets through in them
        out.append(Finding(code="cost.budget_buys_training", params={
            "budget": q_(user_number(bb["budget_usd"]), "usd"), "hours": q_(bb["hours"], "h"),
            "price": q_(r.get("price_usd_per_hour"), "usd_h"), "tokens": q_(bb["million_tokens"], "mtokens"),
            "tps": q_((r.get("training") or {}).get("tokens_per_s"), "tok_s")}))
    how = {"code": "term.training_estimate_nominal" if nominal else "term.training_estimate" if r.get("training") else
           "term.generation_estimate" if r.get("generation_job") else "term.as_given"}
    if r.get("on_demand_cost_usd") is not None:
        out.append(Finding(code="cost.job", params=base | {"hours": q_(r.get("runtime_hours"), "h"), "how": how,
                                                           "usd": q_(r["on_demand_cost_usd"], "usd")}))
    if q.solve_for == "max_requests" and r.get("generation_job"):  # the capacity asked: requests a day, first
        g = r["generation_job"]
        out.insert(0, Finding(code="solve.max_requests", params={
            "gpu": gpu, "per_day": q_(round(g["requests_per_day_per_copy"]), "int"),
            "per_hour": q_(round(g["requests_per_hour_per_copy"]), "int"), "prompt": q_(g["prompt_tokens"], "tokens"),
            "output": q_(g["output_tokens"], "tokens"), "batch": q_(g["batch"], "int")}))
        return out[:1]  # a nominal job's hours and bill answer nothing asked
    gen = _generation_lines(r.get("generation_job"), gpu)
    out = gen[1:] + out + gen[:1] if len(gen) > 1 else out + gen  # a deadline asks how many: that answer first
    sp = r.get("spot") or {}
    if sp.get("cost_usd") is not None and (q.spot or q.both_pricing):
        out.append(Finding(code="cost.spot_given" if a.get("spot_price_usd_per_hour") else "cost.spot", params={
            "usd": q_(sp["cost_usd"], "usd"), "provider": sp.get("provider", ""),
            "price": q_(sp.get("spot_price_usd_per_hour"), "usd_h"), "n": q_(sp.get("expected_interruptions"), ""),
            "wall": q_(sp.get("wall_hours"), "h")}))
        if sp.get("saves_usd") is not None:
            out.append(Finding(code="cost.spot_saves" if sp["saves_usd"] > 0 else "cost.spot_costs_more", params={
                "usd": q_(abs(sp["saves_usd"]), "usd"), "pct": q_(abs(sp["saves_pct"]), "pct")}))
    return out


def _api_verdict(sv: dict[str, Any]) -> list[Finding]:
    """"Self-host or an API at $0.20 per million?": the traffic's month at each, and which is cheaper, first."""
    c = sv.get("api_comparison")
    if not c:
        return []
    return [Finding(code=f"cost.api_vs_self_host_{c['cheaper']}", params={
        "tokens": q_(c["million_tokens_per_month"], "mtokens"), "api_price": q_(c["api_usd_per_million_tokens"], "usd_mtok"),
        "api": q_(c["api_usd_per_month"], "usd_month"), "own": q_(c["self_host_usd_per_month"], "usd_month"),
        "ratio": q_(round(c["ratio"], 1), "")})]


def _generation_lines(gen: dict[str, Any] | None, gpu: str) -> list[Finding]:
    """A generation job: what one copy does, and the copies its deadline needs (tools.serving.batch_generation)."""
    if not gen:
        return []
    out = [Finding(code="cost.generation_job", params={
        "requests": q_(gen["requests"], "int"), "prompt": q_(gen["prompt_tokens"], "tokens"),
        "output": q_(gen["output_tokens"], "tokens"), "batch": q_(gen["batch"], "int"), "gpu": gpu,
        "in_rate": q_(gen["prompt_tokens_per_s_per_copy"], "tok_s"), "out_rate": q_(gen["output_tokens_per_s_per_copy"], "tok_s"),
        "prefill": q_(gen["prefill_hours_one_copy"], "h"), "hours": q_(gen["hours_one_copy"], "h")})]
    copies = gen.get("copies_for_deadline")
    if copies == 1:
        out.append(Finding(code="cost.generation_deadline_one", params={
            "deadline": q_(user_number(gen["deadline_hours"]), "h"), "hours": q_(gen["hours_one_copy"], "h")}))
    elif copies:
        out.append(Finding(code="cost.generation_deadline", params={
            "deadline": q_(user_number(gen["deadline_hours"]), "h"), "copies": copies,
            "gpus": f"{gen['gpus_for_deadline']} x {gpu.split(' x ')[-1]}", "hours_at": q_(gen["hours_at_that_count"], "h"),
            "gpu_hours": q_(gen["gpu_hours"], "h")}))
    return out


def _cost_compare(q: Query, cs: list[tuple[dict, dict]], s: Sections) -> None:
    items = [_offer_gpu(r, a) for a, r in cs]
    if len(set(items)) < len(items):  # the same GPU at several providers: name the provider too
        items = [f"{i} ({(r.get('offer') or {}).get('provider', '—')})" for i, (_, r) in zip(items, cs)]
    if len(set(items)) < len(items):  # the same offer at two running times ("24/7 vs office hours")
        items = [f"{i}, {user_number(round(r.get('runtime_hours') or 0, 1))} h" for i, (_, r) in zip(items, cs)]
    serve = all("serving" in r for _, r in cs)
    per_item = [_serve_numbers(r["serving"]) if serve else _job_numbers(r) for _, r in cs]
    labels = list(dict.fromkeys(k.label for nums in per_item for k in nums))
    rows: list[list[Any]] = [[{"code": "col.offer"}] + [offer_where(r.get("offer") or {}) for _, r in cs]]
    for lab in labels:
        row: list[Any] = [{"code": lab}]
        for nums in per_item:
            k = next((x for x in nums if x.label == lab), None)
            row.append(None if k is None else q_(k.value, k.unit) if k.unit else k.value)
        rows.append(row)
    s.tables.append(Table(title=Finding(code="table.cost_compare"), columns=["col.metric"] + items, rows=rows))
    if all(r.get("hours_for_budget") for _, r in cs):
        s.headline += _most_hours_for_budget(cs, items)
    else:
        s.headline += _cheapest_of(q, cs, items, serve)


def _most_hours_for_budget(cs: list[tuple[dict, dict]], items: list[str]) -> list[Finding]:
    """One budget at several offers: the most GPU-hours it buys wins (the hours x the GPUs in the instance)."""
    items = [i if (r.get("offer") or {}).get("provider", "") in i else f"{i} ({(r.get('offer') or {}).get('provider', '')})"
             for i, (_, r) in zip(items, cs)]  # the providers are what is weighed
    got = sorted(zip(cs, items), key=lambda x: -x[0][1]["hours_for_budget"]["gpu_hours"])
    (_, best), item = got[0]
    hb = best["hours_for_budget"]
    return [Finding(code="cost.budget_hours_best", params={
        "budget": q_(user_number(hb["budget_usd"]), "usd"), "item": item, "hours": q_(hb["hours"], "h"),
        "gpu_hours": q_(hb["gpu_hours"], "gpu_h"),
        "others": [{"code": "cost.budget_hours_other", "params": {
            "item": it, "hours": q_(r["hours_for_budget"]["hours"], "h"),
            "gpu_hours": q_(r["hours_for_budget"]["gpu_hours"], "gpu_h")}} for (_, r), it in got[1:]]})]


def _cheapest_of(q: Query, cs: list[tuple[dict, dict]], items: list[str], serve: bool) -> list[Finding]:
    """The comparison's verdict: which is cheapest, the others' figures beside it (on demand, then spot)."""
    out = []
    kinds = [("usd_per_million_tokens", "usd_mtok")] if serve else [("on_demand_cost_usd", "usd")]
    if not serve and (q.spot or q.both_pricing):
        kinds.insert(0 if q.spot else 1, ("spot", "usd"))  # asked about spot: that verdict first
    for key, unit in kinds:
        vals = [((r.get("spot") or {}).get("cost_usd") if key == "spot" else
                 (r.get("serving") or {}).get(key) if serve else r.get(key)) for _, r in cs]
        known = [(v, g) for v, g in zip(vals, items) if v is not None]
        if not known:
            continue
        best_v, best_g = min(known, key=lambda x: x[0])
        rest = [{"code": "cost.item", "params": {"gpu": g, "usd": q_(v, unit)}} for v, g in known if g != best_g]
        code = "cost.cheapest_spot" if key == "spot" else "cost.cheapest"
        out.append(Finding(code=code if rest else code + "_alone", params={
            "gpu": best_g, "usd": q_(best_v, unit), "rest": rest}))
    return out


def _budget(q: Query, cs: list[tuple[dict, dict]], s: Sections) -> None:
    if q.budget_usd_total:
        for a, r in cs:
            if r.get("hours_for_budget"):
                continue  # the budget set the hours: "within the budget" would only repeat it
            total = r.get("total_usd", r.get("on_demand_cost_usd"))
            if total is None:
                continue
            ok = total <= q.budget_usd_total
            s.headline.append(Finding(code="budget.within" if ok else "budget.over", params={
                "gpu": _offer_gpu(r, a), "usd": q_(total, "usd"),
                "budget": q_(user_number(q.budget_usd_total), "usd")}))
            set_verdict(s, "yes" if ok else "no")
    if q.budget_usd_per_hour:
        for a, r in cs:
            price = (r.get("offer") or {}).get("price_usd_per_hour")
            if price is not None:
                ok = price <= q.budget_usd_per_hour
                s.headline.append(Finding(code="budget.hour_within" if ok else "budget.hour_over", params={
                    "gpu": _offer_gpu(r, a), "price": q_(price, "usd_h"),
                    "budget": q_(user_number(q.budget_usd_per_hour), "usd_h")}))
