"""The tool steps of an answer in words, in the answer's language: "Memory for Llama 3.1 8B, QLoRA,
2,048 tokens: needs 11.4 GB per GPU". No tool names, argument names or passage ids reach the reader.

`step_record(call)` keeps what a step line needs as plain JSON (the tool, the few inputs it names, the
numbers it found); `steps_html(lang, steps)` renders the folded "How this was worked out" list. The
record travels with the answer (assistant/frontends/web/chat.py), so a reload shows the same words.
"""

from __future__ import annotations

__all__ = ["STEP_TEXT", "live_steps_html", "step_record", "step_title", "steps_html"]

import html
import re
from functools import lru_cache
from typing import Any, Mapping

from assistant.engine.render.catalog import quantity, term
from assistant.frontends.web import ui_data
from assistant.frontends.web.render import text_html
from assistant.service import api

# Per language: the heading, each tool's step title and what it found. {model} {gpu} {method} {tokens}
# come from the call's inputs (display names); the result templates from step_record's numbers.
STEP_TEXT: dict[str, dict[str, str]] = {
    "en": {"head": "How this was worked out", "working": "Working it out…", "any_gpu": "any GPU",
           "a_model": "the model", "the_gpu": "the GPU", "error": "could not be worked out",
           "vram_calculator": "Memory for {model}{method}{tokens}", "speed_estimator": "Speed of {model} on {gpu}",
           "training_time": "Training time for {model} on {gpu}", "price_query": "Prices for {gpu}",
           "cost_estimator": "Cost of {model} on {gpu}", "recommend_gpus": "GPUs for {model}",
           "search_guide": "The guide's passages on the question", "other": "A further calculation",
           "r.vram": "needs {total} per GPU", "r.vram_fit": "needs {total} per GPU; fits on {gpu} ({cap})",
           "r.vram_nofit": "needs {total} per GPU; does not fit on {gpu} ({cap})",
           "r.speed": "{tps} per sequence", "r.train": "{hours}", "r.prices": "{n} offers; cheapest {price}",
           "r.prices_none": "no offer matches", "r.cost": "{cost}", "r.recommend": "{n} options; first {gpu}",
           "r.recommend_none": "nothing fits", "r.guide": "{n} passages"},
    "ur": {"head": "یہ کیسے نکالا گیا", "working": "حساب ہو رہا ہے…", "any_gpu": "کوئی بھی GPU",
           "a_model": "ماڈل", "the_gpu": "GPU", "error": "حساب نہیں ہو سکا",
           "vram_calculator": "{model} کی میموری{method}{tokens}", "speed_estimator": "{gpu} پر {model} کی رفتار",
           "training_time": "{gpu} پر {model} کی ٹریننگ کا وقت", "price_query": "{gpu} کی قیمتیں",
           "cost_estimator": "{gpu} پر {model} کی لاگت", "recommend_gpus": "{model} کے لیے GPUs",
           "search_guide": "سوال پر گائیڈ کے حصے", "other": "ایک اور حساب",
           "r.vram": "فی GPU {total} درکار", "r.vram_fit": "فی GPU {total} درکار؛ {gpu} ({cap}) پر سما جاتا ہے",
           "r.vram_nofit": "فی GPU {total} درکار؛ {gpu} ({cap}) پر نہیں سماتا",
           "r.speed": "فی سلسلہ {tps}", "r.train": "{hours}", "r.prices": "{n} پیشکشیں؛ سب سے سستی {price}",
           "r.prices_none": "کوئی پیشکش نہیں ملی", "r.cost": "{cost}", "r.recommend": "{n} اختیارات؛ پہلا {gpu}",
           "r.recommend_none": "کچھ نہیں سماتا", "r.guide": "{n} حصے"},
}
_METHODS = {"inference", "lora", "qlora", "full"}


@lru_cache(maxsize=1)
def _model_names() -> dict[str, str]:
    return {m["id"]: m["name"] for m in api.list_models()}


