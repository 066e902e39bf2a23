"""Block Kit rendering of advisor answers (pure: no Slack, no advisor)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assistant.slack import question_from
from assistant.slack_blocks import MAX_FIELDS, answer_blocks, escape


def _answer(text: str, citations: list[dict[str, str]] | None = None,
            tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"answer": text, "citations": citations or [], "tool_calls": tool_calls or []}


def _kinds(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["type"] + ("/fields" if "fields" in b else "") for b in blocks]


def _check_limits(text: str, blocks: list[dict[str, Any]]) -> None:
    assert text and len(text) <= 40_000 and len(blocks) <= 50
    for b in blocks:
        if "text" in b:
            assert len(b["text"]["text"]) <= 3000
        assert len(b.get("fields", [])) <= 10 and all(len(f["text"]) <= 2000 for f in b.get("fields", []))
        assert len(b.get("elements", [])) <= 10 and all(len(e["text"]) <= 2000 for e in b.get("elements", []))


COST = """Cost on H100 SXM (hyperbolic 1x-H100, $1.29/hour):
- about 10.0 h of running (as given) → $12.9 on demand
- on spot (verda, $0.80/hour): about $8.46 expected
Assumptions:
- 'H100' covers H100 SXM, H100 PCIe, H100 NVL.
Prices: Prices as of 2026-05-20 (193 days old); possibly stale: check the provider's live price before renting.
Why (from the guide):
- [ft-27] “Checkpoint often.”"""
CITE = {"guide": "fine-tuning-llms", "passage_id": "ft-27", "title": "Best cloud GPUs for fine-tuning LLMs",
        "quote": "Checkpoint often."}


def test_cost_answer_has_verdict_fields_assumptions_and_sources():
    text, blocks = answer_blocks(_answer(COST, [CITE]))
    _check_limits(text, blocks)
    assert _kinds(blocks) == ["section", "section/fields", "context", "context"]
    assert blocks[0]["text"]["text"] == "*Cost on H100 SXM (hyperbolic 1x-H100, $1.29/hour):*"
    assert [f["text"] for f in blocks[1]["fields"]] == ["about 10.0 h of running (as given) → $12.9 on demand",
                                                        "on spot (verda, $0.80/hour): about $8.46 expected"]
    assert "'H100' covers" in blocks[2]["elements"][0]["text"]
    sources = [e["text"] for e in blocks[3]["elements"]]
    assert sources[0] == "*[ft-27]* Best cloud GPUs for fine-tuning LLMs: “Checkpoint often.”"
    assert sources[1].startswith(":date: Prices as of 2026-05-20")
    assert text == COST  # the fallback is the whole answer


def test_mrkdwn_control_characters_are_escaped():
    text, blocks = answer_blocks(_answer("Use <b> & <!channel> tricks\n- 3 < 4 & 5 > 2"))
    assert blocks[0]["text"]["text"] == "*Use &lt;b&gt; &amp; &lt;!channel&gt; tricks*"
    assert blocks[1]["fields"][0]["text"] == "3 &lt; 4 &amp; 5 &gt; 2"
    assert "<" not in text and ">" not in text


def test_at_most_ten_fields_and_the_rest_stays_in_the_message():
    body = "\n".join(f"- item {i}: {i} GB" for i in range(15))
    text, blocks = answer_blocks(_answer("Key numbers follow\n" + body))
    _check_limits(text, blocks)
    fields = [f["text"] for b in blocks for f in b.get("fields", [])]
    assert len(fields) == MAX_FIELDS
    rest = blocks[2]["text"]["text"]
    assert all(f"item {i}:" in rest for i in range(10, 15))


def test_long_answers_are_clipped_to_slack_limits():
    long_line = "word " * 2000
    text, blocks = answer_blocks(_answer("verdict " * 100 + "\n" + long_line + "\n- " + "9 " * 1500 + "\n"
                                         + "x & y " * 10000, [dict(CITE, quote="q" * 5000)] * 12))
    _check_limits(text, blocks)
    assert blocks[0]["text"]["text"].endswith("…") or len(blocks[0]["text"]["text"]) < 3000
    assert not blocks[0]["text"]["text"].startswith("*")  # a paragraph is not bolded
    assert "&am…" not in json.dumps(blocks)  # never cut inside an entity


def test_offers_become_a_table_and_their_bullets_are_not_repeated():
    text = ("On-demand H100, cheapest first:\n- hyperbolic h1: 1 GPU(s), $1.29/GPU-hour, default\n"
            "'H100' covers H100 SXM, H100 PCIe.\nSpot H100, cheapest first:\n- verda v1: 1 GPU(s), spot $0.80/GPU-hour\n"
            "'H100' covers H100 SXM, H100 PCIe.\nPrices: Prices as of 2026-05-20.")
    offer = {"provider": "hyperbolic", "instance_type": "h1", "gpu_count": 1, "price_usd_per_gpu_hour": 1.29,
             "region": "default"}
    spot = {"provider": "verda", "instance_type": "v1", "gpu_count": 1, "price_usd_per_gpu_hour": 2.29,
            "spot_price_usd_per_gpu_hour": 0.8015, "region": "FIN-02"}
    calls = [{"name": "price_query", "args": {"gpu": "H100", "pricing": "on-demand"}, "result": {"offers": [offer]}},
             {"name": "price_query", "args": {"gpu": "H100", "pricing": "spot"}, "result": {"offers": [spot]}}]
    _, blocks = answer_blocks(_answer(text, tool_calls=calls))
    assert _kinds(blocks) == ["section", "section", "section", "context"]
    table = blocks[1]["text"]["text"].splitlines()
    assert table[0] == table[-1] == "```"
    assert table[1].split() == ["Provider", "Instance", "GPUs", "$/GPU-h", "Pricing", "Region"]
    assert table[2].split() == ["hyperbolic", "h1", "1", "$1.29", "on-demand", "default"]
    assert table[3].split() == ["verda", "v1", "1", "$0.80", "spot", "FIN-02"]
    assert blocks[2]["text"]["text"] == "'H100' covers H100 SXM, H100 PCIe."
    assert blocks[3]["elements"][0]["text"] == ":date: Prices as of 2026-05-20."


def test_recommend_options_table_and_best_option_as_key_numbers():
    text = ("Best options (cheapest job):\n1. 2 x A100 at vast (a1, KR)\n   - Fits: 39.0 GB per GPU of 43.0 GB [ft-14].\n"
            "   - About 1.34 h for 50,000,000 tokens.\n2. 1 x L40S at lium (l1, US)\n   - Fits: 46.5 GB of 48.3 GB.\n"
            "Ruled out: 1 x A30: does not fit\nAssumptions:\n- Speeds are estimates.\n"
            "- Prices as of 2026-05-20 (193 days old).")
    options = [{"rank": 1, "gpu": "A100", "gpu_count": 2, "vram_per_gpu_gb": 38.95, "gpu_memory_gb": 42.95,
                "tokens_per_s": 10346.8, "hours": 1.342, "price_usd_per_hour": 1.33, "job_cost_usd": 1.79,
                "offer": {"provider": "vast"}},
               {"rank": 2, "gpu": "L40S", "gpu_count": 1, "vram_per_gpu_gb": 46.5, "gpu_memory_gb": 48.3,
                "tokens_per_s": 6075.0, "hours": 2.29, "price_usd_per_hour": 0.93, "job_cost_usd": 2.13,
                "offer": {"provider": "lium"}}]
    _, blocks = answer_blocks(_answer(text, tool_calls=[{"name": "recommend_gpus", "args": {},
                                                          "result": {"options": options}}]))
    assert _kinds(blocks) == ["section", "section/fields", "section", "section", "context", "context"]
    assert [f["text"] for f in blocks[1]["fields"]] == ["Fits: 39.0 GB per GPU of 43.0 GB [ft-14].",
                                                        "About 1.34 h for 50,000,000 tokens."]
    rows = [r.split() for r in blocks[2]["text"]["text"].splitlines()[1:-1]]
    assert rows[0] == ["#", "GPUs", "Provider", "GB/GPU", "tok/s", "Hours", "$/h", "$", "job"]
    assert rows[1] == ["1", "2", "x", "A100", "vast", "39.0/43.0", "10,347", "1.34", "$1.33", "$1.79"]
    assert blocks[3]["text"]["text"] == "Ruled out: 1 x A30: does not fit"
    assert "Prices as of" not in blocks[4]["elements"][0]["text"]  # moved to the sources line
    assert blocks[5]["elements"][0]["text"] == ":date: Prices as of 2026-05-20 (193 days old)."


def test_urdu_answer_is_kept_character_for_character():
    text = ("جی ہاں — یہ سما جاتا ہے۔ Llama 3 8B کو فی GPU 18.5 GB درکار ہیں۔\nاہم اعداد:\n- وزن: 16.1 GB\n"
            "- KV کیش: 0.54 GB\nمفروضات:\n- Figures are per GPU.\nوجہ (گائیڈ سے):\n- [ft-42] “ایک ہائی-وی آر اے ایم GPU کافی ہے۔”")
    cite = {"guide": "fine-tuning-llms", "passage_id": "ft-42", "title": "ایل ایل ایمز کی فائن ٹیوننگ",
            "quote": "ایک ہائی-وی آر اے ایم GPU کافی ہے۔"}
    fallback, blocks = answer_blocks(_answer(text, [cite]))
    assert fallback == text
    assert blocks[0]["text"]["text"] == "*جی ہاں — یہ سما جاتا ہے۔ Llama 3 8B کو فی GPU 18.5 GB درکار ہیں۔*"
    assert [f["text"] for f in blocks[1]["fields"]] == ["وزن: 16.1 GB", "KV کیش: 0.54 GB"]
    assert blocks[2]["elements"][0]["text"] == "*مفروضات:*\n• Figures are per GPU."
    assert blocks[3]["elements"][0]["text"] == "*[ft-42]* ایل ایل ایمز کی فائن ٹیوننگ: “ایک ہائی-وی آر اے ایم GPU کافی ہے۔”"
    # survives the JSON round trip slack_sdk makes
    assert json.loads(json.dumps(blocks)) == blocks


def test_guide_answer_does_not_repeat_the_quotes_in_the_sources():
    text = "From the guide:\n[ft-34] On-demand pricing gives you a guaranteed session."
    cite = {"guide": "g", "passage_id": "ft-34", "title": "Fine-tuning guide",
            "quote": "On-demand pricing gives you a guaranteed session."}
    _, blocks = answer_blocks(_answer(text, [cite]))
    assert blocks[-1]["elements"] == [{"type": "mrkdwn", "text": "*[ft-34]* Fine-tuning guide", "verbatim": True}]


def test_quotes_without_structured_citations_stay_as_text():
    _, blocks = answer_blocks(_answer("Use spot.\nWhy (from the guide):\n- [ga-45] “Spot is cheap.”"))
    assert any("[ga-45]" in b.get("text", {}).get("text", "") for b in blocks)


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
