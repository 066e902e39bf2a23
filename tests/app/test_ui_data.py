"""Chart and table shaping for the web app (assistant.frontends.web.ui_data): pure functions over tool results."""

import re

import pytest

from assistant.service import api
from assistant.frontends.web import ui_data
from assistant.runtime.settings import MAX_QUESTION_CHARS

VRAM = {"total_gb": 19.583713,
        "components_gb": {"weights": 16.060522, "kv_cache": 1.073742, "activations": 1.0407, "cuda_context": 1.408748},
        "model": {"id": "llama-3-8b", "name": "Llama 3 8B"},
        "inputs": {"method": "inference", "seq_len": 8192},
        "formulas": {"weights": {"formula": "8.03B params x 2 B (fp16)"}},
        "fit": {"gpu": "a 24 GB GPU", "gpu_memory_gb": 25.77, "fits": True, "headroom_gb": 6.19, "headroom_pct": 24.0}}
SPEED = {"decode_tokens_per_s": 40.0, "aggregate_tokens_per_s": 40.0, "time_to_first_token_s": 0.147,
         "request_latency_s": 6.55, "bound": "memory", "engine": "vllm", "gpu": {"name": "H100 SXM"},
         "inputs": {"batch": 1, "model": "llama-3-70b", "precision": "int4"},
         "memory": {"fits": True, "max_batch": 172, "aggregate_tokens_per_s_at_max_batch": 2969.9}}


def _offer(provider, price, spot=None, n=1):
    return {"provider": provider, "instance_type": f"{provider}-{n}x", "gpu": "H100 SXM", "gpu_count": n,
            "gpu_memory_gb": 85.9, "price_usd_per_gpu_hour": price, "price_usd_per_hour": price * n,
            "spot_price_usd_per_hour": spot, "spot_price_usd_per_gpu_hour": spot, "region": "us-east-1",
            "as_of": "2026-05-20"}


PRICES = {"as_of": "2026-05-20", "stale": True, "data_note": "Prices as of 2026-05-20 (193 days old).",
          "total_matches": 300, "gpu_note": "'H100' covers H100 SXM, H100 PCIe, H100 NVL.",
          "offers": [_offer("hyperbolic", 1.29), _offer("lium", 1.75, n=8)]}
SPOT = {"as_of": "2026-05-20", "stale": True, "data_note": "Prices as of 2026-05-20 (193 days old).",
        "total_matches": 170, "offers": [_offer("verda", 2.29, spot=0.80)]}
REC = {"status": "ok", "missing": [], "ruled_out": [{"reason": "x"}], "suggestions": [],
       "chart": {"as_of": ["2026-05-20"]},
       "options": [{"gpu": "RTX 3060", "gpu_count": 4, "tokens_per_s": 445.0, "usd_per_million_tokens": 0.131,
                    "monthly_usd": 153.3, "price_usd_per_hour": 0.21, "vram_per_gpu_gb": 6.27,
                    "offer": {"provider": "vast", "instance_type": "4x-RTX_3060", "region": "HK",
                              "as_of": "2026-05-20"}},
                   {"gpu": "RTX 3090", "gpu_count": 1, "tokens_per_s": 336.0, "usd_per_million_tokens": 0.207,
                    "monthly_usd": 182.5, "price_usd_per_hour": 0.25, "vram_per_gpu_gb": 23.6,
                    "offer": {"provider": "vast", "instance_type": "1x-RTX_3090", "region": "RO",
                              "as_of": "2026-05-20"}}]}


