"""Plain-text rendering shared by the terminal front ends (no third-party imports)."""

from __future__ import annotations

__all__ = ["table"]

from typing import Iterable, Sequence


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> str:
    """A fixed-width text table; `align` holds one 'l' or 'r' per column."""
    body = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in body)) if body else len(str(h)) for i, h in enumerate(headers)]
    al = (align or "l" * len(headers)).ljust(len(headers), "l")

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, al)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), sep, *(fmt(r) for r in body)])
