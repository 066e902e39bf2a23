"""From the typed Query to tool calls, one round at a time.

`plan(query, done)` returns the calls still needed given this turn's results so far ([] when the
answer can be composed). A second round runs only when a call needs a number from a first-round
result: the GPUs with enough memory for a computed need, or the way forward after a negative verdict.
Defaults applied here are the practitioner's (stated in the answer by compose).
"""

from __future__ import annotations

__all__ = ["DEFAULTS", "asks_model_for_speed", "plan"]

import re
from typing import Any

from assistant.engine.plan_jobs import job_replicas_calls
from assistant.engine.query import Query
from knowledge.catalog import is_image_pipeline

DEFAULTS = {
    "context_tokens": 4096,
    "finetune_method": "lora",
    "tokens_per_example": 512,
    "billing_gpu": "A100",
    "billing_hours": 20 / 60,
    "example_model": "llama-3.1-8b",  # a speed question about a GPU alone: a common 8B model, said so
    "ranking_images": 1000,  # "fastest GPU for FLUX" with no count: ranked on a batch of 1,000 images, said so
    "max_training_gpus": 1024}  # the fewest GPUs for a fine-tune is searched up to this many (FSDP over nodes)
_OWN_TOPIC = re.compile(r"nvlink|pcie|interconnect|infiniband|multi-?node|egress|docker|\bssh\b|jupyter|checkpoint|"
                        r"preempt|interrupt|hbm|gddr|bandwidth|tensor cores?|fp8 support", re.I)
_MAX_SIDES = 3
_TRAINING = ("full", "lora", "qlora", "finetune")

Call = dict[str, Any]
Done = list[tuple[str, dict, dict]]


def _model(q: Query) -> dict[str, Any]:
    if q.model:
        return {"model": q.model}
    if q.params_b is not None:
        return {"params_b": q.params_b}
    if q.model_unknown:
        return {"model": q.model_unknown}  # the tool answers with the closest known names
    return {}


def _model_sides(q: Query) -> list[dict[str, Any]]:
    """The models a comparison names, main first ("Llama 3.1 8B vs Mistral 7B"); the main one alone otherwise."""
    main = _model(q)
    if "compare" not in q.intents or not main:
        return [main]
    return [main] + [{"model": m} for m in q.other_models[:_MAX_SIDES - 1]]


def _training(q: Query) -> bool:
    return q.method in _TRAINING or (q.method is None and bool(q.dataset_tokens or q.epochs or (q.examples and not q.prompt_tokens)))


def train_method(q: Query) -> str:
    if q.method in ("full", "lora", "qlora"):
        return q.method
    if q.precision in ("int4", "nf4"):
        return "qlora"
    return DEFAULTS["finetune_method"]


def _count(q: Query, gpu: str | None) -> int | None:
    """The GPUs per instance for one card: its own count ("1x H100 or 2x L40S"), else the one stated."""
    return q.gpu_counts.get(gpu or "") or q.gpu_count


def _gpu_sides(q: Query) -> list[dict[str, Any]]:
    """One dict per GPU the question names (a memory size counts as a GPU); [{}] when none. An unknown
    GPU is not guessed: the need is computed without it and a price lookup offers the closest names."""
    sides: list[dict[str, Any]] = [{"gpu": g} | ({"gpus": q.gpu_counts[g]} if g in q.gpu_counts else {})
                                   for g in q.gpus[:_MAX_SIDES]]
    if not sides and q.gpu_memory_gb:
        sides = [{"gpu_memory_gb": q.gpu_memory_gb}]
    return sides or [{}]


def _context(q: Query) -> int:
    if q.context_tokens:
        return q.context_tokens
    if q.prompt_tokens or q.output_tokens:
        return (q.prompt_tokens or 0) + (q.output_tokens or 0)
    return DEFAULTS["context_tokens"]


