"""The composer on hand-built Queries and tool results (no router): verdict first, numbers copied from
the results with their labels and units, the way forward, solved unknowns, what was understood,
unknown names asked back, egress/storage, comparisons side by side, citations that exist."""

from __future__ import annotations

import re

import pytest

from assistant.engine.answer import Finding
from assistant.engine.compose import compose
from assistant.engine.compose.citations import best_quote, known_ids, split_sentences
from assistant.engine.query import Query
from assistant.engine.render import render_text


def vram(total=17.92, fits=True, gpu="L4", mem=25.77, method="inference", precision="bf16", **inputs):
    """A vram_calculator result as tools/vram.py returns it; headroom = memory - total."""
    comps = {"weights": 16.06, "kv_cache": 0.27, "activations": 0.26, "cuda_context": total - 16.59}
    return {"total_gb": total, "components_gb": comps,
            "model": {"id": "llama-3.1-8b", "name": "Llama 3.1 8B"},
            "inputs": {"method": method, "weight_precision": precision, "batch": 1, "seq_len": 2048,
                       "kv_precision": "bf16", "gpus": 1, **inputs},
            "assumptions": ["Logits need far less with --chunked-loss.", "cuda_context covers the allocator.",
                            "An estimate, not a measurement."],
            "fit": {"gpu": gpu, "gpu_memory_gb": mem, "fits": fits, "headroom_gb": round(mem - total, 2),
                    "headroom_pct": 0.0}}


def q(**kw) -> Query:
    return Query(**{"intents": ["fit"], "text": "", **kw})


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def test_fit_yes_verdict_first_with_labelled_numbers_and_defaults_said():
    s = compose(q(model="llama-3.1-8b", gpus=["L4"], precision="bf16"), [("vram_calculator", {}, vram())])
    assert s.verdict == "yes" and codes(s.headline) == ["fit.yes"]
    assert [(k.label, k.value, k.unit) for k in s.key_numbers[:2]] == [("num.total_per_gpu", 17.92, "gb"),
                                                                        ("comp.weights", 16.06, "gb")]
    text = render_text(s)
    # 25.77 - 17.92 = 7.85 GB free; 25.77 GB = 24 GiB x 2^30 / 10^9 (vendor GiB)
    assert "Yes — it fits" in text and "17.9 GB" in text and "7.85 GB free" in text and "24 GiB" in text
    assert "Context (prompt + output): 2,048 tokens (default, not stated)." in text  # a default is said as one
    assert "Weight precision: bf16." in text  # a stated value is not called a default
    assert text.index("Yes") < text.index("Key numbers")


def test_tool_notes_with_flags_or_identifiers_stay_out_of_the_answer():
    s = compose(q(model="llama-3.1-8b", gpus=["L4"]), [("vram_calculator", {}, vram())])
    assert s.details == ["An estimate, not a measurement."]
    ur = compose(q(model="llama-3.1-8b", gpus=["L4"], answer_lang="ur"), [("vram_calculator", {}, vram())])
    assert ur.details == [] and "An estimate" not in render_text(ur)


def test_does_not_fit_without_levers_points_to_quantization_with_its_passage():
    s = compose(q(model="llama-3.1-8b", gpus=["RTX 3060"]), [("vram_calculator", {}, vram(fits=False, mem=12.88))])
    assert s.verdict == "no" and codes(s.explanation) == ["why.quantize"]
    assert s.explanation[0].passage_id == "ga-08" and [c.id for c in s.citations] == ["ga-08"]
    # 17.92 - 12.88 = 5.04 GB short
    assert "5.04 GB more than it has" in render_text(s)


LEVERS = {"problem": "does_not_fit", "tried": ["kv_cache_fp8", "weights_8bit"], "defaults_applied": [],
          "baseline": {"code": "as_given", "memory_gb": 17.92, "gpu": "RTX 3060", "gpu_memory_gb": 12.88},
          "levers": [
              # int8 weights: 8.03B x 1 B = 8.03 GB + 16-bit embeddings ... = 10.59 GB (tools.vram);
              # free: 12.88 - 10.59 = 2.29 GB
              {"code": "weights_8bit", "params": {"weight_precision": "int8"}, "memory_gb": 10.59, "gpu": "RTX 3060",
               "gpu_memory_gb": 12.88, "fits": True, "headroom_gb": 2.29, "works": True,
               "offer": {"provider": "vast", "instance_type": "1x-RTX_3060", "region": "CZ",
                         "price_usd_per_hour": 0.06}},
              {"code": "more_gpus_tensor_parallel", "params": {"gpus": 2, "tensor_parallel": 2}, "memory_gb": 9.21,
               "gpu": "RTX 3060", "gpu_memory_gb": 12.88, "fits": True, "headroom_gb": 3.67, "works": True,
               "offer": None},
              {"code": "kv_cache_fp8+chunked_prefill", "params": {"kv_precision": "fp8", "prefill_chunk_tokens": 8192},
               "memory_gb": 12.1, "gpu": "RTX 3060", "gpu_memory_gb": 12.88, "fits": True, "headroom_gb": 0.78,
               "works": True}]}


def test_way_forward_lists_each_lever_with_its_numbers_and_offer():
    s = compose(q(model="llama-3.1-8b", gpus=["RTX 3060"]),
                [("vram_calculator", {}, vram(fits=False, mem=12.88)), ("way_forward", {}, LEVERS)])
    assert s.verdict == "no" and "why.quantize" not in codes(s.explanation)
    assert [o.title.code for o in s.way_forward] == ["lever.weights_8bit", "lever.more_gpus_tensor_parallel",
                                                     "lever.combo"]
    text = render_text(s)
    assert "What would work:" in text and "1. 8-bit weights (int8)" in text
    assert "Memory per GPU: 10.6 GB of 12.9 GB" in text and "Free memory left: 2.29 GB" in text
    assert "Cheapest offer: vast 1x-RTX 3060, CZ, $0.06/h" in text  # the instance id read without its underscore
    assert "2. 2 GPUs with tensor parallelism" in text and "3. FP8 KV cache + Chunked prefill" in text


