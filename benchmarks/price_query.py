"""Price-query latency on a catalog 50x the shipped snapshot (~120,000 offers).

Builds the big catalog in a temporary directory (the shipped offers repeated with shifted prices
and renamed regions), then times each query shape through PriceDb.query (a warm, read-only
connection, as the product uses it). Prints p50/p95 per query and overall, in ms.

Usage: .venv/bin/python -m benchmarks.price_query [--copies 50] [--runs 200]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from knowledge.catalog import DATA_DIR  # noqa: E402
from knowledge.price_db import PriceDb  # noqa: E402
from tools.schemas import PriceQuery  # noqa: E402

QUERIES = {
    "cheapest H100 family": (dict(limit=20), ["h100-sxm", "h100-pcie", "h100-nvl"]),
    "spot, any GPU": (dict(pricing="spot", limit=20), None),
    "8 GPUs, >=80 GB, nvlink": (dict(gpus=8, min_vram_gb=80, interconnect="nvlink"), None),
    "max $1/GPU-h on-demand": (dict(max_price_usd_per_gpu_hour=1.0, pricing="on-demand"), None),
    "provider + region": (dict(provider="aws", region="us-east"), ["l4"]),
    "instance-hour sort, all": (dict(sort="instance-hour", limit=100), None),
}


def build(copies: int, where: Path) -> PriceDb:
    base = list(csv.DictReader(open(DATA_DIR / "prices" / "offers.csv", newline="")))
    rows = []
    for c in range(copies):
        f = 1 + c * 0.003
        for r in base:
            d = dict(r)
            for k in ("price_usd_per_hour", "price_usd_per_gpu_hour", "spot_price_usd_per_hour", "spot_price_usd_per_gpu_hour"):
                if d[k]:
                    d[k] = f"{float(d[k]) * f:.6f}"
            d["region"] = f"{d['region']}-{c}"
            d["nvlink"] = d["nvlink"].lower() == "true"
            rows.append(d)
    db = PriceDb(where / "prices.duckdb")
    db.write_new(rows, [], list(csv.DictReader(open(DATA_DIR / "prices" / "sources.csv", newline=""))), {"shipped_hash": "bench"})
    return db


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        db = build(a.copies, Path(tmp))
        n = sum(p["offers"] for p in db.info()["providers"])
        print(f"catalog: {n:,} offers (built in {time.perf_counter() - t:.1f} s)")
        everything = []
        for name, (kw, ids) in QUERIES.items():
            q = PriceQuery(**kw)
            db.query(q, ids)  # warm
            ts = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                db.query(q, ids)
                ts.append((time.perf_counter() - t0) * 1000)
            ts.sort()
            everything += ts
            print(f"  {name:28} p50 {statistics.median(ts):6.2f} ms   p95 {ts[int(0.95 * len(ts)) - 1]:6.2f} ms")
        everything.sort()
        print(f"all queries: p50 {statistics.median(everything):.2f} ms, p95 {everything[int(0.95 * len(everything)) - 1]:.2f} ms "
              f"over {len(everything)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
