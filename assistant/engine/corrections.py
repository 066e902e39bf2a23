"""Corrections a user makes: a number taken back, a follow-up that re-sizes the model or replaces the context.

    corrected(t) -> (text, retracted)          the asserted values only ("7b nahi balke 72b" -> "72b")
    bare_context(new, merged)                  "acha 64k kar do": a bare k-count is the new context
    resized_in_family(prior, new, merged)      "sorry, 72B" after Qwen2.5 7B: Qwen2.5 72B

The forms are data: `corrected_number` in each lexicon.
"""

from __future__ import annotations

__all__ = ["bare_context", "corrected", "resized_in_family"]

import re
from functools import lru_cache

from assistant.engine.normalise import normalise
from assistant.engine.numbers import find_numbers
from assistant.engine.quantities import ctx_tokens
from assistant.engine.query import Query
from knowledge.catalog import resolve_model
from knowledge.lexicon import lexicon
from tools.errors import AdvisorError


def corrected(t: str) -> tuple[str, list[str]]:
    """"7b nahi balke 72b", "72B, not 7B", "not 8k but 16k": only the value the user asserts is read; the
    retracted ones are returned (they count as used: the user took them back)."""
    dropped: list[str] = []

    def keep(m: re.Match) -> str:
        dropped.append(m.group("drop").strip())
        return m.group("keep")
    for form in _correction_forms():
        t = form.sub(keep, t)
    return t, dropped


@lru_cache(maxsize=1)
def _correction_forms() -> tuple[re.Pattern, ...]:
    return tuple(re.compile(f) for lx in lexicon().values() for f in lx.get("corrected_number", []))


def bare_context(new: Query, merged: Query) -> None:
    """"acha 64k kar do to?" after a context was given: a bare k-count is the new context, not an unused number."""
    if new.context_tokens is not None or merged.context_tokens is None:
        return
    for written in list(merged.not_used):
        nums = find_numbers(normalise(written))
        if len(nums) == 1 and nums[0].scale == "k" and re.fullmatch(r"\d+(?:\.\d+)?\s?k", normalise(written)):
            merged.context_tokens = int(ctx_tokens(nums[0]))
            merged.not_used.remove(written)
            merged.number_uses[written] = "context_tokens"
            return


def resized_in_family(prior: Query, new: Query, merged: Query) -> None:
    """"sorry, 72B" after Qwen2.5 7B: the family's model of that size when the catalog has it, not a generic shape."""
    if not (prior.model and new.params_b and not new.model and not new.model_unknown):
        return
    size = f"{new.params_b:g}b"
    candidate = re.sub(r"(?<![\d.])\d+(?:\.\d+)?b", size, prior.model, count=1)
    if candidate == prior.model:
        return
    try:
        resolved = resolve_model(candidate)
    except AdvisorError:
        return
    merged.model, merged.params_b, merged.model_text = resolved.id, None, None
