"""Conversation threads: where each conversation's state and turns live, and who owns them.

`open_store()` picks the back end from the settings: PostgreSQL when GPU_ADVISOR_DATABASE_URL is set
(a team deployment: replicas and bots share threads), else SQLite in the data directory (the
embedded default), else — when the data directory cannot be written — SQLite in memory with a notice.

Owners: the signed-in web user (`user:NAME`, or `web:anonymous` with auth off), the Slack team and
channel (`slack:TEAM:CHANNEL`), or the local OS user for the CLI (`local:NAME`). A thread id is only
meaningful with its owner; another owner's id behaves as unknown. New ids are 128 random bits.
"""

from __future__ import annotations

__all__ = ["StoreFull", "StoreUnavailable", "ThreadRecord", "ThreadStore", "ThreadStoreError", "ThreadSummary",
           "ThreadTooLarge", "Turn", "local_owner", "new_thread_id", "open_store", "slack_owner", "web_owner"]

import secrets

from assistant.threads.base import (StoreFull, StoreUnavailable, ThreadRecord, ThreadStore, ThreadStoreError,
                                    ThreadSummary, ThreadTooLarge, Turn)


def new_thread_id() -> str:
    """A fresh, unguessable thread id: 32 hex digits (128 bits from the OS's random source)."""
    return secrets.token_hex(16)


def local_owner() -> str:
    """The owner of CLI threads: `local:<os user>`."""
    import getpass
    import re

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return "local:" + (re.sub(r"[^A-Za-z0-9_.@-]", "_", user) or "unknown")


def web_owner(user: str | None) -> str:
    """The owner of web threads: `user:<name>` when signed in, else `web:anonymous`."""
    import re

    if not user:
        return "web:anonymous"
    return "user:" + re.sub(r"[^A-Za-z0-9_.@-]", "_", user)[:200]


def slack_owner(team: str | None, channel: str | None) -> str:
    """The owner of a Slack conversation: the team and the channel (a DM is a channel too)."""
    return f"slack:{team or '-'}:{channel or '-'}"


def open_store(path: str | None = None) -> ThreadStore:
    """The conversation store the settings ask for.

    Args:
        path: a SQLite file to use instead of the settings (tests, benchmarks).

    Returns:
        A ThreadStore; its `notices` say when it fell back (damaged file set aside, memory only).

    Raises:
        StoreUnavailable: GPU_ADVISOR_DATABASE_URL is set but the database cannot be reached (a team
            deployment must not silently split into per-process stores).
    """
    from assistant.runtime.settings import data_dir, database_url
    from assistant.threads.sqlite_store import SqliteThreadStore

    url = database_url() if path is None else ""
    if url:
        if not url.startswith(("postgresql://", "postgres://")):
            raise StoreUnavailable(f"GPU_ADVISOR_DATABASE_URL must start with postgresql:// (got {url.split(':')[0]!r}).")
        from assistant.threads.postgres_store import PostgresThreadStore

        return PostgresThreadStore(url)
    notices: list[str] = []
    try:
        if path is None:
            data_dir().mkdir(parents=True, exist_ok=True)
            path = str(data_dir() / "conversations.sqlite")
        store = SqliteThreadStore(path)
    except (OSError, StoreUnavailable) as exc:
        why = "The data directory is not writable" if isinstance(exc, OSError) or "unable to open" in str(exc) \
            else str(exc).rstrip(".")
        notices.append(f"{why}: conversations are kept in memory only.")
        store = SqliteThreadStore(":memory:")
    store.notices[:0] = notices
    return store
