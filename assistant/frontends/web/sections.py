"""The typed answer (assistant/engine/answer.py Sections) as the web app's HTML, in reading order: the
card (one verdict sentence and at most two supporting lines), notices, key numbers, the chart, the
way forward, the options side by side (a table with one column per option, the winner marked; cards
on a phone), tables, why, then assumptions folded, footnotes and the data's date.

Texts come from the engine's message catalog (assistant/engine/render), so the web says what the CLI
and Slack say, in the answer's language.
"""

from __future__ import annotations

__all__ = ["WINNER", "options_html", "sections_html"]

import html
from typing import Any

from assistant.engine.answer import Option, Sections
from assistant.engine.render.catalog import instance_name, label, message, quantity
from assistant.engine.render.layout import cell_text, finding_text, key_number_text, layout, offer_text
from assistant.frontends.web import ui_data
from assistant.frontends.web.chart import chart_from
from assistant.frontends.web.render import (MAX_SUPPORTING, card_html, details_html, dir_attr, fold_rows,
                                            footnotes_html, strip_ids, text_html)

WINNER = {"en": "Best", "ur": "بہترین"}


def _table_html(lang: str, headers: list[str], rows: list[list[str]], numeric: list[bool], caption: str) -> str:
    """A table whose cells the engine already formatted (the chat's rounding): the price columns, the
    GPU and the region first (in view on a phone before the table scrolls), duplicate rows folded, its
    own sideways scroll."""
    rtl = lang == "ur"
    money = [i for i, h in enumerate(headers) if "$" in h or "usd" in h.lower() or "price" in h.lower()]
    where = {label(lang, "col.gpu"), label(lang, "col.region")}
    order = money + [i for i, h in enumerate(headers) if money and i not in money and h in where]
    if not money and headers:
        order = [0]
    order += [i for i in range(len(headers)) if i not in order]
    cols = [headers[i] for i in order]
    body_rows = fold_rows(cols, [[r[i] if i < len(r) else "" for i in order] for r in rows])
    num = [numeric[i] if i < len(numeric) else False for i in order]
    head = "".join(f'<th class="{"ga-num" if n else ""}">{text_html(c, rtl)}</th>' for c, n in zip(cols, num))
    body = "".join("<tr>" + "".join(f'<td class="{"ga-num" if n else ""}">{text_html(v, rtl)}</td>'
                                    for v, n in zip(r, num)) + "</tr>" for r in body_rows)
    cap = f"<caption>{text_html(caption, rtl)}</caption>" if caption else ""
    return (f'<div class="ga-table-wrap"{dir_attr(rtl)}><table class="ga-table">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _option_rows(lang: str, opts: list[Option]) -> list[tuple[str, list[str]]]:
    """(row label, one cell per option): the options' numbers, then where to rent each."""
    labels = list(dict.fromkeys(k.label for o in opts for k in o.numbers))
    rows = []
    for lab in labels:
        cells = []
        for o in opts:
            k = next((x for x in o.numbers if x.label == lab), None)
            cells.append("—" if k is None else cell_text(lang, k.value if k.unit == "" else {"v": k.value, "u": k.unit}))
        rows.append((label(lang, lab), cells))
    if any(o.offer for o in opts):
        rows.append((label(lang, "col.offer"), [_where(lang, o.offer) for o in opts]))
    return rows


def _where(lang: str, offer: dict[str, Any] | None) -> str:
    if not offer:
        return "—"
    name = instance_name(offer.get("instance_type") or "") or ""
    region = offer.get("region") or ""
    return ", ".join(x for x in (" ".join(x for x in (offer.get("provider"), name) if x), region) if x)


def options_html(lang: str, opts: list[Option], heading: str) -> str:
    """Ranked options side by side: a table (one column per option, the first marked best) on a wide
    screen, one card per option on a phone (the stylesheet shows one of the two)."""
    rtl, d = lang == "ur", dir_attr(lang == "ur")
    titles = [text_html(finding_text(lang, o.title, cite=False), rtl) for o in opts]
    badge = f'<span class="ga-win-badge">{html.escape(WINNER[lang])}</span>'
    rows = _option_rows(lang, opts)
    head = "<th></th>" + "".join(f'<th class="{"ga-win" if i == 0 else ""}">{t}{badge if i == 0 else ""}</th>'
                                 for i, t in enumerate(titles))
    body = "".join(f"<tr><th>{text_html(lab, rtl)}</th>" + "".join(
        f'<td class="ga-num{" ga-win" if i == 0 else ""}">{text_html(c, rtl)}</td>' for i, c in enumerate(cells))
        + "</tr>" for lab, cells in rows)
    table = (f'<div class="ga-table-wrap ga-opt-table"{d}><table class="ga-table ga-compare"><thead><tr>{head}</tr>'
             f"</thead><tbody>{body}</tbody></table></div>")
    cards = "".join(
        f'<div class="ga-opt-card{" ga-win" if i == 0 else ""}"{d}><div class="ga-opt-title">{t}{badge if i == 0 else ""}'
        "</div><table>" + "".join(f'<tr><th>{text_html(lab, rtl)}</th><td class="ga-num">{text_html(cells[i], rtl)}</td></tr>'
                                  for lab, cells in rows) + "</table></div>" for i, t in enumerate(titles))
    return (f'<div class="ga-sub"{d}>{text_html(heading, rtl)}</div>{table}'
            f'<div class="ga-opt-cards"{d}>{cards}</div>')


def _headline(sec: Sections, line: Any) -> tuple[list[str], list[str]]:
    """(the card's lines: the verdict sentence and at most MAX_SUPPORTING more, the lines that move below
    it); a line that repeats an earlier one's message code is dropped."""
    seen, kept = set(), []
    for f in sec.headline:
        if f.code not in seen:
            seen.add(f.code)
            kept.append(f)
    return [line(f) for f in kept[:1 + MAX_SUPPORTING]], [line(f) for f in kept[1 + MAX_SUPPORTING:]]


def sections_html(sections: Any, visual: ui_data.Visual | None = None) -> str:
    """Typed sections to HTML in reading order (the module's docstring)."""
    sec = sections if isinstance(sections, Sections) else Sections.model_validate(sections)
    lang = "ur" if sec.lang == "ur" else "en"
    rtl, d = lang == "ur", dir_attr(lang == "ur")
    cite_no = {c.id: i for i, c in enumerate(sec.citations, 1)}

    def line(f: Any) -> str:
        ref = f'<sup class="ga-ref">{cite_no[f.passage_id]}</sup>' if f.passage_id in cite_no else ""
        return text_html(finding_text(lang, f, cite=False), rtl) + ref

    def sub(key: str) -> str:
        return f'<div class="ga-sub"{d}>{text_html(message(lang, key).rstrip(":："), rtl)}</div>'

    def numbered(key: str, opts: list[Any]) -> str:
        items = []
        for o in opts:
            extra = [key_number_text(lang, k) for k in o.numbers] + ([offer_text(lang, o.offer)] if o.offer else [])
            more = "".join(f"<li>{text_html(x, rtl)}</li>" for x in extra)
            items.append(f"<li>{line(o.title)}" + (f'<ul class="ga-opt-nums">{more}</ul>' if more else "") + "</li>")
        return sub(key) + f'<ol class="ga-opts"{d}>{"".join(items)}</ol>'

    parts = []
    if sec.understood:
        parts.append(f'<p class="ga-understood"{d}>{text_html(message(lang, "head.understood"), rtl)} '
                     + text_html(label(lang, "sep.facts"), rtl).join(line(f) for f in sec.understood) + "</p>")
    card, below = _headline(sec, line)
    parts.append(card_html(sec.verdict, lang, "".join(f"<p{d}>{x}</p>" for x in card), sec.kind))
    parts += [f'<p class="ga-notice"{d}>{x}</p>' for x in below + [line(f) for f in sec.notices]]
    if sec.key_numbers:
        rows = "".join(f"<tr><th>{text_html(label(lang, k.label), rtl)}</th><td class='ga-num'>"
                       f"{text_html(quantity(lang, k.value, k.unit), rtl)}</td></tr>"
                       + (f"<tr><td colspan='2' class='ga-kn-note'>{line(k.note)}</td></tr>" if k.note else "")
                       for k in sec.key_numbers)
        parts.append(f'<div class="ga-kn-wrap"{d}>{sub("head.key_numbers")}<table class="ga-kn">{rows}</table></div>')
    if visual is not None:
        parts.append(chart_from(visual, lang))
    if sec.way_forward:
        parts.append(numbered("head.way_forward", sec.way_forward))
    if len(sec.options) > 1:
        parts.append(options_html(lang, sec.options, message(lang, "head.options").rstrip(":：")))
    elif sec.options:
        parts.append(numbered("head.options", sec.options))
    caption = ""
    for b in layout(sec):
        if b.role == "table" and b.kind == "heading":
            caption = b.text
        elif b.role == "table" and b.kind == "table":
            parts.append(_table_html(lang, b.headers, b.rows, b.numeric, caption))
            caption = ""
    if sec.explanation:
        parts.append(sub("head.why") + "".join(f"<p{d}>{line(f)}</p>" for f in sec.explanation))
    notes = [line(f) for f in sec.assumptions] + ([text_html(strip_ids(x)) for x in sec.details] if lang == "en" else [])
    if notes:
        parts.append(details_html(message(lang, "head.assumptions").rstrip(":："),
                                  "<ul>" + "".join(f"<li>{n}</li>" for n in dict.fromkeys(notes)) + "</ul>", lang))
    if sec.not_used:
        parts.append(f'<p class="ga-note"{d}>{text_html(message(lang, "note.not_used", {"items": list(sec.not_used)}), rtl)}</p>')
    parts.append(footnotes_html(({"passage_id": c.id, "title": c.title, "quote": c.quote} for c in sec.citations),
                                lang, message(lang, "head.guide")))
    if sec.data_date:
        text = message(lang, "data.prices_as_of", {"date": sec.data_date})
        if sec.data_stale:
            text += " " + message(lang, "data.stale")
        parts.append(f'<p class="ga-note"{d}>{text_html(text, rtl)}</p>')
    return '<div class="ga-answer">' + "".join(p for p in parts if p) + "</div>"
