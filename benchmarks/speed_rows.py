"""Which published speed rows inform which fitted number (benchmarks/calibrate_speed.py).

A number is fitted only on the rows that can tell it apart from the others: a bandwidth efficiency on
rows where the GPU sets the pace, attention efficiency on long-context rows, a GPU's decode share only
where no engine measured elsewhere pins the GPU down. Facts read from code (kv_passes, the dequantise
thresholds) are named here where a fit may still override them.
"""

from __future__ import annotations

from functools import lru_cache

from knowledge.catalog import load_engines, load_kernels, resolve_gpu
from tests.tools.speed_cases import kernel_id

# kv_passes is a fact (1) for engines with paged / flash attention; fitted only where the cache is
# re-concatenated every step, the prior being 3 (copy read + write, then the attention read).
KV_PASSES_FITTED = {"pytorch-eager-legacy"}
ATTN_ROWS_TOKENS = 2048
ATTN_MIN_ROWS = 2
# The batch at which a kernel falls back to dequantise-then-GEMM is a fact read from its code and kept
# from quant_kernels.csv (bitsandbytes 4-bit: a single row runs gemv_4bit, more rows dequantize_4bit +
# F.linear; ExLlama v1 in AutoGPTQ 0.4: matmul_recons_thd = 8; ExLlamaV2: MAX_Q_GEMM_ROWS = 50;
# AutoGPTQ cuda-old: kernel_switch_threshold = 128; Marlin, tinygemm, LLM.int8() never do). Fitted only here:
RECONSTRUCT_FITTED: set[str] = set()

def is_hbm3(case) -> bool:
    return resolve_gpu(case.row["gpu_id"]).gpu.memory_type.upper().startswith("HBM3")


def is_eager_consumer(case) -> bool:
    """A Python-driven (host_overlap) engine on a consumer GPU: the rows host_factor_consumer acts on."""
    eager = {e.id for e in load_engines() if e.host_overlap}
    return case.engine in eager and resolve_gpu(case.row["gpu_id"]).gpu.gpu_class == "consumer"


@lru_cache(maxsize=None)
def counted_kernel(kid: str) -> bool:
    """A kernel whose host cost is its counted host operations (quant_kernels.csv host_ops) at the
    shared host_op_us, rather than a launch cost fitted for it alone."""
    k = next((x for x in load_kernels() if x.id == kid), None)
    return bool(k and (k.host_ops or k.reconstruct_host_ops))


def pays_host_ops(case) -> bool:
    """A row whose step includes counted host operations: an engine that counts its layers' torch
    operations, or a counted kernel on an engine without CUDA graphs (the rows host_op_us acts on)."""
    eng = {e.id: e for e in load_engines()}[case.engine]
    return bool(eng.host_ops_per_layer) or (not eng.cuda_graphs and counted_kernel(kernel_id(case)))


def relevant(obj: str, k: str, rows, is_kernel: bool) -> bool:
    r = [c.row for c in rows]
    if is_kernel:
        if k == "reconstruct_batch" and obj not in RECONSTRUCT_FITTED:
            return False
        if k in ("batch_slope", "reconstruct_batch"):
            return len({x["batch"] for x in r}) >= 2
        if k == "compute_eff":
            return any(int(x["batch"]) >= 16 for x in r)
        if k in ("launch_us_per_linear", "reconstruct_launch_us_per_linear"):
            eng = {e.id: e for e in load_engines()}
            kern = next((x for x in load_kernels() if x.id == obj), None)
            eager = [x for x in r if not eng[x["engine_id"]].cuda_graphs]
            if k == "reconstruct_launch_us_per_linear":  # rows on a known dequantise-then-GEMM path
                return obj not in RECONSTRUCT_FITTED and bool(kern and kern.reconstruct_batch) and any(
                    int(x["batch"]) >= kern.reconstruct_batch for x in eager)
            return bool(eager)
        return True
    if k == "bw_eff_hbm" or k == "bw_eff_gddr":
        hbm = [resolve_gpu(x["gpu_id"]).gpu.is_hbm for x in r]
        return any(hbm) if k == "bw_eff_hbm" else not all(hbm)
    if k == "compute_eff":
        return any(int(x["batch"]) >= 16 for x in r)
    if k == "prefill_eff":
        return any(x["metric"] == "aggregate_output" and int(x["batch"]) * int(x["prompt_tokens"] or 0) >= 2048
                   for x in r)
    if k == "allreduce_us":
        return any(int(x["gpus"]) > 1 for x in r)
    if k == "layer_hop_ms":
        return any(int(x["gpus"]) > 1 for x in r)
    if k == "kv_passes":
        return obj in KV_PASSES_FITTED
    if k == "attn_bw_eff":  # rows whose KV cache is long enough to weigh in the step
        return obj not in KV_PASSES_FITTED and sum(kv_tokens(x) >= ATTN_ROWS_TOKENS for x in r) >= ATTN_MIN_ROWS
    if k == "host_op_us":
        return any(pays_host_ops(c) for c in rows)
    if k == "overhead_ms_per_layer":  # counted operations replace it (EngineProfile.layer_host_ms)
        return not next(e for e in load_engines() if e.id == obj).host_ops_per_layer
    return True


def kv_tokens(row: dict) -> float:
    """KV-cache tokens a decode step of the row reads on average: batch x (prompt + output / 2)."""
    return int(row["batch"]) * (int(row["prompt_tokens"] or 0) + int(row["output_tokens"] or 0) / 2)


def long_rows(rows: list) -> list:
    """The rows whose KV cache weighs in the step: attention's read efficiency is fitted on these
    alone, so it does not absorb a bias of the engine's short-context rows."""
    return [c for c in rows if kv_tokens(c.row) >= ATTN_ROWS_TOKENS]


def device_rows(rows: list, engines: dict) -> list:
    """The rows of engines whose host work does not hide the GPU's (no host_overlap), when there
    are any: a bandwidth efficiency is measured where the GPU sets the pace, then shared with the
    eager engines of its group, whose steps are mostly Python."""
    device = [c for c in rows if not engines[c.engine].host_overlap]
    return device or rows


def share_gpus(rows: list, engines: dict) -> dict[str, list]:
    """{GPU id: rows} for the GPUs whose decode bandwidth share is fitted: a GPU whose every GPU-paced
    row comes from engines with no GPU-paced row on another GPU of its memory type. There the engine's
    own efficiency and the GPU's cannot be told apart, so the engine takes its bw_group's (or keeps its
    prior) and the GPU carries the rest; a GPU that an engine measured elsewhere also ran is pinned."""
    paced = [c for c in rows if not engines[c.engine].host_overlap]
    hbm = {c.row["gpu_id"]: resolve_gpu(c.row["gpu_id"]).gpu.is_hbm for c in paced}
    out = {}
    for g in hbm:
        mine = [c for c in paced if c.row["gpu_id"] == g]
        elsewhere = {c.engine for c in paced if c.row["gpu_id"] != g and hbm[c.row["gpu_id"]] == hbm[g]}
        if not {c.engine for c in mine} & elsewhere:
            out[g] = mine
    return out
