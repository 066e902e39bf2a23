"""Conversation threads: where each conversation's state and turns live, and who owns them.

`open_store()` picks the back end from the settings: PostgreSQL when GPU_ADVISOR_DATABASE_URL is set
(a team deployment: replicas and bots share threads), else SQLite in the data directory (the
embedded default), else — when the data directory cannot be written — SQLite in memory with a notice.

Owners: the signed-in web user (`user:NAME`, or `web:anonymous` with auth off), the Slack team and
channel (`slack:TEAM:CHANNEL`), or the local OS user for the CLI (`local:NAME`). A thread id is only
meaningful with its owner; another owner's id behaves as unknown. New ids are 128 random bits.

A user name becomes an owner key injectively: read as Unicode NFC and case-folded (`canonical_name`:
"Alice", "ALICE" and "alice" are one user, "علی" and "حسن" two), then kept as it is when it is plain
ASCII (`[a-z0-9_.@-]`, the key such names always had) or else written as ":" and the base32 of its
UTF-8 bytes. A plain name has no ":" (it separates name and password everywhere), so the two forms
never meet, and `owner_name` reads every key back.
"""

from __future__ import annotations

__all__ = ["StoreFull", "StoreUnavailable", "ThreadRecord", "ThreadStore", "ThreadStoreError", "ThreadSummary",
           "ThreadTooLarge", "Turn", "MAX_NAME_BYTES", "canonical_name", "local_owner", "new_thread_id", "open_store",
           "owner_name", "slack_owner", "web_owner"]

import base64
import re
import secrets
import unicodedata

from assistant.threads.base import (StoreFull, StoreUnavailable, ThreadRecord, ThreadStore, ThreadStoreError,
                                    ThreadSummary, ThreadTooLarge, Turn)
from tools.errors import InvalidInput

MAX_NAME_BYTES = 256  # a user name's UTF-8 bytes; its key then fits MAX_OWNER_CHARS
_PLAIN = re.compile(r"^[a-z0-9_.@-]+$")


def new_thread_id() -> str:
    """A fresh, unguessable thread id: 32 hex digits (128 bits from the OS's random source)."""
    return secrets.token_hex(16)


def canonical_name(name: str) -> str:
    """A user name as this product compares it: Unicode NFC, case-folded (str.casefold), NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _encode_name(name: str) -> str:
    canon = canonical_name(name)
    raw = canon.encode("utf-8", "surrogatepass")
    if not canon or len(raw) > MAX_NAME_BYTES:
        raise InvalidInput("user name", name[:40], f"1 to {MAX_NAME_BYTES} bytes of UTF-8")
    if _PLAIN.match(canon):
        return canon
    return ":" + base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def owner_name(owner: str) -> str:
    """The canonical user name inside a `user:` or `local:` owner key (the inverse of the encoding)."""
    name = owner.partition(":")[2]
    if not name.startswith(":"):
        return name
    b32 = name[1:].upper()
    return base64.b32decode(b32 + "=" * (-len(b32) % 8)).decode("utf-8", "surrogatepass")


def local_owner() -> str:
    """The owner of CLI threads: `local:<os user>` (encoded like web user names)."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return "local:" + _encode_name(user or "unknown")


def web_owner(user: str | None) -> str:
    """The owner of web threads: `user:<name>` when signed in (see the module docstring), else `web:anonymous`.

    Raises:
        InvalidInput: a name over MAX_NAME_BYTES (the users file refuses those, so sign-in never yields one).
    """
    if not user:
        return "web:anonymous"
    return "user:" + _encode_name(user)


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
