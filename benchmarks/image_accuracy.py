"""Image-generation speed and memory against published measurements; fit of the framework profiles.

Usage:
    .venv/bin/python -m benchmarks.image_accuracy            # per-row errors, in-sample and leave-one-source-out
    .venv/bin/python -m benchmarks.image_accuracy --fit      # print fitted rows for knowledge/diffusion_frameworks.csv

Speed rows (tests/data/image_speed_measurements.csv) are predicted with tools.image_speed through the
catalog; the fit searches each framework's efficiency, bytes per FLOP and launch cost to minimise the
summed |log(predicted / measured)|. Leave-one-source-out: refit without one source, predict its rows.
A framework left with no training rows borrows torch-compile's fit (tensorrt) or diffusers' (others).
Memory rows (tests/data/image_memory_measurements.csv) are compared like with like: torch's counters
leave out the CUDA context, so the comparison does too.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from knowledge.catalog import (load_diffusion_arch, load_diffusion_models, load_gpus,  # noqa: E402
                               load_image_frameworks)
from tools.diffusion import ImageRequest, estimate_image_memory  # noqa: E402
from tools.image_speed import ImageFramework, ImageWork, estimate_image_speed, image_work, time_terms  # noqa: E402

SPEED = ROOT / "tests" / "data" / "image_speed_measurements.csv"
MEMORY = ROOT / "tests" / "data" / "image_memory_measurements.csv"
GIB_IN_GB = 2**30 / 1e9
FITTED = ("diffusers", "torch-compile", "tensorrt")


@dataclass(frozen=True)
class Row:
    id: str
    source: str
    framework: str
    metric: str
    measured: float
    exclude: str
    raw: tuple


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@lru_cache(maxsize=1)
def speed_rows() -> tuple[Row, ...]:
    return tuple(Row(r["id"], r["source"], r["framework"], r["metric"], float(r["measured"]), r["exclude"].strip(),
                     tuple(r.items())) for r in _rows(SPEED))


def _request(r: dict[str, str]) -> ImageRequest:
    arch = load_diffusion_arch()[r["pipeline"]]
    guidance = arch.default_guidance if r["cfg"] == "true" else (arch.default_guidance if arch.guidance_distilled else 1.0)
    return ImageRequest(width=int(r["width"]), height=int(r["height"]), steps=int(r["steps"]), batch=int(r["batch"]),
                        guidance=guidance, precision=r["precision"], placement=r.get("placement") or "all-on-gpu")


@lru_cache(maxsize=None)
def _work(row: Row, fp8_compute: bool) -> ImageWork:
    r = dict(row.raw)
    arch = load_diffusion_arch()[r["pipeline"]]
    gpu = {g.id: g for g in load_gpus()}[r["gpu_id"]]
    comps = load_diffusion_models()[r["pipeline"]]
    req = _request(r)
    mem = estimate_image_memory(comps, arch, req)
    copy = next(p for p in mem.placements if p["placement"] == req.placement)["copy_s_per_call"]
    return image_work(comps, arch, gpu, fp8_compute, req, mem.weights_gb, copy)


def predict(row: Row, fw: ImageFramework) -> float:
    """The row's metric as the estimator gives it: it/s of the denoiser loop, or seconds per call."""
    t = time_terms(_work(row, fw.fp8_compute), fw)
    return 1.0 / t["step"] if row.metric == "it_per_s" else t["total"]


def predict_full(row: Row, fw: ImageFramework) -> float:
    """The same through the public estimator (tools.image_speed.estimate_image_speed)."""
    r = dict(row.raw)
    arch = load_diffusion_arch()[r["pipeline"]]
    gpu = {g.id: g for g in load_gpus()}[r["gpu_id"]]
    est = estimate_image_speed(load_diffusion_models()[r["pipeline"]], arch, gpu, fw, _request(r))
    return est.steps_per_s if row.metric == "it_per_s" else est.seconds_per_batch


def errors(rows, profiles: dict[str, ImageFramework]) -> list[dict]:
    out = []
    for row in rows:
        p = predict(row, profiles[row.framework])
        out.append({"id": row.id, "framework": row.framework, "source": row.source, "measured": row.measured,
                    "predicted": p, "error_pct": 100.0 * (p - row.measured) / row.measured, "exclude": row.exclude})
    return out


