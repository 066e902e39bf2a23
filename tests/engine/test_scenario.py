"""One resolved scenario per answer: a GPU family is resolved once, and every tool of the turn uses that card.

Worked by hand: Llama 3.1 70B in bf16 is ~70.6e9 params x 2 bytes = 141 GB of weights, ~71 GB per GPU over 2
GPUs, so neither 40 GB A100 holds it and an 80 GB card is needed; before this, the memory check ran on the
A100 80GB SXM while the price came from an A100 40GB PCIe offer.
"""

from assistant.engine.scenario import resolve_scenarios
from assistant.engine.understand import understand_turn
from assistant.service.registry import run_tool


def _gpus_used(calls):
    out = set()
    for name, args in calls:
        if args.get("gpu"):
            out.add(args["gpu"])
    return out


def test_an_ambiguous_a100_is_one_card_that_fits_for_every_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("Can I run Llama 3.1 70B on 2 A100s and what would it cost per month?")
    used = {c.args.get("gpu") for c in ans.tool_calls if c.args.get("gpu")}
    assert len(used) == 1, used
    card = used.pop()
    assert "80GB" in card  # the 40 GB variants cannot hold ~71 GB per GPU
    priced = [o for c in ans.tool_calls if c.name == "cost_estimator" for o in [c.result.get("offer") or {}]]
    assert priced and all((o.get("gpu") or card) == card for o in priced)
    assert "covers several cards" in ans.answer


def test_a_named_variant_is_kept_and_no_choice_is_said():
    q = understand_turn("Can I run Llama 3.1 8B on an A100 40GB PCIe?", None)
    q2, scen = resolve_scenarios(q, run_tool)
    assert q2.gpus == q.gpus and scen[0].gpu_choice is None


def test_nothing_fits_takes_the_card_the_name_means():
    # 405B in bf16 is ~810 GB: no single A100 holds it; the answer is about the A100 the name means (80GB SXM, gpus.csv family_default)
    q = understand_turn("Can I run Llama 3.1 405B on one A100?", None)
    q2, scen = resolve_scenarios(q, run_tool)
    choice = scen[0].gpu_choice
    assert choice is not None and choice.why == "none_fit_default" and choice.chosen == "A100 80GB SXM"
    assert q2.gpus == [choice.chosen]


def test_the_filters_of_the_question_are_the_scenarios():
    q = understand_turn("Which GPU to serve Mistral 7B for 20 users, Europe only, no spot?", None)
    _, scen = resolve_scenarios(q, run_tool)
    assert scen[0].filters.regions == ["europe"] and scen[0].filters.spot is False


