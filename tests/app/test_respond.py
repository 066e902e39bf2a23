"""The chat generator, /ask and the calculator forms of the web app, called directly (no server)."""

import json
import re
import types

import gradio as gr
import pytest

from assistant.frontends.web import calc as web_calc

FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"
URDU_Q = "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟"


def _text(msg) -> str:
    c = msg.content if isinstance(msg, gr.ChatMessage) else msg["content"]
    return c if isinstance(c, str) else " ".join(b.get("text", "") for b in c)


def _meta(msg) -> dict:
    return (msg.metadata if isinstance(msg, gr.ChatMessage) else msg.get("metadata")) or {}


def _answers(history) -> list:
    return [m for m in history if m.role == "assistant" and not _meta(m)]


def test_respond_streams_steps_then_one_answer_message_with_its_steps_in_words(app_module):
    steps = list(app_module.respond(FIT_Q, [], None, []))
    assert len(steps) >= 4  # question, tool starts/ends, final
    history, box, tid, status, recent, record = steps[-1]
    assert box == "" and tid and recent == [[tid, FIT_Q]]
    view = json.loads(record)  # the typed record the browser keeps for a reload
    assert view["sections"]["verdict"] == "yes" and view["steps"][0]["tool"] == "vram_calculator"

    # the first yield shows the question at once and clears the box
    first = steps[0]
    assert _text(first[0][-1]) == FIT_Q and first[1] == ""

    # while the tools run, one working message lists the steps in words
    live = [_text(m) for s in steps[1:-1] for m in s[0][1:]]
    assert any("Memory for Llama 3 8B" in t and "ga-live" in t for t in live), live

    # one answer message: the card first, the steps folded inside it, in words (no tool or argument names)
    assert [m.role for m in history] == ["user", "assistant"] and not _meta(history[1])
    answer = _text(history[1])
    assert answer.startswith('<div class="ga-answer">') and 'class="ga-card ga-v-yes"' in answer
    assert answer.index("ga-card") < answer.index("ga-steps")
    steps_part = answer[answer.index('<details class="ga-more ga-steps"'):]
    assert "<summary>How this was worked out</summary>" in steps_part
    assert "Memory for Llama 3 8B, inference, 8,192\u00a0tokens: needs 19.6\u00a0GB per GPU; fits on a 24\u00a0GB GPU<" in steps_part, steps_part
    assert not re.search(r"[a-z]+_[a-z]+|seq_len|\[[a-z]{2}-\d+\]", re.sub(r"<[^>]+>", "", answer))
    assert "19.6\u00a0GB" in answer  # total_gb 19.58 rounded as the chat says it, kept with its unit
    # the chart: GPU memory 25.77 GB is the largest bar; axis 0..30 in steps of 10 (nice_max(25.77) = 30)
    ticks = re.findall(r'class="ga-tick"[^>]*>([^<]+)<', answer)
    assert ticks == ["0", "10", "20", "30"] and "GPU memory" in answer


def test_respond_follow_up_uses_the_thread(app_module):
    *_, last = app_module.respond(FIT_Q, [], None, [])
    history, tid = last[0], last[2]
    *_, last2 = app_module.respond("What if I use 32k context instead?", history, tid, last[4])
    assert last2[2] == tid and len(last2[4]) == 1  # the same thread, listed once
    answer = _text(last2[0][-1])
    # the follow-up recomputes at 32k (chunked prefill, the serving default) and says the window is exceeded
    assert "context 32,768\u00a0tokens" in answer and "changed from the last answer: context length" in answer
    assert "longer than the context window of Llama 3 8B" in answer


def test_a_restored_thread_renders_each_turn_from_its_record_as_it_first_looked(app_module):
    req = types.SimpleNamespace(username=None)  # an unsigned reader, as the page's request is
    *_, first = app_module.respond(FIT_Q, [], None, [], request=req)
    *_, second = app_module.respond("Cheapest H100 per hour?", first[0], first[2], first[4], request=req)
    tid, records = second[2], json.dumps([json.loads(first[5]), json.loads(second[5])])
    live = [_text(m) for m in second[0] if m.role == "assistant"]
    restored, _ = app_module.open_thread(tid, records, req)
    assert [_text(m) for m in restored if m.role == "assistant"] == live
    # without this browser's records (another browser): the stored text, no ids or raw tags in view
    plain, _ = app_module.open_thread(tid, "", req)
    texts = [re.sub(r"<[^>]+>", "", _text(m)) for m in plain if m.role == "assistant"]
    assert len(texts) == 2 and not any(re.search(r"\[[a-z]{2}-\d+\]|&lt;details", t) for t in texts), texts
    # a tampered record is ignored rather than trusted: it no longer matches the stored answer
    bad = json.loads(first[5]) | {"h": "0" * 20}
    assert app_module.open_thread(tid, json.dumps([bad]), req)[0][1].content == plain[1].content