@pytest.mark.parametrize("name, result, args, expected", [
    pytest.param("vram_calculator", VRAM, {}, "Needs 19.6 GB per GPU of 25.8 GB on a 24 GB GPU: fits, 6.19 GB free",
                 id="vram-fits"),
    pytest.param("vram_calculator", VRAM | {"fit": VRAM["fit"] | {"fits": False, "headroom_gb": -0.47}}, {},
                 "does not fit, 0.47 GB short", id="vram-short"),
    pytest.param("speed_estimator", SPEED, {}, "40.0 tokens/s per sequence", id="speed"),
    pytest.param("price_query", PRICES, {"pricing": "on-demand"},
                 "hyperbolic hyperbolic-1x (1 x H100 SXM) at $1.29/GPU-hour",
                 id="prices-on-demand"),
    pytest.param("price_query", PRICES, {}, "Prices as of 2026-05-20 (possibly stale)", id="prices-date"),
    pytest.param("price_query", SPOT, {"pricing": "spot"}, "spot $0.800/GPU-hour", id="prices-spot-price"),
    pytest.param("recommend_gpus", REC, {}, "2 option(s); first: 4 x RTX 3060 at vast, $0.131 per million tokens",
                 id="recommend"),
    pytest.param("recommend_gpus", {"status": "needs_input", "missing": ["dataset_tokens"]}, {},
                 "Needs more input: dataset_tokens", id="recommend-needs-input"),
    pytest.param("search_guide", {"passages": [{"id": "ga-17"}, {"id": "ga-41"}]}, {}, "ga-17, ga-41", id="guide"),
    pytest.param("cost_estimator", {"error": "give --dataset-tokens N"}, {}, "Error: give --dataset-tokens N",
                 id="tool-error"),
    pytest.param("vram_calculator", {"total_gb": "?"}, {}, "Result fields: total_gb", id="unexpected-shape"),
])
def test_summarize_result(name, result, args, expected):
    assert expected in ui_data.summarize_result(name, result, args)


def test_memory_frame_stacks_components_beside_the_gpu():
    df = ui_data.memory_frame(VRAM)
    assert list(df.columns) == ui_data.CHART_COLUMNS
    needed = df[df["item"] == "needed"]
    assert list(needed["part"]) == ["weights", "kv_cache", "activations", "cuda_context"]
    assert needed["value"].sum() == pytest.approx(VRAM["total_gb"], abs=1e-3)
    gpu = df[df["part"] == "GPU memory"]
    assert list(gpu["item"]) == ["GPU: a 24 GB GPU"] and gpu["value"].iloc[0] == pytest.approx(25.77)


def test_memory_visual_without_gpu_has_no_gpu_bar():
    v = ui_data.memory_visual({k: v for k, v in VRAM.items() if k != "fit"})
    assert set(v.chart["item"]) == {"needed"} and v.note == ""
    assert v.table["component"].tolist()[-1] == "total" and v.table["GB"].tolist()[-1] == pytest.approx(19.584)


def test_memory_visual_from_the_real_calculator():
    d = api.vram(model="llama-3-8b", gpu="RTX 4090", seq_len=8192).to_json_dict()
    v = ui_data.memory_visual(d)
    assert v.kind == "memory" and "Llama 3 8B" in v.chart_title
    assert v.chart[v.chart["item"] == "needed"]["value"].sum() == pytest.approx(d["total_gb"], rel=1e-3)
    assert v.note.startswith("**Fits**")


def test_speed_visual_bars_and_the_largest_batch_in_the_table():
    v = ui_data.speed_visual(SPEED)
    assert v.chart["item"].tolist() == ["per sequence", "total at batch 1"]
    assert v.chart["value"].tolist() == [40.0, 40.0]
    rows = dict(zip(v.table["metric"], v.table["value"]))
    assert rows["max batch that fits"] == "172" and rows["aggregate tokens/s at max batch"] == "2,970"


def test_recommend_frame_costs_per_option_in_rank_order():
    df, unit = ui_data.recommend_frame(REC)
    assert unit == "USD per million tokens"
    assert df["item"].tolist() == ["1. 4x RTX 3060 (vast)", "2. 1x RTX 3090 (vast)"]
    v = ui_data.recommend_visual(REC)
    assert v.table["$/M tokens"].tolist() == [0.131, 0.207] and "2026-05-20" in v.note