def test_europe_only_leaves_only_european_offers_in_a_recommendation(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api
    from knowledge.prices.regions import locate

    ans = api.advisor().ask("Which GPU should I rent to serve Mistral 7B for 20 users, Europe only, no spot?")
    rec = [c for c in ans.tool_calls if c.name == "recommend_gpus"]
    assert rec and rec[0].args.get("regions") == ["europe"]
    offers = [o["offer"] for o in rec[0].result.get("options", []) if o.get("offer")]
    assert offers, "European offers exist for a 7B endpoint"
    assert all(locate(o["provider"], o["region"]).continent == "europe" for o in offers), offers


def test_europe_only_for_an_image_job_leaves_only_european_offers():
    import tempfile

    from assistant.service.advisor import Advisor

    adv = Advisor(checkpoint_path=tempfile.mktemp(suffix=".sqlite"))
    a = adv.ask("Flux dev se 10 hazar images, 1024 resolution. data sirf europe mein rehna chahiye. kaun sa provider?")
    [rec] = [c for c in a.tool_calls if c.name == "recommend_gpus"]
    assert rec.args["regions"] == ["europe"] and a.coherence["ok"], a.coherence


def test_the_largest_model_that_fits_is_solved_without_a_model(tmp_path, monkeypatch):
    # QLoRA on a 48 GB card at 2,048 tokens: the QLoRA paper fine-tuned a 65B model on one 48 GB GPU
    # (Dettmers et al. 2023), so the largest size is about 65-80B and the 70B models fit, tightly
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("biggest model I can QLoRA finetune on a single 48GB card (A6000), seq 2048?")
    (c,) = [c for c in ans.tool_calls if c.name == "solve_for"]
    assert c.args["unknown"] == "max_params" and "model" not in c.args
    assert 60 <= c.result["value"] <= 85
    assert any("70B" in m["name"] for m in c.result["details"]["models"])
    assert "Which model" not in ans.answer and "largest model that fits" in ans.answer


def test_a_family_name_with_nothing_fitting_means_its_default_card():
    # DeepSeek-V3 in FP8 is ~671 GB of weights: 8 x 80 GB cannot hold it, 16 can; 'H100' is the SXM card,
    # not the 94 GB H100 NVL (8 of which would hold it)
    q = understand_turn("How many H100 do we need for DeepSeek-V3 (671B) in FP8?", None)
    q2, scen = resolve_scenarios(q, run_tool)
    assert scen[0].gpu_choice is not None and scen[0].gpu_choice.chosen == "H100 SXM"
    r = run_tool("solve_for", {"unknown": "min_gpu_count", "model": q2.model, "gpu": "H100 SXM",
                               "weight_precision": "fp8"})
    assert r["value"] == 16


def test_the_hours_a_budget_buys_come_first_and_a_multi_gpu_only_provider_is_said(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("How many hours of A100 80GB does $300 buy me on RunPod vs AWS?")
    costs = [c for c in ans.tool_calls if c.name == "cost_estimator"]
    assert len(costs) == 2 and all(c.args.get("budget_usd") == 300 and "hours" not in c.args for c in costs)
    for c in costs:
        hb, price = c.result["hours_for_budget"], c.result["offer"]["price_usd_per_hour"]
        assert hb["hours"] * price <= 300 + 1e-6 and hb["hours"] * price > 300 - price  # within one hour's price
    first = ans.answer.split("\n\n")[1]
    assert first.startswith("**$300 buys") and "runpod" in first and "aws" in first
    assert "smallest instance" in ans.answer  # AWS sells the A100 80GB as 8 in one p4de


def test_nothing_at_16_bit_is_recommended_at_fp8_or_4_bit_and_says_so(tmp_path, monkeypatch):
    # Llama 3.1 405B in bf16 is ~810 GB of weights: no box of up to 8 GPUs in the catalog holds it with room
    # for the KV cache; at FP8 (~405 GB) or 4-bit (~203 GB) 4-8 80 GB GPUs do
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("How would you set up inference for Llama 3.1 405B? Which GPUs, precision, parallelism?")
    recs = [c for c in ans.tool_calls if c.name == "recommend_gpus"]
    assert len(recs) == 2 and not recs[0].result["options"] and recs[1].args["precisions"] == ["fp8", "int4"]
    assert all(o["precision"] in ("fp8", "int4") for o in recs[1].result["options"])
    assert "16-bit" in ans.answer and "Weight precision" in ans.answer
    assert not [c for c in ans.tool_calls if c.name == "way_forward"]  # options exist: no levers on a B300


def test_over_budget_says_the_cheapest_that_works(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("serve Llama 3.1 70B for 50 users at the same time, budget $300 a month, which GPU?")
    # 70B in bf16 (~141 GB of weights) for 50 sequences needs several 80 GB GPUs: thousands a month, not $300
    (rec,) = [c for c in ans.tool_calls if c.name == "recommend_gpus"][:1]
    assert rec.args["max_usd_per_hour"] == round(300 / 730, 6) and not rec.result["options"]
    cheapest = rec.result["over_budget"][0]
    assert cheapest["monthly_usd"] > 300 and cheapest["gpu_count"] >= 2
    assert ans.answer.split("\n\n")[1].startswith("**Nothing fits within")


def test_a_compliance_question_gets_cloud_providers_and_shows_each_offers_region(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api
    from knowledge.prices.regions import locate

    ans = api.advisor().ask("We're EU-based (GDPR), want to self-host Mistral Small 24B for ~150 employees. What should we rent?")
    (rec,) = [c for c in ans.tool_calls if c.name == "recommend_gpus"][:1]
    # ~150 employees are people who use it in a day (10 requests each), not 150 users online at once
    assert rec.args.get("production") is True and rec.args.get("requests_per_day") == 1500
    opts = rec.result["options"]
    assert opts and all(o["offer"]["provider"] not in ("vast", "lium") for o in opts)  # no marketplaces of hosts
    assert "| Region |" in ans.answer
    assert all(locate(o["offer"]["provider"], o["offer"]["region"]).continent == "europe" for o in opts)


def test_zero_bits_is_named_as_an_invalid_value_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("VRAM for llama 3.1 8b with context length -4096 and batch size 0.5? also quantize it to 0 bits pls")
    assert not ans.answer.startswith("Sorry") and "-4096" in ans.answer and "0.5" in ans.answer


def test_a_family_default_that_does_not_fit_is_said_with_the_variant_that_would():
    # 70B at FP8 with a 32k context needs ~97 GB per GPU: not the 80 GB H100 SXM, the 94 GiB H100 NVL only
    q = understand_turn("Can I run Llama 3.1 70B at fp8 with 32k context on one H100?", None)
    _, scen = resolve_scenarios(q, run_tool)
    c = scen[0].gpu_choice
    assert c.chosen == "H100 SXM" and c.why == "default_no_fit" and c.fits_on == ["H100 NVL"]


def test_the_largest_model_on_two_cards_splits_its_heads():
    # two 24 GB cards at 4-bit and 8k: a 70B-class model (the QLoRA-era rule: ~0.55 bytes a parameter)
    r = run_tool("solve_for", {"unknown": "max_params", "gpu": "RTX 4090", "gpus": 2, "weight_precision": "int4",
                               "seq_len": 8192})
    assert "error" not in r and 60 <= r["value"] <= 90


def test_a_serving_engine_named_prefills_in_chunks_in_the_fit(tmp_path, monkeypatch):
    # vLLM prefills 8,192 tokens a step: at a 32k context its activations are a chunk's, so the same fit needs
    # less memory under vLLM than under plain transformers (the whole prompt at once)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    def need(text):
        (v,) = [c for c in api.advisor().ask(text).tool_calls if c.name == "vram_calculator"][:1]
        return v.args.get("prefill_chunk_tokens"), v.result["total_gb"]

    (chunk, vllm), (none, plain) = need("llama 3.1 8b fp16 on an L4 with 32k context using vllm, fits?"), \
        need("llama 3.1 8b fp16 on an L4 with 32k context with plain hf transformers, fits?")
    assert chunk == 8192 and none is None and vllm < plain
    # no engine named: the serving default's chunks (the same engine the speed figures assume), said so
    ans = api.advisor().ask("llama 3.1 8b fp16 on an L4 with 32k context, fits?")
    (v,) = [c for c in ans.tool_calls if c.name == "vram_calculator"][:1]
    assert v.args.get("prefill_chunk_tokens") == 8192 and v.result["total_gb"] == vllm
    assert "prefilled in chunks of 8,192 tokens" in ans.answer
    # a short context is below one chunk: nothing to chunk, nothing said
    short = api.advisor().ask("llama 3.1 8b fp16 on an L4 with 4k context, fits?")
    assert "prefill_chunk_tokens" not in short.tool_calls[0].args and "prefilled in chunks" not in short.answer


def test_a_tight_fit_is_said_as_tight_with_the_lever_that_gives_margin(tmp_path, monkeypatch):
    # 8B fp16 at 32k under vLLM on an L4: ~23.0 of 24.2 GB, under 5 % free; an FP8 KV cache halves the
    # KV cache's 4.3 GB and gives margin
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("can i run llama 3.1 8b in fp16 on a single L4 w/ 32k context? using vllm")
    head = ans.answer.split("\n\n")[1]
    assert head.startswith("**Yes, but tightly") and "under 5 %" in head and "FP8 KV cache" in head
