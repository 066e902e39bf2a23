"""The command line of a benchmark that returns its figures as (label, value) rows.

`run_all` gathers such rows from every benchmark into one table; run alone, a benchmark's options are
the integer keywords of its `run` function (same names, same defaults), so they are declared once.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Callable

Rows = list[tuple[str, str]]


def rows_main(run: Callable[..., Rows], description: str | None, label_width: int = 48) -> int:
    """Parse one --option per integer keyword of `run` (default: its default), call it, print its rows.

    Args:
        run: the benchmark; every parameter has an integer default (e.g. `runs: int = 3`).
        description: the --help text (the benchmark module's docstring).
        label_width: characters the label column is padded to.

    Returns:
        0, the process exit status.
    """
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, p in inspect.signature(run).parameters.items():
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=p.default,
                        help=f"default {p.default}")
    for label, value in run(**vars(ap.parse_args())):
        print(f"{label:{label_width}}  {value}")
    return 0
