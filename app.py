"""GPU Advisor web app: a Gradio front end over assistant.service.api (chat, calculators, an /ask endpoint).

Run `python app.py [--host H] [--port P]` (defaults: GRADIO_SERVER_NAME / GRADIO_SERVER_PORT, else
127.0.0.1:7860). It runs offline: no analytics, no Hugging Face calls, no share link.
"""

from __future__ import annotations

import os

# Before gradio is imported: it reads these at import time (ecosystem-notes sec. 3 and 7).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import importlib.util  # noqa: E402
import sys  # noqa: E402

if importlib.util.find_spec("matplotlib") is None:
    # Gradio tries `import matplotlib` twice per queued request (to switch its backend); without it
    # installed each try scans sys.path again, about 7% of the server's time under load
    # (benchmarks/app_load.py, py-spy). A None entry makes the import fail at once, as it would anyway.
    sys.modules["matplotlib"] = None  # type: ignore[assignment]

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import threading  # noqa: E402
from typing import Any, Iterator  # noqa: E402

import gradio as gr  # noqa: E402
from fastapi import Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402

from assistant.service import api  # noqa: E402
from assistant.frontends.web import ui_data  # noqa: E402
from assistant.frontends.web import assets as web_assets  # noqa: E402
from assistant.frontends.web import calc as web_calc  # noqa: E402
from assistant.frontends.web import chat as web_chat  # noqa: E402
from assistant.frontends.web import queue as web_queue  # noqa: E402
from assistant.frontends.web import guard as web_guard  # noqa: E402
from assistant.frontends.web import security as web_security  # noqa: E402
from assistant.frontends.web import sessions as web_sessions  # noqa: E402
from assistant.runtime.settings import apply_trusted_proxies, session_hours, session_secret  # noqa: E402
from assistant.threads import StoreUnavailable  # noqa: E402
from tools.errors import AdvisorError  # noqa: E402

log = logging.getLogger("gpu_advisor.app")
for _name, _value in web_queue.QUEUE_ENV.items():  # read when the queue is made: no per-event monitoring summary
    os.environ.setdefault(_name, _value)

EXAMPLES = [
    "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?",
    "Cheapest H100 per hour?",
    "How fast is Llama-3-70B in int4 on an H100?",
    "Which GPU should I rent to serve Llama-3-8B for 10 users?",
    "What does it cost per million tokens to serve llama-3-8b on an L40S?",
    "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟",
]
# Gradio queue settings, measured by benchmarks/app_load.py (20 clients): /ask unlimited (a limit leaves
# the queue's loop polling every millisecond while requests wait; the advisor's own lock already runs one
# turn at a time), queue status sent every 5 s instead of to every waiting client after each job, and
# each session's page config rendered only when needed (web_queue.LeanSessionState: 6.5 ms on the event
# loop and ~190 KB per new session otherwise, i.e. per request of Gradio's HTTP call API).
ASK_CONCURRENCY: int | None = None
DEFAULT_CONCURRENCY: int | None = 4  # chat turns and calculators at once (Gradio's default is 1)
QUEUE_STATUS_RATE_S: float | str = 5.0
LEAN_SESSIONS = True
BACKEND: str | None = None  # None: $GPU_ADVISOR_BACKEND, else the embedded router (set by --backend)
CSS = web_assets.CSS  # the stylesheet and page script live in assistant/frontends/web/assets.py
_ADVISOR_LOCK = threading.Lock()


def _advisor() -> Any:
    with _ADVISOR_LOCK:  # the first call builds the agent; warm-up and a first question may race
        return api.advisor(BACKEND)


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


# ---------------------------------------------------------------- chat

def _status(backend: str) -> str:
    """Only worth a line when an LLM answers, or when it fell back to the built-in router."""
    if backend.startswith("router ("):
        return "The language model was unavailable; the built-in advisor answered."
    return "" if backend == "router" else f"Answered with {backend}."