def test_way_forward_alone_states_the_problem_and_practitioner_defaults():
    wf = dict(LEVERS, problem="does_not_fit",
              defaults_applied=[{"code": "default_applied", "params": {"field": "grad_checkpointing", "value": True}}])
    s = compose(q(model="llama-3.1-8b", gpus=["RTX 3060"]), [("way_forward", {}, wf)])
    assert codes(s.headline) == ["lever.problem_does_not_fit"] and s.verdict == "no"
    assert "Default that practitioners run: gradient checkpointing on (not stated)." in render_text(s)


@pytest.mark.parametrize("result, expected", [
    pytest.param({"unknown": "max_context", "value": 61097, "unit": "tokens", "solved": True,
                  "config": {"method": "inference", "seq_len": 61097, "batch": 1}, "memory_gb": 51.54,
                  "gpu_memory_gb": 51.54, "limited_by": "kv_cache", "findings": [], "details": {}},
                 "The longest context that fits is 61,097 tokens", id="max-context"),
    pytest.param({"unknown": "min_gpu_count", "value": 8, "unit": "GPUs", "solved": True,
                  "config": {"method": "inference", "gpus": 8}, "memory_gb": 54.59, "gpu_memory_gb": 85.9,
                  "limited_by": "weights", "findings": [], "details": {}},
                 "You need 8 x H100 (tensor parallel): 54.6 GB per GPU of 85.9 GB.", id="min-gpu-count"),
    pytest.param({"unknown": "max_batch", "value": 6, "unit": "sequences", "solved": True,
                  "config": {"method": "inference", "seq_len": 8192, "batch": 6}, "memory_gb": 25.2,
                  "gpu_memory_gb": 25.77, "limited_by": "kv_cache", "findings": [], "details": {}},
                 "At most 6 sequences of 8,192 tokens fit at once", id="max-batch"),
    pytest.param({"unknown": "min_gpu_count", "value": None, "unit": "GPUs", "solved": False,
                  "config": {"method": "full", "gpus": 8}, "memory_gb": 881.2, "gpu_memory_gb": 12.88,
                  "limited_by": "optimizer", "details": {},
                  "findings": [{"code": "default_applied", "params": {"field": "grad_checkpointing", "value": True}},
                               {"code": "exceeds_max_gpus", "params": {"max_gpus": 8, "memory_gb_at_max": 881.2}}]},
                 "Even 8 x H100 do not hold it: 881 GB per GPU at that count.", id="no-count-fits"),
])
def test_solved_unknown_is_the_headline(result, expected):
    s = compose(q(model="llama-3.1-8b", gpus=["H100"], solve_for=result["unknown"]),
                [(f"solve_{result['unknown']}", {"gpu": "H100"}, result)])
    text = render_text(s)
    assert expected in text.split("\n\n")[1]  # the line after "Understood: ..."
    assert s.verdict == ("yes" if result["solved"] else "no")


def test_solved_variable_is_not_listed_as_a_default():
    r = {"unknown": "max_context", "value": 61097, "unit": "tokens", "solved": True, "limited_by": "kv_cache",
         "config": {"method": "inference", "seq_len": 61097, "batch": 1, "weight_precision": "int4"},
         "memory_gb": 51.5, "gpu_memory_gb": 51.5, "findings": [], "details": {}}
    s = compose(q(model="qwen2.5-32b", gpus=["L40S"], solve_for="max_context"), [("solve_max_context", {}, r)])
    assert not any(f.params.get("label") == "num.context" for f in s.assumptions)


def speed(gpu, per, agg, batch=1, bound="memory"):
    return {"decode_tokens_per_s": per, "aggregate_tokens_per_s": agg, "time_to_first_token_s": 0.06,
            "request_latency_s": 6.5, "bound": bound, "gpu": {"name": gpu}, "engine": "vllm",
            "inputs": {"precision": "int8", "batch": batch, "prompt_tokens": 512, "output_tokens": 256, "gpus": 1,
                       "model": "llama-3.1-8b"}, "assumptions": [], "memory": {"fits": True, "max_batch": 40}}


def test_gpu_comparison_is_one_table_with_the_same_rows_for_each():
    s = compose(q(intents=["compare"], model="llama-3.1-8b", gpus=["L4", "A100"]),
                [("speed_estimator", {}, speed("L4", 25.1, 25.1)),
                 ("speed_estimator", {}, speed("A100 80GB SXM", 98.4, 98.4))])
    (t,) = s.tables
    assert t.columns == ["col.metric", "L4", "A100 80GB SXM"]
    assert all(len(r) == 3 for r in t.rows) and len(t.rows) >= 4
    text = render_text(s)
    assert re.search(r"Speed per user\s+25\.1 tok/s\s+98\.4 tok/s", text)


def test_batch_comparison_labels_columns_by_batch():
    s = compose(q(intents=["speed"], model="llama-3.1-8b", gpus=["H100"]),
                [("speed_estimator", {}, speed("H100", 120.0, 120.0)),
                 ("speed_estimator", {}, speed("H100", 105.0, 1680.0, 16))])
    assert "H100, batch 16" in render_text(s) and "1,680 tok/s" in render_text(s)


def test_speed_on_one_gpu_with_no_model_shows_the_example_and_asks_which_model():
    s = compose(q(intents=["speed"], gpus=["H100"]), [("speed_estimator", {}, speed("H100", 143.0, 143.0))])
    assert "ask.model_for_speed" in codes(s.headline) and "assume.example_model" in codes(s.assumptions)
    text = render_text(s)
    assert "143 tokens/s per user" in text and "Which model will you run?" in text
    named = compose(q(intents=["speed"], model="llama-3.1-8b", gpus=["H100"]),
                    [("speed_estimator", {}, speed("H100", 143.0, 143.0))])
    assert "ask.model_for_speed" not in codes(named.headline)


