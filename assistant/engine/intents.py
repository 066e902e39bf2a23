"""What a question asks for, from evidence: its cue words (lexicon) and the facts of its Query.

    finalize(query, keep_intents=None) -> Query   intents, solve_for, implied capabilities, the
                                                  serving default and range checks, in place

Several intents may hold at once ("how long and how much"); a follow-up whose words ask for nothing
new keeps the thread's intents.
"""

from __future__ import annotations

__all__ = ["cue_set", "finalize"]

import re
from functools import lru_cache

from assistant.engine.normalise import normalise
from assistant.engine.query import Query
from knowledge.catalog import resolve_model
from knowledge.lexicon import pattern_map, patterns


def cue_set(key: str, t: str) -> set[str]:
    """The concepts of a lexicon cue map that the (normalised) text shows."""
    return {c for c, pat in pattern_map(key).items() if pat.search(t)}


def finalize(q: Query, keep_intents: list[str] | None = None) -> Query:
    """Intents, what is solved for and range checks, from this turn's words and the (merged) facts.

    `keep_intents`: a follow-up whose words ask for nothing new keeps the thread's intents."""
    t = normalise(q.text)
    _intents(t, q)
    budget_only = set(q.intents) <= {"cost", "prices", "recommend"} and bool(q.budget_usd_total or q.budget_usd_per_hour) \
        and "recommend" in (keep_intents or [])
    if keep_intents and (not q.intent_cued or budget_only):  # "and if the budget is $300?" keeps the recommendation
        q.intents = list(keep_intents)
        _implied(q, q.intents, cue_set("intent_cues", t), t)
    _default_method(q)
    _check_ranges(q)
    return q


def _default_method(q: Query) -> None:
    """Serving is what the words imply when no training word was written and the question is about
    decode speed, concurrent users, prompts, the KV cache, or whether a model fits a GPU."""
    if q.method is None and q.has_model and not (q.examples or q.dataset_tokens or q.epochs or q.lora_rank):
        if "speed" in q.intents or q.concurrent_users or q.prompt_tokens or q.output_tokens or q.kv_precision or \
                (q.context_tokens and "fit" in q.intents) or q.solve_for in ("max_context", "max_batch") or \
                q.engine or q.min_tokens_per_s or ("fit" in q.intents and q.has_gpu):
            q.method = "inference"


def _intents(t: str, q: Query) -> None:  # noqa: C901 - evidence rules, each one line
    cues = cue_set("intent_cues", t)
    solve = cue_set("solve_cues", t)
    q.solve_for = q.solve_for if q.followup and not solve else None
    has_model, has_gpu = q.has_model, q.has_gpu
    training = q.method in ("full", "lora", "qlora", "finetune") or bool(q.examples or q.dataset_tokens or q.epochs)
    image = bool(q.model and _is_pipeline(q.model)) or bool(q.images or q.resolution or q.steps)
    words = len(t.split())
    # what is being solved for
    for s in ("min_gpu_count", "max_context", "max_batch", "cheapest_gpu", "fastest_gpu", "min_gpu_memory"):
        if s in solve:
            q.solve_for = s
            break
    if q.solve_for == "min_gpu_memory" and (q.gpus and not re.search(r"smallest|minimum|least|chhot|چھوٹ|کم سے کم", t)):
        q.solve_for = None  # "how much VRAM ... on an H100" is a fit question
    if q.solve_for == "cheapest_gpu" and not has_model and not image and not q.followup and q.gpus:
        q.solve_for = None  # "cheapest H100" is a price query
    intents: list[str] = []

    def add(*xs: str) -> None:
        for x in xs:
            if x not in intents:
                intents.append(x)

    if "help" in cues and not has_model and not has_gpu and words <= 12:
        q.intents, q.intent_cued = ["help"], True
        return
    explicit = cues & {"speed", "train_time", "cost", "prices", "recommend", "fit"}
    if q.solve_for == "min_gpu_count" and image and (q.images or q.deadline_hours):
        add("speed")
    elif q.solve_for in ("max_context", "max_batch", "min_gpu_count", "min_gpu_memory"):
        add("fit")
    if q.solve_for in ("cheapest_gpu", "fastest_gpu"):
        add("recommend")
    if q.solve_for == "fastest_gpu":
        add("speed")
    comparing = len(q.gpus) + len(q.gpu_unknown) >= 2 or len(q.providers) >= 2 or q.both_pricing or \
        len(q.regions) >= 2 or (q.billing and bool(re.search(r"\bvs\b|versus|compared|than|مقابل", t)))
    if "recommend" in cues and (has_model or image or training or comparing):
        add("recommend")
    if "speed" in cues and (has_model or has_gpu or image):
        add("speed")
    if q.min_tokens_per_s and has_model and not has_gpu:
        add("recommend")
    if image and (cues & {"speed", "train_time", "cost"} or q.images or q.solve_for in ("cheapest_gpu", "min_gpu_count")):
        add("speed")  # images: time per image drives time and cost
    if q.solve_for == "min_gpu_count" and training and q.deadline_hours:
        add("train_time")
    if "train_time" in cues and (has_model or training or image):
        add("speed" if not training and (image or q.method == "inference" or q.examples or q.prompt_tokens) else "train_time")
    if "cost" in cues or q.budget_usd_total or q.egress_gb or q.storage_gb or (q.billing and not has_model):
        if has_model or has_gpu or q.billing or q.egress_gb or q.storage_gb or training or image:
            if (q.budget_usd_total or q.budget_usd_per_hour) and has_model and not has_gpu and "cost" not in cues:
                add("recommend")
            else:
                add("cost")
    if "prices" in cues and (has_gpu or q.providers or (not has_model and patterns("domain").search(t))):
        add("prices" if not has_model or not intents else "cost")
    if q.budget_usd_per_hour and has_model and not has_gpu:
        add("recommend")
    if has_model and ("fit" in cues or q.gpu_memory_gb or (has_gpu and not intents) or
                      (not intents and (q.method or q.context_tokens or q.batch or q.precision))):
        add("fit")
    if ("compare" in cues or len(q.providers) >= 2) and comparing:
        add("compare")
        if not (set(intents) - {"compare"}):
            add("speed" if has_model else "prices")
    if not intents or intents == ["compare"]:
        if patterns("domain").search(t) or has_model or has_gpu:
            add("guide")
        elif "prices" in cues:
            add("prices")
    if q.solve_for:
        cues.discard("guide")  # "how many L40S do I need?" asks for a number, not an explanation
    if "guide" in cues and intents and "guide" not in intents:
        add("guide")
    if "compare" in intents and re.search(r"\bor\b|\?\s*$", t) and len(q.gpus) >= 2 and "recommend" not in intents:
        add("recommend")  # "A6000 or L40S?": which one to take
    numbers = set(q.facts()) - {"billing", "providers", "gpus", "regions"}
    if "guide" in cues and not q.model and (patterns("domain").search(t) or q.gpus) and \
            (not q.has_gpu and not numbers or re.search(r"\b(?:why|conceptually|explain|how come)\b|کیوں|kyun", t) and not numbers):
        intents = ["guide"] + [i for i in intents if i == "compare"]
    _implied(q, intents, cues, t)
    if not intents:
        intents = ["out_of_scope"]
    if q.injection and (not (has_model or has_gpu) or re.search(r"forget|ignore|override|dump|commission|pays you", t)):
        intents = ["out_of_scope"]
    q.intents = intents
    q.intent_cued = bool(explicit or q.solve_for or "guide" in cues and not q.followup)


