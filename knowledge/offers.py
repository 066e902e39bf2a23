"""Normalise cloud offer rows (SkyPilot catalog format) to the GPU catalog, and validate them.

Used both to build the shipped snapshot (knowledge/prices/offers.csv) and by `catalog refresh`.
Accelerator names map through knowledge/prices/accelerator_rules.csv (provider, name, instance
pattern, per-GPU memory range -> gpu id; first match wins, an empty gpu id = known not to be in
the catalog), then through the GPU catalog's names and aliases.
"""

from __future__ import annotations

__all__ = ["OFFER_COLUMNS", "NormalisedOffers", "map_accelerator", "parse_skypilot_rows"]

import csv
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from knowledge.catalog import DATA_DIR, load_gpus, resolve_gpu
from tools.errors import UnknownGpu

OFFER_COLUMNS = ("provider", "instance_type", "accelerator_name", "gpu_id", "gpu_name", "gpu_count",
                 "gpu_memory_gb", "vcpus", "host_memory_gib", "price_usd_per_hour", "price_usd_per_gpu_hour",
                 "spot_price_usd_per_hour", "spot_price_usd_per_gpu_hour", "region", "price_scope", "nvlink",
                 "as_of", "source")


@lru_cache(maxsize=1)
def _rules() -> tuple[dict[str, str], ...]:
    with open(DATA_DIR / "prices" / "accelerator_rules.csv", newline="", encoding="utf-8") as fh:
        return tuple(csv.DictReader(fh))


def _in_range(mem: float | None, lo: str, hi: str) -> bool:
    if not lo and not hi:
        return True
    if mem is None:
        return False
    return (not lo or mem >= float(lo)) and (not hi or mem <= float(hi))


def map_accelerator(provider: str, name: str, instance_type: str, gpu_memory_gib: float | None) -> tuple[str | None, str]:
    """Catalog gpu id for one offer's accelerator (None if not in the catalog) and why."""
    for r in _rules():
        if r["provider"] not in ("*", provider) or r["accelerator_name"] != name:
            continue
        if r["instance_regex"] and not re.search(r["instance_regex"], instance_type or ""):
            continue
        if not _in_range(gpu_memory_gib, r["min_gpu_memory_gib"], r["max_gpu_memory_gib"]):
            continue
        return (r["gpu_id"] or None), (r["note"] or "rule")
    try:
        m = resolve_gpu(name)
    except UnknownGpu:
        return None, f"accelerator name {name!r} is not in the GPU catalog"
    g = m.gpu
    if gpu_memory_gib and g.memory_gib and abs(gpu_memory_gib - g.memory_gib) / g.memory_gib > 0.15:
        return None, (f"{name!r} with {gpu_memory_gib:g} GiB per GPU does not match {g.name} "
                      f"({g.memory_gib:g} GiB)")
    return g.id, "catalog name"


@dataclass
class NormalisedOffers:
    offers: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    unmapped: dict[str, int] = field(default_factory=dict)


def _float(v: Any) -> float | None:
    if v is None:
        return None
    s = str(v).strip()
    if not s:
        return None
    try:
        x = float(s)
    except ValueError:
        raise ValueError(f"not a number: {s!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {s!r}")
    return x


