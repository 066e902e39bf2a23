"""Image-generation speed: seconds per image and images per hour for a pipeline on a GPU.

Every kernel of one eager forward was counted (benchmarks/diffusion_flops.py over the diffusers model
on meta tensors: knowledge/diffusion_arch.csv `*_profile_*`), by class: convolutions, matmuls,
attention (flash: FLOPs only), elementwise/normalisation ops (bytes only). One denoising step of
`rows` = batch x (2 with CFG unless guidance-distilled) is a roofline per kernel class:
    conv, matmul = rows x sum over the class's kernels of max(FLOPs / R_class, bytes / BW)
                   (stored as gconv/gmm at ridge points R/BW; R_class = rate x the framework's efficiency)
    attention    = rows x attention FLOPs / (rate x attention efficiency)
    elementwise  = rows x counted bytes x the framework's unfused fraction / BW
    weights      = denoiser weight bytes (in the chosen precision) / BW, read once per step
    GPU work     = the sum + kernels x the framework's GPU cost per kernel
    step         = max(GPU work, kernels x the framework's CPU launch cost)  (launches run ahead of the GPU)
BW = memory bandwidth x 0.8 (what streaming kernels reach on HBM and GDDR). rate = the dense 16-bit
tensor peak, lowered where the board's power cannot hold the clocks: a card whose chip at full clocks
draws more than its board power (GpuSpec.sustained_tensor_tflops) runs at sustained / power_fraction,
power_fraction being the share of full-load power a diffusion workload draws (fitted).
One call = text encode (2 x params x prompt tokens, + a negative prompt with CFG) + steps x step
         + VAE decode (its counted kernels, batch images) + the offload copies of the placement.
Efficiencies, unfused fraction, per-kernel costs and power fraction per framework (diffusers eager,
torch.compile, TensorRT; ComfyUI = eager PyTorch) are fitted on published measurements
(knowledge/diffusion_frameworks.csv, benchmarks/image_accuracy.py, leave-one-source-out error there).
"""

from __future__ import annotations

__all__ = ["BW_EFF", "ImageFramework", "ImageSpeedEstimate", "ImageWork", "estimate_image_speed", "image_work",
           "roofline_gb", "time_terms"]

import math
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from tools.diffusion import DiffusionArch, ImageRequest, estimate_image_memory
from tools.errors import InvalidCombination
from tools.schemas import DiffusionComponent, GpuSpec

BW_EFF = 0.8  # streaming kernels reach ~80 % of the memory bandwidth (HBM and GDDR alike)
RIDGES = (16, 32, 64, 128, 256, 512, 1024, 2048)  # FLOP/B points of the counted rooflines


