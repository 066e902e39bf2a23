"""Explanations of the concepts users ask about (knowledge/concepts.json), each with its public source.

    concept_ids() -> tuple of ids          explain(ids, lang) -> [{id, text, source, worked, passages}]

The words that find a concept in a question are in the lexicons (`explain_topics`); the texts state no
figure a tool should compute, so the answer's numbers still come from the tools.
"""

from __future__ import annotations

__all__ = ["choice_ids", "choices_between", "concept_ids", "explain"]

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tools.errors import InvalidInput

_FILE = Path(__file__).resolve().parent / "concepts.json"


@lru_cache(maxsize=1)
def _concepts() -> dict[str, dict[str, Any]]:
    return json.loads(_FILE.read_text(encoding="utf-8"))["concepts"]


def concept_ids() -> tuple[str, ...]:
    return tuple(_concepts())


def choice_ids() -> frozenset[str]:
    """Concepts that are a choice between options ('vLLM or TGI', 'LoRA or QLoRA')."""
    return frozenset(i for i, c in _concepts().items() if c.get("choice"))


def choices_between(kind: str) -> frozenset[str]:
    """Concepts whose options are names of `kind` the question gives ('providers': "RunPod vs Vast, which is
    more reliable?" weighs the providers named)."""
    return frozenset(i for i, c in _concepts().items() if c.get("between") == kind)


def explain(ids: list[str], lang: str = "en") -> list[dict[str, Any]]:
    """The explanation of each concept id, in `lang` ('en' or 'ur'), in the order given, without repeats."""
    if lang not in ("en", "ur"):
        raise InvalidInput("lang", lang, "en or ur")
    known = _concepts()
    out = []
    for i in dict.fromkeys(ids):
        if i not in known:
            raise InvalidInput("topic", i, "one of " + ", ".join(known))
        c = known[i]
        out.append({"id": i, "text": c[lang], "source": c["source"], "worked": c.get("worked"),
                    "passages": list(c.get("passages") or [])})
    return out