def test_respond_urdu_is_right_to_left_with_latin_runs_isolated(app_module):
    *_, last = app_module.respond(URDU_Q, [], None, [])
    history = last[0]
    question = _text(history[0])
    assert question.startswith('<div dir="rtl" lang="ur">') and '<bdi dir="ltr" class="ga-ltr ga-nw">QLoRA</bdi>' in question
    answer = _text(_answers(history)[-1])
    assert '<div class="ga-card ga-v-yes" dir="rtl">' in answer and "جی ہاں" in answer
    # "13B" (the model size) is an isolated, unbreakable run: it cannot split after "13B-" nor reorder
    assert re.search(r'<bdi dir="ltr" class="ga-ltr ga-nw">[^<]*13B', answer)


def test_respond_prices_show_a_table_with_prices_first(app_module):
    *_, last = app_module.respond("Cheapest H100 per hour?", [], None, [])
    answer = _text(_answers(last[0])[-1])
    headers = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", answer)]
    # the prices, the GPU and the region first, so they are on screen before the table scrolls on a phone
    assert headers[:4] == ["$/GPU-hour", "$/hour", "GPU", "Region"], headers
    assert "ga-chart" not in answer  # a row of near-equal price bars would only repeat the table


def test_respond_help_has_no_chart(app_module):
    *_, last = app_module.respond("hello", [], "t-help", [])
    assert "ga-chart" not in _text(_answers(last[0])[-1])


def test_respond_empty_message_changes_nothing(app_module):
    history = [{"role": "user", "content": "hi"}]
    with pytest.warns(UserWarning, match="empty"):
        steps = list(app_module.respond("   ", history, "t-1", []))
    assert len(steps) == 1 and steps[0][0] == history and steps[0][2] == "t-1" and steps[0][1] == "   "


def test_respond_unexpected_failure_is_a_readable_error(app_module, monkeypatch):
    class Broken:
        def stream(self, q, tid, owner=None):
            raise RuntimeError("boom")
            yield  # pragma: no cover

    monkeypatch.setattr(app_module, "_advisor", lambda: Broken())
    with pytest.raises(gr.Error, match="Something went wrong") as exc:
        list(app_module.respond("Cheapest H100?", [], None, []))
    assert "boom" not in str(exc.value) and "Traceback" not in str(exc.value)


def test_new_chat_clears_the_chat_and_the_thread(app_module):
    assert app_module.new_chat() == ([], "", "", "")


def test_open_thread_unknown_id_starts_fresh(app_module):
    with pytest.warns(UserWarning, match="not available"):
        assert app_module.open_thread("no-such-thread-0") == ([], "")


@pytest.mark.parametrize("question, thread_id, match", [
    pytest.param("", None, "empty", id="empty"),
    pytest.param("x" * 5000, None, "limit is 4,000", id="too-long"),
    pytest.param("Cheapest H100?", "no spaces please", "thread id", id="bad-thread"),
])
def test_ask_rejects_bad_input(app_module, question, thread_id, match):
    with pytest.raises(gr.Error, match=match):
        app_module.ask(question, thread_id)


def test_ask_returns_the_cli_json(app_module):
    d = app_module.ask("Cheapest H100 per hour?")
    from assistant.service import api

    assert set(d) == set(api.Answer.model_fields)  # Answer.model_dump(), as `gpu-advisor ask --json` prints
    assert d["tool_calls"][0]["name"] == "price_query" and d["backend"] == "router"


# ---------------------------------------------------------------- calculators

def _run(name, *vals):
    fields, compute = web_calc.form(name)
    return web_calc.evaluate_form(fields, compute, *vals)


