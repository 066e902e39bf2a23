"""A mock Slack Web API on 127.0.0.1 and helpers that send signed Slack requests to the bot.

The mock records every call (Web API methods and slash-command response_url posts); nothing
leaves loopback. The bot runs in-process: `app.dispatch(BoltRequest)` with signed bodies.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode

from slack_bolt import BoltRequest, BoltResponse
from slack_sdk.signature import SignatureVerifier

BOT_TOKEN = "xoxb-test-7f3c9d-not-a-real-token"
SIGNING_SECRET = "test-signing-secret-5e1a"
TEAM = "T0TEST"


class MockSlack:
    """Records calls; answers auth.test, chat.postMessage, chat.update, reactions.add and response_urls."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail: dict[str, str] = {}  # method -> Slack error to answer with
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
                if "json" in (self.headers.get("content-type") or ""):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[0] for k, v in parse_qs(raw).items()}
                if isinstance(body.get("blocks"), str):
                    body["blocks"] = json.loads(body["blocks"])
                status, payload = mock._answer(self.path, body, self.headers.get("authorization", ""))
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "text/plain" if isinstance(payload, str) else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.api_url = f"http://127.0.0.1:{self.port}/api/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def response_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/respond/{name}"

    def _answer(self, path: str, body: dict[str, Any], auth: str) -> tuple[int, Any]:
        method = path.removeprefix("/api/") if path.startswith("/api/") else path
        with self._lock:
            self.calls.append({"method": method, "body": body, "auth": auth, "at": time.monotonic()})
            ts = f"1800000000.{next(self._ts):06d}"
        if path.startswith("/respond/"):
            return 200, "ok"
        if method in self.fail:
            return 200, {"ok": False, "error": self.fail[method]}
        if method == "auth.test":
            return 200, {"ok": True, "url": "https://test.slack.com/", "team": "Test", "user": "gpu-advisor",
                         "team_id": TEAM, "user_id": "UBOT", "bot_id": "BBOT"}
        if method == "chat.postMessage":
            return 200, {"ok": True, "channel": body.get("channel"), "ts": ts,
                         "message": {"text": body.get("text"), "ts": ts}}
        if method == "chat.update":
            return 200, {"ok": True, "channel": body.get("channel"), "ts": body.get("ts"), "text": body.get("text")}
        if method == "reactions.add":
            return 200, {"ok": True}
        return 200, {"ok": False, "error": "unknown_method"}

    def calls_to(self, method: str, channel: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [c["body"] for c in self.calls
                    if c["method"] == method and (channel is None or c["body"].get("channel") == channel)]

    def responses(self, name: str) -> list[dict[str, Any]]:
        return self.calls_to(f"/respond/{name}")

    def wait_for(self, check: Callable[[], Any], timeout_s: float = 10.0) -> Any:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            got = check()
            if got:
                return got
            time.sleep(0.02)
        raise AssertionError("the mock Slack did not receive the expected call in time")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RecordingAdvisor:
    """Wraps an advisor; keeps (question, thread_id, Answer) of every ask."""

    def __init__(self, inner: Any = None, fail: Exception | None = None, delay_s: float = 0.0):
        self.inner, self.fail, self.delay_s = inner, fail, delay_s
        self.asked: list[tuple[str, str, Any]] = []
        self.owners: list[str | None] = []

    def ask(self, question: str, thread_id: str | None = None, owner: str | None = None) -> Any:
        self.owners.append(owner)
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail is not None:
            self.asked.append((question, thread_id, None))
            raise self.fail
        if self.inner is None:
            ans = {"answer": f"Echo: {question}\n- 42 GB", "citations": [], "tool_calls": []}
        else:
            ans = self.inner.ask(question, thread_id=thread_id, owner=owner)
        self.asked.append((question, thread_id, ans))
        return ans


def new_channel(prefix: str = "C") -> str:
    return prefix + uuid.uuid4().hex[:10].upper()


def new_ts() -> str:
    new_ts.n = getattr(new_ts, "n", 0) + 1  # type: ignore[attr-defined]
    return f"1700000000.{new_ts.n:06d}"  # type: ignore[attr-defined]


def event_body(event: dict[str, Any], event_id: str | None = None) -> str:
    return json.dumps({"token": "legacy-verification-token", "team_id": TEAM, "api_app_id": "A0TEST",
                       "event": event, "type": "event_callback", "event_id": event_id or "Ev" + uuid.uuid4().hex[:10],
                       "event_time": int(time.time()), "authorizations": [{"team_id": TEAM, "user_id": "UBOT",
                                                                            "is_bot": True}]})


def mention(channel: str, text: str, ts: str | None = None, thread_ts: str | None = None,
            user: str = "U0ALICE") -> dict[str, Any]:
    ts = ts or new_ts()
    ev = {"type": "app_mention", "user": user, "text": f"<@UBOT> {text}", "ts": ts, "channel": channel,
          "team": TEAM, "client_msg_id": str(uuid.uuid4()), "event_ts": ts}
    if thread_ts:
        ev["thread_ts"] = thread_ts
    return ev


def dm(channel: str, text: str, ts: str | None = None, user: str = "U0ALICE", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts or new_ts(),
            "channel": channel, "team": TEAM, "client_msg_id": str(uuid.uuid4()), **extra}


def slash_body(text: str, channel: str, response_url: str, user: str = "U0ALICE") -> str:
    return urlencode({"token": "legacy-verification-token", "team_id": TEAM, "team_domain": "test",
                      "channel_id": channel, "channel_name": "gpus", "user_id": user, "user_name": "alice",
                      "command": "/gpu", "text": text, "api_app_id": "A0TEST", "response_url": response_url,
                      "trigger_id": uuid.uuid4().hex})


def signed_headers(body: str, content_type: str = "application/json", timestamp: int | None = None,
                   secret: str = SIGNING_SECRET, **extra: str) -> dict[str, list[str]]:
    ts = str(timestamp if timestamp is not None else int(time.time()))
    sig = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    headers = {"content-type": [content_type], "x-slack-signature": [sig], "x-slack-request-timestamp": [ts]}
    headers.update({k.replace("_", "-"): [v] for k, v in extra.items()})
    return headers


def send(app: Any, body: str, content_type: str = "application/json", **kw: Any) -> BoltResponse:
    return app.dispatch(BoltRequest(body=body, headers=signed_headers(body, content_type, **kw)))
