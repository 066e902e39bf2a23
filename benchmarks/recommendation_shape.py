"""The shape of the recommendations: single GPU, tensor parallelism over PCIe, tight fits.

Runs `assistant.service.planning.recommend` over the evaluation questions (tests/data/eval/*.jsonl)
whose expected intents include "recommend" and whose facts name a catalog LLM (image jobs and unknown
models are skipped), with the request built from the facts the question states (method, context,
concurrent users, speed target, precision, providers, deadline, budget, production). For the first
option of each answer it counts:

- single GPU: the option uses one GPU;
- TP over PCIe: more than one GPU with no NVLink-class link between them;
- tight: the per-GPU estimate leaves under 5 % of the GPU's usable memory free (knowledge/gpus.csv
  usable_memory_gib, what nvidia-smi reports; the option's own memory where the column is absent), so
  the same measure applies to code that judged fits against the vendor's GiB;
- odd TP: a GPU count that does not divide the model's attention heads.

Measured 2026-12-02 over 401 cases (383 with an option), main at 46f091b -> branch i30:
first option a single GPU 88 -> 315; TP over PCIe 269 -> 5; tight first option 1 -> 0; tight listed
options 4 of 1,896 -> 0 of 1,892; TP not dividing the heads 0 -> 0. (Before, the fits were judged against
the vendor's GiB; tight is measured against the usable memory in both.)

Usage: .venv/bin/python -m benchmarks.recommendation_shape [--cases 1000]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import Rows, rows_main  # noqa: E402

EVAL = ROOT / "tests" / "data" / "eval"
_PROD = ("production", "prod ", "compliance", "regulated", "hipaa", "gdpr", "healthcare", "patient", "bank")


def _goal(facts: dict[str, Any], text: str) -> dict[str, Any] | None:
    """recommend() keywords from one question's facts; None when it is not an LLM recommend case."""
    if facts.get("model_unknown") or facts.get("images") or facts.get("resolution") or not facts.get("model"):
        return None
    method = facts.get("method")
    goal: dict[str, Any] = {"model": facts["model"]}
    if method in ("lora", "qlora", "full"):
        tokens = facts.get("dataset_tokens")
        if tokens is None and facts.get("examples") and facts.get("tokens_per_example"):
            tokens = facts["examples"] * facts["tokens_per_example"]
        if not tokens:
            return None
        goal |= {"workload": "finetune", "method": method, "dataset_tokens": float(tokens)}
        if facts.get("epochs"):
            goal["epochs"] = float(facts["epochs"])
        if facts.get("deadline_hours"):
            goal["deadline_hours"] = float(facts["deadline_hours"])
    else:
        goal["workload"] = "serve"
        for src, dst in (("context_tokens", "context_tokens"), ("concurrent_users", "concurrent_users"),
                         ("min_tokens_per_s", "min_tokens_per_s_per_user")):
            if isinstance(facts.get(src), (int, float)) and facts[src] > 0:
                goal[dst] = facts[src]
        if isinstance(facts.get("precision"), str):
            goal["precisions"] = (facts["precision"].lower(),)
    if isinstance(facts.get("providers"), list) and facts["providers"]:
        goal["providers"] = [str(p).lower() for p in facts["providers"]]
    if any(w in text.lower() for w in _PROD):
        goal["production"] = True
    return goal


def cases(limit: int) -> list[tuple[str, dict[str, Any]]]:
    """(question id, recommend keywords) for up to `limit` evaluation questions, in id order."""
    out = []
    for f in sorted(EVAL.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            exp = row.get("expect") or {}
            if "recommend" not in (exp.get("intents") or []):
                continue
            goal = _goal(exp.get("facts") or {}, " ".join(row.get("turns") or []))
            if goal is not None:
                out.append((row["id"], goal))
    out.sort(key=lambda c: c[0])
    return out[:limit]


def _call(goal: dict[str, Any]) -> Any:
    """recommend() with the goal; keywords this version of the tool does not take are left out."""
    from assistant.service.planning import recommend
    from tools.recommend import RecommendRequest

    kw = {k: v for k, v in goal.items() if k in RecommendRequest.model_fields or k in ("model", "providers")}
    try:
        return recommend(**kw)
    except Exception as exc:  # noqa: BLE001 - a benchmark counts failures, it does not stop on them
        return exc


def _usable_gb() -> dict[str, float]:
    """GPU id -> usable memory in GB from the data file (empty when it has no such column)."""
    import csv

    with open(ROOT / "knowledge" / "gpus.csv", newline="", encoding="utf-8") as fh:
        return {r["id"]: float(r["usable_memory_gib"]) * 2**30 / 1e9 for r in csv.DictReader(fh)
                if r.get("usable_memory_gib")}


def run(cases_: int = 1000) -> Rows:
    """Count the first options' shapes over the evaluation's recommend cases."""
    from knowledge.catalog import resolve_model

    counts = {"cases": 0, "ok": 0, "errors": 0, "single": 0, "tp_pcie": 0, "tight": 0, "odd_tp": 0,
              "prod": 0, "prod_single": 0,
              "options": 0, "tight_any": 0}
    usable = _usable_gb()
    for _qid, goal in cases(cases_):
        counts["cases"] += 1
        rec = _call(goal)
        if isinstance(rec, Exception):
            counts["errors"] += 1
            continue
        if not rec.options:
            continue
        counts["ok"] += 1
        top = rec.options[0]
        n = int(top["gpu_count"])
        counts["single"] += n == 1
        counts["tp_pcie"] += n > 1 and not top.get("nvlink")
        mem = usable.get(top.get("gpu_id", ""), top.get("gpu_memory_gb") or 0)
        counts["tight"] += bool(mem) and (mem - top["vram_per_gpu_gb"]) / mem < 0.05
        for o in rec.options:
            m = usable.get(o.get("gpu_id", ""), o.get("gpu_memory_gb") or 0)
            counts["options"] += 1
            counts["tight_any"] += bool(m) and (m - o["vram_per_gpu_gb"]) / m < 0.05
        try:
            heads = resolve_model(goal["model"]).num_attention_heads
        except Exception:  # noqa: BLE001 - a model given by size only
            heads = 0
        counts["odd_tp"] += bool(heads) and heads % n != 0
        if goal.get("production"):
            counts["prod"] += 1
            counts["prod_single"] += n == 1
    ok = max(counts["ok"], 1)
    return [
        ("recommend cases run", str(counts["cases"])),
        ("with an option / errors", f"{counts['ok']} / {counts['errors']}"),
        ("first option a single GPU", f"{counts['single']} ({counts['single'] / ok:.0%})"),
        ("first option TP over PCIe", f"{counts['tp_pcie']} ({counts['tp_pcie'] / ok:.0%})"),
        ("first option a tight fit (< 5 % free)", f"{counts['tight']} ({counts['tight'] / ok:.0%})"),
        ("any listed option a tight fit", f"{counts['tight_any']} of {counts['options']}"),
        ("first option TP not dividing the heads", str(counts["odd_tp"])),
        ("production cases: single GPU first", f"{counts['prod_single']} of {counts['prod']}"),
    ]


def _main_run(cases: int = 1000) -> Rows:  # noqa: D103 - the --cases option of rows_main
    return run(cases)


if __name__ == "__main__":
    raise SystemExit(rows_main(_main_run, __doc__))
