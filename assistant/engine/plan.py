"""From the typed Query to tool calls, one round at a time.

`plan(query, done)` returns the calls still needed given this turn's results so far ([] when the
answer can be composed). A second round runs only when a call needs a number from a first-round
result: the GPUs with enough memory for a computed need, or the way forward after a negative verdict.
Defaults applied here are the practitioner's (stated in the answer by compose).
"""

from __future__ import annotations

__all__ = ["DEFAULTS", "asks_model_for_speed", "plan", "relaxations"]

import re
from typing import Any

from assistant.engine.plan_args import (speed_args, DEFAULTS, MAX_SIDES, Call, Done, context_of, count_for, data_args, gpu_sides,
                                        hourly_only, is_generation_job, is_training, job_requests, model_args,
                                        model_sides, train_method, unique_calls, vram_args)
from assistant.engine.plan_forward import relaxations, second_round
from tools.load import TRAFFIC_FIELDS
from tools.recommend import MAX_HOURS_PER_MONTH
from tools.schemas import engine_memory_reserve
from assistant.engine.query import Query
from knowledge.catalog import is_image_pipeline

_OWN_TOPIC = re.compile(r"nvlink|pcie|interconnect|infiniband|multi-?node|egress|docker|\bssh\b|jupyter|checkpoint|"
                        r"preempt|interrupt|hbm|gddr|bandwidth|tensor cores?|fp8 support", re.I)


def _guide(q: Query) -> Call:
    topic = {"fit": "VRAM memory KV cache weights fit", "speed": "memory bandwidth tokens per second speed",
             "train_time": "fine-tuning hardware time", "prices": "price comparison spot on-demand",
             "cost": "billing granularity spot checkpoint cost", "recommend": "choose a card VRAM first then bandwidth",
             "compare": "memory bandwidth HBM GDDR VRAM"}.get(q.intent, "")
    if is_generation_job(q):
        topic = "batch generation throughput interruptible spot"
    own = q.intent in ("guide", "help") or "guide" in q.intents or _OWN_TOPIC.search(q.text)
    question = q.text if own else f"{q.text} {topic}"
    topics = {"topics": q.topics[:4]} if q.topics and (q.explain or q.observed) else {}
    return {"name": "search_guide", "args": {"question": question[:2000], "lang": q.answer_lang, "k": 2} | topics}


