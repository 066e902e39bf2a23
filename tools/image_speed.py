"""Image-generation speed: seconds per image and images per hour for a pipeline on a GPU.

One denoising step of a batch (CFG doubles the rows unless the model is guidance-distilled):
    compute  = denoiser FLOPs(resolution) x rows / (peak tensor rate x framework efficiency)
    memory   = (denoiser weight bytes + activation traffic) / memory bandwidth,
               activation traffic = FLOPs x framework bytes-per-FLOP (normalisation, activations and
               residual adds are memory-bound kernels that eager PyTorch runs between the matmuls)
    overhead = framework launch cost per step x (denoiser leaf modules / 486, the SD 1.5 UNet)
    step     = compute + memory + overhead        (eager kernels run one after another)
One call  = text encode (2 x params x prompt tokens, + a negative prompt with CFG) + steps x step
          + VAE decode (counted decoder FLOPs x images) + the offload copies of the placement.
FLOPs come from the architecture (knowledge/diffusion_arch.csv, counted with torch's FlopCounterMode);
efficiencies, bytes per FLOP and launch costs per framework (diffusers eager, torch.compile,
TensorRT; ComfyUI = eager PyTorch) are fitted on published measurements (knowledge/diffusion_frameworks.csv,
benchmarks/image_accuracy.py, leave-one-source-out error reported there).
"""

from __future__ import annotations

__all__ = ["ImageFramework", "ImageSpeedEstimate", "ImageWork", "estimate_image_speed", "image_work", "time_terms"]

import math
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from tools.diffusion import DiffusionArch, ImageRequest, estimate_image_memory
from tools.errors import InvalidCombination
from tools.schemas import DiffusionComponent, GpuSpec

_REF_LEAF_MODULES = 486  # SD 1.5 UNet: the launch cost is per step at this many modules


class ImageFramework(BaseModel):
    """How efficiently one image-generation runtime uses a GPU (knowledge/diffusion_frameworks.csv)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    compute_eff: float = Field(gt=0, le=1, description="fraction of peak dense tensor FLOPs in the matmuls/convs")
    unet_bytes_per_flop: float = Field(ge=0, description="activation traffic of conv nets (UNet, VAE), bytes per FLOP")
    transformer_bytes_per_flop: float = Field(ge=0, description="activation traffic of DiT/MMDiT, bytes per FLOP")
    overhead_ms_per_step: float = Field(ge=0, description="launch/Python cost per step for a 486-module denoiser")
    fp8_compute: bool = False
    source: str = ""
    notes: str = ""


class ImageSpeedEstimate(BaseModel):
    """Estimated speed of one pipeline on one GPU; every figure is an estimate."""

    seconds_per_image: float
    images_per_hour: float
    seconds_per_batch: float
    steps_per_s: float
    bound: Literal["compute", "memory", "overhead", "offload"]
    time_s: dict[str, float]
    step_ms: dict[str, float]
    gpu: dict[str, Any]
    engine: str
    model: str
    inputs: dict[str, Any]
    memory: dict[str, Any] | None = None
    assumptions: list[str]
    estimate: bool = True


def _rate_tflops(gpu: GpuSpec, precision: str, fp8_compute: bool) -> tuple[float, str]:
    if gpu.bf16_dense_tflops is None:
        raise InvalidCombination(f"the tensor throughput of {gpu.name} is not in the GPU data, so its image "
                                 "generation speed cannot be estimated")
    if precision == "fp8" and fp8_compute and gpu.fp8_support and gpu.fp8_dense_tflops:
        return gpu.fp8_dense_tflops, "FP8 tensor cores"
    if precision == "fp32":
        return gpu.bf16_dense_tflops / 2, "TF32 tensor cores (half the 16-bit rate)"
    return gpu.bf16_dense_tflops, "16-bit tensor cores"


class ImageWork(BaseModel):
    """What one call asks of the GPU, independent of the framework's fitted constants."""

    model_config = ConfigDict(frozen=True)

    family: str
    steps: int
    batch: int
    step_flops: float = Field(description="denoiser FLOPs of one step, whole batch (CFG rows included)")
    denoiser_bytes: float = Field(description="denoiser weight bytes read once per step")
    leaf_ratio: float = Field(description="denoiser leaf modules / 486 (SD 1.5 UNet)")
    text_flops: float
    text_bytes: float
    vae_flops: float
    rate_flops_per_s: float = Field(description="peak dense tensor rate used, FLOP/s")
    bw_bytes_per_s: float
    copy_s: float = Field(description="host-to-GPU copies of the placement per call, seconds")


