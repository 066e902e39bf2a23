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
from tools.compare import CompareRequest, CompareSide, decide


def _criterion(q: Query) -> str:
    hints, t = pattern_map("hints"), normalise(q.text)
    if hints["for_speed"].search(t) and not hints["for_money"].search(t):
        return "speed"
    return "per_dollar"


def _sides(q: Query, done: Done) -> dict[str, dict[str, Any]]:
    sides: dict[str, dict[str, Any]] = {}
    for a, r in results(done, "vram_calculator"):
        if a.get("gpu") and r.get("fit"):
            sides.setdefault(a["gpu"], {})["fits"] = r["fit"].get("fits")
    for a, r in results(done, "speed_estimator"):
        name = a.get("gpu")
        if not name:
            continue
        side = sides.setdefault(name, {})
        if "decode_tokens_per_s" in r:
            side["rate"], side["unit"] = r["decode_tokens_per_s"], "tok_s"
            if (r.get("memory") or {}).get("fits") is False:
                side["fits"] = False
        elif "images_per_hour" in r:
            side["rate"], side["unit"] = r["images_per_hour"], "images_h"
    pricing = "spot" if q.spot else "on-demand"
    for a, r in results(done, "price_query"):
        name, offers = a.get("gpu"), r.get("offers") or []
        if name in sides and a.get("pricing", "on-demand") == pricing and offers and "usd_gpu_h" not in sides[name]:
            key = "spot_price_usd_per_gpu_hour" if q.spot else "price_usd_per_gpu_hour"
            price = offers[0].get(key) or offers[0].get("price_usd_per_gpu_hour")
            if price:
                sides[name]["usd_gpu_h"] = price
                sides[name]["provider"] = offers[0].get("provider")
    return sides


def decision_part(q: Query, done: Done, s: Sections) -> None:
    """The comparison's verdict first: the winner, by the criterion the words ask for (else work per dollar)."""
    if "compare" not in q.intents:
        return
    sides = {k: v for k, v in _sides(q, done).items() if "rate" in v or "fits" in v}
    if len(sides) < 2:
        return
    req = CompareRequest(criterion=_criterion(q), sides=[CompareSide(
        name=n, fits=v.get("fits"), rate_per_s=v.get("rate"),
        usd_per_hour=v["usd_gpu_h"] * (count_for(q, n) or 1) if v.get("usd_gpu_h") else None)
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
    if d.unpriced:
        s.headline.insert(0, Finding(code="compare.unpriced", params={"names": d.unpriced}))
    s.headline.insert(0, Finding(code=code, params=params))
