"""Normalise cloud offer rows (SkyPilot `vms.csv` format) to the GPU catalog: one code path, per-provider
semantics as data.

Used both to build the shipped snapshot (knowledge/prices/build_snapshot.py) and by `catalog refresh`.
Rules, all in knowledge/prices/:
- provider_rules.csv: whether GpuInfo memory is per GPU or the instance total (Vast), whether accelerator
  rows must be joined with their host VM (GCP), placeholder prices to drop. A provider not listed gets the
  defaults (per-GPU memory unless GpuInfo itself shows a total, accelerator rows are whole instances).
- host_vms.csv: GCP accelerator (name, count) -> host machine types; their VM row of the same zone is added.
- instance_rules.csv: fractional GPU shares the catalog writes as whole GPUs (Azure NVv4), non-GPU
  accelerators (TPUs).
- accelerator_rules.csv: accelerator name (+ instance pattern, per-GPU memory) -> GPU catalog id; the form
  factor comes from names ("pci", "pcie", "sxm", "nvl", Azure series), then the GPU catalog's names.
"""

from __future__ import annotations

__all__ = ["OFFER_COLUMNS", "DROPPED_COLUMNS", "NormalisedOffers", "Normaliser", "finalize", "map_accelerator", "provider_rule"]

import ast
import csv
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from knowledge.catalog import DATA_DIR, load_gpus, resolve_gpu
from knowledge.prices.regions import locate
from tools.errors import UnknownGpu

OFFER_COLUMNS = ("provider", "instance_type", "accelerator_name", "gpu_id", "gpu_name", "gpu_count",
                 "gpu_memory_gb", "vcpus", "host_memory_gib", "price_usd_per_hour", "price_usd_per_gpu_hour",
                 "spot_price_usd_per_hour", "spot_price_usd_per_gpu_hour", "region", "price_scope", "nvlink",
                 "as_of", "source", "gpu_vendor", "zone", "spot_zone", "places", "country", "continent")
DROPPED_COLUMNS = ("provider", "instance_type", "accelerator_name", "region", "reason", "source")
_RULES = DATA_DIR / "prices"


def _read(name: str) -> tuple[dict[str, str], ...]:
    with open(_RULES / name, newline="", encoding="utf-8") as fh:
        return tuple({k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh))


@lru_cache(maxsize=1)
def provider_rules() -> dict[str, dict[str, str]]:
    """Every row of provider_rules.csv by provider name."""
    return {r["provider"]: r for r in _read("provider_rules.csv")}


def provider_rule(provider: str) -> dict[str, str]:
    """The provider's row of provider_rules.csv, or the defaults for a provider never seen before."""
    return provider_rules().get(provider) or {"provider": provider, "gpu_memory": "per_gpu",
                                               "accelerator_rows": "instance", "placeholder": "", "published": ""}


@lru_cache(maxsize=1)
def _host_vms() -> tuple[dict[tuple[str, str, int], list[str]], dict[str, set[str]]]:
    hosts: dict[tuple[str, str, int], list[str]] = {}
    attachable: dict[str, set[str]] = {}
    for r in _read("host_vms.csv"):
        if r["scope"] == "attachable":
            attachable.setdefault(r["provider"], set()).add(r["accelerator_name"])
        else:
            hosts.setdefault((r["provider"], r["accelerator_name"], int(r["accelerator_count"])), []).append(
                r["instance_type"])
    return hosts, attachable


@lru_cache(maxsize=1)
def _instance_rules() -> tuple[dict[str, str], ...]:
    return _read("instance_rules.csv")


@lru_cache(maxsize=1)
def _rules() -> tuple[dict[str, str], ...]:
    return _read("accelerator_rules.csv")


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
    gpu_rows: int = 0  # rows that named an accelerator (valid or not)


def _float(v: Any) -> float | None:
    s = "" if v is None else str(v).strip()
    if not s:
        return None
    try:
        x = float(s)
    except ValueError:
        raise ValueError(f"not a number: {s[:40]!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {s[:40]!r}")
    return x


