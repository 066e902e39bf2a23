"""Numbers as people type them, in English, Urdu and Roman Urdu.

`find_numbers(text)` returns every number of a lowercased text with its span and value: digits in
any script ("۲۴", "٢٤"), separators ("50,000", "1,00,000"), decimals, exponents ("1e5"), suffixes
("8k", "1.5M", "70b", "2T"), scale words ("50 thousand", "2 lakh", "pachas hazar", "دو لاکھ",
"3 crore") and number words ("fifty", "two", "chaar", "آٹھ", "dedh" = 1.5). The words and scales
come from the per-locale lexicons (assistant/engine/lexicon/*.json), not from code.
"""

from __future__ import annotations

__all__ = ["Num", "find_numbers", "to_ascii_digits"]

import re
from dataclasses import dataclass
from functools import lru_cache

from knowledge.lexicon import lexicon

_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")


def to_ascii_digits(text: str) -> str:
    """Urdu/Arabic-Indic digits to ASCII; Arabic decimal and thousands separators to '.' and ','."""
    return text.translate(_DIGITS).replace("٫", ".").replace("٬", ",")


@dataclass(frozen=True)
class Num:
    value: float
    start: int
    end: int
    text: str
    scale: str = ""      # the suffix or scale word that multiplied it ("k", "b", "lakh" ...), "" for none
    is_word: bool = False  # written as words ("two", "pachas hazar")


@lru_cache(maxsize=4)
def _tables(word_locales: frozenset[str] | None = None) -> tuple[dict[str, float], dict[str, float], re.Pattern, re.Pattern]:
    """Number words of `word_locales` (every locale when None) and the scale words of all locales:
    "do" is two in Roman Urdu and a verb in English ("can I do batch 16"), while "lakh" is a scale
    in both."""
    words: dict[str, float] = {}
    scales: dict[str, float] = {}
    for loc, lx in lexicon().items():
        if word_locales is None or loc in word_locales:
            words.update({k: float(v) for k, v in lx.get("number_words", {}).items()})
        scales.update({k: float(v) for k, v in lx.get("scale_words", {}).items()})
    negative = sorted({w for lx in lexicon().values() for w in lx.get("negative_words", [])}, key=len, reverse=True)
    scale_alt = "|".join(sorted((re.escape(s) for s in scales), key=len, reverse=True))
    word_alt = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    neg_alt = "|".join(map(re.escape, negative)) or "(?!)"
    digit = (rf"(?<![\w.])(?P<neg>(?:{neg_alt})\s+)?"  # "minus 2000 tokens" (lexicon negative_words)
             r"(?P<num>(?:(?<=[\s(=:,])-|^-)?(?:\d{1,3}(?:,\d{2,3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+))"
             rf"(?:[\s-]?(?P<scale>{scale_alt})(?:\s+(?P<scale2>{scale_alt})(?![\w\u0600-\u06ff/]))?(?![a-z0-9\u0600-\u06ff/]))?")
    wordnum = (rf"(?<![\w\u0600-\u06ff])(?P<w>(?:(?:{word_alt}|{scale_alt})(?:[\s-]+(?:and\s+)?)?)*(?:{word_alt}|{scale_alt}))"
               r"(?![\w\u0600-\u06ff])")
    return words, scales, re.compile(digit), re.compile(wordnum)


def _word_value(phrase: str, words: dict[str, float], scales: dict[str, float]) -> float | None:
    """'two hundred fifty thousand' -> 250000; 'pachas hazar' -> 50000; 'dedh lakh' -> 150000."""
    toks = [t.replace("_", " ") for t in re.split(r"[\s-]+", _joined(phrase, words)) if t and t != "and"]
    total, current, seen_number = 0.0, 0.0, False
    for t in toks:
        if t in scales and (current or total or t not in words):  # "پانچ سو" is 5 x 100, "سو" alone 100
            m = scales[t]
            if m == 100:
                current = (current or 1) * 100
            elif total + current and m > total + current:
                total, current = (total + current) * m, 0.0  # "دس لاکھ ارب": (ten lakh) billion
            else:
                total += (current or 1) * m
                current = 0.0
            seen_number = True
        elif t in words:
            w = words[t]
            if current and not (current % 100 == 0 and w < 100 or current % 100 >= 20 and current % 10 == 0 and w < 10):
                return None  # "twenty one" is 21, "hundred five" 105; "ek single", "one two" are not one number
            current += w
            seen_number = True
        elif t in scales:
            m = scales[t]
            if m == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * m
                current = 0.0
            seen_number = True
        else:
            return None
    return total + current if seen_number else None


