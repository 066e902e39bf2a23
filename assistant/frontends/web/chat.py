"""One chat turn for the web app, as the list of messages a gr.Chatbot shows; and a thread restored.

Order on screen (answer first): the question, the answer (headline card, key numbers, chart, way
forward, the rest folded; assistant/frontends/web/render.py), then the tool steps folded below it. While the
tools run, their steps show as pending so the wait is visible; when the answer arrives it takes its
place right under the question.
"""

from __future__ import annotations

__all__ = ["MAX_RECENT", "remember", "restore_history", "step_message", "turn", "user_message"]

import html
import time
import uuid
from typing import Any, Iterator

import gradio as gr

from assistant.frontends.web import ui_data
from assistant.frontends.web.render import answer_html, footnotes_html, isolate_latin, restored_html

MAX_RECENT = 20


def user_message(q: str) -> gr.ChatMessage:
    if ui_data.is_rtl_text(q):
        return gr.ChatMessage(role="user", content=f'<div dir="rtl" lang="ur">{isolate_latin(q)}</div>')
    return gr.ChatMessage(role="user", content=html.escape(q))


def step_message(ev: dict[str, Any], result: Any = None, seconds: float | None = None) -> gr.ChatMessage:
    """A tool step: its inputs while it runs; its result (and time) when done, folded."""
    content = f"**Inputs:** {ui_data.summarize_args(ev.get('args'))}"
    meta: dict[str, Any] = {"title": f"🛠 {ev['name']}", "id": ev.get("id") or ev["name"], "status": "pending"}
    if seconds is not None:
        content += f"\n\n**Result:** {ui_data.summarize_result(ev['name'], result, ev.get('args'))}"
        meta |= {"status": "done", "duration": round(seconds, 3)}
    return gr.ChatMessage(role="assistant", content=content, metadata=meta)


def _answer_message(ans: Any) -> gr.ChatMessage:
    body = answer_html(ans)
    if not getattr(ans, "sections", None) and ans.citations:
        # Today's Markdown answer quotes its passages under "Why"; footnotes only for those it does not name.
        missing = [c.model_dump() for c in ans.citations if c.passage_id not in (ans.answer or "")]
        if missing:
            body += footnotes_html(missing, "ur" if ans.language == "ur" else "en")
    return gr.ChatMessage(role="assistant", content=body)


def turn(advisor: Any, q: str, history: list, thread_id: str | None,
         owner: str | None = None, lang: str = "auto") -> Iterator[tuple[list, str, Any]]:
    """Stream one turn: yields (messages, thread id, the Answer once it is there, else None); `lang`
    (auto, en, ur) is the reader's answer-language setting."""
    history = list(history or [])
    tid = thread_id or uuid.uuid4().hex
    history.append(user_message(q))
    start = len(history)  # the answer goes here, above the steps
    yield history[:], tid, None
    steps: list[gr.ChatMessage] = []
    running: dict[str, tuple[int, float, dict[str, Any]]] = {}
    draft: gr.ChatMessage | None = None
    for ev in advisor.stream(q, tid, owner=owner, lang=lang):
        kind = ev["type"]
        if kind == "tool_start":
            steps.append(step_message(ev))
            running[ev.get("id") or ev["name"]] = (len(steps) - 1, time.monotonic(), ev)
        elif kind == "tool_end":
            idx, t0, started = running.get(ev.get("id") or ev["name"], (None, time.monotonic(), ev))
            done = step_message(started, ev["result"], time.monotonic() - t0)
            if idx is None:
                steps.append(done)
            else:
                steps[idx] = done
        elif kind == "text":  # an LLM's text before the typed answer: shown as it comes
            rtl = ui_data.is_rtl_text(ev["text"])
            draft = gr.ChatMessage(role="assistant", content=restored_html(ev["text"]) if rtl else ev["text"])
        elif kind == "answer":
            ans = ev["answer"]
            steps = [s if (s.metadata or {}).get("status") != "pending" else
                     gr.ChatMessage(role="assistant", metadata=s.metadata | {"status": "done"},
                                    content=f"{s.content}\n\n**Result:** not finished.") for s in steps]
            final = history[:start] + [_answer_message(ans)] + steps
            yield final, ans.thread_id, ans  # a new id when the conversation store was unavailable
            return
        yield history[:start] + ([draft] if draft else []) + steps, tid, None


def restore_history(record: Any) -> list[gr.ChatMessage]:
    """A stored thread's kept turns as chat messages (only the text of each answer was kept)."""
    out: list[gr.ChatMessage] = []
    for t in getattr(record, "turns", []) or []:
        out.append(user_message(t.question))
        out.append(gr.ChatMessage(role="assistant", content=restored_html(t.answer)))
    return out


def remember(recent: list | None, tid: str, question: str) -> list:
    """This browser's recent threads, newest first: [[thread id, first question], ...] (at most MAX_RECENT)."""
    items = [r for r in (recent or []) if isinstance(r, (list, tuple)) and len(r) == 2]
    first = next((r[1] for r in items if r[0] == tid), question)
    items = [[tid, first[:80]]] + [list(r) for r in items if r[0] != tid]
    return items[:MAX_RECENT]
