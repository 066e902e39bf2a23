"""The Slack HTTP endpoint under a burst: 50 signed events sent within one second, against a real
uvicorn server on loopback, the real advisor (router backend) and the mock Slack Web API."""

from __future__ import annotations

import socket
import statistics
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.slack.mock_slack import MockSlack, event_body, mention, new_channel, signed_headers

QUESTIONS = ["Cheapest H100 per hour?", "Can I run Llama-3-8B in FP16 on a 24 GB GPU?", "do i need nvlink?",
             "Tokens/s for a 13B model on an L4?", "VRAM for Mixtral 8x7B in 4-bit?"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def burst(n: int = 50, mock: MockSlack | None = None) -> dict[str, Any]:
    import uvicorn

    from assistant.service import api
    from assistant.frontends.slack import bot as slack
    from tests.slack.mock_slack import BOT_TOKEN, SIGNING_SECRET

    own = mock is None
    mock = mock or MockSlack()
    app = slack.build_app(token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=mock.api_url,
                          advisor=api.advisor())
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(slack.build_http_app(app), host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    try:
        mock.wait_for(lambda: server.started, timeout_s=10)
        url = f"http://127.0.0.1:{port}/slack/events"
        channels = [new_channel("L") for _ in range(n)]
        bodies = [event_body(mention(ch, QUESTIONS[i % len(QUESTIONS)], user=f"U{i:05d}")) for i, ch in enumerate(channels)]

        def post(i: int) -> tuple[int, float]:
            time.sleep(i * (0.9 / n))  # spread over one second
            body = bodies[i]
            req = urllib.request.Request(url, data=body.encode(), method="POST",
                                         headers={k: v[0] for k, v in signed_headers(body).items()})
            t = time.perf_counter()
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, time.perf_counter() - t

        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n) as ex:
            acks = list(ex.map(post, range(n)))
        sent_s = time.perf_counter() - t0

        def answered() -> list[str]:
            return [ch for ch in channels if mock.calls_to("chat.update", ch) or
                    len(mock.calls_to("chat.postMessage", ch)) >= 2]

        mock.wait_for(lambda: len(answered()) == n, timeout_s=120)
        done_s = time.perf_counter() - t0
        per_channel = [len(mock.calls_to("chat.update", ch)) for ch in channels]
        lat = [a[1] for a in acks]
        return {"events": n, "sent_within_s": sent_s, "acked_200": sum(a[0] == 200 for a in acks),
                "ack_p50_s": statistics.median(lat), "ack_max_s": max(lat), "answered": len(answered()),
                "answers_per_event_max": max(per_channel), "all_answered_after_s": done_s}
    finally:
        server.should_exit = True
        th.join(timeout=10)
        if own:
            mock.close()


def run_slack_burst() -> tuple[str, str]:
    r = burst()
    return ("Slack burst: 50 signed events in 1 s", f"{r['acked_200']}/50 acked, ack p50 {r['ack_p50_s']:.2f} s / max "
            f"{r['ack_max_s']:.2f} s, {r['answered']}/50 answered once, all within {r['all_answered_after_s']:.1f} s")
