"""Memory of an image-generation pipeline as it runs (SD 1.5/2.1, SDXL, SD3/3.5, FLUX.1, PixArt).

A text-to-image call runs in three stages, each holding the weights that are on the GPU then plus
its own transient memory:
    text encode   encoder weights + their activations (prompt tokens, small)
    denoise       denoiser (UNet/DiT) weights + activations of the denoiser at the resolution and batch
    VAE decode    VAE weights + the decoder's peak, often the real peak of the whole call
Peak = the largest stage + CUDA context. The placement decides which weights are on the GPU in
each stage (diffusers): all on GPU; text encoders dropped after encoding; model CPU offload
(`enable_model_cpu_offload`: one component at a time); sequential CPU offload
(`enable_sequential_cpu_offload`: one layer at a time). Offloading costs host-to-device copies:
model offload copies every component once per call, sequential offload the denoiser every step.

Weights: params x bytes of the precision (tools.units). `precision` applies to the denoiser and the
text encoders, `text_encoder_precision` overrides the big encoder (T5 where there is one, else all);
the VAE keeps its own dtype (SDXL's VAE runs in fp32 unless the fp16-fix VAE is used).
Sources: parameter counts and FLOPs from each component's diffusers config
(knowledge/diffusion_models.csv, knowledge/diffusion_arch.csv).
"""

from __future__ import annotations

__all__ = ["OFFLOAD_SOURCE", "PLACEMENTS", "DiffusionArch", "ImageRequest", "ImageVramEstimate", "estimate_diffusion_vram",
           "estimate_image_memory", "vae_decode_peak_gb"]

import math
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import DiffusionComponent, FitVerdict, GpuMemory, MemoryComponent, VramEstimate
from tools.units import bytes_to_gb, canonical_format, dtype_bytes, weight_format

PLACEMENTS = ("all-on-gpu", "text-encoders-dropped", "model-offload", "sequential-offload")
_CONTEXT_GB = 0.5  # same CUDA-context allowance as tools.vram
# VAE decoder (KL-f8, block_out 128/256/512/512): its last up-block runs a ResNet on 256 channels at
# the full output resolution; input, GroupNorm output and SiLU output are alive together = 3 x 256
# elements per output pixel. Derived from the AutoencoderKL decoder layout and confirmed by counting
# the live tensors of its eager decode (benchmarks/diffusion_flops.py: 1.6107 GB at 1024x1024 fp16).
VAE_PEAK_ELEMENTS_PER_PIXEL = 3 * 256
# Sequential offload keeps one layer's weights on the GPU; the largest single tensor in these
# pipelines is T5-XXL's 32,128 x 4,096 embedding (0.26 GB in bf16): allow 0.3 GB.
_SEQUENTIAL_RESIDENT_GB = 0.3
# The default copy rate: FLUX.1 dev bf16, 1360x768, 50 steps on a Colab A100 took ~26 s all on GPU and
# "just over 5 minutes" with enable_sequential_cpu_offload: ~274 s for 50 x 23.8 GB of transformer
# weights = 4.3 GB/s (pageable host memory, one layer at a time), rounded to 4.
OFFLOAD_SOURCE = ("https://github.com/mbattaglia/mbattaglia.github.io/blob/06599bbfd6e2cd9f64f0c27fd572f3eedfe8ad7e/"
                  "_posts/2025-06-09-Inference-Optimization-for-image-generation-models.md")
_FORMATS = "fp32, bf16, fp16, fp8, int8, nf4, int4, or GGUF q4_0, q4_k_m, q5_k_m, q6_k, q8_0"