def respond(message: str, history: list | None, thread_id: str | None, recent: list | None = None,
            lang: str | None = "auto", request: gr.Request = None) -> Iterator[tuple]:
    """Stream one turn: the question, the steps as they run, then the answer (its steps folded inside).

    Yields (history, textbox, thread_id, status, recent threads, the answer's typed record as JSON for
    the browser to keep); the last yield holds real values."""
    try:
        q = ui_data.check_question(message)
    except ui_data.BadInput as exc:
        gr.Warning(str(exc))
        yield list(history or []), message, thread_id, gr.skip(), gr.skip(), gr.skip()
        return
    owner = _owner(request) if request is not None else None
    hist, tid, ans, view = list(history or []), thread_id, None, None
    with _user_errors():
        for hist, tid, ans, view in web_chat.turn(_advisor(), q, history or [], thread_id, owner,
                                                  lang=lang or "auto"):
            yield hist, "", tid, gr.skip(), gr.skip(), gr.skip()
    status = _status(ans.backend) if ans is not None else ""
    record = json.dumps(view, ensure_ascii=False) if view else ""
    yield hist, "", tid, status, web_chat.remember(recent, tid, q), record


def new_chat() -> tuple:
    """A fresh conversation: empty chat; the thread id comes with the first question."""
    return [], "", "", ""


def open_thread(tid: str | None, records: str | None = None, request: gr.Request = None) -> tuple:
    """The chat of a thread this user owns (from the conversation store; `records`: this browser's typed
    records of its answers, a JSON list); empty when unknown."""
    if not tid:
        return [], ""
    try:
        tid = ui_data.check_thread_id(tid)
        owner = _owner(request) if request is not None else None
        rec = _advisor().store.load(owner, tid) if owner else None
    except (AdvisorError, ui_data.BadInput):
        rec = None
    if rec is None:
        gr.Warning("That conversation is not available (it may have expired); starting a new one.")
        return [], ""
    return web_chat.restore_history(rec, web_chat.parse_records(records)), tid


def restore(records: str | None = None, request: gr.Request = None) -> tuple:
    """On page load: the thread named by ?thread= in the address, with its turns (`records`: as in open_thread)."""
    tid = request.query_params.get("thread") if request is not None else None
    return open_thread(tid, records, request) if tid else ([], "")


def _recent_choices(recent: list | None) -> Any:
    items = [r for r in (recent or []) if isinstance(r, (list, tuple)) and len(r) == 2]
    return gr.Radio(choices=[(web_chat.recent_title(q), str(t)) for t, q in items], value=None, visible=bool(items))


_RateLimit = web_security.RateLimit  # per client; in Redis when GPU_ADVISOR_REDIS_URL is set
_LIMIT = _RateLimit()
_THROTTLE = web_security.LoginThrottle()


def _owner(request: Any, user: str | None = None) -> str:
    """Whose threads a request may read: the signed-in user, else everyone unsigned (auth off)."""
    from assistant.threads import web_owner

    return web_owner(user or getattr(request, "username", None))


def _answer_json(ans: Any) -> dict:
    """The answer as plain JSON types: the shape of `gpu-advisor ask --json`."""
    return json.loads(json.dumps(ans.model_dump(), ensure_ascii=False, default=str))


def ask(question: str, thread_id: str | None = None, request: gr.Request = None) -> dict:
    """Answer one question in a thread (empty thread_id: a new one); the JSON of `gpu-advisor ask --json`
    (the rate limit is the guard's, over every route that does work)."""
    with _user_errors():
        q = ui_data.check_question(question)
        tid = ui_data.check_thread_id(thread_id)
        ans = _advisor().ask(q, thread_id=tid, owner=_owner(request))
        return _answer_json(ans)


async def rest_thread(request: Request) -> JSONResponse:
    """GET /api/threads/{thread_id}: {"thread_id", "turns": [{"question", "answer", "at"}]} for its owner; 404 else."""
    user, refused = web_security.rest_auth(request, _THROTTLE)
    if refused:
        return refused
    tid = request.path_params.get("thread_id", "")
    try:
        rec = await run_in_threadpool(_advisor().store.load, _owner(request, user), tid)
    except StoreUnavailable as exc:  # the store is down: say so, never "no such thread"
        return _unavailable(exc)
    except (AdvisorError, ui_data.BadInput):
        rec = None
    if rec is None:
        return JSONResponse({"error": f"No thread {tid[:40]!r} for this user."}, status_code=404)
    return JSONResponse(rec.as_json())