def test_recommend_frame_finetune_uses_job_cost():
    rec = REC | {"options": [o | {"usd_per_million_tokens": None, "job_cost_usd": 5.2, "hours": 5.5}
                             for o in REC["options"]]}
    df, unit = ui_data.recommend_frame(rec)
    assert unit == "USD for the job" and df["value"].tolist() == [5.2, 5.2]


def test_prices_visual_merges_on_demand_and_spot_with_the_date():
    v = ui_data.prices_visual([({"pricing": "on-demand"}, PRICES), ({"pricing": "spot"}, SPOT)])
    assert v.kind == "prices"
    assert v.table["pricing"].tolist() == ["on-demand", "on-demand", "spot"]
    assert v.table["$/GPU-hour"].tolist()[:2] == [1.29, 1.75]
    assert v.chart["part"].tolist() == ["on-demand", "on-demand", "spot"]
    assert v.chart["value"].tolist()[-1] == pytest.approx(0.80)  # the spot bar shows the spot price
    assert "Prices as of 2026-05-20" in v.note and "covers H100 SXM" in v.note


def test_offers_frame_empty_keeps_columns():
    df = ui_data.offers_frame([])
    assert df.empty and "$/GPU-hour" in df.columns


def test_cost_visual_serving_and_job():
    serve = {"as_of": "2026-05-20", "data_note": "Prices as of 2026-05-20.",
             "offer": {"provider": "vast", "instance_type": "1x-L40S", "gpu": "L40S", "gpu_count": 1, "region": "JP",
                       "price_usd_per_hour": 0.6},
             "serving": {"aggregate_tokens_per_s": 39.5, "usd_per_million_tokens": 4.21, "monthly_usd": 438.0,
                         "spot_usd_per_million_tokens": 2.07}}
    v = ui_data.cost_visual(serve)
    assert v.chart["value"].tolist() == [4.21, 2.07] and v.note == "Prices as of 2026-05-20."
    job = {"runtime_hours": 5.5, "billed_hours": 5.5, "on_demand_cost_usd": 5.16, "spot": {"cost_usd": 2.64},
           "total_usd": 5.16}
    v = ui_data.cost_visual(job)
    assert v.chart["item"].tolist() == ["on-demand", "spot (expected)"]


@pytest.mark.parametrize("calls, kind", [
    pytest.param([{"name": "vram_calculator", "args": {}, "result": VRAM},
                  {"name": "search_guide", "args": {}, "result": {"passages": []}}], "memory", id="fit"),
    pytest.param([{"name": "price_query", "args": {"pricing": "on-demand"}, "result": PRICES},
                  {"name": "price_query", "args": {"pricing": "spot"}, "result": SPOT}], "prices", id="prices"),
    pytest.param([{"name": "speed_estimator", "args": {}, "result": SPEED}], "speed", id="speed"),
    pytest.param([{"name": "price_query", "args": {}, "result": PRICES},
                  {"name": "recommend_gpus", "args": {}, "result": REC}], "recommend", id="recommend-wins"),
    pytest.param([{"name": "cost_estimator", "args": {}, "result": {"error": "no offer"}}], "none", id="error"),
    pytest.param([{"name": "search_guide", "args": {}, "result": {"passages": []}}], "none", id="guide-only"),
    pytest.param([], "none", id="no-tools"),
])
def test_visual_for_calls_picks_the_fitting_picture(calls, kind):
    assert ui_data.visual_for_calls(calls).kind == kind


@pytest.mark.parametrize("question, ok", [
    pytest.param("  Cheapest H100?  ", "Cheapest H100?", id="stripped"),
    pytest.param("", None, id="empty"),
    pytest.param("   \n ", None, id="blank"),
    pytest.param("x" * (MAX_QUESTION_CHARS + 1), None, id="too-long"),
    pytest.param(42, None, id="not-text"),
])
def test_check_question(question, ok):
    if ok is None:
        with pytest.raises(ValueError, match="question"):
            ui_data.check_question(question)
    else:
        assert ui_data.check_question(question) == ok


