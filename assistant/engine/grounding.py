"""The grounding guard: every number in an answer must come from this turn's tool results or the
user's own words. Unbacked numbers never reach the user.

A number in the text is backed when some number found in the tool results (values, and numbers
inside their strings) or in the user's messages matches it after sensible rounding: the same
value at the precision the text shows, within 1 %, as a percentage of a fraction, or with a k/M
suffix. Passage ids ([ga-07]) and model/GPU names (Llama-3-8B, H100) are not numbers to check.
"""

from __future__ import annotations

__all__ = ["check", "scrub"]

import math
import re
from typing import Any, Iterable

_NUM = re.compile(r"(?<![\w.])([$]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(%|k\b|K\b|M\b)?")
_SKIP = re.compile(r"\[[a-z]{2}-\d{2}\]|\b[A-Za-z]+[-_]?\d+(?:\.\d+)?[A-Za-z][\w.-]*|\b[A-Za-z]{1,6}\d+\w*|"
                   r"\d+(?:\.\d+)?[bB]\b|\d+x\b|x\d+\b|\bq\d_\w+|\b\d{4}-\d{2}-\d{2}\b|"
                   r"\bfp\d+|\bbf16|\bint\d|\b[48]-bit|\b(?:RTX|GTX|Tesla|Quadro|Radeon|Instinct|GeForce)\s+[A-Z]?\d+\w*|"
                   r"\b(?:Llama|Qwen|Mistral|Gemma|Phi|Falcon|Mixtral|DeepSeek)\s+\d+(?:\.\d+)?")


def _numbers_in(x: Any) -> Iterable[float]:
    if isinstance(x, bool) or x is None:
        return
    if isinstance(x, (int, float)):
        if math.isfinite(x):
            yield float(x)
    elif isinstance(x, str):
        for m in re.finditer(r"-?\d[\d,]*(?:\.\d+)?", x):
            try:
                yield float(m.group().replace(",", ""))
            except ValueError:
                pass
    elif isinstance(x, dict):
        for v in x.values():
            yield from _numbers_in(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _numbers_in(v)


def _backed(val: float, decimals: int, suffix: str, pool: list[float], money: bool = False) -> bool:
    if val <= 10 and decimals == 0 and not suffix and not money:
        return True  # small counts ("2 GPUs", "1 of 3") are not figures to verify
    cands = [val]
    if suffix in ("k", "K"):
        cands += [val * 1000, val * 1024]
    if suffix == "M":
        cands.append(val * 1e6)
    tol_abs = 0.5 * 10 ** (-decimals) + 1e-9
    for y in pool:
        for c in cands:
            for yy in (abs(y), abs(y) * 100 if suffix == "%" else None):
                if yy is None:
                    continue
                if abs(c - yy) <= max(tol_abs, 0.01 * abs(yy)):
                    return True
    return False


def check(text: str, tool_results: list[Any], user_texts: list[str]) -> list[str]:
    """The numbers in `text` that no tool result or user message backs (empty list = grounded)."""
    pool = [v for r in tool_results for v in _numbers_in(r)] + [v for t in user_texts for v in _numbers_in(t)]
    for t in user_texts:  # "8k" -> 8192, "$100" -> 100 are already there; add k-expansions
        for m in re.finditer(r"(\d+(?:\.\d+)?)\s*[kK]\b", t):
            pool += [float(m.group(1)) * 1000, float(m.group(1)) * 1024]
    clean = _SKIP.sub(" ", text)
    bad = []
    for m in _NUM.finditer(clean):
        money, whole, frac, suffix = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        val = float(whole.replace(",", "") + ("." + frac if frac else ""))
        if not _backed(val, len(frac or ""), suffix, pool, bool(money)):
            bad.append(m.group().strip())
    return bad


def scrub(text: str, unbacked: list[str]) -> str:
    """Drop the sentences (or list items) that carry an unbacked number."""
    parts = re.split(r"(?<=[.!?۔])\s+|\n", text)
    keep = [p for p in parts if not any(u in p for u in unbacked)]
    return "\n".join(k for k in keep if k.strip())
