"""Published peak-memory measurements (tests/data/memory_measurements.csv) as calculator cases.

Shared by the accuracy test and benchmarks/vram_accuracy.py. Each row keeps its source; rows the
calculator does not model (CPU/paged offload, first GPU of a layer-wise split) carry an
`exclude` reason and are reported but not scored.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from assistant.service import api
from tools.units import BYTES_PER_GB, BYTES_PER_GIB

DATA = Path(__file__).resolve().parents[1] / "data" / "memory_measurements.csv"
_UNIT = {"GB": 1.0, "GiB": BYTES_PER_GIB / BYTES_PER_GB, "MB": 1e-3, "MiB": 2**20 / BYTES_PER_GB}


@dataclass(frozen=True)
class Case:
    id: str
    row: dict
    measured_gb: float
    exclude: str


def load_cases(path: Path = DATA) -> list[Case]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [Case(r["id"], r, float(r["measured_value"]) * _UNIT[r["measured_unit"]], r.get("exclude", "").strip())
            for r in rows]


def _b(v: str) -> bool | None:
    v = v.strip().lower()
    return None if not v else v in ("true", "1", "yes")


def estimate_for(case: Case) -> tuple[float, float]:
    """(estimate comparable to the measurement in GB, full per-GPU total in GB)."""
    r = case.row
    gpus = int(r["gpus"] or 1)
    tp = int(r["tensor_parallel"] or 1)
    compare = r.get("compare_as", "").strip() or "per_gpu"
    if compare == "sum_over_gpus":  # a layer-wise split summed over GPUs = one big GPU
        gpus, tp = 1, 1
    kw = dict(
        method=r["method"], weight_precision=r["weight_precision"] or None,
        training_precision=r["training_precision"] or None, optimizer=r["optimizer"] or None,
        batch=int(r["batch"] or 1), seq_len=int(r["seq_len"] or 2048),
        grad_checkpointing=_b(r["grad_checkpointing"]), lora_rank=int(r["lora_rank"]) if r["lora_rank"] else None,
        lora_targets=r["lora_targets"] or None, gpus=gpus,
        sharding=(r["sharding"] or None) if r["method"] != "inference" else None,
        tensor_parallel=tp if r["method"] == "inference" else None,
        kv_precision=(r["kv_precision"] or None) if r["method"] == "inference" else None,
        double_quant=_b(r["double_quant"]) or None,
        lora_dropout=float(r["lora_dropout"]) if r.get("lora_dropout") else None,
        chunked_loss=_b(r.get("chunked_loss", "")),
    )
    est = api.vram(model=r["model_hf_repo"], **kw)
    total = est.total_gb
    ctx = est.components_gb.get("cuda_context", 0.0)
    what = r["measured_what"].strip()
    if what in ("nvidia-smi",) or _b(r.get("includes_cuda_context", "")):
        comparable = total
    elif what in ("max_memory_reserved", "unknown"):
        from tools.vram import _CAL
        comparable = total - _CAL.cuda_context_gb
    else:  # max_memory_allocated / active bytes
        comparable = total - ctx
    return comparable, total


def error_table(cases: list[Case] | None = None) -> list[dict]:
    out = []
    for c in cases if cases is not None else load_cases():
        est, _ = estimate_for(c)
        out.append({"id": c.id, "method": c.row["method"], "model": c.row["model_hf_repo"],
                    "measured_gb": c.measured_gb, "estimate_gb": est,
                    "error_pct": 100.0 * (est - c.measured_gb) / c.measured_gb, "exclude": c.exclude})
    return out


def summary(rows: list[dict]) -> dict:
    scored = [abs(r["error_pct"]) for r in rows if not r["exclude"]]
    return {"n": len(scored), "median_abs_pct": statistics.median(scored), "max_abs_pct": max(scored),
            "within_10_pct": sum(e <= 10 for e in scored), "within_20_pct": sum(e <= 20 for e in scored)}
