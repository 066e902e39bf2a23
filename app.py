"""GPU Advisor web app: a Gradio front end over assistant.api (chat, calculators, an /ask endpoint).

Run `python app.py [--host H] [--port P]` (defaults: GRADIO_SERVER_NAME / GRADIO_SERVER_PORT, else
127.0.0.1:7860). It runs offline: no analytics, no Hugging Face calls, no share link.
"""

from __future__ import annotations

import os

# Before gradio is imported: it reads these at import time (ecosystem-notes sec. 3 and 7).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import argparse  # noqa: E402
import base64  # noqa: E402
import contextlib  # noqa: E402
import html  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import secrets  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from typing import Any, Iterator  # noqa: E402

import gradio as gr  # noqa: E402
from fastapi import Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402

from assistant import api, ui_data  # noqa: E402
from tools.errors import AdvisorError  # noqa: E402

log = logging.getLogger("gpu_advisor.app")

EXAMPLES = [
    "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?",
    "Cheapest H100 per hour?",
    "How fast is Llama-3-70B in int4 on an H100?",
    "Which GPU should I rent to serve Llama-3-8B for 10 users?",
    "What does it cost per million tokens to serve llama-3-8b on an L40S?",
    "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟",
]
BACKEND: str | None = None  # None: $GPU_ADVISOR_BACKEND, else the embedded router (set by --backend)
CSS = """
textarea { unicode-bidi: plaintext; }
[dir="rtl"], [dir="rtl"] p, [dir="rtl"] li { text-align: right; }
/* an English line inside an Urdu answer keeps its own word order */
[dir="rtl"] p, [dir="rtl"] li, [dir="rtl"] blockquote { unicode-bidi: plaintext; }
"""
_ADVISOR_LOCK = threading.Lock()


def _advisor() -> Any:
    with _ADVISOR_LOCK:  # the first call builds the agent; warm-up and a first question may race
        return api.advisor(BACKEND)


def _backend_label() -> str:
    return BACKEND or os.environ.get("GPU_ADVISOR_BACKEND") or "router"


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """Our typed errors become gr.Error with their message; anything else a short message, never a trace."""
    try:
        yield
    except gr.Error:
        raise
    except (AdvisorError, ui_data.BadInput) as exc:
        raise gr.Error(str(exc), print_exception=False) from None
    except Exception:
        log.exception("unexpected error")
        raise gr.Error("Something went wrong on our side (details are in the server log). "
                       "Try again, or rephrase the question.", print_exception=False) from None


# ---------------------------------------------------------------- shared output shaping

def _plot(v: ui_data.Visual) -> Any:
    # No chart: hide it but keep it in the page ("hidden", not False, and no value None). Gradio 6.31's
    # BarPlot leaves ResizeObservers on a removed chart, which then throw "Cannot read properties of
    # null (reading 'offsetWidth')" in the browser.
    if v.chart.empty:
        return gr.BarPlot(visible="hidden")
    return gr.BarPlot(value=v.chart, x="item", y="value", color="part", title=v.chart_title or None,
                      y_title=v.y_title or None, x_title=" ", color_title=" ",
                      sort=list(dict.fromkeys(v.chart["item"])),
                      x_label_angle=-35 if v.chart["item"].nunique() > 3 else 0,
                      y_lim=[0, None], visible=True)


def _table(v: ui_data.Visual) -> Any:
    return gr.Dataframe(value=v.table, visible=not v.table.empty)


def _rtl(text: str) -> str:
    return f'<div dir="rtl" lang="ur">\n\n{text}\n\n</div>'


def _status(backend: str, thread_id: str | None) -> str:
    return f"Backend: **{backend}**" + (f" · thread `{thread_id[:12]}`" if thread_id else "")


def _step(ev: dict[str, Any], result: Any = None, seconds: float | None = None) -> gr.ChatMessage:
    content = f"**Inputs:** {ui_data.summarize_args(ev.get('args'))}"
    meta: dict[str, Any] = {"title": f"🛠 {ev['name']}", "id": ev.get("id") or ev["name"], "status": "pending"}
    if seconds is not None:
        content += f"\n\n**Result:** {ui_data.summarize_result(ev['name'], result, ev.get('args'))}"
        meta |= {"status": "done", "duration": round(seconds, 3)}
    return gr.ChatMessage(role="assistant", content=content, metadata=meta)


