"""The team conversation store: PostgreSQL through psycopg 3 (GPU_ADVISOR_DATABASE_URL=postgresql://…).

Every app replica and Slack bot pointing at the same database shares the threads. An append locks
the thread's row (INSERT … ON CONFLICT DO NOTHING, then SELECT … FOR UPDATE) inside one transaction,
so writers serialise per thread, not per database. The tables are created on first use under an
advisory lock (several replicas may start at once).
"""

from __future__ import annotations

__all__ = ["PostgresThreadStore"]

import queue
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from assistant.runtime.settings import StoreSettings
from assistant.threads.base import StoreUnavailable
from assistant.threads.sql import SqlThreadStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS gpa_threads (
    owner TEXT NOT NULL, thread_id TEXT NOT NULL, state TEXT NOT NULL, turn_count INTEGER NOT NULL,
    size_bytes BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    first_question TEXT NOT NULL, PRIMARY KEY (owner, thread_id));
CREATE INDEX IF NOT EXISTS gpa_threads_updated ON gpa_threads (updated_at);
CREATE TABLE IF NOT EXISTS gpa_turns (
    owner TEXT NOT NULL, thread_id TEXT NOT NULL, seq INTEGER NOT NULL, question TEXT NOT NULL,
    answer TEXT NOT NULL, at TEXT NOT NULL, bytes INTEGER NOT NULL, PRIMARY KEY (owner, thread_id, seq));
"""
_SCHEMA_LOCK_KEY = 0x6770_7561  # pg_advisory_xact_lock key: "gpua"
_POOL_SIZE = 8


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = (f"{parts.username}@" if parts.username else "") + host + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "(unparseable URL)"


class PostgresThreadStore(SqlThreadStore):
    """Threads in PostgreSQL tables gpa_threads and gpa_turns; a small pool of connections per process."""

    name = "postgresql"
    placeholder = "%s"
    lock_clause = " FOR UPDATE"

    def __init__(self, url: str, limits: StoreSettings | None = None, *, connect_timeout_s: float = 5.0,
                 clock: Callable[[], float] = time.time):
        from assistant.runtime.settings import store_settings

        super().__init__(limits or store_settings(), clock)
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(_POOL_SIZE)
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise StoreUnavailable("GPU_ADVISOR_DATABASE_URL needs psycopg 3: pip install 'psycopg[binary]'.") from None
        self._run(True, self._create_schema)

    @staticmethod
    def _create_schema(cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
        cur.execute(_SCHEMA)

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self.url, connect_timeout=max(1, int(self.connect_timeout_s)),
                                   application_name="gpu-advisor", autocommit=True)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"Could not connect to the conversation database {_redact(self.url)} "
                                   f"({type(exc).__name__}); check GPU_ADVISOR_DATABASE_URL and that "
                                   "PostgreSQL is running.") from None

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        import psycopg

        if not self._slots.acquire(timeout=30):
            raise StoreUnavailable("All connections to the conversation database are busy; try again.")
        conn = None
        try:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self._connect()
            if conn.closed:
                conn = self._connect()
            with conn.transaction():
                with conn.cursor() as cur:
                    yield cur
            self._idle.put(conn)
            conn = None
        except psycopg.Error:
            if conn is not None and not conn.closed and conn.info.transaction_status == 0:  # idle: reusable
                self._idle.put(conn)
            elif conn is not None:
                conn.close()
            conn = None
            raise
        finally:
            if conn is not None and not conn.closed:  # a non-database exception (StoreFull): rolled back
                self._idle.put(conn)
            self._slots.release()

    def _is_db_error(self, exc: BaseException) -> bool:
        import psycopg

        return isinstance(exc, psycopg.Error)

    def _is_transient(self, exc: BaseException) -> bool:
        import psycopg
        from psycopg import errors

        return isinstance(exc, (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable,
                                errors.UniqueViolation, psycopg.OperationalError))

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        from psycopg import errors

        if isinstance(exc, (errors.DiskFull, errors.OutOfMemory)):
            return StoreUnavailable("The conversation database is out of space: this turn was not saved "
                                    "(other threads are unaffected).")
        return StoreUnavailable(f"The conversation database {_redact(self.url)} is unavailable "
                                f"({type(exc).__name__}): this turn was not saved.")

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
