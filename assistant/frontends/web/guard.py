"""The web app's guard: ASGI middleware in front of Gradio and the JSON routes.

In one pass before any route runs: one rate limit over every route that does work (429 +
Retry-After), request bodies capped while they are read (413 before a body is held whole; a
Content-Length over the cap is refused without reading), Gradio queue/run bodies checked (400 for
JSON that is not a call of this app, instead of Gradio's 500), failed sign-ins throttled, uploads
refused, and the API description kept from the sign-in page. Blocking work (Redis) runs off the event
loop.
"""

from __future__ import annotations

__all__ = ["WebGuard", "body_limit_bytes"]

import json
import math
import os
import re
from typing import Any, Callable

from starlette.concurrency import run_in_threadpool

from assistant.frontends.web.security import AuthConfigError, LoginThrottle, RateLimit, Users, parse_json_body
from assistant.threads import canonical_name

_LOGIN_PATHS = {"/login", "/login/"}
_UPLOAD_SUFFIXES = ("/upload", "/upload/")
_MAX_LOGIN_BODY = 16 * 1024
_API_INFO = re.compile(rb"(window\.gradio_api_info = ).*?(;</script>)", re.S)
_WORK_POST = ("/api/ask", "/gradio_api/queue/join", "/gradio_api/call/", "/gradio_api/run/", "/gradio_api/api/")
_FN_INDEX_POST = ("/gradio_api/queue/join", "/gradio_api/run/", "/gradio_api/api/")


def body_limit_bytes() -> int:
    """GPU_ADVISOR_MAX_BODY_KB (default 2048): the largest request body any route reads. The chat sends
    its shown history with each turn, so this is larger than one question (4,000 characters)."""
    raw = os.environ.get("GPU_ADVISOR_MAX_BODY_KB", "").strip()
    try:
        kb = float(raw) if raw else 2048.0
    except ValueError:
        kb = -1.0
    if not 16 <= kb <= 1024 * 1024:
        from tools.errors import InvalidInput

        raise InvalidInput("GPU_ADVISOR_MAX_BODY_KB", raw, "a number of KB from 16 to 1048576")
    return int(kb * 1024)


def _does_work(method: str, path: str) -> bool:
    if method == "GET":
        return path.startswith("/api/threads/")
    return method == "POST" and (path == "/api/ask" or path.startswith(_WORK_POST[1:]))


