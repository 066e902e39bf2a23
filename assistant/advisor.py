"""The conversational advisor: a LangChain agent over the tool registry, with threads kept in SQLite.

`Advisor().ask(question, thread_id=...)` returns an Answer; `Advisor().stream(...)` yields events
(tool_start, tool_end, text, answer) for the UI and Slack. The backend is the embedded router or
any LangChain chat model (assistant.backends); an LLM turn that fails, times out, loops or calls no
tool falls back to the router for that turn, and every answer passes the grounding guard.
"""

from __future__ import annotations

__all__ = ["Advisor", "Answer", "ToolCall", "Citation"]

import json
import sqlite3
import threading
import uuid
from typing import Any, Iterator

from pydantic import BaseModel

from assistant.settings import MAX_QUESTION_CHARS, data_dir


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any]
    result: Any


class Citation(BaseModel):
    guide: str
    passage_id: str
    title: str = ""
    quote: str


class Answer(BaseModel):
    answer: str
    language: str
    tool_calls: list[ToolCall]
    citations: list[Citation]
    backend: str
    thread_id: str
    intent: str = ""
    notices: list[str] = []
    grounding: dict[str, Any] = {"ok": True, "unbacked": []}


class _Fallback(Exception):
    """The LLM turn cannot be used; the router answers instead."""


