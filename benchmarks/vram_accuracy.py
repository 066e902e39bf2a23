"""Print the VRAM calculator's error against every published measurement in the tests.

Usage: .venv/bin/python -m benchmarks.vram_accuracy [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.tools.memory_cases import error_table, summary  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args()
    rows = error_table()
    if args.markdown:
        print("| id | method | measured GB | estimate GB | error |")
        print("|---|---|---:|---:|---:|")
    for r in rows:
        tag = f"excluded: {r['exclude']}" if r["exclude"] else f"{r['error_pct']:+.1f}%"
        if args.markdown:
            print(f"| {r['id']} | {r['method']} | {r['measured_gb']:.2f} | {r['estimate_gb']:.2f} | {tag[:60]} |")
        else:
            print(f"{r['id'][:46]:46} {r['method']:9} {r['measured_gb']:8.2f} {r['estimate_gb']:8.2f}  {tag[:70]}")
    s = summary(rows)
    print(f"\nscored {s['n']} of {len(rows)}: median |error| {s['median_abs_pct']:.1f}%, max {s['max_abs_pct']:.1f}%, "
          f"within 10%: {s['within_10_pct']}, within 20%: {s['within_20_pct']}")
    for m in ("inference", "full", "lora", "qlora"):
        e = [abs(r["error_pct"]) for r in rows if r["method"] == m and not r["exclude"]]
        if e:
            print(f"  {m:9} n={len(e):2}  median {statistics.median(e):5.1f}%  max {max(e):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
