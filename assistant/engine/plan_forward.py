"""The second round of tool calls: what needs a number from the first round's results (the way forward
after a negative verdict, the offers with enough memory for a computed need, relaxed price filters,
the replicas of a generation job)."""

from __future__ import annotations

__all__ = ["relaxations", "second_round"]

from typing import Any

from assistant.engine.plan_args import (speed_args, Call, Done, data_args, hourly_only, is_training, model_args, unique_calls,
                                        vram_args)
from assistant.engine.plan_jobs import job_replicas_calls
from assistant.engine.query import Query
from knowledge.catalog import is_image_pipeline

def second_round(q: Query, done: Done) -> list[Call]:
    if q.explain:
        return []  # an explanation with its worked number: no ways forward, no offers to rent
    names = [d[0] for d in done]
    lower = _lower_precisions(q, done)
    if lower:
        return lower
    if "way_forward" not in names and not _image_levers_done(q, done):
        forward = _way_forward(q, done)
        if forward:
            return forward
    relaxed = _relaxed_prices(done) or _cost_elsewhere(done) or job_replicas_calls(q, done) or \
        _volume_on_pick(q, done) or \
        _speed_at_solved_batch(q, done) or _solved_with_fp8_kv(q, done)
    if relaxed:
        return relaxed
    if ("fit" in q.intents or hourly_only(q)) and "price_query" not in names and "recommend_gpus" not in names \
            and not q.has_gpu:
        v = next((r for n, _, r in done if n == "vram_calculator" and "total_gb" in r), None)
        if v is not None:
            a = {"min_vram_gb": round(v["total_gb"], 2), "gpus": 1, "pricing": "on-demand", "limit": 3,
                 "provider": ",".join(q.providers) or None, "region": q.regions[0] if q.regions else None}
            return [{"name": "price_query", "args": {k: x for k, x in a.items() if x is not None}}]
    return []


# No precision stated and nothing fits at 16-bit: what practitioners deploy next (FP8 on cards with FP8
# tensor cores, else weight-only; then 4-bit AWQ/GPTQ), tried by the recommender in this order.
LOWER_PRECISIONS = ["fp8", "int4"]


def _lower_precisions(q: Query, done: Done) -> list[Call]:
    """"How would you serve Llama 3.1 405B?": nothing fits at bf16 on up to 8 GPUs, so the recommendation is
    asked again at FP8, then 4-bit, before any lever, and the answer says the precision was lowered."""
    recs = [(a, r) for n, a, r in done if n == "recommend_gpus" and isinstance(r, dict)]
    if q.precision or not recs or any(a.get("precisions") for a, _ in recs) or is_training(q):
        return []
    a, r = recs[0]
    if r.get("options") or r.get("over_budget") or r.get("status") == "needs_input" or \
            a.get("workload") not in (None, "serve"):
        return []
    return [{"name": "recommend_gpus", "args": a | {"precisions": LOWER_PRECISIONS}}]


def _speed_at_solved_batch(q: Query, done: Done) -> list[Call]:
    """"How many users can one H100 serve at 20 tok/s each?": the speed of the most sequences that fit, at
    that batch (a per-user target is met or missed there, not at batch 1); "how many H100s for 16 users?": the
    speed on the fewest GPUs that hold them, at that load."""
    if "speed" not in q.intents or any(n == "speed_estimator" for n, _, _ in done):
        return []
    out = []
    for n, a, r in done:
        if n != "solve_for" or not a.get("gpu") or not isinstance(r, dict) or not (r.get("solved") and r.get("value")):
            continue
        if r.get("unknown") == "max_batch" and not q.concurrent_users:
            out.append({"name": "speed_estimator", "args": speed_args(q) | {"gpu": a["gpu"], "batch": int(r["value"])}})
        elif r.get("unknown") == "min_gpu_count" and not is_training(q):
            out.append({"name": "speed_estimator", "args": speed_args(q) | {
                "gpu": a["gpu"], "gpus": int(r["value"]), "batch": q.concurrent_users or q.batch or 1}})
    return out


