"""The Slack bot end to end against the mock Web API: mentions, DMs, /gpu, threads, retries, signatures."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from assistant.frontends.slack.bot import thread_id_for
from tests.hardening.bad_inputs import CURATED, new_naninf
from tests.slack.mock_slack import (BOT_TOKEN, SIGNING_SECRET, TEAM, RecordingAdvisor, dm, event_body, mention,
                                    new_channel, new_ts, send, slash_body)


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    out = []
    for b in blocks:
        if "text" in b:
            out.append(b["text"]["text"])
        out += [f["text"] for f in b.get("fields", [])]
        out += [e["text"] for e in b.get("elements", [])]
    return out


def _lines(answer_text: str) -> tuple[str, str]:
    """(the "Understood: …" line, the verdict without its bold marks) of an answer's Markdown."""
    lines = [ln for ln in answer_text.splitlines() if ln.strip()]
    return lines[0], lines[1].strip("*")


def _sections(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["type"] == "section"]


def _answer_of(slack_mock: Any, channel: str) -> dict[str, Any]:
    updates = slack_mock.calls_to("chat.update", channel)
    assert len(updates) == 1, updates
    return updates[0]


@pytest.fixture()
def recorder(real_advisor: Any) -> RecordingAdvisor:
    return RecordingAdvisor(real_advisor)


def test_mention_is_answered_in_its_thread_with_blocks(make_app, slack_mock, recorder):
    app, ch, ts = make_app(recorder), new_channel(), new_ts()
    resp = send(app, event_body(mention(ch, "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", ts=ts)))
    assert resp.status == 200

    assert slack_mock.calls_to("reactions.add", ch) == [{"channel": ch, "timestamp": ts, "name": "eyes",
                                                         "team_id": TEAM}]
    posts = slack_mock.calls_to("chat.postMessage", ch)
    assert [(p["text"], p["thread_ts"]) for p in posts] == [("Working on it…", ts)]
    update = _answer_of(slack_mock, ch)
    placeholder_ts = [c for c in slack_mock.calls if c["method"] == "chat.update"][-1]["body"]["ts"]
    assert update["ts"] == placeholder_ts
    ans = recorder.asked[-1][2]
    assert recorder.asked[-1][1] == thread_id_for(TEAM, ch, ts) == f"slack:{TEAM}:{ch}:{ts}"
    understood, verdict = _lines(ans.answer)
    assert update["blocks"][0] == {"type": "context", "elements": [{"type": "mrkdwn", "text": understood,
                                                                     "verbatim": True}]}
    assert update["blocks"][1] == {"type": "section", "text": {"type": "mrkdwn", "text": f"*{verdict}*",
                                                                "verbatim": True}}
    assert "fits" in verdict
    fields = [f["text"] for b in update["blocks"] for f in b.get("fields", [])]
    assert any("weights" in f.lower() and "GB" in f for f in fields) and len(fields) <= 10
    context = update["blocks"][-1]
    assert context["type"] == "context"
    assert ans.citations and all(f"[{c.passage_id}]" in " ".join(_texts([context])) for c in ans.citations)
    assert verdict in update["text"]  # the plain-text fallback is the whole answer
    assert all(c["auth"] == f"Bearer {BOT_TOKEN}" for c in slack_mock.calls if c["method"] == "chat.update")


