"""The conversation store's interface, records, errors and the bookkeeping both back ends share.

A thread is one row (its latest state: the folded query and whatever the engine keeps) plus its
turns; an append writes one turn and rewrites the state, never a copy of the history, so a thread's
size grows linearly. Every turn is kept: a thread is bounded in bytes (`max_thread_bytes`, answers
over 1 KB stored zlib-compressed), and a full thread refuses the next turn with a message rather than
dropping old ones; only an operator's `max_turns` compacts the oldest away.
"""

from __future__ import annotations

__all__ = ["MAX_OWNER_CHARS", "MAX_THREAD_ID_CHARS", "InvalidState", "StoreFull", "StoreUnavailable", "ThreadRecord", "ThreadStore",
           "ThreadStoreError", "ThreadSummary", "ThreadTooLarge", "Turn", "check_key", "pack_answer", "plan_append",
           "turn_bytes", "unpack_answer"]

import base64
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from assistant.runtime.settings import StoreSettings
from tools.errors import AdvisorError, InvalidInput

MAX_THREAD_ID_CHARS = 128
MAX_OWNER_CHARS = 512  # 'user::' + the base32 of a 256-byte name
_KEY = re.compile(r"^[A-Za-z0-9_.:@\-]+$")
_SURROGATE = re.compile("[\ud800-\udfff\ufdd0]")  # U+FDD0, a noncharacter, marks a packed answer
_PACKED = "\ufdd0z:"
_PACK_OVER_BYTES = 1024


class ThreadStoreError(AdvisorError):
    """The conversation store could not do what was asked; the message is for the user."""


class StoreUnavailable(ThreadStoreError):
    """The store cannot be reached or written (locked, damaged, disk full, database down)."""


class InvalidState(ThreadStoreError, ValueError):
    """The engine handed over a state that JSON cannot hold."""


class ThreadTooLarge(ThreadStoreError):
    """One turn (with the thread's state) is larger than the per-thread cap."""


class StoreFull(ThreadStoreError):
    """All threads together have reached the total size cap."""


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str
    at: str  # ISO 8601, UTC

    def as_json(self) -> dict[str, str]:
        return {"question": self.question, "answer": self.answer, "at": self.at}


@dataclass
class ThreadRecord:
    """A thread as stored: the latest state and the kept turns (oldest first)."""

    thread_id: str
    owner: str
    state: dict[str, Any] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    turn_count: int = 0  # every turn ever appended, including compacted ones
    size_bytes: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def compacted_turns(self) -> int:
        return self.turn_count - len(self.turns)

    def as_json(self) -> dict[str, Any]:
        """The public shape of `gpu-advisor thread show --json` and GET /api/threads/{id}."""
        return {"thread_id": self.thread_id, "turns": [t.as_json() for t in self.turns],
                "turn_count": self.turn_count, "compacted_turns": self.compacted_turns,
                "updated_at": _iso(self.updated_at)}


@dataclass(frozen=True)
class ThreadSummary:
    thread_id: str
    turn_count: int
    first_question: str
    updated_at: float
    size_bytes: int

    def as_json(self) -> dict[str, Any]:
        return {"thread_id": self.thread_id, "turn_count": self.turn_count, "first_question": self.first_question,
                "updated_at": _iso(self.updated_at), "size_bytes": self.size_bytes}


class ThreadStore(Protocol):
    """Where conversations live. Every call names the owner; another owner's thread is unknown."""

    name: str
    notices: list[str]

    def load(self, owner: str, thread_id: str) -> ThreadRecord | None: ...

    def append_turn(self, owner: str, thread_id: str, question: str, answer: str,
                    state: dict[str, Any]) -> ThreadRecord: ...

    def list_threads(self, owner: str) -> list[ThreadSummary]: ...

    def ping(self) -> None: ...

    def delete(self, owner: str, thread_id: str) -> bool: ...

    def purge_expired(self) -> int: ...

    def close(self) -> None: ...


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds") if ts else ""


def now_iso(ts: float | None = None) -> str:
    return _iso(time.time() if ts is None else ts)