def offer(provider, price, spot=None, gpu="H100 SXM", n=1):
    return {"provider": provider, "instance_type": f"{provider}-1", "gpu": gpu, "gpu_count": n, "region": "r1",
            "price_usd_per_hour": price * n, "price_usd_per_gpu_hour": price,
            "spot_price_usd_per_hour": spot and spot * n, "spot_price_usd_per_gpu_hour": spot}


def test_on_demand_and_spot_side_by_side_in_one_table():
    od = {"as_of": "2026-05-20", "stale": True, "offers": [offer("hyperbolic", 1.29)], "gpu_note": "'H100' covers ..."}
    sp = {"as_of": "2026-05-20", "stale": True, "offers": [offer("verda", 2.29, 0.8015)]}
    s = compose(q(intents=["prices"], gpus=["H100"], both_pricing=True),
                [("price_query", {"gpu": "H100", "pricing": "on-demand"}, od),
                 ("price_query", {"gpu": "H100", "pricing": "spot"}, sp)])
    (t,) = s.tables
    assert [r[0] for r in t.rows] == ["hyperbolic", "verda"]
    assert [r[4]["code"] for r in t.rows] == ["term.on_demand", "term.spot"]
    text = render_text(s)
    assert "Cheapest on-demand H100 SXM: $1.29/GPU-hour at hyperbolic" in text and "$0.80/GPU-hour at verda" in text
    assert s.data_date == "2026-05-20" and "Prices as of 2026-05-20." in text and "may be stale" in text


def serving_cost(users=None):
    # $0.60/h at 4,552 tokens/s: 0.60 / (4552 x 3600) x 1e6 = $0.0366 per million; batch 1 at 39.55 tokens/s: $4.21
    return {"as_of": "2026-05-20", "gpu": "L40S", "gpus": 1,
            "offer": {"provider": "vast", "instance_type": "1x-L40S", "gpu": "L40S", "gpu_count": 1,
                      "price_usd_per_hour": 0.6},
            "serving": {"aggregate_tokens_per_s": 4552.4, "batch": 256, "basis": "throughput_optimal",
                        "max_batch_in_memory": 282, "usd_per_million_tokens": 0.0366, "monthly_usd": 438.0,
                        "usd_per_million_tokens_batch_1": 4.2145,
                        "batch_1": {"batch": 1, "aggregate_tokens_per_s": 39.55, "tokens_per_s_per_user": 39.55,
                                    "usd_per_million_tokens": 4.2145}},
            "assumptions": [], "findings": [{"code": "serving_always_on",
                                             "params": {"hours_per_month": 730, "batch": 256}},
                                            {"code": "batch_limited_by",
                                             "params": {"limit": "engine_max_num_seqs", "batch": 256,
                                                        "max_batch_in_memory": 282, "engine_cap": 256}}]}


def test_serving_cost_gives_both_labelled_figures():
    s = compose(q(intents=["cost"], model="llama-3.1-8b", gpus=["L40S"]), [("cost_estimator", {}, serving_cost())])
    labels = {k.label: k for k in s.key_numbers}
    assert labels["num.usd_mtok_load"].value == 0.0366 and labels["num.usd_mtok_batch1"].value == 4.2145
    text = render_text(s)
    assert "$0.0366 per million tokens at batch 256 (the throughput-optimal batch, as no load was given)" in text
    assert "$4.21 per million tokens for a lone user at batch 1" in text and "$438 a month always on" in text


def job_cost(**extra):
    # 10 h x $1.29/h = $12.90 on demand
    r = {"as_of": "2026-05-20", "gpu": "H100", "gpus": 1, "runtime_hours": 10.0, "on_demand_cost_usd": 12.9,
         "offer": {"provider": "hyperbolic", "instance_type": "1x-H100", "gpu": "H100 SXM", "gpu_count": 1,
                   "price_usd_per_hour": 1.29},
         "billing": {"per_second_usd": 12.9, "per_minute_usd": 12.9, "per_hour_usd": 12.9},
         "spot": {"cost_usd": 8.46, "wall_hours": 10.55, "expected_interruptions": 0.53, "provider": "verda",
                  "spot_price_usd_per_hour": 0.8015}, "total_usd": 12.9, "assumptions": [], "findings": []}
    return r | extra


def test_egress_costed_when_the_rate_is_known_and_said_unknown_otherwise():
    known = job_cost(egress_usd=45.0, total_usd=57.9, findings=[
        {"code": "egress_cost", "params": {"egress_gb": 500, "usd_per_gb": 0.09, "provider": "aws", "usd": 45.0}}])
    s = compose(q(intents=["cost"], gpus=["H100"], egress_gb=500), [("cost_estimator", {}, known)])
    text = render_text(s)  # 500 GB x $0.09/GB = $45
    assert "- Egress: $45" in text and "Egress: 500 GB at $0.09/GB." in text and "- Total: $57.9" in text
    unknown = job_cost(egress_usd=None, total_usd=None, findings=[
        {"code": "egress_rate_unknown", "params": {"egress_gb": 500, "usd_per_gb": None, "provider": "hyperbolic"}}])
    s = compose(q(intents=["cost"], gpus=["H100"], egress_gb=500), [("cost_estimator", {}, unknown)])
    assert "cost.egress_rate_unknown" in codes(s.notices)
    assert "Egress of 500 GB: the rate is not known for hyperbolic, so it is not costed." in render_text(s)
    s = compose(q(intents=["cost"], gpus=["H100"], egress_gb=500), [("cost_estimator", {}, job_cost())])
    assert "cost.egress_not_costed" in codes(s.notices)


def test_budget_and_spot_are_answered():
    s = compose(q(intents=["cost"], gpus=["H100"], budget_usd_total=10, spot=True),
                [("cost_estimator", {}, job_cost())])
    text = render_text(s)
    assert s.verdict == "no" and "H100 SXM is over your budget: $12.9 against $10." in text
    assert "about $8.46 expected, with 0.53 expected interruptions" in text