def test_direct_message_is_answered_in_the_dm_and_bot_messages_are_ignored(make_app, slack_mock, recorder):
    app, ch = make_app(recorder), new_channel("D")
    assert send(app, event_body(dm(ch, "Cheapest H100 per hour?"))).status == 200
    posts = slack_mock.calls_to("chat.postMessage", ch)
    assert len(posts) == 1 and posts[0].get("thread_ts") is None
    update = _answer_of(slack_mock, ch)
    assert "H100" in _sections(update["blocks"])[0]["text"]["text"]
    table = [t for t in _texts(update["blocks"]) if "```" in t]
    assert table and "Provider" in table[0] and "$/GPU-hour" in table[0]
    assert any("Prices as of" in t for t in _texts(update["blocks"]))
    assert recorder.asked[-1][1] == thread_id_for(TEAM, ch, "dm")

    # the bot's own replies, edits and other bots' messages never trigger an answer
    for ev in (dm(ch, "Working on it…", bot_id="BBOT", user="UBOT"),
               dm(ch, "edited", subtype="message_changed"),
               dm(ch, "hi from a bot", bot_id="BOTHER", subtype="bot_message"),
               {**dm(ch, "in a channel"), "channel_type": "channel"}):
        assert send(app, event_body(ev)).status == 200
    assert len(slack_mock.calls_to("chat.postMessage", ch)) == 1
    assert len(recorder.asked) == 1


def test_slash_command_acks_at_once_then_responds_in_channel(make_app, slack_mock, recorder):
    app, ch = make_app(recorder), new_channel()
    url = slack_mock.response_url(ch)
    resp = send(app, slash_body("Which GPU should I rent to serve llama-3.1-70b?", ch, url),
                content_type="application/x-www-form-urlencoded")
    assert resp.status == 200 and "Working on it" in resp.body
    [reply] = slack_mock.responses(ch)
    assert reply["response_type"] == "in_channel" and reply["replace_original"] is False
    verdict, options = _sections(reply["blocks"])[:2]
    assert verdict["text"]["text"].startswith("*Best choice")
    assert options["text"]["text"].startswith("*Best options*\n```") and "Memory per GPU" in options["text"]["text"]
    assert recorder.asked[-1][1] == thread_id_for(TEAM, ch, "cmd-U0ALICE")
    assert slack_mock.calls_to("chat.postMessage", ch) == []

    # an empty /gpu gets the usage line and no answer
    resp = send(app, slash_body("  ", ch, url), content_type="application/x-www-form-urlencoded")
    assert resp.status == 200 and "/gpu" in resp.body
    assert len(slack_mock.responses(ch)) == 1 and len(recorder.asked) == 1


def test_thread_follow_up_continues_the_conversation(make_app, slack_mock, recorder):
    app, ch, root = make_app(recorder), new_channel(), new_ts()
    send(app, event_body(mention(ch, "How much does it cost to fine-tune llama-3.1-8b with LoRA on an H100 "
                                     "for 10 hours?", ts=root)))
    send(app, event_body(mention(ch, "and on spot?", thread_ts=root)))

    posts = slack_mock.calls_to("chat.postMessage", ch)
    assert [p["thread_ts"] for p in posts] == [root, root]  # both replies in the first message's thread
    updates = slack_mock.calls_to("chat.update", ch)
    assert len(updates) == 2
    first, second = (a for _, _, a in recorder.asked[-2:])
    assert recorder.asked[-1][1] == recorder.asked[-2][1] == thread_id_for(TEAM, ch, root)
    cost_args = [tc.args for tc in second.tool_calls if tc.name == "cost_estimator"]
    first_gpus = {tc.args["gpu"] for tc in first.tool_calls if tc.name == "cost_estimator"}
    # the follow-up prices the card the first answer resolved "an H100" to, and the same model
    assert cost_args and cost_args[0]["gpu"].startswith("H100") and cost_args[0]["model"] == "llama-3.1-8b"
    assert {a["gpu"] for a in cost_args} == first_gpus
    assert "H100" in updates[1]["text"] and "spot" in updates[1]["text"]

    # the same words in a new thread have no GPU to go on
    other = new_channel()
    send(app, event_body(mention(other, "and on spot?")))
    assert not [tc for tc in recorder.asked[-1][2].tool_calls if tc.name == "cost_estimator"]