def plan(q: Query, done: Done | None = None) -> list[Call]:
    """Tool calls for this round; `done` = [(name, args, result)] of earlier rounds of this turn."""
    if done:
        return second_round(q, done)
    intents = set(q.intents)
    if q.gpu_unknown and not q.gpus and not q.has_model and intents & {"prices", "cost"}:
        return [{"name": "price_query", "args": {"gpu": g}} for g in q.gpu_unknown[:2]]
    if intents & {"help", "out_of_scope"} or not intents:
        return []
    if intents == {"guide"} or intents == {"guide", "compare"}:
        return [_guide(q)]
    if q.model_elsewhere_kind and not q.has_model:  # "GPT-4o on an H100?", "Whisper on a T4": not sized here, said so
        return (_price_calls(q) if q.gpus and intents & {"prices", "cost"} else []) + [_guide(q)]
    if q.solve_for == "max_params" and not q.has_model:
        return _largest_model_calls(q) + [_guide(q)]
    calls: list[Call] = []
    m = model_args(q)
    if m and q.gpus and (is_generation_job(q) or q.solve_for == "max_requests") and "recommend" not in intents:
        return _job_calls(q, m) + [_guide(q)]  # how long, how many GPUs, what it costs: one job, sized once
    image = bool(q.model) and is_image_pipeline(q.model)
    if image:
        return _image_calls(q, intents) + [_guide(q)]
    recommender = "recommend" in intents and bool(m) and q.solve_for != "min_gpu_memory" and not hourly_only(q) and \
        not (q.gpus and len(model_sides(q)) > 1) and \
        not (len(q.gpus) >= 2 and "compare" in intents)  # "Llama 8B vs Mistral 7B on an L4", "1x H100 or 2x L40S"
    if recommender:
        calls.append({"name": "recommend_gpus", "args": _recommend_args(q)})
    if ("recommend" in intents or q.solve_for == "min_gpu_memory" or hourly_only(q)) and not recommender and m:
        intents.add("fit")  # the memory needed, then the GPUs and offers that have it (second round)
    # the recommender already ranks by cost: the cheapest-GPU solver would only repeat it
    solved = _solve_calls(q) if m and not (recommender and q.solve_for == "cheapest_gpu") else []
    calls += solved
    # the solver's answer carries its memory: a fit at the default context or batch beside "the longest
    # context is 25,055 tokens" would be a second scenario in one answer
    solving = {c["args"]["unknown"] for c in solved} & {"min_gpu_count", "max_context", "max_batch"}
    if "fit" in intents and m and not (recommender and not q.has_gpu) and not solving:
        calls += _fit_calls(q)
    if "speed" in intents and q.gpus and not image and not ("max_batch" in solving and not q.concurrent_users) \
            and "min_gpu_count" not in solving:
        calls += _speed_calls(q)  # the most sequences that fit, the fewest GPUs: their speed there (second round)
    if "train_time" in intents and m and q.gpus and is_training(q) and "cost" not in intents:
        for side in gpu_sides(q):
            n = count_for(q, side.get("gpu"))
            calls.append({"name": "training_time", "args": m | data_args(q) | side | {"method": train_method(q)}
                          | ({"gpus": n} if n and n > 1 else {})})
    if "cost" in intents:
        calls += _cost_calls(q)
    weighed = len(q.gpus) >= 2 and "compare" in intents  # the named cards' own offers, side by side
    if "prices" in intents and (not ("recommend" in intents and m) or weighed) and not ("cost" in intents and calls):
        calls += _price_calls(q)
    if q.gpu_unknown and not q.gpus and not any(c["name"] == "price_query" for c in calls):
        calls += [{"name": "price_query", "args": {"gpu": g}} for g in q.gpu_unknown[:2]]
    calls.append(_guide(q))
    return unique_calls(calls)


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
    sides = gpu_sides(q)
    weighed = "compare" in intents and len(q.gpus) >= 2  # the named cards are the options: none to search for
    if not hourly_only(q) and not weighed and (intents & {"recommend"} or q.solve_for in ("cheapest_gpu", "fastest_gpu")
                                               or (not q.has_gpu and intents & {"speed", "cost"})):
        a: dict[str, Any] = {"model": q.model, "workload": "endpoint" if q.concurrent_users else "batch"} | \
            {k: v for k, v in shape.items() if k != "batch"}
        for k, v in (("images", q.images), ("deadline_hours", q.deadline_hours), ("concurrent_users", q.concurrent_users),
                     ("budget_usd", q.budget_usd_total), ("providers", list(q.providers) or None),
                     ("regions", list(q.regions) or None)):
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
    for g in q.gpus[:MAX_SIDES]:
        if intents & {"speed", "cost", "compare"}:
            calls.append({"name": "speed_estimator", "args": {"model": q.model, "gpu": g} | shape})
        if "cost" in intents and (q.images or q.concurrent_users or q.duration_hours or not weighed):
            a = {"model": q.model, "gpu": g} | {k: v for k, v in shape.items() if k != "batch"}
            a |= {"images": q.images} if q.images else {"serve": True} if q.concurrent_users or q.duration_hours else {}
            if q.providers:
                a["provider"] = q.providers[0]
            calls.append({"name": "cost_estimator", "args": a})
    if "prices" in intents and not calls or weighed:
        calls += _price_calls(q)  # two cards weighed: each side's offers, for images per dollar
    return calls


def _fit_calls(q: Query) -> list[Call]:
    base = vram_args(q)
    out = []
    for model in model_sides(q):
        for side in gpu_sides(q)[:MAX_SIDES if model == model_args(q) else 1]:
            out.append({"name": "vram_calculator", "args": base | model | side})
    # a setting given a second value ("4k vs 32k context", "rank 64 vs 8"): the first card with that value too
    for field, arg in (("context_tokens", "seq_len"), ("batch", "batch"), ("concurrent_users", "batch"),
                       ("lora_rank", "lora_rank"), ("gpu_count", "gpus")):
        if field in q.alternatives and out and (arg in out[0]["args"] or field in ("lora_rank", "gpu_count")):
            out.append({"name": "vram_calculator", "args": out[0]["args"] | {arg: int(q.alternatives[field])}})
    alt = q.setting_alternatives.get("precision")
    if alt and "compare" in q.intents and len(out) == 1 and "weight_precision" in out[0]["args"]:
        out.append({"name": "vram_calculator", "args": out[0]["args"] | {"weight_precision": alt}})  # "fp16 vs fp8"
    if base.get("method") == "full" and not q.training_precision and len(out) == 1:
        out.append({"name": "vram_calculator", "args": out[0]["args"] | {"training_precision": "bf16"}})
    return out


