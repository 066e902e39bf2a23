"""The planner on hand-built Queries: which tools run, with which arguments, in which round."""

import pytest

from assistant.engine.plan import DEFAULTS, plan
from assistant.engine.query import Query


def _names(calls):
    return [c["name"] for c in calls]


def test_fit_runs_the_memory_calculator_with_the_users_facts_and_a_guide_search():
    q = Query(intents=["fit"], model="llama-3-8b", precision="fp16", gpu_memory_gb=24, context_tokens=8192,
              method="inference", text="Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?")
    calls = plan(q)
    assert _names(calls) == ["vram_calculator", "search_guide"]
    a = calls[0]["args"]
    assert a == {"model": "llama-3-8b", "method": "inference", "seq_len": 8192, "weight_precision": "fp16",
                 "gpu_memory_gb": 24}


def test_fine_tuning_defaults_to_lora_with_checkpointing_as_practitioners_run_it():
    q = Query(intents=["fit"], model="mistral-7b", method="finetune", gpus=["A100"], text="fine-tune mistral on an A100")
    a = plan(q)[0]["args"]
    assert a["method"] == DEFAULTS["finetune_method"] == "lora" and a["grad_checkpointing"] is True


def test_a_comparison_runs_the_same_tool_for_each_side():
    q = Query(intents=["compare", "speed", "fit", "prices"], model="llama-3.1-8b", gpus=["L4", "A100"],
              concurrent_users=8, text="llama 3.1 8b on L4 vs A100")
    calls = plan(q)
    speeds = [c["args"] for c in calls if c["name"] == "speed_estimator"]
    assert [(s["gpu"], s["batch"]) for s in speeds] == [("L4", 1), ("L4", 8), ("A100", 1), ("A100", 8)]
    assert [c["args"]["gpu"] for c in calls if c["name"] == "vram_calculator"] == ["L4", "A100"]


def test_solving_for_the_gpu_count_calls_the_solver_not_a_fixed_fit():
    q = Query(intents=["fit"], solve_for="min_gpu_count", model="llama-3.1-405b", precision="fp8", gpus=["H100"],
              method="inference", text="how many H100s for 405B fp8")
    calls = plan(q)
    assert _names(calls) == ["solve_for", "search_guide"]
    assert calls[0]["args"]["unknown"] == "min_gpu_count" and "gpus" not in calls[0]["args"]


def test_a_negative_verdict_brings_the_way_forward_in_a_second_round():
    q = Query(intents=["fit"], model="mistral-7b", precision="bf16", gpu_memory_gb=12, method="inference",
              text="mistral 7b bf16 on a 12 GB card")
    first = plan(q)
    done = [(first[0]["name"], first[0]["args"], {"total_gb": 16.8, "fit": {"fits": False}}),
            ("search_guide", {}, {"passages": []})]
    second = plan(q, done)
    assert _names(second) == ["way_forward"] and second[0]["args"]["gpu_memory_gb"] == 12
    assert plan(q, done + [("way_forward", second[0]["args"], {"levers": []})]) == []


def test_the_smallest_gpu_is_the_memory_need_then_the_offers_with_that_much():
    q = Query(intents=["fit", "recommend"], solve_for="min_gpu_memory", params_b=13, method="qlora",
              context_tokens=2048, batch=4, text="smallest GPU for QLoRA on 13B")
    first = plan(q)
    assert _names(first)[0] == "vram_calculator"
    done = [("vram_calculator", first[0]["args"], {"total_gb": 11.9})]
    (offers,) = plan(q, done)
    assert offers["name"] == "price_query" and offers["args"]["min_vram_gb"] == 11.9


def test_an_unknown_gpu_is_looked_up_not_guessed():
    q = Query(intents=["prices"], gpu_unknown=["H400"], text="price of an H400")
    assert plan(q) == [{"name": "price_query", "args": {"gpu": "H400"}}]


def test_help_and_off_topic_call_nothing():
    assert plan(Query(intents=["help"], text="hi")) == []
    assert plan(Query(intents=["out_of_scope"], text="a recipe for karahi")) == []


# ---- the way forward beyond "does not fit" ---------------------------------------------------------------
def test_a_count_that_no_search_finds_brings_the_way_forward():
    q = Query(intents=["fit"], solve_for="min_gpu_count", model="llama-3.1-405b", method="full", gpus=["H100"],
              text="how many H100s to fully fine-tune 405B")
    (solve, _guide) = plan(q)
    # a fine-tune shards over nodes (FSDP): the fewest GPUs is searched far beyond one node
    assert solve["args"]["max_gpus"] == DEFAULTS["max_training_gpus"] == 1024
    done = [("solve_for", solve["args"], {"unknown": "min_gpu_count", "solved": False, "value": None})]
    (wf,) = plan(q, done)
    assert wf["name"] == "way_forward" and wf["args"]["gpu"] == "H100"
    assert "unknown" not in wf["args"] and "max_gpus" not in wf["args"]


