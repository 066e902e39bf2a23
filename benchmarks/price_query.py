"""Price-query latency on a catalog 50x the shipped snapshot (~120,000 offers).

Builds the big catalog in a temporary directory (the shipped offers repeated with shifted prices
and renamed regions), then times each query shape through PriceDb.query (a warm, read-only
connection, as the product uses it). Prints p50/p95 per query and overall, in ms.

Usage: .venv/bin/python -m benchmarks.price_query [--copies 50] [--runs 200]
"""

from __future__ import annotations

import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import rows_main  # noqa: E402
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


def time_queries(db: PriceDb, runs: int) -> dict[str, list[float]]:
    """Each query shape of QUERIES, warmed once then run `runs` times: name -> latencies in ms, sorted."""
    out: dict[str, list[float]] = {}
    for name, (kw, ids) in QUERIES.items():
        q = PriceQuery(**kw)
        db.query(q, ids)  # warm
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            db.query(q, ids)
            ts.append((time.perf_counter() - t0) * 1000)
        out[name] = sorted(ts)
    return out


def offer_count(db: PriceDb) -> int:
    return sum(p["offers"] for p in db.info()["providers"])


def _p95(sorted_ms: list[float]) -> float:
    return sorted_ms[int(0.95 * len(sorted_ms)) - 1]


def run(copies: int = 50, runs: int = 200) -> list[tuple[str, str]]:
    """The catalog's size and build time, p50/p95 per query shape, and over every query."""
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        db = build(copies, Path(tmp))
        rows = [("catalog", f"{offer_count(db):,} offers (built in {time.perf_counter() - t:.1f} s)")]
        times = time_queries(db, runs)
    rows += [(f"  {name}", f"p50 {statistics.median(ts):6.2f} ms   p95 {_p95(ts):6.2f} ms") for name, ts in times.items()]
    every = sorted(x for ts in times.values() for x in ts)
    rows.append(("all queries", f"p50 {statistics.median(every):.2f} ms, p95 {_p95(every):.2f} ms over {len(every)} runs"))
    return rows


def main() -> int:
    return rows_main(run, __doc__, label_width=28)


if __name__ == "__main__":
    sys.exit(main())
