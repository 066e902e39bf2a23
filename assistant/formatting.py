"""Plain-text rendering shared by the terminal front ends (no third-party imports)."""

from __future__ import annotations

__all__ = ["number", "table"]

from typing import Iterable, Sequence


def number(x: float, nd: int = 2) -> str:
    """A figure with precision that shrinks as it grows: 1,234 / 123 / 12.3 / 1.23."""
    x = float(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.{nd}f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> str:
    """A fixed-width text table; `align` holds one 'l' or 'r' per column."""
    body = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in body)) if body else len(str(h)) for i, h in enumerate(headers)]
    al = (align or "l" * len(headers)).ljust(len(headers), "l")

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, al)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), sep, *(fmt(r) for r in body)])