async def rest_ask(request: Request) -> JSONResponse:
    """POST /api/ask {"question": ..., "thread_id": ..., "lang": "en"|"ur"}: the JSON of `gpu-advisor ask --json`.

    The same answer as the Gradio /ask endpoint without its queue and event stream, for scripts and
    load: 400 with {"error": ...} for bad input, 401 without valid credentials when GPU_ADVISOR_AUTH
    is set, 429 over the per-client rate limit."""
    user, refused = web_security.rest_auth(request, _THROTTLE)
    if refused:
        return refused
    try:
        body = web_security.parse_json_body(await request.body())
    except ValueError as exc:
        return JSONResponse({"error": f'{exc} Send a JSON object {{"question": "...", "thread_id": "..."}}.'},
                            status_code=400)
    if not isinstance(body, dict) or set(body) - {"question", "thread_id", "lang"}:
        return JSONResponse({"error": 'send a JSON object {"question": "...", "thread_id": "..." (optional)}'},
                            status_code=400)
    return await run_in_threadpool(_rest_answer, body, _owner(request, user))


def _rest_answer(body: dict[str, Any], owner: str) -> JSONResponse:
    try:
        q = ui_data.check_question(body.get("question"))
        tid = ui_data.check_thread_id(body.get("thread_id"))
        if tid:  # a thread that cannot be read must not be answered as a fresh one
            _advisor().store.load(owner, tid)
        ans = _advisor().ask(q, thread_id=tid, owner=owner, lang=body.get("lang"))
    except StoreUnavailable as exc:  # the team database down is ours, not the caller's
        return _unavailable(exc)
    except (AdvisorError, ui_data.BadInput) as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    except Exception:
        log.exception("unexpected error")
        return JSONResponse({"error": "Something went wrong on our side (details are in the server log)."},
                            status_code=500)
    return JSONResponse(_answer_json(ans))


async def healthz(request: Request) -> JSONResponse:
    """GET /healthz: the process is up and serving (liveness; no credentials needed)."""
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> JSONResponse:
    """GET /readyz: 200 when the conversation store and the price catalog answer, else 503 naming which
    (readiness for a load balancer; no credentials needed, no secrets in the text)."""
    checks = await run_in_threadpool(_readiness)
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