class DiffusionArch(BaseModel):
    """Architecture facts of one pipeline (knowledge/diffusion_arch.csv): FLOPs counted at three sizes."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    family: Literal["unet", "mmdit", "dit"]
    denoiser: str = "transformer"
    latent_channels: int = Field(ge=1)
    vae_factor: int = Field(8, ge=1)
    patch_size: int = Field(1, ge=1)
    hidden_size: int = Field(ge=1)
    text_tokens: int = Field(ge=0)
    guidance_distilled: bool = False
    default_steps: int = Field(ge=1)
    default_guidance: float = Field(ge=0)
    default_resolution: int = Field(ge=64)
    denoiser_tflop: tuple[float, float, float] = Field(description="one forward, batch 1, at 512/768/1024 px")
    vae_decode_tflop: tuple[float, float, float] = Field(description="one decode, batch 1, at 512/768/1024 px")
    denoiser_leaf_modules: int = Field(ge=1)
    act_hidden_widths: float = Field(gt=0)
    source: str = ""
    denoiser_profile_512: dict[str, float] = Field(default_factory=dict, description="counted eager work, see _profile")
    denoiser_profile_768: dict[str, float] = Field(default_factory=dict)
    denoiser_profile_1024: dict[str, float] = Field(default_factory=dict)
    vae_profile_512: dict[str, float] = Field(default_factory=dict)
    vae_profile_768: dict[str, float] = Field(default_factory=dict)
    vae_profile_1024: dict[str, float] = Field(default_factory=dict)

    @field_validator("denoiser_profile_512", "denoiser_profile_768", "denoiser_profile_1024", "vae_profile_512",
                     "vae_profile_768", "vae_profile_1024", mode="before")
    @classmethod
    def _parse_profile(cls, v: Any) -> Any:
        """The CSV form 'key=value;key=value' (benchmarks/diffusion_flops.py writes it)."""
        if isinstance(v, str):
            return {k.strip(): float(x) for k, x in (kv.split("=") for kv in v.split(";") if kv.strip())}
        return v

    def profile_at(self, component: Literal["denoiser", "vae"], width: int, height: int) -> dict[str, float]:
        """Counted eager work of one forward at batch 1 (per row), at any size: each figure on the
        quadratic in latent pixels through the three counted sizes. Keys: conv/mm/attn_tflop (FLOPs by
        kernel class), gconv_R/gmm_R (GB: sum over the class's ops of max(FLOPs / R, bytes), the roofline
        of the class at ridge R FLOP/B), elem_gb (bytes through elementwise/normalisation ops), ops
        (aten ops = kernels launched eagerly), peak_gb (live activations at the peak). Empty if not counted."""
        pts = [getattr(self, f"{component}_profile_{s}") for s in (512, 768, 1024)]
        if not all(pts):
            return {}
        return {k: _quadratic((pts[0][k], pts[1][k], pts[2][k]), self, width, height) for k in pts[0]}

    def latent_pixels(self, width: int, height: int) -> float:
        return (width / self.vae_factor) * (height / self.vae_factor)

    def tokens(self, width: int, height: int) -> float:
        """Sequence the denoiser attends over: latent patches (+ text tokens for transformers)."""
        n = self.latent_pixels(width, height) / self.patch_size ** 2
        return n if self.family == "unet" else n + self.text_tokens


def _quadratic(points: tuple[float, float, float], a: DiffusionArch, width: int, height: int) -> float:
    if points[0] == points[1] == points[2]:
        return points[0]  # a size-independent count (kernels launched, weight bytes)
    xs = [a.latent_pixels(s, s) for s in (512, 768, 1024)]
    x = a.latent_pixels(width, height)
    # Lagrange form of the parabola through the three counted points
    total = 0.0
    for i in range(3):
        term = points[i]
        for j in range(3):
            if j != i:
                term *= (x - xs[j]) / (xs[i] - xs[j])
        total += term
    return max(total, points[0] * x / xs[0] * 0.5)


class ImageRequest(BaseModel):
    """One text-to-image call: size, steps, guidance, batch, precisions and placement."""

    model_config = ConfigDict(extra="forbid")

    width: int = Field(1024, ge=64, le=16384, description="image width in pixels, 64 to 16,384")
    height: int = Field(1024, ge=64, le=16384, description="image height in pixels, 64 to 16,384")
    steps: int = Field(30, ge=1, le=1000, description="denoising steps, 1 to 1,000")
    guidance: float | None = Field(None, ge=0, le=100, allow_inf_nan=False,
                                   description="classifier-free guidance scale, 0 to 100 (above 1 doubles the "
                                               "denoiser batch unless the model is guidance-distilled)")
    batch: int = Field(1, ge=1, le=1024, description="images per call, 1 to 1,024")
    precision: str | None = Field(None, description=f"denoiser and text encoders: {_FORMATS}")
    text_encoder_precision: str | None = Field(None, description=f"the big text encoder (T5) only: {_FORMATS}")
    placement: Literal["all-on-gpu", "text-encoders-dropped", "model-offload", "sequential-offload"] = Field(
        "all-on-gpu", description="all-on-gpu | text-encoders-dropped | model-offload | sequential-offload")
    vae_slicing: bool = Field(False, description="decode the batch one image at a time")
    host_to_device_gb_per_s: float = Field(4.0, gt=0, le=1000, allow_inf_nan=False,
                                           description="effective copy rate of diffusers' CPU offloading, GB/s (default 4: "
                                                       "set from a published sequential-offload run, see OFFLOAD_SOURCE)")

    @field_validator("precision", "text_encoder_precision")
    @classmethod
    def _format(cls, v: str | None) -> str | None:
        return canonical_format(v, _FORMATS)

    def uses_cfg(self, arch: DiffusionArch) -> bool:
        """CFG runs a conditional and an unconditional pass per step (batch x 2) when guidance > 1,
        unless the model was distilled to take guidance as an input (FLUX.1 dev/schnell)."""
        g = arch.default_guidance if self.guidance is None else self.guidance
        return g > 1.0 and not arch.guidance_distilled


class ImageVramEstimate(VramEstimate):
    """Peak memory of an image pipeline, with each stage and every placement's memory and speed cost."""

    stages_gb: dict[str, float] = {}
    weights_gb: dict[str, float] = {}
    placement: str = "all-on-gpu"
    placements: list[dict[str, Any]] = []

    def to_json_dict(self) -> dict[str, Any]:
        return super().to_json_dict() | {"stages_gb": self.stages_gb, "weights_gb": self.weights_gb,
                                         "placement": self.placement,
                                         "placements": self.placements}