def test_billing_question_in_the_minutes_the_user_gave():
    # 20 min at $1.29/h: $0.43 billed per second, a whole hour ($1.29) billed hourly
    r = job_cost(runtime_hours=1 / 3, on_demand_cost_usd=1.29,
                 billing={"per_second_usd": 0.43, "per_minute_usd": 0.43, "per_hour_usd": 1.29})
    s = compose(q(intents=["cost"], gpus=["H100"], billing=True, duration_hours=1 / 3), [("cost_estimator", {}, r)])
    assert render_text(s).split("\n")[2] == (
        "Billing granularity matters for short runs: 20 min on H100 SXM costs $0.43 "
        "billed per second, $0.43 per minute, but $1.29 billed per hour.")
    assert [c.id for c in s.citations] == ["ft-28"]


def test_size_only_model_and_memory_only_gpu_are_phrases_not_tool_prose():
    r = vram(gpu="a 80 GB GPU", mem=85.9, total=131.0, fits=False, method="full")
    r["model"] = {"id": "params-7b", "name": "7B-parameter model (rough shape)", "rough": True, "params_b": 7.0}
    text = render_text(compose(q(params_b=7, gpu_memory_gb=80, method="full"), [("vram_calculator", {}, r)]))
    assert "No — it does not fit. 7B-parameter model (shape estimated from its size) (full fine-tuning, bf16)" in text
    assert "on a GPU with 80 GB (85.9 GB)" in text and "rough shape" not in text and "a 80 GB GPU" not in text


def test_two_gpus_cost_side_by_side():
    a = job_cost()
    b = job_cost(on_demand_cost_usd=20.0, offer={"provider": "lium", "instance_type": "x", "gpu": "RTX 4090",
                                                 "gpu_count": 1, "price_usd_per_hour": 0.5}, runtime_hours=40.0)
    s = compose(q(intents=["cost"], gpus=["H100", "RTX 4090"]), [("cost_estimator", {}, a), ("cost_estimator", {}, b)])
    (t,) = s.tables
    assert t.columns == ["col.metric", "H100 SXM", "RTX 4090"] and all(len(r) == 3 for r in t.rows)
    assert re.search(r"On-demand cost\s+\$12\.9\s+\$20\.0", render_text(s))


def test_understood_line_carries_budget_epochs_deadline_filters_and_carried_facts():
    query = q(intents=["recommend"], model="llama-3.1-8b", method="lora", examples=20000, epochs=3,
              budget_usd_total=100,
              deadline_hours=12, providers=["vast", "lium"], spot=False, carried=["providers", "gpus"],
              not_used=["42"], out_of_range=["a 10,000,000-token context (the model's window is 131,072)"])
    s = compose(query, [])
    first = render_text(s).split("\n")[0]
    assert first.startswith("Understood: Llama 3.1 8B · LoRA · 20,000 examples · 3 epochs · budget $100 · "
                            "deadline 12 h")
    assert "providers: vast, lium" in first and "on-demand" in first
    assert first.endswith("carried over from earlier: providers, GPU")
    text = render_text(s)
    assert "Numbers in your question that no figure here uses: 42 " in text and "Out of range: a 10,000,000-token context" in text


def test_unknown_model_is_asked_back_with_the_closest_names():
    err = {"error": "Unknown model 'llama-6-1t'. Closest known: llama-3.1-8b, llama-3.1-70b. Give the parameter "
                    "count (--params-b) or a Hugging Face config.json (--config)."}
    s = compose(q(model_unknown="llama-6-1t"), [("vram_calculator", {"model": "llama-6-1t"}, err)])
    assert s.verdict == "ask" and codes(s.headline) == ["ask.unknown_model"]
    text = render_text(s)
    assert "“llama-6-1t”" in text and "llama-3.1-8b, llama-3.1-70b" in text and "parameter count" in text
    assert "--params-b" not in text


def test_unknown_gpu_from_the_query_gets_catalog_suggestions():
    s = compose(q(model="llama-3.1-8b", gpu_unknown=["H400"]), [])
    (f,) = [f for f in s.notices if f.code == "ask.unknown_gpu"]
    assert f.params["close"] and all(isinstance(n, str) for n in f.params["close"])
    assert s.verdict == "ask"


def test_invalid_value_is_named_in_words():
    err = {"error": "Invalid seq_len: 0. Accepted: an integer from 1 to 10,000,000."}
    s = compose(q(model="llama-3.1-8b"), [("vram_calculator", {}, err)])
    text = render_text(s)
    assert s.verdict == "error" and "I can't use 0 as the context length (tokens)." in text and "seq_len" not in text


@pytest.mark.parametrize("intent, code", [("help", "answer.help"), ("out_of_scope", "answer.out_of_scope")])
def test_help_and_out_of_scope(intent, code):
    assert codes(compose(q(intents=[intent]), []).headline) == [code]


def test_missing_gpu_and_model_are_asked():
    assert codes(compose(q(intents=["speed"], model="llama-3.1-8b"), []).headline) == ["ask.gpu"]
    assert codes(compose(q(intents=["fit"], gpus=["L4"]), []).headline) == ["ask.model"]


