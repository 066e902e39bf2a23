"""Settings read from the environment when called (never at import).

Conversation store: `GPU_ADVISOR_DATABASE_URL` (postgresql://… puts threads on PostgreSQL; unset: SQLite in
the data directory), `GPU_ADVISOR_THREAD_TTL_DAYS`, `GPU_ADVISOR_THREAD_MAX_TURNS`, `GPU_ADVISOR_THREAD_MAX_KB`,
`GPU_ADVISOR_STORE_MAX_MB`. Web and bot: `GPU_ADVISOR_REDIS_URL` (shared rate limits and Slack de-duplication),
`GPU_ADVISOR_TRUSTED_PROXIES`, `GPU_ADVISOR_AUTH`, `GPU_ADVISOR_AUTH_FILE`, `GPU_ADVISOR_SESSION_SECRET`,
`GPU_ADVISOR_SESSION_HOURS`.
"""

from __future__ import annotations

__all__ = ["MAX_QUESTION_CHARS", "StoreSettings", "data_dir", "database_url", "redis_url", "redis_prefix",
           "session_hours", "session_secret", "store_settings", "trusted_proxies"]

import os
from dataclasses import dataclass
from pathlib import Path

MAX_QUESTION_CHARS = 4000


def data_dir() -> Path:
    """The product's data directory: $GPU_ADVISOR_HOME, else the per-user data dir."""
    env = os.environ.get("GPU_ADVISOR_HOME", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor", appauthor=False))


def _number(name: str, default: float, minimum: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= minimum or value == float("inf"):
        from tools.errors import InvalidInput

        raise InvalidInput(name, raw, f"a number >= {minimum:g}")
    return value


@dataclass(frozen=True)
class StoreSettings:
    """Limits of the conversation store (see assistant.threads)."""

    ttl_days: float = 30.0  # a thread untouched this long is gone
    max_turns: int = 0  # 0: every turn is kept; an operator's cap compacts older turns away
    max_thread_bytes: int = 1024 * 1024  # per thread: state + kept turns (UTF-8 bytes, answers compressed)
    max_total_bytes: int = 1024 * 1024 * 1024  # all threads together


def store_settings() -> StoreSettings:
    """The store limits from GPU_ADVISOR_THREAD_TTL_DAYS (default 30), GPU_ADVISOR_THREAD_MAX_TURNS (0: no cap, the whole history is kept),
    GPU_ADVISOR_THREAD_MAX_KB (1024) and GPU_ADVISOR_STORE_MAX_MB (1024).

    Raises:
        InvalidInput: a value that is not a number in range.
    """
    return StoreSettings(ttl_days=_number("GPU_ADVISOR_THREAD_TTL_DAYS", 30.0, 0.0001),
                         max_turns=int(_number("GPU_ADVISOR_THREAD_MAX_TURNS", 0, 0)),
                         max_thread_bytes=int(_number("GPU_ADVISOR_THREAD_MAX_KB", 1024, 16) * 1024),
                         max_total_bytes=int(_number("GPU_ADVISOR_STORE_MAX_MB", 1024, 1) * 1024 * 1024))


def database_url() -> str:
    """GPU_ADVISOR_DATABASE_URL (postgresql://…), or "" for the embedded SQLite store."""
    return os.environ.get("GPU_ADVISOR_DATABASE_URL", "").strip()


def redis_url() -> str:
    """GPU_ADVISOR_REDIS_URL (redis://…), or "" for in-process rate limits and Slack de-duplication."""
    return os.environ.get("GPU_ADVISOR_REDIS_URL", "").strip()


def redis_prefix() -> str:
    """Key prefix in Redis (GPU_ADVISOR_REDIS_PREFIX, default "gpu-advisor:"): several deployments may share one."""
    return os.environ.get("GPU_ADVISOR_REDIS_PREFIX", "").strip() or "gpu-advisor:"


def session_secret() -> str:
    """GPU_ADVISOR_SESSION_SECRET: the key that signs web sign-in sessions; give every replica the same one
    so a session from one is accepted by all. "" when unset (each process then makes its own)."""
    return os.environ.get("GPU_ADVISOR_SESSION_SECRET", "").strip()


def session_hours() -> float:
    """GPU_ADVISOR_SESSION_HOURS (default 12): how long a web sign-in lasts.

    Raises:
        InvalidInput: not a number of at least 0.01.
    """
    return _number("GPU_ADVISOR_SESSION_HOURS", 12.0, 0.01)


def trusted_proxies() -> list[str]:
    """GPU_ADVISOR_TRUSTED_PROXIES: addresses or networks (comma-separated) whose X-Forwarded-For is believed."""
    raw = os.environ.get("GPU_ADVISOR_TRUSTED_PROXIES", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def apply_trusted_proxies() -> list[str]:
    """Make uvicorn believe X-Forwarded-For only from GPU_ADVISOR_TRUSTED_PROXIES (default: from nobody).

    uvicorn otherwise trusts it from 127.0.0.1, so any local client could pose as any address and
    walk around the per-client limits. Call before the server starts (uvicorn reads it then).
    """
    proxies = trusted_proxies()
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(proxies)  # "" trusts no one
    return proxies
