"""Print the speed estimator's error against every published decode measurement in the tests.

Usage: .venv/bin/python -m benchmarks.speed_accuracy [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.tools.speed_cases import error_table, summary  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = error_table()
    if args.markdown:
        print("| id | measured tok/s | estimate | error |\n|---|---:|---:|---:|")
    for r in rows:
        if r["exclude"]:
            line = f"excluded: {r['exclude'][:70]}"
            est = "-"
        else:
            line, est = f"{r['error_pct']:+.1f}%", f"{r['estimate']:.1f}"
        if args.markdown:
            print(f"| {r['id']} | {r['measured']:.1f} | {est} | {line} |")
        else:
            print(f"{r['id'][:60]:60} {r['measured']:9.1f} {est:>9}  {line}")
    s = summary(rows)
    print(f"\nscored {s['n']} of {len(rows)}: median |error| {s['median_abs_pct']:.1f}%, max {s['max_abs_pct']:.1f}%, "
          f"within 20%: {s['within_20_pct']}, within 35%: {s['within_35_pct']}")
    for eng in sorted({r["engine"] for r in rows if not r["exclude"]}):
        e = [abs(r["error_pct"]) for r in rows if r["engine"] == eng and not r["exclude"]]
        print(f"  {eng:14} n={len(e):2}  median {statistics.median(e):5.1f}%  max {max(e):6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