def _joined(phrase: str, words: dict[str, float]) -> str:
    """Multi-word number words as one token ("a couple hundred" -> "a_couple hundred"); same length as `phrase`."""
    for w in sorted((w for w in words if " " in w), key=len, reverse=True):
        phrase = re.sub(rf"(?<![\w]){re.escape(w)}(?![\w])", w.replace(" ", "_"), phrase)
    return phrase


def _word_runs(phrase: str, words: dict[str, float], scales: dict[str, float]) -> list[tuple[int, int, str]]:
    """The numbers a run of number words holds, as (start, end, text) within `phrase`: one when it reads
    as one number ("two hundred fifty"), else the longest readable runs left to right ("ek single": 1, 1)."""
    if _word_value(phrase, words, scales) is not None:
        return [(0, len(phrase), phrase)]
    toks = [(t.start(), t.end()) for t in re.finditer(r"[^\s-]+", _joined(phrase, words)) if t.group(0) != "and"]
    runs, i = [], 0
    while i < len(toks):
        j = len(toks)
        while j > i and _word_value(phrase[toks[i][0]:toks[j - 1][1]], words, scales) is None:
            j -= 1
        if j == i:
            i += 1
            continue
        a, b = toks[i][0], toks[j - 1][1]
        if not all(t in scales for t in re.split(r"[\s-]+", phrase[a:b])):
            runs.append((a, b, phrase[a:b]))
        i = j
    return runs


def find_numbers(text: str, word_locales: frozenset[str] | None = None) -> list[Num]:
    """Every number of `text` (lowercase, ASCII digits), left to right, spans not overlapping;
    number words read from `word_locales` only (all when None)."""
    words, scales, digit_re, word_re = _tables(word_locales)
    out: list[Num] = []
    taken: list[tuple[int, int]] = []
    for m in digit_re.finditer(text):
        raw = m.group("num").replace(",", "")
        try:
            v = float(raw)
        except ValueError:
            continue
        sc = (m.group("scale") or "").strip()
        if sc:
            v *= scales[sc]
        if m.group("neg"):
            v = -abs(v)  # "minus 2000 tokens"
        if m.group("scale2"):  # "10 لاکھ ارب": ten lakh billion
            sc = m.group("scale2").strip()
            v *= scales[sc]
        if not (v == v) or abs(v) > 1e300:
            v = 1e300
        out.append(Num(v, m.start(), m.end(), m.group(0), sc))
        taken.append((m.start(), m.end()))
    for m in word_re.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        phrase = m.group("w")
        toks = re.split(r"[\s-]+", phrase)
        counted = len(toks) == 1 and toks[0] in words and re.match(r"\s+[^\W\d]", text[m.end():])  # "سو یوزرز"
        if all(t in scales for t in toks) and not counted and not (
                len(toks) == 1 and len(toks[0]) > 2 and re.search(r"(?:per|a|every|each|فی|fi)\s+$", text[:m.start()])):
            continue  # a bare "thousand"/"k" is not a number, except "per thousand images" and "سو یوزرز" (100 users)
        if phrase in ("ek", "aik", "ایک") and re.match(r"\s+(?:saath|sath|ساتھ|waqt|وقت)\b", text[m.end():]):
            continue  # "ek saath", "ایک وقت میں": together, at a time; not the number one
        for a, b, part in _word_runs(phrase, words, scales):
            ptoks = re.split(r"[\s-]+", part)
            out.append(Num(_word_value(part, words, scales) or 0.0, m.start() + a, m.start() + b, part,
                           next((t for t in reversed(ptoks) if t in scales), ""), True))
    # a scale word after a digit number with a space ("50 hazar", "2 لاکھ") was matched above
    return sorted(out, key=lambda n: n.start)