def _vram_args(q: Query) -> dict[str, Any]:
    a: dict[str, Any] = dict(_model(q))
    if _training(q):
        a["method"] = train_method(q)
        if q.context_tokens:
            a["seq_len"] = q.context_tokens
        a["batch"] = q.batch
        a["grad_checkpointing"] = True if q.grad_checkpointing is None else q.grad_checkpointing
        a["optimizer"] = q.optimizer
        a["training_precision"] = q.training_precision
        a["lora_rank"] = q.lora_rank
        if a["method"] != "qlora" or q.precision in ("nf4", "int4"):
            a["weight_precision"] = None if a["method"] == "qlora" else q.precision
    else:
        a["method"] = "inference"
        a["seq_len"] = _context(q)
        a["batch"] = q.concurrent_users or q.batch
        a["weight_precision"] = q.precision
        a["kv_precision"] = q.kv_precision
    if q.gpu_count and q.gpu_count > 1:
        a["gpus"] = q.gpu_count
    return {k: v for k, v in a.items() if v is not None}


def _guide(q: Query) -> Call:
    topic = {"fit": "VRAM memory KV cache weights fit", "speed": "memory bandwidth tokens per second speed",
             "train_time": "fine-tuning hardware time", "prices": "price comparison spot on-demand",
             "cost": "billing granularity spot checkpoint cost", "recommend": "choose a card VRAM first then bandwidth",
             "compare": "memory bandwidth HBM GDDR VRAM"}.get(q.intent, "")
    own = q.intent in ("guide", "help") or "guide" in q.intents or _OWN_TOPIC.search(q.text)
    question = q.text if own else f"{q.text} {topic}"
    return {"name": "search_guide", "args": {"question": question[:2000], "lang": q.answer_lang, "k": 2}}


def plan(q: Query, done: Done | None = None) -> list[Call]:
    """Tool calls for this round; `done` = [(name, args, result)] of earlier rounds of this turn."""
    if done:
        return _second_round(q, done)
    intents = set(q.intents)
    if q.gpu_unknown and not q.gpus and not q.has_model and intents & {"prices", "cost"}:
        return [{"name": "price_query", "args": {"gpu": g}} for g in q.gpu_unknown[:2]]
    if intents & {"help", "out_of_scope"} or not intents:
        return []
    if intents == {"guide"} or intents == {"guide", "compare"}:
        return [_guide(q)]
    calls: list[Call] = []
    m = _model(q)
    image = bool(q.model) and is_image_pipeline(q.model)
    if image:
        return _image_calls(q, intents) + [_guide(q)]
    recommender = "recommend" in intents and bool(m) and q.solve_for != "min_gpu_memory" and not _hourly_only(q) and \
        not (q.gpus and len(_model_sides(q)) > 1) and \
        not (len(q.gpus) >= 2 and "compare" in intents)  # "Llama 8B vs Mistral 7B on an L4", "1x H100 or 2x L40S"
    if recommender:
        calls.append({"name": "recommend_gpus", "args": _recommend_args(q)})
    if ("recommend" in intents or q.solve_for == "min_gpu_memory" or _hourly_only(q)) and not recommender and m:
        intents.add("fit")  # the memory needed, then the GPUs and offers that have it (second round)
    # the recommender already ranks by cost: the cheapest-GPU solver would only repeat it
    solved = _solve_calls(q) if m and not (recommender and q.solve_for == "cheapest_gpu") else []
    calls += solved
    if "fit" in intents and m and not (recommender and not q.has_gpu) and \
            not any(c["args"]["unknown"] == "min_gpu_count" for c in solved):
        calls += _fit_calls(q)
    if "speed" in intents and q.gpus and not image:
        calls += _speed_calls(q)
    if "train_time" in intents and m and q.gpus and _training(q) and "cost" not in intents:
        for side in _gpu_sides(q):
            n = _count(q, side.get("gpu"))
            calls.append({"name": "training_time", "args": m | _data_args(q) | side | {"method": train_method(q)}
                          | ({"gpus": n} if n and n > 1 else {})})
    if "cost" in intents:
        calls += _cost_calls(q)
    weighed = len(q.gpus) >= 2 and "compare" in intents  # the named cards' own offers, side by side
    if "prices" in intents and (not ("recommend" in intents and m) or weighed) and not ("cost" in intents and calls):
        calls += _price_calls(q)
    if q.gpu_unknown and not q.gpus and not any(c["name"] == "price_query" for c in calls):
        calls += [{"name": "price_query", "args": {"gpu": g}} for g in q.gpu_unknown[:2]]
    calls.append(_guide(q))
    return _unique_calls(calls)


