"""Relative follow-ups: "double the users and half the context", "آدھا ڈیٹا اور دو گنا epochs" change the
thread's values by a factor (lexicon key `relative`: factor words and the quantities they act on)."""

from __future__ import annotations

__all__ = ["relative_changes"]

import re

from assistant.engine.query import Query
from knowledge.lexicon import lexicon


def relative_changes(t: str, prior: Query, merged: Query) -> None:
    """"double the users and half the context", "آدھا ڈیٹا اور دو گنا epochs": the thread's value times the factor."""
    for lx in lexicon().values():
        rel = lx.get("relative")
        if not rel:
            continue
        for word, factor in rel["factors"].items():
            for target, field in rel["targets"].items():
                if not re.search(rf"(?<!\w){re.escape(word)}\s+(?:the\s+|کر\s+)?(?:{target})(?!\w)|(?<!\w)(?:{target})\s+(?:ko\s+)?"
                                 rf"{re.escape(word)}(?!\w)", t):
                    continue
                old = getattr(prior, field)
                if field == "examples" and old is None and prior.dataset_tokens:
                    field, old = "dataset_tokens", prior.dataset_tokens
                if old:
                    v = old * factor
                    setattr(merged, field, int(round(v)) if isinstance(old, int) else float(v))
