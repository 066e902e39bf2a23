"""Intent and slot accuracy of the router on the labelled paraphrase set (tests/data/router_paraphrases.csv:
English and Urdu, typos, terse and wordy, two-turn follow-ups)."""

from tests.assistant.router_eval import evaluate


def test_intent_and_slot_accuracy_at_least_95_percent():
    r = evaluate()
    assert r["n"] >= 60 and r["by_lang"]["ur"] >= 20
    assert r["intent_acc"] >= 0.95, r["misses"]
    assert r["slot_acc"] >= 0.95 and r["slot_row_acc"] >= 0.9, r["misses"]
