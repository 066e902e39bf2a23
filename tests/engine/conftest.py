"""Fixtures the engine tests share."""

import pytest

from assistant.service.advisor import Advisor


@pytest.fixture(scope="module")
def adv(tmp_path_factory):
    """An Advisor on the embedded router with its own thread store (one per test module)."""
    return Advisor("router", checkpoint_path=str(tmp_path_factory.mktemp("threads") / "t.sqlite"))
