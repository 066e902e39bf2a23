"""A team deployment for real: app and bot processes sharing PostgreSQL (threads) and Redis (limits, dedupe).

Each process has its own data directory, so nothing is shared except the two services. Skips, with
the reason, when PostgreSQL or Redis is not running on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.slack.mock_slack import BOT_TOKEN, SIGNING_SECRET, MockSlack, event_body, mention, new_channel, signed_headers

ROOT = Path(__file__).resolve().parents[2]
FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], env: dict[str, str], home: Path) -> subprocess.Popen:
    full = dict(os.environ, GPU_ADVISOR_HOME=str(home), GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", **env)
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=full, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _wait_ready(url: str, procs: list[subprocess.Popen], timeout_s: float = 90.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"a server exited early: {p.stderr.read()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not come up in {timeout_s:.0f} s")


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture(scope="module")
def team(pg_url: str, redis_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Two app processes and two Slack bot processes, started together (they load in parallel), on one
    PostgreSQL database and one Redis key prefix; a mock Slack Web API for the bots."""
    url, prefix = redis_url
    services = {"GPU_ADVISOR_DATABASE_URL": pg_url, "GPU_ADVISOR_REDIS_URL": url, "GPU_ADVISOR_REDIS_PREFIX": prefix}
    mock = MockSlack()
    app_env = dict(services, GPU_ADVISOR_AUTH="alice:alice-pw,bob:bob-pw")
    bot_env = dict(services, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=mock.api_url)
    home = tmp_path_factory.mktemp("team")
    app_ports, bot_ports = [_port(), _port()], [_port(), _port()]
    procs = [_start(["app.py", "--port", str(p)], app_env, home / f"app{i}") for i, p in enumerate(app_ports)]
    procs += [_start(["-m", "assistant.main", "slack", "--port", str(p)], bot_env, home / f"bot{i}")
              for i, p in enumerate(bot_ports)]
    try:
        apps = [f"http://127.0.0.1:{p}/" for p in app_ports]
        bots = [f"http://127.0.0.1:{p}/" for p in bot_ports]
        for u in apps:
            _wait_ready(u + "api/threads/x", procs)
        for u in bots:
            _wait_ready(u + "healthz", procs)
        yield {"apps": apps, "bots": bots, "slack": mock}
    finally:
        _stop(procs)
        mock.close()


def test_two_app_processes_alternate_turns_of_one_conversation(team):
    a, b = team["apps"]
    alice = ("alice", "alice-pw")
    first = httpx.post(a + "api/ask", json={"question": FIT_Q, "thread_id": "team-plan"}, auth=alice, timeout=120)
    assert first.status_code == 200, first.text
    second = httpx.post(b + "api/ask", json={"question": "What if I use 32k context instead?",
                                             "thread_id": "team-plan"}, auth=alice, timeout=120)
    assert second.status_code == 200, second.text
    vram = [c for c in second.json()["tool_calls"] if c["name"] == "vram_calculator"]
    assert vram and vram[0]["args"]["model"] == "llama-3-8b" and vram[0]["args"]["seq_len"] == 32768
    third = httpx.post(a + "api/ask", json={"question": "and in int4?", "thread_id": "team-plan"}, auth=alice,
                       timeout=120)
    assert third.status_code == 200
    history = httpx.get(a + "api/threads/team-plan", auth=alice, timeout=30)
    assert history.status_code == 200
    assert [t["question"] for t in history.json()["turns"]] == [FIT_Q, "What if I use 32k context instead?",
                                                                "and in int4?"]
    # another user, on either process: the id is unknown to them, and their own turn starts fresh
    assert httpx.get(b + "api/threads/team-plan", auth=("bob", "bob-pw"), timeout=30).status_code == 404
    bob = httpx.post(b + "api/ask", json={"question": "What if I use 32k context instead?",
                                          "thread_id": "team-plan"}, auth=("bob", "bob-pw"), timeout=120)
    assert bob.status_code == 200
    assert not [c for c in bob.json()["tool_calls"] if c["args"].get("model") == "llama-3-8b"]
    assert httpx.get(a + "api/threads/team-plan", auth=alice, timeout=30).json()["turns"][-1]["question"] == \
        "and in int4?"


def _post_event(url: str, body: str, **headers: str) -> int:
    hdrs = {k: v[0] for k, v in signed_headers(body, **headers).items()}
    return httpx.post(url, content=body.encode(), headers=hdrs, timeout=30).status_code


def test_slack_retry_delivered_to_the_other_bot_is_answered_once(team):
    mock, urls = team["slack"], team["bots"]
    ch = new_channel()
    body = event_body(mention(ch, "Cheapest H100 per hour?"))
    assert _post_event(urls[0] + "slack/events", body) == 200
    # Slack did not see that ack in time and retries, through the load balancer, at the other bot
    assert _post_event(urls[1] + "slack/events", body, x_slack_retry_num="1",
                       x_slack_retry_reason="http_timeout") == 200
    mock.wait_for(lambda: mock.calls_to("chat.update", ch), timeout_s=60)
    time.sleep(1.0)  # a second answer, if any, would have been posted by now
    assert len(mock.calls_to("chat.update", ch)) == 1 and len(mock.calls_to("chat.postMessage", ch)) == 1
    # a follow-up in the thread, through the other bot, continues the conversation stored in PostgreSQL
    ts = json.loads(body)["event"]["ts"]
    follow = event_body(mention(ch, "and on spot?", thread_ts=ts))
    assert _post_event(urls[1] + "slack/events", follow) == 200
    mock.wait_for(lambda: len(mock.calls_to("chat.update", ch)) == 2, timeout_s=60)
    assert "H100" in mock.calls_to("chat.update", ch)[1]["text"]