def _implied(q: Query, intents: list[str], cues: set[str], t: str) -> None:
    """Capabilities a question needs because of another: a recommendation rests on the memory fit
    and the offers, a comparison shows the same rows (fit, speed, price) for each side, a cost names
    the hourly price it used, a billing question cites the guide on billing granularity."""
    def add(x: str) -> None:
        if x not in intents:
            intents.append(x)
    if re.search(r"\bworth (?:it|the)\b|worth kar|فائدہ مند", t) and (q.has_model or q.gpus) and "recommend" not in intents:
        add("recommend")
    training = q.method in ("full", "lora", "qlora", "finetune") or bool(q.examples and not q.prompt_tokens) or \
        bool(q.dataset_tokens or q.epochs)
    if "recommend" in intents and q.has_model:
        add("fit")
        add("prices")
        if training and (q.examples or q.dataset_tokens or q.budget_usd_total):
            add("train_time")
            add("cost")
    if "compare" in intents and q.has_model and len(q.gpus) >= 2 and training:
        add("train_time")
        add("cost")
        if re.search(r"better|bہتر|بہتر|behtar|should|worth|which", t):
            add("recommend")
    elif "compare" in intents and re.search(r"\bbetter\b|بہتر|behtar|\bworth\b|\bshould i\b", t):
        add("recommend")
    if q.has_model and q.has_gpu and q.method in ("full", "lora", "qlora", "finetune") and intents and "fit" not in intents:
        add("fit")
    if "compare" in intents and q.has_model and len(q.gpus) >= 2 and not training:
        for x in ("fit", "speed", "prices"):
            add(x)
    if "cost" in intents and q.gpus:
        add("prices")
    if q.billing and "cost" in intents:
        add("guide")
    if "cost" in intents and training and q.has_model:
        add("train_time")  # the cost of a run rests on its hours
    image = bool(q.model) and _is_pipeline(q.model)
    if image and (q.images or "cost" in cues) and ("recommend" in intents or q.solve_for == "cheapest_gpu"):
        add("cost")  # the cheapest GPU for a batch of images is judged by the job's total
    if "speed" in intents and q.has_model and q.gpus:
        add("fit")


@lru_cache(maxsize=256)
def _is_pipeline(model_id: str) -> bool:
    try:
        resolve_model(model_id)
        return False
    except Exception:
        return True


def _check_ranges(q: Query) -> None:
    if q.model and q.context_tokens:
        try:
            arch = resolve_model(q.model)
        except Exception:
            return
        if arch.max_context and q.context_tokens > arch.max_context:
            q.out_of_range.append("context_tokens")


