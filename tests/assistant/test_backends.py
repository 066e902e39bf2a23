"""Real-LLM backends through the same tools: scripted fake chat models, the grounding guard, fallback,
and a real OpenAI-compatible HTTP server on loopback (chat completions with tool calls, streaming)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from assistant.service.advisor import Advisor
from assistant.runtime.backends import BackendError, make_chat_model, resolve_backend
from assistant.engine.grounding import check


class ToolFake(FakeMessagesListChatModel):
    """A scripted model that accepts tools (the stock fake raises in bind_tools)."""

    def bind_tools(self, tools, **kw):
        return self


class Boom(ToolFake):
    exc: type = ConnectionRefusedError

    def _generate(self, *a, **kw):
        raise self.exc("connection refused (127.0.0.1:9)")


def call(name, args, i=1):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{i}", "type": "tool_call"}])


Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"
VRAM_ARGS = {"model": "llama-3-8b", "method": "inference", "weight_precision": "fp16", "seq_len": 8192,
             "gpu_memory_gb": 24}


def advisor(tmp_path, model):
    return Advisor(checkpoint_path=str(tmp_path / "t.sqlite"), chat_model=model)


def vram_total():
    from assistant.service.registry import run_tool
    return run_tool("vram_calculator", VRAM_ARGS)["total_gb"]


def test_good_model_answer_is_accepted(tmp_path):
    total = vram_total()
    m = ToolFake(responses=[call("vram_calculator", VRAM_ARGS),
                            AIMessage(content=f"Yes, it fits: it needs {total:.1f} GB of the 24 GB card [ga-31].")])
    a = advisor(tmp_path, m).ask(Q)
    assert a.backend == "custom" and a.grounding["ok"] is True
    assert f"{total:.1f} GB" in a.answer and [c.name for c in a.tool_calls] == ["vram_calculator"]


def test_invented_price_is_rewritten_from_tool_results(tmp_path):
    m = ToolFake(responses=[call("price_query", {"gpu": "H100", "pricing": "on-demand", "limit": 3}),
                            AIMessage(content="The cheapest H100 costs $0.01 per hour. Rent it now!")])
    a = advisor(tmp_path, m).ask("Cheapest H100 per hour?")
    assert a.grounding["ok"] is False and "0.01" in " ".join(a.grounding["unbacked"])
    assert "$0.01" not in a.answer
    cheapest = a.tool_calls[0].result["offers"][0]
    assert cheapest["provider"] in a.answer  # rewritten by the router's composer from the real result
    assert not check(a.answer, [c.result for c in a.tool_calls], ["Cheapest H100 per hour?"])


def test_model_that_skips_tools_falls_back(tmp_path):
    m = ToolFake(responses=[AIMessage(content="Sure, 80 GB is plenty.")])
    a = advisor(tmp_path, m).ask(Q)
    assert a.backend.startswith("router (fallback: the model called no tool")
    assert a.tool_calls and a.tool_calls[0].name == "vram_calculator" and "80 GB is plenty" not in a.answer


@pytest.mark.parametrize("exc", [ConnectionRefusedError, TimeoutError, RuntimeError])
def test_model_errors_and_timeouts_fall_back(tmp_path, exc):
    a = advisor(tmp_path, Boom(responses=[], exc=exc)).ask(Q)
    assert a.backend.startswith(f"router (fallback: {exc.__name__}")
    assert "vram_calculator" in [c.name for c in a.tool_calls] and a.answer


def test_malformed_tool_arguments_get_a_message_then_recovery(tmp_path):
    m = ToolFake(responses=[call("vram_calculator", {"model": "llama-3-8b", "method": "teleport"}, 1),
                            call("vram_calculator", VRAM_ARGS, 2),
                            AIMessage(content="It fits [ga-31].")])
    a = advisor(tmp_path, m).ask(Q)
    first = a.tool_calls[0].result
    assert "error" in json.dumps(first).lower() or "teleport" in json.dumps(first)
    assert a.tool_calls[1].result["total_gb"] > 0 and a.backend == "custom"


def test_looping_model_is_bounded_and_falls_back(tmp_path):
    m = ToolFake(responses=[call("search_guide", {"question": "x"}, i) for i in range(1, 40)])
    a = advisor(tmp_path, m).ask(Q)
    assert a.backend.startswith("router (fallback:")


def test_follow_up_after_fallback_keeps_the_thread(tmp_path):
    adv = advisor(tmp_path, Boom(responses=[]))
    adv.ask(Q, thread_id="t")
    b = adv.ask("What if I use 32k context instead?", thread_id="t")
    v = [c for c in b.tool_calls if c.name == "vram_calculator"][0]
    assert v.args["seq_len"] == 32768 and v.args["model"] == "llama-3-8b"


def test_backend_ids_and_missing_packages_or_keys(monkeypatch):
    assert resolve_backend(None) == "router"
    monkeypatch.setenv("GPU_ADVISOR_BACKEND", "openai:gpt-4o-mini")
    assert resolve_backend(None) == "openai:gpt-4o-mini"
    with pytest.raises(BackendError, match="Unknown backend"):
        resolve_backend("cohere:command")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        make_chat_model("openai:gpt-4o-mini")
    with pytest.raises(BackendError, match=r"gpu-advisor\[anthropic\]"):
        make_chat_model("anthropic:claude-x")


# ---- a real OpenAI-compatible server on loopback ----------------------------------------------------

class FakeOpenAI(BaseHTTPRequestHandler):
    requests: list = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.requests.append(body)
        tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_msgs:
            msg = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "vram_calculator", "arguments": json.dumps(VRAM_ARGS)}}]}
            finish = "tool_calls"
        else:
            total = json.loads(tool_msgs[-1]["content"])["total_gb"]
            msg = {"role": "assistant", "content": f"Yes: {total:.1f} GB on the 24 GB card [ga-31]."}
            finish = "stop"
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta = dict(msg)
            if delta.get("tool_calls"):
                delta["tool_calls"] = [dict(delta["tool_calls"][0], index=0)]
            for chunk in ({"role": "assistant", **{k: v for k, v in delta.items() if k != "role"}},):
                data = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                        "choices": [{"index": 0, "delta": chunk, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            end = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
            self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
            return
        out = {"id": "x", "object": "chat.completion", "created": int(time.time()), "model": "fake",
               "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def openai_server(monkeypatch):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{srv.server_address[1]}/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    FakeOpenAI.requests = []
    yield srv
    srv.shutdown()


def test_openai_backend_end_to_end_over_http(tmp_path, openai_server):
    a = Advisor(backend="openai:fake-model", checkpoint_path=str(tmp_path / "t.sqlite")).ask(Q)
    assert a.backend == "openai:fake-model" and a.grounding["ok"]
    assert [c.name for c in a.tool_calls] == ["vram_calculator"]
    assert f"{a.tool_calls[0].result['total_gb']:.1f} GB" in a.answer
    sent = FakeOpenAI.requests[0]
    assert sent["messages"][0]["role"] == "system" and "tool" in sent["messages"][0]["content"]
    assert {t["function"]["name"] for t in sent["tools"]} >= {"vram_calculator", "search_guide"}


def test_openai_streaming_over_http(openai_server):
    model = make_chat_model("openai:fake-model")
    chunks = list(model.bind_tools([]).stream("hi")) if False else list(model.stream("hello"))
    assert chunks and any(c.tool_call_chunks for c in chunks)


def test_openai_server_down_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    a = Advisor(backend="openai:fake-model", checkpoint_path=str(tmp_path / "t.sqlite")).ask(Q)
    assert a.backend.startswith("router (fallback:") and a.tool_calls
