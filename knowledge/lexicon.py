"""Per-locale vocabulary as data: knowledge/lexicon/<locale>.json maps surface forms to concepts.

Each file holds the same keys (number_words, scale_words, cues per concept ...). The
understanding reads the union of all locales, because people mix them in one sentence
("bhai 70B ko 2 A100 pe chala sakte hain?"); the language of the answer is decided separately.
Adding a language = adding a lexicon file (and the answer templates).
"""

from __future__ import annotations

__all__ = ["LOCALES", "lexicon", "patterns", "pattern_map"]

import json
import re
from functools import lru_cache
from pathlib import Path

LEXICON_DIR = Path(__file__).resolve().parent / "lexicon"
LOCALES = ("en", "ur", "roman-ur")


@lru_cache(maxsize=1)
def lexicon() -> dict[str, dict]:
    """{locale: the parsed lexicon file}."""
    return {loc: json.loads((LEXICON_DIR / f"{loc.replace('-', '_')}.json").read_text(encoding="utf-8"))
            for loc in LOCALES}


def _alt(forms: list[str]) -> str:
    return "|".join(sorted(forms, key=len, reverse=True))


@lru_cache(maxsize=None)
def patterns(key: str) -> re.Pattern | None:
    """One compiled alternation of every locale's forms for a list-valued key (None if no locale has it)."""
    forms: list[str] = []
    for lx in lexicon().values():
        forms.extend(lx.get(key, []))
    return re.compile(rf"(?:{_alt(forms)})") if forms else None


@lru_cache(maxsize=None)
def pattern_map(key: str) -> dict[str, re.Pattern]:
    """{concept: compiled alternation} for a dict-valued key ({concept: [forms]}), all locales merged."""
    merged: dict[str, list[str]] = {}
    for lx in lexicon().values():
        for concept, forms in lx.get(key, {}).items():
            merged.setdefault(concept, []).extend(forms)
    return {c: re.compile(rf"(?:{_alt(f)})") for c, f in merged.items()}
