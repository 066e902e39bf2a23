"""Issue 31, defect 7: 4xx, never 500, for malformed input. Gradio's queue/join with an unknown fn_index
gave 500 with a traceback in the log; validly signed but malformed Slack bodies (`{not json`, `[]`, deep
nesting) gave 500."""

from __future__ import annotations

import logging
from typing import Iterator

import httpx
import pytest

from tests.slack.mock_slack import BOT_TOKEN, SIGNING_SECRET, MockSlack, RecordingAdvisor, signed_headers

GRADIO_BODIES = [
    pytest.param(b'{"data": [], "fn_index": 999, "session_hash": "s1"}', id="unknown-fn-index"),
    pytest.param(b'{"data": [], "fn_index": -1, "session_hash": "s1"}', id="negative-fn-index"),
    pytest.param(b'{"data": [], "fn_index": "0", "session_hash": "s1"}', id="fn-index-text"),
    pytest.param(b'{"data": "x", "fn_index": 0, "session_hash": "s1"}', id="data-not-a-list"),
    pytest.param(b"{not json", id="not-json"),
    pytest.param(b"[]", id="a-list"),
    pytest.param(b"[" * 5000 + b"]" * 5000, id="deep-nesting"),
    pytest.param(b'{"data": [], "fn_index": 0, "session_hash": "\\ud800"}', id="lone-surrogate"),
    pytest.param(b"\xff\xfe", id="not-utf8"),
]


@pytest.mark.parametrize("path", ["gradio_api/queue/join", "gradio_api/run/predict"])
@pytest.mark.parametrize("body", GRADIO_BODIES)
def test_malformed_gradio_calls_get_4xx(web_app, path, body, caplog):
    caplog.set_level(logging.ERROR)
    r = httpx.post(web_app + path, content=body, headers={"content-type": "application/json"}, timeout=30)
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
    assert not [x for x in caplog.records if x.exc_info], "a traceback was logged"
    assert httpx.get(web_app, timeout=30).status_code == 200  # still up


@pytest.fixture()
def slack_http() -> Iterator[object]:
    from starlette.testclient import TestClient

    from assistant.frontends.slack.bot import build_app, build_http_app

    mock = MockSlack()
    app = build_app(token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=mock.api_url,
                    advisor=RecordingAdvisor(), process_before_response=True)
    yield TestClient(build_http_app(app), raise_server_exceptions=False)
    mock.close()


SLACK_BODIES = [
    pytest.param("{not json", "application/json", id="not-json"),
    pytest.param("[]", "application/json", id="a-list"),
    pytest.param('"just a string"', "application/json", id="a-string"),
    pytest.param("[" * 5000 + "]" * 5000, "application/json", id="deep-nesting"),
    pytest.param('{"type": "event_callback", "event": ' + "[" * 3000 + "]" * 3000 + "}", "application/json",
                 id="deep-event"),
    pytest.param('{"type": "event_callback", "event": "x"}', "application/json", id="event-a-string"),
    pytest.param('{"type": "event_callback", "event": []}', "application/json", id="event-a-list"),
    pytest.param('{"type": "event_callback", "event": {"type": "app_mention", "text": 5, "channel": []}}',
                 "application/json", id="event-wrong-types"),
    pytest.param('{"command": "/gpu", "text": ["x"], "trigger_id": {}}', "application/json", id="command-wrong-types"),
    pytest.param("payload={not json", "application/x-www-form-urlencoded", id="form-payload-not-json"),
    pytest.param("payload=%5B%5D", "application/x-www-form-urlencoded", id="form-payload-a-list"),
]


@pytest.mark.parametrize("body, ctype", SLACK_BODIES)
def test_malformed_signed_slack_bodies_get_4xx(slack_http, body, ctype):
    hdrs = {k: v[0] for k, v in signed_headers(body, content_type=ctype).items()}
    r = slack_http.post("/slack/events", content=body.encode(), headers=hdrs)
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