def _solve_calls(q: Query) -> list[Call]:
    """The unknown the user asks for, solved with the calculators (tools/solve.py)."""
    if q.solve_for in (None, "fastest_gpu", "min_gpu_memory"):
        return []  # the smallest GPU: the memory calculator, then the offers with that much memory (second round)
    base = vram_args(q)
    if q.solve_for == "cheapest_gpu" and hourly_only(q):
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
    for side in gpu_sides(q):
        args = base | side | {"unknown": q.solve_for}
        if q.solve_for == "max_context":
            args.pop("seq_len", None)
        if q.solve_for == "max_batch":
            args.pop("batch", None)
        if q.solve_for == "min_gpu_count":
            args.pop("gpus", None)
            if is_training(q):  # FSDP shards a fine-tune over many nodes; tensor parallelism stays within 64
                args["max_gpus"] = DEFAULTS["max_training_gpus"]
        reserve = engine_memory_reserve(q.engine)
        if reserve and not is_training(q):
            args["headroom_fraction"] = reserve  # served: solved within the memory the engine allocates
        out.append({"name": "solve_for", "args": args})
    return out


def _largest_model_calls(q: Query) -> list[Call]:
    """"Biggest model I can QLoRA on a 48 GB card?": the largest size that fits on each GPU named (or the
    memory given) at the question's method, precision and length; none named: asked back (compose)."""
    base = {k: v for k, v in vram_args(q).items() if k not in ("model", "params_b", "config")}
    return [{"name": "solve_for", "args": base | side | {"unknown": "max_params"}} for side in gpu_sides(q)
            if side.get("gpu") or side.get("gpu_memory_gb")]


def asks_model_for_speed(q: Query) -> bool:
    """A speed question about one GPU that names no model: the speed depends on the model far more than
    on the card, so the answer shows the example model and asks which model is meant (also when two
    engines or formats are weighed on that card: their gap depends on the model too)."""
    return ("speed" in q.intents and ("compare" not in q.intents or bool(q.setting_alternatives))
            and len(q.gpus) == 1 and not q.has_model
            and not (q.images or q.resolution or q.steps))


def _speed_calls(q: Query) -> list[Call]:
    base = speed_args(q)
    load = q.concurrent_users or q.batch
    batches = [1, load] if load and load > 1 else [1]
    models = model_sides(q) if model_args(q) else [{}]
    calls = [{"name": "speed_estimator", "args": base | m | {"gpu": g, "batch": b} |
              ({"gpus": q.gpu_counts[g]} if g in q.gpu_counts else {})} for m in models
             for g in q.gpus[:MAX_SIDES if not m or m == model_args(q) else 1] for b in batches]
    return calls + _setting_sides(q, calls)


def _setting_sides(q: Query, calls: list[Call]) -> list[Call]:
    """A precision or engine weighed against another ("fp16 vs fp8", "vLLM or TensorRT-LLM"): the first
    side's calls again with the other value, when the question compares one model on one card."""
    if "compare" not in q.intents or not calls or len({c["args"].get("gpu") for c in calls}) > 1 or q.other_models:
        return []
    arg = {"quant_format": "precision"}  # "awq vs gptq": the speed tool reads the format as its precision
    return [{"name": c["name"], "args": c["args"] | {arg.get(field, field): value}}
            for field, value in q.setting_alternatives.items() for c in calls]


