"""The conversational advisor: a LangChain agent over the tool registry, with threads kept in SQLite.

`Advisor().ask(question, thread_id=...)` returns an Answer; `Advisor().stream(...)` yields events
(tool_start, tool_end, text, answer) for the UI and Slack.
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


class Advisor:
    """One agent per process: the router model (or an LLM backend), the tools, a SQLite checkpointer."""

    def __init__(self, backend: str = "router", checkpoint_path: str | None = None):
        from langchain.agents import create_agent
        from langgraph.checkpoint.sqlite import SqliteSaver

        from assistant.router import RouterChatModel
        from assistant.tool_registry import TOOLS

        self.backend = backend
        path = checkpoint_path or str(data_dir() / "threads.sqlite")
        data_dir().mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._saver = SqliteSaver(self._conn)
        self._lock = threading.Lock()
        self.agent = create_agent(RouterChatModel(), TOOLS, checkpointer=self._saver)

    def ask(self, question: str, thread_id: str | None = None) -> Answer:
        """Answer one question in a thread (a new thread when None)."""
        ans = None
        for ev in self.stream(question, thread_id):
            if ev["type"] == "answer":
                ans = ev["answer"]
        assert ans is not None
        return ans

    def stream(self, question: str, thread_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Events: {'type': 'tool_start', 'name', 'args'}, {'type': 'tool_end', 'name', 'result'},
        {'type': 'text', 'text'}, and finally {'type': 'answer', 'answer': Answer}."""
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        tid = thread_id or uuid.uuid4().hex
        notices: list[str] = []
        q = question if isinstance(question, str) else str(question)
        if len(q) > MAX_QUESTION_CHARS:
            notices.append(f"Your message was {len(q):,} characters; I read the first {MAX_QUESTION_CHARS:,}.")
            q = q[:MAX_QUESTION_CHARS]
        config = {"configurable": {"thread_id": tid}, "recursion_limit": 12}
        calls: dict[str, ToolCall] = {}
        order: list[str] = []
        final: AIMessage | None = None
        with self._lock:  # one SQLite connection: serialise turns
            for upd in self.agent.stream({"messages": [HumanMessage(q)]}, config, stream_mode="updates"):
                for node, data in upd.items():
                    for m in (data or {}).get("messages", []):
                        if isinstance(m, AIMessage) and m.tool_calls:
                            for tc in m.tool_calls:
                                calls[tc["id"]] = ToolCall(name=tc["name"], args=tc["args"], result=None)
                                order.append(tc["id"])
                                yield {"type": "tool_start", "name": tc["name"], "args": tc["args"], "id": tc["id"]}
                        elif isinstance(m, ToolMessage):
                            try:
                                res = json.loads(m.content) if isinstance(m.content, str) else m.content
                            except json.JSONDecodeError:
                                res = m.content
                            if m.tool_call_id in calls:
                                calls[m.tool_call_id].result = res
                                yield {"type": "tool_end", "name": calls[m.tool_call_id].name, "result": res,
                                       "id": m.tool_call_id}
                        elif isinstance(m, AIMessage):
                            final = m
        text = str(final.content) if final is not None else ""
        extra = final.additional_kwargs if final is not None else {}
        if notices:
            text = "\n".join(notices) + "\n" + text
        yield {"type": "text", "text": text}
        ans = Answer(answer=text, language=extra.get("language", "en"), tool_calls=[calls[i] for i in order],
                     citations=[Citation(**c) for c in extra.get("citations", [])], backend=self.backend,
                     thread_id=tid, intent=extra.get("intent", ""), notices=notices)
        yield {"type": "answer", "answer": ans}
