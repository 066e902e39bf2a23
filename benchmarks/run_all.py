"""Run every benchmark and print one table.

Usage: .venv/bin/python -m benchmarks.run_all [--quick]

Rows: router latency p50/p95 (in-process, after warm-up), CLI cold starts, price query p50/p95 on a
120k-offer catalog, catalog refresh of the real SkyPilot tree and of 200 MB bad inputs (time, peak RSS),
app /ask load (20 clients x 25 questions) and Slack burst (50 signed events)
when those front ends are present, and the accuracy summaries (memory and speed against the
published measurements in tests/data, retrieval recall@3, router intent/slot accuracy).
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
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GPU_ADVISOR_HOME", tempfile.mkdtemp(prefix="gpu-advisor-bench-"))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def router_latency(rounds: int) -> list[tuple[str, str]]:
    from assistant.service.advisor import Advisor
    from benchmarks.router_latency import QUESTIONS

    adv = Advisor(checkpoint_path=tempfile.mkdtemp() + "/b.sqlite")
    for q in QUESTIONS:
        adv.ask(q)
    ts = []
    for _ in range(rounds):
        for q in QUESTIONS:
            t = time.perf_counter()
            adv.ask(q)
            ts.append((time.perf_counter() - t) * 1000)
    return [("router answer, in-process (ms)", f"p50 {statistics.median(ts):.1f} / p95 {_pct(ts, 0.95):.1f}  (n={len(ts)})")]


def cold_starts(runs: int) -> list[tuple[str, str]]:
    exe = Path(sys.executable).with_name("gpu-advisor")
    rows = []
    for label, args in (("gpu-advisor vram cold start (s)", ["vram", "--model", "llama-3.1-8b", "--json"]),
                        ("gpu-advisor ask cold start (s)", ["ask", "Cheapest H100 per hour?"])):
        ts = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([str(exe), *args], capture_output=True, check=True)
            ts.append(time.perf_counter() - t)
        rows.append((label, f"median {statistics.median(ts):.2f} (min {min(ts):.2f}, n={runs})"))
    return rows


def price_query(runs: int) -> list[tuple[str, str]]:
    from benchmarks.price_query import build, offer_count, time_queries

    with tempfile.TemporaryDirectory() as tmp:
        db = build(50, Path(tmp))
        n = offer_count(db)
        ts = [x for per_query in time_queries(db, runs).values() for x in per_query]
    return [(f"price query on {n:,} offers (ms)", f"p50 {statistics.median(ts):.2f} / p95 {_pct(ts, 0.95):.2f}  (n={len(ts)})")]


def accuracy() -> list[tuple[str, str]]:
    from tests.assistant.router_eval import evaluate
    from tests.tools.memory_cases import error_table as mem_table, summary as mem_summary
    from tests.tools.speed_cases import error_table as spd_table, summary as spd_summary

    m = mem_summary(mem_table())
    s = spd_summary(spd_table())
    rows = [("memory vs published measurements", f"median {m['median_abs_pct']:.1f}% / max {m['max_abs_pct']:.1f}%  "
                                                   f"(n={m['n']}, {m['within_10_pct']} within 10%)"),
            ("decode speed vs published measurements", f"median {s['median_abs_pct']:.1f}%  (n={s['n']}, "
                                                         f"{s['within_20_pct']} within 20%)")]
    import csv

    from knowledge.guide_index import search_guide
    qs = list(csv.DictReader(open(ROOT / "tests" / "data" / "guide_queries.csv", newline="")))
    hit = sum(bool(set(q["expected_ids"].split(";")) & {h.id for h in search_guide(q["question"], k=3)}) for q in qs)
    rows.append(("guide retrieval recall@3", f"{hit / len(qs):.3f}  (n={len(qs)})"))
    r = evaluate()
    rows.append(("router intent / slot accuracy", f"{r['intent_acc']:.3f} / {r['slot_acc']:.3f}  (n={r['n']})"))
    from benchmarks.understanding_eval import evaluate, understand_new

    for path in sorted((ROOT / "tests" / "data" / "eval").glob("batch*.jsonl")):
        summary, _ = evaluate(path, understand_new)
        rows.append((f"understanding, {path.stem} (regression set; first-seen scores in the README)",
                     f"{summary['fully_right']}/{summary['n']} fully right, facts "
                     f"{summary['facts_right'] / max(1, summary['facts_total']):.1%}"))
    return rows


def refresh_catalog(runs: int) -> list[tuple[str, str]]:
    from benchmarks.refresh_catalog import run

    return run(200, runs)


def load() -> list[tuple[str, str]]:
    rows = []
    try:
        from tests.app.load import run_app_load  # provided by the app's tests
        rows.extend(run_app_load())
    except ImportError:
        rows.append(("app /ask load", "not available"))
    try:
        from tests.slack.load import run_slack_burst
        rows.append(run_slack_burst())
    except ImportError:
        rows.append(("Slack burst", "not available"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    a = ap.parse_args()
    rows: list[tuple[str, str]] = []
    rows += router_latency(2 if a.quick else 5)
    rows += cold_starts(3 if a.quick else 5)
    rows += price_query(50 if a.quick else 200)
    rows += refresh_catalog(1 if a.quick else 3)
    rows += load()
    rows += accuracy()
    rows += __import__("benchmarks.image_accuracy", fromlist=["run_all_rows"]).run_all_rows()
    rows += __import__("benchmarks.thread_storage", fromlist=["run_all_rows"]).run_all_rows(advisor=not a.quick)
    w = max(len(r[0]) for r in rows)
    print(f"{'benchmark':{w}}  result")
    print(f"{'-' * w}  {'-' * 50}")
    for k, v in rows:
        print(f"{k:{w}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
