"""The web app's calculator tabs: forms over assistant.service.api, results as HTML (card, chart, table).

Optional numbers are blank text fields (a blank gr.Number shows "0"); the fields shown follow the
mode (serve / fine-tune); a bad value is marked on its own field (Gradio's validator) while the
previous result is cleared; messages use the form's words, never the CLI's flags.
"""

from __future__ import annotations

__all__ = ["Field", "FieldError", "build_calculators", "evaluate_form", "form", "forms", "web_words"]

import html
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from assistant.service import api
from assistant.frontends.web import ui_data
from assistant.frontends.web.chart import chart_from
from assistant.frontends.web.render import markdown_html, table_html
from tools.errors import AdvisorError, InvalidInput, UnknownGpu, UnknownModel

# CLI flags that tool messages mention, in the form's words.
_FLAG_WORDS = {"--mfu": "a measured MFU", "--params-b": "the parameter count", "--config": "a config.json",
               "--model": "the model", "--gpus": "the number of GPUs", "--min-gpus": "the minimum GPUs",
               "--max-gpus": "the maximum GPUs", "--hours": "the hours", "--chunked-loss": "a chunked loss",
               "--dataset-tokens": "the dataset tokens", "--method": "the method",
               "--price-usd-per-hour": "the price per hour", "--examples": "the number of examples",
               "--tokens-per-example": "the tokens per example"}
_PHRASES = {"pass --mfu from your own runs to rescale": "a utilisation (MFU) measured on your own runs would rescale it"}


def web_words(text: str) -> str:
    """A tool message with its CLI wording (flags, commands) replaced by plain words."""
    for a, b in _PHRASES.items():
        text = text.replace(a, b)
    text = re.sub(r"\s*\(?Run `gpu-advisor [^`]*`[^.]*\.\)?", "", text)
    return re.sub(r"--[a-z][a-z0-9-]*", lambda m: _FLAG_WORDS.get(m.group(0), m.group(0)[2:].replace("-", " ")), text)


class FieldError(ValueError):
    """A form value that cannot be used; `key` names the field it belongs to (None: the whole form)."""

    def __init__(self, key: str | None, message: str):
        super().__init__(message)
        self.key = key


@dataclass
class Field:
    key: str
    make: Callable[[], Any]
    number: str = ""  # "int" / "float": a blank-able text field parsed as a number
    label: str = ""
    least: float = 0  # the smallest value the computation accepts (counts and sizes: 1)


def _parse(f: Field, v: Any) -> Any:
    if isinstance(v, str):
        v = v.strip()
    if v in (None, "", []):
        return None
    if not f.number:
        return v
    try:
        x = float(str(v).replace(",", "").replace("_", ""))
    except ValueError:
        raise FieldError(f.key, f"{f.label or f.key}: {str(v)[:40]!r} is not a number.") from None
    kind = "a whole number" if f.number == "int" else "a number"
    if not math.isfinite(x) or x < f.least or (f.number == "int" and not x.is_integer()):
        raise FieldError(f.key, f"{f.label or f.key}: {str(v)[:40]} is not accepted; use {kind} of {f.least:g} or more.")
    if f.number == "int":
        return int(x)
    return int(x) if x.is_integer() else x


_TOOL_FIELDS = {"weight_precision": "precision", "tensor_parallel": "gpus", "concurrent_users": "users",
                "context_tokens": "context_tokens", "min_tokens_per_s_per_user": "min_tps",
                "max_price_usd_per_gpu_hour": "max_price", "budget_usd": "budget", "deadline_hours": "deadline"}


def _field_error(exc: Exception, keys: list[str], labels: dict[str, str] | None = None) -> FieldError:
    """Map a typed tool error to the form field it is about (by its typed attributes, not its text)."""
    if isinstance(exc, FieldError):
        return exc
    if isinstance(exc, UnknownModel):
        msg = f"Unknown model {exc.name!r}." + (f" Closest known: {', '.join(exc.suggestions)}." if exc.suggestions else "")
        return FieldError("model" if "model" in keys else None, msg)
    if isinstance(exc, UnknownGpu):
        msg = (f"GPU {exc.name!r} is ambiguous: {', '.join(exc.suggestions)}." if exc.ambiguous else
               f"Unknown GPU {exc.name!r}." + (f" Closest known: {', '.join(exc.suggestions)}." if exc.suggestions else ""))
        return FieldError("gpu" if "gpu" in keys else None, msg)
    if isinstance(exc, InvalidInput):
        key = _TOOL_FIELDS.get(exc.field, exc.field)
        if key in keys and labels and labels.get(key):  # in the form's words: its label, not the tool's field name
            return FieldError(key, web_words(f"{labels[key]}: {exc.value} is not accepted. Accepted: "
                                             f"{str(exc.accepted).rstrip('.')}."))
        return FieldError(key if key in keys else None, web_words(str(exc)))
    return FieldError(None, web_words(str(exc)))


