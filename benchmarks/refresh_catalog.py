"""Refresh time and memory: the whole real catalog tree, and 200 MB of bad input refused.

Each case runs in a fresh child process (`catalog refresh` through PriceDb.refresh, as the CLI does) that
reports the refresh call's wall time and the process's peak RSS (ru_maxrss, includes Python, DuckDB and the
shipped catalog). A baseline child (imports + shipped catalog, no refresh) gives the memory floor.

Inputs: ../shared/data/skypilot_catalog_v8 (real SkyPilot v8 tree: aws p-families, azure, gcp, lambda,
vast, nebius, hyperbolic; ~6 MB) plus tests/data/skypilot_rows' cudo, unknown-provider and non-offer files;
200 MB of random bytes; 200 MB of random text lines (no catalog header); 20 MB of valid rows (one L4 row
over 50 regions and 7 zones), read to the end to show the streamed parse keeps memory flat.

Usage: .venv/bin/python -m benchmarks.refresh_catalog [--mb 200] [--runs 3]
"""

from __future__ import annotations

import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.report import rows_main

ROOT = Path(__file__).resolve().parents[1]
REAL_TREE = ROOT.parent / "shared" / "data" / "skypilot_catalog_v8"
ROWS = ROOT / "tests" / "data" / "skypilot_rows"

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from knowledge.price_db import CatalogError, PriceDb
db = PriceDb(sys.argv[2]); db.ensure()
out = {"ok": None}
if sys.argv[3] != "-":
    t = time.perf_counter()
    try:
        rep = db.refresh([sys.argv[3]])
        out["ok"] = True
        out["rows"] = sum(v["rows"] for v in rep.per_provider.values())
        out["providers"] = len(rep.per_provider)
    except CatalogError as exc:
        out["ok"], out["error"] = False, str(exc)
    out["wall_s"] = time.perf_counter() - t
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _child(home: Path, source: str) -> dict:
    p = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(home / "prices.duckdb"), source],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _inputs(tmp: Path, mb: int) -> dict[str, Path]:
    tree = tmp / "v8"
    if REAL_TREE.is_dir():
        shutil.copytree(REAL_TREE, tree)
    for extra in ("cudo", "acmegpu", "common", "kubernetes"):
        shutil.copytree(ROWS / extra, tree / extra)
    rnd = random.Random(0)
    binf = tmp / "bin" / "aws" / "vms.csv"
    binf.parent.mkdir(parents=True)
    with open(binf, "wb") as fh:
        for _ in range(mb):
            fh.write(rnd.randbytes(1 << 20))
    txt = tmp / "txt" / "aws" / "vms.csv"
    txt.parent.mkdir(parents=True)
    words = ["instance", "price", "region", "gpu", "alpha", "beta", "0.42", "us-east-1"]
    line = " ".join(rnd.choice(words) for _ in range(12)) + "\n"
    block = (line * ((1 << 20) // len(line) + 1))[: 1 << 20]
    with open(txt, "w") as fh:
        for _ in range(mb):
            fh.write(block)
    # a valid file streamed to the end: one GPU row repeated over 50 regions (memory must not grow with size)
    big = tmp / "rows" / "aws" / "vms.csv"
    big.parent.mkdir(parents=True)
    with open(big, "w") as fh:
        fh.write("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone\n")
        row_mb = max(1, mb // 10)
        n = 0
        while fh.tell() < row_mb << 20:
            fh.write(f"g6.xlarge,L4,1,4,16,{0.5 + n % 97 / 100:.2f},,r{n % 50},z{n % 7}\n")
            n += 1
    return {"whole real tree": tree, f"{mb} MB random bytes": binf, f"{mb} MB text, no header": txt,
            f"{row_mb} MB of valid rows (streamed)": big}


def run(mb: int = 200, runs: int = 3) -> list[tuple[str, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        inputs = _inputs(tmp, mb)
        base = _child(tmp / "home", "-")
        rows.append(("refresh: process floor (imports + catalog)", f"peak RSS {base['peak_rss_mb']:.0f} MB"))
        for label, path in inputs.items():
            res = [_child(tmp / f"home-{i}", str(path)) for i in range(runs)]
            t = statistics.median(r["wall_s"] for r in res)
            rss = max(r["peak_rss_mb"] for r in res)
            err = re.sub(r"^.*?vms\.csv:? ?", "", res[0].get("error", ""))
            what = (f"{res[0]['rows']:,} offers, {res[0]['providers']} providers" if res[0]["ok"]
                    else "refused " + err[:70] + " ...")
            rows.append((f"refresh: {label}", f"{t:.2f} s (median of {runs}), peak RSS {rss:.0f} MB; {what}"))
    return rows


def main() -> int:
    return rows_main(run, __doc__)


if __name__ == "__main__":
    sys.exit(main())