def test_a_recommendation_that_finds_nothing_asks_the_levers_without_a_gpu():
    q = Query(intents=["recommend", "cost"], model="llama-3.1-405b", method="full", dataset_tokens=5e9,
              budget_usd_total=70_000, text="is $70k enough to fully fine-tune 405B on 5B tokens")
    done = [("recommend_gpus", {}, {"status": "nothing_fits", "options": [], "ruled_out": []})]
    (wf,) = plan(q, done)
    assert wf["name"] == "way_forward" and "gpu" not in wf["args"]  # the service starts from the biggest GPU
    assert wf["args"]["budget_usd"] == 70_000 and wf["args"]["dataset_tokens"] == 5e9
    needs = [("recommend_gpus", {}, {"status": "needs_input", "options": [], "missing": ["dataset"]})]
    assert _names(plan(q, needs)) != ["way_forward"]  # a question back is not a "no"


def test_a_speed_that_does_not_fit_or_misses_the_target_brings_the_levers_at_its_batch():
    q = Query(intents=["speed"], model="llama-3.1-8b", gpus=["L4"], concurrent_users=10_000_000,
              min_tokens_per_s=100, text="10M users at 100 tok/s on one L4")
    done = [("speed_estimator", {"model": "llama-3.1-8b", "gpu": "L4", "batch": 1}, {"decode_tokens_per_s": 15.2}),
            ("speed_estimator", {"model": "llama-3.1-8b", "gpu": "L4", "batch": 10_000_000}, {"error": "Invalid batch"})]
    (wf,) = plan(q, done)
    # the load the tools refused is not carried into the levers: they start from the batch that ran
    assert wf["args"]["batch"] == 1 and wf["args"]["min_tokens_per_s_per_user"] == 100
    q = Query(intents=["speed"], model="llama-3.1-8b", gpus=["T4"], text="llama 8b speed on a T4")
    done = [("speed_estimator", {"model": "llama-3.1-8b", "gpu": "T4", "batch": 1},
             {"decode_tokens_per_s": 16.2, "memory": {"fits": False}})]
    (wf,) = plan(q, done)
    assert wf["name"] == "way_forward" and wf["args"]["gpu"] == "T4" and "min_tokens_per_s_per_user" not in wf["args"]


def test_an_image_pipeline_that_does_not_fit_is_tried_at_lower_precisions():
    q = Query(intents=["fit"], model="flux.1-dev", gpus=["RTX 4070"], text="flux dev on a 4070")
    first = [c for c in plan(q) if c["name"] == "vram_calculator"]
    done = [("vram_calculator", first[0]["args"], {"total_gb": 35.9, "fit": {"fits": False}, "placements": []})]
    second = plan(q, done)
    assert [c["args"].get("weight_precision") for c in second] == ["fp8", "q4_k_m", "nf4"]
    done += [(c["name"], c["args"], {"total_gb": 12.0, "fit": {"fits": True}}) for c in second]
    assert plan(q, done) == []  # tried once
    q8 = q.model_copy(update={"precision": "fp8"})
    done = [("vram_calculator", {"model": "flux.1-dev", "weight_precision": "fp8"}, {"fit": {"fits": False}})]
    assert [c["args"]["weight_precision"] for c in plan(q8, done)] == ["q4_k_m", "nf4"]  # only lower precisions


def test_no_offer_relaxes_each_filter_then_all_of_them():
    from assistant.engine.plan import relaxations

    asked = {"gpu": "H100", "provider": "runpod,vast", "pricing": "spot", "limit": 5}
    assert relaxations(asked) == [{"gpu": "H100", "pricing": "spot", "limit": 3},
                                  {"gpu": "H100", "provider": "runpod,vast", "pricing": "on-demand", "limit": 3},
                                  {"gpu": "H100", "pricing": "on-demand", "limit": 3}]
    q = Query(intents=["prices"], gpus=["H100"], providers=["runpod"], text="h100 on runpod")
    od, sp = plan(q)[:2]
    done = [("price_query", od["args"], {"offers": []}), ("price_query", sp["args"], {"offers": []})]
    (relaxed,) = plan(q, done)  # from the on-demand query: without the provider
    assert relaxed["args"] == {"gpu": "H100", "pricing": "on-demand", "limit": 3}
    assert plan(q, [("price_query", od["args"], {"offers": [{"provider": "x"}]})]) == []


def test_cheapest_gpu_with_no_run_to_cost_is_memory_then_offers():
    q = Query(intents=["recommend", "fit", "prices"], solve_for="cheapest_gpu", model="gemma-2-9b", method="qlora",
              providers=["vast"], text="cheapest gpu on vast for qlora on gemma 2 9b")
    assert _names(plan(q)) == ["vram_calculator", "search_guide"]  # no recommender: there is no run to cost
    (prices,) = plan(q, [("vram_calculator", {}, {"total_gb": 64.4})])
    assert prices["args"] == {"min_vram_gb": 64.4, "gpus": 1, "pricing": "on-demand", "limit": 3, "provider": "vast"}
    sized = q.model_copy(update={"dataset_tokens": 1e8})
    assert "recommend_gpus" in _names(plan(sized))  # with a data size the whole run is costed
    fastest = Query(intents=["recommend"], solve_for="fastest_gpu", model="flux.1-dev", text="fastest gpu for flux")
    rec = next(c for c in plan(fastest) if c["name"] == "recommend_gpus")
    assert rec["args"]["objective"] == "fastest" and rec["args"]["images"] == DEFAULTS["ranking_images"]


