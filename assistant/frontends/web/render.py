"""The web app's answer as HTML: headline card, key numbers, chart, way forward, then the rest collapsed.

`answer_html(answer)` renders from the typed sections (`answer.sections`, assistant/engine/answer.py)
when the engine provides them, else from today's Markdown answer plus the tool results; both paths
read numbers from typed data, never from rendered text. Urdu gets `dir="rtl"` on every block and
each Latin run (CUDA, LoRA, 13B-parameter, [ft-09]) isolated in `<bdi>` so a line that starts with
one keeps its word order. Output passes Gradio's chat sanitizer: no scripts, ids, data-* or viewBox.
"""

from __future__ import annotations

__all__ = ["VERDICT_WORDS", "answer_html", "footnotes_html", "isolate_latin", "keep_units", "markdown_html",
           "restored_html", "sections_html", "table_html", "text_html"]

import html
import re
from typing import Any, Iterable, Mapping

import pandas as pd

from assistant.frontends.web import ui_data
from assistant.engine.formatting import number
from assistant.frontends.web.chart import chart_from

VERDICT_WORDS = {"en": {"yes": "Yes", "no": "No", "partly": "Partly", "ask": "Need one detail",
                        "error": "Could not answer"},
                 "ur": {"yes": "جی ہاں", "no": "نہیں", "partly": "جزوی طور پر", "ask": "ایک بات بتائیں",
                        "error": "جواب نہیں دے سکا"}}
_HEAD = {"en": {"sources": "Sources", "table": "Details"}, "ur": {"sources": "حوالے", "table": "تفصیل"}}
# A Latin run: starts with a letter, digit, '[', '(' or '$'; may hold spaces and ASCII punctuation; ends on a
# letter, digit, ')', ']', '%' or '.'. Runs are isolated whole, so "13B-parameter model" stays one piece.
_LATIN_RUN = re.compile(r"[A-Za-z0-9\[($][A-Za-z0-9 \u00a0.,;:'’\"()\[\]/%^+\-_=×~$&#@*<>]*[A-Za-z0-9)\]%.]|[A-Za-z0-9]")
_SHORT_RUN = 24  # runs up to this long never break across lines ("13B-", "24 GB", "[ft-09]")
_PRICE_HINT = ("$", "usd", "price")
# A number and its unit never part at a line end: "19.6 GB", "42.9 tokens/s", "8 x H100".
_NUM_UNIT = re.compile(r"(\d)[ ](GB|GiB|MB|TB|tokens/s|tokens|h|s|ms|%|x|GPUs?|B)(?=$|[\s.,;:)\]/])")
_FOLD = ("region", "as of")


def keep_units(text: str) -> str:
    """A no-break space between a number and its unit."""
    return _NUM_UNIT.sub("\\1\u00a0\\2", text)


# A hyphenated name ("Llama-3-8B", "1x-H100-75-722"): never broken at its hyphens on a narrow screen.
_HYPHENATED = re.compile(r"(?<![\w-])[A-Za-z0-9][\w.]*(?:-[\w.]+)+")


def text_html(text: Any, rtl: bool = False) -> str:
    """Escaped text, numbers kept with their units, hyphenated names kept whole; in Urdu, Latin runs
    isolated (see isolate_latin)."""
    s = keep_units("" if text is None else str(text))
    if rtl:
        return isolate_latin(s)
    out, pos = [], 0
    for m in _HYPHENATED.finditer(s):
        if len(m.group(0)) <= _SHORT_RUN:
            out += [html.escape(s[pos:m.start()]), f'<span class="ga-nw">{html.escape(m.group(0))}</span>']
            pos = m.end()
    return "".join(out) + html.escape(s[pos:])


