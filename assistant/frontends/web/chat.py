"""One chat turn for the web app as the messages a gr.Chatbot shows; and a thread restored.

Each answer is one message (one copy action): the answer (card, key numbers, chart, options, the rest
folded; assistant/frontends/web/sections.py) with its tool steps folded under "How this was worked
out" (assistant/frontends/web/steps.py). While the tools run, a working message lists the steps.

The answer message is rendered from a typed record (`answer_view`: the Sections, the picture's data,
the steps) and never from its text. The record goes to the browser with the answer and is kept there
(localStorage, per thread); after a reload the browser sends the thread's records back and
`restore_history` renders every stored turn that has one through the same `view_html`, so a reload
looks like the first view. A turn without a record (another browser) falls back to its stored text.
"""

from __future__ import annotations

__all__ = ["MAX_RECENT", "MAX_RECORDS_CHARS", "answer_hash", "answer_view", "parse_records", "recent_title",
           "remember", "restore_history", "turn", "user_message", "view_html"]

import hashlib
import html
import json
import math
import uuid
from typing import Any, Iterator, Mapping

import gradio as gr
import pandas as pd

from assistant.frontends.web import ui_data
from assistant.frontends.web.render import (footnotes_html, isolate_latin, markdown_answer_html, restored_html,
                                            verdict_from_calls)
from assistant.frontends.web.sections import sections_html
from assistant.frontends.web.steps import live_steps_html, step_record, steps_html

MAX_RECENT = 20
MAX_RECORDS_CHARS = 2_000_000  # what a browser may send back for one thread's typed records
RECENT_TITLE_CHARS = 60
VIEW_VERSION = 1


def user_message(q: str) -> gr.ChatMessage:
    if ui_data.is_rtl_text(q):
        return gr.ChatMessage(role="user", content=f'<div dir="rtl" lang="ur">{isolate_latin(q)}</div>')
    return gr.ChatMessage(role="user", content=html.escape(q))


def answer_hash(text: str) -> str:
    """Ties a typed record to the stored turn whose answer text it came with."""
    return hashlib.sha256(str(text).encode("utf-8", "replace")).hexdigest()[:20]


def _visual_json(v: ui_data.Visual) -> dict[str, Any] | None:
    if v.kind == "none":
        return None
    table = json.loads(v.table.to_json(orient="split", index=False)) if not v.table.empty else None
    return {"kind": v.kind, "chart": [[str(i), float(x), str(p)] for i, x, p in v.chart[ui_data.CHART_COLUMNS].values],
            "title": v.chart_title, "unit": v.y_title, "table": table, "note": v.note}


def _visual_from(d: Any) -> ui_data.Visual:
    if not isinstance(d, Mapping):
        return ui_data.Visual()
    rows = [(str(r[0]), float(r[1]), str(r[2])) for r in d.get("chart") or []
            if isinstance(r, list) and len(r) == 3 and isinstance(r[1], (int, float)) and math.isfinite(r[1])]
    t = d.get("table")
    table = pd.DataFrame(t["data"], columns=t["columns"]) if isinstance(t, Mapping) else pd.DataFrame()
    return ui_data.Visual(str(d.get("kind") or "none"), pd.DataFrame(rows, columns=ui_data.CHART_COLUMNS),
                          str(d.get("title") or ""), str(d.get("unit") or ""), table, str(d.get("note") or ""))


def answer_view(ans: Any) -> dict[str, Any]:
    """The typed record an answer message is rendered from (plain JSON types)."""
    calls = [c.model_dump(mode="json") if hasattr(c, "model_dump") else dict(c) for c in getattr(ans, "tool_calls", [])]
    sections = getattr(ans, "sections", None)
    if hasattr(sections, "model_dump"):
        sections = sections.model_dump(mode="json")
    lang = "ur" if getattr(ans, "language", "en") == "ur" else "en"
    cites = [c.model_dump(mode="json") if hasattr(c, "model_dump") else dict(c) for c in getattr(ans, "citations", [])]
    text = ans.answer or ""
    return {"v": VIEW_VERSION, "h": answer_hash(text), "lang": lang, "sections": sections or None,
            "text": "" if sections else text, "verdict": verdict_from_calls(calls),
            "visual": _visual_json(ui_data.visual_for_calls(calls)), "steps": [step_record(c) for c in calls],
            "citations": [] if sections else [c for c in cites if c.get("passage_id") not in text]}