def _readiness() -> dict[str, str]:
    checks: dict[str, str] = {}
    for name, probe in (("store", lambda: _advisor().store.ping()), ("catalog", lambda: api.price_db().info())):
        try:
            probe()
            checks[name] = "ok"
        except Exception as exc:  # any failure means not ready; the message is already redacted
            checks[name] = web_security.scrub_secrets(str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
    return checks


def _unavailable(exc: Exception) -> JSONResponse:
    return JSONResponse({"error": f"{exc} Nothing was lost; try again shortly."}, status_code=503,
                        headers={"Retry-After": "5"})


# ---------------------------------------------------------------- layout and launch

def build_demo() -> gr.Blocks:
    """The whole app (nothing heavy is loaded until the first question)."""
    models = [(m["name"], m["id"]) for m in api.list_models()]  # the picker shows names, the tools get ids
    gpus = [g["name"] for g in api.list_gpus()]
    with gr.Blocks(title="GPU Advisor") as demo:
        # The thread id sits in a hidden field (not gr.State) so the page script can put it in the address.
        thread = gr.Textbox(value="", visible="hidden", elem_id="thread-id")
        recent = gr.BrowserState([], storage_key="gpu-advisor-recent")  # this browser's threads only
        # The last answer's typed record (JSON), which the page script keeps per thread (web_chat.answer_view);
        # the same field carries a thread's records back to the server on load.
        records = gr.Textbox(value="", visible="hidden", elem_id="turn-record")
        gr.Markdown("## GPU Advisor\nWhich cloud GPU to rent for LLM work: will it fit, how fast, what it costs. "
                    "Ask in English or Urdu.", elem_id="intro")
        with gr.Tab("Chat"):
            chatbot = gr.Chatbot(height="68vh", min_height=360, label="Chat", elem_id="chat", buttons=["copy"],
                                 feedback_options=None, autoscroll=False, show_label=False, layout="panel",
                                 examples=[{"text": e} for e in EXAMPLES],
                                 placeholder="Ask which GPU to rent, whether a model fits, how fast it runs or what it costs.")
            with gr.Row(equal_height=True):
                box = gr.Textbox(show_label=False, placeholder="Ask about a GPU, a model, prices or costs...",
                                 scale=5, max_lines=6, elem_id="question", autofocus=True,
                                 max_length=ui_data.MAX_QUESTION_CHARS)
                send = gr.Button("Send", variant="primary", scale=1, min_width=80)
            with gr.Row():
                new = gr.Button("New chat", size="sm", scale=0, min_width=100, elem_id="new-chat")
                answer_lang = gr.Dropdown([("Reply: same language", "auto"), ("Reply: English", "en"), ("جواب: اردو", "ur")],
                                          value="auto", show_label=False, container=False, scale=0, min_width=230,
                                          elem_id="answer-lang", filterable=False)
                status = gr.Markdown("", elem_id="status")
            with gr.Accordion("Recent chats", open=False, elem_id="recent-box"):
                recent_list = gr.Radio([], show_label=False, visible=False, elem_id="recent")
            outputs = [chatbot, box, thread, status, recent, records]
            url_js = web_assets.set_thread_url_js()
            inputs = [box, chatbot, thread, recent, answer_lang]
            for ev in (box.submit(respond, inputs, outputs, api_name="chat"),
                       send.click(respond, inputs, outputs, api_visibility="private"),
                       chatbot.example_select(_example, None, box, api_visibility="private", queue=False).then(
                           respond, inputs, outputs, api_visibility="private")):
                ev.then(None, [thread, records], None, js=web_assets.keep_record_js()).then(
                    _recent_choices, recent, recent_list,
                                                              api_visibility="private", queue=False)
            new.click(new_chat, None, [chatbot, box, thread, status], api_name="new_chat", queue=False).then(
                None, None, None, js=web_assets.clear_thread_url_js())
            recent_list.select(open_thread, [recent_list, records], [chatbot, thread], api_visibility="private",
                               js=web_assets.records_js(from_choice=True)).then(None, [thread], None, js=url_js)
        with gr.Tab("Calculators"):
            web_calc.build_calculators(models, gpus)
        gr.api(ask, api_name="ask", concurrency_limit=ASK_CONCURRENCY)
        demo.load(restore, [records], [chatbot, thread], api_visibility="private",
                  js=web_assets.records_js()).then(
            _recent_choices, recent, recent_list, api_visibility="private", queue=False)
    return demo


def _example(evt: gr.SelectData) -> str:
    value = evt.value if isinstance(evt.value, dict) else {}
    return str(value.get("text") or "")


def launch(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, *, block: bool = True,
           quiet: bool = False) -> str:
    """Serve the app (no share link, no SSR); returns its local URL when block is False."""
    from starlette.middleware import Middleware

    try:  # optional sign-in for team deployments: GPU_ADVISOR_AUTH / GPU_ADVISOR_AUTH_FILE (see README)
        users = web_security.Users.from_env()
    except web_security.AuthConfigError as exc:
        raise SystemExit(str(exc)) from None
    apply_trusted_proxies()  # X-Forwarded-For only from GPU_ADVISOR_TRUSTED_PROXIES
    sessions = web_sessions.SignedSessions(session_secret(), session_hours() * 3600) if users.enabled else None
    # one rate limit over every route that does work, bodies capped while read, sign-in throttling, no uploads
    guard = Middleware(web_guard.WebGuard, throttle=_THROTTLE, limit=_LIMIT, blocks=demo, sessions=sessions)
    demo.queue(status_update_rate=QUEUE_STATUS_RATE_S, default_concurrency_limit=DEFAULT_CONCURRENCY)
    fonts, font_files = web_assets.font_faces()  # Urdu fonts for readers whose system has none
    _, url, _ = demo.launch(server_name=host, server_port=port, share=False, ssr_mode=False,
                            auth=_check_login if users.enabled else None, prevent_thread_lock=not block, quiet=quiet,
                            css=CSS, head=fonts + web_assets.HEAD_JS, allowed_paths=font_files, theme=web_assets.theme(),
                            show_error=False, app_kwargs={"openapi_url": None, "middleware": [guard]})
    if sessions is not None:  # signed sign-ins: every replica with the secret accepts them (sessions.py)
        demo.app.tokens, demo.app.cookie_id = sessions, sessions.cookie_id
    if LEAN_SESSIONS:
        web_queue.use_lean_sessions(demo)
    demo.app.add_api_route("/api/ask", rest_ask, methods=["POST"])  # plain JSON, beside Gradio's queued /ask
    demo.app.add_api_route("/api/threads/{thread_id}", rest_thread, methods=["GET"])
    demo.app.add_api_route("/healthz", healthz, methods=["GET"])  # probes for load balancers
    demo.app.add_api_route("/readyz", readyz, methods=["GET"])
    return url


def _check_login(user: str, password: str) -> bool:
    """Gradio's sign-in check, against the users file as it is now (added users sign in without a restart)."""
    try:
        return web_security.Users.from_env().check(user, password)
    except web_security.AuthConfigError:
        log.exception("the users file cannot be read; sign-in refused")
        return False


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
