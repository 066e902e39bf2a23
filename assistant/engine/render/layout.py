"""The answer laid out once, in the answer's language: blocks every renderer turns into its syntax.

Order (what a reader needs first): what was understood, the verdict, notices, key numbers, tables,
options, the way forward, why, assumptions, what was not used, the guide quotes, the data's date.
"""

from __future__ import annotations

__all__ = ["Block", "cell_text", "finding_text", "key_number_text", "layout"]

from dataclasses import dataclass, field
from typing import Any

from assistant.engine.answer import Finding, KeyNumber, Option, Sections, Table
from assistant.engine.render.catalog import fmt_value, instance_name, label, message, quantity


@dataclass
class Block:
    """kind: understood | headline | notice | heading | bullets | numbered | table | cites | note."""

    kind: str
    text: str = ""
    items: list[Any] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    numeric: list[bool] = field(default_factory=list)
    role: str = ""


def finding_text(lang: str, f: Finding, cite: bool = True) -> str:
    text = message(lang, f.code, f.params)
    return f"{text} [{f.passage_id}]" if cite and f.passage_id else text


def key_number_text(lang: str, k: KeyNumber) -> str:
    text = f"{label(lang, k.label)}: {quantity(lang, k.value, k.unit)}"
    return f"{text} ({finding_text(lang, k.note)})" if k.note else text


def cell_text(lang: str, v: Any, unit: str = "") -> str:
    """A table cell: names as they are, quantities with the short form of their unit, '—' for unknown."""
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and "v" in v:
        return "—" if v["v"] is None else quantity(lang, v["v"], v.get("u", ""), short=True)
    if isinstance(v, (dict, bool)):
        return fmt_value(lang, v)
    return quantity(lang, v, unit, short=True)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, dict) and "v" in v


def _table(lang: str, t: Table) -> list[Block]:
    out = []
    if t.title:
        out.append(Block("heading", finding_text(lang, t.title), role="table"))
    units = list(t.units) + [""] * (len(t.columns) - len(t.units))
    rows = [[cell_text(lang, c, units[i] if i < len(units) else "") for i, c in enumerate(r)] for r in t.rows]
    numeric = [bool(t.rows) and all(_is_number(r[i]) for r in t.rows if i < len(r)) for i in range(len(t.columns))]
    headers = [fmt_value(lang, c) if isinstance(c, dict) else label(lang, c) for c in t.columns]
    out.append(Block("table", headers=headers, rows=rows, numeric=numeric, role="table"))
    return out


def _option(lang: str, o: Option) -> tuple[str, list[str]]:
    subs = [key_number_text(lang, k) for k in o.numbers]
    if o.offer:
        subs.append(offer_text(lang, o.offer))
    return finding_text(lang, o.title), subs


def _options_table(lang: str, options: list[Option]) -> Block:
    """Options side by side: one column per option, the same rows (its numbers, then its offer) for each."""
    labels = list(dict.fromkeys(k.label for o in options for k in o.numbers))
    rows = []
    for lab in labels:
        row = [label(lang, lab)]
        for o in options:
            k = next((x for x in o.numbers if x.label == lab), None)
            row.append("—" if k is None else cell_text(lang, k.value if k.unit == "" else {"v": k.value, "u": k.unit}))
        rows.append(row)
    if any(o.offer for o in options):
        rows.append([label(lang, "col.offer")] + [instance_name((o.offer or {}).get("instance_type") or "—")
                                                  for o in options])
    headers = [""] + [f"{i}. {finding_text(lang, o.title)}" for i, o in enumerate(options, 1)]
    return Block("table", headers=headers, rows=rows, numeric=[False] + [True] * len(options), role="options")


def offer_text(lang: str, offer: dict[str, Any]) -> str:
    region = offer.get("region") or ""
    where = " ".join(x for x in (offer.get("provider"), offer.get("instance_type") and
                                 instance_name(offer["instance_type"])) if x)
    return message(lang, "offer.line", {"where": where, "region": f", {region}" if region else "",
                                        "price": {"v": offer.get("price_usd_per_hour"), "u": "usd_h"}})


def layout(s: Sections) -> list[Block]:
    """The blocks of an answer, in reading order, every text already in `s.lang`."""
    lang = s.lang
    out: list[Block] = []
    if s.understood:
        out.append(Block("understood", message(lang, "head.understood") + " "
                         + label(lang, "sep.facts").join(finding_text(lang, f) for f in s.understood)))
    out += [Block("headline", finding_text(lang, f)) for f in s.headline]
    out += [Block("notice", finding_text(lang, f)) for f in s.notices]
    if s.key_numbers:
        out.append(Block("heading", message(lang, "head.key_numbers"), role="key_numbers"))
        out.append(Block("bullets", items=[key_number_text(lang, k) for k in s.key_numbers], role="key_numbers"))
    for t in s.tables:
        out += _table(lang, t)
    if s.options:
        out.append(Block("heading", message(lang, "head.options"), role="options"))
        if len(s.options) > 1:
            out.append(_options_table(lang, s.options))
        else:
            out.append(Block("numbered", items=[_option(lang, o) for o in s.options], role="options"))
    if s.way_forward:
        out.append(Block("heading", message(lang, "head.way_forward"), role="way_forward"))
        out.append(Block("numbered", items=[_option(lang, o) for o in s.way_forward], role="way_forward"))
    if s.explanation:
        out.append(Block("heading", message(lang, "head.why"), role="why"))
        out.append(Block("bullets", items=[finding_text(lang, f) for f in s.explanation], role="why"))
    notes = [finding_text(lang, f) for f in s.assumptions]
    if notes:
        out.append(Block("heading", message(lang, "head.assumptions"), role="assumptions"))
        out.append(Block("bullets", items=list(dict.fromkeys(notes)), role="assumptions"))
    if s.details and lang == "en":
        out.append(Block("heading", message(lang, "head.details"), role="details"))
        out.append(Block("bullets", items=list(dict.fromkeys(s.details)), role="details"))
    if s.not_used:
        out.append(Block("note", message(lang, "note.not_used", {"items": list(s.not_used)}), role="not_used"))
    if s.citations:
        out.append(Block("heading", message(lang, "head.guide"), role="cites"))
        out.append(Block("cites", items=[(c.id, c.title, c.quote) for c in s.citations], role="cites"))
    if s.data_date:
        text = message(lang, "data.prices_as_of", {"date": s.data_date})
        if s.data_stale:
            text += " " + message(lang, "data.stale")
        out.append(Block("note", text, role="date"))
    return out
