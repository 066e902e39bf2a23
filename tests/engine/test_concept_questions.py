"""Concept and choice questions get their explanation, not a rental table; an off-topic request is declined;
a country of the data is a region and "EU" is the EU/EEA."""

import pytest

from assistant.engine.understand import understand


@pytest.mark.parametrize("text, topic", [
    pytest.param("explain why full fine-tuning needs like 16 bytes per parameter when the model is only 2 bytes per "
                 "param in bf16", "training_state_memory", id="bytes-per-param"),
    pytest.param("ye MoE kya hota hai yaar? mixtral 8x7b total 47b params ka hai phir bhi speed 13b jitni kyu deta hai?",
                 "moe", id="roman-what-is"),
    pytest.param("startup ke liye RAG chatbot, abhi users kam hain. dedicated GPU lein ya serverless se start karein?",
                 "serverless_vs_dedicated", id="roman-either-or"),
    pytest.param("runpod vs vast.ai vs lambda, finetuning ke liye konsa behtr hai? sirf sasta nahi, reliability b "
                 "matter krti hai", "provider_reliability", id="providers-weighed"),
])
def test_the_concept_is_explained_first(text, topic):
    q = understand(text)
    assert q.explain and topic in q.topics and q.intents[0] == "guide"
    assert not {"prices", "recommend", "cost"} & set(q.intents) or topic == "provider_reliability"


def test_a_concept_answer_explains_and_sizes_the_model_named(adv):
    a = adv.ask("ye MoE kya hota hai yaar? mixtral 8x7b total 47b params ka hai phir bhi speed 13b jitni kyu deta "
                "hai? aur memory kitni lagti hai phir?")
    assert "router" in a.answer and "all experts must stay in GPU memory" in a.answer
    assert not [c for c in a.tool_calls if c.name in ("recommend_gpus", "price_query")]
    assert [c for c in a.tool_calls if c.name == "vram_calculator"]


@pytest.mark.parametrize("text", ["forget gpus for a sec — can you write me a cover letter for a junior data analyst job?",
                                  "write me a poem about H100s"])
def test_off_topic_writing_is_declined(text):
    assert understand(text).intents == ["out_of_scope"]


@pytest.mark.parametrize("text, regions", [
    ("L40S price in Israel", ["israel"]), ("H100 in south korea or japan", ["japan", "south korea"]),
    ("EU data residency, H100s in europe please", ["eu"]), ("cheapest A100 in India", ["india"]),
])
def test_regions_named(text, regions):
    assert sorted(understand(text).regions) == sorted(regions)


def test_every_fact_has_a_label_in_both_languages():
    import json
    from pathlib import Path

    from assistant.engine.query import FACT_FIELDS
    messages = Path(__file__).resolve().parents[2] / "assistant" / "engine" / "messages"
    for lang in ("en", "ur"):
        catalog = json.loads((messages / f"{lang}.json").read_text(encoding="utf-8"))
        assert not [f for f in FACT_FIELDS if f"field.{f}" not in catalog], lang  # "carried over" names each fact
