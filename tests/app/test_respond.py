"""The chat generator, /ask and the calculator handlers of app.py, called directly (no server)."""

import gradio as gr
import pandas as pd
import pytest

FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"
URDU_Q = "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟"


def _text(msg) -> str:
    c = msg.content if isinstance(msg, gr.ChatMessage) else msg["content"]
    return c if isinstance(c, str) else " ".join(b.get("text", "") for b in c)


def _meta(msg) -> dict:
    return (msg.metadata if isinstance(msg, gr.ChatMessage) else msg.get("metadata")) or {}


def test_respond_streams_tool_steps_then_answer_and_chart(app_module):
    steps = list(app_module.respond(FIT_Q, [], None))
    assert len(steps) >= 5  # user, tool starts, tool ends, text, final
    history, plot, table, note, box, tid, status = steps[-1]
    assert box == "" and tid and f"thread `{tid[:12]}`" in status and "router" in status

    # the first yield shows the question at once and clears the box
    first = steps[0]
    assert _text(first[0][-1]) == FIT_Q and first[4] == ""

    # a tool step appears pending, then the same step is done with a result summary
    pending = [m for s in steps for m in s[0] if _meta(m).get("status") == "pending"]
    assert any(_meta(m)["title"] == "🛠 vram_calculator" for m in pending)
    done = [m for m in history if _meta(m).get("title") == "🛠 vram_calculator"]
    assert len(done) == 1 and _meta(done[0])["status"] == "done" and "duration" in _meta(done[0])
    assert "`seq_len=8192`" in _text(done[0]) and "Needs 19.58 GB per GPU" in _text(done[0])

    answers = [m for m in history if m.role == "assistant" and not _meta(m)]
    assert len(answers) == 1 and "19.6 GB" in _text(answers[0])
    cites = [m for m in history if "Guide passages cited" in _meta(m).get("title", "")]
    assert cites and "**[ga-" in _text(cites[0]) and "> " in _text(cites[0])

    # the last yield carries real values (no gr.skip) for the chart and the table
    assert isinstance(plot, gr.BarPlot) and plot.visible
    df = (plot.value if isinstance(plot.value, pd.DataFrame)
          else pd.DataFrame(plot.value["data"], columns=plot.value["columns"]))
    assert set(df["part"]) >= {"weights", "kv_cache", "GPU memory"}
    assert isinstance(table, gr.Dataframe) and "19.584" in str(table.value)
    assert "Fits" in note


def test_respond_follow_up_uses_the_thread(app_module):
    *_, last = app_module.respond(FIT_Q, [], None)
    history, tid = last[0], last[5]
    *_, last2 = app_module.respond("What if I use 32k context instead?", history, tid)
    assert last2[5] == tid
    steps = [m for m in last2[0] if _meta(m).get("title") == "🛠 vram_calculator"]
    assert len(steps) == 2 and "`seq_len=32768`" in _text(steps[-1]) and "`model=llama-3-8b`" in _text(steps[-1])
    assert "does not fit" in _text(steps[-1])


def test_respond_urdu_is_right_to_left(app_module):
    *_, last = app_module.respond(URDU_Q, [], None)
    history = last[0]
    assert _text(history[0]).startswith('<div dir="rtl"')  # the question
    answers = [m for m in history if m.role == "assistant" and not _meta(m)]
    assert _text(answers[-1]).startswith('<div dir="rtl" lang="ur">') and "جی ہاں" in _text(answers[-1])


def test_respond_prices_show_offers_and_the_data_date(app_module):
    *_, last = app_module.respond("Cheapest H100 per hour?", [], None)
    table, note = last[2], last[3]
    assert {"provider", "$/GPU-hour", "pricing"} <= set(table.value["headers"] if isinstance(table.value, dict)
                                                         else table.value.columns)
    assert "Prices as of" in note


