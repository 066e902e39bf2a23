"""The conversational advisor: a LangChain agent over the tool registry, with threads in assistant.threads.

`Advisor().ask(question, thread_id=...)` returns an Answer; `Advisor().stream(...)` yields events
(tool_start, tool_end, text, answer) for the UI and Slack. The backend is the embedded router or
any LangChain chat model (assistant.runtime.backends); an LLM turn that fails, times out, loops or calls no
tool falls back to the router for that turn, and every answer passes the grounding guard.
"""

from __future__ import annotations

__all__ = ["Advisor", "Answer", "ToolCall", "Citation"]

import json
import threading
from typing import Any, Iterator

from pydantic import BaseModel

from assistant.runtime.settings import MAX_QUESTION_CHARS


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
    query: dict[str, Any] | None = None      # the typed Query the answer rests on (assistant/engine/query.py)
    sections: dict[str, Any] | None = None   # the typed answer (assistant/engine/answer.py), for renderers
    scenarios: list[dict[str, Any]] = []      # the resolved scenario of each side (assistant/engine/scenario.py)
    coherence: dict[str, Any] | None = None   # the coherence guard's verdict (assistant/engine/coherence.py)


class _Fallback(Exception):
    """The LLM turn cannot be used; the router answers instead."""


class Advisor:
    """One agent per process and backend; threads in the conversation store (assistant.threads)."""

    def __init__(self, backend: str | None = None, checkpoint_path: str | None = None, chat_model: Any = None,
                 store: Any = None):
        from assistant.runtime.backends import make_chat_model, resolve_backend
        from assistant.service.prompts import SYSTEM_PROMPT
        from assistant.threads import open_store

        self.backend = "custom" if chat_model is not None else resolve_backend(backend)
        # checkpoint_path: a SQLite file for the store (tests, benchmarks); None: the settings decide
        self.store = store if store is not None else open_store(checkpoint_path)
        self.startup_notices: list[str] = list(self.store.notices)
        self._lock = threading.Lock()
        self.graph = _turn_graph()  # the embedded engine: no checkpointer, the store holds the thread
        self.llm_agent = None
        if self.backend != "router":
            from langchain.agents import create_agent  # ~1 s to import: only when an LLM is configured

            from assistant.service.registry import TOOLS

            model = chat_model if chat_model is not None else make_chat_model(self.backend)
            self.llm_agent = create_agent(model, TOOLS, system_prompt=SYSTEM_PROMPT)

    def ask(self, question: str, thread_id: str | None = None, owner: str | None = None,
            lang: str | None = None) -> Answer:
        """Answer one question in a thread (a new thread when None) of `owner` (default: the local OS user);
        `lang` ("en" or "ur") sets the answer's language, else it follows the question's."""
        ans = None
        for ev in self.stream(question, thread_id, owner=owner, lang=lang):
            if ev["type"] == "answer":
                ans = ev["answer"]
        assert ans is not None
        return ans

    def stream(self, question: str, thread_id: str | None = None, owner: str | None = None,
               lang: str | None = None) -> Iterator[dict[str, Any]]:
        """Events: {'type': 'tool_start', 'name', 'args', 'id'}, {'type': 'tool_end', 'name', 'result', 'id'},
        {'type': 'text', 'text'}, and finally {'type': 'answer', 'answer': Answer}.

        The thread's earlier turns are loaded from the store before the turn and the new turn is
        appended after it; another owner's thread id behaves as a new thread."""
        from assistant.threads import ThreadStoreError, local_owner, new_thread_id
        from assistant.threads.base import check_key, clean_text

        owner = owner or local_owner()
        tid = thread_id or new_thread_id()
        check_key(owner, tid)
        notices: list[str] = list(self.startup_notices)
        self.startup_notices = []
        q = clean_text(question if isinstance(question, str) else str(question))  # no lone surrogates
        if len(q) > MAX_QUESTION_CHARS:
            notices.append(f"Your message was {len(q):,} characters; I read the first {MAX_QUESTION_CHARS:,}.")
            q = q[:MAX_QUESTION_CHARS]
        history: list[tuple[str, str]] = []
        prior: dict[str, Any] | None = None
        try:
            record = self.store.load(owner, tid)
            history = [(t.question, t.answer) for t in record.turns] if record else []
            prior = (record.state or {}).get("query") if record else None
        except ThreadStoreError as exc:
            notices.append(f"The conversation store could not be read ({exc}); this answer starts a fresh thread.")
        if lang not in (None, "auto", "en", "ur"):
            from tools.errors import InvalidInput

            raise InvalidInput("lang", lang, "auto, en or ur")
        for ev in self._engine(q, tid, history, notices, prior, None if lang == "auto" else lang):
            if ev["type"] == "answer":
                ans = ev["answer"]
                try:
                    self.store.append_turn(owner, tid, q, ans.answer,
                                           {"query": ans.query, "intent": ans.intent, "language": ans.language})
                except ThreadStoreError as exc:  # one write degrades; the answer still goes out
                    ans.notices.append(str(exc))
                    ans.answer = f"{ans.answer}\n\n_{exc}_"
            yield ev

    def _engine(self, q: str, tid: str, history: list[tuple[str, str]], notices: list[str],
                prior: dict[str, Any] | None = None, lang: str | None = None) -> Iterator[dict[str, Any]]:
        with self._lock:
            if self.llm_agent is None:
                try:
                    yield from self._graph_turn(q, tid, history, notices, prior, self.backend, lang)
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
                for ev in self._turn(self.llm_agent, q, self.backend, notices, strict=True, history=history,
                                     public_tid=tid):
                    buffered.append(ev)
                    if ev["type"] in ("tool_start", "tool_end"):
                        yield ev
            except _Fallback as why:
                reason = str(why)
            except Exception as exc:  # connection refused, 429, 5xx, timeouts, malformed output, loops
                from assistant.runtime.secrets import scrub_secrets

                first = str(exc).splitlines()[0][:160] if str(exc) else ""
                reason = scrub_secrets(f"{exc.__class__.__name__}: {first}")
            else:
                yield from (ev for ev in buffered if ev["type"] not in ("tool_start", "tool_end"))
                return
            yield from self._graph_turn(q, tid, history, notices, prior, f"router (fallback: {reason})", lang)

    def _graph_turn(self, q: str, tid: str, history: list[tuple[str, str]], notices: list[str],
                    prior: dict[str, Any] | None, backend: str, lang: str | None = None) -> Iterator[dict[str, Any]]:
        """One turn of the embedded engine (assistant/engine/graph.py), streamed as events."""
        users = [asked for asked, _ in history] + [q]
        if prior is None and history:  # a thread stored before the typed Query: fold its questions
            from assistant.engine.understand import understand_dialogue

            prior = understand_dialogue([asked for asked, _ in history]).model_dump(mode="json")
        state: dict[str, Any] = {"question": q, "users": users, "prior": prior, "lang": lang}
        calls: list[ToolCall] = []
        for upd in self.graph.stream(state, {"recursion_limit": 20}, stream_mode="updates"):
            for node, data in upd.items():
                data = data or {}
                state.update(data)
                if node in ("plan", "clarify"):
                    for i, c in enumerate(data.get("pending", [])):
                        yield {"type": "tool_start", "name": c["name"], "args": c["args"], "id": f"{len(calls) + i}"}
                elif node == "tools":
                    for name, args, result in data.get("done", [])[len(calls):]:
                        calls.append(ToolCall(name=name, args=args, result=result))
                        yield {"type": "tool_end", "name": name, "result": result, "id": f"{len(calls) - 1}"}
        text = state.get("text", "")
        if notices:
            text = "\n".join(notices) + "\n" + text
        sections = state.get("sections") or {}
        query = state.get("query") or {}
        yield {"type": "text", "text": text}
        cites = [Citation(guide=c["id"].split("-")[0], passage_id=c["id"], title=c.get("title", ""), quote=c["quote"])
                 for c in sections.get("citations", [])]
        yield {"type": "answer", "answer": Answer(
            answer=text, language=sections.get("lang") or query.get("answer_lang", "en"), tool_calls=calls,
            citations=cites, backend=backend, thread_id=tid, intent=(query.get("intents") or ["out_of_scope"])[0],
            notices=notices, grounding=state.get("grounding", {"ok": True, "unbacked": []}), query=query,
            sections=sections, scenarios=state.get("scenarios") or [], coherence=state.get("coherence"))}

    def _turn(self, agent: Any, q: str, backend: str, notices: list[str], strict: bool = False,
              history: list[tuple[str, str]] | None = None, public_tid: str = "") -> Iterator[dict[str, Any]]:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        from assistant.engine.compose import compose
        from assistant.engine.render import render_markdown
        from assistant.engine.understand import understand_dialogue
        from assistant.engine.grounding import check, scrub

        config = {"recursion_limit": 12}
        calls: dict[str, ToolCall] = {}
        order: list[str] = []
        final: AIMessage | None = None
        msgs: list[Any] = []
        for asked, answered in history or []:
            msgs += [HumanMessage(asked), AIMessage(answered)]
        msgs.append(HumanMessage(q))
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
        users = [asked for asked, _ in history or []] + [q]
        parsed = understand_dialogue(users)
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
            sections = compose(parsed, done)
            rewritten = render_markdown(sections)
            if rewritten.strip() and not check(rewritten, results, users):
                text = rewritten
                citations = [{"guide": c.id.split("-")[0], "passage_id": c.id, "title": c.title, "quote": c.quote}
                             for c in sections.citations]
                grounding["rewritten"] = "composer"
            else:
                text = scrub(text, unbacked)
                grounding["rewritten"] = "sentences dropped"
        if notices:
            text = "\n".join(notices) + "\n" + text
        yield {"type": "text", "text": text}
        ans = Answer(answer=text, language=extra.get("language", parsed.answer_lang), tool_calls=tool_calls,
                     citations=[Citation(**c) for c in (citations or [])], backend=backend,
                     thread_id=public_tid, intent=extra.get("intent", parsed.intent),
                     notices=notices, grounding=grounding, query=parsed.model_dump(mode="json"))
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


def _turn_graph() -> Any:
    from assistant.engine.compose import compose
    from assistant.engine.graph import build_turn_graph
    from assistant.engine.render import render_markdown, scrub_sections
    from assistant.engine.grounding import check
    from assistant.service.registry import run_tool

    return build_turn_graph(run_tool, compose, render_markdown, check, scrub_sections)