class WebGuard:
    """ASGI middleware for the Gradio app (see the module docstring).

    Pass it to Gradio before the server starts:
    `launch(app_kwargs={"middleware": [Middleware(WebGuard, throttle=..., limit=..., blocks=demo)]})`.
    """

    def __init__(self, app: Any, throttle: LoginThrottle | None = None, limit: RateLimit | None = None,
                 blocks: Any = None, allow_uploads: bool = False, max_body_bytes: int | None = None,
                 sessions: Any = None):
        self.app = app
        self.sessions = sessions  # SignedSessions: the cookie Gradio sets on sign-in is swapped for a signed one
        self.throttle = throttle or LoginThrottle()
        self.limit = limit
        self.blocks = blocks
        self.allow_uploads = allow_uploads
        self.max_body = max_body_bytes or body_limit_bytes()

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if not self.allow_uploads and path.endswith(_UPLOAD_SUFFIXES):
            return await _json(send, 403, {"error": "File uploads are turned off on this server."})
        if self.limit is not None and _does_work(method, path):
            wait = await run_in_threadpool(self.limit.wait_s, self._limit_key(scope))
            if wait:
                secs = max(1, math.ceil(wait))
                return await _json(send, 429, {"error": f"Too many requests from this address; try again in {secs} s."},
                                   {"retry-after": str(secs)})
        if method in ("POST", "PUT", "PATCH"):
            cap = _MAX_LOGIN_BODY if path in _LOGIN_PATHS else self.max_body
            body = await _read_body(scope, receive, cap)
            if body is None:
                return await _json(send, 413, {"error": f"The request body is larger than {cap // 1024:,} KB "
                                                        "(GPU_ADVISOR_MAX_BODY_KB)."})
            if path.startswith(_FN_INDEX_POST):
                refused = self._check_call(body)
                if refused:
                    return await _json(send, 400, {"error": refused})
            receive = _replay(body, receive)
            if path in _LOGIN_PATHS:
                return await self._login(scope, body, receive, send)
        if method == "GET" and not path.startswith(("/gradio_api", "/assets", "/static", "/file")):
            return await self._page(scope, receive, send)
        return await self.app(scope, receive, send)

    def _limit_key(self, scope: dict) -> str:
        """Whose budget a request draws on: a signed-in user's own (a signed session cookie, or Basic
        credentials the sign-in throttle lets through), else its address's; so requests without
        credentials from an address never spend the budget of the users behind it. Runs in a worker
        thread (a first Basic check costs one scrypt)."""
        from http.cookies import CookieError, SimpleCookie

        headers = dict(scope.get("headers") or [])
        client = _client(scope)
        if self.sessions is not None and b"cookie" in headers:
            try:
                jar = SimpleCookie(headers[b"cookie"].decode("latin-1"))
            except CookieError:
                jar = SimpleCookie()
            for name, morsel in jar.items():
                user = self.sessions.get(morsel.value) if name.startswith("access-token") else None
                if user:
                    return "user:" + canonical_name(user)
        header = headers.get(b"authorization", b"").decode("latin-1")
        if header:
            try:
                users = Users.from_env()
            except AuthConfigError:
                return client
            claimed = users.basic_user(header)
            if users.enabled and claimed and not self.throttle.retry_after(client, claimed):
                user = users.check_basic(header)
                if user:
                    return "user:" + canonical_name(user)
        return client

    def _check_call(self, body: bytes) -> str:
        """Why a Gradio queue/run body cannot be a call of this app ("" when it may be)."""
        try:
            value = parse_json_body(body, max_bytes=self.max_body, max_depth=64)
        except ValueError as exc:
            return str(exc)
        if not isinstance(value, dict):
            return "Send a JSON object with 'data' (a list) and 'fn_index'."
        fn = value.get("fn_index")
        if "data" in value and not isinstance(value["data"], list):
            return "'data' must be a list of the event's inputs."
        fns = getattr(self.blocks, "fns", None)
        if fn is not None and (not isinstance(fn, int) or isinstance(fn, bool) or (fns is not None and fn not in fns)):
            return f"Unknown fn_index {str(fn)[:20]!r}: this app has {len(fns or ())} events (see /gradio_api/info)."
        return ""

    async def _page(self, scope: dict, receive: Callable, send: Callable) -> None:
        """Gradio 6.31 embeds the whole API description in its sign-in page (window.gradio_api_info):
        blank it there, so the API is described only to signed-in users."""
        start: dict = {}
        chunks: list[bytes] = []

        async def hold(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                ctype = dict(message.get("headers") or []).get(b"content-type", b"")
                if not ctype.startswith(b"text/html"):
                    start["pass"] = True
                    await send(message)
                return
            if start.get("pass"):
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            if b'"auth_required":true' in body.replace(b" ", b""):
                body = _API_INFO.sub(rb"\1null\2", body)
            headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": start["status"], "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, hold)

    async def _login(self, scope: dict, body: bytes, receive: Callable, send: Callable) -> None:
        from urllib.parse import parse_qs

        client = _client(scope)
        try:
            user = parse_qs(body.decode("utf-8"), max_num_fields=10).get("username", [""])[0].strip()
        except (UnicodeDecodeError, ValueError):
            return await _json(send, 400, {"error": "The sign-in form could not be read."})
        wait = await run_in_threadpool(self.throttle.retry_after, client, user)
        if wait:
            return await _json(send, 429, {"error": f"Too many failed sign-ins; try again in {wait} s."},
                               {"retry-after": str(wait)})
        status: list[int] = []

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                if message["status"] == 200 and self.sessions is not None:
                    message = dict(message, headers=_signed_cookies(message.get("headers") or [],
                                                                     self.sessions.issue(user)))
            await send(message)

        await self.app(scope, receive, watch)
        if status and status[0] == 200:
            await run_in_threadpool(self.throttle.succeeded, user, client)
        elif status and status[0] in (400, 401, 403):
            await run_in_threadpool(self.throttle.failed, client, user)


def _signed_cookies(headers: list, token: str) -> list:
    """The response headers with each `access-token…` cookie's value replaced by `token`."""
    out = []
    for name, value in headers:
        if name == b"set-cookie" and value.startswith(b"access-token"):
            cookie, _, attrs = value.partition(b";")
            value = cookie.partition(b"=")[0] + b"=" + token.encode("ascii") + (b";" + attrs if attrs else b"")
        out.append((name, value))
    return out


def _client(scope: dict) -> str:
    return (scope.get("client") or ("unknown", 0))[0]


async def _read_body(scope: dict, receive: Callable, cap: int) -> bytes | None:
    """The whole body, or None as soon as it (or its announced Content-Length) passes `cap`."""
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            try:
                if int(value) > cap:
                    return None
            except ValueError:
                return None
    chunks, size, more = [], 0, True
    while more:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            break
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
        more = msg.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive: Callable) -> Callable:
    """The body already read, then the connection's own messages (a disconnect, when it comes)."""
    sent = False

    async def replay() -> dict:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _json(send: Callable, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
    body = json.dumps(payload).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    hdrs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})
