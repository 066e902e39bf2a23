"""Slack front end: answers @mentions, direct messages and `/gpu <question>` with the advisor.

A thin front end like cli.py: it calls `assistant.service.api.advisor().ask()` and turns the Answer into
Block Kit (assistant.frontends.slack.blocks). Every request is acknowledged at once (Slack wants an answer
within 3 s); the work runs in Bolt's listener thread pool (`process_before_response=False`): a
reaction and a "Working on it…" reply show it started, and that reply is updated with the answer.

One Slack thread is one advisor conversation (thread id "slack:{team}:{channel}:{thread_ts}", owned by
"slack:{team}:{channel}": no other front end can read it), so "and on spot?" in the thread reuses the
model and GPU asked about before. A delivery already seen (event id, message id; shared through Redis
when GPU_ADVISOR_REDIS_URL is set, so several bot processes answer once) is acknowledged and dropped; a
retry (X-Slack-Retry-Num) of an event nobody saw is answered. Each user may ask RATE_LIMIT_PER_MINUTE
questions a minute. Tokens, signing secrets and request bodies are never logged or posted; rejected
requests are logged as one bounded line without their body.

`gpu-advisor slack` runs Socket Mode when SLACK_APP_TOKEN is set, else an HTTP server with the
Events API endpoint at /slack/events. See docs/slack.md.
"""

from __future__ import annotations

__all__ = ["DEFAULT_API_URL", "DEFAULT_HOST", "MAX_BODY_BYTES", "RATE_LIMIT_PER_MINUTE", "SlackConfigError", "build_app",
           "build_http_app", "question_from", "run", "thread_id_for"]

import logging
import os
import re
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable

from slack_bolt import App, BoltResponse
from slack_bolt.error import BoltError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.service import api
from assistant.runtime.limits import parse_json_body, shared_seen, shared_user_limit
from assistant.frontends.slack.blocks import answer_blocks, escape
from assistant.threads import slack_owner

DEFAULT_API_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
DEFAULT_HOST = "127.0.0.1"  # behind a TLS proxy; --host 0.0.0.0 to listen on every interface
MAX_BODY_BYTES = 1024 * 1024  # Slack's event payloads are a few KB
RATE_LIMIT_PER_MINUTE = 10
DEDUPE_TTL_S = 600.0  # Slack retries an event after about 1 s, 1 min and 5 min
_DEDUPE_MAX_KEYS = 20_000
_WORKING_REACTION = "eyes"

log = logging.getLogger(__name__)

_MESSAGES = {
    "en": {
        "working": "Working on it…",
        "limited": "You've asked {n} questions in the last minute. Give me a moment, then ask again.",
        "error": "Sorry, something went wrong while answering that. Please try again in a moment.",
        "empty": ("Ask me which cloud GPU to rent for LLM work, e.g. “Can I run Llama-3-8B in FP16 on a 24 GB GPU?” "
                  "or “Cheapest H100 per hour?”"),
        "usage": "Usage: `/gpu <question>`, e.g. `/gpu cheapest H100 per hour?`",
    },
    "ur": {
        "working": "جواب تیار ہو رہا ہے…",
        "limited": "آپ نے پچھلے ایک منٹ میں {n} سوالات پوچھے ہیں۔ تھوڑا انتظار کریں، پھر دوبارہ پوچھیں۔",
        "error": "معذرت، جواب دیتے ہوئے کچھ غلط ہو گیا۔ تھوڑی دیر بعد دوبارہ کوشش کریں۔",
        "empty": "مجھ سے پوچھیں کہ LLM کے کام کے لیے کون سا کلاؤڈ GPU کرائے پر لیں، مثلاً “کیا Llama-3-8B چوبیس GB والے GPU پر چلے گا؟”",
        "usage": "استعمال: `/gpu <سوال>`",
    },
}
_URDU = re.compile(r"[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]")
_USER_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_SPECIAL = re.compile(r"<![^>]*>")  # <!here>, <!channel>, <!date^...>
_LABELLED = re.compile(r"<[^<>|]+\|([^<>]+)>")  # <https://x|label>, <#C123|general>
_BARE = re.compile(r"<([^<>]+)>")


class SlackConfigError(ValueError):
    """The Slack credentials are missing, malformed or rejected; the message names the variable to set."""


def _lang(text: str) -> str:
    return "ur" if _URDU.search(text) else "en"


def _msg(key: str, text: str, **kw: Any) -> str:
    return _MESSAGES[_lang(text)][key].format(**kw)