@pytest.mark.parametrize("tid, ok", [
    pytest.param(None, None, id="none"), pytest.param("", None, id="empty"),
    pytest.param("abc123-def", "abc123-def", id="token"),
    pytest.param("bad id!", ValueError, id="spaces"), pytest.param("x" * 200, ValueError, id="too-long"),
    pytest.param(5, ValueError, id="not-text"),
])
def test_check_thread_id(tid, ok):
    if ok is ValueError:
        with pytest.raises(ValueError, match="thread id"):
            ui_data.check_thread_id(tid)
    else:
        assert ui_data.check_thread_id(tid) == ok


@pytest.mark.parametrize("text, rtl", [
    pytest.param("کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں؟", True, id="urdu-mixed"),
    pytest.param("Can I run Llama-3-8B?", False, id="english"), pytest.param("1234", False, id="digits"),
])
def test_is_rtl_text(text, rtl):
    assert ui_data.is_rtl_text(text) is rtl


def test_citations_markdown_quotes_each_passage():
    md = ui_data.citations_markdown([{"guide": "generative-ai", "passage_id": "ga-17", "title": "Best cloud GPUs",
                                      "quote": "VRAM first."}])
    assert md == "**[ga-17]** Best cloud GPUs\n> VRAM first."


# ---------------------------------------------------------------- HTML charts and answers (assistant/web_*)

import pandas as pd  # noqa: E402

from assistant.frontends.web import chart as web_chart  # noqa: E402
from assistant.frontends.web import render as web_render  # noqa: E402
from assistant.frontends.web import sections as web_sections  # noqa: E402


@pytest.mark.parametrize("largest, top", [
    pytest.param(19.58, 20, id="19.58->20"), pytest.param(25.77, 30, id="25.77->30"),
    pytest.param(42.9, 50, id="42.9->50"), pytest.param(0.87, 1, id="0.87->1"), pytest.param(1.8, 2, id="1.8->2"),
    pytest.param(100, 100, id="exact-100"), pytest.param(101, 120, id="101->120"), pytest.param(0, 1, id="zero"),
])
def test_nice_max_is_a_round_number_at_or_above_the_largest(largest, top):
    assert web_chart.nice_max(largest) == top and web_chart.nice_max(largest) >= largest


def test_chart_axis_covers_the_largest_bar_with_value_labels():
    html = web_chart.chart_html(ui_data.memory_frame(VRAM), "t", "GB")
    ticks = [float(t) for t in re.findall(r'class="ga-tick"[^>]*>([^<]+)<', html)]
    values = [float(v) for v in re.findall(r'class="ga-val">([^<]+)<', html)]
    # bars: needed 16.06+1.07+1.04+1.41 = 19.58 -> "19.6"; the GPU 25.77 -> "25.8"; axis 0..30 by 10
    assert values == [19.6, 25.8] and ticks == [0, 10, 20, 30] and ticks[-1] >= max(values)
    assert html.count('class="ga-key"') == 5  # weights, kv cache, activations, cuda context, GPU memory


def test_chart_colours_are_fixed_per_part_across_answers():
    assert web_chart.color_for("kv_cache") == web_chart.color_for("kv_cache") == "#f58518"
    assert web_chart.color_for("H100 SXM") == web_chart.color_for("H100 SXM")  # hashed, stable between runs


def test_no_chart_when_it_adds_nothing():
    same = pd.DataFrame([("per sequence", 40.0, "tokens/s"), ("total at batch 1", 40.0, "tokens/s")],
                        columns=ui_data.CHART_COLUMNS)
    assert web_chart.chart_html(same) == ""  # two identical bars (batch 1)
    assert web_chart.chart_html(pd.DataFrame(columns=ui_data.CHART_COLUMNS)) == ""