def test_recommend_options_and_coded_reasons():
    opt = {"gpu": "RTX 3090", "gpu_count": 1, "precision": "bf16", "vram_per_gpu_gb": 22.4, "gpu_memory_gb": 25.77,
           "memory_components_gb": {"weights": 16.06, "kv_cache": 5.37}, "tokens_per_s": 280.6,
           "tokens_per_s_per_user": 35.1, "bound": "memory", "price_usd_per_hour": 0.25,
           "usd_per_million_tokens": 0.2475,
           "usd_per_million_tokens_batch_1": 1.675, "monthly_usd": 182.5, "serving_basis": "concurrent_users",
           "serving_batch": 8, "offer": {"provider": "vast", "instance_type": "1x-RTX_3090", "region": "RO",
                                          "as_of": "2026-05-20", "price_usd_per_hour": 0.25},
           "reasons": ["English sentence the composer must not parse"], "citations": ["ga-31"]}
    r = {"status": "ok", "options": [opt],
         "ruled_out": [{"gpu": "MI25", "gpu_count": 1, "reason": "1 x MI25: does not fit"}],
         "assumptions": ["Fits means ..."], "chart": {}}
    s = compose(q(intents=["recommend"], model="llama-3.1-8b", concurrent_users=8),
                [("recommend_gpus", {"workload": "serve"}, r)])
    assert s.verdict == "yes" and codes(s.headline) == ["rec.best", "rec.best_serve"]
    # KV cache 5.37 GB >= 0.3 x 16.06 GB of weights: said to rival them
    assert codes(s.explanation)[:3] == ["why.fits_serve", "why.kv_big", "why.bandwidth"]
    assert "rec.ruled_out" in codes(s.explanation) and s.data_date == "2026-05-20"
    text = render_text(s)
    assert "Best choice: 1 x RTX 3090 at vast, $0.25/h." in text and "English sentence" not in text
    assert "Context (prompt + output): 4,096 tokens (default, not stated)." in text  # the tool's own default


def test_recommend_asks_for_what_is_missing():
    r = {"status": "needs_input", "missing": ["method"], "options": [], "ruled_out": [], "assumptions": []}
    s = compose(q(intents=["recommend"], model="llama-3.1-70b"), [("recommend_gpus", {"workload": "finetune"}, r)])
    assert s.verdict == "ask" and "fine-tuning method (full, LoRA or QLoRA)" in render_text(s)


# ---- citations ----------------------------------------------------------------------------------------
def test_sentences_do_not_split_at_vs_and_headings_are_not_quotes():
    assert split_sentences("• Spot vs. on-demand. Interruptible instances are ideal.") == [
        "Spot vs. on-demand.", "Interruptible instances are ideal."]
    quote = best_quote("• Spot vs. on-demand. Interruptible instances are ideal for fault-tolerant batch generation "
                       "and checkpointed fine-tuning, but risky for a user-facing endpoint.", "spot or on-demand?")
    assert quote.startswith("Interruptible instances")


def test_guide_answer_quotes_full_sentences_of_existing_passages():
    hits = {"passages": [{"id": "ga-34", "text": "• Spot vs. on-demand. Interruptible ..."},
                         {"id": "ft-40", "text": "made up"}]}
    s = compose(q(intents=["guide"], text="Is spot or on-demand better for a user-facing endpoint?"),
                [("search_guide", {}, hits)])
    assert [c.id for c in s.citations] == ["ga-34"]  # ft-40 does not exist in passages.csv
    quote = s.citations[0].quote
    assert quote.startswith("Interruptible instances are ideal") and len(quote.split()) >= 5


def test_a_statement_never_points_at_a_passage_that_does_not_exist():
    s = compose(q(model="llama-3.1-8b", gpus=["L4"]), [("vram_calculator", {}, vram())])
    s.explanation.append(Finding(code="why.smaller_batch", passage_id="ft-40"))
    from assistant.engine.compose import _citations

    cites = _citations(q(), [], s)
    assert "ft-40" not in {c.id for c in cites} and s.explanation[-1].passage_id is None
    assert "ft-40" not in known_ids() and "[ft-40]" not in render_text(s)


def test_model_comparison_columns_name_the_models():
    a, b = speed("L4", 25.1, 25.1), speed("L4", 30.2, 30.2)
    b["inputs"] = dict(b["inputs"], model="mistral-7b")
    s = compose(q(intents=["compare"], model="llama-3.1-8b", gpus=["L4"]),
                [("speed_estimator", {}, a), ("speed_estimator", {}, b)])
    assert s.tables[0].columns[1:] == ["Llama 3.1 8B", "Mistral 7B v0.1"]
    assert codes(s.headline) == ["speed.fastest"]
    assert s.headline[0].params["best"] == "Mistral 7B v0.1"  # 30.2 tok/s against 25.1


@pytest.mark.parametrize("request_, first, gb", [
    # 7.24B params x 1 byte (int8) + 16-bit embeddings/head + KV + CUDA reserve ~ 8.9 GB < 12 GiB = 12.88 GB
    pytest.param(dict(model="mistral-7b", gpu="RTX 3060", method="inference", weight_precision="bf16"),
                 "1. 8-bit weights (int8)", "8.93 GB of 12.9 GB", id="7b-bf16-on-12gb-card"),
    # LoRA of a 32B model with checkpointing off needs 111 GB; on, the activations shrink to one layer's input each
    pytest.param(dict(model="qwen2.5-32b", gpu="A100", method="lora", grad_checkpointing=False),
                 "1. Gradient checkpointing on", "75.3 GB of 85.9 GB", id="32b-lora-80gb-checkpointing"),
])
def test_way_forward_from_the_levers_tool(request_, first, gb):
    from assistant.service import api
    from assistant.service.registry import _clean

    wf = _clean(api.levers(**request_))
    s = compose(q(model=request_["model"], gpus=[request_["gpu"]]), [("way_forward", request_, wf)])
    text = render_text(s)
    assert s.verdict == "no" and first in text and f"Memory per GPU: {gb}" in text


def test_egress_question_without_a_cost_result_says_it_is_not_costed():
    s = compose(q(intents=["cost"], egress_gb=500, providers=["aws"]), [])
    assert codes(s.headline) == ["cost.egress_not_costed"] and "500 GB" in render_text(s)


def test_out_of_range_context_is_named_with_its_value():
    s = compose(q(model="qwen2.5-32b", context_tokens=2_000_000, out_of_range=["context_tokens"]), [])
    assert ("Out of range: a context of 2,000,000 tokens is longer than the context window of Qwen2.5 32B."
            in render_text(s))


