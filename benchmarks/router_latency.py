"""In-process latency of the assistant on the router backend (after warm-up), and the cold start
of `gpu-advisor ask`.

Usage: .venv/bin/python -m benchmarks.router_latency [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?",
    "How much VRAM to serve a 70B model at 4-bit, 32k context, 8 concurrent users?",
    "Can I fully fine-tune a 7B model on one 80 GB card with AdamW?",
    "Smallest GPU for QLoRA on a 13B model, seq 2048, batch 4?",
    "Tokens/s for a 13B INT8 model on an L4 vs an A100?",
    "Will batching 16 requests raise throughput on an H100, and by how much?",
    "Cheapest H100 per hour right now, on-demand and spot?",
    "Cost of a 3-epoch LoRA fine-tune of Mistral-7B on 50k examples of ~512 tokens, A100 vs RTX 4090?",
    "Per-second vs hourly billing: does it matter for 20-minute experiments?",
    "I have $100 to fine-tune Llama-3-8B on 20k samples: which GPU and provider?",
    "Why does generation speed depend on memory bandwidth more than FLOPs?",
    "What should I check besides price when picking a provider?",
    "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟",
    "Fine-tune a 500-trillion-parameter model on a GTX 1050 with 10M context for $1.",
    "Show prices for gpu = 'A100'; DROP TABLE prices; --",
    "VRAM for a 7B model with batch size -3 and context 0?",
    "How much VRAM does Llama-9-Ultra-900B-Turbo need?",
    "do i need nvlink for qlora?",
    "what is the weather in paris",
    "hi",
]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    import os

    os.environ.setdefault("GPU_ADVISOR_HOME", tempfile.mkdtemp(prefix="gpu-advisor-bench-"))
    from assistant.service.advisor import Advisor

    adv = Advisor()
    for q in QUESTIONS:  # warm-up: catalogs, indexes, DuckDB
        adv.ask(q)
    per_q: dict[str, list[float]] = {q: [] for q in QUESTIONS}
    for _ in range(a.rounds):
        for q in QUESTIONS:
            t = time.perf_counter()
            adv.ask(q)
            per_q[q].append((time.perf_counter() - t) * 1000)
    allv = [v for vs in per_q.values() for v in vs]
    for q, vs in per_q.items():
        print(f"  {statistics.median(vs):7.1f} ms  {q[:70]}")
    print(f"router in-process: p50 {statistics.median(allv):.1f} ms, p95 {pct(allv, 0.95):.1f} ms over {len(allv)} answers")
    exe = Path(sys.executable).with_name("gpu-advisor")
    cold = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([str(exe), "ask", "Cheapest H100 per hour?"], capture_output=True, check=True)
        cold.append(time.perf_counter() - t)
    print(f"gpu-advisor ask cold start: median {statistics.median(cold):.2f} s (min {min(cold):.2f} s) over 5 runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