def _cost_calls(q: Query) -> list[Call]:
    m = model_args(q)
    gpus = q.gpus[:MAX_SIDES] or q.gpu_unknown[:1]
    providers = q.providers[:MAX_SIDES] or [None]
    calls = []
    if not m or not (is_training(q) or q.method == "inference" or q.concurrent_users):
        # "how many hours does $300 buy?": the budget sets the hours; else the hours given, else a sample
        span = {"hours": q.duration_hours or DEFAULTS["billing_hours"]} if q.duration_hours or not q.budget_usd_total \
            else {"budget_usd": q.budget_usd_total}
        for g in gpus or ([DEFAULTS["billing_gpu"]] if q.billing else []):
            for p in providers:
                a = span | {"gpu": g, "provider": p, "gpus": count_for(q, g) if (count_for(q, g) or 0) > 1 else None,
                     "storage_gb": q.storage_gb, "egress_gb": q.egress_gb, "region": q.regions[0] if q.regions else None,
                     "price_usd_per_hour": _stated_price(q, g), "spot_price_usd_per_hour": _stated_price(q, g, spot=True),
                     "checkpoint_every_h": q.checkpoint_every_hours}
                calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
        return calls + _other_durations(q, calls)
    if not gpus:  # which GPU: the recommender, or (no run to cost) the cheapest hour of one that holds it
        return [] if hourly_only(q) else [{"name": "recommend_gpus", "args": _recommend_args(q)}]
    for g in gpus:
        for p in providers:
            a: dict[str, Any] = m | {"gpu": g, "provider": p}
            if (count_for(q, g) or 0) > 1:
                a["gpus"] = count_for(q, g)
            if is_training(q):
                a |= data_args(q) | {"method": train_method(q)}
                if q.budget_usd_total and q.dataset_tokens is None and q.examples is None:
                    a["budget_usd"] = q.budget_usd_total  # "how many tokens does $300 train?": what the budget buys
            else:
                a |= {"serve": True, "batch": q.concurrent_users or q.batch, "precision": q.precision,
                      "tokens_per_day": q.tokens_per_day, "prompt_tokens": q.prompt_tokens,
                      "output_tokens": q.output_tokens, "traffic": _traffic(q) or None,
                      "api_usd_per_million_tokens": q.api_usd_per_million_tokens}
                if q.duration_hours:
                    a["hours"] = q.duration_hours
            a |= {"storage_gb": q.storage_gb, "egress_gb": q.egress_gb, "price_usd_per_hour": _stated_price(q, g),
                  "spot_price_usd_per_hour": _stated_price(q, g, spot=True), "checkpoint_every_h": q.checkpoint_every_hours,
                  "region": q.regions[0] if q.regions else None, "engine": None if is_training(q) else q.engine}
            calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
    return calls + _other_durations(q, calls)


def _job_calls(q: Query, m: dict[str, Any]) -> list[Call]:
    """A generation job on each GPU named: its hours, the copies a deadline needs and the cost (one call each)."""
    calls = []
    for g in q.gpus[:MAX_SIDES]:
        a: dict[str, Any] = m | {"gpu": g, "requests": job_requests(q), "prompt_tokens": q.prompt_tokens,
                                 "output_tokens": q.output_tokens,  # else the tool's default, as job_requests counts
                                 "deadline_hours": q.deadline_hours, "precision": q.precision, "engine": q.engine,
                                 "gpus": count_for(q, g), "provider": q.providers[0] if q.providers else None,
                                 "region": q.regions[0] if q.regions else None, "price_usd_per_hour": _stated_price(q, g)}
        calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
    return calls


def _stated_price(q: Query, gpu: str | None, spot: bool = False) -> float | None:
    """The user's own hourly price for the configuration ("an H100 at $2.50/hr": per GPU, x the GPUs; `spot`:
    the spot price they quote) when one GPU is named: it replaces the catalog's, which the answer still shows
    beside it."""
    per_gpu = q.spot_price_usd_per_gpu_hour if spot else q.price_usd_per_gpu_hour
    own = next((p for k, p in q.gpu_prices.items() if gpu and (gpu == k or gpu.startswith(k + " "))), None)
    if not spot and own is not None:  # "an H100 at $2.49/hr vs a 4090 at $0.44/hr": each card its own price
        per_gpu = own  # (the card as written, or the variant its name resolved to: "H100" -> "H100 SXM")
    elif per_gpu is None or not gpu or len(q.gpus) > 1:
        return None
    return round(per_gpu * (count_for(q, gpu) or 1), 6)


def _other_durations(q: Query, calls: list[Call]) -> list[Call]:
    """"24/7 vs only weekdays 9 to 6": each cost again at the other running time, side by side."""
    alt = q.alternatives.get("duration_hours")
    return [{"name": c["name"], "args": c["args"] | {"hours": alt}} for c in calls
            if alt and "hours" in c["args"] and not c["args"].get("serve")]