def _hourly_only(q: Query) -> bool:
    """Cheapest GPU with no data size, image count or load: the cheapest hour of a GPU that holds it."""
    if q.solve_for != "cheapest_gpu" or q.deadline_hours or q.budget_usd_total:
        return False
    if q.model and is_image_pipeline(q.model):
        return not (q.images or q.concurrent_users or q.duration_hours)
    return _training(q) and not (q.dataset_tokens or q.examples)


def _unique_calls(calls: list[Call]) -> list[Call]:
    """The same tool with the same arguments runs once (two intents may ask for the same call)."""
    seen, out = set(), []
    for c in calls:
        key = (c["name"], repr(sorted(c["args"].items())))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _image_shape(q: Query) -> dict[str, Any]:
    shape = {"resolution": q.resolution, "steps": q.steps, "batch": q.batch}
    if q.precision:
        shape["precision"] = q.precision
    return {k: v for k, v in shape.items() if v is not None}


def _image_calls(q: Query, intents: set[str]) -> list[Call]:
    """Image pipelines: memory (with the placements that fit), seconds per image, the job's or the
    endpoint's cost, and the cheapest GPU for a batch of images by a deadline."""
    shape = _image_shape(q)
    calls: list[Call] = []
    sides = _gpu_sides(q)
    if not _hourly_only(q) and (intents & {"recommend"} or q.solve_for in ("cheapest_gpu", "fastest_gpu")
                                or (not q.has_gpu and intents & {"speed", "cost"})):
        a: dict[str, Any] = {"model": q.model, "workload": "endpoint" if q.concurrent_users else "batch"} | \
            {k: v for k, v in shape.items() if k != "batch"}
        for k, v in (("images", q.images), ("deadline_hours", q.deadline_hours), ("concurrent_users", q.concurrent_users),
                     ("budget_usd", q.budget_usd_total), ("providers", list(q.providers) or None)):
            if v:
                a[k] = v
        if q.solve_for == "fastest_gpu":
            a["objective"] = "fastest"
            if not (q.images or q.concurrent_users):
                a["images"] = DEFAULTS["ranking_images"]
        calls.append({"name": "recommend_gpus", "args": a})
    if calls and q.precision:  # the recommender takes the precisions it may use
        calls[0]["args"] = {k: v for k, v in calls[0]["args"].items() if k != "precision"} | {"precisions": [q.precision]}
    if "fit" in intents or not calls and not q.gpus:
        vshape = {("weight_precision" if k == "precision" else k): v for k, v in shape.items()}
        calls += [{"name": "vram_calculator", "args": {"model": q.model} | vshape | side} for side in sides]
    for g in q.gpus[:_MAX_SIDES]:
        if intents & {"speed", "cost", "compare"}:
            calls.append({"name": "speed_estimator", "args": {"model": q.model, "gpu": g} | shape})
        if "cost" in intents:
            a = {"model": q.model, "gpu": g} | {k: v for k, v in shape.items() if k != "batch"}
            a |= {"images": q.images} if q.images else {"serve": True} if q.concurrent_users or q.duration_hours else {}
            if q.providers:
                a["provider"] = q.providers[0]
            calls.append({"name": "cost_estimator", "args": a})
    if "prices" in intents and not calls:
        calls += _price_calls(q)
    return calls


