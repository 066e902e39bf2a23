"""What Gradio's queue costs per /ask request beyond the answer itself, and the settings that remove it.

Profiled with py-spy (`--gil`) on the app server under benchmarks/app_load.py's load (20 clients, 2
cores). Besides the advisor's own turn (the work POST /api/ask does too, ~10 ms CPU), Gradio spent:

- **A session's state on first sight of each session hash**: Gradio's `SessionState` renders the config
  of every block of the page (~100 here: chat and calculators), 6.5 ms on the event loop, and keeps
  ~190 KB per session for up to 10,000 sessions (about 1.9 GB). gradio_client pays it once per
  `Client`; the HTTP "call" API (`curl`, other languages) once per *request*, as each call is a new
  session. Those configs are read only to save a deep link's components (`SessionState.components`),
  which this app does not offer; `LeanSessionState` builds them only then. Server CPU per call-API
  request went from 27 ms to 18 ms (benchmarks/app_load.py, median of 3 runs).
- **The monitoring dashboard's summary after every event**: a pandas DataFrame over the last 10,000
  events, grouped and percentiled, rebuilt after each event although the dashboard is off (1.3 ms at
  1,000 events, 7.4 ms at 10,000; it grows as the server runs). `QUEUE_ENV` asks Gradio to summarise
  never and to keep one event.

Not Gradio's server: the stock gradio_client builds a new TLS context (reading the CA bundle, ~25 ms
CPU) for each of the two requests of every call, even over http://; with the clients on the server's
two cores that was 57 ms CPU a call, three times the server's. One context built once
(`Client(url, ssl_verify=httpx.create_ssl_context())`, verification still on) costs 6 ms.
"""

from __future__ import annotations

__all__ = ["QUEUE_ENV", "LeanSessionState", "LeanStateHolder", "use_lean_sessions"]

import os
from copy import copy
from typing import Any, Iterator

from gradio.state_holder import SessionState, StateHolder

# Read by gradio.queueing.Queue when the queue is created (Gradio 6.31): summarise the monitoring
# dashboard's analytics once in 10**9 events (never), keep one event's record.
QUEUE_ENV = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": str(10**9), "GRADIO_ANALYTICS_MAX_EVENTS": "1"}


class LeanSessionState(SessionState):
    """Gradio's per-session state, with each block's config rendered when it is first needed.

    The same attributes as `SessionState`; `config_values` starts empty and holds the configs of the
    blocks this session changed (Gradio's own setters fill it), and `components` renders the rest
    only when asked (a deep link being saved)."""

    def __init__(self, blocks: Any):  # SessionState.__init__ (Gradio 6.31) without the eager configs
        self.blocks_config = copy(blocks.default_config)
        self._page_ids = frozenset(blocks.blocks)
        self.config_values: dict[int, Any] = {}
        self.state_data: dict[int, Any] = {}
        self._state_ttl: dict[int, Any] = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600

    @property
    def components(self) -> Iterator[dict]:
        """Every block's config, in page order, as `SessionState.components` yields them."""
        done = self.config_values
        full = {k: done[k] if k in done else self.blocks_config.config_for_block(k, [], block)
                for k, block in self.blocks_config.blocks.items() if k in done or k in self._page_ids}
        self.config_values = full | done
        return (config for config in self.config_values.values() if config)


class LeanStateHolder(StateHolder):
    """Gradio's session store, creating `LeanSessionState`s."""

    def __getitem__(self, session_id: str) -> SessionState:
        if session_id not in self.session_data:
            self.session_data[session_id] = LeanSessionState(self.blocks)
        return super().__getitem__(session_id)


def use_lean_sessions(demo: Any) -> LeanStateHolder:
    """Give a launched app a `LeanStateHolder` (Gradio makes its `StateHolder` inside `launch()`).

    Call right after `launch()`: a session seen before the swap starts anew, as after an eviction."""
    holder = LeanStateHolder()
    holder.set_blocks(demo)  # also sets demo.state_holder, which Gradio reads beside app.state_holder
    demo.app.state_holder = holder
    return holder
