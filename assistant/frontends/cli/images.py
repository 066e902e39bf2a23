"""Image-generation options and text output for the `vram`, `speed`, `cost` and `recommend` commands."""

from __future__ import annotations

__all__ = ["add_image_args", "format_image_cost", "format_image_speed", "image_kwargs"]

import argparse
from typing import Any

_KEYS = ("resolution", "steps", "guidance", "placement", "text_encoder_precision", "vae_slicing", "images",
         "images_per_hour", "max_latency_s")


def _int(text: str) -> int:
    try:
        v = float(text.replace(",", "").replace("_", "").lower().replace("k", "e3").replace("m", "e6"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v != v or v in (float("inf"), float("-inf")) or v != int(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(v)


def _float(text: str) -> float:
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def add_image_args(p: argparse.ArgumentParser, *, jobs: bool = False, endpoint: bool = False) -> None:
    """Options for image pipelines (SDXL, FLUX.1 ...); LLMs ignore them when they are not given."""
    g = p.add_argument_group("image pipelines")
    g.add_argument("--resolution", help="image size in pixels: 1024 or 1024x768 (default: the model's own)")
    g.add_argument("--steps", type=_int, help="denoising steps (default: the model's own, e.g. 50 SD, 28 FLUX dev, 4 schnell)")
    g.add_argument("--guidance", type=_float, help="CFG scale; above 1 doubles the denoiser batch unless distilled (FLUX)")
    g.add_argument("--placement", help="all-on-gpu (default) | text-encoders-dropped | model-offload | sequential-offload")
    g.add_argument("--text-encoder-precision", help="the T5 encoder's weights: bf16 fp8 int8 nf4 q8_0 q4_k_m ...")
    g.add_argument("--vae-slicing", action="store_true", default=None, help="decode a batch one image at a time")
    if jobs:
        g.add_argument("--images", type=_int, help="images to generate (batch job), e.g. 10000 or 50k")
    if endpoint:
        g.add_argument("--images-per-hour", type=_float, help="endpoint load in images per hour")
        g.add_argument("--max-latency-s", type=_float, help="recommend: seconds a user may wait for an image")


def image_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The image options that were given (unset ones stay out, so LLM requests are untouched)."""
    return {k: getattr(args, k) for k in _KEYS if getattr(args, k, None) is not None}


def format_image_speed(est: Any) -> str:
    i, t = est.inputs, est.time_s
    lines = [f"{est.model} on {est.gpu['name']} with {est.engine} ({i['width']}x{i['height']}, {i['steps']} steps, "
             f"batch {i['batch']}{', CFG' if i['cfg'] else ''}) - ESTIMATE, {est.bound}-bound",
             f"  seconds per image     {est.seconds_per_image:,.2f} s",
             f"  images per hour       {est.images_per_hour:,.0f}",
             f"  per call              {t['total']:,.2f} s (text {t['text_encode']:.2f}, denoise {t['denoise']:.2f}, "
             f"VAE {t['vae_decode']:.2f}" + (f", offload copies {t['offload_copies']:.2f}" if t["offload_copies"] else "") + ")",
             f"  denoiser              {est.steps_per_s:,.2f} steps/s"]
    m = est.memory or {}
    if m:
        lines.append(f"  memory                {m['total_gb']:,.1f} GB with {m['placement']}"
                     + ("" if m.get("fits") is None else (" - fits" if m["fits"] else " - DOES NOT FIT")))
    lines.append("Assumptions:")
    lines += [f"  - {a}" for a in est.assumptions]
    return "\n".join(lines)


def format_image_cost(d: dict[str, Any]) -> str:
    usd = lambda v: "unknown" if v is None else f"${v:,.2f}"  # noqa: E731
    s = d["speed"]
    lines = []
    o = d.get("offer")
    if o:
        lines.append(f"Offer: {o['provider']} {o['instance_type'] or ''} ({o['gpu_count']} x {o['gpu']}, {o['region']}) "
                     f"at ${o['price_usd_per_hour']:,.2f}/hour")
    lines.append(f"{d['model']}: {s['seconds_per_image']:.2f} s per image, {s['images_per_hour']:,.0f} images/hour per GPU "
                 f"({s['engine']}, {s['bound']}-bound, estimate)")
    j = d.get("batch_job")
    if j:
        lines.append(f"Batch job: {j['images']:,} images in {j['runtime_hours']:,.2f} h on {j['gpus']} GPU(s)")
        if "on_demand_cost_usd" in j:
            b = j["billing"]
            lines.append(f"  on-demand: {usd(j['on_demand_cost_usd'])} (per second {usd(b['per_second_usd'])}, "
                         f"per minute {usd(b['per_minute_usd'])}, per hour {usd(b['per_hour_usd'])}); "
                         f"{usd(j.get('usd_per_1000_images'))} per 1,000 images")
        sp = j.get("spot")
        if sp and sp.get("cost_usd") is not None:
            lines.append(f"  spot: expected {usd(sp['cost_usd'])} over {sp['wall_hours']:,.2f} h "
                         f"({sp['expected_interruptions']:.2f} expected interruptions)")
    e = d.get("endpoint")
    if e:
        lines.append(f"Endpoint: {e['replicas']} replica(s) at {e['utilisation']:.0%} utilisation; "
                     f"{usd(e['usd_per_1000_images'])} per 1,000 images; {usd(e['monthly_usd'])} a month always on")
    lines.append("Assumptions:")
    lines += [f"  - {a}" for a in d["assumptions"]]
    lines.append(d["data_note"])
    return "\n".join(lines)
