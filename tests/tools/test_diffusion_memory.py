"""Image-pipeline memory worked by hand: one UNet pipeline (SDXL), one MMDiT (FLUX.1 dev), the VAE
decode peak, the placements and their copy costs."""

import pytest

from knowledge.catalog import load_diffusion_arch, load_diffusion_models
from tools.diffusion import (ImageRequest, estimate_diffusion_vram, estimate_image_memory, vae_decode_peak_gb)
from tools.errors import InvalidInput
from tools.schemas import GpuMemory, validated

ARCH = load_diffusion_arch()
PIPES = load_diffusion_models()


def _mem(model, **req):
    return estimate_image_memory(PIPES[model], ARCH[model], ImageRequest(**req))


def test_vae_decode_peak_by_hand():
    # 3 x 256 channels live at full resolution: 768 x 1024 x 1024 px x 2 B (fp16) = 1,610,612,736 B
    assert vae_decode_peak_gb(1024, 1024, 1, "fp16") == pytest.approx(1.610612736)
    # fp32 VAE (SDXL's default) doubles it; four images decoded at once quadruple it
    assert vae_decode_peak_gb(1024, 1024, 1, "fp32") == pytest.approx(3.221225472)
    assert vae_decode_peak_gb(1024, 1024, 4, "fp16") == pytest.approx(4 * 1.610612736)
    # 512 x 512 is a quarter of the pixels
    assert vae_decode_peak_gb(512, 512, 1, "fp16") == pytest.approx(1.610612736 / 4)


def test_sdxl_unet_pipeline_by_hand():
    e = _mem("sdxl-base-1.0", width=1024, height=1024, steps=30)
    # weights: UNet 2,567.46M x 2 B = 5.13492; CLIP-L 123.06M x 2 = 0.24612; OpenCLIP-G 694.66M x 2 = 1.38932;
    # VAE 83.65M x 4 B (fp32, force_upcast) = 0.3346  -> 7.10496 GB
    assert sum(e.weights_gb.values()) == pytest.approx(7.10496, abs=1e-5)
    # denoise stage: CFG (guidance 5.0) = 2 rows x the counted peak of live activations of one UNet
    # forward at 1024 px (0.165156 GB, knowledge/diffusion_arch.csv denoiser_profile_1024 peak_gb)
    assert e.stages_gb["denoise"] == pytest.approx(7.10496 + 2 * 0.165156 + 0.5, abs=1e-5)
    # VAE decode in fp32: 768 x 1024^2 x 4 B = 3.221225 GB: the real peak of the call
    assert e.stages_gb["vae_decode"] == pytest.approx(7.10496 + 3.221225 + 0.5, abs=1e-5)
    assert e.total_gb == pytest.approx(10.826185, abs=1e-5)
    assert "vae_decode" in e.components_gb and sum(e.components_gb.values()) == pytest.approx(e.total_gb, abs=1e-5)


def test_flux_mmdit_pipeline_and_placements_by_hand():
    e = _mem("flux.1-dev", width=1024, height=1024, steps=28)
    # weights bf16: transformer 11,901.41M x 2 = 23.80282; CLIP 0.24612; T5 4,762.31M x 2 = 9.52462; VAE 0.16764
    assert sum(e.weights_gb.values()) == pytest.approx(33.7412, abs=1e-4)
    # guidance-distilled: one pass per step; the counted peak of one forward at 1024 px = 0.48615 GB
    assert e.stages_gb["denoise"] == pytest.approx(33.7412 + 0.48615 + 0.5, abs=1e-4)
    # VAE decode bf16: 768 x 1024^2 x 2 B = 1.610613 GB -> the peak
    assert e.total_gb == pytest.approx(33.7412 + 1.610613 + 0.5, abs=1e-4)
    p = {x["placement"]: x for x in e.placements}
    # model offload: one component at a time; the transformer + its activations is the largest stage
    assert p["model-offload"]["peak_gb"] == pytest.approx(23.80282 + 0.48615 + 0.5, abs=1e-4)
    # every component copied in and back out once per call at 4 GB/s: 2 x 33.7412 / 4 = 16.8706 s
    assert p["model-offload"]["copy_s_per_call"] == pytest.approx(2 * 33.7412 / 4, abs=1e-3)
    # sequential offload: one layer (0.3 GB allowance) + the VAE decode transient + context
    assert p["sequential-offload"]["peak_gb"] == pytest.approx(0.3 + 1.610613 + 0.5, abs=1e-4)
    # ... and the transformer streams in at every one of the 28 steps: (9.93838 + 23.80282 x 28) / 4 = 169.104 s
    assert p["sequential-offload"]["copy_s_per_call"] == pytest.approx((9.93838 + 23.80282 * 28) / 4, abs=1e-2)
    # text encoders dropped after encoding: denoiser + VAE stay, encoders leave
    assert p["text-encoders-dropped"]["peak_gb"] == pytest.approx(23.80282 + 0.16764 + 1.610613 + 0.5, abs=1e-4)
    assert p["text-encoders-dropped"]["copy_s_per_call"] == 0


