"""Image-generation speed worked by hand (UNet and MMDiT) with a stated framework profile, and the
estimator against the published measurements (tests/data/image_speed_measurements.csv)."""

import csv
from pathlib import Path

import pytest

from benchmarks.image_accuracy import errors, predict, predict_full, speed_rows, summary
from knowledge.catalog import load_diffusion_arch, load_diffusion_models, load_gpus, load_image_frameworks
from tools.diffusion import ImageRequest
from tools.image_speed import ImageFramework, estimate_image_speed

ARCH = load_diffusion_arch()
PIPES = load_diffusion_models()
GPUS = {g.id: g for g in load_gpus()}
# A round profile so the arithmetic below is checkable; the fitted ones live in knowledge/diffusion_frameworks.csv.
FW = ImageFramework(id="t", name="test", compute_eff=0.5, unet_bytes_per_flop=0.01, transformer_bytes_per_flop=0.005,
                    overhead_ms_per_step=10.0)


def test_sd15_unet_step_by_hand():
    e = estimate_image_speed(PIPES["sd-1.5"], ARCH["sd-1.5"], GPUS["a100-80gb-sxm"], FW,
                             ImageRequest(width=512, height=512, steps=50))
    # CFG 7.5: 2 x 0.80327 TFLOP = 1.60654e12 FLOP per step
    # compute 1.60654e12 / (312e12 x 0.5) = 10.2984 ms
    # memory (859.52M x 2 B + 1.60654e12 x 0.01 B) / 2,039 GB/s = 17.78444e9 / 2.039e12 = 8.72214 ms
    # launch cost 10 ms x 486/486 = 10 ms < GPU work 19.0205 ms, so the step is 19.0205 ms
    assert e.step_ms["total"] == pytest.approx(19.0205, abs=1e-3)
    assert e.steps_per_s == pytest.approx(1000 / 19.0205, rel=1e-4)
    assert e.bound == "compute"


def test_flux_dev_mmdit_call_by_hand():
    e = estimate_image_speed(PIPES["flux.1-dev"], ARCH["flux.1-dev"], GPUS["h100-sxm"], FW,
                             ImageRequest(width=1024, height=1024, steps=28))
    # guidance-distilled: 74.38465 TFLOP per step (one pass)
    # compute 74.38465e12 / (989e12 x 0.5) = 150.4240 ms
    # memory (23.80282e9 + 74.38465e12 x 0.005) / 3.35e12 = 395.72607e9 / 3.35e12 = 118.1272 ms -> step 268.5512 ms
    assert e.step_ms["total"] == pytest.approx(268.5512, abs=1e-2)
    # text: 2 x 4,885.37M params x 512 tokens = 5.00262e12 FLOP / 494.5e12 = 10.116 ms + 9.77074 GB / 3.35 TB/s = 2.917 ms
    assert e.time_s["text_encode"] == pytest.approx(0.013033, abs=1e-5)
    # VAE: 10.47221e12 / 494.5e12 = 21.177 ms + 10.47221e12 x 0.01 / 3.35e12 = 31.260 ms
    assert e.time_s["vae_decode"] == pytest.approx(0.052438, abs=1e-5)
    # 28 x 0.2685512 + 0.013033 + 0.052438 = 7.584904 s per image
    assert e.seconds_per_image == pytest.approx(7.584904, abs=1e-4)
    assert e.images_per_hour == pytest.approx(3600 / 7.584904, rel=1e-4)


def test_cfg_doubles_the_denoiser_work_unless_distilled():
    sd = lambda g: estimate_image_speed(PIPES["sd3-medium"], ARCH["sd3-medium"], GPUS["h100-sxm"], FW,  # noqa: E731
                                        ImageRequest(guidance=g, steps=28))
    assert sd(7.0).step_ms["compute"] == pytest.approx(2 * sd(1.0).step_ms["compute"], rel=1e-9)
    fl = lambda g: estimate_image_speed(PIPES["flux.1-dev"], ARCH["flux.1-dev"], GPUS["h100-sxm"], FW,  # noqa: E731
                                        ImageRequest(guidance=g, steps=28))
    assert fl(3.5).step_ms["compute"] == pytest.approx(fl(1.0).step_ms["compute"], rel=1e-9)


def test_sequential_offload_is_bound_by_copies():
    e = estimate_image_speed(PIPES["flux.1-dev"], ARCH["flux.1-dev"], GPUS["rtx-4090"], FW,
                             ImageRequest(steps=28, placement="sequential-offload"))
    assert e.bound == "offload"
    # 4 GB/s, the default set from the published sequential-offload run (tools.diffusion.OFFLOAD_SOURCE)
    assert e.time_s["offload_copies"] == pytest.approx((9.93838 + 23.80282 * 28) / 4, abs=1e-2)


def test_fast_path_equals_the_estimator_on_every_row():
    fws = {f.id: f for f in load_image_frameworks()}
    for row in speed_rows():
        assert predict(row, fws[row.framework]) == pytest.approx(predict_full(row, fws[row.framework]), rel=1e-9), row.id


def test_measurement_table_is_big_cited_and_varied():
    rows = list(csv.DictReader(open(Path(__file__).resolve().parents[1] / "data" / "image_speed_measurements.csv")))
    scored = [r for r in rows if not r["exclude"]]
    assert len(scored) >= 25
    assert len({r["source"] for r in scored}) >= 4
    assert {r["framework"] for r in scored} >= {"diffusers", "torch-compile", "tensorrt"}
    assert {ARCH[r["pipeline"]].family for r in scored} >= {"unet", "mmdit", "dit"}
    for r in rows:
        assert r["source"].startswith("https://") and r["notes"], r["id"]
        for k in ("gpu_id", "pipeline", "width", "steps", "batch", "framework"):
            assert r[k], (r["id"], k)


def test_in_sample_error_of_the_catalog_profiles():
    # guard against a broken refit or data change; the target and the LOSO figure are in benchmarks/
    s = summary(errors([r for r in speed_rows() if not r.exclude], {f.id: f for f in load_image_frameworks()}))
    assert s["median_abs_pct"] <= 25.0, s