def _fit_calls(q: Query) -> list[Call]:
    base = _vram_args(q)
    out = []
    for model in _model_sides(q):
        for side in _gpu_sides(q)[:_MAX_SIDES if model == _model(q) else 1]:
            out.append({"name": "vram_calculator", "args": base | model | side})
    # a setting given a second value ("4k vs 32k context", "rank 64 vs 8"): the first card with that value too
    for field, arg in (("context_tokens", "seq_len"), ("batch", "batch"), ("concurrent_users", "batch"),
                       ("lora_rank", "lora_rank"), ("gpu_count", "gpus")):
        if field in q.alternatives and out and (arg in out[0]["args"] or field in ("lora_rank", "gpu_count")):
            out.append({"name": "vram_calculator", "args": out[0]["args"] | {arg: int(q.alternatives[field])}})
    if base.get("method") == "full" and not q.training_precision and len(out) == 1:
        out.append({"name": "vram_calculator", "args": out[0]["args"] | {"training_precision": "bf16"}})
    return out


def _solve_calls(q: Query) -> list[Call]:
    """The unknown the user asks for, solved with the calculators (tools/solve.py)."""
    if q.solve_for in (None, "fastest_gpu", "min_gpu_memory"):
        return []  # the smallest GPU: the memory calculator, then the offers with that much memory (second round)
    base = _vram_args(q)
    if q.solve_for == "cheapest_gpu" and _hourly_only(q):
        return []  # no run to cost: the memory, then the cheapest hour of a GPU that has it (second round)
    if q.solve_for == "cheapest_gpu":
        r = _recommend_args(q)
        keep = ("model", "params_b", "workload", "context_tokens", "concurrent_users", "method", "dataset_tokens",
                "examples", "tokens_per_example", "epochs", "providers")
        return [{"name": "solve_for", "args": {"unknown": "best_gpu_by_cost"} | {k: v for k, v in r.items() if k in keep}}]
    if q.solve_for == "min_gpu_count" and not (q.gpus or q.gpu_memory_gb):
        return []  # no GPU named: the memory needed, then the GPUs and offers that have it
    if q.solve_for in ("max_context", "max_batch") and not (q.gpus or q.gpu_memory_gb):
        return []  # needs a GPU: compose asks which
    out = []
    for side in _gpu_sides(q):
        args = base | side | {"unknown": q.solve_for}
        if q.solve_for == "max_context":
            args.pop("seq_len", None)
        if q.solve_for == "max_batch":
            args.pop("batch", None)
        if q.solve_for == "min_gpu_count":
            args.pop("gpus", None)
            if _training(q):  # FSDP shards a fine-tune over many nodes; tensor parallelism stays within 64
                args["max_gpus"] = DEFAULTS["max_training_gpus"]
        out.append({"name": "solve_for", "args": args})
    return out


def asks_model_for_speed(q: Query) -> bool:
    """A speed question about one GPU that names no model: the speed depends on the model far more than
    on the card, so the answer shows the example model and asks which model is meant."""
    return ("speed" in q.intents and "compare" not in q.intents and len(q.gpus) == 1 and not q.has_model
            and not (q.images or q.resolution or q.steps))