# ---------------------------------------------------------------- chat

def respond(message: str, history: list | None, thread_id: str | None) -> Iterator[tuple]:
    """Stream one turn: tool steps as they run, the answer, its sources, then the chart and table.

    Yields (history, plot, table, note, textbox, thread_id, status); the last yield holds real values.
    """
    history = list(history or [])
    try:
        q = ui_data.check_question(message)
    except ui_data.BadInput as exc:
        gr.Warning(str(exc))
        yield history[:], gr.skip(), gr.skip(), gr.skip(), message, thread_id, gr.skip()
        return
    tid = thread_id or uuid.uuid4().hex
    user_text = html.escape(q)
    history.append(gr.ChatMessage(role="user", content=_rtl(user_text) if ui_data.is_rtl_text(q) else user_text))
    status = _status(_backend_label(), tid)
    yield history[:], gr.skip(), gr.skip(), gr.skip(), "", tid, status

    steps: dict[str, tuple[int, float, dict[str, Any]]] = {}
    calls: list[dict[str, Any]] = []
    answer_idx: int | None = None
    visual = ui_data.Visual()
    with _user_errors():
        for ev in _advisor().stream(q, tid):
            kind = ev["type"]
            if kind == "tool_start":
                history.append(_step(ev))
                steps[ev.get("id") or ev["name"]] = (len(history) - 1, time.monotonic(), ev)
                yield history[:], gr.skip(), gr.skip(), gr.skip(), "", tid, status
            elif kind == "tool_end":
                idx, t0, start = steps.get(ev.get("id") or ev["name"], (None, time.monotonic(), ev))
                step = _step(start, ev["result"], time.monotonic() - t0)
                if idx is None:
                    history.append(step)
                else:
                    history[idx] = step
                calls.append({"name": ev["name"], "args": start.get("args") or {}, "result": ev["result"]})
                drawn = ui_data.visual_for_calls(calls) if ev["name"] in ui_data.CHART_TOOLS else ui_data.Visual()
                if drawn.kind != "none":  # draw as soon as the numbers are in
                    visual = drawn
                    yield history[:], _plot(visual), _table(visual), visual.note, "", tid, status
                else:
                    yield history[:], gr.skip(), gr.skip(), gr.skip(), "", tid, status
            elif kind == "text":
                text = ev["text"]
                rtl = ui_data.is_rtl_text(text)
                history.append(gr.ChatMessage(role="assistant", content=_rtl(text) if rtl else text))
                answer_idx = len(history) - 1
                yield history[:], gr.skip(), gr.skip(), gr.skip(), "", tid, status
            elif kind == "answer":
                ans = ev["answer"]
                for i, m in enumerate(history):  # a step an LLM turn left unfinished (router fallback)
                    if isinstance(m, gr.ChatMessage) and (m.metadata or {}).get("status") == "pending":
                        history[i] = gr.ChatMessage(role="assistant", metadata=m.metadata | {"status": "done"},
                                                    content=f"{m.content}\n\n**Result:** not finished.")
                text = _rtl(ans.answer) if ans.language == "ur" else ans.answer
                if answer_idx is None:
                    history.append(gr.ChatMessage(role="assistant", content=text))
                else:
                    history[answer_idx] = gr.ChatMessage(role="assistant", content=text)
                if ans.citations:
                    cites = ui_data.citations_markdown(c.model_dump() for c in ans.citations)
                    history.append(gr.ChatMessage(
                        role="assistant", content=_rtl(cites) if ans.language == "ur" else cites,
                        metadata={"title": f"📚 Guide passages cited ({len(ans.citations)})", "status": "done"}))
                visual = ui_data.visual_for_calls(c.model_dump() for c in ans.tool_calls)
                tid = ans.thread_id  # a new one when the conversation store was unavailable
                status = _status(ans.backend, tid)
    yield history[:], _plot(visual), _table(visual), visual.note, "", tid, status


def new_chat() -> tuple:
    """A fresh thread: empty chat, no chart."""
    tid = uuid.uuid4().hex
    empty = ui_data.Visual()
    return [], _plot(empty), _table(empty), "", "", tid, _status(_backend_label(), tid)