def _solved_with_fp8_kv(q: Query, done: Done) -> list[Call]:
    """The longest context or the most sequences again with an FP8 KV cache, when the KV cache is the
    limit and the question did not set its precision: the first lever a practitioner pulls."""
    solves = [(a, r) for n, a, r in done if n == "solve_for" and isinstance(r, dict)
              and r.get("unknown") in ("max_context", "max_batch")]
    if q.kv_precision or any(a.get("kv_precision") for a, _ in solves):
        return []
    return [{"name": "solve_for", "args": a | {"kv_precision": "fp8"}} for a, r in solves
            if r.get("solved") and r.get("limited_by") == "kv_cache"]


def _volume_on_pick(q: Query, done: Done) -> list[Call]:
    """"30M tokens a month, which GPU and what bill": the volume costed on the recommender's first pick."""
    if not q.tokens_per_day or any(n == "cost_estimator" for n, _, _ in done):
        return []
    pick = next((r["options"][0] for n, _, r in done if n == "recommend_gpus" and isinstance(r, dict)
                 and r.get("options")), None)
    if not pick or not pick.get("gpu_id"):
        return []
    a = model_args(q) | {"gpu": pick["gpu_id"], "gpus": pick.get("gpu_count") or 1, "serve": True,
                         "precision": pick.get("precision"), "tokens_per_day": q.tokens_per_day,
                         "provider": (pick.get("offer") or {}).get("provider")}
    return [{"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}}]


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


def _cost_elsewhere(done: Done) -> list[Call]:
    """A cost at a provider whose price data lacks the GPU, and no cost of that GPU elsewhere this turn: the
    same cost without the provider (the cheapest offer in the data), beside the provider's own answer."""
    failed = [a for n, a, r in done if n == "cost_estimator" and a.get("provider") and "error" in r]
    costed = {a.get("gpu") for n, a, r in done if n == "cost_estimator" and "error" not in r}
    asked = {repr(sorted(a.items())) for n, a, _ in done if n == "cost_estimator"}
    calls = [{"name": "cost_estimator", "args": {k: v for k, v in a.items() if k != "provider"}}
             for a in failed if a.get("gpu") not in costed]
    return [c for c in unique_calls(calls) if repr(sorted(c["args"].items())) not in asked]


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
        elif name == "recommend_gpus" and not r.get("options") and r.get("status") != "needs_input" and model_args(q) \
                and not any(x.get("options") or x.get("over_budget") for n, _, x in done if n == "recommend_gpus"):
            out.append({"name": "way_forward", "args": vram_args(q) | _goal(q)})
        elif name == "speed_estimator":
            out += _speed_forward(q, args, r)
        elif name in ("cost_estimator", "training_time") and args.get("gpu") and is_training(q):
            hours = r.get("runtime_hours", r.get("hours"))
            total = r.get("total_usd")
            goal: dict[str, Any] = {}
            if q.deadline_hours and hours is not None and hours > q.deadline_hours:
                goal["deadline_hours"] = q.deadline_hours  # past the deadline: more or faster GPUs
            if q.budget_usd_total and total is not None and total > q.budget_usd_total:
                goal["budget_usd"] = q.budget_usd_total  # over budget: cheaper GPUs, QLoRA, fewer epochs
            if goal:
                a = vram_args(q) | {"gpu": args["gpu"]} | goal | _goal_data(q)
                out.append({"name": "way_forward", "args": a})
    return unique_calls(out)[:2]


def _speed_forward(q: Query, args: dict[str, Any], r: dict[str, Any]) -> list[Call]:
    """Speed that does not fit, or misses the target: the levers at the batch it ran at (not a refused load)."""
    a = vram_args(q) | {"gpu": args["gpu"], "batch": args.get("batch") or 1, "method": "inference"}
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
    if q.min_tokens_per_s and not is_training(q):
        g["min_tokens_per_s_per_user"] = q.min_tokens_per_s
    if is_training(q) and (q.deadline_hours or q.budget_usd_total) and _goal_data(q).get("dataset_tokens"):
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
    d = data_args(q)
    if "examples" in d:
        d = {"dataset_tokens": d.pop("examples") * d.pop("tokens_per_example"), **d}
    return {k: v for k, v in d.items() if k in ("dataset_tokens", "epochs")}
