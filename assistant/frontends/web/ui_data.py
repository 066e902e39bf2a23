"""Shape tool results into what a screen shows: short summaries, chart frames, tables.

Pure functions over the JSON-like dicts the tools return (the `result` of a ToolCall, or
`to_json_dict()` / `model_dump()` of an api result): no Gradio, no I/O. The web app imports them.

Every chart frame has the same columns, so one BarPlot can draw any of them:
`item` (a bar), `value` (its height) and `part` (the stack segment / colour).
"""

from __future__ import annotations

__all__ = ["BadInput", "CHART_COLUMNS", "CHART_TOOLS", "PART_LABELS", "Visual", "check_question", "check_thread_id",
           "citations_markdown", "cost_visual", "is_rtl_text", "memory_frame", "memory_visual", "offers_frame",
           "offer_rows", "prices_visual", "recommend_frame", "recommend_visual", "speed_frame", "speed_visual",
           "summarize_result", "training_visual", "visual_for_calls"]

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pandas as pd

from assistant.engine.formatting import number

from assistant.runtime.settings import MAX_QUESTION_CHARS

CHART_COLUMNS = ["item", "value", "part"]
# Human names of the memory components the calculator returns (its keys are code identifiers).
PART_LABELS = {"weights": "Weights", "kv_cache": "KV cache", "activations": "Activations",
               "cuda_context": "CUDA context", "optimizer": "Optimizer", "gradients": "Gradients",
               "lora_adapters": "LoRA adapters", "quantization_constants": "Quantization constants",
               "dequant_workspace": "Dequant workspace", "logits": "Logits"}
MAX_THREAD_ID_CHARS = 128
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]")
_THREAD_ID = re.compile(r"^[A-Za-z0-9_.:\-]+$")


class BadInput(ValueError):
    """A question or thread id a front end should refuse; the message says what is accepted."""


@dataclass
class Visual:
    """The picture beside an answer: a bar chart (CHART_COLUMNS), a table, and a note (data date...)."""

    kind: str = "none"
    chart: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CHART_COLUMNS))
    chart_title: str = ""
    y_title: str = ""
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    note: str = ""


# ---------------------------------------------------------------- input checks

def check_question(question: Any) -> str:
    """The question, stripped; BadInput (a ValueError) with a readable message when empty, not text or too long."""
    if not isinstance(question, str):
        raise BadInput("The question must be text.")
    q = question.strip()
    if not q:
        raise BadInput("The question is empty: ask about GPU memory, speed, prices, costs or which GPU to rent.")
    if len(q) > MAX_QUESTION_CHARS:
        raise BadInput(f"The question is {len(q):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. "
                         "Shorten it and ask again.")
    return q


def check_thread_id(thread_id: Any) -> str | None:
    """None for a new thread; else the id, or BadInput when it is not a short token."""
    if thread_id is None:
        return None
    if not isinstance(thread_id, str):
        raise BadInput("The thread id must be text (or empty for a new thread).")
    tid = thread_id.strip()
    if not tid:
        return None
    if len(tid) > MAX_THREAD_ID_CHARS or not _THREAD_ID.match(tid):
        raise BadInput(f"Invalid thread id {tid[:40]!r}: use up to {MAX_THREAD_ID_CHARS} letters, digits, "
                         "'-', '_', '.' or ':' (or leave it empty to start a new thread).")
    return tid