class _RateLimit:
    """Per-client token bucket for the API: GPU_ADVISOR_RATE_LIMIT requests a minute (default 1200; 0 = off)."""

    def __init__(self) -> None:
        self.per_min = float(os.environ.get("GPU_ADVISOR_RATE_LIMIT", "1200") or 0)
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, key: str) -> bool:
        if self.per_min <= 0:
            return True
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(key, (self.per_min / 6, now))  # a burst of 10 seconds' worth
            tokens = min(self.per_min / 6, tokens + (now - last) * self.per_min / 60)
            ok = tokens >= 1
            self.buckets[key] = (tokens - 1 if ok else tokens, now)
            return ok


_LIMIT = _RateLimit()


def _answer_json(ans: Any) -> dict:
    """The answer as plain JSON types: the shape of `gpu-advisor ask --json`."""
    return json.loads(json.dumps(ans.model_dump(), ensure_ascii=False, default=str))


def ask(question: str, thread_id: str | None = None, request: gr.Request = None) -> dict:
    """Answer one question in a thread (empty thread_id: a new one); the JSON of `gpu-advisor ask --json`."""
    client = getattr(getattr(request, "client", None), "host", None) or "local"
    if not _LIMIT.allow(client):
        raise gr.Error("Too many requests from this address; wait a few seconds and ask again.")
    with _user_errors():
        q = ui_data.check_question(question)
        tid = ui_data.check_thread_id(thread_id)
        ans = _advisor().ask(q, thread_id=tid)
        return _answer_json(ans)


def _auth_ok(header: str | None) -> bool:
    """HTTP Basic credentials against GPU_ADVISOR_AUTH (always true when it is unset)."""
    creds = os.environ.get("GPU_ADVISOR_AUTH", "")
    if not creds:
        return True
    scheme, _, value = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        given = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return secrets.compare_digest(given.encode(), creds.encode())


async def rest_ask(request: Request) -> JSONResponse:
    """POST /api/ask {"question": ..., "thread_id": ...}: the JSON of `gpu-advisor ask --json`.

    The same answer as the Gradio /ask endpoint without its queue and event stream, for scripts and
    load: 400 with {"error": ...} for bad input, 401 without valid credentials when GPU_ADVISOR_AUTH
    is set, 429 over the per-client rate limit."""
    if not _auth_ok(request.headers.get("authorization")):
        return JSONResponse({"error": "authentication required"}, status_code=401,
                            headers={"WWW-Authenticate": 'Basic realm="gpu-advisor"'})
    client = request.client.host if request.client else "local"
    if not _LIMIT.allow(client):
        return JSONResponse({"error": "Too many requests from this address; wait a few seconds and ask again."},
                            status_code=429)
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict) or set(body) - {"question", "thread_id"}:
        return JSONResponse({"error": 'send a JSON object {"question": "...", "thread_id": "..." (optional)}'},
                            status_code=400)
    return await run_in_threadpool(_rest_answer, body)


def _rest_answer(body: dict[str, Any]) -> JSONResponse:
    try:
        q = ui_data.check_question(body.get("question"))
        tid = ui_data.check_thread_id(body.get("thread_id"))
        ans = _advisor().ask(q, thread_id=tid)
    except (AdvisorError, ui_data.BadInput) as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    except Exception:
        log.exception("unexpected error")
        return JSONResponse({"error": "Something went wrong on our side (details are in the server log)."},
                            status_code=500)
    return JSONResponse(_answer_json(ans))


# ---------------------------------------------------------------- calculators

def _n(v: Any) -> Any:
    """Empty form fields are None; whole floats from gr.Number become int."""
    if v is None or v == "" or v == []:
        return None
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


def _opt(v: Any) -> Any:
    """An optional number: the browser sends 0 for an empty gr.Number, and 0 is never a valid value here."""
    v = _n(v)
    return None if v == 0 else v


def _calc_out(name: str, result: dict[str, Any], visual: ui_data.Visual, assumptions: list[str]) -> tuple:
    lines = [ui_data.summarize_result(name, result)]
    if visual.note:
        lines.append(visual.note)
    if assumptions:
        lines.append("**Assumptions**\n" + "\n".join(f"- {a}" for a in assumptions))
    return "\n\n".join(lines), _plot(visual), _table(visual)


