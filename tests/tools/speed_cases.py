"""Published decode-speed measurements (tests/data/speed_measurements.csv) as estimator cases.

Shared by the accuracy tests, benchmarks/speed_accuracy.py and benchmarks/calibrate_speed.py. Each
case is resolved once (model, GPU, request, engine and kernel ids) and then estimated with
tools.throughput directly, so a fit can swap in trial engine and kernel profiles cheaply.
"""

from __future__ import annotations

import csv
import re
import statistics
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from assistant.service.api import resolve_model_arch
from knowledge.catalog import load_engines, load_kernels, resolve_gpu, resolve_kernel
from tools.kernels import DENSE, KernelProfile
from tools.schemas import GpuSpec, validated
from tools.throughput import EngineProfile, SpeedRequest, estimate_speed
from tools.units import weight_format

DATA = Path(__file__).resolve().parents[1] / "data" / "speed_measurements.csv"


@dataclass(frozen=True)
class SpeedCase:
    id: str
    row: dict = field(hash=False, compare=False)
    measured: float = 0.0
    exclude: str = ""

    @property
    def source(self) -> str:
        return source_key(self.row["source"])

    @property
    def engine(self) -> str:
        return self.row["engine_id"]


def source_key(source: str) -> str:
    """One publication per key: the cited address without the commit, the anchor or the remark, so
    two revisions of the same file count as one source (and are held out together)."""
    url = source.split(" ")[0].split("#")[0]
    url = re.sub(r"/blob/[0-9a-f]{7,40}/", "/blob/", url)
    return url.rstrip("/")


def load_cases(path: Path = DATA) -> list[SpeedCase]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [SpeedCase(r["id"], r, float(r["measured_tokens_per_s"]), r["exclude"].strip()) for r in rows]


@cache
def _resolved(case_id: str) -> tuple:
    r = next(c.row for c in _all_cases() if c.id == case_id)
    arch = resolve_model_arch(r["model_hf_repo"], None, None)
    gpu = resolve_gpu(r["gpu_id"]).gpu
    req = validated(SpeedRequest, precision=r["precision_id"], kv_precision=r.get("kv_precision") or "bf16",
                    batch=int(r["batch"]), prompt_tokens=int(r["prompt_tokens"] or 0),
                    output_tokens=int(r["output_tokens"] or 128), gpus=int(r["gpus"] or 1))
    engine = next(e for e in load_engines() if e.id == r["engine_id"])
    kern = resolve_kernel(r.get("kernel") or r["precision_id"], engine) or engine.kernel_for(
        weight_format(r["precision_id"]))
    return arch, gpu, req, kern.id


@lru_cache(maxsize=1)
def _all_cases() -> tuple[SpeedCase, ...]:
    return tuple(load_cases())


@lru_cache(maxsize=1)
def _catalog_kernels() -> dict[str, KernelProfile]:
    return {k.id: k for k in load_kernels()}


def kernel_id(case: SpeedCase) -> str:
    """The kernel family the case runs on ('dense' for 16-bit)."""
    return _resolved(case.id)[3]


def estimate_for(case: SpeedCase, engines: dict[str, EngineProfile] | None = None,
                 kernels: dict[str, KernelProfile] | None = None, gpus: dict[str, GpuSpec] | None = None) -> float:
    """Estimated tokens/s in the case's metric, with optional trial engine, kernel and GPU profiles."""
    arch, gpu, req, kid = _resolved(case.id)
    gpu = (gpus or {}).get(case.row["gpu_id"], gpu)
    engine = (engines or {}).get(case.engine) or next(e for e in load_engines() if e.id == case.engine)
    kern = (kernels or {}).get(kid) or _catalog_kernels().get(kid, DENSE)
    est = estimate_speed(arch, gpu, engine, req, kernel=kern)
    if case.row["metric"] == "aggregate_output":  # output tokens over the whole run, prefill included
        return req.batch * req.output_tokens / est.request_latency_s
    if case.row["metric"] == "decode_aggregate":  # decode steps only, summed over the batch
        return est.aggregate_tokens_per_s
    return est.decode_tokens_per_s


def error_table(cases: list[SpeedCase] | None = None, engines: dict | None = None,
                kernels: dict | None = None) -> list[dict]:
    out = []
    for c in cases if cases is not None else load_cases():
        if c.exclude:
            out.append({"id": c.id, "engine": c.row["engine"], "source": c.source, "measured": c.measured,
                        "estimate": None, "error_pct": None, "exclude": c.exclude})
            continue
        e = estimate_for(c, engines, kernels)
        out.append({"id": c.id, "engine": c.engine, "source": c.source, "kernel": kernel_id(c),
                    "measured": c.measured, "estimate": e, "error_pct": 100.0 * (e - c.measured) / c.measured,
                    "exclude": ""})
    return out


def summary(rows: list[dict]) -> dict:
    scored = [abs(r["error_pct"]) for r in rows if not r["exclude"]]
    return {"n": len(scored), "median_abs_pct": statistics.median(scored), "max_abs_pct": max(scored),
            "within_20_pct": sum(e <= 20 for e in scored), "within_35_pct": sum(e <= 35 for e in scored)}
