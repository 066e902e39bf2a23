"""Integrity of the image-generation data: architecture facts, framework profiles, measurement tables."""

import csv
from pathlib import Path

from knowledge.catalog import load_diffusion_arch, load_diffusion_models, load_image_frameworks

DATA = Path(__file__).resolve().parents[1] / "data"


def test_every_pipeline_has_architecture_facts_with_a_source():
    arch, pipes = load_diffusion_arch(), load_diffusion_models()
    assert set(arch) == set(pipes)
    for mid, a in arch.items():
        assert a.source.startswith("FLOPs"), mid
        assert a.denoiser_tflop[0] < a.denoiser_tflop[1] < a.denoiser_tflop[2], mid
        assert a.vae_decode_tflop[0] < a.vae_decode_tflop[1] < a.vae_decode_tflop[2], mid
        # 4x the pixels from 512 to 1024: at least 3x the FLOPs (the text tokens of a transformer are a
        # fixed part: FLUX.1 dev 1,536 -> 4,608 tokens gives 3.46x), more than 4x with attention over pixels
        assert a.denoiser_tflop[2] >= 3.0 * a.denoiser_tflop[0], mid
        assert a.default_steps >= 1 and a.default_resolution in (512, 768, 1024)


def test_framework_profiles_are_fitted_or_say_why_not():
    fws = {f.id: f for f in load_image_frameworks()}
    assert {"diffusers", "torch-compile", "tensorrt", "comfyui"} <= set(fws)
    for f in fws.values():
        assert 0 < f.compute_eff <= 1 and f.source, f.id
        assert f.source.startswith("fitted by benchmarks/image_accuracy.py") or f.source.startswith("not fitted"), f.id


def test_memory_table_is_cited_and_covers_offload():
    rows = list(csv.DictReader(open(DATA / "image_memory_measurements.csv")))
    scored = [r for r in rows if not r["exclude"]]
    assert len(scored) >= 8
    assert {r["placement"] for r in scored} >= {"all-on-gpu", "model-offload", "sequential-offload"}
    assert len({r["source"] for r in scored}) >= 3
    for r in rows:
        assert r["source"].startswith("https://") and r["notes"] and float(r["measured_gib"]) > 0, r["id"]
        assert r["metric"] in ("reserved", "allocated", "device_used"), r["id"]
