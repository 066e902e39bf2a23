"""Conversation storage: 200 turns in one thread, on SQLite and on PostgreSQL.

Usage: .venv/bin/python -m benchmarks.thread_storage [--turns 200] [--no-advisor]

For each back end it prints the size on disk after 1, 100 and 200 turns and the latency at turns 1,
100 and 200 (also the medians of turns 1-10, 91-100 and 191-200, which are steadier): once for the store
alone (append_turn with a 2,000-character answer) and once for whole advisor turns (load, engine,
append) with follow-up questions. Issue 19's targets: a 100-turn thread <= 5 MB on disk; turn 100
within 1.5x the time of turn 1. PostgreSQL is skipped, with the reason, when it is not running
(a database is created for the run and dropped after; admin URL from GPU_ADVISOR_BENCH_PG).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GPU_ADVISOR_HOME", tempfile.mkdtemp(prefix="gpu-advisor-bench-"))

PG_ADMIN = os.environ.get("GPU_ADVISOR_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
QUESTIONS = ["Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", "What if I use 32k context instead?",
             "and in int4?", "Cheapest H100 per hour?", "and on spot?"]
ANSWER = ("Yes - it fits. Llama 3 8B (inference, fp16) needs 18.5 GB per GPU on a 24 GB GPU, leaving 7.3 GB. "
          * 20)[:2000]
MARKS = (1, 100, 200)


def _sqlite() -> tuple[Any, Callable[[], int], Callable[[], None]]:
    from assistant.threads.sqlite_store import SqliteThreadStore

    d = tempfile.mkdtemp(prefix="gpa-threads-")
    path = os.path.join(d, "conversations.sqlite")
    store = SqliteThreadStore(path)

    def size() -> int:
        return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))

    return store, size, store.close


def _postgres() -> tuple[Any, Callable[[], int], Callable[[], None]]:
    import psycopg

    from assistant.threads.postgres_store import PostgresThreadStore

    admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    name = f"gpa_bench_{secrets.token_hex(5)}"
    admin.execute(f"CREATE DATABASE {name}")
    url = PG_ADMIN.rsplit("/", 1)[0] + "/" + name
    store = PostgresThreadStore(url)

    def size() -> int:
        with psycopg.connect(url, autocommit=True) as c:
            return int(c.execute("SELECT pg_total_relation_size('gpa_threads') + "
                                 "pg_total_relation_size('gpa_turns')").fetchone()[0])

    def close() -> None:
        store.close()
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()

    return store, size, close


def _run(store: Any, size: Callable[[], int], turns: int, one_turn: Callable[[int], None]) -> dict[str, Any]:
    ms: list[float] = []
    sizes: dict[int, int] = {}
    for i in range(1, turns + 1):
        t = time.perf_counter()
        one_turn(i)
        ms.append((time.perf_counter() - t) * 1000)
        if i in MARKS:
            sizes[i] = size()
    return {"ms": ms, "sizes": sizes}


def _fmt(r: dict[str, Any]) -> str:
    ms = r["ms"]
    at = " / ".join(f"{ms[m - 1]:.1f}" for m in MARKS if m <= len(ms))
    windows = [(1, 10), (91, 100), (191, 200)]
    med = " / ".join(f"{statistics.median(ms[a - 1:b]):.1f}" for a, b in windows if b <= len(ms))
    mb = " / ".join(f"{r['sizes'][m] / 1e6:.2f}" for m in MARKS if m in r["sizes"])
    return f"ms at turns 1/100/200: {at} (medians of turns 1-10/91-100/191-200: {med}); MB on disk: {mb}"


def run_backend(name: str, turns: int, advisor: bool) -> list[tuple[str, str]]:
    opener = _sqlite if name == "sqlite" else _postgres
    try:
        store, size, close = opener()
    except Exception as exc:  # PostgreSQL not running, psycopg missing
        return [(f"thread storage ({name})", f"skipped: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")]
    rows = []
    try:
        r = _run(store, size, turns, lambda i: store.append_turn("local:bench", "store-only", f"question {i}",
                                                                   ANSWER, {"turn": i}))
        kept = len(store.load("local:bench", "store-only").turns)
        rows.append((f"thread store append ({name}, {kept} turns kept)", _fmt(r)))
        if advisor:
            from assistant.service.advisor import Advisor

            adv = Advisor(store=store)
            for q in QUESTIONS:  # warm-up in another thread: imports, price database, caches
                adv.ask(q, thread_id="warm-up", owner="local:bench")
            r = _run(store, size, turns, lambda i: adv.ask(QUESTIONS[(i - 1) % len(QUESTIONS)],
                                                           thread_id="advisor", owner="local:bench"))
            rows.append((f"advisor turn with store ({name})", _fmt(r)))
    finally:
        close()
    return rows


def run_all_rows(turns: int = 200, advisor: bool = True) -> list[tuple[str, str]]:
    """Rows for benchmarks/run_all.py."""
    return run_backend("sqlite", turns, advisor) + run_backend("postgresql", turns, advisor)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--no-advisor", action="store_true", help="time the store alone")
    a = ap.parse_args()
    for k, v in run_all_rows(a.turns, not a.no_advisor):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