def _result_html(summary: str, visual: ui_data.Visual, assumptions: list[str]) -> str:
    parts = [f'<div class="ga-card ga-v-info"><div class="ga-headline"><p>{html.escape(web_words(summary))}</p></div></div>']
    if visual.note:
        parts.append(f'<div class="ga-note">{markdown_html(web_words(visual.note))}</div>')
    parts.append(chart_from(visual))
    parts.append(table_html(visual.table))
    if assumptions:
        items = "".join(f"<li>{html.escape(web_words(a))}</li>" for a in assumptions)
        parts.append(f'<details class="ga-more"><summary>Assumptions</summary><ul>{items}</ul></details>')
    return '<div class="ga-calc">' + "".join(parts) + "</div>"


def _error_html(message: str) -> str:
    return f'<div class="ga-card ga-v-error"><div class="ga-headline"><p>{html.escape(message)}</p></div></div>'


# ---------------------------------------------------------------- the computations (form dict -> html)

def _vram(v: dict[str, Any]) -> str:
    method, gpus = v["method"] or "inference", v["gpus"]
    est = api.vram(model=v["model"], gpu=v["gpu"], gpu_memory_gb=v["gpu_memory_gb"], method=method,
                   weight_precision=v["precision"], seq_len=v["seq_len"], batch=v["batch"], gpus=gpus,
                   tensor_parallel=gpus if method == "inference" else None,
                   sharding="fsdp" if gpus and gpus > 1 and method != "inference" else None)
    d = est.to_json_dict()
    return _result_html(ui_data.summarize_result("vram_calculator", d), ui_data.memory_visual(d), d.get("assumptions", []))


def _speed(v: dict[str, Any]) -> str:
    est = api.speed(model=v["model"], gpu=v["gpu"] or "", precision=v["precision"], engine=v["engine"],
                    batch=v["batch"], prompt_tokens=v["prompt_tokens"], output_tokens=v["output_tokens"], gpus=v["gpus"])
    d = est.model_dump()
    return _result_html(ui_data.summarize_result("speed_estimator", d), ui_data.speed_visual(d), d.get("assumptions", []))


def _train(v: dict[str, Any]) -> str:
    est = api.train_time(model=v["model"], gpu=v["gpu"] or "", method=v["method"], dataset_tokens=v["dataset_tokens"],
                         epochs=v["epochs"], batch=v["batch"], seq_len=v["seq_len"], gpus=v["gpus"])
    d = est.model_dump()
    return _result_html(ui_data.summarize_result("training_time", d), ui_data.training_visual(d), d.get("assumptions", []))


def _prices(v: dict[str, Any]) -> str:
    pricing = v["pricing"]
    res = api.prices(gpu=v["gpu"], pricing=None if pricing in (None, "any") else pricing, provider=v["provider"],
                     region=v["region"], min_vram_gb=v["min_vram_gb"], max_price_usd_per_gpu_hour=v["max_price"],
                     gpus=v["gpus"], limit=v["limit"])
    d = {"as_of": res.as_of, "stale": res.stale, "data_note": res.data_note, "total_matches": res.total_matches,
         "gpu_note": res.gpu_note, "offers": [o.to_contract() for o in res.offers]}
    visual = ui_data.prices_visual([({"pricing": pricing}, d)])
    return _result_html(ui_data.summarize_result("price_query", d, {"pricing": pricing}), visual, list(res.notices))


def _recommend(v: dict[str, Any]) -> str:
    workload = v["workload"] or "serve"
    goal = {"workload": workload, "objective": v["objective"], "top_n": v["top_n"], "budget_usd": v["budget"],
            "deadline_hours": v["deadline"]}
    if workload == "serve":
        goal |= {"context_tokens": v["context_tokens"], "concurrent_users": v["users"],
                 "min_tokens_per_s_per_user": v["min_tps"], "precisions": v["precisions"] or None}
    else:
        goal |= {"method": v["method"], "dataset_tokens": v["dataset_tokens"]}
    rec = api.recommend(model=v["model"], **goal)
    d = json.loads(json.dumps(rec.model_dump(), default=str))
    return _result_html(ui_data.summarize_result("recommend_gpus", d), ui_data.recommend_visual(d), d.get("assumptions", []))


# ---------------------------------------------------------------- forms

def evaluate_form(fields: list[Field], compute: Callable[[dict[str, Any]], str], *vals: Any) -> tuple[str, FieldError | None]:
    """(result HTML, None), or ("", the error with the field it belongs to)."""
    try:
        return compute({f.key: _parse(f, v) for f, v in zip(fields, vals)}), None
    except (AdvisorError, FieldError, ValueError) as exc:
        return "", _field_error(exc, [f.key for f in fields], {f.key: f.label for f in fields})


