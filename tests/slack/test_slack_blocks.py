"""Block Kit rendering of advisor answers from their typed sections (pure: no Slack, no advisor)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assistant.engine.answer import CitationRef, Finding, KeyNumber, Option, Sections, Table
from assistant.engine.render import render_text
from assistant.frontends.slack.bot import question_from
from assistant.frontends.slack.blocks import MAX_FIELDS, answer_blocks, escape


def _kinds(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["type"] + ("/fields" if "fields" in b else "") for b in blocks]


def _check_limits(text: str, blocks: list[dict[str, Any]]) -> None:
    assert text and len(text) <= 40_000 and len(blocks) <= 50
    for b in blocks:
        if "text" in b:
            assert len(b["text"]["text"]) <= 3000
        assert len(b.get("fields", [])) <= 10 and all(len(f["text"]) <= 2000 for f in b.get("fields", []))
        assert len(b.get("elements", [])) <= 10 and all(len(e["text"]) <= 2000 for e in b.get("elements", []))


CITE = CitationRef(id="ft-27", title="Best cloud GPUs for fine-tuning LLMs",
                   quote="If your code resumes cleanly from the last checkpoint, an interruption costs a few minutes, "
                         "not the whole run.")


def cost_sections(lang: str = "en") -> Sections:
    # 10 h x $1.29/h = $12.90 on demand; spot figures as tools/cost.py gives them
    return Sections(
        lang=lang, kind="cost", understood=[Finding(code="u.gpus", params={"names": ["H100"]})],
        headline=[Finding(code="cost.job", params={
            "hours": {"v": 10.0,
                      "u": "h"}, "gpu": "H100 SXM", "how": {"code": "term.as_given"}, "provider": "hyperbolic",
            "instance": "1x-H100", "price": {"v": 1.29, "u": "usd_h"}, "usd": {"v": 12.9, "u": "usd"}})],
        key_numbers=[KeyNumber(label="num.on_demand_cost", value=12.9, unit="usd"),
                     KeyNumber(label="num.spot_cost", value=8.46, unit="usd")],
        assumptions=[Finding(code="cost.billing_unknown", params={"provider": "hyperbolic"})],
        explanation=[Finding(code="why.spot_checkpoints", passage_id="ft-27")],
        citations=[CITE], data_date="2026-05-20", data_stale=True)


def test_cost_answer_blocks_come_from_the_sections():
    s = cost_sections()
    text, blocks = answer_blocks({"answer": "ignored", "sections": s.model_dump(mode="json")})
    _check_limits(text, blocks)
    assert _kinds(blocks) == ["context", "section", "section/fields", "section", "context", "context"]
    assert blocks[0]["elements"][0]["text"] == "_Understood: on H100_"
    assert blocks[1]["text"]["text"].startswith("*About 10 h of running on H100 SXM (as given) at hyperbolic")
    assert [f["text"] for f in blocks[2]["fields"]] == ["On-demand cost: $12.9", "Expected cost on spot: $8.46"]
    why = blocks[3]["text"]["text"]
    assert why.startswith("*Why*\n• Spot suits fine-tuning") and "[ft-27]" in why
    assert blocks[4]["elements"][0]["text"].startswith("*Assumptions*\n• The billing granularity of hyperbolic")
    sources = [e["text"] for e in blocks[5]["elements"]]
    assert sources[0] == f"*[ft-27]* {CITE.title}: “{CITE.quote}”"
    assert sources[1].startswith(":date: Prices as of 2026-05-20.")
    assert text == render_text(s)  # the fallback is the whole answer as text


def test_mrkdwn_control_characters_are_escaped():
    s = Sections(headline=[Finding(code="prices.cheapest", params={
        "kind": {"code": "term.spot"}, "gpu": "<b> & <!channel>", "price": {"v": 1.0, "u": "usd_gpu_h"},
        "provider": "x", "instance": "y"})])
    text, blocks = answer_blocks({"sections": s})
    assert blocks[0]["text"]["text"] == "*Cheapest spot &lt;b&gt; &amp; &lt;!channel&gt;: $1.00/GPU-hour at x (y).*"
    assert "<" not in text and ">" not in text


def test_at_most_ten_fields_and_the_rest_stays_in_the_message():
    s = Sections(headline=[Finding(code="answer.guide")],
                 key_numbers=[KeyNumber(label=f"item {i}", value=float(i), unit="gb") for i in range(15)])
    text, blocks = answer_blocks({"sections": s})
    _check_limits(text, blocks)
    fields = [f["text"] for b in blocks for f in b.get("fields", [])]
    assert len(fields) == MAX_FIELDS
    rest = blocks[2]["text"]["text"]
    assert all(f"item {i}:" in rest for i in range(10, 15))


def test_long_answers_are_clipped_to_slack_limits():
    s = Sections(headline=[Finding(code="error.other", params={"text": "x & y " * 2000})],
                 explanation=[Finding(code="error.other", params={"text": "word " * 2000})] * 3,
                 citations=[CITE.model_copy(update={"quote": "q" * 5000})] * 12)
    text, blocks = answer_blocks({"sections": s})
    _check_limits(text, blocks)
    assert not blocks[0]["text"]["text"].startswith("*")  # a paragraph is not bolded
    assert "&am…" not in json.dumps(blocks)  # never cut inside an entity


def test_tables_and_options_become_code_blocks_and_numbered_lists():
    s = Sections(
        headline=[Finding(code="rec.best",
                          params={"n": 2, "gpu": "A100", "provider": "vast", "price": {"v": 1.33, "u": "usd_h"}})],
        tables=[Table(title=Finding(code="table.prices"), columns=["col.provider", "col.usd_gpu_h"],
                      rows=[["hyperbolic", 1.29], ["verda", 0.8015]], units=["", "usd"])],
        options=[Option(title=Finding(code="rec.option", params={"n": 2, "gpu": "A100", "provider": "vast"}),
                        numbers=[KeyNumber(label="num.hours", value=1.34, unit="h")],
                        offer={"provider": "vast", "instance_type": "a1", "region": "KR", "price_usd_per_hour": 1.33})])
    _, blocks = answer_blocks({"sections": s})
    assert _kinds(blocks) == ["section", "section", "section"]
    table = blocks[1]["text"]["text"].splitlines()
    assert table[0] == "*Offers, cheapest first*" and table[1] == table[-1] == "```"
    assert table[2].split() == ["Provider", "$/GPU-hour"] and table[3].split() == ["hyperbolic", "$1.29"]
    assert table[4].split() == ["verda", "$0.80"]
    assert blocks[2]["text"]["text"] == ("*Best options*\n1. 2 x A100 at vast\n      • Time: 1.34 h\n"
                                         "      • Cheapest offer: vast a1, KR, $1.33/h")


def test_urdu_answer_survives_the_json_round_trip():
    s = cost_sections("ur")
    text, blocks = answer_blocks({"sections": s})
    assert blocks[1]["text"]["text"].startswith("*H100 SXM پر تقریباً 10 گھنٹے")
    assert json.loads(json.dumps(blocks)) == blocks  # what slack_sdk sends
    assert "قیمتیں 2026-05-20 کی ہیں۔" in json.dumps(blocks, ensure_ascii=False)


def test_an_answer_without_sections_is_one_escaped_section():
    text, blocks = answer_blocks({"answer": "Invalid GPU <x> & more"})
    assert text == "Invalid GPU &lt;x&gt; &amp; more"
    assert blocks == [{"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}]
    assert answer_blocks({"answer": ""}) == ("", [])


def test_escape_only_touches_the_reserved_characters():
    assert escape("a<b>&c — ایچ 100") == "a&lt;b&gt;&amp;c — ایچ 100"


@pytest.mark.parametrize("raw, question", [
    pytest.param("<@U0BOT> cheapest H100?", "cheapest H100?", id="mention"),
    pytest.param("<@U0BOT|gpu-advisor>   can   I run 8B?", "can I run 8B?", id="labelled-mention"),
    pytest.param("<!here> see <https://example.com/x|this model> &amp; 8B &lt;24 GB",
                 "see this model & 8B <24 GB", id="links-and-entities"),
    pytest.param("<#C123|gpus> price of <https://a.example>", "gpus price of https://a.example", id="channel-and-url"),
    pytest.param("<@U0BOT> ایچ 100 کی قیمت؟", "ایچ 100 کی قیمت؟", id="urdu"),
    pytest.param("<@U0BOT>", "", id="empty"),
])
def test_question_from_slack_text(raw, question):
    assert question_from(raw) == question