def _model(args: Mapping[str, Any]) -> str | None:
    m = args.get("model")
    if m:
        return _model_names().get(str(m), str(m))
    if isinstance(args.get("params_b"), (int, float)):
        return f"{args['params_b']:g}B"
    return None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _found(name: str, r: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers a step line says, by tool (typed fields of its result)."""
    if name == "vram_calculator":
        fit = r.get("fit") if isinstance(r.get("fit"), Mapping) else {}
        return {"total_gb": _num(r.get("total_gb")), "fits": fit.get("fits"), "gpu": fit.get("gpu"),
                "gpu_gb": _num(fit.get("gpu_memory_gb"))}
    if name == "speed_estimator":
        return {"tps": _num(r.get("decode_tokens_per_s"))}
    if name == "training_time":
        return {"hours": _num(r.get("hours"))}
    if name == "price_query":
        offers = [o for o in r.get("offers") or [] if isinstance(o, Mapping)]
        first = offers[0] if offers else {}
        return {"n": ui_data.offer_rows(offers),  # as many as the table shows
                "price": _num(first.get("price_usd_per_gpu_hour") or first.get("spot_price_usd_per_gpu_hour"))}
    if name == "cost_estimator":
        s = r.get("serving") if isinstance(r.get("serving"), Mapping) else {}
        return {"mtok": _num(s.get("usd_per_million_tokens")), "cost": _num(r.get("on_demand_cost_usd"))}
    if name == "recommend_gpus":
        opts = r.get("options") or []
        return {"n": len(opts), "gpu": (opts[0].get("gpu") if opts else None)}
    if name == "search_guide":
        return {"n": len(r.get("passages") or [])}
    return {}


def step_record(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call as the step line needs it: {"tool", "args" (the named inputs), "found", "error"}."""
    name, args = str(call.get("name") or ""), call.get("args") or {}
    keep = {k: args[k] for k in ("model", "params_b", "gpu", "method", "seq_len", "min_vram_gb")
            if isinstance(args.get(k), (str, int, float)) and not isinstance(args.get(k), bool)}
    r = call.get("result")
    err = isinstance(r, Mapping) and "error" in r
    return {"tool": name, "args": keep, "found": _found(name, r) if isinstance(r, Mapping) and not err else {},
            "error": bool(err)}


def step_title(lang: str, step: Mapping[str, Any]) -> str:
    t = STEP_TEXT.get(lang, STEP_TEXT["en"])
    args = step.get("args") or {}
    method = args.get("method")
    gpu = args.get("gpu") or (quantity(lang, args["min_vram_gb"], "gb") + "+" if args.get("min_vram_gb") else t["any_gpu"])
    sep = "، " if lang == "ur" else ", "
    fields = {"model": _model(args) or t["a_model"], "gpu": gpu if args.get("gpu") or args.get("min_vram_gb") else
              (t["the_gpu"] if step.get("tool") != "price_query" else t["any_gpu"]),
              "method": sep + term(lang, method) if method in _METHODS else "",
              "tokens": sep + quantity(lang, args["seq_len"], "tokens") if _num(args.get("seq_len")) else ""}
    return t.get(str(step.get("tool")), t["other"]).format(**fields)


def _result(lang: str, step: Mapping[str, Any]) -> str:
    t, f, tool = STEP_TEXT.get(lang, STEP_TEXT["en"]), step.get("found") or {}, step.get("tool")
    if step.get("error"):
        return t["error"]
    if tool == "vram_calculator" and f.get("total_gb") is not None:
        key = "r.vram" if f.get("fits") is None or not f.get("gpu") else ("r.vram_fit" if f["fits"] else "r.vram_nofit")
        return _no_echo(t[key].format(total=quantity(lang, f["total_gb"], "gb"), gpu=f.get("gpu") or "",
                                      cap=_gib(lang, f.get("gpu_gb"))))
    if tool == "speed_estimator" and f.get("tps") is not None:
        return t["r.speed"].format(tps=quantity(lang, f["tps"], "tok_s"))
    if tool == "training_time" and f.get("hours") is not None:
        return t["r.train"].format(hours=quantity(lang, f["hours"], "h"))
    if tool == "price_query":
        return t["r.prices"].format(n=f.get("n", 0), price=quantity(lang, f["price"], "usd_gpu_h")) \
            if f.get("n") and f.get("price") is not None else t["r.prices_none"]
    if tool == "cost_estimator" and (f.get("mtok") is not None or f.get("cost") is not None):
        return t["r.cost"].format(cost=quantity(lang, f["mtok"], "usd_mtok") if f.get("mtok") is not None
                                  else quantity(lang, f["cost"], "usd"))
    if tool == "recommend_gpus":
        return t["r.recommend"].format(n=f.get("n"), gpu=f.get("gpu")) if f.get("n") else t["r.recommend_none"]
    if tool == "search_guide":
        return t["r.guide"].format(n=f.get("n", 0))
    return ""


def _gib(lang: str, gb: float | None) -> str:
    """A card's memory as its maker states it: 25.77 GB (10^9 bytes) is a "24 GiB" card."""
    return quantity(lang, round(gb / 1.073741824, 1), "gib") if gb else ""


def _no_echo(text: str) -> str:
    """ "a 24 GB GPU (24 GiB)" says the size once: the bracket goes when the name already holds it."""
    return re.sub(r"(\d+(?:\.\d+)?) GB ([^()]*)\((\1)[ \u00a0]GiB\)", r"\1 GB \2", text).replace(" ;", ";").rstrip()


def _line(lang: str, step: Mapping[str, Any]) -> str:
    rtl, res = lang == "ur", _result(lang, step)
    return text_html(step_title(lang, step) + (": " + res if res else ""), rtl)


def steps_html(lang: str, steps: list[Mapping[str, Any]]) -> str:
    """The steps folded under one summary, in the answer's language ("" without steps)."""
    if not steps:
        return ""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    items = "".join(f"<li{dir_}>{_line(lang, s)}</li>" for s in steps)
    head = html.escape(STEP_TEXT.get(lang, STEP_TEXT["en"])["head"])
    return f'<details class="ga-more ga-steps"{dir_}><summary>{head}</summary><ol>{items}</ol></details>'


def live_steps_html(lang: str, steps: list[Mapping[str, Any]], done: list[bool]) -> str:
    """While the tools run: the steps so far, each ticked when done (the message the answer replaces)."""
    dir_ = ' dir="rtl"' if lang == "ur" else ""
    items = "".join(f'<li{dir_}>{"✓" if ok else "…"} {text_html(step_title(lang, s), lang == "ur")}</li>'
                    for s, ok in zip(steps, done))
    head = html.escape(STEP_TEXT.get(lang, STEP_TEXT["en"])["working"])
    return f'<div class="ga-live"{dir_}><div class="ga-sub">{head}</div><ul>{items}</ul></div>'

