"""Fixtures for the web app: the Gradio demo launched in-process on a free loopback port."""

import os
import socket

import pytest


def free_port() -> int:
    """A free loopback port; within GPU_ADVISOR_TEST_PORTS ("18200-18299") when that is set."""
    span = os.environ.get("GPU_ADVISOR_TEST_PORTS", "")
    lo, _, hi = span.partition("-")
    candidates = range(int(lo), int(hi or lo) + 1) if lo.isdigit() and (hi or lo).isdigit() else [0]
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in GPU_ADVISOR_TEST_PORTS={span!r}")


@pytest.fixture(scope="session")
def app_module():
    import app

    return app


@pytest.fixture(scope="session")
def app_demo(app_module):
    """The launched app: (demo, its local URL)."""
    import time

    t0 = time.monotonic()
    demo = app_module.build_demo()
    url = app_module.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    print(f"\nin-process build_demo() + launch(): {time.monotonic() - t0:.2f} s")
    yield demo, url
    demo.close()


@pytest.fixture(scope="session")
def app_url(app_demo):
    return app_demo[1]


@pytest.fixture(scope="session")
def client(app_url):
    from gradio_client import Client

    return Client(app_url, verbose=False)


def pytest_collection_modifyitems(items):
    # Gradio's queue calls a pandas option that pandas 3 deprecates (ecosystem-notes sec. 3): not ours.
    for item in items:
        if "tests/app/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning"))
