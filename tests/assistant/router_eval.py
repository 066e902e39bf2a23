"""Score the router's understanding on tests/data/router_paraphrases.csv (intent and slots).

Shared by the test and benchmarks/router_accuracy.py.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from assistant.engine.understand import understand_dialogue
from knowledge.catalog import resolve_gpu
from tools.errors import UnknownGpu

DATA = Path(__file__).resolve().parents[1] / "data" / "router_paraphrases.csv"


def _gpu_id(name: str) -> str:
    try:
        return resolve_gpu(name).gpu.family or resolve_gpu(name).gpu.id
    except UnknownGpu:
        return name.lower()


def _same(key: str, want, got) -> bool:
    if key == "gpus":
        return [_gpu_id(x) for x in want] == [_gpu_id(x) for x in (got or [])]
    if isinstance(want, float) or isinstance(got, float):
        return got is not None and abs(float(want) - float(got)) <= 0.01 * max(1.0, abs(float(want)))
    return want == got


def _slots(q) -> dict:
    """The Query under the set's slot names (written for the first engine's slots)."""
    f = q.facts()
    return {"model": q.model or q.model_unknown, "params_b": q.params_b,
            "method": q.method, "precision": q.precision, "gpus": q.gpus, "gpu_memory_gb": q.gpu_memory_gb,
            "gpu_count": q.gpu_count, "context": q.context_tokens, "seq_len": q.context_tokens,
            "batch": q.batch if q.batch is not None else q.concurrent_users, "examples": q.examples,
            "tokens_per_example": q.tokens_per_example, "dataset_tokens": q.dataset_tokens, "epochs": q.epochs,
            "budget_usd": q.budget_usd_total if q.budget_usd_total is not None else q.budget_usd_per_hour,
            "duration_h": q.duration_hours, "spot": q.spot, "provider": (q.providers or [None])[0],
            "region": (q.regions or [None])[0], "engine": q.engine, "optimizer": q.optimizer,
            "training_precision": q.training_precision, "prompt_tokens": q.prompt_tokens,
            "min_tokens_per_s": q.min_tokens_per_s, "billing": q.billing, "both_pricing": q.both_pricing,
            "smallest": q.solve_for == "min_gpu_memory", **{k: v for k, v in f.items() if k not in ("model",)}}


def evaluate() -> dict:
    rows = list(csv.DictReader(open(DATA, newline="", encoding="utf-8")))
    intent_ok = slot_rows_ok = slots_total = slots_ok = 0
    misses = []
    for r in rows:
        msgs = [m for m in (r["previous"], r["question"]) if m]
        q = understand_dialogue(msgs)
        want = json.loads(r["slots"])
        got = _slots(q)
        ok_i = r["intent"] in q.intents or (r["intent"] == "compare" and "compare" in q.intents)
        bad = [k for k, v in want.items() if not _same(k, v, got.get(k))]
        intent_ok += ok_i
        slot_rows_ok += not bad
        slots_total += len(want)
        slots_ok += len(want) - len(bad)
        if not ok_i or bad:
            misses.append({"id": r["id"], "question": r["question"], "want_intent": r["intent"], "got_intent": q.intents,
                           "bad_slots": {k: (want[k], got.get(k)) for k in bad}})
    n = len(rows)
    return {"n": n, "intent_acc": intent_ok / n, "slot_row_acc": slot_rows_ok / n,
            "slot_acc": slots_ok / max(1, slots_total), "misses": misses,
            "by_lang": {lang: sum(1 for r in rows if r["lang"] == lang) for lang in ("en", "ur")}}
