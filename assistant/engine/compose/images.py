"""Answer parts for image pipelines: seconds per image, batch-job and endpoint costs, image options."""

from __future__ import annotations

from typing import Any

from assistant.engine.answer import Finding, Sections, Table
from assistant.engine.compose.common import add_details, kn, model_name, q_, set_verdict
from assistant.engine.query import Query


def is_image_speed(r: dict[str, Any]) -> bool:
    return "seconds_per_image" in r


def is_image_cost(r: dict[str, Any]) -> bool:
    return "speed" in r and ("batch_job" in r or "endpoint" in r)


def _res(inp: dict[str, Any]) -> str:
    return f"{inp.get('width')}x{inp.get('height')}" if inp.get("width") else ""


def image_speed_part(q: Query, rs: list[dict[str, Any]], s: Sections) -> None:
    """Seconds per image (one or side by side), its stages, and whether the pipeline fits."""
    r0 = rs[0]
    inp = r0.get("inputs", {})
    common = {"model": model_name(r0, q), "res": _res(inp), "steps": inp.get("steps")}
    if len(rs) == 1:
        s.headline.append(Finding(code="image.speed", params=common | {
            "gpu": r0["gpu"]["name"], "sec": q_(r0["seconds_per_image"], "s"),
            "iph": q_(r0.get("images_per_hour"), "")}))
        t = r0.get("time_s") or {}
        s.key_numbers += [kn("num.seconds_per_image", r0["seconds_per_image"], "s"),
                          kn("num.images_per_hour", r0.get("images_per_hour")),
                          kn("num.bound", {"code": f"term.bound_{r0.get('bound', 'memory')}"})]
        s.key_numbers += [kn(f"stage.{k}", v, "s") for k, v in t.items() if k != "total" and v]
    else:
        s.headline.append(Finding(code="image.speed_compare", params=common))
        cols = ["col.metric"] + [str(r["gpu"]["name"]) for r in rs]
        s.tables.append(Table(title=Finding(code="table.speed_compare"), columns=cols, rows=[
            [{"code": "num.seconds_per_image"}] + [q_(r["seconds_per_image"], "s") for r in rs],
            [{"code": "num.images_per_hour"}] + [q_(r.get("images_per_hour"), "") for r in rs],
            [{"code": "num.fits"}] + [(r.get("memory") or {}).get("fits") for r in rs]]))
    for r in rs:
        if (r.get("memory") or {}).get("fits") is False:
            s.notices.append(Finding(code="speed.no_fit", params={"gpu": r["gpu"]["name"]}))
            set_verdict(s, "no")
    s.assumptions.append(Finding(code="assume.image_speed", params={"engine": r0.get("engine") or ""}))
    add_details(s, r0.get("assumptions"))


def image_cost_part(q: Query, cs: list[tuple[dict, dict]], s: Sections) -> None:
    """A batch job (time, on demand, spot, per 1,000 images) or an endpoint (replicas, per 1,000 images, monthly)."""
    for a, r in cs:
        o = r.get("offer") or {}
        n = r.get("gpus") or 1
        base = {"model": model_name(r, q), "gpu": (f"{n} x " if n > 1 else "") + str(r.get("gpu")),
                "provider": o.get("provider", ""), "price": q_(r.get("price_usd_per_gpu_hour"), "usd_gpu_h")}
        job, ep = r.get("batch_job"), r.get("endpoint")
        if job:
            s.headline.append(Finding(code="image.job", params=base | {
                "images": job.get("images"), "hours": q_(job.get("runtime_hours"), "h"),
                "usd": q_(job.get("on_demand_cost_usd"), "usd"), "per1k": q_(job.get("usd_per_1000_images"), "usd")}))
            s.key_numbers += [kn("num.runtime", job.get("runtime_hours"), "h"),
                              kn("num.on_demand_cost", job.get("on_demand_cost_usd"), "usd"),
                              kn("num.usd_per_1000_images", job.get("usd_per_1000_images"), "usd")]
            sp = job.get("spot") or {}
            if sp.get("cost_usd") is not None:
                s.key_numbers += [kn("num.spot_cost", sp["cost_usd"], "usd"),
                                  kn("num.interruptions", sp.get("expected_interruptions"))]
        if ep:
            s.headline.append(Finding(code="image.endpoint", params=base | {
                "replicas": ep.get("replicas"), "per1k": q_(ep.get("usd_per_1000_images"), "usd"),
                "monthly": q_(ep.get("monthly_usd"), "usd_month")}))
            s.key_numbers += [kn("num.replicas", ep.get("replicas")),
                              kn("num.capacity_per_replica", ep.get("capacity_images_per_hour_per_replica")),
                              kn("num.usd_per_1000_images", ep.get("usd_per_1000_images"), "usd"),
                              kn("num.monthly", ep.get("monthly_usd"), "usd_month")]
            s.explanation.append(Finding(code="why.spot_serving", passage_id="ga-34"))
        sp_ = r.get("speed") or {}
        s.key_numbers.append(kn("num.seconds_per_image", sp_.get("seconds_per_image"), "s"))
        s.assumptions.append(Finding(code="assume.image_speed", params={"engine": sp_.get("engine") or ""}))
        add_details(s, r.get("assumptions"))
