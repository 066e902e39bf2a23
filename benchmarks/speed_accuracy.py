"""The speed estimator against every published decode measurement: in sample and leave-one-source-out.

In sample: the profiles in knowledge/engines.csv and knowledge/quant_kernels.csv, fitted on all rows.
Leave-one-source-out (LOSO): for each source, every engine and kernel refitted from the priors on the
other sources (benchmarks/calibrate_speed.py), then the held-out source predicted. LOSO is the
figure that says how the estimator does on a setup it has not seen.

Usage: .venv/bin/python -m benchmarks.speed_accuracy [--rows] [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.calibrate_speed import loso, scored_cases  # noqa: E402
from tests.tools.speed_cases import error_table, load_cases, summary  # noqa: E402


def _group_table(title: str, rows: list[dict], key: str) -> list[str]:
    out = [f"\n{title}", f"  {key:16} {'n':>4} {'sources':>7} {'median':>8} {'max':>8} {'within 20%':>10}"]
    groups = sorted({r[key] for r in rows})
    for g in groups + ["ALL"]:
        mine = rows if g == "ALL" else [r for r in rows if r[key] == g]
        e = [abs(r["error_pct"]) for r in mine]
        out.append(f"  {g:16} {len(e):4} {len({r['source'] for r in mine}):7} {statistics.median(e):7.1f}% "
                   f"{max(e):7.1f}% {sum(x <= 20 for x in e):6}/{len(e)}")
    return out


def per_engine_medians(rows: list[dict]) -> dict[str, tuple[int, float]]:
    """{engine: (number of sources, median |error| %)}."""
    return {eng: (len({r["source"] for r in rows if r["engine"] == eng}),
                  statistics.median(abs(r["error_pct"]) for r in rows if r["engine"] == eng))
            for eng in sorted({r["engine"] for r in rows})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", action="store_true", help="print every row (in sample and LOSO)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    all_rows = error_table(load_cases())
    inside = [r for r in all_rows if not r["exclude"]]
    out_rows = loso(scored_cases())
    if args.rows:
        by_id = {r["id"]: r for r in out_rows}
        if args.markdown:
            print("| id | measured tok/s | in sample | LOSO |\n|---|---:|---:|---:|")
        for r in all_rows:
            if r["exclude"]:
                print(f"{r['id'][:58]:58} {r['measured']:9.1f}   excluded: {r['exclude'][:60]}")
                continue
            o = by_id[r["id"]]
            if args.markdown:
                print(f"| {r['id']} | {r['measured']:.1f} | {r['error_pct']:+.1f}% | {o['error_pct']:+.1f}% |")
            else:
                print(f"{r['id'][:58]:58} {r['measured']:9.1f} in {r['estimate']:9.1f} ({r['error_pct']:+6.1f}%)"
                      f"  LOSO {o['estimate']:9.1f} ({o['error_pct']:+6.1f}%)")
    s_in, s_out = summary(inside), summary(out_rows)
    print(f"{len(all_rows)} measurements, {s_in['n']} scored from {len({r['source'] for r in inside})} sources "
          f"({len(all_rows) - s_in['n']} excluded with a reason)")
    print("\n".join(_group_table("IN SAMPLE (profiles fitted on every row)", inside, "engine")))
    print("\n".join(_group_table("LEAVE-ONE-SOURCE-OUT (each source predicted by a fit on the others)",
                                 out_rows, "engine")))
    print("\n".join(_group_table("LEAVE-ONE-SOURCE-OUT by kernel", out_rows, "kernel")))
    print("\n".join(_group_table("LEAVE-ONE-SOURCE-OUT by source", out_rows, "source")))
    print(f"\nsummary: in sample median {s_in['median_abs_pct']:.1f}% (max {s_in['max_abs_pct']:.1f}%); "
          f"LOSO median {s_out['median_abs_pct']:.1f}% (max {s_out['max_abs_pct']:.1f}%, "
          f"{s_out['within_20_pct']}/{s_out['n']} within 20%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