def _loss(rows, fw: ImageFramework) -> float:
    """Mean |log(predicted / measured)| per source, summed over sources: every publication weighs the
    same, so one long table does not decide the fit alone."""
    per: dict[str, list[float]] = {}
    for r in rows:
        per.setdefault(r.source, []).append(abs(math.log(predict(r, fw) / r.measured)))
    return sum(sum(v) / len(v) for v in per.values())


_BOUNDS = {"compute_eff": (0.05, 0.95), "unet_bytes_per_flop": (0.0, 0.05), "transformer_bytes_per_flop": (0.0, 0.05),
           "overhead_ms_per_step": (0.0, 60.0)}


def fit_one(rows, start: ImageFramework, free: tuple[str, ...]) -> ImageFramework:
    """Pattern search from several starting efficiencies: each free parameter stepped up and down,
    the step halved when nothing improves; the best of the starts is kept."""
    best_all, best_all_loss = start, _loss(rows, start)
    for eff0 in (0.2, 0.4, 0.6, 0.8):
        cur = start.model_copy(update={"compute_eff": eff0}) if "compute_eff" in free else start
        cur_loss = _loss(rows, cur)
        step = {k: (_BOUNDS[k][1] - _BOUNDS[k][0]) / 4 for k in free}
        for _ in range(60):
            improved = False
            for k in free:
                for sign in (1, -1):
                    lo, hi = _BOUNDS[k]
                    v = min(hi, max(lo, getattr(cur, k) + sign * step[k]))
                    trial = cur.model_copy(update={k: v})
                    loss = _loss(rows, trial)
                    if loss < cur_loss - 1e-12:
                        cur, cur_loss, improved = trial, loss, True
            if not improved:
                step = {k: v / 2 for k, v in step.items()}
                if max(step[k] / (_BOUNDS[k][1] - _BOUNDS[k][0]) for k in free) < 1e-4:
                    break
        if cur_loss < best_all_loss:
            best_all, best_all_loss = cur, cur_loss
    return best_all


def fit(rows) -> dict[str, ImageFramework]:
    """Framework profiles fitted on `rows` (scored rows only); missing frameworks borrow a neighbour."""
    base = {f.id: f for f in load_image_frameworks()}
    out = dict(base)
    scored = [r for r in rows if not r.exclude]
    d_rows = [r for r in scored if r.framework == "diffusers"]
    out["diffusers"] = fit_one(d_rows, base["diffusers"], tuple(_BOUNDS)) if d_rows else base["diffusers"]
    for fid in ("torch-compile", "tensorrt"):
        fr = [r for r in scored if r.framework == fid]
        neighbour = out["torch-compile"] if fid == "tensorrt" and any(r.framework == "torch-compile" for r in scored) \
            else out["diffusers"]
        if len(fr) >= 2:
            free = tuple(_BOUNDS) if len(fr) >= 8 else ("compute_eff", "overhead_ms_per_step")
            start = base[fid].model_copy(update={k: getattr(neighbour, k) for k in ("unet_bytes_per_flop", "transformer_bytes_per_flop")})
            out[fid] = fit_one(fr, start, free)
        else:
            out[fid] = neighbour.model_copy(update={"id": fid, "name": base[fid].name, "aliases": base[fid].aliases,
                                                     "fp8_compute": base[fid].fp8_compute})
    out["comfyui"] = out["diffusers"].model_copy(update={"id": "comfyui", "name": base["comfyui"].name,
                                                           "aliases": base["comfyui"].aliases})
    return out


def loso() -> list[dict]:
    rows = [r for r in speed_rows() if not r.exclude]
    out = []
    for src in sorted({r.source for r in rows}):
        train = [r for r in rows if r.source != src]
        profiles = fit(train)
        out += errors([r for r in rows if r.source == src], profiles)
    return out


def summary(table: list[dict]) -> dict:
    errs = [abs(t["error_pct"]) for t in table if not t["exclude"]]
    return {"n": len(errs), "median_abs_pct": statistics.median(errs) if errs else float("nan"),
            "max_abs_pct": max(errs) if errs else float("nan"), "within_20_pct": sum(e <= 20 for e in errs),
            "sources": len({t["source"] for t in table if not t["exclude"]})}


