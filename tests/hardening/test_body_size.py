"""Issue 31, defect 6: bodies are capped while they are read. They were read whole before any size check
(200 MB body: +200 MB RSS; queue/join: +570 MB), and a Content-Length of 10 GB held the connection. Now
every POST route stops reading at GPU_ADVISOR_MAX_BODY_KB (default 2048) with 413."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

PATHS = ["gradio_api/queue/join", "gradio_api/call/ask", "gradio_api/run/predict", "api/ask", "login"]


def _raw(url: str, head: str, chunks: list[bytes] = (), timeout_s: float = 10.0) -> tuple[bytes, float]:
    """Send a request by hand; returns (the response's first bytes, seconds until they came)."""
    u = urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout_s) as s:
        t0 = time.monotonic()
        s.sendall(head.encode())
        try:
            for c in chunks:
                s.sendall(c)
        except OSError:  # the server answered and closed while we were still sending: what we want
            pass
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                more = s.recv(65536)
                if not more:
                    break
                data += more
        except OSError:
            pass
        return data, time.monotonic() - t0


@pytest.mark.parametrize("path", PATHS)
def test_an_announced_10_gb_body_is_refused_at_once(web_app, path):
    head = (f"POST /{path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 10000000000\r\n\r\n")
    data, took = _raw(web_app, head, [b'{"data": ['])
    assert data.startswith(b"HTTP/1.1 413"), data[:100]
    assert took < 3.0


@pytest.mark.parametrize("path", PATHS)
def test_a_chunked_body_over_the_cap_is_refused_while_it_is_read(web_app, path):
    head = f"POST /{path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    piece = b"x" * 65536
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    data, _ = _raw(web_app, head, [chunk] * 48)  # 3 MB, never terminated
    assert data.startswith(b"HTTP/1.1 413"), data[:100]


def test_a_body_under_the_cap_still_reaches_the_route(web_app):
    big_history = [{"role": "user", "content": "x" * 1000}] * 500  # a long chat sends ~0.6 MB of history
    r = httpx.post(web_app + "gradio_api/call/chat", json={"data": ["Cheapest L4?", big_history, "", [], "auto"]},
                   timeout=60)
    assert r.status_code == 200 and "event_id" in r.json()


def test_the_cap_is_a_setting(monkeypatch):
    from assistant.frontends.web.guard import body_limit_bytes
    from tools.errors import InvalidInput

    monkeypatch.setenv("GPU_ADVISOR_MAX_BODY_KB", "64")
    assert body_limit_bytes() == 65536
    monkeypatch.setenv("GPU_ADVISOR_MAX_BODY_KB", "lots")
    with pytest.raises(InvalidInput, match="GPU_ADVISOR_MAX_BODY_KB"):
        body_limit_bytes()