def check_key(owner: Any, thread_id: Any) -> tuple[str, str]:
    """Validate an (owner, thread id) pair.

    Raises:
        InvalidInput: an empty, over-long or oddly spelled owner or thread id.
    """
    for name, value, limit in (("owner", owner, MAX_OWNER_CHARS), ("thread id", thread_id, MAX_THREAD_ID_CHARS)):
        if not isinstance(value, str) or not value or len(value) > limit or not _KEY.match(value):
            shown = value[:40] if isinstance(value, str) else value
            raise InvalidInput(name, shown, f"1 to {limit} letters, digits, '-', '_', '.', ':' or '@'")
    return owner, thread_id


def turn_bytes(question: str, answer: str, at: str) -> int:
    return len(question.encode("utf-8")) + len(answer.encode("utf-8")) + len(at)


def state_json(state: dict[str, Any]) -> str:
    """The state as compact JSON; a lone surrogate in it becomes U+FFFD.

    Raises:
        InvalidState: what JSON cannot hold (NaN, infinity, objects that are not JSON types).
    """
    try:
        text = json.dumps(state or {}, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidState(f"The thread state could not be saved as JSON ({exc}); this turn was not saved.") from None
    return clean_text(text)


def clean_text(text: str) -> str:
    """Text that UTF-8 can store: a lone surrogate (or the packed-answer mark U+FDD0, a noncharacter)
    becomes U+FFFD instead of failing the write."""
    return _SURROGATE.sub("\ufffd", text)


def pack_answer(answer: str) -> str:
    """An answer as stored: over 1 KB, the base64 of its zlib stream behind the mark (a TEXT column holds
    it on both back ends); shorter, or when that is not smaller, as it is."""
    import zlib

    raw = answer.encode("utf-8")
    if len(raw) <= _PACK_OVER_BYTES:
        return answer
    packed = _PACKED + base64.b64encode(zlib.compress(raw, 9)).decode("ascii")
    return packed if len(packed) < len(raw) else answer


def unpack_answer(stored: str) -> str:
    """The answer text of `pack_answer`'s result."""
    import zlib

    if not stored.startswith(_PACKED):
        return stored
    return zlib.decompress(base64.b64decode(stored[len(_PACKED):])).decode("utf-8")


def plan_append(kept: list[tuple[int, int]], new_bytes: int, state_bytes: int,
                limits: StoreSettings) -> tuple[int, int]:
    """Which kept turns to drop so the thread stays within its caps.

    Args:
        kept: (seq, bytes) of the thread's kept turns, oldest first, without the new one.
        new_bytes: bytes of the turn being appended.
        state_bytes: bytes of the new state.
        limits: max_turns and max_thread_bytes.

    Returns:
        (drop_through_seq, new_size_bytes): turns with seq <= drop_through_seq are dropped (0: none;
        only an operator's max_turns drops any).

    Raises:
        ThreadTooLarge: the new turn and the state alone exceed the per-thread cap, or the thread is full.
    """
    if state_bytes + new_bytes > limits.max_thread_bytes:
        raise ThreadTooLarge(
            f"This turn is too large to keep in the conversation ({(state_bytes + new_bytes) / 1024:,.0f} KB; the "
            f"per-thread limit is {limits.max_thread_bytes / 1024:,.0f} KB, GPU_ADVISOR_THREAD_MAX_KB). It was "
            "answered but not saved; ask a shorter question or start a new thread.")
    kept = list(kept)
    size = state_bytes + new_bytes + sum(b for _, b in kept)
    drop_through = 0
    while kept and limits.max_turns and len(kept) + 1 > limits.max_turns:
        seq, b = kept.pop(0)
        drop_through, size = seq, size - b
    if size > limits.max_thread_bytes:
        raise ThreadTooLarge(
            f"This conversation has reached its size limit ({limits.max_thread_bytes / 1024:,.0f} KB, "
            f"GPU_ADVISOR_THREAD_MAX_KB) with {len(kept)} turns, all kept: this answer was not saved to it. "
            "Start a new conversation to go on, or delete this one.")
    return drop_through, size


def store_full_message(total_bytes: int, limits: StoreSettings) -> str:
    return (f"The conversation store is full ({total_bytes / 2**20:,.0f} MB of {limits.max_total_bytes / 2**20:,.0f} MB, "
            "GPU_ADVISOR_STORE_MAX_MB): this answer was not saved to the thread. Delete old threads "
            "(`gpu-advisor thread delete ID`) or raise the limit; threads also expire after "
            f"{limits.ttl_days:g} days.")
