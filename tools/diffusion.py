"""Memory for image-generation pipelines (SD 1.5/2.1, SDXL, SD3/3.5, FLUX.1, PixArt) at inference.

Weights only, per component (denoiser UNet/DiT, text encoders, VAE): params x bytes of the chosen
precision. Sampling activations and the VAE decode spike depend on resolution and attention
kernels and are not modelled; the estimate says so.
"""

from __future__ import annotations

__all__ = ["estimate_diffusion_vram"]

from typing import Sequence

from tools.errors import InvalidInput
from tools.schemas import DiffusionComponent, FitVerdict, GpuMemory, MemoryComponent, VramEstimate
from tools.units import bytes_to_gb, weight_format

_CONTEXT_GB = 0.5  # same CUDA-context allowance as tools.vram


def estimate_diffusion_vram(components: Sequence[DiffusionComponent], precision: str | None = None,
                            offload_text_encoders: bool = False, gpu: GpuMemory | None = None) -> VramEstimate:
    """Resident weights of an image pipeline, decimal GB.

    Formula: sum over components of params x bytes per param. `precision` applies to the denoiser
    and text encoders (default: each component's recommended dtype); the VAE keeps its own dtype
    (SDXL's VAE is fp32 unless a fixed fp16 VAE is used). With `offload_text_encoders`, prompts are
    encoded first and the encoders moved to CPU (diffusers enable_model_cpu_offload), so the peak
    is max(encoders, denoiser + VAE).
    Source: parameter counts computed from each component's diffusers config (knowledge/diffusion_models.csv).

    Raises:
        InvalidInput: an unknown precision.
    """
    if not components:
        raise InvalidInput("model", "", "an image-generation pipeline with components")
    try:
        fmt = weight_format(precision) if precision else None
    except KeyError:
        raise InvalidInput("precision", precision, "fp32, bf16, fp16, fp8, int8, nf4") from None
    comps: list[MemoryComponent] = []
    enc_gb = den_gb = 0.0
    for c in components:
        f = weight_format(c.default_dtype) if (fmt is None or c.component == "vae") else fmt
        gb = bytes_to_gb(c.params_m * 1e6 * f.bytes_per_param)
        comps.append(MemoryComponent(name=c.component, gb=gb,
                                     formula=f"{c.component_class}: {c.params_m:,.0f}M params x {f.bytes_per_param:g} B ({f.name})",
                                     source=c.source or "diffusers config"))
        if c.component.startswith("text_encoder"):
            enc_gb += gb
        else:
            den_gb += gb
    resident = max(enc_gb, den_gb) if offload_text_encoders else enc_gb + den_gb
    if offload_text_encoders:
        comps = [c for c in comps if not c.name.startswith("text_encoder")] if den_gb >= enc_gb else \
                [c for c in comps if c.name.startswith("text_encoder")]
    comps.append(MemoryComponent(name="cuda_context", gb=_CONTEXT_GB, formula=f"{_CONTEXT_GB} GB CUDA context",
                                 source="PyTorch CUDA semantics notes"))
    total = resident + _CONTEXT_GB
    first = components[0]
    assumptions = [
        "Weights of the pipeline's components in GPU memory, decimal GB; an estimate, not a measurement.",
        "Sampling activations and the VAE decode spike (they grow with resolution and batch) are not included: leave headroom.",
    ]
    if offload_text_encoders:
        assumptions.append(f"Text encoders ({enc_gb:.1f} GB) run first, then move to CPU; the peak is the larger stage.")
    fit = FitVerdict.of(total, gpu.name, gpu.memory_gb) if gpu is not None else None
    return VramEstimate(
        total_gb=round(total, 6),
        components_gb={c.name: round(c.gb, 6) for c in comps},
        components=comps,
        model={"id": first.model_id, "name": first.model_name, "kind": "image-generation",
               "params_b": round(sum(c.params_m for c in components) / 1e3, 3), "moe": False, "rough": False,
               "source": first.source},
        inputs={"method": "inference", "precision": fmt.name if fmt else "default per component",
                "offload_text_encoders": offload_text_encoders},
        assumptions=assumptions,
        fit=fit,
    )
