"""Issue 31, defect 5: a slow dependency never freezes the server. With Redis accepting connections but
never answering, every request took 6-8 s and even GET / waited (the limit calls blocked the event
loop); a PostgreSQL outage mid-run was reported as "no such thread" (404) and answers lost the
thread's context instead of a clear 503."""

from __future__ import annotations

import logging
import threading
import time

import httpx
import pytest

from tests.hardening.conftest import free_port
from tests.hardening.tcp_proxy import CuttableProxy, hung_server
from tests.threads.services import pg_url  # noqa: F401  (fixture)


@pytest.fixture()
def launched(monkeypatch, tmp_path):
    """launched() -> the app's URL, started with the environment the test set (closed after)."""
    import app

    demos = []

    def start() -> str:
        monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path / f"home{len(demos)}"))
        app._LIMIT.buckets.clear()
        demo = app.build_demo()
        demos.append(demo)
        return app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)

    yield start
    for d in demos:
        d.close()


def test_a_hung_redis_never_blocks_the_event_loop(launched, monkeypatch, caplog):
    port = free_port()
    hung = hung_server(port)
    try:
        monkeypatch.setenv("GPU_ADVISOR_REDIS_URL", f"redis://127.0.0.1:{port}/0")
        url = launched()
        caplog.set_level(logging.WARNING, logger="gpu_advisor.security")
        httpx.post(url + "api/ask", json={"question": "Cheapest L4?"}, timeout=60)  # warm the advisor
        slow: list[float] = []

        def reads() -> None:
            for i in range(20):
                t0 = time.monotonic()
                httpx.get(url + f"api/threads/guess-{i}", timeout=30)
                slow.append(time.monotonic() - t0)

        worker = threading.Thread(target=reads)
        worker.start()
        page = []
        for _ in range(5):
            t0 = time.monotonic()
            assert httpx.get(url, timeout=30).status_code == 200
            page.append(time.monotonic() - t0)
        t0 = time.monotonic()
        r = httpx.post(url + "api/ask", json={"question": "Cheapest H100 per hour?"}, timeout=60)
        ask_s = time.monotonic() - t0
        worker.join()
        assert r.status_code == 200
        assert max(page) < 1.0 and ask_s < 2.0, (page, ask_s)
        assert sorted(slow)[len(slow) // 2] < 0.5 and max(slow) < 1.5, slow
        warned = [r for r in caplog.records if "Redis unavailable" in r.getMessage()]
        assert warned and len(warned) <= 3  # said, not once per request
    finally:
        hung.close()


def test_a_database_cut_mid_run_is_a_503_and_nothing_is_lost(launched, monkeypatch, pg_url):
    from urllib.parse import urlsplit

    db = urlsplit(pg_url)
    proxy = CuttableProxy(free_port(), (db.hostname, db.port or 5432))
    try:
        monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", f"postgresql://{db.username}@127.0.0.1:{proxy.port}{db.path}")
        url = launched()
        first = httpx.post(url + "api/ask", json={"question": "Can I run Llama-3-8B in FP16 on a 24 GB GPU?",
                                                   "thread_id": "cut-plan"}, timeout=120)
        assert first.status_code == 200, first.text
        proxy.cut()
        r = httpx.get(url + "api/threads/cut-plan", timeout=60)
        assert r.status_code == 503 and "conversation database" in r.json()["error"], r.text
        r = httpx.post(url + "api/ask", json={"question": "and at 32k context?", "thread_id": "cut-plan"}, timeout=60)
        assert r.status_code == 503 and "conversation database" in r.json()["error"], r.text  # not a fresh thread
        proxy.restore()
        r = httpx.post(url + "api/ask", json={"question": "and at 32k context?", "thread_id": "cut-plan"}, timeout=120)
        assert r.status_code == 200
        vram = [c for c in r.json()["tool_calls"] if c["name"] == "vram_calculator"]
        assert vram and vram[0]["args"]["model"] == "llama-3-8b"  # the context survived the outage
        turns = httpx.get(url + "api/threads/cut-plan", timeout=60).json()["turns"]
        assert [t["question"] for t in turns] == ["Can I run Llama-3-8B in FP16 on a 24 GB GPU?", "and at 32k context?"]
    finally:
        proxy.close()
