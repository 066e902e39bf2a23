"""Fit each engine's efficiencies (knowledge/engines.csv) to the published speed measurements.

Coordinate descent on a grid, minimising the median |log(estimate / measured)| of the engine's
rows (tests/data/speed_measurements.csv). Prints the fitted values; they are copied into
knowledge/engines.csv with the ids of the rows they rest on. `--holdout` fits on even rows and
reports the error on odd rows, to show how much of the fit is memorised.

Usage: .venv/bin/python -m benchmarks.calibrate_speed [--holdout]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from knowledge.catalog import load_engines  # noqa: E402
from tests.tools.speed_cases import estimate_for, load_cases  # noqa: E402

GRIDS = {
    "bw_eff_hbm": [x / 100 for x in range(30, 96, 3)],
    "bw_eff_gddr": [x / 100 for x in range(40, 96, 3)],
    "quant_bw_factor": [x / 100 for x in range(40, 101, 5)],
    "overhead_ms_per_layer": [0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8],
    "overhead_ms_per_step": [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0],
    "compute_eff": [x / 100 for x in range(20, 91, 5)],
    "allreduce_us": [0, 5, 10, 15, 20, 30],
}
# Not fitted: prefill efficiency (no row isolates prefill; kept at the engines.csv prior) and
# engines whose only rows share one unusual GPU (sglang: all rows on H20) -- they keep the
# profile of the closest engine, stated in engines.csv.
NOT_FITTED = {"sglang"}


def loss(profile, cases) -> float:
    errs = []
    for c in cases:
        try:
            e = estimate_for(c, {profile.id: profile})
        except Exception:
            return math.inf
        errs.append(abs(math.log(e / c.measured)))
    return statistics.mean(errs)  # mean |log error|: robust, yet every row counts


def fit(profile, cases):
    relevant = [k for k in GRIDS if _matters(k, cases)]
    best = loss(profile, cases)
    for _ in range(3):
        for k in relevant:
            for v in GRIDS[k]:
                cand = profile.model_copy(update={k: v})
                l = loss(cand, cases)
                if l < best - 1e-9:
                    best, profile = l, cand
    return profile, best


def _matters(k: str, cases) -> bool:
    rows = [c.row for c in cases]
    if k == "allreduce_us":
        return any(int(r["gpus"]) > 1 for r in rows)
    if k == "compute_eff":
        return any(int(r["batch"]) >= 16 for r in rows)
    if k == "quant_bw_factor":
        return any(r["precision_id"] not in ("bf16", "fp16", "f16", "fp8") for r in rows)
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--holdout", action="store_true")
    args = ap.parse_args()
    cases = [c for c in load_cases() if not c.exclude]
    for eng in load_engines():
        mine = [c for c in cases if c.row["engine_id"] == eng.id]
        if not mine:
            continue
        if eng.id in NOT_FITTED:
            errs = [100 * (estimate_for(c) / c.measured - 1) for c in mine]
            print(f"{eng.id:14} n={len(mine):2} not fitted (profile as in engines.csv): "
                  f"median |err| {statistics.median(abs(e) for e in errs):5.1f}%")
            continue
        train = mine[::2] if args.holdout else mine
        test = mine[1::2] if args.holdout else mine
        fitted, _ = fit(eng, train)
        errs = [100 * (estimate_for(c, {eng.id: fitted}) / c.measured - 1) for c in test]
        med = statistics.median(abs(e) for e in errs) if errs else float("nan")
        vals = {k: getattr(fitted, k) for k in GRIDS}
        print(f"{eng.id:14} n={len(mine):2} {'test' if args.holdout else 'fit'} median |err| {med:5.1f}%  {vals}")
        print("   rows:", ";".join(c.id.split("-")[0] for c in mine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