def isolate_latin(text: str) -> str:
    """Escape `text` and wrap each Latin run in <bdi dir="ltr"> (short runs also unbreakable).

    In a right-to-left line, "CUDA کانٹیکسٹ: 1.04 GB" keeps CUDA first (at the right) and "1.04 GB"
    reads left to right; "13B-parameter" never splits after its hyphen on a phone."""
    spans: list[list[int]] = []
    for m in _LATIN_RUN.finditer(text):
        start, end = m.start(), m.start() + len(m.group(0).rstrip(" \u00a0,;:"))
        if spans and text[spans[-1][1]:start].strip() in ("،", "") and _open_paren(text[spans[-1][0]:spans[-1][1]]):
            spans[-1][1] = end  # "(QLoRA، nf4)": a bracket opened in Latin closes in the same run
        else:
            spans.append([start, end])
    out, pos = [], 0
    for start, end in spans:
        run = text[start:end]
        out.append(html.escape(text[pos:start]))
        cls = "ga-ltr ga-nw" if len(run) <= _SHORT_RUN else "ga-ltr"
        out.append(f'<bdi dir="ltr" class="{cls}">{html.escape(run)}</bdi>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _open_paren(run: str) -> bool:
    return run.count("(") > run.count(")")


def markdown_html(md: str, rtl: bool = False) -> str:
    """Markdown (an answer as text) to HTML; raw HTML in it is escaped. In Urdu every block is dir=rtl
    and its Latin runs isolated."""
    from markdown_it import MarkdownIt

    md = keep_units(md)
    if rtl:  # isolate before parsing: the <bdi> tags are ours, everything else was escaped
        md = "\n".join(_isolate_md_line(line) for line in md.splitlines())
    out = MarkdownIt("commonmark", {"html": rtl, "breaks": True}).enable("table").render(md)
    if rtl:
        out = re.sub(r"<(p|li|ul|ol|blockquote|h[1-6])>", r'<\1 dir="rtl">', out)
    # tables scroll inside their own box on a phone, as the typed answer's tables do
    return out.replace("<table>", '<div class="ga-table-wrap"><table class="ga-table">').replace(
        "</table>", "</table></div>")


def _isolate_md_line(line: str) -> str:
    m = re.match(r"^(\s*(?:[-*+]|\d+[.)]|#{1,6}|>)\s+)?(.*)$", line)
    lead, rest = (m.group(1) or ""), m.group(2)
    parts = re.split(r"(\*\*|__|`)", rest)  # keep emphasis markers outside the runs
    return lead + "".join(p if p in ("**", "__", "`") else isolate_latin(p) for p in parts)


# ---------------------------------------------------------------- tables

def _cell(col: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if any(h in col.lower() for h in _PRICE_HINT):
            return f"${number(v)}"
        return f"{v:,}" if isinstance(v, int) else number(v)
    return str(v)


def _fold(cols: list[str], rows: list[list[str]]) -> list[list[str]]:
    """Rows equal in every column but region / as-of become one row: "4 regions"."""
    fold_idx = [i for i, c in enumerate(cols) if c.lower() in _FOLD]
    if not fold_idx:
        return rows
    groups: dict[tuple, list[list[str]]] = {}
    for r in rows:
        groups.setdefault(tuple(c for i, c in enumerate(r) if i not in fold_idx), []).append(r)
    out = []
    for members in groups.values():
        row = list(members[0])
        for i in fold_idx:
            distinct = list(dict.fromkeys(m[i] for m in members if m[i] != "–"))
            if len(distinct) > 1:
                noun = "regions" if cols[i].lower() == "region" else "dates"
                row[i] = f"{len(distinct)} {noun}"
        out.append(row)
    return out


def table_html(df: pd.DataFrame | None, rtl: bool = False, caption: str = "") -> str:
    """A readable table: price columns first, the chat's rounding, duplicate rows folded, scrolls sideways
    inside its own box on a narrow screen (the page itself never overflows)."""
    if df is None or df.empty:
        return ""
    cols = [str(c) for c in df.columns]
    lead = [c for c in cols if c.lower() in ("rank", "pricing", "metric", "item", "component")]
    prices = [c for c in cols if c not in lead and any(h in c.lower() for h in _PRICE_HINT)]
    order = lead + prices + [c for c in cols if c not in lead and c not in prices]
    rows = [[_cell(c, rec.get(c)) for c in order] for rec in df.to_dict("records")]
    rows = _fold(order, rows)
    numeric = [bool(len(df)) and all(isinstance(v, (int, float)) or v is None for v in df[c]) for c in order]
    head = "".join(f'<th class="{"ga-num" if n else ""}">{text_html(c, rtl)}</th>' for c, n in zip(order, numeric))
    body = "".join("<tr>" + "".join(f'<td class="{"ga-num" if n else ""}">{text_html(v, rtl)}</td>'
                                    for v, n in zip(r, numeric)) + "</tr>" for r in rows)
    cap = f"<caption>{text_html(caption, rtl)}</caption>" if caption else ""
    return f'<div class="ga-table-wrap"><table class="ga-table">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


# ---------------------------------------------------------------- the answer

def _dir(rtl: bool) -> str:
    return ' dir="rtl"' if rtl else ""


def _card(verdict: str, lang: str, body_html: str) -> str:
    """The headline card; a verdict pill (Yes / No / Partly ...) unless the answer is plain information."""
    word = VERDICT_WORDS.get(lang, VERDICT_WORDS["en"]).get(verdict, "")
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    pill = f'<span class="ga-verdict">{html.escape(word)}</span>' if verdict != "info" and word else ""
    return f'<div class="ga-card ga-v-{verdict}"{dir_}>{pill}<div class="ga-headline">{body_html}</div></div>'


def _details(summary: str, inner: str, lang: str, cls: str = "") -> str:
    if not inner:
        return ""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    return f'<details class="ga-more {cls}"{dir_}><summary>{html.escape(summary)}</summary>{inner}</details>'


def _verdict_from_calls(calls: list[Mapping[str, Any]]) -> str:
    """Yes/no from the memory fit when the answer has one (typed tool result), else 'info'."""
    for c in calls:
        r = c.get("result")
        if c.get("name") == "vram_calculator" and isinstance(r, Mapping) and isinstance(r.get("fit"), Mapping):
            return "yes" if r["fit"].get("fits") else "no"
        if isinstance(r, Mapping) and "error" in r:
            return "error"
    return "info"


def footnotes_html(citations: Iterable[Mapping[str, Any]], lang: str, heading: str = "") -> str:
    """Numbered footnotes; each opens its passage in place (a <details>), quote in its own language."""
    items = []
    for i, c in enumerate(citations, 1):
        pid = c.get("passage_id") or c.get("id") or "?"
        title = c.get("title") or c.get("guide") or ""
        quote = c.get("quote") or ""
        q_rtl = ui_data.is_rtl_text(quote)
        qdir = ' dir="rtl" lang="ur"' if q_rtl else ' dir="ltr"'
        items.append(f'<li><details class="ga-fn"><summary><span class="ga-fn-n">{i}</span> '
                     f'<bdi>{html.escape(title)}</bdi> <span class="ga-fn-id">[{html.escape(pid)}]</span></summary>'
                     f'<blockquote{qdir}>{text_html(quote, q_rtl)}</blockquote></details></li>')
    if not items:
        return ""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    return (f'<div class="ga-notes"{dir_}><div class="ga-notes-h">{html.escape(heading or _HEAD[lang]["sources"])}</div>'
            f'<ol>{"".join(items)}</ol></div>')


def answer_html(ans: Any) -> str:
    """The whole answer message: from `ans.sections` when present, else from the Markdown answer."""
    lang = "ur" if getattr(ans, "language", "en") == "ur" else "en"
    calls = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in getattr(ans, "tool_calls", [])]
    visual = ui_data.visual_for_calls(calls)
    sections = getattr(ans, "sections", None)
    if sections:
        return sections_html(sections, visual if visual.kind != "none" else None)
    rtl = lang == "ur"
    head, rest = _split_head(ans.answer or "")
    parts = [_card(_verdict_from_calls(calls), lang, markdown_html(head, rtl)), _visual_html(visual, lang)]
    if rest:
        parts.append(f'<div class="ga-body"{_dir(rtl)}>{markdown_html(rest, rtl)}</div>')
    return '<div class="ga-answer">' + "".join(p for p in parts if p) + "</div>"


def _split_head(text: str) -> tuple[str, str]:
    """The opening statement (up to the first blank line or list) and the rest."""
    lines = text.strip().splitlines()
    for i, line in enumerate(lines):
        if not line.strip() or re.match(r"^\s*([-*+]|\d+[.)])\s", line):
            if i:
                return "\n".join(lines[:i]), "\n".join(lines[i:]).strip()
            break
    return text.strip(), ""


def _visual_html(visual: ui_data.Visual, lang: str) -> str:
    rtl = lang == "ur"
    chart = chart_from(visual)
    table = table_html(visual.table, rtl)
    note = f'<div class="ga-note">{markdown_html(visual.note, rtl)}</div>' if visual.note else ""
    # The table is detail: open when it is the only picture, folded under the chart otherwise.
    if table and chart:
        table = _details(_HEAD[lang]["table"], table, lang, "ga-table-more")
    return chart + note + table


def restored_html(answer_text: str) -> str:
    """A stored turn's answer after a reload (only its text was kept): the first paragraph as the card."""
    rtl = ui_data.is_rtl_text(answer_text)
    lang = "ur" if rtl else "en"
    text = (answer_text or "").strip()
    lead = ""
    m = re.match(r"^(_[^\n]+_)\n\n", text)  # the "Understood: ..." line renderers put first, in italics
    if m:
        lead, text = f'<div class="ga-understood"{_dir(rtl)}>{markdown_html(m.group(1), rtl)}</div>', text[m.end():]
    head, rest = _split_head(text)
    parts = [lead, _card("info", lang, markdown_html(head, rtl))]
    if rest:
        parts.append(f'<div class="ga-body"{_dir(rtl)}>{markdown_html(rest, rtl)}</div>')
    return '<div class="ga-answer">' + "".join(p for p in parts if p) + "</div>"


# ---------------------------------------------------------------- typed sections

def _block_table_html(headers: list[str], rows: list[list[str]], numeric: list[bool], rtl: bool, caption: str) -> str:
    """A table whose cells the engine already formatted (the chat's rounding): price columns first,
    duplicate rows folded, its own sideways scroll on a phone."""
    money = [i for i, h in enumerate(headers) if "$" in h or "usd" in h.lower() or "price" in h.lower()]
    order = ([0] if headers and 0 not in money else []) + money
    order += [i for i in range(len(headers)) if i not in order]
    cols = [headers[i] for i in order]
    body_rows = _fold(cols, [[r[i] if i < len(r) else "" for i in order] for r in rows])
    num = [numeric[i] if i < len(numeric) else False for i in order]
    head = "".join(f'<th class="{"ga-num" if n else ""}">{text_html(c, rtl)}</th>' for c, n in zip(cols, num))
    body = "".join("<tr>" + "".join(f'<td class="{"ga-num" if n else ""}">{text_html(v, rtl)}</td>'
                                    for v, n in zip(r, num)) + "</tr>" for r in body_rows)
    cap = f"<caption>{text_html(caption, rtl)}</caption>" if caption else ""
    return (f'<div class="ga-table-wrap"{_dir(rtl)}><table class="ga-table">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def sections_html(sections: Any, visual: ui_data.Visual | None = None) -> str:
    """Typed sections to HTML in reading order: the card (verdict + headline), notices, key numbers as a
    table, the chart, the way forward, options, tables, why (numbered references), then assumptions and
    unused words folded, the footnotes (each opens its passage in place) and the data's date.

    Texts come from the engine's message catalog (assistant/engine/render), so the web says what the CLI
    and Slack say, in the answer's language."""
    from assistant.engine.answer import Sections
    from assistant.engine.render.catalog import label, message, quantity
    from assistant.engine.render.layout import finding_text, key_number_text, layout, offer_text

    sec = sections if isinstance(sections, Sections) else Sections.model_validate(sections)
    lang = "ur" if sec.lang == "ur" else "en"
    rtl, d = lang == "ur", _dir(lang == "ur")
    cite_no = {c.id: i for i, c in enumerate(sec.citations, 1)}

    def line(f: Any) -> str:
        ref = f'<sup class="ga-ref">{cite_no[f.passage_id]}</sup>' if f.passage_id in cite_no else ""
        return text_html(finding_text(lang, f, cite=False), rtl) + ref

    def sub(key: str) -> str:
        return f'<div class="ga-sub"{d}>{text_html(message(lang, key).rstrip(":："), rtl)}</div>'

    def options(key: str, opts: list[Any]) -> str:
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
    parts.append(_card(sec.verdict, lang, "".join(f"<p{d}>{line(f)}</p>" for f in sec.headline)))
    parts += [f'<p class="ga-notice"{d}>{line(f)}</p>' for f in sec.notices]
    if sec.key_numbers:
        rows = "".join(f"<tr><th>{text_html(label(lang, k.label), rtl)}</th><td class='ga-num'>"
                       f"{text_html(quantity(lang, k.value, k.unit), rtl)}</td></tr>"
                       + (f"<tr><td colspan='2' class='ga-kn-note'>{line(k.note)}</td></tr>" if k.note else "")
                       for k in sec.key_numbers)
        parts.append(f'<div class="ga-kn-wrap"{d}>{sub("head.key_numbers")}<table class="ga-kn">{rows}</table></div>')
    if visual is not None:
        parts.append(chart_from(visual))
    if sec.way_forward:
        parts.append(options("head.way_forward", sec.way_forward))
    if sec.options:
        parts.append(options("head.options", sec.options))
    caption = ""
    for b in layout(sec):
        if b.role == "table" and b.kind == "heading":
            caption = b.text
        elif b.role == "table" and b.kind == "table":
            parts.append(_block_table_html(b.headers, b.rows, b.numeric, rtl, caption))
            caption = ""
    if sec.explanation:
        parts.append(sub("head.why") + "".join(f"<p{d}>{line(f)}</p>" for f in sec.explanation))
    notes = [line(f) for f in sec.assumptions] + ([text_html(x) for x in sec.details] if lang == "en" else [])
    if notes:
        parts.append(_details(message(lang, "head.assumptions").rstrip(":："),
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