def test_calc_vram_shows_card_chart_table_and_folded_assumptions():
    html, err = _run("vram", "llama-3-8b", "inference", "fp16", "8192", "1", "1", "RTX 4090", "")
    assert err is None and "Needs 19.6 GB per GPU" in html  # the chat's rounding (formatting.number) and "RTX 4090" in html
    assert 'class="ga-chart"' in html and 'class="ga-table"' in html and "<summary>Assumptions</summary>" in html


@pytest.mark.parametrize("name, vals", [
    pytest.param("speed", ("llama-3-70b", "H100", "int4", None, "1", "512", "256", "1"), id="speed"),
    pytest.param("train_time", ("llama-3-8b", "A100", "lora", "100000000", "1", "", "", "1"), id="train"),
    pytest.param("prices", ("H100", "on-demand", "", "", "", "", "", "5"), id="prices"),
    pytest.param("recommend", ("llama-3-8b", "serve", "4096", "10", "", [], "lora", "20000000", "cheapest", "", "",
                               "3"), id="recommend-serve"),
    pytest.param("recommend", ("llama-3-8b", "finetune", "4096", "10", "", [], "lora", "20000000", "cheapest", "",
                               "", "3"), id="recommend-finetune"),
])
def test_calculators_answer_with_blank_optional_fields(name, vals):
    html, err = _run(name, *vals)
    assert err is None, err
    assert 'class="ga-card' in html and ("ga-table" in html or "ga-chart" in html)
    assert "--" not in html  # no CLI flags in the web forms' text


@pytest.mark.parametrize("name, vals, key, match", [
    pytest.param("vram", ("llama-9000", "inference", None, "2048", "1", "1", "", ""), "model",
                 "Unknown model 'llama-9000'", id="unknown-model"),
    pytest.param("vram", ("llama-3-8b", "inference", None, "-5", "1", "1", "", ""), "seq_len",
                 "Context: -5 is not accepted; use a whole number of 1 or more", id="negative-context"),
    pytest.param("vram", ("llama-3-8b", "inference", None, "2048", "0", "1", "", ""), "batch",
                 "Batch: 0 is not accepted; use a whole number of 1 or more", id="zero-batch-said-before-it-is-refused"),
    pytest.param("vram", ("llama-3-8b", "inference", None, "2048", "2000000", "1", "", ""), "batch",
                 "Batch: 2000000 is not accepted. Accepted: an integer from 1 to 1,000,000", id="batch-range-in-form-words"),
    pytest.param("recommend", ("llama-3-8b", "serve", "4096", "0", "", [], "lora", "20000000", "cheapest", "", "", "3"),
                 "users", "Concurrent users: 0 is not accepted", id="zero-users-no-snake-case"),
    pytest.param("vram", ("llama-3-8b", "inference", None, "8k", "1", "1", "", ""), "seq_len", "not a number",
                 id="text-in-a-number"),
    pytest.param("speed", ("llama-3-8b", "H1000", None, None, "1", "512", "256", "1"), "gpu", "Unknown GPU",
                 id="unknown-gpu"),
    pytest.param("train_time", ("llama-3-8b", "A100", "lora", "", "1", "", "", "1"), None, "dataset tokens",
                 id="no-dataset"),
])
def test_calculator_errors_name_their_field_without_cli_words(name, vals, key, match):
    html, err = _run(name, *vals)
    assert html == "" and err is not None and err.key == key
    assert re.search(match, str(err)) and "--" not in str(err) and "gpu-advisor" not in str(err)


def test_web_words_replaces_cli_flags():
    assert web_calc.web_words("often reaches less — pass --mfu from your own runs to rescale.") == (
        "often reaches less — a utilisation (MFU) measured on your own runs would rescale it.")
    assert "--" not in web_calc.web_words("give --hours H, or a model with --method")


def test_the_answer_language_setting_overrides_the_questions_language(app_module):
    *_, last = app_module.respond(FIT_Q, [], None, [], "ur")
    answer = _text(_answers(last[0])[-1])
    assert 'dir="rtl"' in answer and "GB" in answer  # an English question answered in Urdu on request
    *_, last = app_module.respond(URDU_Q, [], None, [], "en")
    assert 'dir="rtl"' not in _text(_answers(last[0])[-1])
