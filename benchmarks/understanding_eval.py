"""Score the understanding on an evaluation batch (tests/data/eval/batch*.jsonl).

Each row was written by someone who had not read the understanding code: the user's turns and the
expected interpretation of the last turn (intents, solve_for, answer language, ask-back, facts).
A question is *fully right* when the right tools run, every stated fact reaches the Query with the
right value, the answer language is right, an unknown name is asked back, and no GPU or model was
invented. Argument accuracy = stated facts right / stated facts.

    python -m benchmarks.understanding_eval tests/data/eval/batch1.jsonl [--show-failures]

The first-seen scores of the rule-based engine that came before the typed Query (assistant/nlu.py
at commit 967e2fe, scored through an adapter onto these keys) were 23, 21 and 16 of 110.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable

from assistant.engine.query import NUMBER_FACTS
from knowledge.catalog import resolve_diffusion, resolve_gpu, resolve_model
from tools.errors import AdvisorError

NUMERIC = set(NUMBER_FACTS)
COMPUTE_INTENTS = {"fit", "speed", "train_time", "prices", "cost", "recommend"}


def _model_id(name: str) -> str:
    for candidate in (name, re.sub(r"\s+\d+(?:\.\d+)?\s?b$", "", str(name).strip(), flags=re.I)):
        try:  # "DeepSeek V3 671B": the catalog's DeepSeek-V3, whose size the name repeats
            return resolve_model(candidate).id
        except AdvisorError:
            pass
    try:
        pipe = resolve_diffusion(name)
        if pipe:
            return pipe[0].model_id
    except AdvisorError:
        pass
    return str(name).strip().lower()


def _meant(name: str) -> set[str]:
    """The catalog ids a written model name may mean: its one id, every pipeline of an ambiguous
    family ("Flux"), or every version of a family at a size ("Llama 70B")."""
    ids = {_model_id(name)}
    try:
        resolve_diffusion(name)
    except AdvisorError as exc:
        ids |= {_model_id(x) for x in getattr(exc, "suggestions", []) or [] if getattr(exc, "ambiguous", False)}
    m = re.fullmatch(r"\s*([a-z]+)[\s-]?(\d+(?:\.\d+)?)\s?b\s*", str(name).lower())
    if m:
        from knowledge.catalog import model_names
        ids |= {x.id for x in model_names().values() if x.id.startswith(m.group(1)) and
                re.search(rf"(?<![\d.]){m.group(2)}b(?![a-z0-9])", x.id)}
    return ids


def _gpu_name(name: str) -> str:
    try:
        m = resolve_gpu(name)
        return (m.gpu.family or m.gpu.name) if m.variants else m.gpu.name
    except AdvisorError:
        return str(name).strip().lower()


def _gpu_family(name: str) -> str:
    for candidate in (name, re.sub(r"\s*\d+\s*gb\b", "", str(name), flags=re.I), re.sub(r"\s+\d{2,3}$", "", str(name))):
        try:
            g = resolve_gpu(candidate).gpu
            return g.family or g.name
        except AdvisorError:
            continue
    return str(name).strip().lower()


def _region(x: str) -> str:
    """A region as the engine's lexicon names it ("EU" and "Europe" are one region)."""
    from assistant.engine.names import find_concepts

    spans = find_concepts(f" in {str(x).lower()} ", "regions")
    return spans[0].value if spans else str(x).lower()