def test_isolate_latin_keeps_runs_whole_and_in_order():
    out = web_render.isolate_latin("CUDA کانٹیکسٹ: 1.04\u00a0GB")
    assert out == ('<bdi dir="ltr" class="ga-ltr ga-nw">CUDA</bdi> کانٹیکسٹ: '
                   '<bdi dir="ltr" class="ga-ltr ga-nw">1.04\u00a0GB</bdi>')
    assert '13B-parameter model (rough shape) (QLoRA، nf4)</bdi>' in web_render.isolate_latin(
        "یہ 13B-parameter model (rough shape) (QLoRA، nf4) کو")
    escaped = web_render.isolate_latin("<script>")
    assert "<script>" not in escaped and escaped.startswith("&lt;") and escaped.endswith("&gt;")


def test_table_puts_prices_first_rounds_like_the_chat_and_folds_regions():
    df = ui_data.offers_frame([_offer("vast", 1.8675, n=4) | {"region": r} for r in ("VN", "KR", "US", "DE")])
    html = web_render.table_html(df)
    headers = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", html)]
    assert headers[:3] == ["$/GPU-hour", "$/hour", "spot $/GPU-hour"]
    assert html.count("<tr>") == 2 and "4 regions" in html  # header + one folded row
    assert "$1.87" in html and "1.8675" not in html  # formatting.number: 1.87, as the chat says it


def test_sections_render_card_key_numbers_footnotes_and_folded_assumptions():
    from assistant.engine.answer import CitationRef, Finding, KeyNumber, Sections

    sec = Sections(lang="en", kind="fit", verdict="no",
                   headline=[Finding(code="fit.no", params={})],
                   key_numbers=[KeyNumber(label="num.total_per_gpu", value=30.2, unit="GB")],
                   explanation=[Finding(code="fit.no", params={}, passage_id="ga-41")],
                   assumptions=[Finding(code="fit.no", params={})],
                   citations=[CitationRef(id="ga-41", title="Guide", quote="Always budget extra memory.")])
    html = web_sections.sections_html(sec)
    assert html.index('class="ga-card ga-v-no"') < html.index('class="ga-kn"') < html.index("ga-more")
    assert '<sup class="ga-ref">1</sup>' in html and "<details class=\"ga-fn\">" in html
    assert "Always budget extra memory." in html and "30.2" in html


def test_hyphenated_names_and_sizes_do_not_break():
    out = web_render.text_html("hyperbolic (1x-H100-75-722) runs Llama-3-8B at 19.6 GB")
    assert '<span class="ga-nw">1x-H100-75-722</span>' in out and '<span class="ga-nw">Llama-3-8B</span>' in out
    assert "19.6\u00a0GB" in out


def test_restored_turn_keeps_the_understood_line_apart_and_tables_scrollable():
    md = "_Understood: Llama 3 8B_\n\n**Yes — it fits.**\n\n#### Key numbers\n\n| A | B |\n|---|---:|\n| x | 1 |"
    out = web_render.restored_html(md)
    assert out.index('class="ga-understood"') < out.index('class="ga-card') < out.index('class="ga-table-wrap"')
    assert "<strong>Yes — it fits.</strong>" in out.split('class="ga-card')[1].split("</div></div>")[0]


def test_recent_threads_newest_first_without_duplicates():
    from assistant.frontends.web.chat import MAX_RECENT, remember

    recent = remember(remember([], "t1", "first question"), "t2", "second")
    assert recent == [["t2", "second"], ["t1", "first question"]]
    assert remember(recent, "t1", "a follow-up") == [["t1", "first question"], ["t2", "second"]]
    many = []
    for i in range(MAX_RECENT + 5):
        many = remember(many, f"t{i}", "q")
    assert len(many) == MAX_RECENT and many[0][0] == f"t{MAX_RECENT + 4}"


