"""From an understood question to tool calls, one round at a time.

`next_calls(parsed, done)` returns the tool calls still needed given the results so far, or []
when the answer can be composed. A second round is used only when a call needs a number from a
first-round result (e.g. the smallest GPU: memory needed -> GPUs with that much memory).
"""

from __future__ import annotations

__all__ = ["next_calls", "DEFAULTS"]

import re
from typing import Any

from assistant.nlu import Parsed

# Stated defaults (the composer lists the ones it used as assumptions).
DEFAULTS = {
    "context": 4096,
    "finetune_method": "lora",
    "tokens_per_example": 512,
    "example_model": "llama-3.1-8b",
    "billing_gpu": "A100",
    "billing_minutes": 20,
}

_TOPICS = {
    "fit": "VRAM memory KV cache weights fit",
    "speed": "memory bandwidth tokens per second speed HBM",
    "train_time": "fine-tuning hardware time",
    "prices": "price comparison table spot on-demand",
    "cost": "billing granularity spot checkpoint cost",
    "recommend": "choose a card VRAM first then bandwidth",
    "compare": "memory bandwidth HBM GDDR VRAM",
}


def _model(p: Parsed) -> dict[str, Any]:
    s = p.slots
    if s.model:
        return {"model": s.model}
    if s.model_unknown:
        return {"model": s.model_unknown}
    if s.params_b is not None:
        return {"params_b": s.params_b}
    return {}


def _train_method(p: Parsed) -> str:
    m = p.slots.method
    if m in ("full", "lora", "qlora"):
        return m
    if p.slots.precision in ("int4", "nf4"):
        return "qlora"
    return DEFAULTS["finetune_method"]


_METHOD_TOPICS = {"qlora": "LoRA QLoRA 4-bit adapters single card", "lora": "LoRA QLoRA adapters single card",
                  "full": "full fine-tuning optimizer state gradients multi-GPU", "finetune": "fine-tuning VRAM method"}
_METHOD_TOPICS_UR = {"qlora": "QLoRA LoRA ایڈاپٹرز", "lora": "LoRA ایڈاپٹرز", "full": "مکمل فائن ٹیوننگ آپٹیمائزر",
                     "finetune": "فائن ٹیوننگ میموری"}


# Words that name the user's own topic: the guide search then uses the question as asked.
_OWN_TOPIC = re.compile(r"nvlink|pcie|interconnect|infiniband|multi-?node|egress|docker|\bssh\b|jupyter|"
                        r"checkpoint|preempt|interrupt|hbm|gddr|bandwidth|tensor cores?|fp8 support", re.I)


def _guide_call(p: Parsed) -> dict[str, Any]:
    if p.intent in ("guide", "help") or _OWN_TOPIC.search(p.text):
        q = p.text
    elif p.lang == "ur":
        q = f"{p.text} {_METHOD_TOPICS_UR.get(p.slots.method or '', '')}"
    else:
        topic = _METHOD_TOPICS.get(p.slots.method or "") if p.intent == "fit" else None
        q = f"{p.text} {topic or _TOPICS.get(p.intent, '')}"
    return {"name": "search_guide", "args": {"question": q[:2000], "lang": p.lang, "k": 2}}


