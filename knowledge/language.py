"""The one place that tells which language a text is written in.

    detect_language(text) -> "ur" | "roman-ur" | "en"

Urdu script by its letters; Urdu in Latin letters by the Roman-Urdu marker words of the lexicon
(knowledge/lexicon/roman_ur.json). The guide search, the engine and every front end use this.
"""

from __future__ import annotations

__all__ = ["ARABIC_SCRIPT", "answer_language", "detect_language", "is_urdu_script"]

import re
from functools import lru_cache

from knowledge.lexicon import lexicon

ARABIC_SCRIPT = re.compile(r"[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]")
_LATIN = re.compile(r"[A-Za-z]")
_LATIN_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _roman_markers() -> frozenset[str]:
    return frozenset(w for lx in lexicon().values() for w in lx.get("roman_markers", []))


def is_urdu_script(text: str) -> bool:
    """Arabic-script letters are at least half as many as Latin ones (Urdu with English terms inside)."""
    arabic = len(ARABIC_SCRIPT.findall(text or ""))
    return bool(arabic) and arabic >= len(_LATIN.findall(text or "")) * 0.5


def detect_language(text: str) -> str:
    """'ur' for Urdu script, 'roman-ur' for Urdu in Latin letters, else 'en'."""
    if is_urdu_script(text):
        return "ur"
    words = _LATIN_WORD.findall((text or "").lower())
    hits = sum(1 for w in words if w in _roman_markers())
    if hits >= 2 or (hits == 1 and len(words) <= 4 and words and words[0] in ("kya", "kitna", "kitne", "konsa", "kaunsa")):
        return "roman-ur"
    return "en"


def answer_language(text: str) -> str:
    """The language an answer is written in: Urdu for Urdu script, else English (Roman Urdu too)."""
    return "ur" if detect_language(text) == "ur" else "en"
