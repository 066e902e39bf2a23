"""Number and table formatting shared by every front end and renderer (no third-party imports).

One rounding rule for the whole product: `number` shrinks precision as a figure grows, money adds a
third significant digit below $0.10 (per-token prices), counts keep every digit with separators.
"""

from __future__ import annotations

__all__ = ["compact", "count", "number", "table", "usd"]

from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable, Sequence


def _fixed(x: float, nd: int) -> str:
    """`x` to `nd` decimals, halves rounded up as written: 24.15 reads 24.2 like 24.153 does (the float
    24.15 is stored as 24.1499..., which f-string rounding turns into 24.1)."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)  # never shown: the tools refuse non-finite values; kept printable for logs
    q = Decimal(repr(x)).quantize(Decimal(1).scaleb(-nd), rounding=ROUND_HALF_UP)
    return f"{q:,.{nd}f}" if abs(x) >= 1000 else f"{q:.{nd}f}"


def number(x: float, nd: int = 2) -> str:
    """A figure with precision that shrinks as it grows: 1,234 / 123 / 12.3 / 1.23."""
    x = float(x)
    if abs(x) >= 100:
        return _fixed(x, 0)
    if abs(x) >= 10:
        return _fixed(x, 1)
    return _fixed(x, nd)


def usd(x: float) -> str:
    """Dollars without the sign: `number` rounding, and three significant digits below 0.10 ($0.0366)."""
    x = float(x)
    if x != 0 and abs(x) < 0.1:
        return f"{x:.3g}" if abs(x) >= 1e-4 else f"{x:.2e}"
    return number(x)


def count(x: float) -> str:
    """A whole count with thousands separators (2,048 tokens, 50,000 examples); a fraction keeps `number`."""
    x = float(x)
    if x.is_integer():
        return f"{int(x):,}"
    return number(x)


def compact(x: float) -> str:
    """A size as people say it: 24 (GiB) rather than 24.0, otherwise one decimal (79.6)."""
    x = float(x)
    if abs(x - round(x)) < 0.05:
        return f"{round(x):,}"
    return _fixed(x, 1)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> str:
    """A fixed-width text table; `align` holds one 'l' or 'r' per column."""
    body = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in body)) if body else len(str(h)) for i, h in enumerate(headers)]
    al = (align or "l" * len(headers)).ljust(len(headers), "l")

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, al)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), sep, *(fmt(r) for r in body)])
