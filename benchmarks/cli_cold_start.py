"""Whole-process wall time of `gpu-advisor ask` beside `gpu-advisor speed` and `vram`, each from a cold process
(a new interpreter per run), the commands interleaved so machine noise hits them alike; medians.

Issue 28's target: `ask` within 1.5x of `speed` on the same machine.
Usage: .venv/bin/python -m benchmarks.cli_cold_start [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "ask": ["ask", "Can I run Llama 3.1 8B in FP16 on an L4 with 8k context?"],
    "speed": ["speed", "--model", "llama-3.1-8b", "--gpu", "L4"],
    "vram": ["vram", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "2", "--seq-len", "2048", "--json"],
}


def _cmd() -> list[str]:
    exe = Path(sys.executable).with_name("gpu-advisor")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "assistant.main"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    n = ap.parse_args().runs
    env = os.environ | {"GPU_ADVISOR_HOME": tempfile.mkdtemp(prefix="cold-")}
    subprocess.run(_cmd() + COMMANDS["ask"], cwd=ROOT, env=env, check=True, capture_output=True)  # data built once
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(n):
        for name, args in COMMANDS.items():
            t = time.perf_counter()
            subprocess.run(_cmd() + args, cwd=ROOT, env=env, check=True, capture_output=True)
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"gpu-advisor {k:5}: median {med[k] * 1000:5.0f} ms (min {min(v) * 1000:.0f}, max {max(v) * 1000:.0f}) "
              f"over {n} runs")
    print(f"ask / speed = {med['ask'] / med['speed']:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