def question_from(text: str) -> str:
    """The question in a Slack message: mentions removed, links as their labels, entities decoded."""
    text = _USER_MENTION.sub(" ", text or "")
    text = _SPECIAL.sub(" ", text)
    text = _LABELLED.sub(r"\1", text)
    text = _BARE.sub(r"\1", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def thread_id_for(team: str | None, channel: str | None, thread_ts: str | None) -> str:
    """The advisor conversation of a Slack thread: every reply in the thread continues it."""
    return f"slack:{team or '-'}:{channel or '-'}:{thread_ts or '-'}"


class _Seen:
    """Keys delivered in the last `ttl_s` seconds (event ids, message ids): Slack may deliver twice."""

    def __init__(self, ttl_s: float = DEDUPE_TTL_S, max_keys: int = _DEDUPE_MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic):
        self._ttl_s, self._max_keys, self._clock = ttl_s, max_keys, clock
        self._keys: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, *keys: str | None) -> bool:
        """Record the keys; False when any of them was recorded within the TTL."""
        now = self._clock()
        keys_ = [k for k in keys if k]
        with self._lock:
            while self._keys and (next(iter(self._keys.values())) < now - self._ttl_s
                                  or len(self._keys) > self._max_keys):
                self._keys.popitem(last=False)
            if any(k in self._keys for k in keys_):
                return False
            for k in keys_:
                self._keys[k] = now
            return True


class _RateLimit:
    """At most `per_minute` questions per user in any 60 s; one friendly notice per window over it."""

    def __init__(self, per_minute: int, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.per_minute, self._window_s, self._clock = per_minute, window_s, clock
        self._asks: dict[str, deque[float]] = {}
        self._warned: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, user: str) -> str:
        """'ok' (counted), 'limited' (tell the user) or 'quiet' (already told in this window)."""
        now = self._clock()
        with self._lock:
            q = self._asks.setdefault(user, deque())
            while q and q[0] <= now - self._window_s:
                q.popleft()
            if len(q) < self.per_minute:
                q.append(now)
                return "ok"
            if self._warned.get(user, -1e18) > now - self._window_s:
                return "quiet"
            self._warned[user] = now
            return "limited"


class _Bot:
    """The handlers' state: the advisor (created on first use), de-duplication and rate limits."""

    def __init__(self, advisor: Any, per_minute: int):
        self._advisor = advisor
        self._advisor_lock = threading.Lock()
        self.seen = shared_seen(DEDUPE_TTL_S, _Seen())  # in Redis when GPU_ADVISOR_REDIS_URL is set
        self.limits = shared_user_limit(per_minute, _RateLimit(per_minute))

    def advisor(self) -> Any:
        with self._advisor_lock:
            if self._advisor is None:
                self._advisor = api.advisor()
            return self._advisor

    def answer(self, question: str, thread_id: str, owner: str) -> tuple[str, list[dict[str, Any]]]:
        """(fallback text, blocks) for the question; failures become a short friendly reply."""
        started = time.monotonic()
        try:
            ans = self.advisor().ask(question, thread_id=thread_id, owner=owner)
        except Exception as exc:
            # tools.errors.AdvisorError messages are written for users (front ends import only
            # assistant.service.api, so match the base class by name).
            if any(c.__name__ == "AdvisorError" for c in type(exc).__mro__):
                text = escape(str(exc))[:3000]
                return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
            log.error("answering failed: %s", type(exc).__name__, exc_info=True)
            return _msg("error", question), []
        log.info("answered (intent %s) in %.2f s", getattr(ans, "intent", "") or "-", time.monotonic() - started)
        return answer_blocks(ans)

    def reply_to_message(self, client: WebClient, *, team: str | None, user: str | None, channel: str, ts: str,
                         text: str, reply_thread_ts: str | None, conversation: str) -> None:
        """React, post "Working on it…" (in the thread when reply_thread_ts), then update it with the answer."""
        question = question_from(text)
        status = self.limits.check(f"{team}:{user}")
        if status != "ok":
            if status == "limited":
                _post(client, channel, reply_thread_ts, _msg("limited", question, n=self.limits.per_minute))
            return
        if not question:
            _post(client, channel, reply_thread_ts, _msg("empty", question))
            return
        try:
            client.reactions_add(channel=channel, timestamp=ts, name=_WORKING_REACTION)
        except SlackApiError as exc:  # already reacted, or the scope was removed: not worth failing over
            log.debug("reactions.add failed: %s", exc.response.get("error"))
        placeholder = _post(client, channel, reply_thread_ts, _msg("working", question))
        fallback, blocks = self.answer(question, thread_id_for(team, channel, conversation), slack_owner(team, channel))
        if placeholder:
            try:
                client.chat_update(channel=channel, ts=placeholder, text=fallback, blocks=blocks or None)
                return
            except SlackApiError as exc:
                log.warning("chat.update failed: %s", exc.response.get("error"))
        if _post(client, channel, reply_thread_ts, fallback, blocks) is None and blocks:
            _post(client, channel, reply_thread_ts, fallback)  # e.g. invalid_blocks: the text still helps