def fact_ok(key: str, want: Any, got: Any) -> bool:
    if key in NUMERIC:
        if got is None or want is None:
            return got == want
        try:
            w, g = float(want), float(got)
        except (TypeError, ValueError):
            return False
        return math.isclose(w, g, rel_tol=0.03, abs_tol=0.02)
    if key == "model":
        if isinstance(want, list):  # "Mistral 7B vs Llama 3.1 8B": the model and the other models compared
            return sorted(_model_id(w) for w in want) == sorted(_model_id(g) for g in (got or []))
        return got is not None and _model_id(got) in _meant(want)
    if key == "model_unknown":
        return bool(got)
    if key == "gpus":
        w = sorted(_gpu_family(x) for x in want)
        g = sorted(_gpu_family(x) for x in (got or []))
        return w == g
    if key == "gpu_unknown":  # a writer may give one name as a string
        return bool(got) and len(got) >= len([want] if isinstance(want, str) else want)
    if key == "regions":
        return sorted(_region(x) for x in want) == sorted(_region(x) for x in (got or []))
    if key == "providers":
        return sorted(str(x).lower() for x in want) == sorted(str(x).lower() for x in (got or []))
    if key == "precision":
        # same bytes per weight: a question about 16-bit weights is answered the same for fp16 and bf16
        # GGUF's 4- and 8-bit quants ("q4", "Q8_0") are the 4- and 8-bit answers a writer means by int4/int8
        alias = {"awq": "int4", "gptq": "int4", "4bit": "int4", "8bit": "int8", "float16": "fp16", "bf16": "fp16",
                 "q4_0": "int4", "q4_k_m": "int4", "q8_0": "int8"}
        return got is not None and alias.get(str(want).lower(), str(want).lower()) == alias.get(str(got).lower(), str(got).lower())
    if key == "lora_targets":  # "q_proj and v_proj" and "q,v" name the same modules
        def mods(x):
            return sorted(re.sub(r"_proj$", "", re.sub(r"[\s-]+", "-", m.strip().lower()))
                          for m in (x if isinstance(x, list) else str(x).split(",")))
        every = ["down", "gate", "k", "o", "q", "up", "v"]  # listing every linear layer is "all linear"
        want = "all-linear" if re.fullmatch(r"all[- ](?:linear[- ])?(?:layers|modules)|all[- ]linear", str(want).lower()) else want
        return got is not None and (mods(want) == mods(got) or {tuple(mods(want)), tuple(mods(got))} <= {tuple(every), ("all-linear",)})
    if key == "optimizer":
        return got is not None and str(want).replace("_", "").lower() == str(got).replace("_", "").lower()
    if key == "engine":
        alias = {"ollama": "llama.cpp"}
        return got is not None and alias.get(want, want) == alias.get(got, got)
    if key == "quant_format":  # the kernel family as named: "marlin" is GPTQ-Marlin, "nf4" bitsandbytes 4-bit
        alias = {"marlin": "gptq-marlin", "nf4": "bnb-nf4", "bnb-4bit": "bnb-nf4", "llm.int8": "bnb-int8"}
        return got is not None and alias.get(str(want).lower(), str(want).lower()) == alias.get(got, got)
    if key == "compared":  # a setting's second value, weighed beside the first ({"engine": "tensorrt-llm"})
        got = got or {}
        return all(fact_ok(k, v, got.get(k, got.get("quant_format") if k == "precision" else None))
                   for k, v in (want or {}).items())
    return want == got


def score_row(row: dict, got: dict) -> dict:
    exp = row["expect"]
    want_int = set(exp.get("intents") or [])
    got_int = set(got.get("intents") or [])
    need = want_int - {"compare"}
    tools_ok = bool(need <= got_int or (need <= {"guide"} and got_int & {"guide", "help"} and not got_int & COMPUTE_INTENTS))
    if need & {"help", "out_of_scope"}:
        tools_ok = bool(got_int & (need | {"help", "out_of_scope"})) and not got_int & COMPUTE_INTENTS
    if "compare" in want_int and not ("compare" in got_int or len(got.get("gpus") or []) + (1 if got.get("model") else 0) >= 2):
        tools_ok = False
    if "compared" in (exp.get("facts") or {}) and "compare" in want_int and "compare" not in got_int:
        tools_ok = False  # a setting's two values are run side by side only under a comparison
    facts = exp.get("facts") or {}
    key = {"compared": "setting_alternatives"}
    wrong = {k: (v, got.get("models" if k == "model" and isinstance(v, list) else key.get(k, k))) for k, v in facts.items()
             if not fact_ok(k, v, got.get("models" if k == "model" and isinstance(v, list) else key.get(k, k)))
             and not (k == "spot" and v is True and got.get("both_pricing"))  # spot beside on-demand shows spot
             and not (k in ("images", "examples") and got.get("method") in ("lora", "qlora", "full", "finetune")
                      and fact_ok("examples", v, got.get("examples") or got.get("images")))}  # an image LoRA's training set
    spurious = []
    if "gpus" not in facts and got.get("gpus") and not want_int & {"prices"} and want_int & COMPUTE_INTENTS:
        spurious.append(("gpus", got["gpus"]))
    if "model" not in facts and "params_b" not in facts and "model_unknown" not in facts and got.get("model"):
        spurious.append(("model", got["model"]))
    solve_ok = exp.get("solve_for") == got.get("solve_for") or (
        # "how much VRAM does X need?" with no GPU named: the memory need and the cheapest cards that hold it, the
        # same tool calls whether read as a fit or as the smallest GPU memory (tests/engine/test_plan.py checks it)
        {exp.get("solve_for"), got.get("solve_for")} == {None, "min_gpu_memory"} and "fit" in got_int and not got.get("gpus"))
    lang_ok = exp.get("answer_lang", "en") == got.get("answer_lang", "en")
    ask_ok = bool(exp.get("ask_back")) == bool(got.get("ask_back"))
    full = tools_ok and not wrong and not spurious and solve_ok and lang_ok and ask_ok
    return {"id": row["id"], "lang": row["lang"], "multi": len(row["turns"]) > 1, "full": full, "tools_ok": tools_ok,
            "facts_total": len(facts), "facts_right": len(facts) - len(wrong), "wrong": wrong, "spurious": spurious,
            "solve_ok": solve_ok, "lang_ok": lang_ok, "ask_ok": ask_ok, "got_intents": sorted(got_int),
            "got_solve": got.get("solve_for")}


