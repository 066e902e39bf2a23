"""The embedded conversation store: one SQLite file in the data directory (WAL, BEGIN IMMEDIATE).

Several processes (the app's workers, the CLI, the Slack bot) may write the same file: each append
takes SQLite's write lock with BEGIN IMMEDIATE, waits up to `busy_timeout_s` for it, and retries.
A damaged file is set aside (`*.corrupt-<time>`) and a new one started, with a notice.
"""

from __future__ import annotations

__all__ = ["SqliteThreadStore", "SCHEMA"]

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from assistant.runtime.settings import StoreSettings
from assistant.threads.base import StoreUnavailable
from assistant.threads.sql import SqlThreadStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS gpa_threads (
    owner TEXT NOT NULL, thread_id TEXT NOT NULL, state TEXT NOT NULL, turn_count INTEGER NOT NULL,
    size_bytes INTEGER NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, first_question TEXT NOT NULL,
    PRIMARY KEY (owner, thread_id));
CREATE INDEX IF NOT EXISTS gpa_threads_updated ON gpa_threads (updated_at);
CREATE TABLE IF NOT EXISTS gpa_turns (
    owner TEXT NOT NULL, thread_id TEXT NOT NULL, seq INTEGER NOT NULL, question TEXT NOT NULL,
    answer TEXT NOT NULL, at TEXT NOT NULL, bytes INTEGER NOT NULL, PRIMARY KEY (owner, thread_id, seq));
"""


class SqliteThreadStore(SqlThreadStore):
    """Threads in one SQLite file (or ":memory:", which lasts as long as the process)."""

    name = "sqlite"

    def __init__(self, path: str, limits: StoreSettings | None = None, *, busy_timeout_s: float = 5.0,
                 clock: Callable[[], float] = time.time):
        from assistant.runtime.settings import store_settings

        super().__init__(limits or store_settings(), clock)
        self.path = str(path)
        self.busy_timeout_s = busy_timeout_s
        self.retry_window_s = busy_timeout_s  # SQLite's busy handler already waited that long
        self._lock = threading.RLock()  # one connection per store: one transaction at a time in this process
        self._conn = self._open()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only takes effect on a new file: purges give space back
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
            # the WAL is checkpointed every 256 pages (1 MiB) and cut back to 1 MiB after, instead of the
            # default 1000 pages kept forever: a few MB of log would dwarf a store this size
            conn.execute("PRAGMA wal_autocheckpoint = 256")
            conn.execute("PRAGMA journal_size_limit = 1048576")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable at checkpoints; a crash loses no committed turn in WAL
        conn.executescript(SCHEMA)
        conn.execute("SELECT count(*) FROM gpa_threads").fetchone()
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            damaged = "not a database" in str(exc) or "malformed" in str(exc)
            if not damaged or self.path == ":memory:":
                raise self._unavailable(exc) from exc
        aside = f"{self.path}.corrupt-{int(time.time())}"
        try:
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                if os.path.exists(self.path + suffix):
                    os.replace(self.path + suffix, aside + suffix)
        except OSError as exc:
            raise self._unavailable(exc) from exc
        self.notices.append("The conversation store was damaged; it was set aside and a new one started "
                            "(earlier threads are not available).")
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            raise self._unavailable(exc) from exc

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # also when COMMIT itself failed (disk full)
                    try:
                        self._conn.rollback()
                    except sqlite3.Error:
                        pass
                raise
            finally:
                cur.close()

    def _is_db_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)

    def _is_transient(self, exc: BaseException) -> bool:
        text = str(exc).lower()
        return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        text = str(exc).lower()
        if "full" in text:
            return StoreUnavailable("The conversation store's disk is full: this turn was not saved "
                                    "(other threads are unaffected).")
        if "locked" in text or "busy" in text:
            return StoreUnavailable(f"The conversation store stayed locked for over {self.busy_timeout_s:g} s "
                                    "(another process holds it): this turn was not saved.")
        return super()._unavailable(exc)

    def purge_expired(self) -> int:
        n = super().purge_expired()
        if n:
            try:
                with self._lock:
                    self._conn.execute("PRAGMA incremental_vacuum")
            except sqlite3.Error:
                pass
        return n

    def close(self) -> None:
        with self._lock:
            self._conn.close()
