"""What a user sees is weighed against the estimate of the same thing (a time to first token, a training
run's tokens/s); names the catalogs leave out on purpose are said as such; an impossible memory is asked about;
a GGUF format runs on llama.cpp, whose layer split takes any GPU count."""

import pytest

from assistant.engine.understand import understand, understand_dialogue
from tools.schemas import VramRequest


def test_an_observed_time_to_first_token_is_weighed_against_the_prefill_estimate(adv):
    a = adv.ask("میرا vLLM سرور دو L4 پر Qwen2.5 32B AWQ چلا رہا ہے۔ جب prompt تقریباً 6000 ٹوکن کا ہو تو پہلا ٹوکن "
                "آنے میں 4 سیکنڈ لگتے ہیں۔ کیا یہ نارمل ہے؟")
    assert a.query["observed_ttft_s"] == 4.0
    (sp,) = [c for c in a.tool_calls if c.name == "speed_estimator"][:1]
    assert sp.args["prompt_tokens"] == 6000
    ttft = sp.result["time_to_first_token_s"]
    # prefill of 6,000 tokens on 32.8B params: 2 x 32.8e9 x 6,000 = 3.9e14 FLOP over two L4s (121 TFLOPS dense
    # BF16 each, Marlin dequantising to 16-bit): the compute floor alone is 3.9e14 / 2.42e14 = 1.6 s
    assert 1.6 < ttft < 8
    code = a.sections["headline"][0]["code"]
    assert code == ("diagnose.ttft_near" if ttft * 0.8 <= 4 <= ttft / 0.6 else
                    "diagnose.ttft_slow" if 4 > ttft / 0.6 else "diagnose.ttft_fast")


def test_an_observed_training_rate_is_weighed_against_the_training_estimate(adv):
    a = adv.ask("FSDP on 4x A100 80GB, full fine-tune of Llama 3.1 8B, getting only ~900 tokens/s total and GPU util "
                "hovers around 35%. is that expected?")
    (tt,) = [c for c in a.tool_calls if c.name == "training_time"]
    assert not [c for c in a.tool_calls if c.name == "speed_estimator"]  # a training rate, not a decode speed
    expected = tt.result["tokens_per_s"]
    # 6 x 8.03e9 FLOPs per token on 4 x 312 TFLOPS at ~40-60 % MFU: 10,000-16,000 tokens/s
    assert 8_000 < expected < 20_000
    assert a.sections["headline"][0]["code"] == "diagnose.train_below" and "How large is the dataset" not in a.answer


@pytest.mark.parametrize("text, kind", [("can i run gpt-4o on an H100?", "closed"),
                                        ("faster-whisper large-v3 on a T4, how long for 1 hour of audio?", "speech")])
def test_models_left_out_on_purpose_are_said_not_guessed(adv, text, kind):
    a = adv.ask(text)
    assert a.query["model_elsewhere_kind"] == kind and not a.query.get("model")
    assert a.sections["headline"][0]["code"] == f"model.elsewhere_{kind}"
    assert not [c for c in a.tool_calls if c.name in ("vram_calculator", "speed_estimator")]
    assert "Which model?" not in a.answer


def test_a_closed_model_beside_an_open_one_is_the_api_side():
    q = understand("is self-hosting llama 3.1 70b cheaper than gpt-4o for 2M tokens a day?")
    assert q.model == "llama-3.1-70b" and q.model_elsewhere_kind == "closed" and q.unpriced_alternative == "hosted_api"


def test_a_memory_no_card_of_that_name_has_is_asked_about(adv):
    a = adv.ask("mere pas 1 H100 hai 24gb wala, us pe llama 3 8b fp16 chalana hai, hojayega?")
    assert a.sections["headline"][0]["code"] == "ask.gpu_memory_conflict_more" and a.sections["verdict"] == "ask"
    ok = adv.ask("RTX 3060 12GB, llama 3.1 8b q4")  # a size the card has: nothing to ask
    assert not [f for f in ok.sections["headline"] if f["code"].startswith("ask.gpu_memory_conflict")]


def test_a_gguf_format_runs_on_llama_cpp_split_by_layers_over_three_cards():
    q = understand_dialogue(["دو RTX 3090 پر Llama 3.1 70B کو Q4 میں کتنی رفتار سے چلا سکتا ہوں؟",
                             "معذرت، میرے پاس دو نہیں بلکہ تین 3090 ہیں۔"])
    assert (q.engine, q.engine_implied, q.gpu_count) == ("llama.cpp", True, 3)


def test_layer_split_divides_weights_and_kv_without_a_head_divisor():
    from knowledge.catalog import resolve_model
    from tools.vram import estimate_vram
    a = resolve_model("llama-3.1-70b")
    one = estimate_vram(a, VramRequest(method="inference", weight_precision="q4_0", seq_len=32768))
    three = estimate_vram(a, VramRequest(method="inference", weight_precision="q4_0", seq_len=32768, gpus=3,
                                         layer_split=True))
    w1, w3 = one.components_gb["weights"], three.components_gb["weights"]
    kv1, kv3 = one.components_gb["kv_cache"], three.components_gb["kv_cache"]
    assert w3 == pytest.approx(w1 / 3) and kv3 == pytest.approx(kv1 / 3)
    # 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 327,680 B/token; x 32,768 tokens = 10.7 GB in all
    assert kv1 == pytest.approx(327_680 * 32_768 / 1e9, rel=0.01)
    with pytest.raises(ValueError):
        VramRequest(method="inference", gpus=3, tensor_parallel=3, layer_split=True)


def test_a_monthly_budget_in_roman_urdu_caps_the_hour():
    q = understand("bhai startup k liye 70b model chalana hai, budget max 1500 dollar mahina, 20-30 users ek sath")
    assert (q.budget_usd_total, q.duration_hours) == (1500.0, 730.0)