# ---- memory -------------------------------------------------------------------------------------


def memory_table() -> list[dict]:
    out = []
    arches = load_diffusion_arch()
    for r in _rows(MEMORY):
        arch = arches[r["pipeline"]]
        te = r["text_encoder_precision"]
        req = ImageRequest(width=int(r["width"]), height=int(r["height"]), steps=int(r["steps"]), batch=int(r["batch"]),
                           precision=r["denoiser_precision"], placement=r["placement"],
                           text_encoder_precision=te if te != r["denoiser_precision"] else None)
        comps = load_diffusion_models()[r["pipeline"]]
        if te != r["denoiser_precision"] and not any(c.component_class.startswith("T5") for c in comps):
            raise ValueError(f"{r['id']}: a separate text-encoder precision needs a T5 pipeline")
        est = estimate_image_memory(comps, arch, req)
        # torch's counters leave out the CUDA context; device-used figures (mem_get_info, nvidia-smi) include it
        comparable = est.total_gb - (0.0 if r["metric"] == "device_used" else est.components_gb.get("cuda_context", 0.0))
        measured_gb = float(r["measured_gib"]) * GIB_IN_GB
        out.append({"id": r["id"], "source": r["source"], "placement": r["placement"], "measured_gb": measured_gb,
                    "predicted_gb": comparable, "error_pct": 100.0 * (comparable - measured_gb) / measured_gb,
                    "exclude": r["exclude"].strip()})
    return out


def memory_loso(table: list[dict]) -> list[dict]:
    """Nothing in the memory estimate is fitted on these rows (weights from configs, activation and VAE
    terms derived from the architectures), so leave-one-source-out equals the in-sample error."""
    return table


def report() -> dict:
    rows = list(speed_rows())
    ins = errors(rows, {f.id: f for f in load_image_frameworks()})
    lo = loso()
    mem = memory_table()
    return {"speed_in_sample": summary(ins), "speed_loso": summary(lo), "memory": summary(mem),
            "speed_rows": ins, "loso_rows": lo, "memory_rows": mem}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", action="store_true", help="fit on every scored row and print the profiles")
    a = ap.parse_args()
    if a.fit:
        for fid, f in fit(list(speed_rows())).items():
            print(f"{fid},eff={f.compute_eff:.4f},unet_bpf={f.unet_bytes_per_flop:.5f},"
                  f"dit_bpf={f.transformer_bytes_per_flop:.5f},overhead_ms={f.overhead_ms_per_step:.3f}")
        return 0
    rep = report()
    for name, key in (("in-sample (catalog profiles)", "speed_rows"), ("leave-one-source-out", "loso_rows"),
                      ("memory", "memory_rows")):
        print(f"\n{name}")
        for t in rep[key]:
            meas = t.get("measured", t.get("measured_gb"))
            pred = t.get("predicted", t.get("predicted_gb"))
            print(f"  {t['id']:52s} measured {meas:9.3f}  estimate {pred:9.3f}  {t['error_pct']:+7.1f}%"
                  + (f"  (excluded: {t['exclude']})" if t["exclude"] else ""))
    for k in ("speed_in_sample", "speed_loso", "memory"):
        print(f"{k}: {rep[k]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def run_all_rows() -> list[tuple[str, str]]:
    """The image rows of benchmarks/run_all.py's table."""
    rep = report()
    s, lo, m = rep["speed_in_sample"], rep["speed_loso"], rep["memory"]
    return [("image speed vs published measurements",
             f"median {s['median_abs_pct']:.1f}% in-sample / {lo['median_abs_pct']:.1f}% leave-one-source-out  "
             f"(n={s['n']}, {s['sources']} sources, {lo['within_20_pct']} within 20% out of sample)"),
            ("image peak memory vs published measurements",
             f"median {m['median_abs_pct']:.1f}% / max {m['max_abs_pct']:.1f}%  (n={m['n']}, {m['sources']} sources, "
             f"{m['within_20_pct']} within 20%)")]