def _post(client: WebClient, channel: str, thread_ts: str | None, text: str,
          blocks: list[dict[str, Any]] | None = None) -> str | None:
    try:
        resp = client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, blocks=blocks or None)
        return resp.get("ts")
    except SlackApiError as exc:
        log.warning("chat.postMessage failed: %s", exc.response.get("error"))
        return None


def _not_token_skipped(record: logging.LogRecord) -> bool:
    # Bolt reads SLACK_BOT_TOKEN itself and warns that the client's (the same token) wins: noise.
    return "`token` will be unused" not in record.getMessage()


def _env(name: str, required: bool, why: str) -> str:
    value = os.environ.get(name, "").strip()
    if required and not value:
        raise SlackConfigError(f"Set the {name} environment variable ({why}); see docs/slack.md.")
    return value


def build_app(*, token: str | None = None, signing_secret: str | None = None, api_url: str | None = None,
              advisor: Any = None, process_before_response: bool = False, socket_mode: bool = False,
              rate_limit_per_minute: int = RATE_LIMIT_PER_MINUTE) -> App:
    """The Bolt app with the GPU Advisor's listeners.

    Args:
        token: bot token (xoxb-...); default $SLACK_BOT_TOKEN.
        signing_secret: the app's signing secret; default $SLACK_SIGNING_SECRET (not needed in Socket Mode).
        api_url: Slack Web API base URL; default $SLACK_API_URL, else https://slack.com/api/ (tests use a mock).
        advisor: an object with `ask(question, thread_id=...) -> Answer`; default `api.advisor()` on first use.
        process_before_response: True runs listeners before the HTTP response (tests); production acks first.
        socket_mode: the app is served by Socket Mode, so requests are not signed.
        rate_limit_per_minute: questions a user may ask in any 60 s.

    Returns:
        A slack_bolt App; Bolt calls auth.test on `api_url` while building it.

    Raises:
        SlackConfigError: a credential is missing or malformed, or Slack rejects the token.
    """
    token = (token if token is not None else _env("SLACK_BOT_TOKEN", True, "the bot token, xoxb-...")).strip()
    if not token.startswith("xoxb-"):
        raise SlackConfigError("SLACK_BOT_TOKEN must be the app's Bot User OAuth Token (it starts with xoxb-); "
                               "see docs/slack.md.")
    if signing_secret is None:
        signing_secret = _env("SLACK_SIGNING_SECRET", not socket_mode, "the app's signing secret, from Basic Information")
    base_url = (api_url or os.environ.get("SLACK_API_URL", "").strip() or DEFAULT_API_URL).rstrip("/") + "/"
    client = WebClient(token=token, base_url=base_url)
    bolt_log = logging.getLogger("slack_bolt.App")
    bolt_log.addFilter(_not_token_skipped)
    try:
        app = App(client=client, signing_secret=signing_secret or None,
                  request_verification_enabled=bool(signing_secret) or not socket_mode,
                  process_before_response=process_before_response)
    except BoltError as exc:
        raise SlackConfigError(f"Slack rejected SLACK_BOT_TOKEN ({exc}).") from None
    except OSError as exc:  # URLError: no route to the Web API
        raise SlackConfigError(f"Could not reach the Slack Web API at {base_url} ({exc}); "
                               "check the network or SLACK_API_URL.") from None
    finally:
        bolt_log.removeFilter(_not_token_skipped)
    bot = _Bot(advisor, rate_limit_per_minute)
    _register(app, bot)
    if signing_secret:
        from slack_sdk.signature import SignatureVerifier

        _VERIFIERS[app] = SignatureVerifier(signing_secret)
    return app


_VERIFIERS: "weakref.WeakKeyDictionary[App, Any]" = weakref.WeakKeyDictionary()