def image_work(components: Sequence[DiffusionComponent], arch: DiffusionArch, gpu: GpuSpec, fp8_compute: bool,
               req: ImageRequest, weights_gb: dict[str, float], copy_s: float) -> ImageWork:
    """The framework-independent quantities of one call (FLOPs, bytes, peak rates)."""
    prec = req.precision or "bf16"
    rate, _ = _rate_tflops(gpu, prec, fp8_compute)
    if not gpu.mem_bandwidth_gb_per_s:
        raise InvalidCombination(f"the memory bandwidth of {gpu.name} is not in the GPU data, so its image "
                                 "generation speed cannot be estimated")
    cfg = req.uses_cfg(arch)
    rows = req.batch * (2 if cfg else 1)
    enc_params = sum(c.params_m for c in components if c.component.startswith("text_encoder")) * 1e6
    return ImageWork(
        family=arch.family, steps=req.steps, batch=req.batch,
        step_flops=arch.denoiser_tflop_at(req.width, req.height) * 1e12 * rows,
        denoiser_bytes=sum(gb for n, gb in weights_gb.items() if not n.startswith("text_encoder") and n != "vae") * 1e9,
        leaf_ratio=arch.denoiser_leaf_modules / _REF_LEAF_MODULES,
        # every prompt (and its negative prompt under CFG) through the encoders: 2 x params x tokens
        text_flops=2.0 * enc_params * max(arch.text_tokens, 77) * rows,
        text_bytes=sum(gb for n, gb in weights_gb.items() if n.startswith("text_encoder")) * 1e9,
        vae_flops=arch.vae_tflop_at(req.width, req.height) * 1e12 * req.batch,
        rate_flops_per_s=rate * 1e12, bw_bytes_per_s=gpu.mem_bandwidth_gb_per_s * 1e9, copy_s=copy_s)


def time_terms(w: ImageWork, fw: ImageFramework) -> dict[str, float]:
    """Seconds: one step's compute, memory and overhead; the call's text, denoise, VAE, copies, total."""
    rate = w.rate_flops_per_s * fw.compute_eff
    per_flop = fw.unet_bytes_per_flop if w.family == "unet" else fw.transformer_bytes_per_flop
    st = {"compute": w.step_flops / rate, "memory": (w.denoiser_bytes + w.step_flops * per_flop) / w.bw_bytes_per_s,
          "overhead": fw.overhead_ms_per_step * 1e-3 * w.leaf_ratio}
    # kernels are launched asynchronously: the GPU works while Python launches the next ones, so a
    # step takes the longer of the GPU's work and the launch cost
    step = max(st["compute"] + st["memory"], st["overhead"])
    text = w.text_flops / rate + w.text_bytes / w.bw_bytes_per_s
    vae = w.vae_flops / rate + w.vae_flops * fw.unet_bytes_per_flop / w.bw_bytes_per_s
    denoise = w.steps * step
    return st | {"step": step, "text_encode": text, "denoise": denoise, "vae_decode": vae, "offload_copies": w.copy_s,
                 "total": text + denoise + vae + w.copy_s}


