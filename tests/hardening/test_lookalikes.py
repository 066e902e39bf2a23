"""Issue 31, defect 8: look-alike names are read as the name they look like. "H\u200b100" (zero-width
space), full-width "Ｈ１００" and "Н100" with a Cyrillic Н lost the GPU (the price lookup ran without it,
and an RTX 3060 price came back) instead of being read as the H100."""

from __future__ import annotations

import pytest

from knowledge.lookalike import fold_lookalikes

LOOKALIKES = [
    pytest.param("Cheapest H\u200b100 per hour?", id="zero-width-space"),
    pytest.param("Cheapest \u202eH100\u202c per hour?", id="bidi-override"),
    pytest.param("Cheapest Ｈ１００ per hour?", id="full-width"),
    pytest.param("Cheapest \u041d100 per hour?", id="cyrillic-en"),
    pytest.param("Cheapest \u0397100 per hour?", id="greek-eta"),
    pytest.param("Cheapest H\u2060100 per hour?", id="word-joiner"),
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_fold_reads_the_name_a_reader_sees(text):
    assert fold_lookalikes(text) == "Cheapest H100 per hour?"


@pytest.mark.parametrize("text", ["Привет, мир", "کیا میں 24GB GPU پر 13B ماڈل چلا سکتا ہوں؟", "Cheapest H100?",
                                  "Ελληνικά", "SDXL images at 1024², ½ the cost"])
def test_other_scripts_and_plain_text_are_left_as_they_are(text):
    assert fold_lookalikes(text) == text


@pytest.fixture(scope="module")
def advisor(tmp_path_factory):
    from assistant.service.advisor import Advisor
    from assistant.threads.sqlite_store import SqliteThreadStore

    return Advisor(store=SqliteThreadStore(str(tmp_path_factory.mktemp("lookalike") / "c.sqlite")))


@pytest.mark.parametrize("text", LOOKALIKES)
def test_the_advisor_prices_the_h100(advisor, text):
    calls = [c for c in advisor.ask(text).model_dump()["tool_calls"] if c["name"] == "price_query"]
    assert calls and all(c["args"].get("gpu") == "H100" for c in calls), calls