def _tab(title: str, button: str, fields: list[Field], compute: Callable[[dict[str, Any]], str], api_name: str,
         modes: tuple[str, dict[str, list[str]]] | None = None) -> None:
    """One calculator tab. `modes`: (the key of the mode field, {mode: keys shown only in that mode})."""
    keys = [f.key for f in fields]
    with gr.Tab(title):
        with gr.Row():
            with gr.Column(scale=2):
                comps = [f.make() for f in fields]
                btn = gr.Button(button, variant="primary")
            with gr.Column(scale=3):
                out = gr.HTML(elem_classes=["ga-calc-out"])

        def validate(*vals: Any) -> list[Any]:
            _, err = evaluate_form(fields, compute, *vals)
            if err is not None and err.key in keys:
                return [gr.validate(k != err.key, str(err) if k == err.key else "") for k in keys]
            return [gr.validate(True, "") for _ in keys]

        def run(*vals: Any) -> str:
            out, err = evaluate_form(fields, compute, *vals)
            return _error_html(str(err)) if err is not None else out

        btn.click(lambda: "", None, out, api_visibility="private", queue=False).then(
            run, comps, out, validator=validate, api_name=api_name).then(None, None, None, js=_SCROLL_TO_RESULT_JS)
        if modes:
            mode_key, shown = modes
            mode_comp = comps[keys.index(mode_key)]
            groups = [k for ks in shown.values() for k in ks]

            def toggle(mode: str) -> list[Any]:
                return [gr.update(visible=k in shown.get(mode, [])) for k in groups]

            mode_comp.change(toggle, mode_comp, [comps[keys.index(k)] for k in groups], api_visibility="private",
                             queue=False)


# On a phone the result lies below the form: bring the visible tab's result into view.
_SCROLL_TO_RESULT_JS = ("() => { const o = [...document.querySelectorAll('.ga-calc-out')].find(e => e.offsetParent);"
                        " if (o && o.getBoundingClientRect().top > innerHeight * 0.6) o.scrollIntoView({block: 'start'});"
                        " return []; }")


# (what the reader sees, the value the tools take): methods as they are written, models by name
_METHODS = [("Inference", "inference"), ("LoRA", "lora"), ("QLoRA", "qlora"), ("Full fine-tuning", "full")]
_FROM_ZERO = frozenset({"min_vram_gb", "max_price", "budget", "deadline", "gpu_memory_gb", "min_tps"})


def _opt_num(label: str, placeholder: str = "optional") -> Callable[[], Any]:
    return lambda: gr.Textbox(label=label, placeholder=placeholder, max_lines=1)


def build_calculators(models: list[str] | list[tuple[str, str]], gpus: list[str]) -> None:
    """The calculator tabs (inside the caller's Blocks); `models` as ids or (name, id) pairs."""
    for spec in forms(models, gpus):
        _tab(*spec)


def form(api_name: str) -> tuple[list[Field], Callable[[dict[str, Any]], str]]:
    """The fields and the computation of one calculator (for tests and scripts)."""
    spec = next(f for f in forms([], []) if f[4] == api_name)
    return spec[2], spec[3]