def test_tool_errors_lose_their_command_line_flags():
    err = {"error": "the dataset size is missing: give its tokens (e.g. '100M tokens', --dataset-tokens N), or "
                    "examples and tokens per example (e.g. '50k examples of 512 tokens', --examples N)"}
    text = render_text(compose(q(intents=["cost"], model="llama-3.1-8b"), [("cost_estimator", {}, err)]))
    assert "(e.g. '100M tokens'), or examples" in text and "--" not in text


def test_gguf_formats_are_shown_as_llama_cpp_writes_them():
    s = compose(q(model="llama-3.1-8b", gpus=["L4"], precision="q4_k_m"),
                [("vram_calculator", {}, vram(precision="q4_k_m"))])
    assert "(inference, Q4_K_M)" in render_text(s) and "q4_k_m" not in render_text(s)


def test_a_result_of_unexpected_shape_does_not_sink_the_answer():
    s = compose(q(intents=["speed"], model="llama-3.1-8b", gpus=["L4"]),
                [("speed_estimator", {}, {"gpu": {"name": "L4"}}), ("vram_calculator", {}, vram())])
    assert "notice.part_failed" in codes(s.notices) and "fit.yes" in codes(s.headline)


def test_a_run_given_in_minutes_is_understood_in_minutes():
    s = compose(q(intents=["cost"], gpus=["H100"], duration_hours=0.2), [])
    assert "running 12 min" in render_text(s).split("\n")[0]


def test_one_reason_of_each_kind():
    a, b = speed("L4", 25.1, 25.1), speed("A100 80GB SXM", 98.4, 98.4)
    s = compose(q(intents=["fit"], model="llama-3.1-8b", gpus=["L4"]),
                [("vram_calculator", {}, vram()), ("speed_estimator", {}, a), ("speed_estimator", {}, b)])
    assert len(codes(s.explanation)) == len(set(codes(s.explanation)))


def test_providers_side_by_side_are_told_apart():
    a = job_cost()
    b = job_cost(on_demand_cost_usd=30.0, offer={"provider": "aws", "instance_type": "p5.4xlarge", "gpu": "H100 SXM",
                                                 "gpu_count": 1, "price_usd_per_hour": 3.0})
    s = compose(q(intents=["cost"], gpus=["H100"], providers=["hyperbolic", "aws"]),
                [("cost_estimator", {}, a), ("cost_estimator", {}, b)])
    assert s.tables[0].columns == ["col.metric", "H100 SXM (hyperbolic)", "H100 SXM (aws)"]
    assert render_text(s).split("\n")[2] == "Cheapest: H100 SXM (hyperbolic) at $12.9 on demand (H100 SXM (aws) $30.0)."


def test_no_spot_offer_is_said_but_is_not_a_no_when_on_demand_exists():
    od = {"as_of": "2026-05-20", "offers": [offer("hyperbolic", 1.29)]}
    s = compose(q(intents=["prices"], gpus=["H100"], both_pricing=True),
                [("price_query", {"gpu": "H100", "pricing": "on-demand"}, od),
                 ("price_query", {"gpu": "H100", "pricing": "spot"}, {"offers": []})])
    assert codes(s.headline) == ["prices.cheapest", "prices.none"] and s.verdict == "info"
    s = compose(q(intents=["prices"], gpus=["H100"]), [("price_query", {"gpu": "H100"}, {"offers": []})])
    assert s.verdict == "no"


# ---- the way forward when nothing single works, no offers, image precisions --------------------------
def _nothing(params):
    return {"problem": params.get("problem", "does_not_fit"), "tried": [], "defaults_applied": [], "levers": [],
            "baseline": {"code": "as_given", "memory_gb": 164.31, "gpu": "RTX 4090", "gpu_memory_gb": 25.77},
            "nothing_works": {"code": "nothing_works", "params": params}}


def test_nothing_in_the_catalog_fits_is_said_with_the_numbers():
    # tools/levers: Llama 3.1 70B at 2 x 32,768 tokens on 2 x RTX 4090 with FP8 KV, chunked prefill and int4
    # weights still needs 28.1 GB per GPU (25.77 GB each); the int4 weights are 19.2 GB of it.
    p = {"problem": "does_not_fit", "memory_gb": 28.108506, "gpu": "RTX 4090", "gpu_memory_gb": 25.769803776,
         "gpus": 2, "levers": ["kv_cache_fp8", "chunked_prefill", "weights_4bit"],
         "lever_params": {"kv_precision": "fp8", "prefill_chunk_tokens": 8192, "weight_precision": "int4"},
         "largest_component": "weights", "largest_gb": 19.215426}
    query = q(model="llama-3.1-70b", gpus=["RTX 4090"])
    s = compose(query, [("vram_calculator", {}, vram(total=164.31, fits=False, gpu="RTX 4090", mem=25.77)),
                        ("way_forward", {}, _nothing(p))])
    assert s.verdict == "no" and codes(s.headline) == ["fit.no", "forward.nothing_fits"] and not s.way_forward
    text = render_text(s)
    assert ("Nothing in the catalog holds it: even on 2 x RTX 4090 with FP8 KV cache + Chunked prefill (the prompt "
            "in pieces) + 4-bit weights (int4, AWQ/GPTQ) (25.8 GB each, the most memory of any GPU in the catalog) "
            "it needs 28.1 GB per GPU, of which Weights: 19.2 GB.") in text
    ur = render_text(compose(query.model_copy(update={"answer_lang": "ur"}),
                             [("way_forward", {}, _nothing(p))]))
    assert "28.1 GB" in ur and "19.2 GB" in ur and "catalog" not in ur


