"""Counters, rate limits and de-duplication that live in this process, or in Redis when
GPU_ADVISOR_REDIS_URL is set, so that app replicas and Slack bots behind a load balancer share them.

When Redis stops answering, each call falls back to its in-process twin and logs a warning: limits
keep protecting this process instead of failing every request. A call waits at most `REDIS_TIMEOUT_S`
(connect and read) and, after a failure, Redis is left alone for `REDIS_RETRY_S` (one warning per
outage), so a hung Redis costs one short wait per interval, not one per request; the web app also
runs these calls off its event loop.
"""

from __future__ import annotations

__all__ = ["RateLimit", "SharedSeen", "SharedUserLimit", "Windows", "parse_json_body", "shared_seen",
           "shared_user_limit"]

import logging
import os
import threading
import time
from typing import Any, Callable

_log = logging.getLogger("gpu_advisor.security")


REDIS_TIMEOUT_S = 0.25
REDIS_RETRY_S = 5.0


def _redis() -> Any:
    """A Redis client for GPU_ADVISOR_REDIS_URL (connections are made lazily), or None when unset or
    while a recent failure lasts (see `_redis_failed`)."""
    from assistant.runtime.settings import redis_url

    url = redis_url()
    if not url or time.monotonic() < _REDIS_DOWN_UNTIL.get(url, 0.0):
        return None
    with _REDIS_LOCK:
        if url not in _REDIS_CLIENTS:
            import redis

            _REDIS_CLIENTS[url] = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                                       socket_connect_timeout=REDIS_TIMEOUT_S)
        return _REDIS_CLIENTS[url]


def _redis_failed(what: str, exc: BaseException) -> None:
    """Leave Redis alone for REDIS_RETRY_S and say so once per outage: `what` is limited in process."""
    from assistant.runtime.settings import redis_url

    url = redis_url()
    with _REDIS_LOCK:
        first = time.monotonic() >= _REDIS_DOWN_UNTIL.get(url, 0.0) + REDIS_RETRY_S
        _REDIS_DOWN_UNTIL[url] = time.monotonic() + REDIS_RETRY_S
    if first:
        _log.warning("Redis unavailable for %s (%s); limiting in this process for the next %g s "
                     "(and until it answers again)", what, type(exc).__name__, REDIS_RETRY_S)


_REDIS_CLIENTS: dict[str, Any] = {}
_REDIS_DOWN_UNTIL: dict[str, float] = {}
_REDIS_LOCK = threading.Lock()


def _key(*parts: str) -> str:
    from assistant.runtime.settings import redis_prefix

    return redis_prefix() + ":".join(parts)


class Windows:
    """Counters that reset `window_s` after their first hit: in this process, or in Redis (shared by replicas)."""

    _LUA_HIT = """
    local n = redis.call('INCR', KEYS[1])
    if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    return {n, redis.call('PTTL', KEYS[1])}
    """

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic):
        self.name, self._clock = name, clock
        self._mem: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, window_s: float) -> tuple[int, float]:
        """Count one event; returns (count in the window, seconds until the window resets)."""
        r = _redis()
        if r is not None:
            try:
                n, ttl_ms = r.eval(self._LUA_HIT, 1, _key(self.name, key), int(window_s * 1000))
                return int(n), max(0.0, int(ttl_ms) / 1000)
            except Exception as exc:  # Redis down: keep protecting this process
                _redis_failed(self.name, exc)
        now = self._clock()
        with self._lock:
            n, until = self._mem.get(key, (0, 0.0))
            if until <= now:
                n, until = 0, now + window_s
            self._mem[key] = (n + 1, until)
            if len(self._mem) > 50_000:
                self._mem = {k: v for k, v in self._mem.items() if v[1] > now}
            return n + 1, until - now

    def peek(self, key: str) -> tuple[int, float]:
        """(count, seconds left) without counting."""
        r = _redis()
        if r is not None:
            try:
                k = _key(self.name, key)
                n, ttl_ms = r.get(k), r.pttl(k)
                return (int(n) if n else 0), max(0.0, int(ttl_ms) / 1000)
            except Exception as exc:
                _redis_failed(self.name, exc)
        now = self._clock()
        with self._lock:
            n, until = self._mem.get(key, (0, 0.0))
            return (n, until - now) if until > now else (0, 0.0)

    def hold(self, key: str, seconds: float) -> None:
        """Set `key` to 1 for `seconds` (peek then says how long is left): a lock that lifts by itself."""
        r = _redis()
        if r is not None:
            try:
                r.set(_key(self.name, key), 1, px=max(1, int(seconds * 1000)))
                return
            except Exception as exc:
                _redis_failed(self.name, exc)
        with self._lock:
            self._mem[key] = (1, self._clock() + seconds)

    def reset(self, key: str) -> None:
        r = _redis()
        if r is not None:
            try:
                r.delete(_key(self.name, key))
                return
            except Exception as exc:
                _redis_failed(self.name, exc)
        with self._lock:
            self._mem.pop(key, None)