def _options_sections(kind="recommend", verdict="yes", headline=None):
    from assistant.engine.answer import Finding, KeyNumber, Option, Sections

    opts = [Option(title=Finding(code="rec.option", params={"n": 1, "gpu": g, "provider": p}),
                   numbers=[KeyNumber(label="num.price_h", value=price, unit="usd_h"),
                            KeyNumber(label="num.per_user", value=tps, unit="tok_s")],
                   offer={"provider": p, "instance_type": "gpu_1x_" + g.lower().replace(" ", "_"), "region": "us-east-1",
                          "price_usd_per_hour": price})
            for g, p, price, tps in (("RTX 3090", "vast", 0.25, 35.0), ("RTX 4090", "lium", 0.28, 37.5),
                                     ("L40S", "runpod", 0.79, 52.1))]
    return Sections(lang="en", kind=kind, verdict=verdict, options=opts,
                    headline=headline or [Finding(code="rec.best", params={"n": 1, "gpu": "RTX 3090", "provider": "vast",
                                                                          "price": {"v": 0.25, "u": "usd_h"}})])


def test_options_are_a_comparison_table_one_column_per_option_and_cards_for_a_phone():
    html = web_sections.sections_html(_options_sections())
    table = html[html.index("ga-opt-table"):html.index("ga-opt-cards")]
    heads = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<thead><tr>(.*?)</tr>", table)[0].split("</th>")[:-1]]
    assert len(heads) == 4 and "RTX 3090" in heads[1] and "Best" in heads[1] and "Best" not in heads[2]
    assert table.count("<tr>") == 1 + 3 and "$0.25" in table and "runpod 1x L40S" in table  # price, speed, where
    assert len(re.findall(r'class="ga-num ga-win"', table)) == 3  # the winner's column is marked
    cards = html[html.index("ga-opt-cards"):]
    assert cards.count('class="ga-opt-card') == 3 and cards.count("ga-opt-card ga-win") == 1
    assert "<ol class=\"ga-opts\"" not in html  # no wall of bullets


@pytest.mark.parametrize("kind, verdict, pill", [
    pytest.param("fit", "yes", "Yes", id="fit-question-has-a-pill"),
    pytest.param("recommend", "yes", None, id="cheapest-way-question-has-none"),
    pytest.param("prices", "yes", None, id="prices-have-none"),
    pytest.param("recommend", "ask", "Need one detail", id="a-question-back-always"),
])
def test_the_verdict_pill_only_answers_yes_or_no_questions(kind, verdict, pill):
    html = web_sections.sections_html(_options_sections(kind, verdict))
    found = re.findall(r'<span class="ga-verdict">([^<]*)</span>', html)
    assert found == ([pill] if pill else [])


def test_the_card_holds_one_verdict_and_at_most_two_supporting_lines_without_repeats():
    from assistant.engine.answer import Finding

    lines = [Finding(code=c, params={}) for c in ("fit.no", "fit.no", "rec.nothing_fits", "assume.per_gpu", "data.stale")]
    html = web_sections.sections_html(_options_sections("fit", "no", lines))
    card = html[html.index("ga-card"):html.index("</div></div>")]
    assert card.count("<p") == 1 + web_render.MAX_SUPPORTING
    assert html.count('class="ga-notice"') == 1  # the fourth distinct line moves below the card


@pytest.mark.parametrize("text, runs", [
    pytest.param("(انفرنس، bf16)", ["bf16"], id="urdu-bracket-closes-after-latin"),
    pytest.param("(QLoRA، nf4) میں", ["(QLoRA، nf4)"], id="latin-bracket-pair-kept"),
    pytest.param("[ga-34] دیکھیں", ["[ga-34]"], id="balanced-id"),
    pytest.param("کارڈ (24 GB) پر", ["(24 GB)"], id="latin-inside-brackets"),
    pytest.param("میموری (وزن: 16 GB)", ["16 GB"], id="urdu-opens-latin-closes"),
])
def test_urdu_brackets_stay_paired_with_their_run(text, runs):
    out = web_render.isolate_latin(text)
    got = re.findall(r"<bdi[^>]*>(.*?)</bdi>", out)
    assert got == runs, out
    outside = re.sub(r"<bdi[^>]*>.*?</bdi>", "", out)
    for o, c in (("(", ")"), ("[", "]")):  # every bracket outside the runs has its partner outside too
        assert outside.count(o) == outside.count(c), out


