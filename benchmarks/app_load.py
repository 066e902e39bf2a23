"""The web app under load: Gradio's queued /ask against the plain POST /api/ask, per server setting.

Usage: .venv/bin/python -m benchmarks.app_load [--clients 20] [--per-client 25] [--runs 3]
                                               [--configs before,shipped] [--loads rest,client,lean,call]
                                               [--server-cores 0,1]

Each configuration starts `app.py` in its own process (the router backend, a fresh data directory, no
rate limit), optionally pinned to `--server-cores` with the load clients pinned to the other cores.
The configurations run in turn, `--runs` times over, and the table at the end gives the median of
the runs for each row (p50, p95 and CPU per request: the machine is shared, so compare rows of one
table). Loads, each N clients asking their questions one after another (tests/app/load.py):
  rest    POST /api/ask, one keep-alive httpx client each
  client  Gradio /ask through the stock gradio_client: `Client(url).predict(q, thread, api_name="/ask")`
  lean    the same with one TLS context per Client (`ssl_verify=httpx.create_ssl_context()`)
  call    Gradio /ask through its HTTP "call" API (POST /gradio_api/call/ask, then the event stream),
          what curl and other languages use; every call is a new Gradio session

Configurations (app.py's ASK_CONCURRENCY, QUEUE_STATUS_RATE_S, DEFAULT_CONCURRENCY, the matplotlib
stub, Gradio's per-event monitoring summary, LEAN_SESSIONS):
  gradio-defaults  Gradio's own: every event limited to 1 at a time, queue status after every job,
                   matplotlib imported per request, the summary after every event, eager sessions
  before           app.py before issue 16's last step: /ask unlimited, status every 5 s, default limit 4,
                   the stub; Gradio's summary and eager sessions
  shipped          `before` without the summary and with lean sessions (assistant/frontends/web/queue.py)
  one-worker, two-workers, eight-workers   `shipped` with /ask limited to 1, 2 (a worker per core) or 8

Measured 2026-12-01 on the shared 2-core build machine (server and clients on the same 2 cores, other
jobs running: load average 4-6), 20 clients x 25 questions = 500 requests a row, 0 errors, median of 3
runs (`--runs 3 --configs before,shipped`):

  configuration  load                                         p50     p95    CPU ms/request (server, clients)
  before         POST /api/ask                                0.28 s  0.32 s   13,  2
  before         Gradio /ask, stock gradio_client             1.35 s  1.85 s   23, 66
  before         Gradio /ask, gradio_client + one TLS context 0.49 s  0.78 s   24,  6
  before         Gradio /ask, HTTP call API                   0.54 s  0.94 s   27,  3
  shipped        POST /api/ask                                0.27 s  0.41 s   13,  2
  shipped        Gradio /ask, stock gradio_client             1.20 s  1.60 s   19, 60
  shipped        Gradio /ask, gradio_client + one TLS context 0.39 s  0.58 s   18,  5
  shipped        Gradio /ask, HTTP call API                   0.37 s  0.60 s   18,  3

An earlier round the same day at load average 8-12 gave, shipped: /api/ask 0.22/0.50 s, /ask with one
TLS context 0.47/0.81 s, call API 0.50/1.00 s, stock gradio_client 1.72/2.53 s (p50/p95). One run
(`--runs 1 --configs gradio-defaults,two-workers,shipped --loads rest,lean,call`): Gradio's defaults
0.49/1.04 s with one TLS context and 0.92/1.60 s through the call API (31 ms server CPU a request);
/ask limited to 2 (a worker per core) 0.43/0.74 and 0.42/0.78 s against unlimited 0.40/0.63 and
0.53/1.15 s, the same within the noise: the advisor runs one turn at a time behind its own lock.

So p95 <= 1 s for the queued /ask with 20 concurrent clients on 2 cores holds for what the server does
(0.58 s; /api/ask 0.41 s). The stock gradio_client misses it on these cores because each client spends
60 ms CPU a call next to the server's 19 ms; its clients would run on their users' machines.

Where the time went (py-spy --gil on the server; assistant/frontends/web/queue.py has the detail): the /ask
handler does the advisor's turn and nothing else (no Markdown, charts or tables: those are the chat
UI's), the same 10-13 ms CPU as /api/ask; Gradio's queue, event stream and two HTTP requests per
call add 5-9 ms; a new session cost 6.5 ms on the event loop (once per request for the call API) and the
monitoring summary 1-7 ms per event, both removed. The stock gradio_client itself spent 57 ms CPU a
call building TLS contexts: on these 2 shared cores that, not the server, was the 1.7 s p95.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# name: (ASK_CONCURRENCY, QUEUE_STATUS_RATE_S, DEFAULT_CONCURRENCY, matplotlib stub, Gradio's summary, LEAN_SESSIONS)
CONFIGS: dict[str, tuple[Any, Any, Any, bool, bool, bool]] = {
    "gradio-defaults": ("default", "auto", 1, False, True, False),
    "before": (None, 5.0, 4, True, True, False),
    "shipped": (None, 5.0, 4, True, False, True),
    "one-worker": (1, 5.0, 4, True, False, True),
    "two-workers": (2, 5.0, 4, True, False, True),
    "eight-workers": (8, 5.0, 4, True, False, True)}
LOADS = {"rest": "POST /api/ask", "client": "Gradio /ask, stock gradio_client",
         "lean": "Gradio /ask, gradio_client + one TLS context", "call": "Gradio /ask, HTTP call API"}
_BOOT = ("import os, sys; {summary}import app; app.ASK_CONCURRENCY = {ask!r}; app.QUEUE_STATUS_RATE_S = {rate!r}; "
         "app.DEFAULT_CONCURRENCY = {default!r}; app.LEAN_SESSIONS = {lean!r}; {undo}app.main(['--port', '{port}'])")
_UNDO_IMPORT_FIX = "sys.modules.get('matplotlib', 1) is None and sys.modules.pop('matplotlib'); "
# Gradio 6.31's own values, set before app.py's defaults (assistant/web_queue.QUEUE_ENV) can apply.
_GRADIO_SUMMARY = ("os.environ['GRADIO_ANALYTICS_CACHE_FREQUENCY'] = '1'; "
                   "os.environ['GRADIO_ANALYTICS_MAX_EVENTS'] = '10000'; ")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(config: str, cores: str | None) -> tuple[subprocess.Popen, str]:
    ask, rate, default, import_fix, summary, lean = CONFIGS[config]
    port = _free_port()
    boot = _BOOT.format(ask=ask, rate=rate, default=default, lean=lean, port=port,
                        undo="" if import_fix else _UNDO_IMPORT_FIX, summary=_GRADIO_SUMMARY if summary else "")
    cmd = [sys.executable, "-c", boot]
    if cores:
        cmd = ["taskset", "-c", cores, *cmd]
    env = os.environ | {"GPU_ADVISOR_HOME": tempfile.mkdtemp(prefix="app-load-"), "GPU_ADVISOR_RATE_LIMIT": "0"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"app.py ({config}) did not start within 120 s")


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_call_api(url: str, clients: int = 20, per_client: int = 25) -> dict:
    """The same load on Gradio's queued /ask through its HTTP "call" API (what `curl` users and other
    languages use: POST /gradio_api/call/ask, then read the event stream), one keep-alive httpx client
    each: the server's queue without gradio_client's own per-call overhead in this process."""
    import json

    import httpx

    from tests.app.load import QUESTIONS, _drive, timed

    def one(c: int) -> tuple[list[float], int]:
        with httpx.Client(timeout=60) as client:
            def ask(i: int) -> bool:
                question = QUESTIONS[(c + i) % len(QUESTIONS)]
                r = client.post(url + "gradio_api/call/ask", json={"data": [question, f"call-{c}"]})
                body = client.get(url + f"gradio_api/call/ask/{r.json()['event_id']}").text
                data = [ln[5:] for ln in body.splitlines() if ln.startswith("data:")]
                return "event: complete" in body and bool(json.loads(data[-1])[0].get("answer"))

            return timed(per_client, ask)

    return _drive(one, clients)


def _load_fns() -> dict[str, Callable[..., dict]]:
    from tests.app.load import run, run_rest

    return {"rest": run_rest, "client": run, "lean": lambda url, **kw: run(url, shared_tls=True, **kw),
            "call": run_call_api}


def measure(config: str, loads: list[str], clients: int, per_client: int, cores: str | None) -> list[dict]:
    """One server of `config` under each load in turn: [{config, load, p50_s, p95_s, errors, CPU ms/request}]."""
    from tests.app.load import run_rest

    fns = _load_fns()
    proc, url = start_server(config, cores)
    if cores:  # taskset execs python in the same process: the pid is the server's
        time.sleep(0.2)
    out = []
    try:
        run_rest(url, clients=2, per_client=5)  # warm: the agent, the price database, the guide index
        for load in loads:
            c0, k0 = _cpu_s(proc.pid), _cpu_s(os.getpid())
            r = fns[load](url, clients=clients, per_client=per_client)
            c1, k1 = _cpu_s(proc.pid), _cpu_s(os.getpid())
            n = r["requests"] or 1
            out.append(r | {"config": config, "load": load, "server_ms": 1000 * (c1 - c0) / n,
                            "client_ms": 1000 * (k1 - k0) / n})
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    return out


def _line(r: dict[str, Any]) -> str:
    return (f"{r['config']:15} {LOADS[r['load']]:45} p50 {r['p50_s']:.2f} s  p95 {r['p95_s']:.2f} s  "
            f"{r['server_ms']:3.0f}, {r['client_ms']:3.0f}  ({r['requests']} requests, {r['errors']} errors)")


def medians(results: list[dict]) -> list[dict]:
    """Per (config, load), in first-seen order: the median over runs of p50, p95 and CPU ms/request."""
    keys = list(dict.fromkeys((r["config"], r["load"]) for r in results))
    out = []
    for config, load in keys:
        rs = [r for r in results if (r["config"], r["load"]) == (config, load)]
        med = {k: statistics.median(r[k] for r in rs) for k in ("p50_s", "p95_s", "server_ms", "client_ms")}
        out.append(med | {"config": config, "load": load, "requests": sum(r["requests"] for r in rs),
                          "errors": sum(r["errors"] for r in rs), "runs": len(rs)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--per-client", type=int, default=25)
    ap.add_argument("--runs", type=int, default=3, help="rounds over the configurations; the table gives medians")
    ap.add_argument("--server-cores", help="pin the server to these cores (taskset list, e.g. 0,1); "
                                           "the clients get the others")
    ap.add_argument("--configs", default="before,shipped", help=", ".join(CONFIGS))
    ap.add_argument("--loads", default="rest,client,lean,call", help=", ".join(LOADS))
    a = ap.parse_args()
    if a.server_cores:
        server = {int(c) for c in a.server_cores.split(",")}
        others = set(os.sched_getaffinity(0)) - server
        if others:
            os.sched_setaffinity(0, others)
    print(f"cores: server {a.server_cores or 'shared'}, clients {sorted(os.sched_getaffinity(0))}; "
          f"CPUs here: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'configuration':15} {'load':45} latency           CPU ms/request (server, clients)")
    results: list[dict] = []
    loads = [x.strip() for x in a.loads.split(",")]
    for run in range(a.runs):
        for config in a.configs.split(","):
            for r in measure(config.strip(), loads, a.clients, a.per_client, a.server_cores):
                results.append(r)
                print(f"run {run + 1}: {_line(r)}", flush=True)
    print(f"\nmedian of {a.runs} run(s), {a.clients} clients x {a.per_client} questions each; "
          f"load average now {os.getloadavg()[0]:.1f}")
    for r in medians(results):
        print(_line(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
