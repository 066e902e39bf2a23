"""The launched app driven by gradio_client: the /ask endpoint, a follow-up in a thread, bad input."""

import json

import pytest
from gradio_client.exceptions import AppError

FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"


def test_ask_round_trip_matches_the_cli_json(client):
    from assistant.service import api

    d = client.predict("Cheapest H100 per hour?", "", api_name="/ask")
    assert set(d) == set(api.Answer.model_fields)
    assert d["backend"] == "router" and d["language"] == "en" and d["thread_id"]
    prices = [c for c in d["tool_calls"] if c["name"] == "price_query"]
    assert prices and prices[0]["result"]["as_of"] and prices[0]["result"]["offers"]
    assert all({"guide", "passage_id", "quote"} <= set(c) for c in d["citations"])


def test_follow_up_in_the_same_thread(client):
    first = client.predict(FIT_Q, None, api_name="/ask")
    vram = [c for c in first["tool_calls"] if c["name"] == "vram_calculator"][0]
    assert vram["args"]["seq_len"] == 8192 and vram["result"]["fit"]["fits"] is True

    second = client.predict("What if I use 32k context instead?", first["thread_id"], api_name="/ask")
    assert second["thread_id"] == first["thread_id"]
    vram2 = [c for c in second["tool_calls"] if c["name"] == "vram_calculator"][0]
    assert vram2["args"]["seq_len"] == 32768 and vram2["args"]["model"] == "llama-3-8b"
    assert vram2["result"]["total_gb"] > vram["result"]["total_gb"]


@pytest.mark.parametrize("question, thread_id, message", [
    pytest.param("", "", "The question is empty", id="empty"),
    pytest.param("   ", None, "The question is empty", id="blank"),
    pytest.param("x" * 4001, "", "the limit is 4,000", id="too-long"),
    pytest.param("Cheapest H100?", "not a valid id!", "Invalid thread id", id="bad-thread-id"),
])
def test_bad_input_is_a_readable_error(client, question, thread_id, message):
    with pytest.raises(AppError, match=message) as exc:
        client.predict(question, thread_id, api_name="/ask")
    assert "Traceback" not in str(exc.value) and "File \"" not in str(exc.value)


def test_chat_endpoint_last_message_holds_real_values(client):
    history, box, thread_id, status, recent, record = client.predict(FIT_Q, [], "", api_name="/chat")
    assert box == "" and thread_id and recent[0] == [thread_id, FIT_Q]
    assert [m["role"] for m in history] == ["user", "assistant"]  # one answer message, its steps inside
    answer = history[1]["content"][0]["text"]  # the answer right under the question, its chart inside
    assert 'class="ga-chart"' in answer and "19.6" in answer and "How this was worked out" in answer
    assert json.loads(record)["steps"][0]["tool"] == "vram_calculator"  # the typed record the page keeps


def test_calculator_endpoint_error_is_readable(client):
    # A bad value is refused before the calculation runs, with the message on its field (Gradio's validator).
    with pytest.raises(Exception, match="Unknown model 'llama-9000'"):
        client.predict("llama-9000", "inference", "", 2048, 1, 1, "", None, api_name="/vram")


def test_launch_and_ask_stay_on_loopback(app_module, monkeypatch):
    """Offline by construction: no analytics, no Hugging Face calls, no share tunnel (ecosystem-notes sec. 7)."""
    import socket

    from gradio_client import Client

    from tests.app.conftest import free_port

    seen: list = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", lambda self, addr: (seen.append(addr), connect(self, addr))[1])
    monkeypatch.setattr(socket, "getaddrinfo",
                        lambda host, *a, **k: (seen.append((host,)), getaddrinfo(host, *a, **k))[1])
    demo = app_module.build_demo()
    url = app_module.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        assert Client(url, verbose=False).predict("Cheapest H100 per hour?", "", api_name="/ask")["intent"]
    finally:
        demo.close()
    hosts = {a[0] for a in seen if isinstance(a, tuple) and a}
    assert hosts and hosts <= {"127.0.0.1", "localhost", "::1"}, hosts
