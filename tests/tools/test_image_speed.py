"""Image-generation speed worked by hand (UNet and MMDiT) with a stated framework profile on a round
GPU, the power cap of low-power boards, and the estimator against the published measurements
(tests/data/image_speed_measurements.csv)."""

import csv
from pathlib import Path

import pytest

from benchmarks.image_accuracy import errors, predict, predict_full, speed_rows, summary
from knowledge.catalog import load_diffusion_arch, load_diffusion_models, load_gpus, load_image_frameworks
from tools.diffusion import ImageRequest
from tools.image_speed import ImageFramework, estimate_image_speed, roofline_gb
from tools.schemas import GpuSpec

ARCH = load_diffusion_arch()
PIPES = load_diffusion_models()
GPUS = {g.id: g for g in load_gpus()}
# Round numbers so the arithmetic below is checkable: 400 TFLOPS, 1,250 GB/s (x 0.8 = 1,000 GB/s
# streamed); efficiency 0.32 puts the matmul/conv ridge at 400e12 x 0.32 / 1e12 = 128 FLOP/B, a
# counted point. The fitted profiles live in knowledge/diffusion_frameworks.csv.
ROUND = GpuSpec(id="round", name="Round GPU", memory_gib=80, bf16_dense_tflops=400, mem_bandwidth_gb_per_s=1250)
FW = ImageFramework(id="t", name="test", compute_eff=0.32, conv_eff=0.32, attn_eff=0.5, elementwise_traffic=1.0,
                    launch_us_per_op=10.0, gpu_us_per_op=2.0, power_fraction=1.0)


def test_sd15_unet_step_by_hand():
    e = estimate_image_speed(PIPES["sd-1.5"], ARCH["sd-1.5"], ROUND, FW, ImageRequest(width=512, height=512, steps=50))
    # CFG 7.5: 2 rows. Counted per row at 512 px (denoiser_profile_512): gconv_128 3.47216 GB,
    # gmm_128 1.82246 GB, attention 0.126052 TFLOP, elementwise 1.951 GB, 888 ops; weights 1.71904 GB
    # conv 2 x 3.47216 / 1,000 GB/s = 6.94432 ms; matmul 2 x 1.82246 / 1,000 = 3.64492 ms
    # attention 2 x 0.126052e12 / (400e12 x 0.5) = 1.26052 ms; elementwise 2 x 1.951 / 1,000 = 3.902 ms
    # kernels 888 x 2 us = 1.776 ms; weights 1.71904 ms -> GPU 19.2468 ms > launches 888 x 10 us = 8.88 ms
    assert e.step_ms["total"] == pytest.approx(19.2468, abs=2e-3)
    assert e.steps_per_s == pytest.approx(1000 / 19.2468, rel=1e-3)
    assert e.bound == "compute"


def test_flux_dev_mmdit_step_by_hand():
    e = estimate_image_speed(PIPES["flux.1-dev"], ARCH["flux.1-dev"], ROUND, FW, ImageRequest(width=1024, height=1024,
                                                                                              steps=28))
    # guidance-distilled: 1 row. Counted at 1024 px: gmm_128 464.966 GB, no convolutions, attention
    # 14.8724 TFLOP, elementwise 210.962 GB, 3,911 ops; bf16 transformer weights 23.80282 GB
    # matmul 464.966 ms + attention 14.8724e12 / 200e12 = 74.362 ms + elementwise 210.962 ms
    # + kernels 3,911 x 2 us = 7.822 ms + weights 23.80282 ms = 781.915 ms
    assert e.step_ms["total"] == pytest.approx(781.915, abs=0.05)
    assert e.time_s["denoise"] == pytest.approx(28 * 0.781915, abs=2e-3)


def test_roofline_between_counted_ridges():
    p = ARCH["sd-1.5"].profile_at("denoiser", 512, 512)
    assert roofline_gb(p, "conv", 128) == pytest.approx(p["gconv_128"])
    # log-log halfway between 128 and 256 FLOP/B: the geometric mean of the two counted points
    assert roofline_gb(p, "conv", 128 * 2 ** 0.5) == pytest.approx((p["gconv_128"] * p["gconv_256"]) ** 0.5)
    # below the first ridge every kernel is FLOP-bound: FLOPs / ridge
    assert roofline_gb(p, "conv", 8) == pytest.approx(p["gconv_16"] * 2)


def test_cfg_doubles_the_denoiser_work_unless_distilled():
    sd = lambda g: estimate_image_speed(PIPES["sd3-medium"], ARCH["sd3-medium"], ROUND, FW,  # noqa: E731
                                        ImageRequest(guidance=g, steps=28))
    assert sd(7.0).step_ms["compute"] == pytest.approx(2 * sd(1.0).step_ms["compute"], rel=1e-9)
    fl = lambda g: estimate_image_speed(PIPES["flux.1-dev"], ARCH["flux.1-dev"], ROUND, FW,  # noqa: E731
                                        ImageRequest(guidance=g, steps=28))
    assert fl(3.5).step_ms["compute"] == pytest.approx(fl(1.0).step_ms["compute"], rel=1e-9)


def test_a_low_power_board_runs_below_its_peak():
    t4 = GPUS["t4"]
    # T4: 70 W x (89.2 TFLOPS / 230 W of the same TU104 chip in a Quadro RTX 5000) = 27.147 TFLOPS
    assert t4.sustained_tensor_tflops == pytest.approx(70 * 89.2 / 230, rel=1e-3)
    half = FW.model_copy(update={"power_fraction": 0.5})
    req = ImageRequest(width=512, height=512, steps=30)
    # drawing half the chip's full-load power, the board holds 27.147 / 0.5 = 54.29 of its 65 TFLOPS
    slow = estimate_image_speed(PIPES["sd-1.5"], ARCH["sd-1.5"], t4, half, req)
    free = estimate_image_speed(PIPES["sd-1.5"], ARCH["sd-1.5"], t4.model_copy(update={"board_power_w": None}), half, req)
    assert slow.step_ms["compute"] > free.step_ms["compute"]
    assert slow.assumptions and "power" in " ".join(slow.assumptions)
    # a card that holds its clocks (H100 SXM: its own full-load figure) is not capped
    assert GPUS["h100-sxm"].sustained_tensor_tflops is None


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
    assert s["median_abs_pct"] <= 20.0, s
