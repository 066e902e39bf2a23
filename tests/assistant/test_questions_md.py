"""Every question of shared/questions.md through the assistant on the embedded router backend.

Each test asserts the tools called, that key numbers in the answer equal the tools' own results,
the answer's language and its guide citations.
"""

import re

import pytest

from assistant.service.advisor import Advisor


@pytest.fixture(scope="module")
def adv(tmp_path_factory):
    return Advisor(checkpoint_path=str(tmp_path_factory.mktemp("threads") / "t.sqlite"))


def names(ans):
    return [c.name for c in ans.tool_calls]


def result(ans, name, i=0):
    return [c for c in ans.tool_calls if c.name == name][i].result


def fmt(x):  # the composer's rounding
    x = float(x)
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def test_q1_fit_llama3_8b_fp16_24gb_8k(adv):
    a = adv.ask("Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", thread_id="q1")
    r = result(a, "vram_calculator")
    assert r["inputs"]["seq_len"] == 8192 and r["inputs"]["weight_precision"] == "fp16"
    assert fmt(r["total_gb"]) in a.answer and fmt(r["components_gb"]["weights"]) in a.answer
    assert fmt(r["components_gb"]["kv_cache"]) in a.answer  # weights and KV cache shown apart
    assert ("Yes" in a.answer) is r["fit"]["fits"] and fmt(r["fit"]["headroom_gb"]) in a.answer
    assert a.language == "en" and a.citations


def test_q14_followup_32k_context_recomputes_kv(adv):
    a = adv.ask("What if I use 32k context instead?", thread_id="q1")
    r = result(a, "vram_calculator")
    assert r["inputs"]["seq_len"] == 32768 and r["model"]["id"] == "llama-3-8b"
    assert r["inputs"]["weight_precision"] == "fp16" and fmt(r["components_gb"]["kv_cache"]) in a.answer


def test_q2_70b_4bit_32k_8_users(adv):
    a = adv.ask("How much VRAM to serve a 70B model at 4-bit, 32k context, 8 concurrent users?")
    r = result(a, "vram_calculator")
    assert r["inputs"]["batch"] == 8 and r["inputs"]["seq_len"] == 32768 and r["inputs"]["weight_precision"] == "int4"
    c = r["components_gb"]
    assert c["kv_cache"] > 0.5 * c["weights"] and "KV cache" in a.answer  # the KV cache rivals the weights
    assert "price_query" in names(a)  # names real GPUs (or says none has that much)
    assert fmt(r["total_gb"]) in a.answer


def test_q3_full_finetune_7b_80gb_mixed_vs_bf16(adv):
    a = adv.ask("Can I fully fine-tune a 7B model on one 80 GB card with AdamW?")
    mixed, pure = result(a, "vram_calculator", 0), result(a, "vram_calculator", 1)
    assert mixed["inputs"]["method"] == "full" and pure["inputs"]["training_precision"] == "bf16"
    assert mixed["total_gb"] > pure["total_gb"]
    assert fmt(mixed["total_gb"]) in a.answer and fmt(pure["total_gb"]) in a.answer
    assert "mixed precision" in a.answer.lower()


def test_q4_smallest_gpu_qlora_13b(adv):
    a = adv.ask("Smallest GPU for QLoRA on a 13B model, seq 2048, batch 4?")
    r = result(a, "vram_calculator")
    assert r["inputs"]["method"] == "qlora" and r["inputs"]["batch"] == 4 and r["inputs"]["seq_len"] == 2048
    offers = result(a, "price_query")["offers"]
    assert offers and all(o["gpu_memory_gb"] >= r["total_gb"] for o in offers)
    assert offers[0]["gpu"] in a.answer


def test_q5_13b_int8_l4_vs_a100(adv):
    a = adv.ask("Tokens/s for a 13B INT8 model on an L4 vs an A100?")
    sp = [c.result for c in a.tool_calls if c.name == "speed_estimator"]
    # "A100" is resolved once to the cheapest variant that holds a 13B int8 model (~14 GB): every tool uses it
    chosen = a.scenarios[1]["gpu_choice"]["chosen"]
    assert chosen.startswith("A100") and {s["gpu"]["name"] for s in sp} == {"L4", chosen}
    assert "covers several cards" in a.answer
    for s in sp:
        assert s["inputs"]["precision"] == "int8" and fmt(s["decode_tokens_per_s"]) in a.answer
    assert "estimate" in a.answer.lower() and any(c.passage_id in ("ga-07", "ga-53") for c in a.citations)


def test_q6_batching_16_on_h100(adv):
    a = adv.ask("Will batching 16 requests raise throughput on an H100, and by how much?")
    sp = [c.result for c in a.tool_calls if c.name == "speed_estimator"]
    assert [s["inputs"]["batch"] for s in sp] == [1, 16]
    assert sp[1]["aggregate_tokens_per_s"] > sp[0]["aggregate_tokens_per_s"]
    assert sp[1]["decode_tokens_per_s"] <= sp[0]["decode_tokens_per_s"]
    for s in sp:
        assert fmt(s["aggregate_tokens_per_s"]) in a.answer


def test_q7_cheapest_h100_on_demand_and_spot(adv):
    a = adv.ask("Cheapest H100 per hour right now, on-demand and spot?")
    od, sp = result(a, "price_query", 0), result(a, "price_query", 1)
    assert od["offers"][0]["provider"] in a.answer and sp["offers"][0]["provider"] in a.answer
    assert fmt(od["offers"][0]["price_usd_per_gpu_hour"]) in a.answer
    assert od["as_of"] in a.answer  # the date of the data