class _RejectLog:
    """Rejected requests, logged as one short line (never the body); past one line in `every_s`
    seconds they are counted and summed up in the next line, so a flood cannot fill the disk."""

    def __init__(self, every_s: float = 10.0):
        self.every_s, self._last, self._skipped = every_s, -1e18, 0
        self._lock = threading.Lock()

    def __call__(self, why: str, size: int, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last < self.every_s:
                self._skipped += 1
                return
            skipped, self._skipped, self._last = self._skipped, 0, now
        more = f" (+{skipped} more rejected since the last line)" if skipped else ""
        log.warning("rejected a Slack request from %s: %s, %d bytes%s", client[:64], why, size, more)


def _register(app: App, bot: _Bot) -> None:
    @app.middleware
    def drop_repeats(req: Any, body: dict[str, Any], next: Callable[[], None]) -> BoltResponse | None:
        # A retry means Slack did not see an ack in time. When any bot process saw the first delivery
        # (the keys below), it is (or was) being answered: drop the retry. When none did (the bot was
        # down), the retry is the first delivery we get, and it is answered.
        keys: list[str | None] = []
        if body.get("type") == "event_callback":
            ev = body.get("event") or {}
            keys = [f"event:{body.get('event_id')}" if body.get("event_id") else None,
                    f"msg:{ev['client_msg_id']}" if ev.get("client_msg_id") else None,
                    # an @mention inside a DM can arrive as both app_mention and message.im
                    f"ts:{ev.get('channel')}:{ev['ts']}" if ev.get("ts") and not ev.get("subtype") else None]
        elif body.get("command") and body.get("trigger_id"):
            keys = [f"trigger:{body['trigger_id']}"]
        if keys and not bot.seen.first_time(*keys):
            retry = {"x-slack-no-retry": "1"} if req.headers.get("x-slack-retry-num") else {}
            return BoltResponse(status=200, body="", headers=retry)
        next()
        return None

    @app.event("app_mention")
    def on_mention(body: dict[str, Any], event: dict[str, Any], client: WebClient) -> None:
        if event.get("bot_id"):
            return
        thread_ts = event.get("thread_ts") or event["ts"]
        bot.reply_to_message(client, team=body.get("team_id") or event.get("team"), user=event.get("user"),
                             channel=event["channel"], ts=event["ts"], text=event.get("text", ""),
                             reply_thread_ts=thread_ts, conversation=thread_ts)

    @app.event("message")
    def on_message(body: dict[str, Any], event: dict[str, Any], client: WebClient) -> None:
        if event.get("channel_type") != "im" or event.get("bot_id") or event.get("subtype") or not event.get("user"):
            return
        # A DM is one running conversation; a thread inside the DM is its own.
        thread_ts = event.get("thread_ts")
        bot.reply_to_message(client, team=body.get("team_id") or event.get("team"), user=event.get("user"),
                             channel=event["channel"], ts=event["ts"], text=event.get("text", ""),
                             reply_thread_ts=thread_ts, conversation=thread_ts or "dm")

    @app.command("/gpu")
    def on_gpu(ack: Any, command: dict[str, Any], respond: Any) -> None:
        question = question_from(command.get("text", ""))
        if not question:
            ack(text=_msg("usage", question))
            return
        status = bot.limits.check(f"{command.get('team_id')}:{command.get('user_id')}")
        if status != "ok":
            ack(text=_msg("limited", question, n=bot.limits.per_minute) if status == "limited" else None)
            return
        ack(text=_msg("working", question))
        # A user's /gpu questions in a channel form one conversation, so "/gpu and on spot?" follows up.
        tid = thread_id_for(command.get("team_id"), command.get("channel_id"), f"cmd-{command.get('user_id')}")
        fallback, blocks = bot.answer(question, tid, slack_owner(command.get("team_id"), command.get("channel_id")))
        respond(text=fallback, blocks=blocks or None, response_type="in_channel", replace_original=False)

    @app.error
    def on_error(error: Exception) -> None:
        # Bolt's default handler also logs the request body; the error and its traceback are enough.
        log.error("Slack listener failed: %s", type(error).__name__, exc_info=error)


def build_http_app(app: App) -> Any:
    """An ASGI app serving Slack's requests at POST /slack/events (and GET /healthz for load balancers)."""
    from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    rejected = _RejectLog()

    async def slack_events(req: Any) -> Any:
        client = req.client.host if req.client else "-"
        body = await _bounded_body(req)
        if body is None:
            rejected("body over the size limit", MAX_BODY_BYTES, client)
            return JSONResponse({"error": "request too large"}, status_code=413)
        verifier = _VERIFIERS.get(app)
        stamp = req.headers.get("x-slack-request-timestamp", "")
        if verifier is not None and not (stamp.isdigit() and verifier.is_valid(body, stamp,
                                                                               req.headers.get("x-slack-signature", ""))):
            rejected("bad, missing or expired signature", len(body), client)  # Bolt would log the body
            return JSONResponse({"error": "invalid request"}, status_code=401)
        why = _malformed(body, req.headers.get("content-type", ""))
        if why:  # signed, yet not a payload Bolt can read: it would fail with a 500
            rejected(why, len(body), client)
            return JSONResponse({"error": why}, status_code=400)
        # dispatch blocks until the listener has called ack(): keep it off the event loop
        resp = await run_in_threadpool(app.dispatch, to_bolt_request(req, body))
        return to_starlette_response(resp)

    async def healthz(req: Any) -> Any:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/slack/events", slack_events, methods=["POST"]),
                             Route("/healthz", healthz, methods=["GET"])])


