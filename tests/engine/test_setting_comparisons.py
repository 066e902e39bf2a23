"""Two precisions or two engines weighed for one model on one card ("fp16 vs fp8", "vLLM or
TensorRT-LLM, which is faster?"): both sides reach the tools and the answer puts them side by side.

Before, the second value was dropped: the answer gave one side's speed and a recommendation of some
other GPU, though the user had named theirs.
"""

import pytest

from assistant.service import api
from assistant.engine.plan import plan
from assistant.engine.query import Query
from assistant.engine.understand import understand


@pytest.mark.parametrize("text, field, first, second", [
    ("Llama 3.1 8B on H100: fp16 vs fp8, which is faster?", "precision", "fp16", "fp8"),
    ("Llama 3.1 8B on an H100, vLLM or TensorRT-LLM, which is faster?", "engine", "vllm", "tensorrt-llm"),
    ("Llama 3.1 8B ko H100 pe vLLM se chalaun ya SGLang se, kaunsa tez hai?", "engine", "vllm", "sglang"),
    ("Mistral 7B ke liye H100 pe fp8 behtar hai ya int4?", "precision", "fp8", "int4"),
])
def test_both_values_are_understood_and_no_other_gpu_is_recommended(text, field, first, second):
    q = understand(text)
    assert getattr(q, field) == first and q.setting_alternatives == {field: second}
    assert "compare" in q.intents and "recommend" not in q.intents


def test_one_value_is_no_comparison_and_two_cards_still_get_a_pick():
    q = understand("Llama 3.1 8B on H100 in fp8 with vLLM: tokens/s?")
    assert q.setting_alternatives == {} and "compare" not in q.intents
    q = understand("Llama 3.1 8B: H100 or A100, which is faster?")
    assert "recommend" in q.intents  # which card to take: the choice is the GPU


def test_the_plan_runs_each_speed_and_memory_call_again_with_the_other_value():
    q = Query(intents=["speed", "compare", "fit"], model="llama-3.1-8b", gpus=["H100"], precision="fp8",
              method="inference", setting_alternatives={"precision": "fp16"}, text="fp16 vs fp8 on H100")
    calls = plan(q)
    assert [c["args"].get("precision") for c in calls if c["name"] == "speed_estimator"] == ["fp8", "fp16"]
    assert [c["args"].get("weight_precision") for c in calls if c["name"] == "vram_calculator"] == ["fp8", "fp16"]
    # not compared (no 'compare' intent): one side only
    assert len([c for c in plan(q.model_copy(update={"intents": ["speed"]})) if c["name"] == "speed_estimator"]) == 1