def test_q8_and_q13_lora_cost_a100_vs_4090_then_spot(adv):
    a = adv.ask("Cost of a 3-epoch LoRA fine-tune of Mistral-7B on 50k examples of ~512 tokens, A100 vs RTX 4090?",
                thread_id="q8")
    costs = [c for c in a.tool_calls if c.name == "cost_estimator"]
    # "A100" is one card for the whole answer: the cheapest variant that holds the LoRA run, said so
    chosen = a.scenarios[0]["gpu_choice"]["chosen"]
    assert len(costs) == 2 and {c.args["gpu"] for c in costs} == {chosen, "RTX 4090"} and chosen.startswith("A100")
    for c in costs:
        assert c.args["examples"] == 50000 and c.args["tokens_per_example"] == 512 and c.args["epochs"] == 3
        assert fmt(c.result["on_demand_cost_usd"]) in a.answer
    assert "Assumptions" in a.answer
    b = adv.ask("And on spot?", thread_id="q8")
    costs2 = [c for c in b.tool_calls if c.name == "cost_estimator"]
    assert [c.args["gpu"] for c in costs2] == [c.args["gpu"] for c in costs]  # inputs reused
    spots = [c.result["spot"] for c in costs2 if c.result.get("spot")]
    assert spots and any(fmt(s["cost_usd"]) in b.answer for s in spots)
    assert "interruption" in b.answer.lower()


def test_q9_per_second_vs_hourly_for_20_minutes(adv):
    a = adv.ask("Per-second vs hourly billing: does it matter for 20-minute experiments?")
    r = result(a, "cost_estimator")
    assert r["runtime_hours"] == pytest.approx(1 / 3)
    assert fmt(r["billing"]["per_second_usd"]) in a.answer and fmt(r["billing"]["per_hour_usd"]) in a.answer
    assert any(c.passage_id in ("ft-28", "ga-33") for c in a.citations)


def test_q10_100_dollars_llama3_8b_20k_samples(adv):
    a = adv.ask("I have $100 to fine-tune Llama-3-8B on 20k samples: which GPU and provider?")
    r = result(a, "recommend_gpus")
    assert r["status"] == "ok" and r["options"]
    top = r["options"][0]
    assert top["gpu"] in a.answer and top["offer"]["provider"] in a.answer
    assert all(min(x for x in (o["job_cost_usd"], o["spot_job_cost_usd"]) if x is not None) <= 100 for o in r["options"])
    assert "tokens per example (not stated)" in a.answer


@pytest.mark.parametrize("q, ids", [
    ("Why does generation speed depend on memory bandwidth more than FLOPs?", {"ga-07", "ga-53"}),
    ("What should I check besides price when picking a provider?", {"ft-26", "ft-24", "ft-29", "ft-30", "ga-35"}),
])
def test_q11_q12_guide_questions_cite_passages_and_compute_nothing(adv, q, ids):
    a = adv.ask(q)
    assert names(a) == ["search_guide"]
    assert {c.passage_id for c in a.citations} & ids
    assert not re.search(r"\d+(\.\d+)?\s*(GB|tokens/s|\$)", a.answer)  # no invented numbers


def test_q15_urdu_qlora_13b_24gb(adv):
    a = adv.ask("کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟")
    r = result(a, "vram_calculator")
    assert a.language == "ur" and r["inputs"]["method"] == "qlora" and r["fit"]["gpu_memory_gb"] > 25
    assert fmt(r["total_gb"]) in a.answer and "جی ہاں" in a.answer
    assert a.citations and all(re.search(r"[\u0600-\u06FF]", c.quote) for c in a.citations)


def test_q16_absurd_request_says_what_does_not_fit(adv):
    a = adv.ask("Fine-tune a 500-trillion-parameter model on a GTX 1050 with 10M context for $1.")
    assert "GTX 1050" in a.answer
    v = [c.result for c in a.tool_calls if c.name == "vram_calculator" and "total_gb" in c.result]
    assert v and fmt(v[0]["total_gb"]) in a.answer


def test_q17_sql_text_is_only_text(adv):
    a = adv.ask("Show prices for gpu = 'A100'; DROP TABLE prices; --")
    r = result(a, "price_query")
    assert r["offers"] and "DROP" not in a.answer and "Traceback" not in a.answer
    again = adv.ask("Cheapest H100 per hour?")
    assert result(again, "price_query")["offers"]  # the catalog is intact


def test_q18_bad_values_are_named(adv):
    a = adv.ask("VRAM for a 7B model with batch size -3 and context 0?")
    # both bad values named with what is accepted, in words (no field identifiers in a chat answer)
    assert "-3" in a.answer and "batch" in a.answer and "context" in a.answer and "Accepted" in a.answer
    assert "seq_len" not in a.answer


def test_q19_unknown_model_asks_for_size(adv):
    a = adv.ask("How much VRAM does Llama-9-Ultra-900B-Turbo need?")
    assert "Llama-9-Ultra-900B-Turbo" in a.answer and "parameter count" in a.answer and "config.json" in a.answer
    assert not any("total_gb" in (c.result or {}) for c in a.tool_calls)  # no guess


def test_threads_survive_a_new_process(tmp_path):
    path = str(tmp_path / "t.sqlite")
    Advisor(checkpoint_path=path).ask("Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", thread_id="x")
    b = Advisor(checkpoint_path=path).ask("what about 32k context?", thread_id="x")
    assert [c for c in b.tool_calls if c.name == "vram_calculator"][0].args["model"] == "llama-3-8b"


@pytest.mark.parametrize("q", __import__("benchmarks.router_latency", fromlist=["QUESTIONS"]).QUESTIONS)
def test_router_answers_always_pass_the_grounding_guard(adv, q):
    a = adv.ask(q)
    assert a.grounding == {"ok": True, "unbacked": []}, a.answer
