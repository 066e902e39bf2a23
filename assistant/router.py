"""The embedded default backend: a deterministic router that plugs into LangChain as a chat model.

It reads the conversation, emits tool calls (planner), and when the tool results are back composes
the answer (composer). No key, no network. `create_agent` drives it exactly like a real LLM.
"""

from __future__ import annotations

__all__ = ["RouterChatModel", "turn_results", "user_messages"]

import json
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from assistant.compose import compose
from assistant.nlu import parse_dialogue
from assistant.planner import next_calls
from assistant.settings import MAX_QUESTION_CHARS


def user_messages(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content)[:MAX_QUESTION_CHARS] for m in messages if isinstance(m, HumanMessage)]


def turn_results(messages: list[BaseMessage]) -> list[tuple[str, dict, dict]]:
    """(tool name, args, result) for the tool calls made since the last user message."""
    last_h = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    calls: dict[str, tuple[str, dict]] = {}
    out = []
    for m in messages[last_h + 1:]:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                calls[tc["id"]] = (tc["name"], tc["args"])
        elif isinstance(m, ToolMessage) and m.tool_call_id in calls:
            name, args = calls[m.tool_call_id]
            try:
                res = json.loads(m.content) if isinstance(m.content, str) else m.content
            except json.JSONDecodeError:
                res = {"error": str(m.content)}
            if not isinstance(res, dict):
                res = {"result": res}
            out.append((name, args, res))
    return out


def _bounded(x: Any) -> Any:
    """Tool arguments the checkpointer can store: integers beyond 64 bits become 10**15 (the tools
    then reject them with their accepted range)."""
    if isinstance(x, bool):
        return x
    if isinstance(x, int) and abs(x) > 10**15:
        return 10**15 if x > 0 else -10**15
    if isinstance(x, dict):
        return {k: _bounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_bounded(v) for v in x]
    return x


class RouterChatModel(BaseChatModel):
    """Rule-based intent/slot router: tool calls out, composed answers in."""

    tool_names: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "gpu-advisor-router"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kw: Any) -> "RouterChatModel":
        # create_agent binds on every model call: reuse the conversion (schema walks cost ~3 ms)
        names = [getattr(t, "name", None) or convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.model_copy(update={"tool_names": names})

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        parsed = parse_dialogue(user_messages(messages) or [""])
        done = turn_results(messages)
        rounds = sum(1 for m in messages[max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0):]
                     if isinstance(m, AIMessage) and m.tool_calls)
        calls = next_calls(parsed, done) if rounds < 3 else []
        calls = [c for c in calls if not self.tool_names or c["name"] in self.tool_names]
        if calls:
            base = len(done)
            calls = [{**c, "args": _bounded(c["args"])} for c in calls]
            msg = AIMessage(content="", tool_calls=[
                {"name": c["name"], "args": c["args"], "id": f"call_{base + i + 1}", "type": "tool_call"}
                for i, c in enumerate(calls)])
        else:
            text, cites = compose(parsed, done)
            msg = AIMessage(content=text, additional_kwargs={"citations": cites, "intent": parsed.intent,
                                                             "language": parsed.lang})
        return ChatResult(generations=[ChatGeneration(message=msg)])