def test_the_answer_names_the_faster_engine_with_both_tool_figures(adv):
    a = adv.ask("Llama 3.1 8B on an H100, vLLM or TensorRT-LLM, which is faster?")
    kw = dict(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", batch=1, prompt_tokens=512, output_tokens=256)
    vllm, trt = (round(api.speed(engine=e, **kw).decode_tokens_per_s) for e in ("vllm", "tensorrt-llm"))
    assert vllm != trt
    fast, slow = ("vLLM", "TensorRT-LLM") if vllm > trt else ("TensorRT-LLM", "vLLM")
    assert f"Faster for one user: {fast}, at {max(vllm, trt)} tokens/s against {min(vllm, trt)} tokens/s for {slow}" \
        in a.answer
    assert "| vLLM | TensorRT-LLM |" in a.answer
    assert "Best choice" not in a.answer and not any(c.name == "recommend_gpus" for c in a.tool_calls)


# ---- the quantisation format as named picks the speed tool's kernel ---------------------------------

@pytest.mark.parametrize("text, precision, fmt", [
    ("Qwen2.5 7B AWQ with transformers on an L4, tokens/s?", "int4", "awq"),
    ("llama 3 8b gptq marlin vllm h100 speed", "int4", "gptq-marlin"),
    ("Mistral 7B GPTQ with exllamav2 on a 3090 tokens per second", "int4", "gptq"),
    ("Llama 3 8B with bitsandbytes 4-bit on a T4, how fast?", "nf4", "bnb-nf4"),
    ("Llama 3 8B load_in_8bit transformers on an A10G speed?", "int8", "bnb-int8"),
])
def test_a_named_format_keeps_its_bytes_and_reaches_the_speed_tool(text, precision, fmt):
    q = understand(text)
    assert q.precision == precision and q.quant_format == fmt and not q.setting_alternatives
    speeds = [c["args"] for c in plan(q) if c["name"] == "speed_estimator"]
    assert speeds and all(a["precision"] == fmt for a in speeds)
    assert all(c["args"].get("weight_precision") == precision for c in plan(q) if c["name"] == "vram_calculator")


def test_a_format_left_from_an_earlier_turn_does_not_override_a_new_precision():
    from assistant.engine.plan_args import named_format
    assert named_format(Query(precision="int4", quant_format="awq")) == "awq"
    assert named_format(Query(precision="fp8", quant_format="awq")) == "fp8"  # 'now in fp8' after 'AWQ'


def test_awq_on_transformers_is_priced_on_the_awq_kernel_and_says_so(adv):
    a = adv.ask("Qwen2.5 7B AWQ with transformers on an L4, tokens/s?")
    want = api.speed(model="qwen2.5-7b", gpu="l4", engine="pytorch-eager", precision="awq", batch=1,
                     prompt_tokens=512, output_tokens=256)
    assert want.kernel == "awq-gemm"
    assert f"about {want.decode_tokens_per_s:.1f} tokens/s per user" in a.answer
    assert "[awq-gemm]" in a.answer  # the kernel assumed is named (it was cut as a code-like note before)


def test_two_formats_on_the_same_kernel_are_said_to_tie(adv):
    # vLLM runs both AWQ and GPTQ 4-bit on Marlin: one speed, said as such, not "awq is faster than awq"
    a = adv.ask("llama 3 8b awq vs gptq on vllm on an A100, which is faster?")
    assert "About the same for one user: awq and gptq both run at" in a.answer


@pytest.mark.parametrize("turns, field, now, before", [
    (["what tok/s does Gemma 2 27B get on an A100 80GB with TensorRT-LLM in fp16?",
      "ok how about int8 weight-only on the same card, is that a lot quicker?"], "precision", "int8", "fp16"),
    (["Mistral 7B کو llama.cpp میں 4-bit پر RTX 3090 پر چلاؤں تو کتنی سپیڈ ملے گی؟",
      "اور اگر ExLlamaV2 پر چلاؤں تو کیا وہ llama.cpp سے تیز ہوگا؟"], "engine", "exllamav2", "llama.cpp"),
    # the first turn named no engine: it ran the speed tool's default (vLLM), which the switch is weighed against
    (["Llama 3.1 8B on an H100 tokens/s?", "and with SGLang, is it faster?"], "engine", "sglang", "vllm"),
])
def test_a_follow_up_that_switches_a_setting_and_asks_faster_weighs_both(turns, field, now, before):
    from assistant.engine.understand import understand_dialogue
    q = understand_dialogue(turns)
    assert getattr(q, field) == now and q.setting_alternatives == {field: before} and "compare" in q.intents
    speeds = [c["args"] for c in plan(q) if c["name"] == "speed_estimator"]
    assert [a.get(field) for a in speeds] == [now, before]


def test_a_follow_up_that_only_switches_is_not_a_comparison():
    from assistant.engine.understand import understand_dialogue
    q = understand_dialogue(["Llama 3.1 8B on an H100 with vLLM, tokens/s?", "and with SGLang?"])
    assert q.engine == "sglang" and not q.setting_alternatives and "compare" not in q.intents


def test_the_speed_table_of_two_engines_is_not_pushed_down_by_a_memory_breakdown(adv):
    a = adv.ask("Mistral 7B on an L40S: SGLang or vLLM, which is faster?")
    assert "| SGLang | vLLM |" in a.answer and "Key numbers" not in a.answer
    assert "it fits" in a.answer  # the memory verdict stays, in one line
    one = adv.ask("Mistral 7B on an L40S with vLLM for 8 users, tokens/s?")  # batch 1 and 8: breakdown kept
    assert "Key numbers" in one.answer


def test_two_engines_on_a_card_with_no_model_show_the_example_and_ask_which_model():
    from assistant.engine.plan import asks_model_for_speed
    q = understand("vLLM اور llama.cpp میں سے کون سا زیادہ تیز ہے؟ میرے پاس RTX 4090 ہے")
    assert q.setting_alternatives == {"engine": "llama.cpp"} and not q.has_model
    assert asks_model_for_speed(q)
    assert not asks_model_for_speed(understand("4090 vs 3090 for inference, tokens/s?"))  # cards compared: unchanged


def test_an_engine_name_with_a_dot_is_a_column_header_not_a_message_code(adv):
    from assistant.engine.render.catalog import label
    assert label("en", "llama.cpp") == "llama.cpp" and label("en", "Qwen2.5-7B") == "Qwen2.5-7B"
    assert label("en", "num.per_user") == "Speed per user"  # a real code still reads as its message
    a = adv.ask("Llama 3.1 8B on an RTX 4090: vLLM or llama.cpp, which is faster?")
    assert "| vLLM | llama.cpp |" in a.answer  # was '| vLLM | cpp |'