def _is_encoder(c: DiffusionComponent) -> bool:
    return c.component.startswith("text_encoder")


def _component_format(c: DiffusionComponent, req: ImageRequest, has_t5: bool) -> str:
    if c.component == "vae":
        return c.default_dtype
    if _is_encoder(c) and req.text_encoder_precision and (not has_t5 or c.component_class.startswith("T5")):
        return req.text_encoder_precision
    return req.precision or c.default_dtype


def vae_decode_peak_gb(width: int, height: int, images_at_once: int, vae_dtype: str) -> float:
    """Transient memory of the VAE decoder, decimal GB: 3 x 256 elements per output pixel (see
    VAE_PEAK_ELEMENTS_PER_PIXEL) x bytes of the VAE dtype x images decoded at once.
    Example: 1024 x 1024, one image, fp16: 768 x 1,048,576 x 2 B = 1.61 GB."""
    return bytes_to_gb(VAE_PEAK_ELEMENTS_PER_PIXEL * width * height * images_at_once * dtype_bytes(vae_dtype))


def _denoiser_activation_gb(arch: DiffusionArch, req: ImageRequest) -> float:
    """batch x (2 with CFG) x the counted peak of live activations of one forward (16-bit), or where
    no forward was counted: rows x tokens x hidden x act_hidden_widths x 2 bytes."""
    rows = req.batch * (2 if req.uses_cfg(arch) else 1)
    counted = arch.profile_at("denoiser", req.width, req.height).get("peak_gb")
    if counted:
        return rows * counted
    return bytes_to_gb(rows * arch.tokens(req.width, req.height) * arch.hidden_size * arch.act_hidden_widths * 2.0)