class RateLimit:
    """Per-client token bucket for the web app: GPU_ADVISOR_RATE_LIMIT requests a minute (default 1200;
    0 = off), bursts of ten seconds' worth. In Redis when GPU_ADVISOR_REDIS_URL is set (one budget
    across replicas)."""

    _LUA = """
    local t = redis.call('TIME')
    local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
    local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
    local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
    local tokens = tonumber(v[1]) or burst
    local ts = tonumber(v[2]) or now
    tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
    local wait_ms = 0
    if tokens >= 1 then tokens = tokens - 1 else wait_ms = math.ceil((1 - tokens) / rate * 1000) end
    redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
    redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
    return wait_ms
    """

    def __init__(self) -> None:
        self.per_min = float(os.environ.get("GPU_ADVISOR_RATE_LIMIT", "1200") or 0)
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Take one request from `key`'s budget; False when it is spent."""
        return self.wait_s(key) == 0

    def wait_s(self, key: str) -> float:
        """Take one request from `key`'s budget: 0 when allowed, else the seconds until it would be."""
        if self.per_min <= 0:
            return 0.0
        burst, rate = max(1.0, self.per_min / 6), self.per_min / 60
        r = _redis()
        if r is not None:
            try:
                return int(r.eval(self._LUA, 1, _key("rate", key), rate, burst)) / 1000
            except Exception as exc:
                _redis_failed("the rate limit", exc)
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(key, (burst, now))
            tokens = min(burst, tokens + (now - last) * rate)
            ok = tokens >= 1
            self.buckets[key] = (tokens - 1 if ok else tokens, now)
            if len(self.buckets) > 50_000:
                self.buckets = {k: v for k, v in self.buckets.items() if v[1] > now - burst / rate}
            return 0.0 if ok else (1 - tokens) / rate


class SharedSeen:
    """Slack de-duplication in Redis: a key delivered to any bot process within `ttl_s` is a repeat."""

    _LUA = """
    for i, k in ipairs(KEYS) do if redis.call('EXISTS', k) == 1 then return 0 end end
    for i, k in ipairs(KEYS) do redis.call('SET', k, '1', 'EX', ARGV[1]) end
    return 1
    """

    def __init__(self, client: Any, ttl_s: float, fallback: Any):
        self._client, self._ttl_s, self._fallback = client, ttl_s, fallback

    def first_time(self, *keys: str | None) -> bool:
        keys_ = [_key("slack-seen", k) for k in keys if k]
        if not keys_:
            return True
        if _redis() is None:  # just failed: in process for a while
            return self._fallback.first_time(*keys)
        try:
            return bool(self._client.eval(self._LUA, len(keys_), *keys_, int(self._ttl_s)))
        except Exception as exc:
            _redis_failed("Slack de-duplication", exc)
            return self._fallback.first_time(*keys)


def shared_seen(ttl_s: float, fallback: Any) -> Any:
    """SharedSeen when GPU_ADVISOR_REDIS_URL is set, else `fallback` (the in-process one)."""
    r = _redis()
    return SharedSeen(r, ttl_s, fallback) if r is not None else fallback


class SharedUserLimit:
    """Slack's per-user limit in Redis: at most `per_minute` questions per user per clock minute."""

    def __init__(self, client: Any, per_minute: int, fallback: Any):
        self._client, self.per_minute, self._fallback = client, per_minute, fallback

    def check(self, user: str) -> str:
        """'ok' (counted), 'limited' (tell the user) or 'quiet' (already told in this minute)."""
        if _redis() is None:  # just failed: in process for a while
            return self._fallback.check(user)
        try:
            key = _key("slack-rate", user, str(int(time.time() // 60)))
            pipe = self._client.pipeline()
            pipe.incr(key)
            pipe.expire(key, 120)
            n = int(pipe.execute()[0])
        except Exception as exc:
            _redis_failed("the Slack rate limit", exc)
            return self._fallback.check(user)
        return "ok" if n <= self.per_minute else "limited" if n == self.per_minute + 1 else "quiet"


def shared_user_limit(per_minute: int, fallback: Any) -> Any:
    r = _redis()
    return SharedUserLimit(r, per_minute, fallback) if r is not None else fallback


# ---------------------------------------------------------------- request bodies (web app and Slack bot)

def parse_json_body(raw: bytes, max_bytes: int = 64 * 1024, max_depth: int = 20) -> Any:
    """Parse a request body as JSON, refusing what the handlers cannot use.

    Raises:
        ValueError: too large, not UTF-8, not JSON, nested deeper than `max_depth`, or holding a lone
            surrogate (text no store or client can hold); the message says which.
    """
    import json

    if len(raw) > max_bytes:
        raise ValueError(f"The request body is larger than {max_bytes // 1024} KB.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("The request body is not UTF-8 text.") from None
    depth = deepest = 0
    in_str = esc = False
    for ch in text:  # before json.loads: deep nesting costs recursion there
        if in_str:
            esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > max_depth:
                raise ValueError(f"The JSON is nested deeper than {max_depth} levels.")
        elif ch in "]}":
            depth -= 1
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("The request body is not valid JSON.") from None
    if _has_surrogate(value):
        raise ValueError("The text holds an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not a character.")
    return value


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False