def calc_vram(model, method, precision, seq_len, batch, gpus, gpu, gpu_memory_gb) -> tuple:
    with _user_errors():
        method, gpus = _n(method) or "inference", _n(gpus)
        est = api.vram(model=_n(model), gpu=_n(gpu), gpu_memory_gb=_opt(gpu_memory_gb), method=method,
                       weight_precision=_n(precision), seq_len=_n(seq_len), batch=_n(batch), gpus=gpus,
                       tensor_parallel=gpus if method == "inference" else None,
                       sharding="fsdp" if gpus and gpus > 1 and method != "inference" else None)
        d = est.to_json_dict()
        return _calc_out("vram_calculator", d, ui_data.memory_visual(d), d.get("assumptions", []))


def calc_speed(model, gpu, precision, engine, batch, prompt_tokens, output_tokens, gpus) -> tuple:
    with _user_errors():
        est = api.speed(model=_n(model), gpu=_n(gpu) or "", precision=_n(precision), engine=_n(engine),
                        batch=_n(batch), prompt_tokens=_n(prompt_tokens), output_tokens=_n(output_tokens),
                        gpus=_n(gpus))
        d = est.model_dump()
        return _calc_out("speed_estimator", d, ui_data.speed_visual(d), d.get("assumptions", []))


def calc_train(model, gpu, method, dataset_tokens, epochs, batch, seq_len, gpus) -> tuple:
    with _user_errors():
        est = api.train_time(model=_n(model), gpu=_n(gpu) or "", method=_n(method), dataset_tokens=_n(dataset_tokens),
                             epochs=_n(epochs), batch=_opt(batch), seq_len=_opt(seq_len), gpus=_n(gpus))
        d = est.model_dump()
        return _calc_out("training_time", d, ui_data.training_visual(d), d.get("assumptions", []))


def calc_prices(gpu, pricing, provider, region, min_vram_gb, max_price, gpus, limit) -> tuple:
    with _user_errors():
        pricing = _n(pricing)
        res = api.prices(gpu=_n(gpu), pricing=None if pricing == "any" else pricing, provider=_n(provider),
                         region=_n(region), min_vram_gb=_opt(min_vram_gb), max_price_usd_per_gpu_hour=_opt(max_price),
                         gpus=_opt(gpus), limit=_n(limit))
        d = {"as_of": res.as_of, "stale": res.stale, "data_note": res.data_note, "total_matches": res.total_matches,
             "gpu_note": res.gpu_note, "offers": [o.to_contract() for o in res.offers]}
        v = ui_data.prices_visual([({"pricing": pricing}, d)])
        return _calc_out("price_query", d, v, list(res.notices))


def calc_recommend(model, workload, context_tokens, users, min_tps, precisions, method, dataset_tokens,
                   objective, budget, deadline, top_n) -> tuple:
    with _user_errors():
        workload = _n(workload) or "serve"
        goal = {"workload": workload, "objective": _n(objective), "top_n": _n(top_n), "budget_usd": _opt(budget),
                "deadline_hours": _opt(deadline)}
        if workload == "serve":
            goal |= {"context_tokens": _n(context_tokens), "concurrent_users": _n(users),
                     "min_tokens_per_s_per_user": _opt(min_tps), "precisions": _n(precisions)}
        else:
            goal |= {"method": _n(method), "dataset_tokens": _n(dataset_tokens)}
        rec = api.recommend(model=_n(model), **goal)
        d = json.loads(json.dumps(rec.model_dump(), default=str))
        return _calc_out("recommend_gpus", d, ui_data.recommend_visual(d), d.get("assumptions", []))


def _outputs() -> tuple:
    summary = gr.Markdown()
    plot = gr.BarPlot(x="item", y="value", color="part", height=320, show_label=False, visible="hidden")
    table = gr.Dataframe(interactive=False, visible=False, wrap=True)
    return summary, plot, table