def test_a_generation_job_by_a_deadline_asks_for_the_replicas():
    from assistant.engine.plan_jobs import job_replicas_calls
    from assistant.engine.understand import understand

    q = understand("I need 1 billion tokens generated w/ llama 3.1 8b, ~300 output tokens per request, within 6 hours. "
                   "How many H100s?")
    assert q.examples * q.output_tokens == pytest.approx(1e9, rel=1e-6) and q.deadline_hours == 6
    done = [("speed_estimator", {}, {"memory": {"aggregate_tokens_per_s_at_max_batch": 15962.0}}),
            ("solve_for", {}, {"unknown": "min_gpu_count", "solved": True, "value": 1})]
    calls = job_replicas_calls(q, done)
    assert calls and calls[0]["name"] == "job_replicas" and calls[0]["args"]["tokens_per_s_per_replica"] == 15962.0
    assert job_replicas_calls(q, done + [("job_replicas", {}, {})]) == []


def test_two_models_compared_each_get_the_memory_and_speed_calls():
    q = Query(intents=["speed", "compare", "fit"], model="llama-3.1-8b", other_models=["mistral-7b-v0.1"], gpus=["L4"])
    calls = plan(q)
    for tool in ("vram_calculator", "speed_estimator"):
        assert sorted(c["args"]["model"] for c in calls if c["name"] == tool) == ["llama-3.1-8b", "mistral-7b-v0.1"]
    assert "recommend_gpus" not in _names(calls)  # the models are weighed on the named card, not a GPU search
    alone = plan(Query(intents=["speed"], model="llama-3.1-8b", other_models=["mistral-7b-v0.1"], gpus=["L4"]))
    assert [c["args"]["model"] for c in alone if c["name"] == "speed_estimator"] == ["llama-3.1-8b"]


def test_each_card_keeps_its_own_count_and_named_cards_are_weighed_not_searched():
    q = Query(intents=["recommend", "compare", "fit", "speed", "prices"], model="llama-3.1-70b", precision="int4",
              gpus=["H100", "L40S"], gpu_count=1, gpu_counts={"H100": 1, "L40S": 2}, concurrent_users=20)
    calls = plan(q)
    assert "recommend_gpus" not in _names(calls)  # "choosing between 1x H100 and 2x L40S": those two are compared
    counts = {(c["name"], c["args"]["gpu"]): c["args"].get("gpus") for c in calls if "gpu" in c["args"]}
    assert counts[("vram_calculator", "L40S")] == 2 and counts[("vram_calculator", "H100")] == 1
    assert counts[("speed_estimator", "L40S")] == 2 and counts[("price_query", "L40S")] == 2


def test_a_second_value_of_a_setting_gets_its_own_memory_call():
    q = Query(intents=["fit", "compare"], model="llama-3.1-8b", gpus=["L4"], context_tokens=4096,
              alternatives={"context_tokens": 32768})
    seqs = [c["args"]["seq_len"] for c in plan(q) if c["name"] == "vram_calculator"]
    assert seqs == [4096, 32768]


def test_a_volume_with_no_card_is_costed_on_the_recommenders_pick():
    from assistant.engine.plan_forward import second_round
    q = Query(intents=["cost", "recommend"], model="qwen2.5-72b", method="inference", tokens_per_day=1e6)
    pick = {"gpu_id": "rtx-3090", "gpu_count": 8, "precision": "bf16", "offer": {"provider": "lium"}}
    (call,) = second_round(q, [("recommend_gpus", {}, {"options": [pick]})])
    assert call["name"] == "cost_estimator" and call["args"]["tokens_per_day"] == 1e6
    assert call["args"]["gpu"] == "rtx-3090" and call["args"]["gpus"] == 8 and call["args"]["serve"] is True


def test_the_memory_need_with_no_gpu_is_the_same_plan_as_the_smallest_gpu_memory():
    # the evaluation counts the two readings of "how much VRAM does X need?" as one: this is why
    vram = {"total_gb": 60.44}
    asked = [Query(intents=["fit"], model="gemma-2-27b", precision="bf16"),
             Query(intents=["fit", "recommend", "prices"], solve_for="min_gpu_memory", model="gemma-2-27b", precision="bf16")]
    first = [plan(q) for q in asked]
    assert [[c for c in p if c["name"] != "search_guide"] for p in first][0] == \
        [[c for c in p if c["name"] != "search_guide"] for p in first][1]
    done = [("vram_calculator", first[0][0]["args"], vram)]
    assert plan(asked[0], done) == plan(asked[1], done) and plan(asked[0], done)[0]["args"]["min_vram_gb"] == 60.44
