"""Slack de-duplication and per-user limits shared through the real Redis (two bots = two objects), and
the fall-back to in-process state when Redis stops answering."""

from __future__ import annotations

import pytest

from tests.threads.services import redis_url  # noqa: F401  (fixture)


@pytest.fixture()
def on_redis(monkeypatch, redis_url):
    url, prefix = redis_url
    monkeypatch.setenv("GPU_ADVISOR_REDIS_URL", url)
    monkeypatch.setenv("GPU_ADVISOR_REDIS_PREFIX", prefix + "slack:")


def test_an_event_seen_by_one_bot_is_a_repeat_for_the_other(on_redis):
    from assistant.runtime.limits import SharedSeen, shared_seen
    from assistant.frontends.slack.bot import _Seen

    bot_a, bot_b = shared_seen(600, _Seen()), shared_seen(600, _Seen())
    assert isinstance(bot_a, SharedSeen)
    assert bot_a.first_time("event:Ev1", "msg:m1") is True
    assert bot_b.first_time("event:Ev1") is False  # the retry reached the other bot
    assert bot_b.first_time("event:Ev2", "msg:m1") is False  # same message, other event id (app_mention + im)
    assert bot_b.first_time("event:Ev3", "msg:m3") is True


def test_the_per_user_limit_counts_across_bots(on_redis):
    from assistant.runtime.limits import shared_user_limit
    from assistant.frontends.slack.bot import _RateLimit

    a, b = shared_user_limit(3, _RateLimit(3)), shared_user_limit(3, _RateLimit(3))
    # 3 questions a minute: a, b, a are counted, then b is told once and a stays quiet
    assert [a.check("T1:U1"), b.check("T1:U1"), a.check("T1:U1"), b.check("T1:U1"), a.check("T1:U1")] == \
        ["ok", "ok", "ok", "limited", "quiet"]
    assert b.check("T1:U2") == "ok"


def test_redis_down_falls_back_to_this_process(monkeypatch, caplog):
    from assistant.runtime.limits import RateLimit, shared_seen
    from assistant.frontends.slack.bot import _Seen

    monkeypatch.setenv("GPU_ADVISOR_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setenv("GPU_ADVISOR_RATE_LIMIT", "6")
    seen = shared_seen(600, _Seen())
    assert seen.first_time("event:down1") is True and seen.first_time("event:down1") is False
    lim = RateLimit()
    assert lim.allow("192.0.2.1") and not lim.allow("192.0.2.1")  # still limited, in process
    assert any("Redis unavailable" in r.getMessage() for r in caplog.records)