def estimate_image_memory(components: Sequence[DiffusionComponent], arch: DiffusionArch | None, req: ImageRequest,
                          gpu: GpuMemory | None = None) -> ImageVramEstimate:
    """Peak GPU memory of one text-to-image call, decimal GB, and the same for every placement.

    Returns the estimate for `req.placement` (components at its peak stage, the stages, the fit
    verdict) with `placements`: for each placement its peak GB and the copy time it adds.

    Raises:
        InvalidInput: an unknown precision. InvalidCombination: no pipeline components.
    """
    if not components:
        raise InvalidCombination("an image-generation pipeline needs its components (denoiser, text encoders, VAE)")
    has_t5 = any(c.component_class.startswith("T5") for c in components)
    weights: dict[str, float] = {}
    comps: dict[str, MemoryComponent] = {}
    for c in components:
        fmt = weight_format(_component_format(c, req, has_t5))
        gb = bytes_to_gb(c.params_m * 1e6 * (fmt.bytes_per_param + fmt.constant_bytes_per_param))
        weights[c.component] = gb
        comps[c.component] = MemoryComponent(
            name=c.component, gb=gb, source=c.source or "diffusers config",
            formula=f"{c.component_class}: {c.params_m:,.0f}M params x {fmt.bytes_per_param + fmt.constant_bytes_per_param:g} B ({fmt.name})")
    vae_c = next((c for c in components if c.component == "vae"), None)
    vae_dtype = vae_c.default_dtype if vae_c else "bf16"
    vae_dtype = vae_dtype if vae_dtype in ("fp32", "bf16", "fp16") else "bf16"
    act = _denoiser_activation_gb(arch, req) if arch else 0.0
    vae_peak = vae_decode_peak_gb(req.width, req.height, 1 if req.vae_slicing else req.batch, vae_dtype)
    table = [_placement(p, weights, act, vae_peak, arch, req) for p in PLACEMENTS]
    chosen = next(t for t in table if t["placement"] == req.placement)
    stage = chosen["peak_stage"]
    out = [comps[n] for n in chosen["stage_weights"][stage]]
    if stage == "denoise" and act > 0:
        out.append(MemoryComponent(
            name="denoiser_activations", gb=act, source="estimate from the architecture (knowledge/diffusion_arch.csv)",
            formula=f"{req.batch} image(s) x {2 if req.uses_cfg(arch) else 1} (CFG) x the counted peak of one forward "
                    f"at {req.width}x{req.height} ({act / (req.batch * (2 if req.uses_cfg(arch) else 1)):.3f} GB, "
                    "benchmarks/diffusion_flops.py)"))
    if stage == "vae_decode":
        out.append(MemoryComponent(
            name="vae_decode", gb=vae_peak, source="AutoencoderKL decoder layout (3 live 256-channel full-resolution tensors)",
            formula=f"{VAE_PEAK_ELEMENTS_PER_PIXEL} x {req.width} x {req.height} px x "
                    f"{1 if req.vae_slicing else req.batch} image(s) x {dtype_bytes(vae_dtype):g} B ({vae_dtype})"))
    if req.placement == "sequential-offload":
        out.append(MemoryComponent(name="offload_layer", gb=_SEQUENTIAL_RESIDENT_GB, source="estimate",
                                   formula="one layer's weights on the GPU at a time (<= 0.3 GB)"))
    out.append(MemoryComponent(name="cuda_context", gb=_CONTEXT_GB, formula=f"{_CONTEXT_GB} GB CUDA context",
                               source="PyTorch CUDA semantics notes"))
    total = chosen["peak_gb"]
    return ImageVramEstimate(
        total_gb=round(total, 6), components_gb={c.name: round(c.gb, 6) for c in out}, components=out,
        model=_model_dict(components), inputs=req.model_dump() | {"method": "inference", "cfg": bool(arch and req.uses_cfg(arch))},
        assumptions=_assumptions(req, arch, act, vae_peak, chosen), fit=FitVerdict.of(total, gpu.name, gpu.memory_gb) if gpu else None,
        stages_gb={k: round(v, 6) for k, v in chosen["stages_gb"].items()}, placement=req.placement,
        weights_gb={k: round(v, 6) for k, v in weights.items()},
        placements=[{k: v for k, v in t.items() if k != "stage_weights"} for t in table])


