"""Quantised matmul kernel families: how long the linear layers of one decode step take.

A weight-only quantised kernel is not "fewer bytes, same speed". Each family is data
(knowledge/quant_kernels.csv, each row citing the measurements it was fitted on) with four numbers:

    bw_eff             fraction of the engine's 16-bit bandwidth the kernel reaches while streaming its
                       packed weights at batch 1 (dequantisation inside the kernel costs issue slots)
    batch_slope        extra weight-streaming time per additional row of the batch, as a fraction of the
                       batch-1 time: GEMV-style kernels (bitsandbytes 4-bit, AutoGPTQ cuda, exllama)
                       dequantise the weights again for every row; GEMM kernels (Marlin, AWQ GEMM, FP8)
                       keep it near 0 until they become compute-bound
    reconstruct_batch  batch from which the kernel stops fusing: it dequantises the whole matrix into a
                       16-bit scratch copy (write 2 B/weight) and runs a 16-bit GEMM (read 2 B/weight);
                       0 = never (bitsandbytes 4-bit: from batch 2; exllama v1: from 8 rows)
    compute_eff        tensor-core efficiency relative to the engine's 16-bit GEMMs once compute-bound
    launch_us_per_linear  extra host/launch time per quantised linear layer per step in engines without
                       CUDA graphs (bitsandbytes launches several small kernels per layer)
    reconstruct_launch_us_per_linear  extra host time per linear on the dequantise-then-GEMM path: in
                       bitsandbytes 4-bit a single row calls one fused gemv_4bit, more rows go through
                       the MatMul4Bit autograd function, dequantize_4bit's Python wrapper and F.linear
    host_ops           host operations per call beyond the one of a 16-bit linear (counted from the
                       wrapper's code: every torch operator call, allocation, view or cast, and every
                       native kernel call); an eager engine pays each at its host_op_us, one fitted
                       figure for every kernel and engine, so a kernel's host cost is judged on the
                       measurements of other kernels too
    reconstruct_host_ops  extra host operations per call on the dequantise-then-GEMM path
    host_sync          the kernel reads a data-dependent size back to the host on every call (LLM.int8()
                       with an outlier threshold: `outliers.any()` / `torch.argwhere` in bitsandbytes 0.45,
                       `torch.unique` of the COO outliers in 0.37-0.44), so an eager loop stalls on each
                       linear layer and its host and GPU time add instead of overlapping

Time of the linear layers for batch b (weights W bytes, Pq quantised weights, bandwidth B):
    reconstruct (b >= reconstruct_batch > 0):  (W + 4 Pq) / B   (a dequantise kernel and a 16-bit GEMM)
    fused:                                     W / (B x bw_eff) x (1 + batch_slope x (b - 1))
    t_linear = max(memory, b x 2 x active params / (peak x engine compute_eff x kernel compute_eff))
               + (launch_us_per_linear + host_ops x host_op_us [+ the reconstruct_ pair when
                 reconstructing]) x quantised linears (eager engines only)
"""

from __future__ import annotations

__all__ = ["DENSE", "KernelProfile", "linear_time_s"]

from pydantic import BaseModel, ConfigDict, Field


class KernelProfile(BaseModel):
    """One quantised-matmul kernel family (knowledge/quant_kernels.csv)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    formats: tuple[str, ...] = Field((), description="tools.units weight formats the kernel runs (int4, int8, nf4, gguf ...)")
    bw_eff: float = Field(1.0, gt=0, le=1.5, description="fraction of the engine's 16-bit bandwidth at batch 1")
    batch_slope: float = Field(0.0, ge=0, le=5, description="extra weight-read time per extra batch row (fraction)")
    reconstruct_batch: int = Field(0, ge=0, description="batch from which weights are dequantised to 16-bit; 0 never")
    compute_eff: float = Field(1.0, gt=0, le=2, description="tensor efficiency relative to 16-bit GEMMs")
    launch_us_per_linear: float = Field(0.0, ge=0, description="extra launch time per quantised linear (eager)")
    reconstruct_launch_us_per_linear: float = Field(0.0, ge=0, description="extra host time per quantised linear "
                                                    "on the dequantise-then-GEMM path (eager engines)")
    host_ops: float = Field(0.0, ge=0, description="host operations per call beyond a 16-bit linear's one "
                            "(counted from the wrapper's code), each costing the engine's host_op_us")
    reconstruct_host_ops: float = Field(0.0, ge=0, description="extra host operations per call on the "
                                        "dequantise-then-GEMM path (counted from the code)")
    host_sync: bool = Field(False, description="every call waits for the GPU (a data-dependent shape read back "
                            "on the host), so an eager engine cannot enqueue ahead: host and GPU time add")
    source: str = ""
    notes: str = ""


DENSE = KernelProfile(id="dense", name="16-bit GEMM (cuBLAS-class)", formats=("bf16", "fp16", "f16", "fp32"),
                      source="reference: the engine's own 16-bit efficiencies")


def linear_time_s(k: KernelProfile, *, weight_bytes: float, quantized_params: float, batch: int, bandwidth: float,
                  matmul_flops: float, peak_flops: float | None, engine_compute_eff: float,
                  quantized_linears: int, cuda_graphs: bool, host_op_us: float = 0.0) -> tuple[float, float, float]:
    """Seconds of the linear layers of one decode step: (memory time, compute time, launch time).

    Args:
        weight_bytes: bytes streamed at batch 1 (packed weights + scales + 16-bit LM head), per GPU.
        quantized_params: weights the kernel dequantises, per GPU.
        bandwidth: the engine's effective 16-bit bandwidth, bytes/s.
        matmul_flops: 2 x active params x batch, per GPU.
        peak_flops: dense tensor rate (FLOP/s) or None when unknown (compute not counted).
        quantized_linears: quantised linear layers executed per step (launch cost in eager engines).
        host_op_us: the engine's host time per counted host operation (eager engines), microseconds.
    """
    reconstruct = bool(k.reconstruct_batch) and batch >= k.reconstruct_batch
    if reconstruct:
        # a plain dequantise kernel and a 16-bit GEMM stream at the engine's 16-bit efficiency,
        # not at the fused kernel's (whose bw_eff is the cost of dequantising inside a GEMV)
        t_mem = (weight_bytes + 4.0 * quantized_params) / bandwidth
    else:
        t_mem = weight_bytes / (bandwidth * k.bw_eff) * (1.0 + k.batch_slope * (batch - 1))
    t_comp = matmul_flops / (peak_flops * engine_compute_eff * k.compute_eff) if peak_flops else 0.0
    launch_us = k.launch_us_per_linear + k.host_ops * host_op_us
    if reconstruct:
        launch_us += k.reconstruct_launch_us_per_linear + k.reconstruct_host_ops * host_op_us
    t_launch = 0.0 if cuda_graphs else launch_us * 1e-6 * quantized_linears
    return t_mem, t_comp, t_launch