def test_16gb_card_ways_for_flux_dev():
    """FP8 transformer + NF4 T5 with the encoders dropped fits a 16 GB card at 1024 x 1024."""
    e = _mem("flux.1-dev", precision="fp8", text_encoder_precision="nf4", placement="text-encoders-dropped")
    # transformer 11.90141 GB (fp8) + VAE 0.16764 + decode 1.610613 + context 0.5 = 14.1797
    assert e.total_gb == pytest.approx(11.90141 + 0.16764 + 1.610613 + 0.5, abs=1e-4)
    sixteen = GpuMemory(name="a 16 GB GPU", memory_gb=16 * 2**30 / 1e9)
    assert estimate_image_memory(PIPES["flux.1-dev"], ARCH["flux.1-dev"],
                                 ImageRequest(precision="fp8", text_encoder_precision="nf4",
                                              placement="text-encoders-dropped"), sixteen).fit.fits
    bf16 = estimate_image_memory(PIPES["flux.1-dev"], ARCH["flux.1-dev"], ImageRequest(), sixteen)
    assert not bf16.fit.fits


def test_gguf_and_nf4_sizes():
    q8 = _mem("flux.1-dev", precision="q8_0")
    # GGUF Q8_0: 34 bytes per 32 weights = 8.5 bits: 11,901.41M x 1.0625 B = 12.64525 GB
    assert q8.weights_gb["transformer"] == pytest.approx(11901.41e6 * 1.0625 / 1e9, abs=1e-5)
    nf4 = _mem("flux.1-dev", text_encoder_precision="nf4")
    # NF4: 4 bits + one fp32 absmax per 64 weights = 4.5 bits; only the T5 encoder takes the override
    assert nf4.weights_gb["text_encoder_2"] == pytest.approx(4762.31e6 * 0.5625 / 1e9, abs=1e-5)
    assert nf4.weights_gb["text_encoder"] == pytest.approx(123.06e6 * 2 / 1e9, abs=1e-6)


def test_batch_and_slicing_scale_the_decode():
    four = _mem("sd-1.5", width=512, height=512, batch=4)
    sliced = _mem("sd-1.5", width=512, height=512, batch=4, vae_slicing=True)
    # SD 1.5 VAE fp16 at 512^2: 768 x 262,144 x 2 B = 0.402653 GB per image
    assert four.stages_gb["vae_decode"] - sliced.stages_gb["vae_decode"] == pytest.approx(3 * 0.402653, abs=1e-5)


def test_bad_inputs_name_the_value():
    with pytest.raises(InvalidInput, match="precision"):
        validated(ImageRequest, precision="int3")
    with pytest.raises(InvalidInput, match="placement"):
        validated(ImageRequest, placement="cloud")
    with pytest.raises(InvalidInput, match="width"):
        validated(ImageRequest, width=10)


def test_legacy_entry_keeps_its_contract():
    d = estimate_diffusion_vram(PIPES["flux.1-dev"], None, False, None, ARCH["flux.1-dev"])
    off = estimate_diffusion_vram(PIPES["flux.1-dev"], None, True, None, ARCH["flux.1-dev"])
    assert off.total_gb < d.total_gb and "text_encoder_2" not in off.components_gb
    assert d.components_gb["transformer"] == pytest.approx(11901.41e6 * 2 / 1e9, abs=1e-3)