def _speed_calls(q: Query) -> list[Call]:
    base: dict[str, Any] = dict(_model(q)) or {"model": DEFAULTS["example_model"]}  # named in the answer
    for k, v in (("precision", q.precision), ("engine", q.engine), ("prompt_tokens", q.prompt_tokens),
                 ("output_tokens", q.output_tokens)):
        if v:
            base[k] = v
    if q.context_tokens and not q.prompt_tokens:
        base["prompt_tokens"] = max(1, q.context_tokens * 3 // 4)
        base.setdefault("output_tokens", max(1, q.context_tokens - base["prompt_tokens"]))
    if q.gpu_count and q.gpu_count > 1:
        base["gpus"] = q.gpu_count
    load = q.concurrent_users or q.batch
    batches = [1, load] if load and load > 1 else [1]
    models = _model_sides(q) if _model(q) else [{}]
    return [{"name": "speed_estimator", "args": base | m | {"gpu": g, "batch": b} |
             ({"gpus": q.gpu_counts[g]} if g in q.gpu_counts else {})} for m in models
            for g in q.gpus[:_MAX_SIDES if not m or m == _model(q) else 1] for b in batches]


def _data_args(q: Query) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if q.dataset_tokens:
        out["dataset_tokens"] = q.dataset_tokens
    elif q.examples:
        out["examples"] = q.examples
        out["tokens_per_example"] = q.tokens_per_example or DEFAULTS["tokens_per_example"]
    if q.epochs:
        out["epochs"] = q.epochs
    return out


def _cost_calls(q: Query) -> list[Call]:
    m = _model(q)
    gpus = q.gpus[:_MAX_SIDES] or q.gpu_unknown[:1]
    providers = q.providers[:_MAX_SIDES] or [None]
    calls = []
    if not m or not (_training(q) or q.method == "inference" or q.concurrent_users):
        hours = q.duration_hours or DEFAULTS["billing_hours"]
        for g in gpus or ([DEFAULTS["billing_gpu"]] if q.billing else []):
            for p in providers:
                a = {"gpu": g, "hours": hours, "provider": p, "gpus": _count(q, g) if (_count(q, g) or 0) > 1 else None,
                     "storage_gb": q.storage_gb, "egress_gb": q.egress_gb}
                calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
        return calls
    if not gpus:  # which GPU: the recommender, or (no run to cost) the cheapest hour of one that holds it
        return [] if _hourly_only(q) else [{"name": "recommend_gpus", "args": _recommend_args(q)}]
    for g in gpus:
        for p in providers:
            a: dict[str, Any] = m | {"gpu": g, "provider": p}
            if (_count(q, g) or 0) > 1:
                a["gpus"] = _count(q, g)
            if _training(q):
                a |= _data_args(q) | {"method": train_method(q)}
            else:
                a |= {"serve": True, "batch": q.concurrent_users or q.batch, "precision": q.precision}
                if q.duration_hours:
                    a["hours"] = q.duration_hours
            a |= {"storage_gb": q.storage_gb, "egress_gb": q.egress_gb}
            calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
    return calls


def _price_calls(q: Query) -> list[Call]:
    if not q.gpus and not q.gpu_memory_gb and q.gpu_unknown:
        return [{"name": "price_query", "args": {"gpu": q.gpu_unknown[0]}}]
    out = []
    for g in q.gpus[:_MAX_SIDES] or [None]:
        base: dict[str, Any] = {"limit": 5}
        if g:
            base["gpu"] = g
        if q.gpu_memory_gb and not g:  # a named card's stated memory is the card's own
            base["min_vram_gb"] = q.gpu_memory_gb
        if _count(q, g):
            base["gpus"] = _count(q, g)
        if q.providers:
            base["provider"] = ",".join(q.providers)
        if q.regions:
            base["region"] = q.regions[0]
        if q.budget_usd_per_hour:
            base["max_price_usd_per_gpu_hour"] = q.budget_usd_per_hour
        if q.spot is True and not q.both_pricing:
            out.append({"name": "price_query", "args": base | {"pricing": "spot"}})
        elif q.spot is False and not q.both_pricing:
            out.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
        else:
            out.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
            out.append({"name": "price_query", "args": base | {"pricing": "spot", "limit": 3}})
    return out


def _recommend_args(q: Query) -> dict[str, Any]:
    a: dict[str, Any] = dict(_model(q))
    if _training(q):
        a |= {"workload": "finetune", "method": train_method(q)} | _data_args(q)
        if q.budget_usd_total:
            a["budget_usd"] = q.budget_usd_total
    else:
        # no load given: the recommender prices at the throughput-optimal batch and at batch 1, both labelled
        a |= {"workload": "serve", "context_tokens": _context(q), "concurrent_users": q.concurrent_users or q.batch}
        if q.precision:
            a["precisions"] = [q.precision]
        if q.min_tokens_per_s:
            a["min_tokens_per_s_per_user"] = q.min_tokens_per_s
    if q.solve_for == "fastest_gpu":
        a["objective"] = "fastest"
    if q.deadline_hours:
        a["deadline_hours"] = q.deadline_hours
    if q.spot:
        a["spot_allowed"] = True
    if q.providers:
        a["providers"] = list(q.providers)
    return {k: v for k, v in a.items() if v is not None}


def _second_round(q: Query, done: Done) -> list[Call]:
    names = [d[0] for d in done]
    if "way_forward" not in names and not _image_levers_done(q, done):
        forward = _way_forward(q, done)
        if forward:
            return forward
    relaxed = _relaxed_prices(done) or job_replicas_calls(q, done)
    if relaxed:
        return relaxed
    if ("fit" in q.intents or _hourly_only(q)) and "price_query" not in names and "recommend_gpus" not in names \
            and not q.has_gpu:
        v = next((r for n, _, r in done if n == "vram_calculator" and "total_gb" in r), None)
        if v is not None:
            a = {"min_vram_gb": round(v["total_gb"], 2), "gpus": 1, "pricing": "on-demand", "limit": 3,
                 "provider": ",".join(q.providers) or None, "region": q.regions[0] if q.regions else None}
            return [{"name": "price_query", "args": {k: x for k, x in a.items() if x is not None}}]
    return []


_RELAXABLE = ("provider", "region", "max_price_usd_per_gpu_hour", "gpus", "pricing")


def relaxations(args: dict[str, Any]) -> list[dict[str, Any]]:
    """A price query without each filter in turn (spot relaxed to on-demand), then without all of them."""
    def drop(keys: tuple[str, ...]) -> dict[str, Any]:
        out = {k: v for k, v in args.items() if k not in keys or k == "pricing"}
        return out | {"limit": 3} | ({"pricing": "on-demand"} if "pricing" in keys else {})
    present = tuple(k for k in _RELAXABLE if k in args and (k != "pricing" or args[k] == "spot"))
    out = [drop((k,)) for k in present]
    if len(present) > 1:
        out.append(drop(present))
    return out


def _relaxed_prices(done: Done) -> list[Call]:
    """Every price query of the turn came back empty: the same queries with their filters relaxed."""
    pq = [(a, r) for n, a, r in done if n == "price_query"]
    others = [r for n, _, r in done if n not in ("price_query", "search_guide") and "error" not in r]
    if not pq or others or any(r.get("offers") or "error" in r for _, r in pq):
        return []
    first = next((a for a, _ in pq if a.get("pricing") != "spot"), pq[0][0])
    calls = [{"name": "price_query", "args": a} for a in relaxations(first)]
    asked = {repr(sorted(a.items())) for a, _ in pq}
    return [c for c in calls if repr(sorted(c["args"].items())) not in asked]


def _image_levers_done(q: Query, done: Done) -> bool:
    """The image pipeline's lower precisions were tried already in this turn."""
    return any(n == "vram_calculator" and a.get("weight_precision") in _IMAGE_PRECISIONS
               and a.get("weight_precision") != q.precision for n, a, _ in done)


def _way_forward(q: Query, done: Done) -> list[Call]:
    """After a negative verdict (does not fit, too slow, past the deadline, over budget, no count or length
    fits, nothing to recommend), the smallest changes that work; image pipelines at lower precisions."""
    if q.model and is_image_pipeline(q.model):
        return _image_precisions(q, done)
    out: list[Call] = []
    for name, args, r in done:
        if "error" in r:
            continue
        if name == "vram_calculator" and isinstance(r.get("fit"), dict) and r["fit"].get("fits") is False and \
                (args.get("gpu") or args.get("gpu_memory_gb")):
            out.append({"name": "way_forward", "args": dict(args)})
        elif name == "solve_for" and r.get("solved") is False and args.get("unknown") != "best_gpu_by_cost" and \
                (args.get("gpu") or args.get("gpu_memory_gb")):
            out.append({"name": "way_forward", "args": {k: v for k, v in args.items() if k not in ("unknown", "max_gpus")}})
        elif name == "recommend_gpus" and not r.get("options") and r.get("status") != "needs_input" and _model(q):
            out.append({"name": "way_forward", "args": _vram_args(q) | _goal(q)})
        elif name == "speed_estimator":
            out += _speed_forward(q, args, r)
        elif name in ("cost_estimator", "training_time") and args.get("gpu") and _training(q):
            hours = r.get("runtime_hours", r.get("hours"))
            total = r.get("total_usd")
            goal: dict[str, Any] = {}
            if q.deadline_hours and hours is not None and hours > q.deadline_hours:
                goal["deadline_hours"] = q.deadline_hours  # past the deadline: more or faster GPUs
            if q.budget_usd_total and total is not None and total > q.budget_usd_total:
                goal["budget_usd"] = q.budget_usd_total  # over budget: cheaper GPUs, QLoRA, fewer epochs
            if goal:
                a = _vram_args(q) | {"gpu": args["gpu"]} | goal | _goal_data(q)
                out.append({"name": "way_forward", "args": a})
    return _unique_calls(out)[:2]


def _speed_forward(q: Query, args: dict[str, Any], r: dict[str, Any]) -> list[Call]:
    """Speed that does not fit, or misses the target: the levers at the batch it ran at (not a refused load)."""
    a = _vram_args(q) | {"gpu": args["gpu"], "batch": args.get("batch") or 1, "method": "inference"}
    if args.get("precision"):
        a["weight_precision"] = args["precision"]
    if (r.get("memory") or {}).get("fits") is False:
        return [{"name": "way_forward", "args": a}]
    per_user = r.get("decode_tokens_per_s")
    if q.min_tokens_per_s and per_user is not None and per_user < q.min_tokens_per_s:
        return [{"name": "way_forward", "args": a | {"min_tokens_per_s_per_user": q.min_tokens_per_s}}]
    return []


def _goal(q: Query) -> dict[str, Any]:
    """What 'works' means for a recommendation that found nothing: the user's target, deadline, budget."""
    g: dict[str, Any] = {}
    if q.min_tokens_per_s and not _training(q):
        g["min_tokens_per_s_per_user"] = q.min_tokens_per_s
    if _training(q) and (q.deadline_hours or q.budget_usd_total) and _goal_data(q).get("dataset_tokens"):
        g |= {"deadline_hours": q.deadline_hours, "budget_usd": q.budget_usd_total} | _goal_data(q)
    return {k: v for k, v in g.items() if v is not None}


_IMAGE_PRECISIONS = ("fp8", "q4_k_m", "nf4")  # 8-bit, GGUF 4-bit and bitsandbytes 4-bit, as practitioners run them


def _image_precisions(q: Query, done: Done) -> list[Call]:
    """An image pipeline that does not fit: its memory at each lower precision the image tool supports."""
    from tools.units import weight_format

    for name, args, r in done:
        if name == "vram_calculator" and isinstance(r.get("fit"), dict) and r["fit"].get("fits") is False:
            now = args.get("weight_precision")
            bits = weight_format(now).bits_per_param if now else 16.0
            return [{"name": "vram_calculator", "args": dict(args) | {"weight_precision": p}}
                    for p in _IMAGE_PRECISIONS if weight_format(p).bits_per_param < bits - 0.01]
    return []


def _goal_data(q: Query) -> dict[str, Any]:
    d = _data_args(q)
    if "examples" in d:
        d = {"dataset_tokens": d.pop("examples") * d.pop("tokens_per_example"), **d}
    return {k: v for k, v in d.items() if k in ("dataset_tokens", "epochs")}