def test_no_configuration_fast_enough_names_the_fastest_tried():
    # the levers' best: 321.8 tokens/s per user on 8 x B200 with int4 weights, against 2,000,000 asked
    p = {"problem": "too_slow", "best": 321.8238, "gpu": "B200", "gpus": 8,
         "levers": ["kv_cache_fp8", "weights_4bit", "more_gpus_tensor_parallel", "bigger_gpu"],
         "lever_params": {"kv_precision": "fp8", "weight_precision": "int4", "gpus": 8, "gpu": "B200"}}
    s = compose(q(intents=["speed"], model="phi-3.5-mini", gpus=["T4"], min_tokens_per_s=2_000_000),
                [("way_forward", {"min_tokens_per_s_per_user": 2_000_000}, _nothing(p))])
    assert "forward.nothing_fast_enough" in codes(s.headline)
    assert ("No configuration in the catalog reaches 2,000,000 tokens/s per user: the fastest one tried gives "
            "322 tokens/s per user, on 8 x B200 with FP8 KV cache + 4-bit weights (int4, AWQ/GPTQ).") in render_text(s)


def test_a_stack_of_levers_reads_as_one_change_with_its_gpus():
    lv = {"code": "lora+chunked_loss+more_gpus_fsdp+bigger_gpu", "memory_gb": 286.1, "gpu": "B300",
          "gpu_memory_gb": 309.2, "fits": True, "headroom_gb": 23.1, "works": True,
          "params": {"method": "lora", "chunked_loss": True, "gpus": 6, "sharding": "fsdp", "gpu": "B300"}}
    r = {"problem": "does_not_fit", "tried": [], "defaults_applied": [], "levers": [lv],
         "baseline": {"code": "as_given", "memory_gb": 18164.0, "gpu": "RTX 3060", "gpu_memory_gb": 12.88}}
    s = compose(q(model="deepseek-v3", gpus=["RTX 3060"], method="full"), [("way_forward", {}, r)])
    assert ("1. LoRA instead of full fine-tuning + Chunked cross-entropy loss + 6 x B300 (FSDP/ZeRO-3 sharding)"
            in render_text(s))


def test_no_offer_names_the_filter_that_emptied_the_list_and_the_nearest_offers():
    asked = {"gpu": "H100", "provider": "runpod,vast", "pricing": "spot", "limit": 5}
    empty = {"as_of": "2026-05-20", "offers": []}
    # the planner's relaxations: without the providers (spot at verda $0.80/GPU-hour), without spot
    # (on-demand at vast $1.80), without both (hyperbolic $1.29)
    no_provider = {"offers": [offer("verda", 2.29, 0.80)]}
    no_spot = {"offers": [offer("vast", 1.80)]}
    neither = {"offers": [offer("hyperbolic", 1.29)]}
    s = compose(q(intents=["prices"], gpus=["H100"], providers=["runpod", "vast"], spot=True),
                [("price_query", asked, empty),
                 ("price_query", {"gpu": "H100", "pricing": "spot", "limit": 3}, no_provider),
                 ("price_query", {"gpu": "H100", "provider": "runpod,vast", "pricing": "on-demand", "limit": 3}, no_spot),
                 ("price_query", {"gpu": "H100", "pricing": "on-demand", "limit": 3}, neither)])
    assert s.verdict == "no" and codes(s.headline) == ["forward.no_offers"]
    text = render_text(s)
    assert "No spot offer for H100 in the catalog with the provider filter (runpod, vast)." in text
    assert [o.numbers[0].value for o in s.way_forward] == [0.80, 1.80, 1.29]
    assert "1. Without the provider filter (runpod, vast)" in text and "2. Without spot pricing" in text
    assert "Cheapest offer: verda verda-1, r1, $0.80/h" in text  # the spot price, not the on-demand one
    (t,) = s.tables
    assert [row[5] for row in t.rows] == [0.80, 1.29, 1.80]  # cheapest first over all relaxations


def _image_vram(precision, placements, total):
    return {"total_gb": total, "components_gb": {"transformer": 11.9}, "placement": "all-on-gpu",
            "model": {"id": "flux.1-dev", "name": "FLUX.1 [dev]"}, "inputs": {"weight_precision": precision},
            "fit": {"gpu": "RTX 4070", "gpu_memory_gb": 12.88, "fits": total <= 12.88, "headroom_gb": 12.88 - total},
            "placements": [{"placement": p, "peak_gb": gb, "copy_s_per_call": c} for p, gb, c in placements],
            "assumptions": []}


def test_image_pipeline_way_forward_has_precisions_next_to_placements():
    # FLUX.1 dev on a 12 GB card (12.88 GB), from tools/diffusion: bf16 peaks at 35.9 GB all on the GPU and
    # fits only with sequential offload (2.41 GB, 169 s of copies per image); fp8 fits with no placement
    # (19.1 -> 13.1 GB at best); Q4_K_M fits all on the GPU (12.4 GB) and NF4 too (11.7 GB).
    bf16 = _image_vram(None, [("all-on-gpu", 35.85, 0), ("text-encoders-dropped", 26.08, 0),
                              ("model-offload", 24.98, 16.87), ("sequential-offload", 2.41, 169.1)], 35.85)
    fp8 = _image_vram("fp8", [("all-on-gpu", 19.07, 0), ("model-offload", 13.08, 8.48),
                              ("sequential-offload", 2.41, 84.6)], 19.07)
    q4 = _image_vram("q4_k_m", [("all-on-gpu", 12.43, 0), ("sequential-offload", 2.41, 51.2)], 12.43)
    nf4 = _image_vram("nf4", [("all-on-gpu", 11.72, 0), ("sequential-offload", 2.41, 47.6)], 11.72)
    a = {"model": "flux.1-dev", "gpu": "RTX 4070"}
    s = compose(q(model="flux.1-dev", gpus=["RTX 4070"]),
                [("vram_calculator", a, bf16), ("vram_calculator", a | {"weight_precision": "fp8"}, fp8),
                 ("vram_calculator", a | {"weight_precision": "q4_k_m"}, q4),
                 ("vram_calculator", a | {"weight_precision": "nf4"}, nf4)])
    assert codes(s.headline) == ["fit.no"] and s.verdict == "no"  # the answer's verdict is the asked precision's
    text = render_text(s)
    # 4-bit weights (a quality trade-off, no copies) before 169 s of copies per image; fp8 plus sequential
    # offload is not listed, as fp8 alone does not fit and its best placement copies every step
    assert "1. Q4_K_M weights for the transformer and text encoders" in text and "12.4 GB of 12.9 GB" in text
    assert "2. nf4 weights for the transformer and text encoders" in text and "11.7 GB of 12.9 GB" in text
    assert "3. Run it with layers offloaded to the CPU one at a time" in text and "Copying per image: 169 s" in text