def next_calls(p: Parsed, done: list[tuple[str, dict, dict]]) -> list[dict[str, Any]]:
    """Tool calls for this round. `done` = [(name, args, result)] of earlier rounds of this turn."""
    if done:
        return _second_round(p, done)
    s = p.slots
    m = _model(p)
    calls: list[dict[str, Any]] = []
    intent = p.intent
    if intent in ("help", "out_of_scope"):
        return []
    if intent == "guide":
        return [_guide_call(p)]
    if intent == "fit":
        if not m:
            return []  # the composer asks for the model
        training = s.method in ("full", "lora", "qlora", "finetune")
        base: dict[str, Any] = dict(m)
        if training:
            base["method"] = _train_method(p)
            if s.seq_len is not None or s.context is not None:
                base["seq_len"] = s.seq_len if s.seq_len is not None else s.context
        else:
            base["method"] = "inference"
            base["seq_len"] = s.context if s.context is not None else DEFAULTS["context"]
        for k, v in (("weight_precision", s.precision if base["method"] != "qlora" or s.precision in ("nf4", "int4") else None),
                     ("batch", s.batch), ("optimizer", s.optimizer), ("training_precision", s.training_precision)):
            if v is not None:
                base[k] = v if k != "weight_precision" or base["method"] != "qlora" else None
        base = {k: v for k, v in base.items() if v is not None}
        if s.gpu_count and s.gpu_count > 1:
            base["gpus"] = s.gpu_count
        if s.gpus:
            base["gpu"] = s.gpus[0]
        elif s.gpu_memory_gb:
            base["gpu_memory_gb"] = s.gpu_memory_gb
        calls.append({"name": "vram_calculator", "args": base})
        if base["method"] == "full" and not s.training_precision:
            calls.append({"name": "vram_calculator", "args": base | {"training_precision": "bf16"}})
        calls.append(_guide_call(p))
        return calls
    if intent in ("speed", "compare"):
        gpus = s.gpus[:3]
        if not gpus:
            return []  # the composer asks which GPU
        mm = m or {"model": DEFAULTS["example_model"]}
        base = dict(mm)
        for k, v in (("precision", s.precision), ("engine", s.engine)):
            if v:
                base[k] = v
        if s.gpu_count and s.gpu_count > 1:
            base["gpus"] = s.gpu_count
        if s.context:
            base["prompt_tokens"] = max(1, s.context * 3 // 4)
            base["output_tokens"] = max(1, s.context - base["prompt_tokens"])
        if s.prompt_tokens:
            base["prompt_tokens"] = s.prompt_tokens
        batches = [1, s.batch] if s.batch and s.batch > 1 else [s.batch or 1]
        for g in gpus:
            for b in batches:
                calls.append({"name": "speed_estimator", "args": base | {"gpu": g, "batch": b}})
        if intent == "compare":
            for g in gpus:
                calls.append({"name": "price_query", "args": {"gpu": g, "pricing": "on-demand", "limit": 1}})
        calls.append(_guide_call(p))
        return calls
    if intent == "train_time":
        if not m or not s.gpus:
            return []
        for g in s.gpus[:3]:
            calls.append({"name": "training_time", "args": m | _data_args(p) | {"gpu": g, "method": _train_method(p)}
                          | ({"gpus": s.gpu_count} if s.gpu_count and s.gpu_count > 1 else {})})
        calls.append(_guide_call(p))
        return calls
    if intent == "prices":
        gpu = s.gpus[0] if s.gpus else None
        if not gpu and not s.gpu_memory_gb and s.gpu_unknown:
            return [{"name": "price_query", "args": {"gpu": s.gpu_unknown[0]}}]  # an error that lists close names
        base = {"limit": 5}
        if gpu:
            base["gpu"] = gpu
        if s.gpu_memory_gb:
            base["min_vram_gb"] = s.gpu_memory_gb
        if s.gpu_count:
            base["gpus"] = s.gpu_count
        for k, v in (("provider", s.provider), ("region", s.region)):
            if v:
                base[k] = v
        if s.spot is True and not s.both_pricing:
            calls.append({"name": "price_query", "args": base | {"pricing": "spot"}})
        elif s.spot is False and not s.both_pricing:
            calls.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
        else:
            calls.append({"name": "price_query", "args": base | {"pricing": "on-demand"}})
            calls.append({"name": "price_query", "args": base | {"pricing": "spot", "limit": 3}})
        calls.append(_guide_call(p))
        return calls
    if intent == "cost":
        gpus = s.gpus[:3] or ([s.gpu_unknown[0]] if s.gpu_unknown else [])
        if s.billing and not m:
            hours = s.duration_h or DEFAULTS["billing_minutes"] / 60
            for g in gpus or [DEFAULTS["billing_gpu"]]:
                a = {"gpu": g, "hours": hours}
                if s.provider:
                    a["provider"] = s.provider
                calls.append({"name": "cost_estimator", "args": a})
            calls.append(_guide_call(p))
            return calls
        if not m:
            return []
        if not gpus:
            return [{"name": "recommend_gpus", "args": _recommend_args(p)}, _guide_call(p)]
        serve = s.method == "inference"
        for g in gpus:
            a: dict[str, Any] = m | {"gpu": g}
            if s.provider:
                a["provider"] = s.provider
            if s.gpu_count and s.gpu_count > 1:
                a["gpus"] = s.gpu_count
            if serve:
                a |= {"serve": True, "batch": s.batch, "precision": s.precision}
            elif s.duration_h and not (s.examples or s.dataset_tokens):
                a["hours"] = s.duration_h
            else:
                a |= _data_args(p) | {"method": _train_method(p)}
            if s.spot:
                a["interruptions_per_hour"] = None
            calls.append({"name": "cost_estimator", "args": {k: v for k, v in a.items() if v is not None}})
        calls.append(_guide_call(p))
        return calls
    if intent == "recommend":
        if not m:
            return []
        return [{"name": "recommend_gpus", "args": _recommend_args(p)}, _guide_call(p)]
    return []


def _data_args(p: Parsed) -> dict[str, Any]:
    s = p.slots
    out: dict[str, Any] = {}
    if s.dataset_tokens:
        out["dataset_tokens"] = s.dataset_tokens
    elif s.examples:
        out["examples"] = s.examples
        out["tokens_per_example"] = s.tokens_per_example or DEFAULTS["tokens_per_example"]
    if s.epochs:
        out["epochs"] = s.epochs
    return out


def _recommend_args(p: Parsed) -> dict[str, Any]:
    s = p.slots
    a: dict[str, Any] = _model(p)
    training = s.method in ("full", "lora", "qlora", "finetune") or bool(s.examples or s.dataset_tokens)
    if training:
        a |= {"workload": "finetune", "method": _train_method(p)} | _data_args(p)
        if s.budget_usd:
            a["budget_usd"] = s.budget_usd
    else:
        a |= {"workload": "serve", "context_tokens": s.context or DEFAULTS["context"],
              "concurrent_users": s.batch or 1}
        if s.precision:
            a["precisions"] = [s.precision]
        if s.min_tokens_per_s:
            a["min_tokens_per_s_per_user"] = s.min_tokens_per_s
    if s.spot:
        a["spot_allowed"] = True
    if s.provider:
        a["providers"] = [s.provider]
    return a


def _second_round(p: Parsed, done: list[tuple[str, dict, dict]]) -> list[dict[str, Any]]:
    names = [d[0] for d in done]
    if p.intent == "fit" and "price_query" not in names and not p.slots.gpus and not p.slots.gpu_memory_gb:
        v = next((r for n, _, r in done if n == "vram_calculator" and "total_gb" in r), None)
        if v is not None and not v.get("model", {}).get("kind") == "image-generation" or v is not None:
            # which real GPUs have that much memory per GPU (vendor GiB -> GB)
            return [{"name": "price_query", "args": {"min_vram_gb": round(v["total_gb"], 2), "gpus": 1,
                                                     "pricing": "on-demand", "limit": 3}}]
    return []
