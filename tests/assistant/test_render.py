"""Renderers over every answer kind: Urdu answers are Urdu (only names, units and numbers Latin), no code
identifiers or CLI flags in chat answers, citation ids exist, Slack limits, the catalogs agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assistant.engine.compose import compose
from assistant.engine.compose.citations import known_ids
from assistant.engine.query import Query
from assistant.engine.render import render_markdown, render_slack, render_text
from assistant.engine.render.catalog import MESSAGES_DIR, catalog
from assistant.service.registry import run_tool
from tests.assistant.test_compose import LEVERS, job_cost, serving_cost, vram

CALLS = {
    "fit-yes": ("fit", dict(model="llama-3.1-8b", gpus=["L4"], precision="bf16", context_tokens=8192),
                [("vram_calculator",
                  {"model": "llama-3.1-8b", "gpu": "L4", "weight_precision": "bf16", "seq_len": 8192}),
                 ("search_guide", {"question": "will llama 8b fit on an L4?"})]),
    "fit-train-compare": ("fit", dict(params_b=7, method="full", gpu_memory_gb=80, optimizer="adamw"),
                          [("vram_calculator", {"params_b": 7, "method": "full", "gpu_memory_gb": 80}),
                           ("vram_calculator", {"params_b": 7, "method": "full", "gpu_memory_gb": 80,
                                                "training_precision": "bf16"})]),
    "fit-lora-no": ("fit", dict(model="qwen2.5-32b", method="lora", gpus=["RTX 4090"]),
                    [("vram_calculator", {"model": "qwen2.5-32b", "method": "lora", "gpu": "RTX 4090"})]),
    "fit-models": ("compare", dict(model="llama-3.1-8b", gpus=["L4"]),
                   [("vram_calculator", {"model": "llama-3.1-8b", "gpu": "L4"}),
                    ("vram_calculator", {"model": "mistral-7b", "gpu": "L4"})]),
    "diffusion": ("fit", dict(model="flux.1-dev", gpus=["L4"]),
                  [("vram_calculator", {"model": "flux.1-dev", "gpu": "L4"})]),
    "fit-prices": ("fit", dict(params_b=13, method="qlora", batch=4), [
        ("vram_calculator", {"params_b": 13, "method": "qlora", "batch": 4}),
        ("price_query", {"min_vram_gb": 20, "pricing": "on-demand", "limit": 3})]),
    "speed": ("speed", dict(model="llama-3.1-8b", gpus=["L40S"]),
              [("speed_estimator", {"model": "llama-3.1-8b", "gpu": "L40S"})]),
    "speed-compare": ("compare", dict(params_b=13, precision="int8", gpus=["L4", "A100"]), [
        ("speed_estimator", {"params_b": 13, "gpu": "L4", "precision": "int8"}),
        ("speed_estimator", {"params_b": 13, "gpu": "A100", "precision": "int8"})]),
    "speed-target": ("speed", dict(model="llama-3.1-8b", gpus=["L4"], min_tokens_per_s=50), [
        ("speed_estimator", {"model": "llama-3.1-8b", "gpu": "L4"})]),
    "train": ("train_time",
              dict(model="llama-3.1-8b", method="lora", gpus=["A100"], dataset_tokens=1e8, deadline_hours=4),
              [("training_time", {"model": "llama-3.1-8b", "gpu": "A100", "method": "lora", "dataset_tokens": 1e8})]),
    "prices": ("prices", dict(gpus=["H100"], both_pricing=True), [
        ("price_query", {"gpu": "H100", "pricing": "on-demand", "limit": 3}),
        ("price_query", {"gpu": "H100", "pricing": "spot", "limit": 3})]),
    "prices-none": ("prices", dict(gpus=["B200"], spot=True), [
        ("price_query", {"gpu": "H100", "pricing": "spot", "provider": "nosuchcloud"})]),
    "cost-job": ("cost", dict(model="mistral-7b", method="lora", examples=50000, tokens_per_example=512, epochs=3,
                              gpus=["A100", "RTX 4090"], spot=True), [
        ("cost_estimator", {"model": "mistral-7b", "gpu": "A100", "method": "lora", "examples": 50000,
                            "tokens_per_example": 512, "epochs": 3}),
        ("cost_estimator", {"model": "mistral-7b", "gpu": "RTX 4090", "method": "lora", "examples": 50000,
                            "tokens_per_example": 512, "epochs": 3})]),
    "cost-billing": ("cost", dict(gpus=["H100"], billing=True, duration_hours=1 / 3), [
        ("cost_estimator", {"gpu": "H100", "hours": 1 / 3})]),
    "cost-serve": ("cost", dict(model="llama-3.1-8b", gpus=["L40S"]), [
        ("cost_estimator", {"model": "llama-3.1-8b", "gpu": "L40S", "serve": True})]),
    "recommend": ("recommend", dict(model="llama-3.1-8b", concurrent_users=8), [
        ("recommend_gpus", {"model": "llama-3.1-8b", "workload": "serve", "concurrent_users": 8})]),
    "recommend-train": ("recommend", dict(model="llama-3-8b", examples=20000, budget_usd_total=100), [
        ("recommend_gpus", {"model": "llama-3-8b", "workload": "finetune", "method": "lora", "examples": 20000,
                            "tokens_per_example": 512, "budget_usd": 100})]),
    "recommend-missing": ("recommend", dict(model="llama-3.1-70b", dataset_tokens=5e7), [
        ("recommend_gpus", {"model": "llama-3.1-70b", "workload": "finetune", "dataset_tokens": 5e7})]),
    "recommend-nothing": ("recommend", dict(model="llama-3.1-405b", context_tokens=100000, concurrent_users=64), [
        ("recommend_gpus", {"model": "llama-3.1-405b", "workload": "serve", "context_tokens": 100000,
                            "concurrent_users": 64})]),
    "guide": ("guide", dict(text="Should I use spot or on-demand for fine-tuning?"), [
        ("search_guide", {"question": "Should I use spot or on-demand for fine-tuning?"})]),
    "unknown-model": ("fit", dict(model_unknown="Llama-9-Ultra-900B", gpu_unknown=["H400"]), [
        ("vram_calculator", {"model": "Llama-9-Ultra-900B", "gpu": "H100"})]),
    "invalid": ("fit", dict(params_b=7, batch=-3), [("vram_calculator", {"params_b": 7, "batch": -3})]),
    "help": ("help", {}, []),
    "out-of-scope": ("out_of_scope", {}, []),
    "ask-gpu": ("speed", dict(model="llama-3.1-8b"), []),
}
SOLVED = {
    "max_context": {"unknown": "max_context", "value": 61097, "unit": "tokens", "solved": True,
                    "limited_by": "kv_cache",
                    "config": {"method": "inference", "seq_len": 61097, "batch": 1, "weight_precision": "int4"},
                    "memory_gb": 51.5, "gpu_memory_gb": 51.5, "findings": [], "details": {}},
    "min_gpu_memory": {"unknown": "min_gpu_memory", "value": 50.8, "unit": "GB", "solved": True,
                       "limited_by": "weights",
                       "config": {"method": "qlora", "double_quant": True,
                                  "grad_checkpointing": True}, "memory_gb": 50.8,
                       "findings": [{"code": "default_applied", "params": {"field": "double_quant", "value": True}}],
                       "details": {"required_gib": 47.3, "gpus": [{"name": "L40S"}, {"name": "A100 80GB PCIe"}]}},
    "best_gpu_by_cost": {"unknown": "best_gpu_by_cost", "value": 0.0451, "unit": "usd_per_million_tokens",
                         "solved": True, "limited_by": "cost", "memory_gb": 4.99, "gpu_memory_gb": 12.8, "findings": [],
                         "config": {"gpu": "RTX 5070", "gpu_count": 4, "price_usd_per_hour": 0.37,
                                    "offer": {"provider": "vast", "instance_type": "4x-RTX_5070"}},
                         "details": {"runners_up": [{"gpu": "RTX 3060", "gpu_count": 4, "price_usd_per_hour": 0.21,
                                                     "offer": {"provider": "vast"}, "value": 0.0474}]}},
    "min_gpu_count": {"unknown": "min_gpu_count", "value": None, "unit": "GPUs", "solved": False,
                      "limited_by": "optimizer",
                      "config": {"method": "full", "gpus": 8,
                                 "sharding": "fsdp"}, "memory_gb": 881.2, "gpu_memory_gb": 12.9,
                      "findings": [{"code": "exceeds_max_gpus", "params": {"max_gpus": 8, "memory_gb_at_max": 881.2}}]},
}


def _queries() -> dict[str, tuple[dict, list[tuple[str, dict, dict]]]]:
    out = {}
    for kind, (intent, facts, calls) in CALLS.items():
        out[kind] = ({"intents": [intent], **facts}, [(n, a, run_tool(n, a)) for n, a in calls])
    out["way-forward"] = ({"intents": ["fit"], "model": "llama-3.1-8b", "gpus": ["RTX 3060"]},
                          [("vram_calculator", {}, vram(fits=False, mem=12.88)), ("way_forward", {}, LEVERS)])
    for unknown, r in SOLVED.items():
        solve_for = "cheapest_gpu" if unknown == "best_gpu_by_cost" else unknown
        out[f"solve-{unknown}"] = ({"intents": ["fit"], "model": "llama-3.1-70b", "gpus": ["RTX 3060"],
                                    "solve_for": solve_for},
                                   [(f"solve_{unknown}", {"gpu": "RTX 3060"}, r)])
    slow = dict(LEVERS, problem="too_slow", baseline=dict(LEVERS["baseline"], tokens_per_s_per_user=12.5),
                levers=[dict(LEVERS["levers"][0], tokens_per_s_per_user=31.0)])
    out["way-forward-slow"] = ({"intents": ["speed"], "model": "llama-3.1-8b", "gpus": ["RTX 3060"],
                                "min_tokens_per_s": 30}, [("way_forward", {}, slow)])
    out["egress"] = ({"intents": ["cost"], "gpus": ["H100"], "egress_gb": 500, "storage_gb": 200},
                     [("cost_estimator", {}, job_cost(findings=[
                         {"code": "egress_rate_unknown", "params": {"egress_gb": 500, "provider": "hyperbolic"}},
                         {"code": "storage_cost", "params": {"storage_gb": 200, "months": 1, "usd_per_gb_month": 0.07,
                                                             "provider": "hyperbolic", "usd": 14.0}},
                         {"code": "total_unknown", "params": {"unknown": ["egress_usd"]}}],
                         storage_usd=14.0, egress_usd=None, total_usd=None))])
    out["serve-hand"] = ({"intents": ["cost"], "model": "llama-3.1-8b", "gpus": ["L40S"],
                          "carried": ["gpus", "providers"],
                          "not_used": ["42"], "out_of_range": ["10,000,000 tokens"]},
                         [("cost_estimator", {}, serving_cost())])
    return out


@pytest.fixture(scope="module")
def answers() -> dict[tuple[str, str], object]:
    out = {}
    for kind, (facts, done) in _queries().items():
        for lang in ("en", "ur"):
            out[(kind, lang)] = compose(Query(**{"text": "", **facts, "answer_lang": lang}), done)
    return out


def _block_texts(x) -> list[str]:
    if isinstance(x, dict):
        own = [x["text"]] if isinstance(x.get("text"), str) else []
        return own + [t for v in x.values() for t in _block_texts(v)]
    if isinstance(x, list):
        return [t for v in x for t in _block_texts(v)]
    return []


def _renders(s) -> dict[str, str]:
    fallback, blocks = render_slack(s)
    return {"text": render_text(s), "markdown": render_markdown(s), "slack": "\n".join(_block_texts(blocks)),
            "fallback": fallback}


def test_every_kind_renders_with_a_first_statement(answers):
    from assistant.engine.render.catalog import MISSING

    for (kind, lang), s in answers.items():
        text = render_text(s)
        assert text.strip(), kind
        assert s.headline or s.citations or s.notices, (kind, lang)
        assert "notice.part_failed" not in {f.code for f in s.notices}, (kind, lang)
        assert "{" not in text and "}" not in text, (kind, lang, text)  # no unfilled template
        _renders(s)
    assert not MISSING, MISSING  # every code the composer used is in the catalogs


# ---- Urdu answers are Urdu ---------------------------------------------------------------------------
TECH = set("""GB GiB GPU GPUs KV CUDA LoRA QLoRA AWQ GPTQ FSDP ZeRO NVLink PCIe HBM GDDR AdamW Adam adamw vllm vLLM
x AI LLM CPU config.json bf16 fp16 fp8 int8 int4 nf4 FP8 BF16 FP16 INT8 VRAM SXM PCIe NVL B nvidia-smi RAG""".split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+/\-]*")


def _latin_words(text: str) -> list[str]:
    words = [x.rstrip(".,;:-") for w in _WORD.findall(text) for x in w.split("/")]
    return [w for w in words if re.search(r"[A-Za-z]", w) and not re.search(r"\d", w)]


def _names(done, extra: list[str]) -> set[str]:
    """Names an Urdu answer may show in Latin: catalog names, the tool results' names, the Urdu guide's own."""
    from knowledge.catalog import load_diffusion_models, load_gpus, load_models, load_providers
    from knowledge.guide_index import load_passages

    texts = [g.name for g in load_gpus()] + [m.name for m in load_models()] + [m.id for m in load_models()] + extra
    texts += [str(p) for p in (load_providers() or {})]
    texts += [c[0].model_name for c in load_diffusion_models().values()]
    texts += [p.text_ur + " " + p.section_ur for p in load_passages()]
    texts += [v for _, _, r in done for v in _name_values(r)]
    texts += [str(v) for _, a, _ in done for v in a.values()]  # what the user named, echoed back
    return {w for t in texts for w in _latin_words(t)}


_NAME_KEYS = {"provider", "instance_type", "region", "gpu", "name", "id", "model", "engine", "weight_precision",
              "precision", "kv_precision", "optimizer", "accelerator_name"}


def _name_values(x) -> list[str]:
    """The names inside a tool result (providers, instances, regions, GPU and model names), not its prose."""
    if isinstance(x, dict):
        own = [str(v) for k, v in x.items() if k in _NAME_KEYS and isinstance(v, str)]
        return own + [t for v in x.values() for t in _name_values(v)]
    if isinstance(x, list):
        return [t for v in x for t in _name_values(v)]
    return []


def test_urdu_answers_have_no_english_beyond_names_units_and_numbers(answers):
    queries = _queries()
    worst = {}
    for (kind, lang), s in answers.items():
        if lang != "ur":
            continue
        facts, done = queries[kind]
        allowed = TECH | _names(done, [str(v) for v in facts.values()])
        for how, text in _renders(s).items():
            words = _latin_words(re.sub(r":[a-z_]+:", " ", text))  # Slack emoji codes are icons
            bad = [w for w in words if w not in allowed]
            if bad:
                worst[(kind, how)] = bad
    assert not worst, worst


# ---- no code identifiers or CLI flags in chat answers ------------------------------------------------
_CODEISH = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9](?![\w-])|(?<!\w)--[a-z]|(?<!`)`(?!`)")


def test_no_snake_case_or_flags_in_chat_answers(answers):
    found = {}
    for (kind, lang), s in answers.items():
        for how, text in _renders(s).items():
            hits = [m.group() for m in _CODEISH.finditer(text)]
            if hits:
                found[(kind, lang, how)] = hits
    assert not found, found


# ---- citations --------------------------------------------------------------------------------------
def test_citation_ids_exist_and_quotes_are_sentences_of_their_passage(answers):
    from knowledge.guide_index import load_passages

    by_id = {p.id: p for p in load_passages()}
    cited = 0
    for (kind, lang), s in answers.items():
        text = render_text(s)
        assert set(re.findall(r"\[((?:ft|ga)-\d+)\]", text)) <= known_ids(), (kind, lang)
        for c in s.citations:
            cited += 1
            body = by_id[c.id].text(lang)
            assert c.quote.rstrip("…") .split(" ")[0] in body and len(c.quote.split()) >= 5, (kind, c)
            assert not c.quote.rstrip().endswith(("?", "؟")), (kind, c)
    assert cited >= 10


def test_passage_ids_in_the_code_exist():
    """Every guide id the composer can attach is a passage of passages.csv."""
    folder = Path(__file__).parents[2] / "assistant" / "engine" / "compose"
    src = "\n".join(p.read_text(encoding="utf-8") for p in folder.glob("*.py"))
    ids = set(re.findall(r'"((?:ft|ga)-\d\d)"', src))
    assert ids and ids <= known_ids(), ids - known_ids()


# ---- catalogs ----------------------------------------------------------------------------------------
def test_catalogs_have_the_same_keys_and_placeholders():
    en, ur = catalog("en"), catalog("ur")
    assert set(en) == set(ur)
    field = re.compile(r"\{(\w+)")
    for k in en:
        assert set(field.findall(en[k])) >= set(field.findall(ur[k])), k
    assert {p.name for p in MESSAGES_DIR.glob("*.json")} == {"en.json", "ur.json"}


def test_urdu_catalog_is_urdu():
    allowed = TECH | {"Llama", "FLUX", "Adam", "MoE", "JSON", "json", "config", "dev"}
    bad = {k: w for k,
           v in catalog("ur").items() for w in _latin_words(re.sub(r"\{[^}]*\}", " ", v)) if w not in allowed}
    assert not bad, bad


# ---- renderers -------------------------------------------------------------------------------------
def test_markdown_has_headings_one_bullet_per_line_and_regular_tables(answers):
    md = render_markdown(answers[("prices", "en")])
    assert md.startswith("_Understood:") and "\n**Cheapest on-demand" in md and "#### Offers, cheapest first" in md
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len({ln.count(" | ") for ln in rows}) == 1 and len(rows) >= 4
    md = render_markdown(answers[("fit-yes", "en")])
    assert "#### Key numbers" in md and all(ln.count("- ") <= 1 for ln in md.splitlines() if ln.startswith("- "))
    assert "<details><summary>Details from the calculators</summary>" in md


def test_slack_blocks_fit_the_limits_and_put_the_verdict_first(answers):
    for (kind, lang), s in answers.items():
        fallback, blocks = render_slack(s)
        assert fallback and len(blocks) <= 50, kind
        for b in blocks:
            if "text" in b:
                assert len(b["text"]["text"]) <= 3000
            assert len(b.get("fields", [])) <= 10 and all(len(f["text"]) <= 2000 for f in b.get("fields", []))
            assert len(b.get("elements", [])) <= 10 and all(len(e["text"]) <= 2000 for e in b.get("elements", []))
    _, blocks = render_slack(answers[("fit-yes", "en")])
    assert blocks[0]["type"] == "context" and blocks[0]["elements"][0]["text"].startswith("_Understood:")
    assert blocks[1]["text"]["text"].startswith("*Yes — it fits.")
    assert blocks[2]["text"]["text"] == "*Key numbers*" and len(blocks[2]["fields"]) >= 4
    assert blocks[-1]["type"] == "context" and blocks[-1]["elements"][0]["text"].startswith("*[")


def test_image_pipeline_answers_in_both_languages():
    done = [("speed_estimator", {}, run_tool("speed_estimator", {"model": "flux.1-dev", "gpu": "L40S"})),
            ("cost_estimator", {}, run_tool("cost_estimator", {"model": "flux.1-dev", "gpu": "L40S", "serve": True}))]
    en = render_text(compose(Query(intents=["speed"], model="flux.1-dev", gpus=["L40S"]), done))
    sec = done[0][2]["seconds_per_image"]
    assert f"FLUX.1 [dev] on L40S: about {sec:.1f} s per image" in en and "per thousand images" in en
    assert en.count("Time per image:") == 1
    ur = compose(Query(intents=["speed"], model="flux.1-dev", gpus=["L40S"], answer_lang="ur"), done)
    words = [w for w in _latin_words(render_text(ur)) if w not in TECH | _names(done, ["flux.1-dev", "L40S"])]
    assert not words, words


def test_scrubbing_an_unbacked_number_drops_its_statements_and_keeps_the_shape(answers):
    from assistant.engine.render import scrub_sections

    s = answers[("fit-yes", "en")]
    head = render_text(s).split("\n")[2]
    number = re.search(r"leaving (\S+) GB free", head).group(1)
    scrubbed = scrub_sections(s, [number])
    text = render_text(scrubbed)
    assert number not in text and "Key numbers:" in text and "Yes — it fits" not in text
    assert len(scrubbed.key_numbers) == len(s.key_numbers)  # the other statements stay whole
    md = render_markdown(scrub_sections(answers[("prices", "en")], ["1.29"]))
    assert "1.29" not in md and "#### Offers, cheapest first" in md


@pytest.mark.parametrize("raw, shown", [
    pytest.param("gpu_1x_h100_pcie", "1x H100 PCIe", id="lambda-lower-case"),
    pytest.param("gpu_8x_b200_sxm6", "8x B200 SXM6", id="lambda-sxm"),
    pytest.param("Standard_NC24ads_A100_v4", "Standard NC24ads A100 v4", id="azure"),
    pytest.param("1x_A100-80GB-SXM_SECURE", "1x A100-80GB-SXM Secure", id="runpod"),
    pytest.param("gpu-l40s-a_1gpu-16vcpu-64gb", "gpu-l40s-a 1gpu-16vcpu-64gb", id="nebius-hyphens-kept"),
    pytest.param("a3-highgpu-1g", "a3-highgpu-1g", id="no-underscore-unchanged"),
])
def test_instance_ids_read_without_underscores(raw, shown):
    from assistant.engine.render.catalog import instance_name, message

    assert instance_name(raw) == shown
    assert message("ur", "name.instance", {"id": raw}) == shown