@lru_cache(maxsize=4096)
def _gpu_info(info: str) -> tuple[float | None, float | None]:
    """(SizeInMiB, TotalGpuMemoryInMiB) from SkyPilot's GpuInfo, a Python-literal dict written with single
    quotes; numbers may be strings (Cudo writes 'Count': '8.0'). Azure's GpuInfo is only a name: (None, None)."""
    s = (info or "").strip()
    if not s.startswith("{") or len(s) > 4000:
        return None, None
    try:
        d = ast.literal_eval(s)
        size = _float(d["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
        total = _float(d.get("TotalGpuMemoryInMiB"))
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError, MemoryError, RecursionError):
        return None, None
    return (size or None), (total or None)


def _min_with_zone(a: tuple[float | None, set[str]], price: float | None, zone: str) -> tuple[float | None, set[str]]:
    """Running minimum of a price and the zones that hold it."""
    best, zones = a
    if price is None:
        return a
    if best is None or price < best - 1e-9:
        return price, {zone}
    if abs(price - best) <= 1e-9:
        return best, zones | {zone}
    return a


class Normaliser:
    """Feed one provider's rows in file order (`add`), then `finish()`; memory holds GPU rows only
    (and, for GCP, the host VM rows of the GPU machine families)."""

    def __init__(self, provider: str, source: str, as_of: str | None):
        self.provider, self.source, self.as_of = provider, source, as_of
        self.rule = provider_rule(provider)
        self.out = NormalisedOffers()
        self._merged: dict[tuple, list[dict[str, Any]]] = {}
        self._dropped: dict[tuple, dict[str, Any]] = {}
        hosts, attachable = _host_vms()
        self._hosts = {(n, c): its for (p, n, c), its in hosts.items() if p == provider}
        self._attachable = attachable.get(provider, set())
        self._host_types = {it for its in self._hosts.values() for it in its}
        self._vms: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._accels: list[dict[str, Any]] = []
        self._irules = [r for r in _instance_rules() if r["provider"] in ("*", provider)]
        self._rule_cache: dict[tuple[str, str], str | None] = {}

    def _drop(self, it: str, name: str, region: str, reason: str) -> None:
        key = (it, name, region, reason)
        if key not in self._dropped:
            self._dropped[key] = {"provider": self.provider, "instance_type": it, "accelerator_name": name,
                                  "region": region, "reason": reason, "source": self.source}

    def add(self, raw: dict[str, str]) -> None:
        """One catalog row (column order free, extra columns ignored)."""
        name = (raw.get("AcceleratorName") or "").strip()
        it = (raw.get("InstanceType") or "").strip()
        region = (raw.get("Region") or "").strip().strip(",").strip()
        zone = (raw.get("AvailabilityZone") or "").strip() or region
        if not name:
            if it in self._host_types:
                self._add_vm(raw, it, region, zone)
            return
        self.out.gpu_rows += 1
        if (why := self._instance_rule(it, name)) is not None:
            return self._drop(it, name, region, why)
        if self.rule["placeholder"]:
            return self._drop(it, name, region, self.rule["placeholder"])
        try:
            count = _float(raw.get("AcceleratorCount"))
            price, spot = _float(raw.get("Price")), _float(raw.get("SpotPrice"))
            vcpus, host_mem = _float(raw.get("vCPUs")), _float(raw.get("MemoryGiB"))
        except ValueError as exc:
            return self._drop(it, name, region, str(exc))
        if count is None or count <= 0:
            return self._drop(it, name, region, "no GPU count")
        if count < 1 or count != int(count):
            return self._drop(it, name, region, f"fractional GPU share ({count:g} of a GPU): not comparable per GPU-hour")
        price = price if price is not None and price > 0 else None  # SkyPilot writes 0/blank when not offered
        spot = spot if spot is not None and spot > 0 else None
        mem = self._memory_gib(raw, int(count))
        row = {"instance_type": it, "accelerator_name": name, "gpu_count": int(count), "gpu_memory_gib": mem,
               "vcpus": vcpus, "host_memory_gib": host_mem, "price": price, "spot": spot, "region": region,
               "zone": zone, "price_scope": (raw.get("price_scope") or "").strip()}
        if self.rule["accelerator_rows"] == "host_vm_join" and not it:
            self._accels.append(row)
        elif self.rule["accelerator_rows"] == "host_vm_join" and it in self._host_types:
            self._collapse(row | {"price_scope": "instance (host VM + GPU summed)"})  # already summed (snapshot)
        else:
            self._collapse(row)

    def _instance_rule(self, it: str, name: str) -> str | None:
        """Why an instance is not a whole GPU (instance_rules.csv), or None; cached per (instance, name)."""
        key = (it, name)
        if key not in self._rule_cache:
            self._rule_cache[key] = None
            for r in self._irules:
                if (r["instance_regex"] and not re.search(r["instance_regex"], it)) or \
                        (r["accelerator_regex"] and not re.search(r["accelerator_regex"], name)):
                    continue
                if r["not_gpu"]:
                    self._rule_cache[key] = f"not a GPU: {r['reason']}"
                elif r["gpu_fraction"]:
                    self._rule_cache[key] = f"fractional GPU share ({r['reason']}): not comparable per GPU-hour"
                break
        return self._rule_cache[key]

    def _memory_gib(self, raw: dict[str, str], count: int) -> float | None:
        size, total = _gpu_info(raw.get("GpuInfo", ""))
        if size is not None and self.rule["gpu_memory"] == "gib_in_mib_field":
            size, total = size * 1024, (total * 1024 if total is not None else None)
        elif size is None:
            try:
                size = (_float(raw.get("gpu_memory_gib")) or 0) * 1024 or None  # the shared snapshot's column (GiB)
            except ValueError:
                size = None
        if size is None:
            return None
        # A per-instance total only where provider_rules.csv says so: GpuInfo's own TotalGpuMemoryInMiB cannot
        # tell (Vast writes the total as SizeInMiB; Lambda writes the per-GPU size as TotalGpuMemoryInMiB).
        if self.rule["gpu_memory"] == "instance_total":
            size = size / count
        gib = size / 1024
        return gib if 1 <= gib <= 1024 else None  # outside any GPU made: a unit mix-up, so unknown

    def _add_vm(self, raw: dict[str, str], it: str, region: str, zone: str) -> None:
        try:
            vm = {"price": _float(raw.get("Price")), "spot": _float(raw.get("SpotPrice")),
                  "vcpus": _float(raw.get("vCPUs")), "host_memory_gib": _float(raw.get("MemoryGiB"))}
        except ValueError:
            return
        self._vms[(it, region, zone)] = vm

    def _join_host_vms(self) -> None:
        for a in self._accels:
            types = self._hosts.get((a["accelerator_name"], a["gpu_count"]))
            if types is None:
                if a["accelerator_name"] in self._attachable:
                    self._collapse(a | {"price_scope": "accelerator_only (attach to an N1 VM, billed separately)"})
                else:
                    self._drop("", a["accelerator_name"], a["region"],
                               f"no host machine type known for {a['gpu_count']} x {a['accelerator_name']}")
                continue
            found = False
            for it in types:
                vm = self._vms.get((it, a["region"], a["zone"]))
                if vm is None:
                    continue
                found = True
                # a VM row priced 0 (A4) carries no separate host charge: SkyPilot adds it as 0 as well
                add = lambda x, y: None if x is None or y is None or x < 0 or y <= 0 else round(x + y, 6)  # noqa: E731
                self._collapse(a | {"instance_type": it, "price": add(vm["price"], a["price"]),
                                    "spot": add(vm["spot"], a["spot"]), "vcpus": vm["vcpus"],
                                    "host_memory_gib": vm["host_memory_gib"],
                                    "price_scope": "instance (host VM + GPU summed)"})
            if not found:
                self._drop("", a["accelerator_name"], a["region"],
                           f"host VM ({', '.join(types)}) not priced in that zone")

    def _collapse(self, row: dict[str, Any]) -> None:
        """Zones of one region become one offer: lowest price and lowest spot, and the zone when one zone holds it.
        Rows of one instance type and region whose per-GPU memory differs (Vast hosts) stay apart."""
        mem = row["gpu_memory_gib"]
        same = self._merged.setdefault((row["instance_type"], row["accelerator_name"], row["gpu_count"], row["region"]), [])
        prev = next((m for m in same if m["gpu_memory_gib"] is None or mem is None
                     or abs(m["gpu_memory_gib"] - mem) <= 0.02 * mem), None)
        if prev is None:
            prev = row | {"_p": (None, set()), "_s": (None, set())}
            same.append(prev)
        elif prev["gpu_memory_gib"] is None:
            prev["gpu_memory_gib"] = mem
        prev["_p"] = _min_with_zone(prev["_p"], row["price"], row["zone"])
        prev["_s"] = _min_with_zone(prev["_s"], row["spot"], row["zone"])

    def finish(self) -> NormalisedOffers:
        self._join_host_vms()
        while self._merged:  # consumed as it goes: the merged rows and the offers are not both held
            group = self._merged.pop(next(iter(self._merged)))
            for m in group:
                self._emit(m)
        self.out.dropped = list(self._dropped.values())
        self._accels, self._vms = [], {}
        return self.out

    def _emit(self, m: dict[str, Any]) -> None:
        (price, pz), (spot, sz) = m.pop("_p"), m.pop("_s")
        it, name, region = m["instance_type"], m["accelerator_name"], m["region"]
        if price is not None and spot is not None and spot > price * 1.0001:
            spot, sz = None, set()  # a "spot" above on-demand is not a discount: treated as unknown
        if price is None and spot is None:
            return self._drop(it, name, region, "no on-demand or spot price")
        gpu_id, why = map_accelerator(self.provider, name, it, m["gpu_memory_gib"])
        if gpu_id is None:
            self.out.unmapped[name] = self.out.unmapped.get(name, 0) + 1
        self.out.offers.append({
            "provider": self.provider, "instance_type": it, "accelerator_name": name, "gpu_id": gpu_id,
            "gpu_count": m["gpu_count"], "gpu_memory_gib": m["gpu_memory_gib"], "vcpus": m["vcpus"],
            "host_memory_gib": m["host_memory_gib"], "price_usd_per_hour": price, "spot_price_usd_per_hour": spot,
            "region": region, "price_scope": m["price_scope"] or "instance", "as_of": self.as_of,
            "source": self.source, "mapping": why,
            "zone": next(iter(pz)) if len(pz) == 1 and next(iter(pz)) != region else None,
            "spot_zone": next(iter(sz)) if len(sz) == 1 and next(iter(sz)) != region else None})


@lru_cache(maxsize=1)
def _gpus() -> dict[str, Any]:
    return {g.id: g for g in load_gpus()}


def finalize(offer: dict[str, Any]) -> dict[str, Any]:
    """Add catalog facts (GPU name, vendor, per-GPU memory in GB, NVLink), per-GPU-hour prices and the
    region's place, country and continent."""
    g = _gpus().get(offer.get("gpu_id") or "")
    n = int(offer["gpu_count"])
    mem_gib = offer.get("gpu_memory_gib") or (g.memory_gib if g else None)
    per = lambda v: None if v is None else round(v / n, 6)  # noqa: E731
    nvlink = bool(g and g.has_nvlink and n > 1) or "nvlink" in (offer["instance_type"] or "").lower()
    where = locate(offer["provider"], offer["region"])
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
        "gpu_vendor": (g.vendor if g else None) or None, "zone": offer.get("zone"), "spot_zone": offer.get("spot_zone"),
        "places": where.places or None, "country": where.country or None, "continent": where.continent or None,
    }