def _calc_tab(title: str, button: str, fn: Any, api_name: str, make_inputs: Any) -> None:
    """One calculator tab: the form (built by make_inputs) and its button on the left, the outputs on the right."""
    with gr.Tab(title):
        with gr.Row():
            with gr.Column(scale=2):
                inputs = make_inputs()
                btn = gr.Button(button, variant="primary")
            with gr.Column(scale=3):
                outs = _outputs()
        btn.click(fn, inputs, list(outs), api_name=api_name)


def _calculators(models: list[str], gpus: list[str]) -> None:
    def model_box(value: str = "llama-3-8b") -> gr.Dropdown:
        return gr.Dropdown(models, value=value, label="Model", allow_custom_value=True)

    def gpu_box(value: str | None = "H100", label: str = "GPU") -> gr.Dropdown:
        return gr.Dropdown(gpus, value=value, label=label, allow_custom_value=True)

    precisions = ["", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "q4_k_m", "q8_0"]
    _calc_tab("VRAM", "Estimate memory", calc_vram, "vram",
              lambda: [model_box(),
                       gr.Dropdown(["inference", "full", "lora", "qlora"], value="inference", label="Method"),
                       gr.Dropdown(precisions, value="", label="Weight precision (empty: default)"),
                       gr.Number(label="Sequence length (tokens)", value=8192, precision=0),
                       gr.Number(label="Batch", value=1, precision=0), gr.Number(label="GPUs", value=1, precision=0),
                       gpu_box("RTX 4090", "GPU (for the fit verdict)"),
                       gr.Number(label="...or GPU memory (GB)", value=None)])
    _calc_tab("Speed", "Estimate speed", calc_speed, "speed",
              lambda: [model_box(), gpu_box(), gr.Dropdown(precisions, value="", label="Precision (empty: bf16)"),
                       gr.Dropdown(["", "vllm", "sglang", "tensorrt-llm", "llama.cpp", "pytorch-eager"], value="",
                                   label="Engine (empty: vLLM)", allow_custom_value=True),
                       gr.Number(label="Batch (concurrent sequences)", value=1, precision=0),
                       gr.Number(label="Prompt tokens", value=512, precision=0),
                       gr.Number(label="Output tokens", value=256, precision=0),
                       gr.Number(label="GPUs", value=1, precision=0)])
    _calc_tab("Training time", "Estimate training time", calc_train, "train_time",
              lambda: [model_box(), gpu_box("A100"),
                       gr.Dropdown(["lora", "qlora", "full"], value="lora", label="Method"),
                       gr.Number(label="Dataset tokens (per epoch)", value=100_000_000),
                       gr.Number(label="Epochs", value=1),
                       gr.Number(label="Micro-batch per GPU", value=None, precision=0),
                       gr.Number(label="Sequence length", value=None, precision=0),
                       gr.Number(label="GPUs", value=1, precision=0)])
    _calc_tab("Prices", "Find offers", calc_prices, "prices",
              lambda: [gpu_box("H100", "GPU (model or family; empty: any)"),
                       gr.Radio(["any", "on-demand", "spot"], value="on-demand", label="Pricing"),
                       gr.Textbox(label="Provider (e.g. aws, lambda, runpod)"),
                       gr.Textbox(label="Region contains (e.g. us-east, europe)"),
                       gr.Number(label="Min GB per GPU", value=None),
                       gr.Number(label="Max USD per GPU-hour", value=None),
                       gr.Number(label="GPUs per instance", value=None, precision=0),
                       gr.Number(label="Rows", value=20, precision=0)])
    _calc_tab("Recommend", "Recommend GPUs", calc_recommend, "recommend",
              lambda: [model_box(), gr.Radio(["serve", "finetune"], value="serve", label="Workload"),
                       gr.Number(label="Serve: context tokens per request", value=4096, precision=0),
                       gr.Number(label="Serve: concurrent users", value=10, precision=0),
                       gr.Number(label="Serve: min tokens/s per user", value=None),
                       gr.Dropdown(precisions[1:], value=[], multiselect=True,
                                   label="Serve: allowed precisions (in order)"),
                       gr.Dropdown(["lora", "qlora", "full"], value="lora", label="Fine-tune: method"),
                       gr.Number(label="Fine-tune: dataset tokens", value=20_000_000),
                       gr.Radio(["cheapest", "fastest", "value"], value="cheapest", label="Objective"),
                       gr.Number(label="Budget (USD)", value=None), gr.Number(label="Deadline (hours)", value=None),
                       gr.Number(label="Options to show", value=5, precision=0)])


