"""A separate writer process for the concurrency tests: appends N turns to one thread as fast as it can.

Usage: python -m tests.threads.writer (sqlite PATH | postgresql URL) OWNER THREAD N LABEL START_AT
(START_AT: a time.time() to wait for, so that the writers start together)
Prints the number of appends that reported success.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from assistant.runtime.settings import StoreSettings
    from assistant.threads.postgres_store import PostgresThreadStore
    from assistant.threads.sqlite_store import SqliteThreadStore

    import time

    backend, where, owner, thread, n, label, start_at = argv
    limits = StoreSettings(max_turns=10_000)  # keep every turn, so the test can count them
    store = SqliteThreadStore(where, limits) if backend == "sqlite" else PostgresThreadStore(where, limits)
    ok = 0
    time.sleep(max(0.0, float(start_at) - time.time()))
    for i in range(int(n)):
        store.append_turn(owner, thread, f"{label}-{i}", f"answer {label}-{i}", {"last": f"{label}-{i}"})
        ok += 1
        time.sleep(0.002)  # a real turn spends ~30 ms answering between appends; 2 ms is enough to interleave
    print(ok)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
