"""The planner on hand-built Queries: which tools run, with which arguments, in which round."""

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