def estimate_image_speed(components: Sequence[DiffusionComponent], arch: DiffusionArch, gpu: GpuSpec,
                         fw: ImageFramework, req: ImageRequest) -> ImageSpeedEstimate:
    """Seconds per image, images per hour and the bound for one pipeline, GPU and framework.

    Raises:
        InvalidCombination: GPU facts missing (tensor rate or bandwidth unknown), or non-finite times.
    """
    mem = estimate_image_memory(components, arch, req, gpu.as_gpu_memory())
    chosen = next(p for p in mem.placements if p["placement"] == req.placement)
    work = image_work(components, arch, gpu, fw.fp8_compute, req, mem.weights_gb, chosen["copy_s_per_call"])
    t = time_terms(work, fw)
    st = {k: t[k] for k in ("compute", "memory", "overhead")}
    step = t["step"]
    prec = req.precision or "bf16"
    rate, how = _rate_tflops(gpu, prec, fw.fp8_compute)
    cfg = req.uses_cfg(arch)
    t_text, t_denoise, t_vae, t_copy, total = (t[k] for k in ("text_encode", "denoise", "vae_decode", "offload_copies", "total"))
    if not math.isfinite(total) or total <= 0:
        raise InvalidCombination("the inputs are too large to give a finite time")
    parts = {"compute": st["compute"], "memory": st["memory"], "overhead": st["overhead"]}
    bound = "offload" if t_copy > t_denoise else max(parts, key=lambda k: parts[k])
    per_image = total / req.batch
    assumptions = [
        f"An estimate from the denoiser's FLOPs and the GPU's {how} ({rate:g} TFLOPs) at {fw.name}'s fitted "
        f"efficiency ({fw.compute_eff:.0%}), not a measurement.",
        f"{req.steps} steps at {req.width}x{req.height}, batch {req.batch}"
        + (", classifier-free guidance doubles each step's batch" if cfg else
           (", guidance-distilled: one pass per step" if arch.guidance_distilled else ", no CFG (guidance <= 1)")) + ".",
        f"Per call: text encoding {t_text:.2f} s, denoising {t_denoise:.2f} s, VAE decode {t_vae:.2f} s"
        + (f", offload copies {t_copy:.2f} s ({req.placement})" if t_copy else "") + ".",
    ]
    if prec not in ("bf16", "fp16", "fp32", "fp8") or (prec == "fp8" and "FP8" not in how):
        assumptions.append(f"{prec} weights are dequantised to 16-bit for the matmuls; the dequantisation cost is not "
                           "modelled (published bitsandbytes/GGUF runs are often slower than bf16).")
    if mem.fit is not None and not mem.fit.fits:
        assumptions.insert(0, f"Does not fit: {mem.total_gb:.1f} GB needed with placement {req.placement}, "
                              f"{mem.fit.gpu_memory_gb:.1f} GB on {gpu.name}; see the placements in `memory`.")
    return ImageSpeedEstimate(
        seconds_per_image=per_image, images_per_hour=3600.0 / per_image, seconds_per_batch=total,
        steps_per_s=1.0 / step, bound=bound,
        time_s={k: t[k] for k in ("text_encode", "denoise", "vae_decode", "offload_copies", "total")},
        step_ms={k: v * 1e3 for k, v in st.items()} | {"total": step * 1e3},
        gpu={"id": gpu.id, "name": gpu.name, "bf16_dense_tflops": gpu.bf16_dense_tflops,
             "fp8_dense_tflops": gpu.fp8_dense_tflops, "mem_bandwidth_gb_per_s": gpu.mem_bandwidth_gb_per_s},
        engine=fw.id, model=arch.model_id, inputs=req.model_dump() | {"cfg": cfg},
        memory={"total_gb": mem.total_gb, "fits": mem.fit.fits if mem.fit else None, "placement": req.placement,
                "placements": [{k: p[k] for k in ("placement", "peak_gb", "copy_s_per_call", "speed_cost")}
                               for p in mem.placements]},
        assumptions=assumptions,
    )

