"""Published decode-speed measurements (tests/data/speed_measurements.csv) as estimator cases.

Shared by the accuracy test and benchmarks/speed_accuracy.py.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from assistant import api

DATA = Path(__file__).resolve().parents[1] / "data" / "speed_measurements.csv"


@dataclass(frozen=True)
class SpeedCase:
    id: str
    row: dict
    measured: float
    exclude: str


def load_cases(path: Path = DATA) -> list[SpeedCase]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [SpeedCase(r["id"], r, float(r["measured_tokens_per_s"]), r["exclude"].strip()) for r in rows]


def estimate_for(case: SpeedCase, engines: dict | None = None) -> float:
    r = case.row
    est = api.speed(model=r["model_hf_repo"], gpu=r["gpu_id"], engine=r["engine_id"], precision=r["precision_id"],
                    kv_precision=r.get("kv_precision") or None, batch=int(r["batch"]), prompt_tokens=int(r["prompt_tokens"] or 0),
                    output_tokens=int(r["output_tokens"] or 128), gpus=int(r["gpus"] or 1),
                    engine_profile=(engines or {}).get(r["engine_id"]))
    if r["metric"] == "aggregate_output":  # output tokens over the whole run, prefill included
        return int(r["batch"]) * int(r["output_tokens"]) / est.request_latency_s
    return est.decode_tokens_per_s


def error_table(cases: list[SpeedCase] | None = None, engines: dict | None = None) -> list[dict]:
    out = []
    for c in cases if cases is not None else load_cases():
        if c.exclude:
            out.append({"id": c.id, "engine": c.row["engine"], "measured": c.measured, "estimate": None,
                        "error_pct": None, "exclude": c.exclude})
            continue
        e = estimate_for(c, engines)
        out.append({"id": c.id, "engine": c.row["engine_id"], "measured": c.measured, "estimate": e,
                    "error_pct": 100.0 * (e - c.measured) / c.measured, "exclude": ""})
    return out


def summary(rows: list[dict]) -> dict:
    scored = [abs(r["error_pct"]) for r in rows if not r["exclude"]]
    return {"n": len(scored), "median_abs_pct": statistics.median(scored), "max_abs_pct": max(scored),
            "within_20_pct": sum(e <= 20 for e in scored), "within_35_pct": sum(e <= 35 for e in scored)}
