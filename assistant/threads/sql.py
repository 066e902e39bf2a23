"""The store's operations in SQL, shared by the SQLite and PostgreSQL back ends.

Two tables: `gpa_threads` (one row per owner + thread id: state JSON, counters, size, times) and
`gpa_turns` (one row per kept turn). An append runs in one write transaction that holds the
thread's lock (SQLite: BEGIN IMMEDIATE, the database's write lock; PostgreSQL: the thread row,
SELECT … FOR UPDATE), so concurrent writers from any number of processes serialise and every turn
gets the next sequence number: none is lost or forked. Transient conflicts (busy, deadlock,
serialisation failure, a dropped connection) are retried with jittered back-off.
"""

from __future__ import annotations

__all__ = ["SqlThreadStore"]

import random
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from assistant.runtime.settings import StoreSettings
from assistant.threads.base import (StoreFull, StoreUnavailable, ThreadRecord, ThreadStoreError, ThreadSummary, Turn, check_key,
                                    clean_text, now_iso, pack_answer, plan_append, state_json, store_full_message, turn_bytes,
                                    unpack_answer)

_RETRIES = 8
_TOTAL_CACHE_S = 2.0
_PURGE_EVERY_S = 3600.0
_LIST_LIMIT = 500


class SqlThreadStore:
    """Back-end independent logic; subclasses provide `_transaction(write)` yielding a DB-API cursor, the
    placeholder style and which exceptions are transient."""

    name = "sql"
    placeholder = "?"
    lock_clause = ""  # PostgreSQL: " FOR UPDATE"
    retry_window_s = 10.0  # no new attempt after this long

    def __init__(self, limits: StoreSettings, clock: Callable[[], float] = time.time):
        self.limits = limits
        self.clock = clock
        self.notices: list[str] = []
        self._total: tuple[float, int] | None = None  # (when read, total bytes)
        self._total_lock = threading.Lock()
        self._last_purge = 0.0

    # ------------------------------------------------------------------ back-end hooks

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _is_transient(self, exc: BaseException) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"The conversation store is unavailable ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0][:160] if str(exc) else ''}).")

    def close(self) -> None:  # pragma: no cover - overridden
        pass

    # ------------------------------------------------------------------ helpers

    def _sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    def _run(self, write: bool, fn: Callable[[Any], Any]) -> Any:
        """fn(cursor) in a transaction, retried on transient conflicts; other DB errors -> StoreUnavailable."""
        delay, started = 0.01, time.monotonic()
        for attempt in range(_RETRIES):
            try:
                with self._transaction(write) as cur:
                    return fn(cur)
            except ThreadStoreError:
                raise
            except Exception as exc:
                if not self._is_db_error(exc):
                    raise
                if (attempt + 1 < _RETRIES and self._is_transient(exc)
                        and time.monotonic() - started < self.retry_window_s):
                    time.sleep(delay * (0.5 + random.random()))
                    delay = min(delay * 2, 0.5)
                    continue
                raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")

    def _is_db_error(self, exc: BaseException) -> bool:  # pragma: no cover - overridden
        return False

    def _cutoff(self) -> float:
        return self.clock() - self.limits.ttl_days * 86400.0

    def _total_bytes(self, cur: Any) -> int:
        now = time.monotonic()
        with self._total_lock:
            if self._total is not None and now - self._total[0] < _TOTAL_CACHE_S:
                return self._total[1]
        cur.execute("SELECT COALESCE(SUM(size_bytes), 0) FROM gpa_threads")
        total = int(cur.fetchone()[0])
        with self._total_lock:
            self._total = (now, total)
        return total

    def _add_total(self, delta: int) -> None:
        with self._total_lock:
            if self._total is not None:
                self._total = (self._total[0], self._total[1] + delta)

    # ------------------------------------------------------------------ the interface

    def load(self, owner: str, thread_id: str) -> ThreadRecord | None:
        """The thread's state and kept turns, or None when it is unknown, expired or another owner's.

        Raises:
            InvalidInput: a malformed owner or thread id.
            StoreUnavailable: the store cannot be read.
        """
        check_key(owner, thread_id)
        return self._run(False, lambda cur: self._load(cur, owner, thread_id))

    def _load(self, cur: Any, owner: str, thread_id: str) -> ThreadRecord | None:
        import json

        cur.execute(self._sql("SELECT state, turn_count, size_bytes, created_at, updated_at FROM gpa_threads "
                              "WHERE owner = ? AND thread_id = ? AND updated_at >= ?"),
                    (owner, thread_id, self._cutoff()))
        row = cur.fetchone()
        if row is None:
            return None
        cur.execute(self._sql("SELECT question, answer, at FROM gpa_turns WHERE owner = ? AND thread_id = ? "
                              "ORDER BY seq"), (owner, thread_id))
        turns = [Turn(q, unpack_answer(a), at) for q, a, at in cur.fetchall()]
        return ThreadRecord(thread_id=thread_id, owner=owner, state=json.loads(row[0] or "{}"), turns=turns,
                            turn_count=int(row[1]), size_bytes=int(row[2]), created_at=float(row[3]),
                            updated_at=float(row[4]))

    def append_turn(self, owner: str, thread_id: str, question: str, answer: str,
                    state: dict[str, Any]) -> ThreadRecord:
        """Add one turn and replace the state, atomically (compacts only past an operator's max_turns).

        Returns:
            The thread after the append.

        Raises:
            InvalidInput: a malformed owner or thread id, or a state JSON cannot hold.
            ThreadTooLarge: the turn alone exceeds the per-thread cap, or the thread is full (nothing is written).
            StoreFull: the total cap is reached (nothing is written).
            StoreUnavailable: the store cannot be written (locked for too long, disk full, database down).
        """
        check_key(owner, thread_id)
        question, answer = clean_text(str(question)), clean_text(str(answer))
        st = state_json(state)
        if self.clock() - self._last_purge > _PURGE_EVERY_S:
            self._last_purge = self.clock()
            try:
                self.purge_expired()
            except StoreUnavailable:
                pass
        rec = self._run(True, lambda cur: self._append(cur, owner, thread_id, question, answer, st))
        return rec

    def _append(self, cur: Any, owner: str, thread_id: str, question: str, answer: str, st: str) -> ThreadRecord:
        now = self.clock()
        at = now_iso(now)
        cur.execute(self._sql("INSERT INTO gpa_threads (owner, thread_id, state, turn_count, size_bytes, created_at, "
                              "updated_at, first_question) VALUES (?, ?, '{}', 0, 0, ?, ?, ?) "
                              "ON CONFLICT (owner, thread_id) DO NOTHING"),
                    (owner, thread_id, now, now, question[:200]))
        cur.execute(self._sql("SELECT turn_count, size_bytes, updated_at, created_at, first_question FROM gpa_threads "
                              "WHERE owner = ? AND thread_id = ?" + self.lock_clause), (owner, thread_id))
        count, old_size, updated, created, first = cur.fetchone()
        if float(updated) < self._cutoff():  # expired but not purged yet: it starts again
            cur.execute(self._sql("DELETE FROM gpa_turns WHERE owner = ? AND thread_id = ?"), (owner, thread_id))
            count, created, first = 0, now, question[:200]
        cur.execute(self._sql("SELECT seq, bytes FROM gpa_turns WHERE owner = ? AND thread_id = ? ORDER BY seq"),
                    (owner, thread_id))
        kept = [(int(s), int(b)) for s, b in cur.fetchall()]
        answer = pack_answer(answer)
        new_b = turn_bytes(question, answer, at)
        drop_through, size = plan_append(kept, new_b, len(st.encode("utf-8")), self.limits)
        total = self._total_bytes(cur)
        if size > int(old_size) and total - int(old_size) + size > self.limits.max_total_bytes:
            raise StoreFull(store_full_message(total, self.limits))
        if drop_through:
            cur.execute(self._sql("DELETE FROM gpa_turns WHERE owner = ? AND thread_id = ? AND seq <= ?"),
                        (owner, thread_id, drop_through))
        seq = int(count) + 1
        cur.execute(self._sql("INSERT INTO gpa_turns (owner, thread_id, seq, question, answer, at, bytes) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?)"), (owner, thread_id, seq, question, answer, at, new_b))
        cur.execute(self._sql("UPDATE gpa_threads SET state = ?, turn_count = ?, size_bytes = ?, updated_at = ?, "
                              "created_at = ?, first_question = ? WHERE owner = ? AND thread_id = ?"),
                    (st, seq, size, now, created, first or question[:200], owner, thread_id))
        self._add_total(size - int(old_size))
        rec = self._load(cur, owner, thread_id)
        assert rec is not None
        return rec

    def ping(self) -> None:
        """Read the store once (readiness probes).

        Raises:
            StoreUnavailable: the store cannot be read.
        """
        self._run(False, lambda cur: cur.execute("SELECT count(*) FROM gpa_threads WHERE 1 = 0"))

    def list_threads(self, owner: str) -> list[ThreadSummary]:
        """The owner's live threads, most recently used first (at most 500).

        Raises:
            InvalidInput: a malformed owner.
            StoreUnavailable: the store cannot be read.
        """
        check_key(owner, "-")

        def run(cur: Any) -> list[ThreadSummary]:
            cur.execute(self._sql("SELECT thread_id, turn_count, first_question, updated_at, size_bytes FROM gpa_threads "
                                  f"WHERE owner = ? AND updated_at >= ? ORDER BY updated_at DESC LIMIT {_LIST_LIMIT}"),
                        (owner, self._cutoff()))
            return [ThreadSummary(t, int(n), q, float(u), int(s)) for t, n, q, u, s in cur.fetchall()]

        return self._run(False, run)

    def delete(self, owner: str, thread_id: str) -> bool:
        """Forget a thread; False when the owner has no such thread.

        Raises:
            InvalidInput: a malformed owner or thread id.
            StoreUnavailable: the store cannot be written.
        """
        check_key(owner, thread_id)

        def run(cur: Any) -> bool:
            cur.execute(self._sql("DELETE FROM gpa_turns WHERE owner = ? AND thread_id = ?"), (owner, thread_id))
            cur.execute(self._sql("DELETE FROM gpa_threads WHERE owner = ? AND thread_id = ?"), (owner, thread_id))
            return cur.rowcount > 0

        done = self._run(True, run)
        with self._total_lock:
            self._total = None
        return done

    def purge_expired(self) -> int:
        """Delete threads untouched for longer than the TTL; returns how many.

        Raises:
            StoreUnavailable: the store cannot be written.
        """
        cutoff = self._cutoff()

        def run(cur: Any) -> int:
            cur.execute(self._sql("DELETE FROM gpa_turns WHERE (owner, thread_id) IN "
                                  "(SELECT owner, thread_id FROM gpa_threads WHERE updated_at < ?)"), (cutoff,))
            cur.execute(self._sql("DELETE FROM gpa_threads WHERE updated_at < ?"), (cutoff,))
            return cur.rowcount

        n = self._run(True, run)
        with self._total_lock:
            self._total = None
        return n
