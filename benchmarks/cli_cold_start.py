"""Median wall time of `gpu-advisor vram ...` from a cold process (new interpreter each run).

Usage: .venv/bin/python -m benchmarks.cli_cold_start [--runs 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CMD = ["vram", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "2", "--seq-len", "2048", "--json"]


def time_runs(args: list[str], runs: int) -> list[float]:
    exe = Path(sys.executable).with_name("gpu-advisor")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "assistant.main"]
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd + args, cwd=ROOT, check=True, capture_output=True)
        out.append(time.perf_counter() - t)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=9)
    n = ap.parse_args().runs
    ts = time_runs(CMD, n)
    print(f"gpu-advisor {' '.join(CMD[:3])} ...: median {statistics.median(ts) * 1000:.0f} ms, "
          f"min {min(ts) * 1000:.0f} ms, max {max(ts) * 1000:.0f} ms over {n} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