# ---------------------------------------------------------------- layout and launch

def build_demo() -> gr.Blocks:
    """The whole app (nothing heavy is loaded until the first question)."""
    models = [m["id"] for m in api.list_models()]
    gpus = [g["name"] for g in api.list_gpus()]
    with gr.Blocks(title="GPU Advisor") as demo:
        thread = gr.State(None)
        gr.Markdown("## GPU Advisor\nWhich cloud GPU to rent for LLM work: will it fit, how fast, what it costs. "
                    "Ask in English or Urdu.")
        with gr.Tab("Chat"):
            with gr.Row():
                with gr.Column(scale=3):
                    chatbot = gr.Chatbot(height=560, label="Chat", elem_id="chat", buttons=["copy"],
                                         feedback_options=None)
                    with gr.Row():
                        box = gr.Textbox(show_label=False, placeholder="Ask about a GPU, a model, prices or costs...",
                                         scale=5, max_lines=6, elem_id="question", autofocus=True,
                                         max_length=ui_data.MAX_QUESTION_CHARS)
                        send = gr.Button("Send", variant="primary", scale=1, min_width=80)
                    with gr.Row():
                        new = gr.Button("New chat", size="sm", scale=0, min_width=100)
                        status = gr.Markdown(_status(_backend_label(), None), elem_id="status")
                    examples = gr.Examples(EXAMPLES, inputs=[box], label="Examples (click to ask)")
                with gr.Column(scale=2):
                    plot = gr.BarPlot(x="item", y="value", color="part", height=360, elem_id="chart", show_label=False,
                                      visible="hidden")
                    note = gr.Markdown(elem_id="data-note")
                    table = gr.Dataframe(interactive=False, visible=False, wrap=True, elem_id="table", max_height=400)
            outputs = [chatbot, plot, table, note, box, thread, status]
            box.submit(respond, [box, chatbot, thread], outputs, api_name="chat")
            send.click(respond, [box, chatbot, thread], outputs, api_visibility="private")
            examples.load_input_event.then(respond, [box, chatbot, thread], outputs, api_visibility="private")
            new.click(new_chat, None, outputs, api_name="new_chat")
        with gr.Tab("Calculators"):
            _calculators(models, gpus)
        gr.api(ask, api_name="ask", concurrency_limit=None)
    return demo


def launch(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, *, block: bool = True,
           quiet: bool = False) -> str:
    """Serve the app (no share link, no SSR); returns its local URL when block is False."""
    auth = None
    creds = os.environ.get("GPU_ADVISOR_AUTH", "")
    if creds:  # optional basic auth for team deployments: GPU_ADVISOR_AUTH=user:password
        user, _, pw = creds.partition(":")
        if not user or not pw:
            raise SystemExit("GPU_ADVISOR_AUTH must be user:password")
        auth = (user, pw)
    _, url, _ = demo.launch(server_name=host, server_port=port, share=False, ssr_mode=False, auth=auth,
                            prevent_thread_lock=not block, quiet=quiet, css=CSS, show_error=False)
    demo.app.add_api_route("/api/ask", rest_ask, methods=["POST"])  # plain JSON, beside Gradio's queued /ask
    return url


def _warm() -> None:
    """Load the agent and the price database now, so the first question answers fast."""
    try:
        _advisor()
        api.price_db()
    except Exception:  # a warm-up failure will show again, with a message, on the first question
        log.exception("warm-up failed")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="GPU Advisor web app (Gradio)")
    p.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
                   help="interface to listen on (default: $GRADIO_SERVER_NAME, else 127.0.0.1)")
    p.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                   help="port (default: $GRADIO_SERVER_PORT, else 7860)")
    p.add_argument("--backend", help="router (default) or an LLM backend such as openai:MODEL "
                                     "(default: $GPU_ADVISOR_BACKEND, else router)")
    args = p.parse_args(argv)
    global BACKEND
    BACKEND = args.backend
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own startup checks, one line each
    demo = build_demo()
    launch(demo, args.host, args.port, block=False)
    _warm()
    demo.block_thread()


if __name__ == "__main__":
    main()
