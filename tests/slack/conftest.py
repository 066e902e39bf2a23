"""Fixtures for the Slack bot tests: one mock Slack Web API per session, the real advisor, an app factory."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from tests.slack.mock_slack import BOT_TOKEN, SIGNING_SECRET, MockSlack


@pytest.fixture(scope="session")
def slack_mock() -> Iterator[MockSlack]:
    mock = MockSlack()
    yield mock
    mock.close()


@pytest.fixture(scope="session")
def real_advisor() -> Any:
    """The product's advisor (router backend) on the test session's GPU_ADVISOR_HOME."""
    from assistant.service import api

    return api.advisor()


@pytest.fixture()
def make_app(slack_mock: MockSlack) -> Callable[..., Any]:
    """build_app against the mock; listeners finish before dispatch returns unless told otherwise."""
    from assistant.frontends.slack.bot import build_app

    def make(advisor: Any, **kw: Any) -> Any:
        kw.setdefault("process_before_response", True)
        return build_app(token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=slack_mock.api_url,
                         advisor=advisor, **kw)

    return make
