"""A comparison decided: the winner of the GPUs weighed, by the user's criterion, with both sides' numbers.

    decision_part(query, done, sections)

The sides are the GPUs the tools checked (memory, speed, offers); tools.compare.decide picks the winner. Only
the tools' own numbers are shown (each side's rate and hourly price), so the margin reads from them.
"""

from __future__ import annotations

__all__ = ["decision_part"]

from typing import Any

from assistant.engine.answer import Finding, Sections
from assistant.engine.compose.common import Done, q_, results
from assistant.engine.normalise import normalise
from assistant.engine.plan_args import count_for
from assistant.engine.query import Query
from knowledge.lexicon import pattern_map
from knowledge.catalog import resolve_gpu
from tools.compare import CompareRequest, CompareSide, decide
from tools.errors import AdvisorError


def _criterion(q: Query) -> str:
    hints, t = pattern_map("hints"), normalise(q.text)
    if hints["for_speed"].search(t) and not hints["for_money"].search(t):
        return "speed"
    return "per_dollar"


def _gpu_id(name: Any) -> str:
    """One key per card however a tool named it ('A100 40GB', 'A100 40GB SXM', 'a100-40gb-sxm')."""
    try:
        return resolve_gpu(str(name)).gpu.id
    except AdvisorError:
        return str(name)


def _sides(q: Query, done: Done) -> dict[str, dict[str, Any]]:
    """{gpu id: name, fits, rate and unit, $/GPU-hour, $ per million tokens} from the turn's tool results."""
    sides: dict[str, dict[str, Any]] = {}

    def side(name: Any) -> dict[str, Any]:
        return sides.setdefault(_gpu_id(name), {"name": str(name)})

    for a, r in results(done, "vram_calculator"):
        if a.get("gpu") and r.get("fit"):
            side(a["gpu"])["fits"] = r["fit"].get("fits")
    for a, r in results(done, "speed_estimator"):
        if not a.get("gpu"):
            continue
        v = side(a["gpu"])
        if "decode_tokens_per_s" in r:
            v["rate"], v["unit"] = r["decode_tokens_per_s"], "tok_s"
            if (r.get("memory") or {}).get("fits") is False:
                v["fits"] = False
        elif "images_per_hour" in r:
            v["rate"], v["unit"] = r["images_per_hour"], "images_h"
    for a, r in results(done, "cost_estimator"):
        per_m = (r.get("serving") or {}).get("usd_per_million_tokens") or r.get("usd_per_million_tokens")
        if a.get("gpu") and per_m:
            side(a["gpu"]).setdefault("usd_mtok", per_m)
        train = (r.get("training") or {}).get("tokens_per_s")
        if a.get("gpu") and train:  # a fine-tune weighed on two cards: its training rate and the offer's price
            v = side(a["gpu"])
            v.setdefault("rate", train)
            v.setdefault("unit", "tok_s")
            o = r.get("offer") or {}
            used = r.get("price_usd_per_hour") / (r.get("gpus") or 1) if r.get("price_usd_per_hour") else None
            if used or o.get("price_usd_per_gpu_hour"):  # the price the run was costed at (the user's, if given)
                v.setdefault("usd_gpu_h", used or o["price_usd_per_gpu_hour"])
    pricing = "spot" if q.spot else "on-demand"
    for a, r in results(done, "price_query"):
        offers = r.get("offers") or []
        if not (a.get("gpu") and offers and a.get("pricing", "on-demand") == pricing):
            continue
        v = sides.get(_gpu_id(a["gpu"]))
        if v is not None and "usd_gpu_h" not in v:
            price = offers[0].get("spot_price_usd_per_gpu_hour" if q.spot else "price_usd_per_gpu_hour")
            if price:
                v["usd_gpu_h"] = price
    return sides


def decision_part(q: Query, done: Done, s: Sections) -> None:
    """The comparison's verdict first: the winner, by the criterion the words ask for (else work per dollar)."""
    if "compare" not in q.intents:
        return
    sides = {v["name"]: v for v in _sides(q, done).values() if "rate" in v or "fits" in v}
    if len(sides) < 2:
        return
    if all(v.get("fits") is False for v in sides.values()):
        s.headline.insert(0, Finding(code="compare.none_fit", params={"names": list(sides)}))
        return
    by_mtok = all(v.get("usd_mtok") for v in sides.values())  # the cost tool's $ per million tokens, same basis
    req = CompareRequest(criterion=_criterion(q), sides=[CompareSide(
        name=n, fits=v.get("fits"), rate_per_s=1 / v["usd_mtok"] if by_mtok else v.get("rate"),
        usd_per_hour=1.0 if by_mtok else v["usd_gpu_h"] * (count_for(q, n) or 1) if v.get("usd_gpu_h") else None)
        for n, v in sides.items()])
    d = decide(req)
    if d.winner is None and not d.ranked:
        return
    if d.winner:  # the decision replaces the speed part's "faster for one user" line (it may name a side that does not fit)
        s.headline[:] = [f for f in s.headline if f.code not in ("speed.fastest", "speed.same")]
    if d.only_fit:
        s.headline.insert(0, Finding(code="compare.only_fit", params={
            "winner": d.winner, "others": [n for n in d.ranked[1:]]}))
        return
    if d.winner is None:
        if all("rate" in sides[n] for n in d.ranked[:2]):
            s.headline.insert(0, Finding(code="compare.tie", params={"a": d.ranked[0], "b": d.ranked[1]}))
        return
    loser = d.ranked[1]
    w, lo = sides[d.winner], sides[loser]

    def rate(v: dict[str, Any]) -> Any:
        return q_(v["rate"], v["unit"]) if "rate" in v else {"code": "value.unknown"}

    def price(v: dict[str, Any]) -> Any:
        return q_(v["usd_gpu_h"], "usd_gpu_h") if v.get("usd_gpu_h") else {"code": "value.unknown"}

    params = {"winner": d.winner, "loser": loser, "w_rate": rate(w), "l_rate": rate(lo), "w_price": price(w),
              "l_price": price(lo)}
    code = f"compare.winner.{d.criterion}"
    if by_mtok and d.criterion == "per_dollar":
        code, params = "compare.winner.per_mtok", params | {"w_mtok": q_(w["usd_mtok"], "usd_mtok"),
                                                            "l_mtok": q_(lo["usd_mtok"], "usd_mtok")}
    if d.unpriced:
        s.headline.insert(0, Finding(code="compare.unpriced", params={"names": d.unpriced}))
    s.headline.insert(0, Finding(code=code, params=params))
