"""One normal form of a question for every later step: lowercase, ASCII digits, one spelling of
Urdu letters, GPU multipliers and units split from their numbers."""

from __future__ import annotations

__all__ = ["MAX_CHARS", "normalise"]

import re

from assistant.engine.numbers import to_ascii_digits
from knowledge.lookalike import fold_lookalikes

MAX_CHARS = 4000
_URDU_FOLD = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ە": "ہ", "ة": "ہ", "ۀ": "ہ", "أ": "ا", "إ": "ا", "؟": "?",
                            "،": ",", "۔": ".", "×": "x", "–": "-", "—": "-", "’": "'", "‘": "'"})


def normalise(text: str) -> str:
    """Lowercase, ASCII digits, one spelling of Urdu letters, GPU multipliers split ("8xh100" -> "8x h100")."""
    t = to_ascii_digits(fold_lookalikes((text or "")[:MAX_CHARS])).translate(_URDU_FOLD).lower()
    t = re.sub(r"[\u064B-\u065F\u0670]", "", t)
    t = re.sub(r"(?<!\.)\b(\d{1,4})\s?x(?=[a-z])(?!large)", r"\1x ", t)   # 8xh100 -> 8x h100, not p4d.24xlarge
    t = re.sub(r"\b([a-z]+\d+[a-z]*)\s?x\s?(\d{1,3})\b", r"\1 x \2", t)   # h100x8 -> h100 x 8
    t = re.sub(r"\b(\d{1,2})\s?x\s?(\d{4})\b(?!\s*[x×]\s*\d)", r"\1x \2", t)   # 2x3090 -> 2x 3090 (not 1024x1024)
    t = re.sub(r"(?<=\d)(?=(?:gb|gib|tb)\b)", " ", t)
    t = re.sub(r"(?<=[a-z0-9])/\s*(?=(?:hr|h|hour|mo|month|gpu)\b)", " /", t)   # "a100/hr" -> "a100 /hr"
    t = re.sub(r"(?<=\d)\+(?=\s|$)", "", t)  # "30+ tok/s"
    t = re.sub(r"\b(?:a|one) (?:dollar|buck)\b", "$1", t)  # "under a dollar an hour"
    t = re.sub(r"\b([a-z][a-z0-9.\-]*):(\d+(?:\.\d+)?[bm])\b", r"\1 \2", t)  # ollama tags: "llama3.1:70b" -> "llama3.1 70b"
    t = re.sub(r"\b([a-z]{1,3}\d{2,4}[a-z]?)-(hours?|hrs?)\b", r"\1 \2", t)  # "h100-hours" -> "h100 hours"
    return re.sub(r"\s+", " ", t).strip()


