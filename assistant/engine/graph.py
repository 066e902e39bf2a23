"""The turn as an explicit graph of node functions, with the typed Query in the state:

    understand -> (clarify | plan) -> tools -> plan ... -> compose -> ground -> END

`understand` folds the message into the thread's Query; `clarify` looks up an unknown model or
GPU (the tools answer with the closest known names) instead of guessing; `plan` asks for the next
round of tool calls (none left: compose); `tools` runs them; `compose` builds the typed answer
sections; `ground` renders them and checks that every number comes from a tool result or the user.
No checkpointer: the thread's Query and turns live in the conversation store (assistant.threads).
The pipeline is deterministic, so it runs as plain Python (`Turn`, with LangGraph's `stream(...,
stream_mode="updates")` interface): no LangGraph import on the CLI's path (issue 28: `ask` cold start).
"""

from __future__ import annotations

__all__ = ["Turn", "TurnState", "build_turn_graph", "needs_clarification"]

import logging
from typing import Any, Callable, Iterator, TypedDict

from assistant.engine.coherence import check as coherence_check
from assistant.engine.plan import plan
from assistant.engine.query import Query
from assistant.engine.scenario import resolve_scenarios
from assistant.engine.understand import understand_turn

MAX_ROUNDS = 3
log = logging.getLogger(__name__)


class TurnState(TypedDict, total=False):
    question: str
    lang: str | None               # "en" / "ur" sets the answer's language (else the question's)
    users: list[str]               # the thread's user messages, this one last (grounding accepts their numbers)
    prior: dict[str, Any] | None   # the thread's Query before this turn (JSON)
    query: dict[str, Any]          # the Query after this turn (JSON)
    pending: list[dict[str, Any]]  # tool calls of the next round
    done: list[list[Any]]          # [name, args, result] of this turn, in order
    rounds: int
    scenarios: list[dict[str, Any]]  # the resolved scenario of each side (assistant/engine/scenario.py)
    sections: dict[str, Any]
    text: str
    grounding: dict[str, Any]
    coherence: dict[str, Any]


def needs_clarification(q: Query) -> bool:
    """An unknown model with no size, or only unknown GPUs where a GPU is needed: ask, don't guess."""
    computing = set(q.intents) & {"fit", "speed", "train_time", "cost", "prices", "recommend"}
    if not computing:
        return False
    return bool(q.model_unknown and not q.params_b and not q.model)


def build_turn_graph(run_tool: Callable[[str, dict], dict], compose: Callable[[Query, list], Any],
                     render: Callable[[Any], str], check: Callable[[str, list, list], list],
                     scrub: Callable[[str, list], str]) -> Any:
    """Compile the turn graph over the given tool runner, composer, renderer and grounding check."""

    def understand_node(s: TurnState) -> TurnState:
        prior = Query.model_validate(s["prior"]) if s.get("prior") else None
        q = understand_turn(s["question"], prior)
        if s.get("lang") in ("en", "ur"):
            q.answer_lang = s["lang"]
        return {"query": q.model_dump(mode="json"), "done": [], "rounds": 0}

    def clarify_node(s: TurnState) -> TurnState:
        q = Query.model_validate(s["query"])
        calls = []
        if q.model_unknown and not q.params_b and not q.model:
            calls.append({"name": "vram_calculator", "args": {"model": q.model_unknown, "method": "inference"}})
        for g in q.gpu_unknown[:2]:
            calls.append({"name": "price_query", "args": {"gpu": g}})
        return {"pending": calls, "rounds": MAX_ROUNDS - 1}

    def scenario_node(s: TurnState) -> TurnState:
        q, scenarios = resolve_scenarios(Query.model_validate(s["query"]), run_tool)
        return {"query": q.model_dump(mode="json"), "scenarios": [x.model_dump(mode="json") for x in scenarios]}

    def plan_node(s: TurnState) -> TurnState:
        if s.get("rounds", 0) >= MAX_ROUNDS:
            return {"pending": []}
        q = Query.model_validate(s["query"])
        done = [tuple(d) for d in s.get("done", [])]
        return {"pending": plan(q, done), "rounds": s.get("rounds", 0) + 1}

    def tools_node(s: TurnState) -> TurnState:
        done = list(s.get("done", []))
        for call in s.get("pending", []):
            done.append([call["name"], call["args"], run_tool(call["name"], call["args"])])
        return {"done": done, "pending": []}

    def compose_node(s: TurnState) -> TurnState:
        q = Query.model_validate(s["query"])
        sections = compose(q, [tuple(d) for d in s.get("done", [])], s.get("scenarios") or [])
        coherence = coherence_check(s.get("scenarios") or [], [tuple(d) for d in s.get("done", [])])
        if not coherence["ok"]:
            log.warning("coherence: %s", coherence["violations"])
        typed = sections.model_dump(mode="json") if hasattr(sections, "model_dump") else sections
        return {"coherence": coherence, "sections": typed}

    def ground_node(s: TurnState) -> TurnState:
        text = render(s["sections"])
        # backed: the tools' results and arguments (the defaults they applied), and the user's own
        # numbers as understood (the Query's facts, numbers written in words included)
        results = [d[2] for d in s.get("done", [])] + [d[1] for d in s.get("done", [])] + \
            [Query.model_validate(s["query"]).facts()] + list(s.get("scenarios") or [])
        unbacked = check(text, results, s.get("users", [s["question"]]))
        grounding: dict[str, Any] = {"ok": not unbacked, "unbacked": unbacked}
        if unbacked:  # drop the statements that show them, keep the answer's shape
            sections = scrub(s["sections"], unbacked)
            text = render(sections)
            grounding["rewritten"] = "statements dropped"
            return {"text": text, "grounding": grounding,
                    "sections": sections.model_dump(mode="json") if hasattr(sections, "model_dump") else sections}
        return {"text": text, "grounding": grounding}

    return _wire({"understand": understand_node, "clarify": clarify_node, "scenario": scenario_node,
                  "plan": plan_node, "tools": tools_node, "compose": compose_node, "ground": ground_node})


def _next(node: str, s: TurnState) -> str | None:
    """The edges: understand -> (clarify -> tools | scenario -> plan <-> tools) -> compose -> ground -> end."""
    if node == "understand":
        return "clarify" if needs_clarification(Query.model_validate(s["query"])) else "scenario"
    if node == "plan":
        return "tools" if s.get("pending") else "compose"
    return {"clarify": "tools", "scenario": "plan", "tools": "plan", "compose": "ground"}.get(node)


class Turn:
    """The compiled turn: runs the nodes from `understand` along `_next`, each node's update merged into the
    state; `stream` yields {node: update} as LangGraph's stream_mode="updates" does."""

    def __init__(self, nodes: dict[str, Callable[[TurnState], TurnState]]):
        self.nodes = nodes

    def stream(self, state: TurnState, config: dict[str, Any] | None = None,
               stream_mode: str = "updates") -> Iterator[dict[str, TurnState]]:
        limit = int((config or {}).get("recursion_limit", 25))
        s: TurnState = dict(state)  # type: ignore[assignment]
        node: str | None = "understand"
        for _ in range(limit):
            if node is None:
                return
            update = self.nodes[node](s)
            s.update(update)  # type: ignore[typeddict-item]
            yield {node: update}
            node = _next(node, s)
        raise RecursionError(f"the turn did not finish within {limit} steps")

def _wire(nodes: dict[str, Callable[[TurnState], TurnState]]) -> Turn:
    return Turn(nodes)
