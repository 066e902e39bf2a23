"""A burst of 50 signed events in one second: every one acknowledged within 3 s and answered once."""

from tests.slack.load import burst


def test_burst_of_50_events(slack_mock):
    r = burst(50, slack_mock)
    assert r["acked_200"] == 50 and r["ack_max_s"] < 3.0
    assert r["answered"] == 50 and r["answers_per_event_max"] == 1