def _malformed(body: bytes, content_type: str) -> str:
    """Why Bolt could not read this body as a Slack payload (a JSON object, or a form whose `payload`
    is one), or "" when it can; read the way Bolt reads it (slack_bolt.request.internals.parse_body)."""
    from urllib.parse import parse_qsl

    if not body:
        return ""
    try:
        text = body.decode("utf-8")
        if content_type.split(";")[0].strip() == "application/json" or text.startswith("{"):
            value = parse_json_body(body, MAX_BODY_BYTES)
        elif "payload" in text:
            payload = dict(parse_qsl(text, keep_blank_values=True, max_num_fields=100)).get("payload")
            value = {} if payload is None else parse_json_body(payload.encode("utf-8"), MAX_BODY_BYTES)
        else:
            value = dict(parse_qsl(text, keep_blank_values=True, max_num_fields=100))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"unreadable body ({str(exc)[:80]})"
    if not isinstance(value, dict):
        return "the body is not a JSON object"
    event = value.get("event", {})
    if not isinstance(event, dict):
        return "'event' is not an object"
    checks = [("", value, _TEXT_FIELDS)]
    if event.get("type") in ("app_mention", "message"):  # other events may hold objects in these fields
        checks.append(("event.", event, _EVENT_TEXT_FIELDS))
    for where, obj, fields in checks:
        bad = next((k for k in fields if obj.get(k) is not None and not isinstance(obj[k], str)), None)
        if bad:
            return f"'{where}{bad}' is not text"
    return ""


# fields Bolt and our listeners read as text (Events API envelope, slash commands, the message events we
# answer); another type there fails inside Bolt with a 500
_TEXT_FIELDS = ("type", "team_id", "api_app_id", "event_id", "command", "text", "trigger_id", "user_id",
                "channel_id", "response_url", "enterprise_id", "token")
_EVENT_TEXT_FIELDS = ("type", "text", "user", "channel", "channel_type", "ts", "thread_ts", "subtype", "bot_id",
                      "team")


async def _bounded_body(req: Any) -> bytes | None:
    """The request body, or None past MAX_BODY_BYTES (read no further)."""
    declared = req.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks, size = [], 0
    async for chunk in req.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def run(port: int | None = None, host: str = DEFAULT_HOST) -> None:
    """Serve the bot until interrupted: Socket Mode when SLACK_APP_TOKEN is set, else HTTP.

    Args:
        port: HTTP mode's port (default $PORT, else 3000); Socket Mode opens no port.
        host: HTTP mode's interface (default 127.0.0.1, for a TLS proxy in front; 0.0.0.0 for every interface).

    Raises:
        SlackConfigError: a credential is missing, malformed or rejected (the message names the variable).
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app_token = os.environ.get("SLACK_APP_TOKEN", "").strip()
    if app_token and not app_token.startswith("xapp-"):
        raise SlackConfigError("SLACK_APP_TOKEN must be an app-level token with the connections:write scope "
                               "(it starts with xapp-); unset it to use HTTP mode. See docs/slack.md.")
    app = build_app(socket_mode=bool(app_token))
    api.advisor()  # load the router and data now, not on the first question
    if app_token:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        log.info("GPU Advisor for Slack: Socket Mode")
        SocketModeHandler(app, app_token).start()
        return
    import uvicorn

    if port is None:
        try:
            port = int(os.environ.get("PORT") or DEFAULT_PORT)
        except ValueError:
            raise SlackConfigError(f"PORT must be a port number, not {os.environ.get('PORT')!r}.") from None
    from assistant.runtime.settings import apply_trusted_proxies

    apply_trusted_proxies()  # X-Forwarded-For only from GPU_ADVISOR_TRUSTED_PROXIES
    log.info("GPU Advisor for Slack: HTTP mode, events at http://%s:%d/slack/events", host, port)
    uvicorn.run(build_http_app(app), host=host, port=port, log_level="info")