def understand_new(turns: list[str]) -> dict:
    from assistant.engine.plan import asks_model_for_speed
    from assistant.engine.understand import understand_dialogue
    q = understand_dialogue(turns)
    d = q.facts() | {"intents": list(q.intents), "answer_lang": q.answer_lang, "solve_for": q.solve_for,
                     "setting_alternatives": dict(q.setting_alternatives)}
    if q.other_models:
        d["models"] = [q.model, *q.other_models]
    # asked back: an unknown name, or a computing question with no model at all (compose asks which)
    computing = set(q.intents) & {"fit", "speed", "train_time", "cost", "recommend"}
    d["ask_back"] = bool(q.model_unknown and not q.params_b and not q.model) or \
        bool(q.gpu_unknown and not q.gpu_memory_gb) or asks_model_for_speed(q) or \
        bool(computing and not q.has_model and not q.gpus and not q.billing and not q.egress_gb and not q.storage_gb
             and not q.gpu_memory_gb and set(q.intents) <= {"fit", "speed", "train_time", "cost", "recommend", "guide"})
    return d


def evaluate(path: Path, understand: Callable[[list[str]], dict]) -> tuple[dict, list[dict]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    results = []
    for r in rows:
        try:
            got = understand(r["turns"])
        except Exception as exc:  # a crash is a wrong answer, reported as such
            got = {"intents": [], "error": repr(exc)}
        results.append(score_row(r, got))
    n = len(results)
    by_lang: dict[str, list[bool]] = {}
    for x in results:
        by_lang.setdefault("multi-turn" if x["multi"] else x["lang"], []).append(x["full"])
    summary = {"n": n, "fully_right": sum(x["full"] for x in results),
               "tools_right": sum(x["tools_ok"] for x in results),
               "facts_right": sum(x["facts_right"] for x in results), "facts_total": sum(x["facts_total"] for x in results),
               "solve_right": sum(x["solve_ok"] for x in results), "lang_right": sum(x["lang_ok"] for x in results),
               "ask_right": sum(x["ask_ok"] for x in results),
               "by_lang": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_lang.items())}}
    return summary, results


# The checks besides tools and facts, and what a failure line says when one is missed.
_CHECK_MISSED = (("solve_ok", "solve wrong"), ("lang_ok", "lang wrong"), ("ask_ok", "ask-back wrong"))


def summary_line(name: str, summary: dict) -> str:
    """One batch's scores: fully right, tools, facts (with their share), solve_for, language, ask-back."""
    pct = 100 * summary["facts_right"] / max(1, summary["facts_total"])
    return (f"{name} : fully right {summary['fully_right']}/{summary['n']}; tools {summary['tools_right']}; "
            f"facts {summary['facts_right']}/{summary['facts_total']} ({pct:.1f} %); solve_for {summary['solve_right']}; "
            f"language {summary['lang_right']}; ask-back {summary['ask_right']}; by language {summary['by_lang']}")


def failure_line(x: dict) -> str:
    """What one question that is not fully right got: its intents, solve_for, the checks missed, wrong facts."""
    missed = "".join(f" ({said})" for key, said in _CHECK_MISSED if not x[key])
    return (f"  {x['id']}: tools_ok={x['tools_ok']} got={x['got_intents']} solve={x['got_solve']}{missed} "
            f"wrong={x['wrong']} spurious={x['spurious']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="+", type=Path)
    ap.add_argument("--show-failures", action="store_true")
    a = ap.parse_args(argv)
    for path in a.batches:
        summary, results = evaluate(path, understand_new)
        print(summary_line(path.name, summary))
        if a.show_failures:
            for x in results:
                if not x["full"]:
                    print(failure_line(x))
    return 0


if __name__ == "__main__":
    sys.exit(main())
