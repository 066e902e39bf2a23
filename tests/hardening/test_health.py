"""Issue 31, defect 10: the app has a liveness and a readiness endpoint (the first request after the port
opened got 404; only the bot had /healthz). /readyz checks the conversation store and the catalog."""

from __future__ import annotations

import httpx

from tests.hardening.conftest import free_port


def test_healthz_and_readyz(web_app):
    live = httpx.get(web_app + "healthz", timeout=30)
    assert live.status_code == 200 and live.json() == {"ok": True}
    ready = httpx.get(web_app + "readyz", timeout=60)
    assert ready.status_code == 200, ready.text
    assert ready.json()["ready"] is True and ready.json()["checks"] == {"store": "ok", "catalog": "ok"}


def test_readyz_is_503_naming_the_store_when_the_database_is_down(monkeypatch, tmp_path):
    import app

    closed = free_port()  # nothing listens there
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", f"postgresql://gpa:pw-not-shown@127.0.0.1:{closed}/gpa")
    monkeypatch.setenv("GPU_ADVISOR_AUTH", "alice:alice-pw")  # probes need no credentials
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        assert httpx.get(url + "healthz", timeout=30).status_code == 200
        r = httpx.get(url + "readyz", timeout=60)
        body = r.json()
        assert r.status_code == 503 and body["ready"] is False and body["checks"]["catalog"] == "ok"
        assert "conversation database" in body["checks"]["store"] and "pw-not-shown" not in r.text
    finally:
        demo.close()
