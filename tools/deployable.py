"""Configurations practitioners deploy: which GPU x count options a recommendation may put first.

Rules (each rejection or demotion carries its reason):
- Tensor parallelism splits the attention heads: the degree n must divide the query heads, and the KV
  heads must split evenly (n divides them) or be replicated evenly (n a multiple of them), as vLLM
  and TensorRT-LLM require (vLLM `tensor_parallel_size` must divide `num_attention_heads`).
- Beyond 2 GPUs, tensor parallelism needs an NVLink-class link: each token's all-reduces over PCIe
  grow with the degree (guide ga-09), so 3+ GPUs over PCIe are rejected for serving.
- One GPU before tensor parallelism: a multi-GPU option ranks after every single-GPU option unless it
  is clearly cheaper, at most CLEARLY_CHEAPER of the best single-GPU cost, and then it is labelled with
  its drawback (a PCIe box: the all-reduce cost); with no single GPU, NVLink options come before PCIe ones.
- Production, compliance or regulated data: datacenter cards only, from providers that are not
  marketplaces of third-party hosts (knowledge/providers.csv `marketplace`).
"""

from __future__ import annotations

__all__ = ["CLEARLY_CHEAPER", "tp_reason", "reject_reason", "drawbacks", "tier", "order"]

from typing import Any, Callable

from tools.schemas import GpuSpec, ModelArch

CLEARLY_CHEAPER = 0.5  # a multi-GPU option is put ahead only at half the best single-GPU cost or less
_DATACENTER = ("datacenter", "datacenter-gddr")


def tp_reason(a: ModelArch, n: int) -> str | None:
    """Why n GPUs of tensor parallelism cannot split this model's heads (None: they can)."""
    if n <= 1:
        return None
    if a.num_attention_heads % n:
        return f"{n} does not divide {a.num_attention_heads} attention heads"
    kv = a.num_kv_heads or a.num_attention_heads
    if kv % n and n % kv:
        return f"{n} neither divides nor is a multiple of {kv} KV heads"
    return None


def reject_reason(a: ModelArch, g: GpuSpec, n: int, nvlink: bool, serving: bool, production: bool) -> str | None:
    """The reason n x g is not a configuration to deploy for this request (None: it is one)."""
    if production and g.gpu_class not in _DATACENTER:
        return (f"{n} x {g.name}: a {g.gpu_class or 'non-datacenter'} card; production or regulated data "
                "asks for datacenter GPUs (ECC memory, vendor support, datacenter hosting)")
    if serving:
        why = tp_reason(a, n)
        if why:
            return f"{n} x {g.name}: {why}"
        if n > 2 and not nvlink:
            return (f"{n} x {g.name}: tensor parallelism over {n} GPUs needs NVLink; over PCIe each token's "
                    "all-reduces make it slower than fewer, bigger GPUs [ga-09]")
    return None


def drawbacks(g: GpuSpec, n: int, nvlink: bool, marketplace: bool) -> list[str]:
    """What a practitioner would warn about this option (empty: none)."""
    out = []
    if n > 1 and not nvlink:
        out.append("PCIe only: every token's tensor-parallel all-reduce crosses PCIe, slower than one bigger GPU")
    if marketplace:
        out.append("a marketplace host: reliability, uptime and data handling vary by host")
    if g.gpu_class == "consumer" and n > 1:
        out.append("a consumer multi-GPU box: no ECC memory, less support")
    return out


def tier(option: dict[str, Any]) -> int:
    """0: one GPU; 1: several with NVLink; 2: several over PCIe."""
    if option["gpu_count"] == 1:
        return 0
    return 1 if option.get("nvlink") else 2


def order(options: list[dict[str, Any]], cost: Callable[[dict[str, Any]], float],
          key: Callable[[dict[str, Any]], tuple]) -> list[dict[str, Any]]:
    """Options sorted by `key` within tiers (one GPU first), a multi-GPU option lifted into the first
    tier when it costs at most CLEARLY_CHEAPER of that tier's best; with no single GPU, the NVLink
    options are the first tier.
    Each option gets `tier` and, when lifted, `promoted_because`."""
    first = min((tier(o) for o in options if tier(o) < 2), default=None)
    best = min((cost(o) for o in options if tier(o) == first), default=None)
    for o in options:
        t = tier(o)
        limit = None if best is None or t <= first else best * CLEARLY_CHEAPER
        if limit is not None and cost(o) <= limit:
            o["promoted_because"] = (f"at most {CLEARLY_CHEAPER:.0%} of the best "
                                     f"{'single-GPU' if first == 0 else 'NVLink'} option's cost "
                                     f"({cost(o):,.4g} vs {best:,.4g})")
            t = first
        o["tier"] = t
    return sorted(options, key=lambda o: (o["tier"], *key(o)))
