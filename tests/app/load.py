"""The app's /ask endpoint under load: 20 concurrent gradio_client clients x 25 questions each, on
loopback, router backend. Bounded in count and time."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

QUESTIONS = ["Cheapest H100 per hour?", "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?",
             "What if I use 32k context instead?", "Tokens/s for a 13B INT8 model on an L4 vs an A100?",
             "do i need nvlink for qlora?", "Per-second vs hourly billing: does it matter for 20-minute experiments?",
             "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟", "VRAM for Mixtral 8x7B in 4-bit?"]


def _drive(one: Callable[[int], tuple[list[float], int]], clients: int) -> dict[str, Any]:
    """Run `one(client_index) -> (latencies, errors)` for every client at once; the summary of all requests."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as ex:
        res = list(ex.map(one, range(clients)))
    wall = time.perf_counter() - t0
    lat = sorted(x for r in res for x in r[0])
    return {"requests": len(lat), "errors": sum(r[1] for r in res), "p50_s": statistics.median(lat),
            "p95_s": lat[int(0.95 * (len(lat) - 1))], "max_s": lat[-1], "wall_s": wall}


def timed(requests: int, ask: Callable[[int], bool]) -> tuple[list[float], int]:
    """Time `ask(i)` for i < requests; a False or an exception counts as an error."""
    lat, errors = [], 0
    for i in range(requests):
        t = time.perf_counter()
        try:
            errors += not ask(i)
        except Exception:
            errors += 1
        lat.append(time.perf_counter() - t)
    return lat, errors


def run(url: str, clients: int = 20, per_client: int = 25, *, shared_tls: bool = False) -> dict[str, Any]:
    """gradio_client's predict(question, thread, api_name="/ask"), each client asking one after another.

    shared_tls: give each Client one TLS context built once (`ssl_verify=httpx.create_ssl_context()`,
    verification on). The stock client builds a new one, reading the CA bundle, for both requests of
    every call (~50 ms CPU a call, on the same cores as the server here; assistant/frontends/web/queue.py)."""
    from gradio_client import Client

    tls: Any = True
    if shared_tls:
        import httpx

        tls = httpx.create_ssl_context()

    def one(c: int) -> tuple[list[float], int]:
        client = Client(url, verbose=False, ssl_verify=tls)
        return timed(per_client, lambda i: bool(client.predict(QUESTIONS[(c + i) % len(QUESTIONS)], f"load-{c}",
                                                               api_name="/ask").get("answer")))

    return _drive(one, clients)


def run_rest(url: str, clients: int = 20, per_client: int = 25) -> dict[str, Any]:
    """The same load on POST /api/ask (plain JSON, no Gradio queue), one keep-alive httpx client each."""
    import httpx

    def one(c: int) -> tuple[list[float], int]:
        with httpx.Client(timeout=60) as client:
            def ask(i: int) -> bool:
                r = client.post(url + "api/ask", json={"question": QUESTIONS[(c + i) % len(QUESTIONS)],
                                                       "thread_id": f"rest-{c}"})
                return r.status_code == 200 and bool(r.json().get("answer"))

            return timed(per_client, ask)

    return _drive(one, clients)


def _row(r: dict[str, Any]) -> str:
    return (f"{r['requests']} requests, {r['errors']} errors, p50 {r['p50_s']:.2f} s / p95 {r['p95_s']:.2f} s "
            f"(max {r['max_s']:.2f} s, {r['wall_s']:.0f} s wall)")


def run_app_load() -> list[tuple[str, str]]:
    import os

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app
    from tests.app.conftest import free_port

    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    # The 20 clients share one loopback address here; real users each have their own bucket.
    app._LIMIT.per_min = 0
    try:
        rest = run_rest(url)
        lean = run(url, shared_tls=True)
        stock = run(url)
    finally:
        demo.close()
    return [("app POST /api/ask load: 20 clients x 25", _row(rest)),
            ("app Gradio /ask load (gradio_client, one TLS context): 20 clients x 25", _row(lean)),
            ("app Gradio /ask load (stock gradio_client): 20 clients x 25", _row(stock))]
