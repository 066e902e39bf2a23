"""Credentials, the HTTP server, Socket Mode selection and the app manifest."""

from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant.frontends.slack import bot as slack
from tests.slack.mock_slack import (BOT_TOKEN, SIGNING_SECRET, RecordingAdvisor, event_body, mention, new_channel,
                                    signed_headers)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def slack_env(monkeypatch, slack_mock):
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL", "PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("SLACK_API_URL", slack_mock.api_url)
    return monkeypatch


@pytest.mark.parametrize("missing", ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"])
def test_missing_credential_names_the_variable(slack_env, missing):
    slack_env.delenv(missing)
    with pytest.raises(slack.SlackConfigError, match=f"Set the {missing} environment variable"):
        slack.build_app(advisor=RecordingAdvisor())


def test_malformed_or_rejected_token_is_a_clear_error_without_the_value(slack_env, slack_mock):
    slack_env.setenv("SLACK_BOT_TOKEN", "xoxp-user-token-value")
    with pytest.raises(slack.SlackConfigError, match="starts with xoxb-") as info:
        slack.build_app(advisor=RecordingAdvisor())
    assert "xoxp-user-token-value" not in str(info.value)
    slack_env.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    slack_mock.fail["auth.test"] = "invalid_auth"
    try:
        with pytest.raises(slack.SlackConfigError, match="Slack rejected SLACK_BOT_TOKEN") as info:
            slack.build_app(advisor=RecordingAdvisor())
    finally:
        del slack_mock.fail["auth.test"]
    assert BOT_TOKEN not in str(info.value)


def test_unreachable_api_is_a_clear_error(slack_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    slack_env.setenv("SLACK_API_URL", f"http://127.0.0.1:{port}/api")
    with pytest.raises(slack.SlackConfigError, match="Could not reach the Slack Web API"):
        slack.build_app(advisor=RecordingAdvisor())


def test_api_url_comes_from_the_environment(slack_env, slack_mock):
    before = len(slack_mock.calls_to("auth.test"))
    app = slack.build_app(advisor=RecordingAdvisor())
    assert app.client.base_url == slack_mock.api_url
    assert len(slack_mock.calls_to("auth.test")) == before + 1


def test_socket_mode_needs_no_signing_secret(slack_env):
    slack_env.delenv("SLACK_SIGNING_SECRET")
    assert slack.build_app(advisor=RecordingAdvisor(), socket_mode=True) is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: str, headers: dict[str, list[str]]) -> tuple[int, float]:
    req = urllib.request.Request(url, data=body.encode(), method="POST",
                                 headers={k: v[0] for k, v in headers.items()})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, time.monotonic() - started
    except urllib.error.HTTPError as exc:
        return exc.code, time.monotonic() - started


def test_http_server_acks_before_the_answer_and_rejects_bad_signatures(slack_env, slack_mock):
    import uvicorn

    rec = RecordingAdvisor(delay_s=1.0)  # a slow answer: the ack must not wait for it
    app = slack.build_app(advisor=rec)  # production setting: process_before_response=False
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(slack.build_http_app(app), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        slack_mock.wait_for(lambda: server.started, timeout_s=5)
        url = f"http://127.0.0.1:{port}/slack/events"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            assert resp.status == 200

        ch = new_channel()
        body = event_body(mention(ch, "VRAM for an 8B model?"))
        status, took_s = _post(url, body, signed_headers(body))
        assert status == 200 and took_s < 0.8
        update = slack_mock.wait_for(lambda: slack_mock.calls_to("chat.update", ch), timeout_s=10)
        assert update[0]["text"].startswith("Echo: VRAM for an 8B model?")
        working = slack_mock.calls_to("chat.postMessage", ch)[0]
        assert working["text"] == "Working on it…"

        bad = event_body(mention(new_channel(), "cheapest H100?"))
        assert _post(url, bad, signed_headers(bad, secret="wrong"))[0] == 401
        assert _post(url, bad, signed_headers(bad, timestamp=int(time.time()) - 600))[0] == 401
        challenge = '{"type": "url_verification", "challenge": "abc123", "token": "t"}'
        req = urllib.request.Request(url, data=challenge.encode(), method="POST",
                                     headers={k: v[0] for k, v in signed_headers(challenge).items()})
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert b"abc123" in resp.read()
        time.sleep(0.1)
        assert len(rec.asked) == 1
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def test_run_uses_http_mode_without_an_app_token(slack_env, monkeypatch):
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    slack_env.setenv("PORT", "8123")
    slack.run()
    assert seen["port"] == 8123 and seen["host"] == "127.0.0.1"  # issue 19: not every interface unless asked
    assert "/slack/events" in {r.path for r in seen["app"].routes}
    slack.run(port=9000)
    assert seen["port"] == 9000


def test_run_uses_socket_mode_with_an_app_token(slack_env, monkeypatch):
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    started: list[str] = []
    monkeypatch.setattr(SocketModeHandler, "start", lambda self: started.append(self.app_token))
    slack_env.delenv("SLACK_SIGNING_SECRET")
    slack_env.setenv("SLACK_APP_TOKEN", "xapp-1-test")
    slack.run()
    assert started == ["xapp-1-test"]
    slack_env.setenv("SLACK_APP_TOKEN", "xoxb-wrong-kind")
    with pytest.raises(slack.SlackConfigError, match="SLACK_APP_TOKEN must be an app-level token"):
        slack.run()


def test_manifest_declares_the_scopes_events_and_command():
    manifest = yaml.safe_load((ROOT / "slack-app-manifest.yaml").read_text(encoding="utf-8"))
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read", "chat:write", "im:history", "im:read", "commands", "reactions:write"}
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == {"app_mention", "message.im"}
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/gpu"]
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    assert isinstance(manifest["settings"]["socket_mode_enabled"], bool)


def test_front_end_imports_only_the_api():
    src = (ROOT / "assistant" / "frontends" / "slack" / "bot.py").read_text(encoding="utf-8")
    imports = {ln.split()[1] for ln in src.splitlines() if ln.startswith(("import ", "from "))}
    project = {m for m in imports if m.split(".")[0] in ("assistant", "tools", "knowledge")}
    # the service's api, plus the owner naming of threads and the limits shared through Redis
    assert project == {"assistant.service", "assistant.frontends.slack.blocks", "assistant.threads",
                       "assistant.runtime.limits"}
    assert "from assistant.service import api" in src


def test_rejected_requests_are_logged_bounded_and_without_their_body(make_app, caplog):
    """Issue 19: a 20 MB unsigned POST added 20 MB to the log. Now one short line, no body, no flood."""
    from starlette.testclient import TestClient

    from assistant.frontends.slack import bot as slack
    from tests.slack.mock_slack import RecordingAdvisor

    rec = RecordingAdvisor()
    http = TestClient(slack.build_http_app(make_app(rec)))
    marker = "BODY-MARKER-" + "x" * 20_000
    caplog.set_level(logging.INFO)
    for _ in range(5):
        r = http.post("/slack/events", content=marker.encode(), headers={"content-type": "application/json"})
        assert r.status_code == 401
    big = http.post("/slack/events", content=b"y" * (slack.MAX_BODY_BYTES + 1))
    assert big.status_code == 413
    lines = [r.getMessage() for r in caplog.records]
    assert not any("BODY-MARKER" in ln or "yyyy" in ln for ln in lines)
    rejected = [ln for ln in lines if "rejected a Slack request" in ln]
    assert len(rejected) == 1 and len(rejected[0]) < 200  # the rest are counted into the next line
    assert rec.asked == []