def test_cheapest_gpu_with_no_run_to_cost_is_the_cheapest_hour_that_holds_it():
    v = vram(total=64.4, fits=None, method="qlora")
    v.pop("fit")
    offers = {"as_of": "2026-05-20", "offers": [offer("vast", 0.93, gpu="A100 80GB SXM")]}
    s = compose(q(model="gemma-2-9b", method="qlora", solve_for="cheapest_gpu", intents=["recommend", "fit"]),
                [("vram_calculator", {}, v), ("price_query", {"min_vram_gb": 64.4, "gpus": 1}, offers)])
    assert "solve.cheapest_holding" in codes(s.headline)
    text = render_text(s)
    assert "The cheapest GPU with the 64.4 GB it needs: A100 80GB SXM at vast (vast-1), $0.93/GPU-hour." in text
    assert "assume.cheapest_by_hour" in codes(s.assumptions)


def test_instance_ids_are_shown_readably():
    od = {"as_of": "2026-05-20", "offers": [offer("lambda", 2.49) | {"instance_type": "gpu_1x_h100_pcie"}]}
    s = compose(q(intents=["prices"], gpus=["H100"]), [("price_query", {"gpu": "H100", "pricing": "on-demand"}, od)])
    text = render_text(s)
    assert "gpu_1x_h100_pcie" not in text and "at lambda (1x H100 PCIe)" in text


def test_a_training_time_with_no_dataset_asks_for_its_size_in_the_users_language():
    err = {"error": "the dataset size is missing", "error_info": {"type": "InvalidCombination",
                                                                  "message": "the dataset size is missing",
                                                                  "missing": "dataset"}}
    for lang, words in (("en", "How large is the dataset?"), ("ur", "ڈیٹاسیٹ کتنا بڑا ہے؟")):
        s = compose(q(intents=["train_time"], model="gemma-2-9b", method="qlora", gpus=["T4"], answer_lang=lang),
                    [("training_time", {}, err)])
        assert "ask.dataset" in codes(s.notices) and words in render_text(s)


def test_a_rejected_number_is_shown_as_written():
    err = {"error": "Invalid epochs", "error_info": {"type": "InvalidInput", "field": "epochs", "value": 2000000.0,
                                                     "accepted": "a number of epochs above 0, at most 1000"}}
    s = compose(q(intents=["train_time"], model="gemma-2-9b", epochs=2e6), [("training_time", {}, err)])
    assert "2,000,000" in render_text(s) and "2000000.0" not in render_text(s)


def test_a_daily_volume_is_answered_with_busy_hours_and_both_monthly_costs():
    sv = {"usd_per_million_tokens": 0.15, "usd_per_million_tokens_batch_1": 7.49, "monthly_usd": 941.7, "batch": 153,
          "basis": "throughput_optimal", "aggregate_tokens_per_s": 2393.0,
          "volume": {"tokens_per_day": 2e6, "busy_hours_per_day": 0.232, "copies_needed": 1, "days_per_month": 30.42,
                     "tokens_per_month": 60.8e6, "usd_per_month_busy_hours": 9.11, "usd_per_month_always_on": 941.7,
                     "usd_per_million_own_tokens_always_on": 15.48}}
    r = {"serving": sv, "offer": {"provider": "hyperbolic", "instance_type": "1x-H100", "price_usd_per_hour": 1.29},
         "gpu": "H100 SXM", "model": {"name": "Llama 3.1 70B"}, "findings": []}
    s = compose(q(intents=["cost"], model="llama-3.1-70b", gpus=["H100"], tokens_per_day=2e6),
                [("cost_estimator", {"gpu": "H100", "serve": True}, r)])
    text = render_text(s)
    assert "2,000,000 tokens a day keep one copy busy about 0.23 h a day at batch 153" in text
    assert "$9.11 a month" in text and "$942 a month" in text and "$15.5 per million tokens" in text


def test_an_option_whose_prices_are_not_in_the_data_is_said_so_not_priced():
    for alt, words in (("hosted_api", "Hosted-API prices are not in my data"), ("own_hardware", "Prices of GPUs to buy")):
        s = compose(q(intents=["cost", "compare"], model="llama-3.1-8b", unpriced_alternative=alt), [])
        assert words in render_text(s)


def test_one_key_number_per_label_when_two_tools_give_it_at_different_settings():
    from assistant.engine.compose import _first_of_each
    from assistant.engine.compose.common import kn
    nums = [kn("num.total_throughput", 2402, "tok_s"), kn("num.max_batch", 153, "int"),
            kn("num.total_throughput", 48.4, "tok_s"), kn("num.max_batch", 172, "int"),
            kn("num.total_at_max_batch", 2426, "tok_s")]
    kept = _first_of_each(nums)
    assert [(k.label, k.value) for k in kept] == [(nums[0].label, nums[0].value), (nums[1].label, nums[1].value)]


def test_a_speed_comparison_names_the_faster_side():
    s = compose(q(intents=["compare"], model="llama-3.1-8b", gpus=["L4", "A100"]),
                [("speed_estimator", {}, speed("L4", 25.1, 25.1)),
                 ("speed_estimator", {}, speed("A100 80GB SXM", 98.4, 98.4))])
    text = render_text(s)
    assert "Faster for one user: A100 80GB SXM, at 98.4 tokens/s against 25.1 tokens/s for L4" in text