def forms(models: list[str], gpus: list[str]) -> list[tuple]:
    """(title, button, fields, compute, api_name[, modes]) of each calculator tab; nothing is built yet."""
    def model_box(value: str = "llama-3-8b") -> Callable[[], Any]:
        return lambda: gr.Dropdown(models, value=value, label="Model", allow_custom_value=True)

    def gpu_box(value: str | None = "H100", label: str = "GPU") -> Callable[[], Any]:
        return lambda: gr.Dropdown(gpus, value=value, label=label, allow_custom_value=True)

    precisions = ["bf16", "fp16", "fp8", "int8", "int4", "nf4", "q4_k_m", "q8_0"]

    def prec(label: str) -> Callable[[], Any]:
        return lambda: gr.Dropdown(precisions, value=None, label=label, allow_custom_value=True)

    def field(key: str, make: Callable[[], Any], kind: str = "", label: str = "") -> Field:
        # counts and lengths start at 1 (the tools refuse 0); prices, sizes and limits at 0
        return Field(key, make, kind, label or key, 1 if kind == "int" and key not in _FROM_ZERO else 0)

    return [
        ("VRAM", "Estimate memory", [
        field("model", model_box()),
        field("method", lambda: gr.Radio(_METHODS, value="inference", label="Method")),
        field("precision", prec("Weight precision (blank: the method's default)")),
        field("seq_len", lambda: gr.Textbox(label="Context (tokens)", value="8192", max_lines=1), "int", "Context"),
        field("batch", lambda: gr.Textbox(label="Sequences at once (batch)", value="1", max_lines=1), "int", "Batch"),
        field("gpus", lambda: gr.Textbox(label="GPUs", value="1", max_lines=1), "int", "GPUs"),
        field("gpu", gpu_box("RTX 4090", "GPU to check the fit on (optional)")),
        field("gpu_memory_gb", _opt_num("...or its memory in GB"), "float", "GPU memory"),
    ], _vram, "vram"),
        ("Speed", "Estimate speed", [
        field("model", model_box()), field("gpu", gpu_box()),
        field("precision", prec("Precision (blank: bf16)")),
        field("engine", lambda: gr.Dropdown(["vllm", "sglang", "tensorrt-llm", "llama.cpp", "pytorch-eager"], value=None,
                                            label="Engine (blank: vLLM)", allow_custom_value=True)),
        field("batch", lambda: gr.Textbox(label="Sequences at once (batch)", value="1", max_lines=1), "int", "Batch"),
        field("prompt_tokens", lambda: gr.Textbox(label="Prompt tokens", value="512", max_lines=1), "int", "Prompt tokens"),
        field("output_tokens", lambda: gr.Textbox(label="Output tokens", value="256", max_lines=1), "int", "Output tokens"),
        field("gpus", lambda: gr.Textbox(label="GPUs", value="1", max_lines=1), "int", "GPUs"),
    ], _speed, "speed"),
        ("Training time", "Estimate training time", [
        field("model", model_box()), field("gpu", gpu_box("A100")),
        field("method", lambda: gr.Radio(_METHODS[1:], value="lora", label="Method")),
        field("dataset_tokens", lambda: gr.Textbox(label="Dataset tokens (per epoch)", value="100000000", max_lines=1),
              "int", "Dataset tokens"),
        field("epochs", lambda: gr.Textbox(label="Epochs", value="1", max_lines=1), "float", "Epochs"),
        field("batch", _opt_num("Micro-batch per GPU", placeholder="blank: the default"), "int", "Micro-batch"),
        field("seq_len", _opt_num("Sequence length (tokens)", placeholder="blank: the default"), "int", "Sequence length"),
        field("gpus", lambda: gr.Textbox(label="GPUs", value="1", max_lines=1), "int", "GPUs"),
    ], _train, "train_time"),
        ("Prices", "Find offers", [
        field("gpu", gpu_box("H100", "GPU (model or family; blank: any)")),
        field("pricing", lambda: gr.Radio([("Any", "any"), ("On-demand", "on-demand"), ("Spot", "spot")], value="on-demand", label="Pricing")),
        field("provider", lambda: gr.Textbox(label="Provider (optional)", placeholder="aws, lambda, runpod ...",
                                             max_lines=1)),
        field("region", lambda: gr.Textbox(label="Region contains (optional)", placeholder="us-east, europe ...",
                                           max_lines=1)),
        field("min_vram_gb", _opt_num("Min GB per GPU"), "float", "Min GB per GPU"),
        field("max_price", _opt_num("Max USD per GPU-hour"), "float", "Max USD per GPU-hour"),
        field("gpus", _opt_num("GPUs per instance"), "int", "GPUs per instance"),
        field("limit", lambda: gr.Textbox(label="Rows", value="20", max_lines=1), "int", "Rows"),
    ], _prices, "prices"),
        ("Recommend", "Recommend GPUs", [
        field("model", model_box()),
        field("workload", lambda: gr.Radio([("Serve", "serve"), ("Fine-tune", "finetune")], value="serve", label="Workload")),
        field("context_tokens", lambda: gr.Textbox(label="Context tokens per request", value="4096", max_lines=1),
              "int", "Context tokens"),
        field("users", lambda: gr.Textbox(label="Concurrent users", value="10", max_lines=1), "int", "Concurrent users"),
        field("min_tps", _opt_num("Min tokens/s per user"), "float", "Min tokens/s per user"),
        field("precisions", lambda: gr.Dropdown(precisions, value=[], multiselect=True,
                                                label="Allowed precisions, in order (optional)")),
        field("method", lambda: gr.Radio(_METHODS[1:], value="lora", label="Method", visible=False)),
        field("dataset_tokens", lambda: gr.Textbox(label="Dataset tokens", value="20000000", max_lines=1, visible=False),
              "int", "Dataset tokens"),
        field("objective", lambda: gr.Radio([("Cheapest", "cheapest"), ("Fastest", "fastest"), ("Best value", "value")], value="cheapest", label="Objective")),
        field("budget", _opt_num("Budget (USD)"), "float", "Budget"),
        field("deadline", _opt_num("Deadline (hours)"), "float", "Deadline"),
        field("top_n", lambda: gr.Textbox(label="Options to show", value="5", max_lines=1), "int", "Options to show"),
    ], _recommend, "recommend",
        ("workload", {"serve": ["context_tokens", "users", "min_tps", "precisions"],
                      "finetune": ["method", "dataset_tokens"]}))]