def test_footnotes_show_no_ids_and_tell_passages_of_one_guide_apart():
    cites = [{"passage_id": f"ga-{i}", "title": "Best cloud GPUs", "quote": q} for i, q in
             ((1, "Quantised 7B to 13B models run on 24GB consumer cards."), (2, "Medium models want 48GB cards."))]
    html = web_render.footnotes_html(cites, "en")
    summaries = [re.sub(r"<[^>]+>", "", s) for s in re.findall(r"<summary>(.*?)</summary>", html)]
    assert "ga-1" not in html and len(set(summaries)) == 2 and "Quantised 7B" in summaries[0]


@pytest.mark.parametrize("question, title", [
    pytest.param("Cheapest H100?", "Cheapest H100?", id="short"),
    pytest.param("Can I run Llama 3 70B in int4 on two 24 GB cards with a context of 32k tokens please?",
                 "Can I run Llama 3 70B in int4 on two 24 GB cards with a…", id="cut-at-a-word"),
    pytest.param("کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر سکتا ہوں اور اس کی لاگت کتنی ہو گی؟",
                 "کیا میں 24GB GPU پر 13B ماڈل کو QLoRA کے ساتھ فائن ٹیون کر…", id="urdu-cut-at-a-word"),
])
def test_recent_titles_are_cut_at_a_word_with_an_ellipsis(question, title):
    from assistant.frontends.web.chat import recent_title

    assert recent_title(question) == title


@pytest.mark.parametrize("lang, step, text", [
    pytest.param("en", {"tool": "vram_calculator", "args": {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048},
                        "found": {"total_gb": 11.44}}, "Memory for Llama 3.1 8B, QLoRA, 2,048\u00a0tokens: needs 11.4\u00a0GB per GPU",
                 id="en-memory-in-words"),
    pytest.param("ur", {"tool": "vram_calculator", "args": {"params_b": 13.0, "method": "qlora"},
                        "found": {"total_gb": 11.9, "fits": True, "gpu": "RTX 4090", "gpu_gb": 25.77}},
                 "کی میموری", id="ur-memory-in-urdu"),
    pytest.param("en", {"tool": "search_guide", "args": {}, "found": {"n": 2}},
                 "The guide&#x27;s passages on the question: 2 passages", id="en-guide-no-ids"),
    pytest.param("ur", {"tool": "price_query", "args": {"gpu": "H100"}, "found": {"n": 8, "price": 1.29}},
                 "کی قیمتیں", id="ur-prices"),
])
def test_tool_steps_read_as_words_in_the_answers_language(lang, step, text):
    from assistant.frontends.web.steps import steps_html

    html = steps_html(lang, [step])
    assert text in html, html
    assert not re.search(r"[a-z]+_[a-z]+|seq_len|params_b", re.sub(r"<[^>]+>", "", html))
    if lang == "ur":
        assert 'dir="rtl"' in html and "یہ کیسے نکالا گیا" in html


def test_chart_labels_follow_the_answers_language():
    frame = pd.DataFrame([("needed", 6.99, "weights"), ("needed", 1.96, "activations"),
                          ("GPU: a 24 GB GPU", 25.77, "GPU memory")], columns=ui_data.CHART_COLUMNS)
    ur = web_chart.chart_from(ui_data.Visual("memory", frame, "13B: 11.9 GB per GPU", "GB (decimal)"), "ur")
    labels = re.findall(r"<bdi[^>]*>([^<]*)</bdi>", ur)
    assert "وزن" in labels and "درکار" in labels and "GPU میموری" in labels and "24 GB GPU" in "".join(labels)
    assert not any(w in ur for w in ("Weights", "needed", "GB (decimal)", "per GPU"))
    en = web_chart.chart_from(ui_data.Visual("memory", frame, "13B: 11.9 GB per GPU", "GB (decimal)"), "en")
    assert "Weights" in en and "needed" in en
