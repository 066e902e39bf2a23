"""Guide citations that support the claim: the passage's most relevant full sentence(s), never a
heading alone, and only ids that exist in knowledge/guides/passages.csv."""

from __future__ import annotations

__all__ = ["best_quote", "cite", "known_ids", "split_sentences"]

import re
from functools import lru_cache

from assistant.engine.answer import CitationRef
from knowledge.guide_index import GUIDE_TITLES, load_passages, tokenize

# Abbreviations whose period does not end a sentence ("Spot vs. on-demand", "e.g. 13B").
_ABBREV = re.compile(r"\b(vs|e\.g|i\.e|etc|approx|cf)\.", re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[.!?۔؟])\s+")
_MIN_WORDS = 5
_MAX_CHARS = 420


@lru_cache(maxsize=1)
def _by_id() -> dict[str, object]:
    return {p.id: p for p in load_passages()}


def known_ids() -> set[str]:
    """Every passage id of the guides."""
    return set(_by_id())


def split_sentences(text: str) -> list[str]:
    """Full sentences of a passage: bullets and line breaks separate, 'vs.' and 'e.g.' do not."""
    out: list[str] = []
    for line in str(text).split("\n"):
        line = line.strip().lstrip("•").strip()
        if not line:
            continue
        protected = _ABBREV.sub(lambda m: m.group(1) + "\u2024", line)
        out += [s.replace("\u2024", ".").strip() for s in _SPLIT.split(protected) if s.strip()]
    return out


def _claims(sentences: list[str]) -> list[int]:
    """Indices of sentences that state something: not a heading fragment ('Billing granularity.'), not
    the FAQ's question line."""
    keep = [i for i, s in enumerate(sentences) if len(s.split()) >= _MIN_WORDS and not s.rstrip().endswith(("?", "؟"))]
    return keep or sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))[:1]


def best_quote(text: str, about: str) -> str:
    """The sentence of `text` sharing most words and concepts with `about` (the first on a tie), with
    the next sentence when it alone is short."""
    sents = split_sentences(text)
    if not sents:
        return ""
    q = set(tokenize(about))
    idx = _claims(sents)
    best = max(idx, key=lambda i: (len(q & set(tokenize(sents[i]))), -i))
    quote = sents[best]
    if len(quote) < 90 and best + 1 < len(sents) and best + 1 in idx:
        quote += " " + sents[best + 1]
    if len(quote) > _MAX_CHARS:
        cut = quote[:_MAX_CHARS].rsplit(" ", 1)[0]
        quote = cut.rstrip(",;:") + "…"
    return quote


def cite(passage_id: str, about: str, lang: str) -> CitationRef | None:
    """A citation of one passage for the claim `about` (None for an id the guides do not have)."""
    p = _by_id().get(passage_id)
    if p is None:
        return None
    lang = "ur" if lang == "ur" else "en"
    return CitationRef(id=p.id, title=GUIDE_TITLES[p.guide][lang], quote=best_quote(p.text(lang), about), lang=lang)
