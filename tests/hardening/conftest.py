"""The web app launched in-process for the attack tests, on a port of 18100-18199 (sign-in off unless a
test turns it on through its own launch)."""

from __future__ import annotations

import socket
from typing import Iterator

import pytest


def free_port() -> int:
    """A free loopback port in 18100-18199 (the range these tests may use)."""
    for port in range(18100, 18200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 18100-18199")


@pytest.fixture(scope="module")
def web_app() -> Iterator[str]:
    """The app (auth off) at its URL; the rate limit and sign-in throttle start empty."""
    import app

    app._LIMIT.buckets.clear()
    app._THROTTLE.failures._mem.clear()
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    yield url
    demo.close()
    app._LIMIT.buckets.clear()
    app._THROTTLE.failures._mem.clear()


def pytest_collection_modifyitems(items):
    # Gradio's queue calls a pandas option that pandas 3 deprecates (ecosystem-notes sec. 3): not ours.
    for item in items:
        if "tests/hardening/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning"))