def is_rtl_text(text: str) -> bool:
    """True when the text is mostly in Arabic script (Urdu)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    return sum(1 for c in letters if _ARABIC_SCRIPT.match(c)) >= len(letters) / 3


# ---------------------------------------------------------------- summaries

def _num(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if v == int(v) and abs(v) >= 1:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def _usd(v: Any) -> str:
    if v is None:
        return "unknown"
    return f"${v:,.2f}" if v >= 1 else f"${v:,.3f}"


def summarize_result(name: str, result: Any, args: Mapping[str, Any] | None = None) -> str:
    """One or two lines saying what a tool found (numbers with units), for the tool step."""
    if not isinstance(result, Mapping):
        return str(result)[:300] if result is not None else "(no result)"
    if "error" in result:
        return f"Error: {result['error']}"
    fn = _SUMMARIES.get(name)
    try:
        return fn(result, args or {}) if fn else ", ".join(sorted(result))[:300]
    except (KeyError, TypeError, ValueError, IndexError):  # an unexpected shape: list what came back
        return "Result fields: " + ", ".join(sorted(result))[:300]


def _sum_vram(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    text = f"Needs {number(r['total_gb'])} GB per GPU"
    fit = r.get("fit")
    if fit:
        verdict = (f"fits, {number(fit['headroom_gb'])} GB free" if fit["fits"]
                   else f"does not fit, {number(-fit['headroom_gb'])} GB short")
        text += f" of {number(fit['gpu_memory_gb'])} GB on {fit['gpu']}: {verdict}"
    return text + "."


def _sum_speed(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    gpu = (r.get("gpu") or {}).get("name", "the GPU")
    text = (f"{number(r['decode_tokens_per_s'])} tokens/s per sequence, {number(r['aggregate_tokens_per_s'])} in total "
            f"(batch {(r.get('inputs') or {}).get('batch', 1)}), first token in {number(r['time_to_first_token_s'])} s "
            f"on {gpu} ({r.get('bound', '?')}-bound, estimate).")
    mem = r.get("memory") or {}
    if mem:
        text += (f" Memory: {'fits' if mem.get('fits') else 'does not fit'}, "
                 f"up to {mem.get('max_batch', 0):,} sequences.")
    return text


def _sum_train(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    gpu = (r.get("gpu") or {}).get("name", "the GPU")
    return (f"{r['tokens_per_s']:,.0f} tokens/s: {number(r['hours'])} h ({number(r['gpu_hours'])} GPU-hours) for "
            f"{r['total_tokens']:,.0f} tokens on {gpu} (estimate).")


def _sum_prices(r: Mapping[str, Any], args: Mapping[str, Any]) -> str:
    offers = r.get("offers") or []
    if not offers:
        text = "No offer matches."
    else:
        o = offers[0]
        spot = args.get("pricing") == "spot" or o.get("price_usd_per_gpu_hour") is None
        cheapest = (f"spot {_usd(o.get('spot_price_usd_per_gpu_hour'))}/GPU-hour" if spot
                    else f"{_usd(o['price_usd_per_gpu_hour'])}/GPU-hour")
        total, shown = r.get("total_matches"), offer_rows(offers)
        text = (f"{shown} offer{'s' if shown != 1 else ''} shown" + (f" of {total:,}" if isinstance(total, int) else "")
                + f"; first: {o['provider']} {o.get('instance_type') or ''} ({o['gpu_count']} x {o['gpu']}) "
                f"at {cheapest}.")
    if r.get("as_of"):
        text += f" Prices as of {r['as_of']}" + (" (possibly stale)." if r.get("stale") else ".")
    return text


def offer_rows(offers: Iterable[Mapping[str, Any]]) -> int:
    """How many rows a table of these offers shows: offers that differ only in region or date are one."""
    return len({tuple(str(o.get(k)) for k in ("provider", "instance_type", "gpu", "gpu_count", "price_usd_per_gpu_hour",
                                              "spot_price_usd_per_gpu_hour")) for o in offers if isinstance(o, Mapping)})


def _sum_cost(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    parts = []
    o = r.get("offer")
    if o:
        parts.append(f"{o['provider']} {o.get('instance_type') or ''} at {_usd(o['price_usd_per_hour'])}/hour")
    s = r.get("serving")
    if s:
        parts.append(f"{number(s['aggregate_tokens_per_s'])} tokens/s")
        if s.get("usd_per_million_tokens") is not None:
            parts.append(f"{_usd(s['usd_per_million_tokens'])} per million tokens, "
                         f"{_usd(s.get('monthly_usd'))} a month")
    if r.get("runtime_hours") is not None:
        parts.append(f"{number(r['runtime_hours'])} h")
    if r.get("on_demand_cost_usd") is not None:
        parts.append(f"{_usd(r['on_demand_cost_usd'])} on demand")
    sp = r.get("spot") or {}
    if sp.get("cost_usd") is not None:
        parts.append(f"{_usd(sp['cost_usd'])} expected on spot")
    if r.get("as_of"):
        parts.append(f"prices as of {r['as_of']}")
    return "; ".join(parts) + "."


def _sum_recommend(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    status = r.get("status")
    if status == "needs_input":
        return "Needs more input: " + ", ".join(r.get("missing") or []) + "."
    opts = r.get("options") or []
    if not opts:
        return "Nothing fits." + (" " + r["suggestions"][0] if r.get("suggestions") else "")
    o = opts[0]
    off = o.get("offer") or {}
    best = f"{o['gpu_count']} x {o['gpu']} at {off.get('provider', '?')}"
    if o.get("usd_per_million_tokens") is not None:
        best += f", {_usd(o['usd_per_million_tokens'])} per million tokens"
    elif o.get("job_cost_usd") is not None:
        best += f", {_usd(o['job_cost_usd'])} for the job"
    return f"{len(opts)} option(s); first: {best}. {len(r.get('ruled_out') or [])} ruled out."


def _sum_guide(r: Mapping[str, Any], _args: Mapping[str, Any]) -> str:
    ids = [p.get("id", "?") for p in r.get("passages") or []]
    return "Guide passages: " + (", ".join(ids) if ids else "none") + "."


_SUMMARIES = {"vram_calculator": _sum_vram, "speed_estimator": _sum_speed, "training_time": _sum_train,
              "price_query": _sum_prices, "cost_estimator": _sum_cost, "recommend_gpus": _sum_recommend,
              "search_guide": _sum_guide}


def citations_markdown(citations: Iterable[Mapping[str, Any]]) -> str:
    """Each cited guide passage: its id, guide title and the quoted sentence."""
    lines = []
    for c in citations:
        title = c.get("title") or c.get("guide", "")
        lines.append(f"**[{c.get('passage_id', '?')}]** {title}\n> {c.get('quote', '')}")
    return "\n\n".join(lines)


# ---------------------------------------------------------------- charts and tables

def _chart(rows: list[tuple[str, float, str]]) -> pd.DataFrame:
    return pd.DataFrame([(i, round(float(v), 4), p) for i, v, p in rows if v is not None], columns=CHART_COLUMNS)


def memory_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Stacked bar: the memory components needed, beside the GPU's memory when a fit was asked."""
    rows = [("needed", gb, name) for name, gb in (result.get("components_gb") or {}).items()]
    fit = result.get("fit")
    if fit and fit.get("gpu_memory_gb") is not None:
        rows.append((f"GPU: {fit['gpu']}", fit["gpu_memory_gb"], "GPU memory"))
    return _chart(rows)