def _price_calls(q: Query) -> list[Call]:
    if not q.gpus and not q.gpu_memory_gb and q.gpu_unknown:
        return [{"name": "price_query", "args": {"gpu": q.gpu_unknown[0]}}]
    out = []
    for g in q.gpus[:MAX_SIDES] or [None]:
        base: dict[str, Any] = {"limit": 5}
        if g:
            base["gpu"] = g
        if q.gpu_memory_gb and not g:  # a named card's stated memory is the card's own
            base["min_vram_gb"] = q.gpu_memory_gb
        if count_for(q, g):
            base["gpus"] = count_for(q, g)
        if q.providers:
            base["provider"] = ",".join(q.providers)
        if q.regions:
            base["region"] = q.regions[0]
        if q.budget_usd_per_hour is not None:  # "$0 an hour" is a cap no offer meets
            base["max_price_usd_per_gpu_hour"] = q.budget_usd_per_hour
        if q.spot is True and not q.both_pricing:
            out.append({"name": "price_query", "args": base | {"pricing": "spot"}})
        elif q.spot is False and not q.both_pricing:
            out.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
        else:
            out.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
            out.append({"name": "price_query", "args": base | {"pricing": "spot", "limit": 3}})
    return out


# A day's traffic is sized for its peak, taken as the 24-hour average x 24 / 8 (most of a day's chats arrive in
# about eight busy hours); the recommender's load assumption states the factor.
DAILY_PEAK_FACTOR = 3.0


def _load(q: Query) -> dict[str, Any]:
    """Users said to be at once are sequences decoded at once; users alone ("for 40 developers") are users
    online, each sending a request a think time after the last reply: the recommender turns them into
    concurrent generations by Little's law (tools.load) and says so."""
    if q.concurrent_users and not q.users_at_once and q.concurrent_users > 1:
        return {"users_online": q.concurrent_users}
    return {"concurrent_users": q.concurrent_users or q.batch}


def _traffic(q: Query) -> dict[str, Any]:
    """The request rates the question states (tools.load.TrafficRequest fields), with the daily peak factor;
    {} when users at once are given instead (they are the batch)."""
    rate = {f: getattr(q, f) for f in TRAFFIC_FIELDS if f.startswith("requests_per_") and getattr(q, f)}
    if q.concurrent_users or not rate:
        return {}
    if "requests_per_day" in rate:  # a day's requests mostly arrive in ~8 busy hours: 24 / 8 = 3x the average
        rate["peak_factor"] = DAILY_PEAK_FACTOR
    return rate


def _recommend_args(q: Query) -> dict[str, Any]:
    a: dict[str, Any] = dict(model_args(q))
    if is_training(q):
        a |= {"workload": "finetune", "method": train_method(q)} | data_args(q)
        if q.budget_usd_total:
            a["budget_usd"] = q.budget_usd_total
    else:
        # no load given: the recommender prices at the throughput-optimal batch and at batch 1, both labelled
        rate = _traffic(q)
        a |= {"workload": "serve", "context_tokens": context_of(q)} | \
            (rate | {k: v for k, v in (("prompt_tokens", q.prompt_tokens), ("output_tokens", q.output_tokens)) if v}
             if rate else _load(q))
        if q.precision:
            a["precisions"] = [q.precision]
        if q.min_tokens_per_s:
            a["min_tokens_per_s_per_user"] = q.min_tokens_per_s
        if q.budget_usd_total and q.duration_hours:  # "$500 a month, always on": at most 500 / 730 an hour
            a["max_usd_per_hour"] = round(q.budget_usd_total / q.duration_hours, 6)
        if q.duration_hours and q.duration_hours <= MAX_HOURS_PER_MONTH:
            a["hours_per_month"] = q.duration_hours  # "only 9 to 6 on weekdays": billed for those hours, not 730
    if q.budget_usd_per_hour is not None:
        a["max_usd_per_hour"] = min(q.budget_usd_per_hour, a.get("max_usd_per_hour", q.budget_usd_per_hour))
    if q.production and not is_training(q):
        a["production"] = True  # no marketplaces of hosts, datacenter cards (tools.recommend says what it ruled out)
    if q.solve_for in ("fastest_gpu", "largest_gpu"):
        a["objective"] = "fastest" if q.solve_for == "fastest_gpu" else "largest"
    if q.deadline_hours:
        a["deadline_hours"] = q.deadline_hours
    if q.spot:
        a["spot_allowed"] = True
    if q.providers:
        a["providers"] = list(q.providers)
    if q.regions:
        a["regions"] = list(q.regions)
    if q.engine and not is_training(q):
        a["engine"] = q.engine
    return {k: v for k, v in a.items() if v is not None}


