"""Score the answers (not the understanding) on the evaluation batches (tests/data/eval/batch*.jsonl).

Every question runs through the full engine — `assistant.service.advisor.Advisor` with the embedded router
(understand -> plan -> tools -> compose -> ground), each earlier turn asked first in the same thread
— and the last turn's typed answer (`Answer.sections`) and rendered text are checked:

- **negative verdicts** (verdict "no": does not fit, too slow, over budget, past the deadline, no
  offers): how many carry a way forward with numbers — an option of `way_forward` with its numbers
  or offer, or a `forward.*` statement that says with numbers what would work or why nothing does;
- **solve_for questions** (the row's `expect.solve_for` is set): how many answers state the solved
  number (the solver's headline, the recommender's best option, or a ranked table of GPUs); a row
  that expects an ask-back (an unknown name) and gets one is counted apart;
- **no code in prose**: no snake_case identifier or CLI flag in any answer text;
- **Urdu is Urdu**: an Urdu answer has no English sentence — no run of three or more Latin-script
  words that are not names (catalog GPUs, models, providers, the tools' names), units or the user's own words.

    python -m benchmarks.answer_eval tests/data/eval/batch*.jsonl [--show-failures] [--jobs 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

# The headline codes that say what kind of "no" an answer gives (the first that matches names it).
_NEGATIVE_KINDS = (
    ("does_not_fit", ("fit.no", "lever.problem_does_not_fit", "solve.none_", "fit.gpus_none", "speed.no_fit",
                      "rec.nothing_fits", "forward.nothing_fits", "image.no_fit")),
    ("too_slow", ("speed.target_missed", "lever.problem_too_slow")),
    ("over_budget", ("budget.over", "budget.hour_over", "lever.problem_over_budget")),
    ("past_deadline", ("train.past_deadline", "lever.problem_past_deadline")),
    ("no_offers", ("prices.none", "forward.no_offers")),
)
# What states the solved number, per kind of unknown: headline codes and key-number labels.
_SOLVED = {
    "max_context": ({"solve.max_context", "solve.max_context_window"}, {"num.max_context"}),
    "max_batch": ({"solve.max_batch"}, {"num.max_batch"}),
    "min_gpu_count": ({"solve.min_gpu_count", "solve.min_gpu_count_one", "forward.smallest_count"},
                      {"num.gpu_count"}),
    "min_gpu_memory": ({"solve.min_gpu_memory"}, {"num.total_per_gpu", "num.total"}),
    "cheapest_gpu": ({"solve.best_serve", "solve.best_train", "rec.best", "prices.cheapest", "solve.cheapest_holding"},
                     set()),
    "fastest_gpu": ({"rec.best", "speed.head", "speed.compare_head", "image.speed"}, set()),
}
_SOLVED_TABLES = {"cheapest_gpu": {"table.best_by_cost", "table.prices", "table.gpus_with_memory"},
                  "fastest_gpu": {"table.speed_compare"}}
_CODEISH = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9](?![\w-])|(?<![\w-])--[a-z][a-z-]*")
_TECH = set("""GB GiB GPU GPUs KV CUDA LoRA QLoRA AWQ GPTQ FSDP ZeRO NVLink PCIe HBM GDDR AdamW Adam adamw vllm vLLM
x AI LLM CPU bf16 fp16 fp8 int8 int4 nf4 FP8 BF16 FP16 INT8 INT4 NF4 GGUF VRAM SXM NVL B M K h s ms TB MB""".split())
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9.+'’\-]*(?:[ \u00a0,/]+[A-Za-z][A-Za-z0-9.+'’\-]*)*")


def _codes(findings: list[dict]) -> list[str]:
    return [f.get("code", "") for f in findings or []]


def _numeric(x: Any) -> bool:
    """A statement carries a number when one of its parameters (nested) is a number."""
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float)):
        return True
    if isinstance(x, dict):
        return any(_numeric(v) for v in x.values())
    if isinstance(x, list):
        return any(_numeric(v) for v in x)
    return False


def negative_kind(s: dict) -> str | None:
    """The kind of "no" the answer gives, or None for any other verdict."""
    if s.get("verdict") != "no":
        return None
    codes = _codes(s.get("headline")) + _codes(s.get("notices")) + _codes(s.get("explanation"))
    for kind, prefixes in _NEGATIVE_KINDS:
        if any(c.startswith(p) for c in codes for p in prefixes):
            return kind
    return "other"


def has_way_forward(s: dict) -> bool:
    """An option with numbers (or a priced offer), or a `forward.*` statement with numbers."""
    for o in s.get("way_forward") or []:
        if o.get("numbers") or (o.get("offer") or {}).get("price_usd_per_hour") is not None:
            return True
    for f in (s.get("headline") or []) + (s.get("explanation") or []) + (s.get("notices") or []):
        if f.get("code", "").startswith("forward.") and _numeric(f.get("params")):
            return True
    return False


def states_solved(unknown: str, s: dict, gpu_named: bool = False) -> bool:
    """The answer states the solved number. With no GPU named, "how many" is answered by the
    recommender's best option, which is a count of a GPU ("4 x L40S")."""
    codes, labels = _SOLVED.get(unknown, (set(), set()))
    if unknown == "min_gpu_count" and not gpu_named:
        codes = codes | {"rec.best"}
    if any(f.get("code") in codes and _numeric(f.get("params")) for f in s.get("headline") or []):
        return True
    if any(k.get("label") in labels and _numeric(k.get("value")) for k in s.get("key_numbers") or []):
        return True
    tables = _SOLVED_TABLES.get(unknown, set())
    return any((t.get("title") or {}).get("code") in tables and t.get("rows") for t in s.get("tables") or [])