def _words(text: str) -> str:
    """A formula's code names in words ("PEFT autocast_adapter_dtype" -> "PEFT autocast adapter dtype")."""
    return re.sub(r"\b[A-Za-z]+(?:_[A-Za-z0-9]+)+\b", lambda m: m.group(0).replace("_", " "), str(text))


def memory_visual(result: Mapping[str, Any]) -> Visual:
    model = (result.get("model") or {}).get("name", "the model")
    title = f"{model}: {number(result.get('total_gb', 0))} GB per GPU"
    fit = result.get("fit")
    note = ""
    if fit:
        title += f" vs {number(fit['gpu_memory_gb'])} GB"
        note = (f"**{'Fits' if fit['fits'] else 'Does not fit'}** on {fit['gpu']}: "
                f"{number(abs(fit['headroom_gb']))} GB {'free' if fit['fits'] else 'short'}.")
    formulas = result.get("formulas") or {}
    table = pd.DataFrame([{"component": PART_LABELS.get(k, k), "GB": round(v, 3),
                           "formula": _words((formulas.get(k) or {}).get("formula", ""))}
                          for k, v in (result.get("components_gb") or {}).items()]
                         + [{"component": "total", "GB": round(result.get("total_gb", 0), 3), "formula": "per GPU"}])
    return Visual("memory", memory_frame(result), title, "GB (decimal)", table, note)


def speed_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Bars of tokens/s: per sequence and for the batch (the largest batch's rate goes in the table:
    often 100x more, it would flatten these two bars)."""
    batch = (result.get("inputs") or {}).get("batch", 1)
    return _chart([("per sequence", result.get("decode_tokens_per_s"), "tokens/s"),
                   (f"total at batch {batch}", result.get("aggregate_tokens_per_s"), "tokens/s")])


def speed_visual(result: Mapping[str, Any]) -> Visual:
    inp = result.get("inputs") or {}
    gpu = (result.get("gpu") or {}).get("name", "")
    rows = [("decode tokens/s per sequence", _num(result.get("decode_tokens_per_s"), 1)),
            ("aggregate tokens/s", _num(result.get("aggregate_tokens_per_s"), 1)),
            ("time to first token (s)", _num(result.get("time_to_first_token_s"), 3)),
            ("request latency (s)", _num(result.get("request_latency_s"), 2)),
            ("bound", result.get("bound", "")), ("engine", result.get("engine", ""))]
    mem = result.get("memory") or {}
    if mem:
        rows += [("fits in memory", "yes" if mem.get("fits") else "no"),
                 ("max batch that fits", _num(mem.get("max_batch")))]
        if mem.get("aggregate_tokens_per_s_at_max_batch"):
            rows.append(("aggregate tokens/s at max batch", _num(mem["aggregate_tokens_per_s_at_max_batch"], 1)))
    table = pd.DataFrame(rows, columns=["metric", "value"])
    title = f"{inp.get('model', '')} on {gpu} ({inp.get('precision', '')}): tokens/s (estimate)"
    return Visual("speed", speed_frame(result), title, "tokens/s", table, "")


def _option_label(i: int, o: Mapping[str, Any]) -> str:
    return f"{i}. {o['gpu_count']}x {o['gpu']} ({(o.get('offer') or {}).get('provider', '?')})"


def recommend_frame(result: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
    """One bar per option: $ per million tokens (serving) or the job's cost (fine-tuning), else tokens/s."""
    opts = result.get("options") or []
    for key, unit in (("usd_per_million_tokens", "USD per million tokens"), ("job_cost_usd", "USD for the job"),
                      ("tokens_per_s", "tokens/s")):
        if opts and all(o.get(key) is not None for o in opts):
            return _chart([(_option_label(i, o), o[key], unit) for i, o in enumerate(opts, 1)]), unit
    return _chart([]), ""