def test_retry_of_a_seen_event_is_dropped_and_a_first_seen_retry_is_answered(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch = make_app(rec), new_channel()
    body = event_body(mention(ch, "how much VRAM for an 8B model?"))
    assert send(app, body).status == 200
    resp = send(app, body, x_slack_retry_num="1", x_slack_retry_reason="http_timeout")
    assert resp.status == 200 and resp.headers.get("x-slack-no-retry") == ["1"]
    assert len(slack_mock.calls_to("chat.postMessage", ch)) == 1 and len(slack_mock.calls_to("chat.update", ch)) == 1
    # issue 19: the first delivery failed while the bot was down, so Slack's retry is the first we see
    ch2 = new_channel()
    resp = send(app, event_body(mention(ch2, "cheapest L4?")), x_slack_retry_num="1", x_slack_retry_reason="http_error")
    assert resp.status == 200
    assert len(slack_mock.calls_to("chat.update", ch2)) == 1 and len(rec.asked) == 2


def test_threads_are_owned_by_the_team_and_channel(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch, ts = make_app(rec), new_channel(), new_ts()
    send(app, event_body(mention(ch, "cheapest L4?", ts=ts)))
    assert rec.asked[-1][1] == f"slack:{TEAM}:{ch}:{ts}" and rec.owners[-1] == f"slack:{TEAM}:{ch}"


def test_duplicate_event_id_and_message_id_get_one_answer(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch = make_app(rec), new_channel("D")
    ev = dm(ch, "How fast is llama-3.1-8b on an L4?")
    body = event_body(ev, event_id="EvDUPLICATE1")
    for _ in range(3):
        assert send(app, body).status == 200
    # the same message delivered as an app_mention too (new event id, same client_msg_id and ts)
    also = {**ev, "type": "app_mention", "text": "<@UBOT> How fast is llama-3.1-8b on an L4?"}
    assert send(app, event_body(also)).status == 200
    assert len(slack_mock.calls_to("chat.postMessage", ch)) == 1
    assert len(slack_mock.calls_to("chat.update", ch)) == 1 and len(rec.asked) == 1


@pytest.mark.parametrize("headers", [
    pytest.param({"secret": "not-the-signing-secret"}, id="wrong-secret"),
    pytest.param({"timestamp": int(time.time()) - 600}, id="stale-timestamp"),
])
def test_bad_or_stale_signature_is_401_and_unanswered(make_app, slack_mock, headers):
    rec = RecordingAdvisor()
    app, ch = make_app(rec), new_channel()
    before = len(slack_mock.calls)
    resp = send(app, event_body(mention(ch, "cheapest H100?")), **headers)
    assert resp.status == 401
    assert len(slack_mock.calls) == before and rec.asked == []


def test_rate_limit_gives_one_friendly_reply_per_minute(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch = make_app(rec, rate_limit_per_minute=2), new_channel("D")
    for i in range(4):
        send(app, event_body(dm(ch, f"question {i} about 8B")))
    texts = [p["text"] for p in slack_mock.calls_to("chat.postMessage", ch)]
    assert texts.count("Working on it…") == 2 and len(rec.asked) == 2
    limited = [t for t in texts if "questions in the last minute" in t]
    assert len(limited) == 1 and "2 questions" in limited[0]
    # another user is not limited
    send(app, event_body(dm(ch, "question from bob", user="U0BOB")))
    assert len(rec.asked) == 3


def test_errors_become_a_short_friendly_reply_without_secrets_in_logs(make_app, slack_mock, caplog):
    caplog.set_level(logging.DEBUG)
    rec = RecordingAdvisor(fail=RuntimeError("database is locked"))
    app, ch = make_app(rec), new_channel()
    assert send(app, event_body(mention(ch, "cheapest A100?"))).status == 200
    update = _answer_of(slack_mock, ch)
    assert update["text"].startswith("Sorry, something went wrong")
    assert "database" not in json.dumps(update)
    logged = caplog.text
    for secret in (BOT_TOKEN, SIGNING_SECRET, "legacy-verification-token"):
        assert secret not in logged
    assert "RuntimeError" in logged


def test_user_facing_advisor_errors_are_shown_as_they_are(make_app, slack_mock):
    from tools.errors import UnknownGpu

    rec = RecordingAdvisor(fail=UnknownGpu("H10", ["H100", "H200"]))
    app, ch = make_app(rec), new_channel()
    send(app, event_body(mention(ch, "price of an H10?")))
    assert _answer_of(slack_mock, ch)["text"].startswith("Unknown GPU 'H10'. Closest known: H100, H200.")


def test_urdu_question_gets_urdu_working_text_and_an_intact_answer(make_app, slack_mock, recorder):
    app, ch = make_app(recorder), new_channel("D")
    question = "کیا میں 24 جی بی GPU پر Llama-3-8B چلا سکتا ہوں؟"
    send(app, event_body(dm(ch, question)))
    assert slack_mock.calls_to("chat.postMessage", ch)[0]["text"] == "جواب تیار ہو رہا ہے…"
    assert recorder.asked[-1][0] == question
    ans = recorder.asked[-1][2]
    assert ans.language == "ur"
    update = _answer_of(slack_mock, ch)
    understood, verdict = _lines(ans.answer)
    assert verdict in update["text"] and understood.strip("_") in update["text"]
    assert update["blocks"][1]["text"]["text"] == f"*{verdict}*"
    assert any(c.quote in " ".join(_texts(update["blocks"])) for c in ans.citations)


def test_update_failure_falls_back_to_a_new_message(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch = make_app(rec), new_channel()
    slack_mock.fail["chat.update"] = "cant_update_message"
    try:
        send(app, event_body(mention(ch, "VRAM for 8B?")))
    finally:
        del slack_mock.fail["chat.update"]
    posts = slack_mock.calls_to("chat.postMessage", ch)
    assert [p["text"] for p in posts] == ["Working on it…", "Echo: VRAM for 8B?\n- 42 GB"]
    assert posts[1]["blocks"] and posts[1]["thread_ts"] == posts[0]["thread_ts"]


def test_empty_mention_gets_a_hint(make_app, slack_mock):
    rec = RecordingAdvisor()
    app, ch = make_app(rec), new_channel()
    send(app, event_body(mention(ch, "")))
    [post] = slack_mock.calls_to("chat.postMessage", ch)
    assert "Ask me which cloud GPU to rent" in post["text"] and rec.asked == []


def test_production_mode_acks_a_slash_command_before_the_answer(make_app, slack_mock):
    rec = RecordingAdvisor(delay_s=0.8)
    app, ch = make_app(rec, process_before_response=False), new_channel()
    started = time.monotonic()
    resp = send(app, slash_body("VRAM for 70B?", ch, slack_mock.response_url(ch)),
                content_type="application/x-www-form-urlencoded")
    assert resp.status == 200 and "Working on it" in resp.body
    assert time.monotonic() - started < 0.5
    [reply] = slack_mock.wait_for(lambda: slack_mock.responses(ch), timeout_s=10)
    assert reply["text"].startswith("Echo: VRAM for 70B?")



@pytest.mark.parametrize("i", range(len(CURATED)), ids=lambda i: f"curated-{i}")
def test_curated_bad_inputs_through_the_slack_handler(make_app, slack_mock, real_advisor, i):
    """The hardening list as @mentions, each from its own user (the per-user limit is tested apart):
    acknowledged, one reply in the thread, no traceback, no inf/nan the question did not contain."""
    q = CURATED[i]
    app, ch, ts = make_app(real_advisor), new_channel(), new_ts()
    resp = send(app, event_body(mention(ch, q, ts=ts, user=f"UBAD{i:04d}")))
    assert resp.status == 200
    replies = [c["body"] for c in slack_mock.calls if c["body"].get("channel") == ch
               and c["method"] in ("chat.postMessage", "chat.update")]
    final = replies[-1]["text"] if replies else ""
    assert final.strip() and "Traceback" not in final
    assert not new_naninf(q, final), final[:300]
