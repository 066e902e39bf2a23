"""Image pipelines through the API and the CLI: the speed JSON contract, placements, costs with
per-second vs per-hour billing, recommendations, and clear refusals of LLM-only options."""

import json

import pytest

from assistant.service import api
from assistant.main import main
from tools.errors import AdvisorError, InvalidCombination, InvalidInput


def _cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_speed_cli_contract_for_sdxl_on_l4(capsys):
    rc, out, _ = _cli(capsys, "speed", "--model", "sdxl", "--gpu", "L4", "--resolution", "1024", "--steps", "30", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["estimate"] is True and d["bound"] in ("compute", "memory", "overhead", "offload")
    assert d["images_per_hour"] == pytest.approx(3600 / d["seconds_per_image"])
    assert d["inputs"]["width"] == 1024 and d["inputs"]["steps"] == 30 and d["inputs"]["cfg"] is True
    assert d["assumptions"] and d["memory"]["fits"] is True
    rc, out, _ = _cli(capsys, "speed", "--model", "sdxl", "--gpu", "L4", "--steps", "30", "--engine", "tensorrt",
                      "--batch", "4", "--json")
    trt = json.loads(out)
    assert trt["engine"] == "tensorrt" and trt["seconds_per_image"] < d["seconds_per_image"]


def test_speed_text_output_names_the_bound(capsys):
    rc, out, _ = _cli(capsys, "speed", "--model", "flux.1-schnell", "--gpu", "H100", "--steps", "4")
    assert rc == 0 and "seconds per image" in out and "ESTIMATE" in out and "-bound" in out


def test_resolution_forms_and_bad_values(capsys):
    e = api.image_speed(model="sd-1.5", gpu="RTX 4090", resolution="512x768")
    assert (e.inputs["width"], e.inputs["height"]) == (512, 768)
    rc, _, err = _cli(capsys, "speed", "--model", "sdxl", "--gpu", "L4", "--resolution", "big")
    assert rc == 2 and "resolution" in err and "1024x768" in err
    rc, _, err = _cli(capsys, "vram", "--model", "sdxl", "--placement", "cloud")
    assert rc == 2 and "placement" in err and "sequential-offload" in err


def test_llm_only_options_are_named_as_ignored_for_image_pipelines(capsys):
    rc, out, _ = _cli(capsys, "speed", "--model", "sdxl", "--gpu", "L4", "--prompt-tokens", "100", "--json")
    assert rc == 0
    assert any("Ignored for an image pipeline: prompt_tokens" in a for a in json.loads(out)["assumptions"])
    v = api.vram(model="flux.1-dev", seq_len=4096)   # what the chat router sends by default
    assert any("seq_len" in a for a in v.assumptions)
    with pytest.raises(InvalidInput, match="resolution"):
        api.image_vram(model="sdxl", colour="red")
    with pytest.raises(InvalidInput, match="inference for image pipelines"):
        api.vram(model="sdxl", method="lora")


def test_flux_dev_on_a_16gb_card_lists_what_fits():
    est = api.vram(model="flux dev", gpu_memory_gb=16)
    assert est.fit is not None and not est.fit.fits
    assert "sequential-offload" in est.assumptions[0]
    small = api.vram(model="flux dev", gpu_memory_gb=16, weight_precision="fp8", text_encoder_precision="nf4",
                     placement="text-encoders-dropped")
    assert small.fit.fits


def test_vram_cli_placements_and_offload_flag(capsys):
    rc, out, _ = _cli(capsys, "vram", "--model", "flux.1-dev", "--json")
    full = json.loads(out)
    rc, out, _ = _cli(capsys, "vram", "--model", "flux.1-dev", "--placement", "model-offload", "--json")
    off = json.loads(out)
    assert off["total_gb"] < full["total_gb"] and off["placement"] == "model-offload"
    assert {p["placement"] for p in full["placements"]} == {"all-on-gpu", "text-encoders-dropped", "model-offload",
                                                             "sequential-offload"}
    assert "vae_decode" in full["components_gb"] and full["stages_gb"]["vae_decode"] == pytest.approx(full["total_gb"])


def test_batch_job_cost_per_second_vs_per_hour(capsys):
    # aws bills per second (60 s minimum); seeweb's unit is unknown, so started hours are counted (the worst
    # case, knowledge/providers.csv); same price given
    per_s = api.cost(model="sdxl", gpu="L4", images=200, steps=30, provider="aws", price_usd_per_hour=0.80)
    per_h = api.cost(model="sdxl", gpu="L4", images=200, steps=30, provider="seeweb", price_usd_per_hour=0.80)
    assert any("started hours" in a for a in per_h["assumptions"])
    js, jh = per_s["batch_job"], per_h["batch_job"]
    assert js["runtime_hours"] == pytest.approx(jh["runtime_hours"])
    assert js["runtime_hours"] < 1
    assert js["on_demand_cost_usd"] == pytest.approx(js["runtime_hours"] * 0.80, rel=1e-3)
    assert jh["on_demand_cost_usd"] == pytest.approx(0.80)   # one started hour
    assert js["billing"]["per_hour_usd"] == pytest.approx(0.80)
    rc, out, _ = _cli(capsys, "cost", "--model", "sdxl", "--gpu", "L4", "--images", "10k", "--price-usd-per-hour", "0.8",
                      "--provider", "aws")
    assert rc == 0 and "Batch job: 10,000 images" in out and "per 1,000 images" in out


def test_endpoint_cost_at_a_load():
    d = api.cost(model="sdxl", gpu="L4", serve=True, images_per_hour=500, price_usd_per_hour=0.80, provider="aws")
    e = d["endpoint"]
    per_hour = d["speed"]["images_per_hour"]
    assert e["replicas"] == -(-500 // per_hour) if per_hour < 500 else e["replicas"] == 1
    assert e["usd_per_1000_images"] == pytest.approx(e["replicas"] * 0.80 / 500 * 1000)


def test_cost_needs_a_job_or_an_endpoint():
    with pytest.raises(InvalidCombination, match="--images"):
        api.cost(model="sdxl", gpu="L4", price_usd_per_hour=1.0)


def test_recommend_batch_job_and_endpoint():
    rec = api.recommend(model="flux schnell", images=50_000, deadline_hours=24, top_n=3)
    assert rec.status == "ok" and rec.options
    assert all(o["hours"] <= 24 for o in rec.options)
    costs = [o["rank_cost"] for o in rec.options]
    assert costs == sorted(costs)
    ep = api.recommend(model="sdxl", concurrent_users=20, max_latency_s=30, top_n=3)
    assert ep.status == "ok"
    assert all(o["latency_s"] <= 30 and o["replicas"] * o["batch_per_replica"] >= 20 for o in ep.options)
    need = api.recommend(model="sdxl", workload="batch")
    assert need.status == "needs_input" and need.missing == ["images"]


def test_llm_paths_are_unchanged():
    s = api.speed(model="llama-3.1-8b", gpu="H100")
    assert s.decode_tokens_per_s > 0 and not hasattr(s, "seconds_per_image")
    with pytest.raises(AdvisorError):
        api.speed(model="no-such-model-xyz", gpu="H100")