def recommend_visual(result: Mapping[str, Any]) -> Visual:
    frame, unit = recommend_frame(result)
    rows = []
    for i, o in enumerate(result.get("options") or [], 1):
        off = o.get("offer") or {}
        row = {"rank": i, "GPU": o["gpu"], "GPUs": o["gpu_count"], "provider": off.get("provider"),
               "instance": off.get("instance_type"), "region": off.get("region"),
               "tokens/s": round(o["tokens_per_s"], 1) if o.get("tokens_per_s") is not None else None,
               "$/hour": o.get("price_usd_per_hour"),
               "GB/GPU used": round(o["vram_per_gpu_gb"], 1) if o.get("vram_per_gpu_gb") is not None else None}
        if o.get("usd_per_million_tokens") is not None:
            row["$/M tokens"] = round(o["usd_per_million_tokens"], 4)
            row["$/month"] = round(o.get("monthly_usd") or 0, 2)
        if o.get("job_cost_usd") is not None:
            row["hours"] = round(o.get("hours") or 0, 2)
            row["job $"] = round(o["job_cost_usd"], 2)
        rows.append(row)
    dates = (result.get("chart") or {}).get("as_of") or sorted(
        {(o.get("offer") or {}).get("as_of") for o in result.get("options") or []} - {None})
    note = f"Prices as of {', '.join(dates)}; check the provider's live price before renting." if dates else ""
    if result.get("status") == "needs_input":
        note = "Needs more input: " + ", ".join(result.get("missing") or []) + "."
    elif result.get("status") == "nothing_fits":
        note = "Nothing fits. " + " ".join(result.get("suggestions") or [])
    return Visual("recommend", frame, f"Options: {unit}" if unit else "Options", unit, pd.DataFrame(rows), note)


_OFFER_COLUMNS = {"provider": "provider", "instance_type": "instance", "gpu": "GPU", "gpu_count": "GPUs",
                  "gpu_memory_gb": "GB/GPU", "price_usd_per_gpu_hour": "$/GPU-hour", "price_usd_per_hour": "$/hour",
                  "spot_price_usd_per_gpu_hour": "spot $/GPU-hour", "region": "region", "as_of": "as of"}


def offers_frame(offers: Iterable[Mapping[str, Any]], pricing: str | None = None) -> pd.DataFrame:
    """A sortable table of offers (one row each), in the order given."""
    rows = []
    for o in offers:
        row = {label: o.get(key) for key, label in _OFFER_COLUMNS.items()}
        if row["spot $/GPU-hour"] is None and o.get("spot_price_usd_per_hour") is not None and o.get("gpu_count"):
            row["spot $/GPU-hour"] = o["spot_price_usd_per_hour"] / o["gpu_count"]
        for k in ("GB/GPU", "$/GPU-hour", "$/hour", "spot $/GPU-hour"):
            if row[k] is not None:
                row[k] = round(float(row[k]), 4)
        if pricing:
            row = {"pricing": pricing} | row
        rows.append(row)
    return pd.DataFrame(rows, columns=(["pricing"] if pricing else []) + list(_OFFER_COLUMNS.values()))


