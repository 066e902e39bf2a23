"""The web app's HTML pieces: text (units kept, Latin runs isolated in Urdu), Markdown, tables, the
headline card, footnotes, and an answer that came as Markdown. The typed sections are laid out by
assistant/frontends/web/sections.py with these pieces; numbers come from typed data, never from
rendered text. Urdu gets `dir="rtl"` on every block and
each Latin run (CUDA, LoRA, 13B-parameter, [ft-09]) isolated in `<bdi>` so a line that starts with
one keeps its word order. Output passes Gradio's chat sanitizer: no scripts, ids, data-* or viewBox.
"""

from __future__ import annotations

__all__ = ["MAX_SUPPORTING", "VERDICT_WORDS", "card_html", "details_html", "dir_attr", "fold_rows", "footnotes_html",
           "isolate_latin", "keep_units", "strip_ids", "markdown_answer_html", "markdown_html", "restored_html", "table_html",
           "text_html", "verdict_from_calls"]

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
    for start, end in (_balanced(text, a, b) for a, b in spans):
        run = text[start:end]
        out.append(html.escape(text[pos:start]))
        cls = "ga-ltr ga-nw" if len(run) <= _SHORT_RUN else "ga-ltr"
        out.append(f'<bdi dir="ltr" class="{cls}">{html.escape(run)}</bdi>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _open_paren(run: str) -> bool:
    return run.count("(") > run.count(")")


_PAIRS = (("(", ")"), ("[", "]"))


def _balanced(text: str, start: int, end: int) -> tuple[int, int]:
    """A run without the bracket it does not open or close itself: "(انفرنس، bf16)" isolates "bf16" and
    leaves both brackets to the right-to-left line, which pairs and mirrors them."""
    changed = True
    while changed and end > start:
        changed = False
        run = text[start:end]
        for o, c in _PAIRS:
            if run.endswith(c) and run.count(c) > run.count(o):
                end, changed = end - 1, True
            elif run.startswith(o) and run.count(o) > run.count(c):
                start, changed = start + 1, True
        while end > start and text[end - 1] in " \u00a0,;:":
            end -= 1
        while end > start and text[start] in " \u00a0":
            start += 1
    return start, end


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


def fold_rows(cols: list[str], rows: list[list[str]]) -> list[list[str]]:
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
    # after the prices, the GPU and the region: what a phone shows before the table scrolls
    where = [c for c in cols if prices and c not in lead + prices and c.lower() in ("gpu", "region")]
    order = lead + prices + where + [c for c in cols if c not in lead + prices + where]
    rows = [[_cell(c, rec.get(c)) for c in order] for rec in df.to_dict("records")]
    rows = fold_rows(order, rows)
    numeric = [bool(len(df)) and all(isinstance(v, (int, float)) or v is None for v in df[c]) for c in order]
    head = "".join(f'<th class="{"ga-num" if n else ""}">{text_html(c, rtl)}</th>' for c, n in zip(order, numeric))
    body = "".join("<tr>" + "".join(f'<td class="{"ga-num" if n else ""}">{text_html(v, rtl)}</td>'
                                    for v, n in zip(r, numeric)) + "</tr>" for r in rows)
    cap = f"<caption>{text_html(caption, rtl)}</caption>" if caption else ""
    return f'<div class="ga-table-wrap"><table class="ga-table">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


# ---------------------------------------------------------------- the answer

def dir_attr(rtl: bool) -> str:
    return ' dir="rtl"' if rtl else ""


# Kinds of answer whose question is not a yes/no one ("cheapest way to ...", "what does it cost"): no pill.
_NO_PILL_KINDS = frozenset({"recommend", "prices", "cost", "guide", "help", "compare"})
MAX_SUPPORTING = 2  # lines under the verdict sentence in the card


def card_html(verdict: str, lang: str, body_html: str, kind: str = "") -> str:
    """The headline card; a verdict pill (Yes / No / Partly ...) only where the question asked yes or no
    (and for a question back or an error)."""
    word = VERDICT_WORDS.get(lang, VERDICT_WORDS["en"]).get(verdict, "")
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    shown = verdict in ("ask", "error") or (verdict != "info" and kind not in _NO_PILL_KINDS)
    pill = f'<span class="ga-verdict">{html.escape(word)}</span>' if shown and word else ""
    return f'<div class="ga-card ga-v-{verdict}"{dir_}>{pill}<div class="ga-headline">{body_html}</div></div>'


def details_html(summary: str, inner: str, lang: str, cls: str = "") -> str:
    if not inner:
        return ""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    return f'<details class="ga-more {cls}"{dir_}><summary>{html.escape(summary)}</summary>{inner}</details>'


def verdict_from_calls(calls: list[Mapping[str, Any]]) -> str:
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
    items, cites = [], list(citations)
    titles = [c.get("title") or c.get("guide") or "" for c in cites]
    for i, c in enumerate(cites, 1):
        title, quote = titles[i - 1], c.get("quote") or ""
        if titles.count(title) > 1:  # several passages of one guide: each titled by its own words
            title = f"{title}: {_lead_words(quote)}" if title else _lead_words(quote)
        q_rtl = ui_data.is_rtl_text(quote)
        qdir = ' dir="rtl" lang="ur"' if q_rtl else ' dir="ltr"'
        items.append(f'<li><details class="ga-fn"><summary><span class="ga-fn-n">{i}</span> '
                     f'<bdi>{html.escape(title)}</bdi></summary>'
                     f'<blockquote{qdir}>{text_html(quote, q_rtl)}</blockquote></details></li>')
    if not items:
        return ""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    return (f'<div class="ga-notes"{dir_}><div class="ga-notes-h">{html.escape(heading or _HEAD[lang]["sources"])}</div>'
            f'<ol>{"".join(items)}</ol></div>')


def _lead_words(text: str, n: int = 7) -> str:
    words = str(text).split()
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


def markdown_answer_html(text: str, lang: str, verdict: str, visual: ui_data.Visual | None = None) -> str:
    """An answer that came as Markdown (an LLM's, or a stored turn without its typed record): the
    opening statement as the card, the picture, then the rest. Passage ids and raw HTML tags in the
    text are taken out: the footnotes name the passages."""
    rtl = lang == "ur"
    text = strip_ids(_RAW_TAG.sub("", text or "")).strip()
    lead = ""
    m = re.match(r"^(_[^\n]+_)\n\n", text)  # the "Understood: ..." line renderers put first, in italics
    if m:
        lead, text = f'<div class="ga-understood"{dir_attr(rtl)}>{markdown_html(m.group(1), rtl)}</div>', text[m.end():]
    head, rest = _split_head(text)
    parts = [lead, card_html(verdict, lang, markdown_html(head, rtl)), _visual_html(visual, lang) if visual else ""]
    if rest:
        parts.append(f'<div class="ga-body"{dir_attr(rtl)}>{markdown_html(rest, rtl)}</div>')
    return '<div class="ga-answer">' + "".join(p for p in parts if p) + "</div>"


_PASSAGE_ID = re.compile(r"[ \u00a0]?(?:\[[a-z]{1,8}-\d{1,4}\]|\((?:guide|see) [a-z]{1,8}-\d{1,4}\))")


def strip_ids(text: str) -> str:
    """Text without inline passage ids ("... bigger GPUs [ga-09]"): the footnotes name the passages."""
    return _PASSAGE_ID.sub("", text)


_RAW_TAG = re.compile(r"</?(?:details|summary|div|span|br|sup|bdi)\b[^>]*>", re.I)


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
    chart = chart_from(visual, lang)
    table = table_html(visual.table, rtl)
    note = f'<div class="ga-note">{markdown_html(visual.note, rtl)}</div>' if visual.note else ""
    # The table is detail: open when it is the only picture, folded under the chart otherwise.
    if table and chart:
        table = details_html(_HEAD[lang]["table"], table, lang, "ga-table-more")
    return chart + note + table


def restored_html(answer_text: str) -> str:
    """A stored turn's answer after a reload when this browser has no typed record of it (another
    browser, or an old turn): its text in the same card and body as a Markdown answer."""
    return markdown_answer_html(answer_text, "ur" if ui_data.is_rtl_text(answer_text) else "en", "info")