@lru_cache(maxsize=1)
def _catalog_names() -> frozenset[str]:
    from knowledge.catalog import load_diffusion_models, load_gpus, load_models, load_providers

    texts = [g.name for g in load_gpus()] + [g.family or "" for g in load_gpus()]
    texts += [m.name for m in load_models()] + [m.id for m in load_models()]
    texts += [str(p) for p in (load_providers() or {})]
    texts += [c[0].model_name for c in load_diffusion_models().values()]
    return frozenset(w.lower() for t in texts for w in re.findall(r"[A-Za-z][A-Za-z0-9.+\-]*", t))


_NAME_KEYS = {"provider", "instance_type", "instance", "region", "gpu", "name", "id", "model", "engine",
              "weight_precision", "precision", "kv_precision", "optimizer", "accelerator_name", "places", "zone"}


def _name_words(x: Any) -> set[str]:
    """The Latin words of the names inside a tool result or the sections (not its prose)."""
    out: set[str] = set()
    if isinstance(x, dict):
        for k, v in x.items():
            if k in _NAME_KEYS and isinstance(v, str):
                out |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9.+\-]*", v)}
            else:
                out |= _name_words(v)
    elif isinstance(x, list):
        for v in x:
            out |= _name_words(v)
    return out


def english_runs(text: str, allowed: set[str]) -> list[str]:
    """Runs of three or more Latin-script words that are not names, units or the user's words."""
    text = re.sub(r"https?://\S+|:[a-z_]+:|<[^>]+>", " ", text)
    bad = []
    for m in _LATIN_RUN.finditer(text):
        words = [w.strip(".,'’-") for w in re.split(r"[ \u00a0,/]+", m.group()) if w.strip(".,'’-")]
        if sum(1 for w in words if w not in _TECH and w.lower() not in allowed) >= 3:
            bad.append(m.group())
    return bad


def run_row(row: dict) -> dict:
    """One question (its earlier turns first, in the same thread) through the engine, checked."""
    from assistant.service.advisor import Advisor

    adv = _advisor()
    tid = None
    ans = None
    try:
        for turn in row["turns"]:
            ans = adv.ask(turn, thread_id=tid)
            tid = ans.thread_id
    except Exception as exc:  # a crash is a failed answer, reported as such
        return {"id": row["id"], "error": repr(exc)}
    assert ans is not None and isinstance(adv, Advisor)
    s = ans.sections or {}
    text = ans.answer
    neg = negative_kind(s)
    unknown = (row.get("expect") or {}).get("solve_for")
    asks = [c for c in _codes(s.get("headline")) + _codes(s.get("notices")) if c.startswith("ask.")]
    asked = bool((row.get("expect") or {}).get("ask_back")) and (s.get("verdict") == "ask" or bool(asks))
    out = {"id": row["id"], "lang": row["lang"], "verdict": s.get("verdict"), "negative": neg,
           "forward": has_way_forward(s) if neg else None, "solve_for": unknown,
           "solved": states_solved(unknown, s, bool(((row.get("expect") or {}).get("facts") or {}).get("gpus")))
           if unknown and not asked else None, "asked_back": asked,
           "codeish": sorted({m.group() for m in _CODEISH.finditer(text)}),
           "headline": _codes(s.get("headline")), "text": text}
    if ans.language == "ur":
        allowed = set(_catalog_names()) | _name_words([c.args for c in ans.tool_calls])
        allowed |= _name_words([c.result for c in ans.tool_calls]) | _name_words(s)
        allowed |= {w.lower() for t in row["turns"] for w in re.findall(r"[A-Za-z][A-Za-z0-9.+\-]*", t)}
        out["english"] = english_runs(text, allowed)
    return out