def prices_visual(results: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> Visual:
    """Offers of one or more price queries (args, result): table, a bar per offer, the data's date."""
    frames, bars, notes = [], [], []
    for args, res in results:
        pricing = (args or {}).get("pricing") or "on-demand"
        offers = res.get("offers") or []
        frames.append(offers_frame(offers, pricing if len(results) > 1 else None))
        for o in offers[:10]:
            spot = pricing == "spot"
            price = o.get("spot_price_usd_per_gpu_hour") if spot else o.get("price_usd_per_gpu_hour")
            if price is not None:
                label = f"{len(bars) + 1}. {o['provider']} {o.get('instance_type') or o['gpu']}"
                bars.append((label, price, "spot" if spot else "on-demand"))
        for n in (res.get("data_note"), res.get("gpu_note")):
            if n and n not in notes:
                notes.append(n)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Visual("prices", _chart(bars), "USD per GPU-hour, cheapest first", "USD per GPU-hour", table,
                  " ".join(notes))


def cost_visual(result: Mapping[str, Any]) -> Visual:
    s = result.get("serving")
    rows: list[tuple[str, Any, str]] = []
    if s:
        rows = [("on-demand", s.get("usd_per_million_tokens"), "USD per million tokens"),
                ("spot", s.get("spot_usd_per_million_tokens"), "USD per million tokens")]
        title, unit = "Serving: USD per million tokens (at full load)", "USD per million tokens"
    else:
        sp = result.get("spot") or {}
        rows = [("on-demand", result.get("on_demand_cost_usd"), "USD"), ("spot (expected)", sp.get("cost_usd"), "USD"),
                ("storage", result.get("storage_usd"), "USD"), ("egress", result.get("egress_usd"), "USD")]
        title, unit = "Job cost (USD)", "USD"
    table_rows = []
    for label, key in (("offer", "offer"), ("spot offer", "spot_offer")):
        o = result.get(key)
        if o:
            price = o.get("spot_price_usd_per_hour") if key == "spot_offer" else o.get("price_usd_per_hour")
            table_rows.append((label, f"{o['provider']} {o.get('instance_type') or ''} ({o['gpu_count']} x {o['gpu']}, "
                                      f"{o.get('region') or '-'}) {_usd(price)}/hour"))
    for label, v in (("runtime hours", result.get("runtime_hours")), ("billed hours", result.get("billed_hours"))):
        if v is not None:
            table_rows.append((label, _num(v, 3)))
    for label, v, _unit in rows:
        if v is not None:
            table_rows.append((label, _usd(v)))
    if s and s.get("monthly_usd") is not None:
        table_rows.append(("always on, a month", _usd(s["monthly_usd"])))
    if result.get("total_usd") is not None:
        table_rows.append(("total", _usd(result["total_usd"])))
    note = result.get("data_note") or (f"Prices as of {result['as_of']}." if result.get("as_of") else "")
    return Visual("cost", _chart(rows), title, unit, pd.DataFrame(table_rows, columns=["item", "value"]), note)


def training_visual(result: Mapping[str, Any]) -> Visual:
    inp = result.get("inputs") or {}
    gpu = (result.get("gpu") or {}).get("name", "")
    rows = [("wall-clock hours", result.get("hours"), "hours"), ("GPU-hours", result.get("gpu_hours"), "hours")]
    table = pd.DataFrame([("tokens/s", _num(result.get("tokens_per_s"), 0)), ("hours", _num(result.get("hours"), 2)),
                          ("GPU-hours", _num(result.get("gpu_hours"), 2)), ("tokens", _num(result.get("total_tokens"))),
                          ("utilisation (MFU)", _num(result.get("mfu"), 2)), ("bound", result.get("bound", ""))],
                         columns=["metric", "value"])
    title = f"{inp.get('model', '')} {inp.get('method', '')} on {inp.get('gpus', 1)} x {gpu} (estimate)"
    return Visual("training", _chart(rows), title, "hours", table, "")


_VISUALS = {"vram_calculator": memory_visual, "speed_estimator": speed_visual, "recommend_gpus": recommend_visual,
            "cost_estimator": cost_visual, "training_time": training_visual}
# When an answer used several tools, the picture follows the most specific one.
_PRIORITY = ("recommend_gpus", "cost_estimator", "vram_calculator", "speed_estimator", "training_time", "price_query")
CHART_TOOLS = frozenset(_PRIORITY)


def visual_for_calls(calls: Iterable[Mapping[str, Any]]) -> Visual:
    """The picture that fits an answer, from its tool calls ({name, args, result}); kind 'none' if nothing to draw."""
    ok = [c for c in calls if isinstance(c.get("result"), Mapping) and "error" not in c["result"]]
    for name in _PRIORITY:
        mine = [c for c in ok if c.get("name") == name]
        if not mine:
            continue
        try:
            if name == "price_query":
                return prices_visual([(c.get("args") or {}, c["result"]) for c in mine])
            return _VISUALS[name](mine[-1]["result"])
        except (KeyError, TypeError, ValueError, IndexError):  # an unexpected shape: try the next tool
            continue
    return Visual()
