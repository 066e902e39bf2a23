"""One reading of look-alike text, before any name is matched: the same characters a reader sees.

Unicode NFKC (full-width "Ｈ１００" -> "H100", ligatures and presentation forms to their letters;
superscripts, subscripts and vulgar fractions excepted: "1024²" must not become "10242"),
zero-width characters and bidirectional controls removed ("H\u200b100" -> "H100"), and Cyrillic and
Greek letters that look like Latin ones mapped to them inside a word that also holds Latin letters
or digits ("Н100" with a Cyrillic Н -> "H100"); a word wholly in another script is left as it is.
"""

from __future__ import annotations

__all__ = ["fold_lookalikes"]

import re
import unicodedata

# zero-width space/joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator; bidi marks,
# embeddings, overrides and isolates (U+200E-F, U+202A-E, U+2066-9, U+061C)
_INVISIBLE = re.compile("[\u200b-\u200d\u2060\ufeff\u00ad\u180e\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")
# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables.txt, the single-letter cases)
_CONFUSABLE = str.maketrans({
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "І": "I", "ј": "j", "Ј": "J",
    "ѕ": "s", "Ѕ": "S", "ԁ": "d", "ԛ": "q", "ԝ": "w", "Ү": "Y", "ү": "y", "Һ": "h", "һ": "h",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
})
_KEPT = re.compile("([\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u209f\u2150-\u215f]+)")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")


def fold_lookalikes(text: str) -> str:
    """The text with look-alike characters read as a reader sees them (see the module docstring).

    Args:
        text: any user text (a question, a GPU or model name).

    Returns:
        The folded text; plain ASCII comes back unchanged.
    """
    if text.isascii():
        return text
    parts = _KEPT.split(text)  # odd items are kept characters
    t = _INVISIBLE.sub("", "".join(p if i % 2 else unicodedata.normalize("NFKC", p) for i, p in enumerate(parts)))

    def word(m: re.Match) -> str:
        w = m.group(0)
        mapped = w.translate(_CONFUSABLE)
        return mapped if mapped != w and _LATIN_OR_DIGIT.search(mapped) and _LATIN_OR_DIGIT.search(w) else w

    return _WORD.sub(word, t)