def view_html(view: Mapping[str, Any]) -> str:
    """One answer message from its typed record: the answer, then its steps folded (inside the answer)."""
    lang = "ur" if view.get("lang") == "ur" else "en"
    visual = _visual_from(view.get("visual"))
    if view.get("sections"):
        body = sections_html(view["sections"], visual if visual.kind != "none" else None)
    else:
        body = markdown_answer_html(str(view.get("text") or ""), lang, str(view.get("verdict") or "info"), visual)
        body = body[:-len("</div>")] + footnotes_html(view.get("citations") or [], lang) + "</div>"
    steps = [s for s in view.get("steps") or [] if isinstance(s, Mapping)]
    return body[:-len("</div>")] + steps_html(lang, steps) + "</div>"


def turn(advisor: Any, q: str, history: list, thread_id: str | None,
         owner: str | None = None, lang: str = "auto") -> Iterator[tuple[list, str, Any, dict | None]]:
    """Stream one turn: yields (messages, thread id, the Answer once it is there, its typed record);
    `lang` (auto, en, ur) is the reader's answer-language setting."""
    history = list(history or [])
    tid = thread_id or uuid.uuid4().hex
    history.append(user_message(q))
    start = len(history)
    yield history[:], tid, None, None
    step_lang = "ur" if lang == "ur" or (lang == "auto" and ui_data.is_rtl_text(q)) else "en"
    steps: list[dict[str, Any]] = []
    done: list[bool] = []
    ids: dict[str, int] = {}
    draft = ""
    for ev in advisor.stream(q, tid, owner=owner, lang=lang):
        kind = ev["type"]
        if kind == "tool_start":
            ids[ev.get("id") or ev["name"]] = len(steps)
            steps.append(step_record(ev))
            done.append(False)
        elif kind == "tool_end":
            i = ids.get(ev.get("id") or ev["name"])
            if i is None:
                steps.append(step_record(ev))
                done.append(True)
            else:
                done[i] = True
        elif kind == "text":  # an LLM's text before the typed answer: shown as it comes
            draft = restored_html(ev["text"]) if ui_data.is_rtl_text(ev["text"]) else html.escape(ev["text"])
        elif kind == "answer":
            ans = ev["answer"]
            view = answer_view(ans)
            yield history[:start] + [gr.ChatMessage(role="assistant", content=view_html(view))], ans.thread_id, ans, view
            return
        live = draft + (live_steps_html(step_lang, steps, done) if steps else "")
        yield history[:start] + ([gr.ChatMessage(role="assistant", content=live)] if live else []), tid, None, None


def parse_records(raw: Any) -> list[dict[str, Any]]:
    """The typed records a browser sent back for one thread (a JSON list); anything else is ignored."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_RECORDS_CHARS:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    return [r for r in data if isinstance(r, dict) and r.get("v") == VIEW_VERSION and isinstance(r.get("h"), str)] \
        if isinstance(data, list) else []


def restore_history(record: Any, views: list[dict[str, Any]] | None = None) -> list[gr.ChatMessage]:
    """A stored thread's kept turns as chat messages: each turn with a typed record of its answer (same
    answer text) through view_html, as it first looked; the others from their text."""
    by_hash = {v["h"]: v for v in views or []}
    out: list[gr.ChatMessage] = []
    for t in getattr(record, "turns", []) or []:
        out.append(user_message(t.question))
        view = by_hash.get(answer_hash(t.answer))
        try:
            content = view_html(view) if view else restored_html(t.answer)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):  # a record this version cannot read
            content = restored_html(t.answer)
        out.append(gr.ChatMessage(role="assistant", content=content))
    return out


def recent_title(question: str, limit: int = RECENT_TITLE_CHARS) -> str:
    """A question as a Recent chats title: whole, or cut at a word with an ellipsis."""
    q = " ".join(str(question).split())
    if len(q) <= limit:
        return q
    cut = q[:limit].rsplit(" ", 1)[0] if " " in q[:limit] else q[:limit]
    return cut.rstrip(" ،,;:-") + "…"


def remember(recent: list | None, tid: str, question: str) -> list:
    """This browser's recent threads, newest first: [[thread id, first question], ...] (at most MAX_RECENT)."""
    items = [r for r in (recent or []) if isinstance(r, (list, tuple)) and len(r) == 2]
    first = next((r[1] for r in items if r[0] == tid), question)
    items = [[tid, recent_title(first, 80)]] + [list(r) for r in items if r[0] != tid]
    return items[:MAX_RECENT]
