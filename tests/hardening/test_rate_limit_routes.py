"""Issue 31, defect 4: one rate limit over every route that does work. It covered /api/ask only: Gradio's
chat and calculator routes and GET /api/threads/{id} (500 guesses at 70/s) were not limited, and a 429
carried no Retry-After."""

from __future__ import annotations

import json

import httpx
import pytest

JOIN = {"data": ["Cheapest L4?", [], "", [], "auto"], "fn_index": 0, "session_hash": "ratelimit01"}
ROUTES = [
    pytest.param("GET", "api/threads/guess-{i}", None, id="thread-read"),
    pytest.param("POST", "api/ask", {"question": "Cheapest A100?"}, id="rest-ask"),
    pytest.param("POST", "gradio_api/queue/join", JOIN, id="gradio-queue-join"),
    pytest.param("POST", "gradio_api/call/ask", {"data": ["Cheapest L4?", ""]}, id="gradio-call-ask"),
    pytest.param("POST", "gradio_api/run/predict", {"data": [], "fn_index": 1}, id="gradio-run"),
]


@pytest.fixture()
def tight_limit(web_app, monkeypatch):
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 6)  # a burst of one, then one every 10 s
    app._LIMIT.buckets.clear()
    yield web_app
    app._LIMIT.buckets.clear()


@pytest.mark.parametrize("method, path, body", ROUTES)
def test_each_route_that_does_work_is_limited_with_retry_after(tight_limit, method, path, body):
    codes, last = [], None
    for i in range(3):
        last = httpx.request(method, tight_limit + path.format(i=i), timeout=60,
                             content=json.dumps(body) if body is not None else None,
                             headers={"content-type": "application/json"})
        codes.append(last.status_code)
    assert codes[0] != 429 and codes[1:] == [429, 429], codes
    assert 1 <= int(last.headers["retry-after"]) <= 10
    assert "Too many requests" in last.json()["error"]


def test_the_budget_is_one_across_routes(tight_limit):
    assert httpx.get(tight_limit + "api/threads/x", timeout=30).status_code == 404
    r = httpx.post(tight_limit + "api/ask", json={"question": "Cheapest A100?"}, timeout=30)
    assert r.status_code == 429 and "retry-after" in r.headers


def test_pages_and_assets_are_not_counted(tight_limit):
    for _ in range(3):
        assert httpx.get(tight_limit, timeout=30).status_code == 200
    assert httpx.get(tight_limit + "api/threads/x", timeout=30).status_code == 404