_ADVISOR: Any = None


def _advisor() -> Any:
    global _ADVISOR
    if _ADVISOR is None:
        from assistant.service.advisor import Advisor

        path = Path(tempfile.mkdtemp(prefix="answer_eval_")) / "threads.sqlite"
        _ADVISOR = Advisor("router", checkpoint_path=str(path))
    return _ADVISOR


def evaluate(rows: list[dict], jobs: int = 1) -> tuple[dict, list[dict]]:
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(run_row, rows, chunksize=8))
    else:
        results = [run_row(r) for r in rows]
    ok = [x for x in results if "error" not in x]
    neg = [x for x in ok if x["negative"]]
    solve = [x for x in ok if x["solve_for"] and not x["asked_back"]]
    ur = [x for x in ok if "english" in x]
    by_kind: dict[str, list[int]] = {}
    for x in neg:
        k = by_kind.setdefault(x["negative"], [0, 0])
        k[0] += 1
        k[1] += bool(x["forward"])
    summary = {"n": len(results), "errors": len(results) - len(ok), "negative": len(neg),
               "negative_with_forward": sum(bool(x["forward"]) for x in neg),
               "negative_by_kind": {k: f"{v[1]}/{v[0]}" for k, v in sorted(by_kind.items())},
               "solve_for": len(solve), "solved": sum(bool(x["solved"]) for x in solve),
               "solve_asked_back": sum(bool(x["solve_for"] and x["asked_back"]) for x in ok),
               "codeish_answers": sum(bool(x["codeish"]) for x in ok),
               "urdu_answers": len(ur), "urdu_with_english": sum(bool(x["english"]) for x in ur)}
    return summary, results


def _print_failures(results: list[dict]) -> None:
    for x in results:
        if "error" in x:
            print(f"  {x['id']}: crashed {x['error']}")
            continue
        why = []
        if x["negative"] and not x["forward"]:
            why.append(f"no way forward ({x['negative']}; {x['headline']})")
        if x["solve_for"] and not x["asked_back"] and not x["solved"]:
            why.append(f"{x['solve_for']} not solved (verdict {x['verdict']}; {x['headline']})")
        if x["codeish"]:
            why.append(f"code in text {x['codeish']}")
        if x.get("english"):
            why.append(f"English in Urdu {x['english'][:4]}")
        if why:
            print(f"  {x['id']}: " + "; ".join(why))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="+", type=Path)
    ap.add_argument("--show-failures", action="store_true")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes, each with its own advisor and thread store (1 = the figures as reported)")
    ap.add_argument("--json", type=Path, help="write every row's result here")
    a = ap.parse_args(argv)
    rows = [json.loads(line) for p in a.batches for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    summary, results = evaluate(rows, a.jobs)
    print(f"questions {summary['n']} (crashed {summary['errors']})")
    print(f"negative verdicts {summary['negative']}: with a way forward carrying numbers "
          f"{summary['negative_with_forward']} ({summary['negative_by_kind']})")
    print(f"solve_for questions {summary['solve_for']}: solved number stated {summary['solved']} "
          f"(besides {summary['solve_asked_back']} asked back for an unknown name, as the row expects)")
    print(f"answers with snake_case or CLI flags: {summary['codeish_answers']}")
    print(f"Urdu answers {summary['urdu_answers']}: with an English sentence {summary['urdu_with_english']}")
    if a.show_failures:
        _print_failures(results)
    if a.json:
        a.json.write_text(json.dumps({"summary": summary, "rows": results}, ensure_ascii=False, indent=1),
                          encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
