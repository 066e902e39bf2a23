"""A fixed amount of generation ("summarise 5M documents", "2M queries in 24 h", "generate 1M tokens") is a job:
its prompts and lengths are read as such, and the answer gives its hours, the copies a deadline needs and the cost."""

import math

import pytest

from assistant.engine.understand import understand


@pytest.mark.parametrize("text, rows, prompt, output", [
    pytest.param("I need to summarise 5 million documents with Llama 3.1 8B on an A100. Each document is about 1500 "
                 "tokens and each summary 150 tokens. What will it cost?", 5_000_000, 1500, 150, id="en-summarise"),
    pytest.param("مجھے 50 لاکھ دستاویزات کا خلاصہ بنانا ہے، ہر دستاویز تقریباً 1500 ٹوکن کی ہے اور خلاصہ 150 ٹوکن کا۔ "
                 "Llama 3.1 8B کے ساتھ A100 پر کل کتنا خرچ آئے گا؟", 5_000_000, 1500, 150, id="ur-summarise"),
    pytest.param("مجھے 20 لاکھ سوالات پر Qwen2.5-32B چلانا ہے، ہر ایک میں تقریباً 500 ان پٹ اور 300 آؤٹ پٹ ٹوکن ہیں۔",
                 2_000_000, 500, 300, id="ur-input-output"),
])
def test_a_jobs_rows_are_prompts_with_their_lengths(text, rows, prompt, output):
    q = understand(text)
    assert (q.method, q.examples, q.prompt_tokens, q.output_tokens, q.tokens_per_example) == \
        ("inference", rows, prompt, output, None)


def test_a_total_to_generate_is_not_one_answers_length():
    q = understand("how long would it take to generate 1 million output tokens with qwen2.5 7b on an L4?")
    assert q.generated_tokens == 1_000_000 and q.output_tokens is None and q.context_tokens is None


def test_the_summarisation_job_is_costed_as_generation_not_training(adv):
    a = adv.ask("I need to summarise 5 million documents with Llama 3.1 8B on an A100. Each document is about 1500 "
                "tokens and each summary 150 tokens. What will it cost in total?")
    (c,) = [c for c in a.tool_calls if c.name == "cost_estimator"]
    assert (c.args["requests"], c.args["prompt_tokens"], c.args["output_tokens"]) == (5_000_000, 1500, 150)
    gen = c.result["generation_job"]
    assert c.result["runtime_hours"] == pytest.approx(gen["hours_one_copy"])
    # the cost is the hours at the offer's price, billed as the provider bills (per second at most one hour more)
    price = c.result["price_usd_per_hour"]
    assert gen["hours_one_copy"] * price <= c.result["on_demand_cost_usd"] <= (gen["hours_one_copy"] + 1) * price
    assert "training" not in c.result and "epoch" not in a.answer.lower() and "training" not in a.answer.lower()
    assert "generation-job estimate" in a.answer.split("\n\n")[1]
    assert "prefill" in a.answer


def test_a_deadline_gives_the_copies_first(adv):
    a = adv.ask("I need to run Qwen2.5-32B over 2 million queries, each about 500 input and 300 output tokens. "
                "It must finish in 24 hours. How many H100s?")
    (c,) = [c for c in a.tool_calls if c.name == "cost_estimator"]
    gen = c.result["generation_job"]
    copies = math.ceil(gen["hours_one_copy"] / 24)
    assert gen["copies_for_deadline"] == copies
    head = a.answer.split("\n\n")[1]
    assert head.startswith(f"**To finish within 24 h: {copies} copies ({copies * gen['gpus_per_copy']} x H100")
    assert not [c for c in a.tool_calls if c.name == "speed_estimator"]  # no batch-1 speed beside the job


def test_the_requests_a_day_one_gpu_handles(adv):
    a = adv.ask("Roughly how many requests per day can one L40S handle for a Mistral 7B classification endpoint, if "
                "each request is ~600 prompt tokens and ~10 output tokens?")
    assert a.query["solve_for"] == "max_requests"
    (c,) = [c for c in a.tool_calls if c.name == "cost_estimator"]
    g = c.result["generation_job"]
    assert g["requests_per_day_per_copy"] == pytest.approx(g["requests_per_hour_per_copy"] * 24)
    # prefill-bound: 600 tokens x 7.2e9 params x 2 FLOPs each on 362 TFLOPS is at most ~42 requests/s (3.6M a day)
    assert 200_000 < g["requests_per_day_per_copy"] < 3_600_000
    head = a.sections["headline"][0]
    assert head["code"] == "solve.max_requests" and "Prompts to run" not in a.answer