def test_respond_help_has_no_chart(app_module):
    *_, last = app_module.respond("hello", [], "t-help")
    assert last[1].visible == "hidden" and last[2].visible is False


def test_respond_empty_message_changes_nothing(app_module):
    history = [{"role": "user", "content": "hi"}]
    with pytest.warns(UserWarning, match="empty"):
        steps = list(app_module.respond("   ", history, "t-1"))
    assert len(steps) == 1 and steps[0][0] == history and steps[0][5] == "t-1"


def test_respond_unexpected_failure_is_a_readable_error(app_module, monkeypatch):
    class Broken:
        def stream(self, q, tid):
            raise RuntimeError("boom")
            yield  # pragma: no cover

    monkeypatch.setattr(app_module, "_advisor", lambda: Broken())
    with pytest.raises(gr.Error, match="Something went wrong") as exc:
        list(app_module.respond("Cheapest H100?", [], None))
    assert "boom" not in str(exc.value) and "Traceback" not in str(exc.value)


def test_new_chat_starts_a_new_thread(app_module):
    a, b = app_module.new_chat(), app_module.new_chat()
    assert a[0] == [] and a[5] != b[5] and a[5][:12] in a[6]


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
    from assistant import api

    assert set(d) == set(api.Answer.model_fields)  # Answer.model_dump(), as `gpu-advisor ask --json` prints
    assert d["tool_calls"][0]["name"] == "price_query" and d["backend"] == "router"


def test_calc_vram_outputs(app_module):
    md, plot, table = app_module.calc_vram("llama-3-8b", "inference", "fp16", 8192, 1, 1, "RTX 4090", None)
    assert "Needs 19.58 GB per GPU" in md and "RTX 4090" in md and "**Assumptions**" in md
    assert plot.visible and "GPU: RTX 4090" in set(plot.value["item"] if isinstance(plot.value, pd.DataFrame)
                                                   else [r[0] for r in plot.value["data"]])


@pytest.mark.parametrize("fn, args", [
    pytest.param("calc_speed", ("llama-3-70b", "H100", "int4", "", 1, 512, 256, 1), id="speed"),
    pytest.param("calc_train", ("llama-3-8b", "A100", "lora", 1e8, 1, None, None, 1), id="train"),
    pytest.param("calc_prices", ("H100", "spot", "", "", None, None, None, 5), id="prices"),
    pytest.param("calc_recommend", ("llama-3-8b", "serve", 4096, 10, None, [], "lora", 2e7, "cheapest", None, None, 3),
                 id="recommend-serve"),
    pytest.param("calc_recommend",
                 ("llama-3-8b", "finetune", 4096, 10, None, [], "lora", 2e7, "cheapest", None, None, 3),
                 id="recommend-finetune"),
])
def test_calculators_show_a_chart_and_a_table(app_module, fn, args):
    md, plot, table = getattr(app_module, fn)(*args)
    assert md and plot.visible and table.visible


@pytest.mark.parametrize("fn, args, match", [
    pytest.param("calc_vram", ("llama-9000", "inference", "", 2048, 1, 1, "", None), "Unknown model 'llama-9000'",
                 id="unknown-model"),
    pytest.param("calc_vram", ("llama-3-8b", "inference", "", -5, 1, 1, "", None), "seq_len", id="negative-seq"),
    pytest.param("calc_speed", ("llama-3-8b", "H1000", "", "", 1, 512, 256, 1), "Unknown GPU", id="unknown-gpu"),
    pytest.param("calc_train", ("llama-3-8b", "A100", "lora", None, 1, None, None, 1), "dataset-tokens",
                 id="no-dataset"),
    pytest.param("calc_prices", ("H100", "any", "nocloud", "", None, None, None, 5), "provider", id="bad-provider"),
])
def test_calculator_errors_are_readable(app_module, fn, args, match):
    with pytest.raises(gr.Error, match=match) as exc:
        getattr(app_module, fn)(*args)
    assert "Traceback" not in str(exc.value)