class ImageFramework(BaseModel):
    """How efficiently one image-generation runtime uses a GPU (knowledge/diffusion_frameworks.csv)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    compute_eff: float = Field(gt=0, le=1, description="fraction of the tensor peak in matmuls (linear layers)")
    conv_eff: float = Field(gt=0, le=1, description="fraction of the tensor peak in convolutions")
    attn_eff: float = Field(gt=0, le=1, description="fraction of the tensor peak in (flash) attention")
    elementwise_traffic: float = Field(ge=0, le=1.5, description="share of the counted eager elementwise bytes left "
                                                                 "after fusion (1 = eager)")
    launch_us_per_op: float = Field(ge=0, description="CPU cost to launch one eager op, microseconds")
    gpu_us_per_op: float = Field(ge=0, description="GPU time added per counted op (kernel ramp, tails), microseconds")
    power_fraction: float = Field(gt=0, le=1, description="share of a chip's full-load power the workload draws")
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
    rows: int = Field(description="denoiser batch of one step (CFG doubles it)")
    denoiser: dict[str, float] = Field(description="counted per-row work of one denoiser forward (profile_at)")
    vae: dict[str, float] = Field(description="counted per-image work of one VAE decode")
    denoiser_bytes: float = Field(description="denoiser weight bytes read once per step")
    text_flops: float
    text_bytes: float
    rate_flops_per_s: float = Field(description="dense tensor peak used, FLOP/s")
    sustained_flops_per_s: float | None = Field(None, description="what the board power holds at full load, FLOP/s")
    bw_bytes_per_s: float
    copy_s: float = Field(description="host-to-GPU copies of the placement per call, seconds")


def image_work(components: Sequence[DiffusionComponent], arch: DiffusionArch, gpu: GpuSpec, fp8_compute: bool,
               req: ImageRequest, weights_gb: dict[str, float], copy_s: float) -> ImageWork:
    """The framework-independent quantities of one call (counted work, bytes, peak rates).

    Raises:
        InvalidCombination: the GPU's tensor rate or bandwidth is unknown, or the pipeline has no counted profile.
    """
    prec = req.precision or "bf16"
    rate, _ = _rate_tflops(gpu, prec, fp8_compute)
    if not gpu.mem_bandwidth_gb_per_s:
        raise InvalidCombination(f"the memory bandwidth of {gpu.name} is not in the GPU data, so its image "
                                 "generation speed cannot be estimated")
    den, vae = arch.profile_at("denoiser", req.width, req.height), arch.profile_at("vae", req.width, req.height)
    if not den or not vae:
        raise InvalidCombination(f"{arch.model_id} has no counted kernel profile (knowledge/diffusion_arch.csv)")
    rows = req.batch * (2 if req.uses_cfg(arch) else 1)
    enc_params = sum(c.params_m for c in components if c.component.startswith("text_encoder")) * 1e6
    sustained = gpu.sustained_tensor_tflops
    return ImageWork(
        family=arch.family, steps=req.steps, batch=req.batch, rows=rows, denoiser=den, vae=vae,
        denoiser_bytes=sum(gb for n, gb in weights_gb.items() if not n.startswith("text_encoder") and n != "vae") * 1e9,
        # every prompt (and its negative prompt under CFG) through the encoders: 2 x params x tokens
        text_flops=2.0 * enc_params * max(arch.text_tokens, 77) * rows,
        text_bytes=sum(gb for n, gb in weights_gb.items() if n.startswith("text_encoder")) * 1e9,
        rate_flops_per_s=rate * 1e12, sustained_flops_per_s=sustained * 1e12 if sustained else None,
        bw_bytes_per_s=gpu.mem_bandwidth_gb_per_s * 1e9, copy_s=copy_s)


def roofline_gb(p: dict[str, float], kind: str, ridge: float) -> float:
    """sum over a kernel class of max(FLOPs / ridge, bytes), GB, between the counted ridge points
    (log-log interpolation; below the first point all FLOP-bound, above the last all byte-bound)."""
    if ridge <= RIDGES[0]:
        return p[f"g{kind}_{RIDGES[0]}"] * RIDGES[0] / ridge
    if ridge >= RIDGES[-1]:
        return p[f"g{kind}_{RIDGES[-1]}"]
    i = max(j for j in range(len(RIDGES)) if RIDGES[j] <= ridge)
    lo, hi = RIDGES[i], RIDGES[i + 1]
    a, b = max(p[f"g{kind}_{lo}"], 1e-12), max(p[f"g{kind}_{hi}"], 1e-12)
    return math.exp(math.log(a) + (math.log(b) - math.log(a)) * math.log(ridge / lo) / math.log(hi / lo))


def _forward_s(p: dict[str, float], n: int, rate: float, bw: float, fw: ImageFramework) -> dict[str, float]:
    """Seconds of one forward over n rows: conv, matmul, attention, elementwise, per-kernel GPU cost, launches."""
    conv_r, mm_r = rate * fw.conv_eff, rate * fw.compute_eff
    return {"conv": n * roofline_gb(p, "conv", conv_r / bw) * 1e9 / bw,
            "matmul": n * roofline_gb(p, "mm", mm_r / bw) * 1e9 / bw,
            "attention": n * p["attn_tflop"] * 1e12 / (rate * fw.attn_eff),
            "elementwise": n * p["elem_gb"] * 1e9 * fw.elementwise_traffic / bw,
            "kernels": p["ops"] * fw.gpu_us_per_op * 1e-6,
            "launch": p["ops"] * fw.launch_us_per_op * 1e-6}


def time_terms(w: ImageWork, fw: ImageFramework) -> dict[str, float]:
    """Seconds: one step's compute, memory and overhead; the call's text, denoise, VAE, copies, total."""
    rate = w.rate_flops_per_s
    if w.sustained_flops_per_s is not None:
        rate = min(rate, w.sustained_flops_per_s / fw.power_fraction)
    bw = w.bw_bytes_per_s * BW_EFF
    d = _forward_s(w.denoiser, w.rows, rate, bw, fw)
    weights = w.denoiser_bytes / bw
    gpu = d["conv"] + d["matmul"] + d["attention"] + d["elementwise"] + d["kernels"] + weights
    step = max(gpu, d["launch"])
    v = _forward_s(w.vae, w.batch, rate, bw, fw)
    vae = max(v["conv"] + v["matmul"] + v["attention"] + v["elementwise"] + v["kernels"], v["launch"])
    text = w.text_flops / (rate * fw.compute_eff) + w.text_bytes / bw
    denoise = w.steps * step
    compute = d["conv"] + d["matmul"] + d["attention"]
    return {"compute": compute, "memory": d["elementwise"] + weights, "overhead": max(d["launch"], d["kernels"]),
            "step": step, "text_encode": text, "denoise": denoise, "vae_decode": vae, "offload_copies": w.copy_s,
            "total": text + denoise + vae + w.copy_s, "rate_flops_per_s": rate}


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
    used = t["rate_flops_per_s"] / 1e12
    assumptions = [
        f"An estimate from the denoiser's counted kernels and the GPU's {how} ({rate:g} TFLOPs) at {fw.name}'s "
        f"fitted efficiencies (matmul {fw.compute_eff:.0%}, convolution {fw.conv_eff:.0%}, attention "
        f"{fw.attn_eff:.0%}), not a measurement.",
        f"{req.steps} steps at {req.width}x{req.height}, batch {req.batch}"
        + (", classifier-free guidance doubles each step's batch" if cfg else
           (", guidance-distilled: one pass per step" if arch.guidance_distilled else ", no CFG (guidance <= 1)")) + ".",
        f"Per call: text encoding {t_text:.2f} s, denoising {t_denoise:.2f} s, VAE decode {t_vae:.2f} s"
        + (f", offload copies {t_copy:.2f} s ({req.placement})" if t_copy else "") + ".",
    ]
    if used < rate * (1 - 1e-9):
        assumptions.append(f"{gpu.name}'s {gpu.board_power_w:g} W board cannot hold the clocks of its peak rate: "
                           f"about {used:.0f} TFLOPs under this load (board power and the chip's TFLOPS per watt at "
                           "full clocks: knowledge/gpus.csv power_source).")
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