def _gpu_info_memory_gib(info: str) -> float | None:
    """Per-GPU memory from SkyPilot's GpuInfo JSON ({'Gpus': [{'MemoryInfo': {'SizeInMiB': ...}}]})."""
    if not info or not info.strip().startswith("{"):
        return None
    try:
        d = json.loads(info.replace("'", '"'))
        size = d["Gpus"][0]["MemoryInfo"]["SizeInMiB"]
        return float(size) / 1024 if size else None
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def parse_skypilot_rows(rows: Iterable[dict[str, str]], provider: str, source: str, as_of: str | None,
                        memory_is_total: bool = False) -> NormalisedOffers:
    """Validate and normalise SkyPilot `vms.csv` rows (any column order, extra columns ignored).

    Rows without an accelerator are skipped (CPU instances). Invalid rows are dropped with a
    reason: no price at all, a non-positive or non-numeric price, a fractional GPU share,
    placeholder prices. Zones of a region collapse to one row (lowest price and spot price).

    Raises:
        ValueError: the header lacks a required column (the whole file is rejected).
    """
    out = NormalisedOffers()
    merged: dict[tuple, dict[str, Any]] = {}
    required = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"}
    first = True
    for i, raw in enumerate(rows, start=2):
        if first:
            missing = required - set(raw)
            if missing:
                raise ValueError(f"not a SkyPilot vms.csv: missing column(s) {', '.join(sorted(missing))}")
            first = False
        name = (raw.get("AcceleratorName") or "").strip()
        if not name:
            continue
        it = (raw.get("InstanceType") or "").strip()
        base = {"provider": provider, "instance_type": it, "accelerator_name": name,
                "region": (raw.get("Region") or "").strip().strip(",").strip(), "line": i}

        def drop(reason: str) -> None:
            out.dropped.append(base | {"reason": reason})

        try:
            count = _float(raw.get("AcceleratorCount"))
            price = _float(raw.get("Price"))
            spot = _float(raw.get("SpotPrice"))
            vcpus = _float(raw.get("vCPUs"))
            host_mem = _float(raw.get("MemoryGiB"))
        except ValueError as exc:
            drop(str(exc))
            continue
        if count is None or count <= 0:
            drop("no GPU count")
            continue
        if count < 1 or count != int(count):
            drop(f"fractional GPU share ({count:g} of a GPU): not comparable per GPU-hour")
            continue
        if price is not None and price <= 0:
            price = None  # SkyPilot writes 0/blank when a price is not offered
        if spot is not None and spot <= 0:
            spot = None
        if price is None and spot is None:
            drop("no on-demand or spot price")
            continue
        if price is not None and spot is not None and spot > price * 1.0001 and price > 0:
            spot = None  # a "spot" above on-demand is not a discount; treated as unknown
        mem = _gpu_info_memory_gib(raw.get("GpuInfo", "")) or _float(raw.get("gpu_memory_gib"))
        if mem and memory_is_total:
            mem = mem / count
        gpu_id, why = map_accelerator(provider, name, it, mem)
        if gpu_id is None:
            out.unmapped[name] = out.unmapped.get(name, 0) + 1
        key = (provider, it, name, count, base["region"])
        offer = {
            "provider": provider, "instance_type": it, "accelerator_name": name, "gpu_id": gpu_id,
            "gpu_count": int(count), "gpu_memory_gib": mem, "vcpus": vcpus, "host_memory_gib": host_mem,
            "price_usd_per_hour": price, "spot_price_usd_per_hour": spot, "region": base["region"],
            "price_scope": (raw.get("price_scope") or "instance").strip(), "as_of": as_of, "source": source,
            "mapping": why,
        }
        prev = merged.get(key)
        if prev is None:
            merged[key] = offer
        else:  # zones of one region: keep the lowest prices
            for k in ("price_usd_per_hour", "spot_price_usd_per_hour"):
                a, b = prev[k], offer[k]
                prev[k] = b if a is None else (a if b is None else min(a, b))
    out.offers = list(merged.values())
    return out


def finalize(offer: dict[str, Any]) -> dict[str, Any]:
    """Add catalog facts (GPU name, per-GPU memory in GB, NVLink) and per-GPU-hour prices."""
    gpus = {g.id: g for g in load_gpus()}
    g = gpus.get(offer.get("gpu_id") or "")
    n = int(offer["gpu_count"])
    mem_gib = offer.get("gpu_memory_gib") or (g.memory_gib if g else None)
    per = lambda v: None if v is None else round(v / n, 6)  # noqa: E731
    nvlink = bool(g and g.has_nvlink and n > 1) or "nvlink" in offer["instance_type"].lower()
    return {
        "provider": offer["provider"], "instance_type": offer["instance_type"],
        "accelerator_name": offer["accelerator_name"], "gpu_id": offer.get("gpu_id"),
        "gpu_name": g.name if g else offer["accelerator_name"], "gpu_count": n,
        "gpu_memory_gb": None if mem_gib is None else round(mem_gib * 2**30 / 1e9, 3),
        "vcpus": offer.get("vcpus"), "host_memory_gib": offer.get("host_memory_gib"),
        "price_usd_per_hour": offer.get("price_usd_per_hour"),
        "price_usd_per_gpu_hour": per(offer.get("price_usd_per_hour")),
        "spot_price_usd_per_hour": offer.get("spot_price_usd_per_hour"),
        "spot_price_usd_per_gpu_hour": per(offer.get("spot_price_usd_per_hour")),
        "region": offer["region"], "price_scope": offer.get("price_scope") or "instance", "nvlink": nvlink,
        "as_of": offer.get("as_of") or None, "source": offer["source"],
    }