def _placement(p: str, w: dict[str, float], act: float, vae_peak: float, arch: DiffusionArch | None,
               req: ImageRequest) -> dict[str, Any]:
    enc = [n for n in w if n.startswith("text_encoder")]
    den = [n for n in w if not n.startswith("text_encoder") and n != "vae"]
    everything = list(w)
    enc_gb, den_gb, vae_gb = sum(w[n] for n in enc), sum(w[n] for n in den), w.get("vae", 0.0)
    steps = req.steps
    if p == "all-on-gpu":
        on = {"text_encode": everything, "denoise": everything, "vae_decode": everything}
        copy_gb_per_call, note = 0.0, "no copies"
    elif p == "text-encoders-dropped":
        on = {"text_encode": enc, "denoise": den + ["vae"], "vae_decode": den + ["vae"]}
        copy_gb_per_call = 0.0
        note = "none when the prompts are encoded up front (batch jobs); otherwise the encoders reload per request"
    elif p == "model-offload":
        on = {"text_encode": [max(enc, key=lambda n: w[n])] if enc else [], "denoise": den, "vae_decode": ["vae"]}
        copy_gb_per_call = 2 * (enc_gb + den_gb + vae_gb)  # each component in, and back out when the next comes in
        note = "each component is copied to the GPU and back once per call"
    else:
        on = {"text_encode": [], "denoise": [], "vae_decode": []}
        copy_gb_per_call = enc_gb + vae_gb + den_gb * steps
        note = f"the denoiser's weights ({den_gb:.1f} GB) are copied to the GPU at every step"
    extra = {"text_encode": 0.0, "denoise": act, "vae_decode": vae_peak}
    base = _SEQUENTIAL_RESIDENT_GB if p == "sequential-offload" else 0.0
    stages = {s: sum(w[n] for n in names) + extra[s] + base + _CONTEXT_GB for s, names in on.items()}
    peak_stage = max(stages, key=lambda s: stages[s])
    copy_s = copy_gb_per_call / req.host_to_device_gb_per_s
    return {"placement": p, "peak_gb": stages[peak_stage], "peak_stage": peak_stage, "stages_gb": stages,
            "stage_weights": on, "copy_gb_per_call": copy_gb_per_call, "copy_s_per_call": copy_s,
            "speed_cost": note}


def _model_dict(components: Sequence[DiffusionComponent]) -> dict[str, Any]:
    first = components[0]
    return {"id": first.model_id, "name": first.model_name, "kind": "image-generation",
            "params_b": round(sum(c.params_m for c in components) / 1e3, 3), "moe": False, "rough": False,
            "source": first.source}


def _assumptions(req: ImageRequest, arch: DiffusionArch | None, act: float, vae_peak: float,
                 chosen: dict[str, Any]) -> list[str]:
    out = ["Peak GPU memory of one text-to-image call, decimal GB; an estimate, not a measurement.",
           f"{req.width}x{req.height}, batch {req.batch}: the VAE decode needs {vae_peak:.2f} GB on top of the weights"
           + (" (decoding one image at a time)" if req.vae_slicing else "") + "; the denoiser's activations "
           + (f"{act:.2f} GB" if arch else "are not modelled for this pipeline") + ".",
           f"Placement {req.placement}: the peak is the {chosen['peak_stage'].replace('_', ' ')} stage; speed cost: "
           f"{chosen['speed_cost']}" + (f" (~{chosen['copy_s_per_call']:.1f} s per call at "
                                        f"{req.host_to_device_gb_per_s:g} GB/s)." if chosen["copy_gb_per_call"] else ".")]
    if arch is not None and req.uses_cfg(arch):
        out.append("Classifier-free guidance doubles the denoiser batch (a conditional and an unconditional pass).")
    return out


def estimate_diffusion_vram(components: Sequence[DiffusionComponent], precision: str | None = None,
                            offload_text_encoders: bool = False, gpu: GpuMemory | None = None,
                            arch: DiffusionArch | None = None, **request: Any) -> ImageVramEstimate:
    """Peak memory of an image pipeline (the `vram` tool's entry): `offload_text_encoders` is the
    text-encoders-dropped placement; other fields of ImageRequest pass through `request`.

    Raises:
        InvalidInput: an unknown precision or an invalid request field.
    """
    from tools.schemas import validated

    if precision is not None:
        try:
            weight_format(precision)
        except KeyError:
            raise InvalidInput("precision", precision, _FORMATS) from None
    if offload_text_encoders and request.get("placement") in (None, "all-on-gpu"):
        request["placement"] = "text-encoders-dropped"
    if arch is not None:
        request.setdefault("width", arch.default_resolution)
        request.setdefault("height", arch.default_resolution)
        request.setdefault("steps", arch.default_steps)
    req = validated(ImageRequest, precision=precision, **{k: v for k, v in request.items() if v is not None})
    if not math.isfinite(req.host_to_device_gb_per_s):
        raise InvalidInput("host_to_device_gb_per_s", req.host_to_device_gb_per_s, "a positive number of GB/s")
    return estimate_image_memory(components, arch, req, gpu)