class Advisor:
    """One agent per process and backend; threads in a SQLite checkpointer."""

    def __init__(self, backend: str | None = None, checkpoint_path: str | None = None, chat_model: Any = None):
        from langchain.agents import create_agent
        from langgraph.checkpoint.sqlite import SqliteSaver

        from assistant.backends import make_chat_model, resolve_backend
        from assistant.prompts import SYSTEM_PROMPT
        from assistant.router import RouterChatModel
        from assistant.tool_registry import TOOLS

        self.backend = "custom" if chat_model is not None else resolve_backend(backend)
        self.startup_notices: list[str] = []
        self._saver = self._open_store(checkpoint_path)
        self._lock = threading.Lock()
        self._tools = TOOLS
        self.agent = create_agent(RouterChatModel(), TOOLS, checkpointer=self._saver)
        self._memory_agent: Any = None
        self.llm_agent = None
        if self.backend != "router":
            model = chat_model if chat_model is not None else make_chat_model(self.backend)
            self.llm_agent = create_agent(model, TOOLS, system_prompt=SYSTEM_PROMPT, checkpointer=self._saver)

    def _open_store(self, checkpoint_path: str | None) -> Any:
        """SQLite checkpointer in the data directory; a corrupt file is set aside and replaced, an
        unwritable directory falls back to memory (threads then last for this process only)."""
        import os
        import time

        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.checkpoint.sqlite import SqliteSaver

        try:
            if checkpoint_path is None:
                data_dir().mkdir(parents=True, exist_ok=True)
            path = checkpoint_path or str(data_dir() / "threads.sqlite")
        except OSError:
            self.startup_notices.append("The data directory is not writable: conversations are kept in memory only.")
            return InMemorySaver()
        for attempt in range(2):
            try:
                conn = sqlite3.connect(path, check_same_thread=False, timeout=2.0)
                conn.execute("PRAGMA journal_mode=WAL")  # readers don't block; fewer fsyncs per checkpoint
                conn.execute("PRAGMA synchronous=NORMAL")
                saver = SqliteSaver(conn)
                saver.setup()
                conn.execute("SELECT count(*) FROM checkpoints").fetchone()
                self._conn = conn
                return saver
            except sqlite3.DatabaseError as exc:
                if attempt == 0 and ("not a database" in str(exc) or "malformed" in str(exc)):
                    try:
                        os.replace(path, f"{path}.corrupt-{int(time.time())}")
                        self.startup_notices.append("The conversation store was damaged; it was set aside and a new "
                                                    "one started (earlier threads are not available).")
                        continue
                    except OSError:
                        pass
                self.startup_notices.append(f"The conversation store is unavailable ({exc.__class__.__name__}): "
                                            "conversations are kept in memory only.")
                return InMemorySaver()
        return InMemorySaver()

    def _fresh_agent(self) -> Any:
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        from assistant.router import RouterChatModel

        if self._memory_agent is None:
            self._memory_agent = create_agent(RouterChatModel(), self._tools, checkpointer=InMemorySaver())
        return self._memory_agent

    def ask(self, question: str, thread_id: str | None = None) -> Answer:
        """Answer one question in a thread (a new thread when None)."""
        ans = None
        for ev in self.stream(question, thread_id):
            if ev["type"] == "answer":
                ans = ev["answer"]
        assert ans is not None
        return ans

    def stream(self, question: str, thread_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Events: {'type': 'tool_start', 'name', 'args', 'id'}, {'type': 'tool_end', 'name', 'result', 'id'},
        {'type': 'text', 'text'}, and finally {'type': 'answer', 'answer': Answer}."""
        tid = thread_id or uuid.uuid4().hex
        notices: list[str] = list(self.startup_notices)
        self.startup_notices = []
        q = question if isinstance(question, str) else str(question)
        if len(q) > MAX_QUESTION_CHARS:
            notices.append(f"Your message was {len(q):,} characters; I read the first {MAX_QUESTION_CHARS:,}.")
            q = q[:MAX_QUESTION_CHARS]
        with self._lock:  # one SQLite connection: serialise turns
            if self.llm_agent is None:
                try:
                    yield from self._turn(self.agent, q, tid, self.backend, notices, public_tid=tid)
                except sqlite3.Error as exc:  # a locked or damaged conversation store
                    notices.append(f"The conversation store was unavailable ({exc.__class__.__name__}: {exc}); "
                                   "this answer starts a fresh thread.")
                    fresh = uuid.uuid4().hex
                    yield from self._turn(self._fresh_agent(), q, fresh, self.backend, notices, public_tid=fresh)
                except Exception as exc:  # never a traceback for the user: a short apology, details in the log
                    import logging

                    logging.getLogger(__name__).exception("turn failed")
                    text = ("Sorry — I could not work that out. Please rephrase, or ask about a model, a GPU, "
                            f"prices or costs. ({exc.__class__.__name__})")
                    yield {"type": "text", "text": text}
                    yield {"type": "answer", "answer": Answer(answer=text, language="en", tool_calls=[], citations=[],
                                                              backend=self.backend, thread_id=tid, notices=notices)}
                return
            buffered: list[dict[str, Any]] = []
            try:
                for ev in self._turn(self.llm_agent, q, f"llm:{tid}", self.backend, notices, strict=True, public_tid=tid):
                    buffered.append(ev)
                    if ev["type"] in ("tool_start", "tool_end"):
                        yield ev
            except _Fallback as why:
                reason = str(why)
            except Exception as exc:  # connection refused, 429, 5xx, timeouts, malformed output, loops
                reason = f"{exc.__class__.__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
            else:
                yield from (ev for ev in buffered if ev["type"] not in ("tool_start", "tool_end"))
                return
            previous = self._user_messages(f"llm:{tid}")[:-1]
            yield from self._turn(self.agent, q, f"{tid}:fallback:{uuid.uuid4().hex[:8]}",
                                  f"router (fallback: {reason})", notices, history=previous, public_tid=tid)

    def _user_messages(self, tid: str) -> list[str]:
        from langchain_core.messages import HumanMessage

        try:
            state = self.llm_agent.get_state({"configurable": {"thread_id": tid}})
            return [str(m.content) for m in state.values.get("messages", []) if isinstance(m, HumanMessage)]
        except Exception:
            return []

    def _turn(self, agent: Any, q: str, tid: str, backend: str, notices: list[str], strict: bool = False,
              history: list[str] | None = None, public_tid: str = "") -> Iterator[dict[str, Any]]:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        from assistant.compose import compose
        from assistant.grounding import check, scrub
        from assistant.nlu import parse_dialogue

        config = {"configurable": {"thread_id": tid}, "recursion_limit": 12}
        calls: dict[str, ToolCall] = {}
        order: list[str] = []
        final: AIMessage | None = None
        msgs = [HumanMessage(m) for m in (history or [])] + [HumanMessage(q)]
        for upd in agent.stream({"messages": msgs}, config, stream_mode="updates"):
            for _node, data in upd.items():
                for m in (data or {}).get("messages", []) if isinstance(data, dict) else []:
                    if isinstance(m, AIMessage) and m.tool_calls:
                        for tc in m.tool_calls:
                            calls[tc["id"]] = ToolCall(name=tc["name"], args=tc["args"], result=None)
                            order.append(tc["id"])
                            yield {"type": "tool_start", "name": tc["name"], "args": tc["args"], "id": tc["id"]}
                    elif isinstance(m, ToolMessage):
                        try:
                            res = json.loads(m.content) if isinstance(m.content, str) else m.content
                        except json.JSONDecodeError:
                            res = {"error": str(m.content)}
                        if m.tool_call_id in calls:
                            calls[m.tool_call_id].result = res
                            yield {"type": "tool_end", "name": calls[m.tool_call_id].name, "result": res,
                                   "id": m.tool_call_id}
                    elif isinstance(m, AIMessage):
                        final = m
        text = str(final.content) if final is not None else ""
        if isinstance(final.content if final is not None else None, list):  # content blocks
            text = "".join(b.get("text", "") for b in final.content if isinstance(b, dict))
        extra = final.additional_kwargs if final is not None else {}
        users = (history or []) + [q]
        parsed = parse_dialogue(users)
        tool_calls = [calls[i] for i in order]
        citations = extra.get("citations")
        if strict:
            if not tool_calls:
                raise _Fallback("the model called no tool")
            if not text.strip():
                raise _Fallback("the model gave no answer")
            citations = self._llm_citations(text, tool_calls)
        results = [c.result for c in tool_calls]
        unbacked = check(text, results, users)
        grounding = {"ok": not unbacked, "unbacked": unbacked}
        if unbacked:
            done = [(c.name, c.args, c.result if isinstance(c.result, dict) else {"result": c.result}) for c in tool_calls]
            rewritten, cites = compose(parsed, done)
            if rewritten.strip() and not check(rewritten, results, users):
                text, citations = rewritten, cites
                grounding["rewritten"] = "composer"
            else:
                text = scrub(text, unbacked)
                grounding["rewritten"] = "sentences dropped"
        if notices:
            text = "\n".join(notices) + "\n" + text
        yield {"type": "text", "text": text}
        ans = Answer(answer=text, language=extra.get("language", parsed.lang), tool_calls=tool_calls,
                     citations=[Citation(**c) for c in (citations or [])], backend=backend,
                     thread_id=public_tid or tid, intent=extra.get("intent", parsed.intent),
                     notices=notices, grounding=grounding)
        yield {"type": "answer", "answer": ans}

    @staticmethod
    def _llm_citations(text: str, tool_calls: list[ToolCall]) -> list[dict[str, str]]:
        import re

        cited = set(re.findall(r"\[([a-z]{2}-\d{2})\]", text))
        out = []
        for c in tool_calls:
            if c.name == "search_guide" and isinstance(c.result, dict):
                for p in c.result.get("passages", []):
                    if p["id"] in cited or not cited:
                        out.append({"guide": p["guide"], "passage_id": p["id"], "title": p.get("guide_title", ""),
                                    "quote": p["text"].split("\n")[-1][:280]})
        return out
