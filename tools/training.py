"""Fine-tuning throughput and job time: tokens/s, hours and GPU-hours.

FLOPs per trained token (Kaplan et al. 2020; Korthikanti et al. 2022):
    full fine-tuning  6 N  (forward 2N, backward 4N)
    LoRA / QLoRA      4 N  (forward 2N, backward 2N for activation gradients; frozen weights get
                            no weight gradients; adapters add < 1 %)
    + 2 N with activation checkpointing (the forward is recomputed)
    + attention: 12 x layers x seq x (heads x head_dim) per token for full, 8x for LoRA.
Time = FLOPs / (GPUs x peak x MFU), MFU per GPU architecture from knowledge/training_efficiency.csv;
QLoRA's dequantisation costs a further factor (torchtune README, Llama 3.1 8B on one RTX 4090:
LoRA 3,083 tok/s vs QLoRA 2,413 tok/s -> 0.78). Data-parallel communication per step (DDP
all-reduce of gradients, or FSDP/ZeRO-3 all-gathers + reduce-scatter) is overlapped with compute:
step = max(compute, communication), over NVLink or PCIe (or 50 GB/s per GPU across nodes).
"""

from __future__ import annotations

__all__ = ["TrainRequest", "TrainEstimate", "estimate_train_time"]

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.architecture import count_params
from tools.errors import InvalidCombination
from tools.schemas import MAX_SEQ_LEN, GpuSpec, ModelArch

QLORA_SPEED_FACTOR = 2413 / 3083  # torchtune README (Llama 3.1 8B, 1x RTX 4090): QLoRA vs LoRA tokens/s
PCIE_GB_PER_S = 25.0  # effective per direction, PCIe Gen4 x16 (nccl-tests busbw on PCIe boxes)
INTER_NODE_GB_PER_S = 50.0  # 400 Gb/s InfiniBand/RoCE per GPU, typical of H100/A100 clusters


class TrainRequest(BaseModel):
    """A fine-tuning job: method, data size and per-GPU micro-batch."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["full", "lora", "qlora"] = Field("lora", description="full | lora | qlora")
    dataset_tokens: float = Field(gt=0, le=1e15, allow_inf_nan=False,
                                  description="training tokens per epoch, above 0 and at most 1e15")
    epochs: float = Field(1.0, gt=0, le=1000, allow_inf_nan=False, description="a number of epochs above 0, at most 1000")
    gpus: int = Field(1, ge=1, le=4096, description="an integer from 1 to 4096")
    batch: int = Field(4, ge=1, le=100_000, description="micro-batch per GPU, an integer from 1 to 100,000")
    seq_len: int = Field(2048, ge=1, le=MAX_SEQ_LEN, description="tokens per sequence, 1 to 100,000,000")
    grad_checkpointing: bool | None = Field(None, description="default: on for qlora, off otherwise")
    sharding: Literal["ddp", "fsdp"] = Field("fsdp", description="ddp | fsdp (multi-GPU only)")
    mfu: float | None = Field(None, gt=0, le=1, allow_inf_nan=False,
                              description="utilisation override, a fraction above 0 and at most 1")

    @model_validator(mode="after")
    def _ckpt(self) -> "TrainRequest":
        if self.grad_checkpointing is None:
            self.grad_checkpointing = self.method == "qlora"
        return self


class TrainEstimate(BaseModel):
    tokens_per_s: float
    hours: float
    gpu_hours: float
    total_tokens: float
    mfu: float
    bound: Literal["compute", "interconnect"]
    flops_per_token: float
    gpu: dict
    inputs: dict
    assumptions: list[str]


def _arch_group(gpu: GpuSpec) -> str:
    arch = gpu.architecture.lower()
    if "hopper" in arch:
        return "hopper"
    if "blackwell" in arch:
        return "blackwell"
    if "ampere" in arch and gpu.is_hbm:
        return "ampere-hbm"
    return "other"


def estimate_train_time(a: ModelArch, gpu: GpuSpec, req: TrainRequest, mfu_table: dict[str, tuple[float, str]]
                        ) -> TrainEstimate:
    """Throughput and time of a fine-tuning job (an estimate; see the module docstring).

    Args:
        mfu_table: architecture group -> (full fine-tuning MFU, source), from knowledge.

    Raises:
        InvalidCombination: the GPU's tensor rate is unknown.
    """
    if not gpu.bf16_dense_tflops:
        raise InvalidCombination(f"the tensor throughput of {gpu.name} is not in the GPU data, so training time "
                                 "cannot be estimated")
    n_params = count_params(a).active
    ckpt = bool(req.grad_checkpointing)
    q_width = a.num_attention_heads * a.head_dim
    if req.method == "full":
        per_tok = (8.0 if ckpt else 6.0) * n_params + 12.0 * a.num_layers * req.seq_len * q_width
    else:
        per_tok = (6.0 if ckpt else 4.0) * n_params + 8.0 * a.num_layers * req.seq_len * q_width
    group = _arch_group(gpu)
    mfu, mfu_src = mfu_table.get(group, mfu_table["other"])
    if req.mfu is not None:
        mfu, mfu_src = req.mfu, "given by the user"
    eff = mfu * (QLORA_SPEED_FACTOR if req.method == "qlora" else 1.0)
    per_gpu_flops = gpu.bf16_dense_tflops * 1e12 * eff
    tokens_step = req.batch * req.seq_len  # per GPU per optimizer micro-step
    t_compute = tokens_step * per_tok / per_gpu_flops

    t_comm, link_txt = 0.0, ""
    if req.gpus > 1:
        if req.gpus > 8:
            link, link_txt = INTER_NODE_GB_PER_S, f"{INTER_NODE_GB_PER_S:g} GB/s per GPU across nodes"
        elif gpu.has_nvlink:
            link, link_txt = gpu.nvlink_gb_per_s / 2, f"NVLink-class {gpu.nvlink_gb_per_s:g} GB/s"
        else:
            link, link_txt = PCIE_GB_PER_S, f"PCIe ~{PCIE_GB_PER_S:g} GB/s per direction"
        frac = (req.gpus - 1) / req.gpus
        total_p = count_params(a).total
        if req.sharding == "fsdp":
            # all-gather weights for forward and backward (2 B each) + reduce-scatter of gradients
            moved = (2 * 2.0 + (2.0 if req.method == "full" else 0.0)) * total_p * frac
        else:  # DDP all-reduce of trainable gradients (2 x size in a ring)
            moved = 2.0 * 2.0 * (total_p if req.method == "full" else 0.01 * total_p) * frac
        t_comm = moved / (link * 1e9)
    step = max(t_compute, t_comm)
    tokens_per_s = req.gpus * tokens_step / step
    total = req.dataset_tokens * req.epochs
    seconds = total / tokens_per_s
    if not math.isfinite(seconds):
        raise InvalidCombination("the inputs are too large to give a finite time")
    hours = seconds / 3600.0
    assumptions = [
        "An estimate, not a measurement: FLOPs per token / (GPUs x peak BF16 tensor rate x utilisation).",
        f"Utilisation (MFU) {mfu:.0%} for {gpu.architecture or gpu.name} ({mfu_src})"
        + (f", x{QLORA_SPEED_FACTOR:.2f} for QLoRA dequantisation (torchtune README)" if req.method == "qlora" else "") + ".",
        f"{per_tok / n_params:.1f} x params FLOPs per token ({req.method}"
        + (", activation checkpointing recomputes the forward" if ckpt else "") + ").",
        f"Micro-batch {req.batch} x {req.seq_len:,} tokens per GPU; the dataset is {req.dataset_tokens:,.0f} tokens x {req.epochs:g} epochs.",
        "Tuned stacks (torchtune, Unsloth, Megatron) reach this utilisation; a plain transformers Trainer loop "
        "often reaches less — pass --mfu from your own runs to rescale.",
    ]
    if req.gpus > 1:
        assumptions.append(f"{req.gpus} GPUs, {req.sharding.upper()} over {link_txt}; communication overlaps compute"
                           + (" and is the bottleneck here." if t_comm > t_compute else "."))
    return TrainEstimate(
        tokens_per_s=tokens_per_s, hours=hours, gpu_hours=hours * req.gpus, total_tokens=total, mfu=eff,
        bound="interconnect" if t_comm > t_compute else "compute", flops_per_token=per_tok,
        gpu={"id": gpu.id, "name": gpu.name, "bf16_dense_tflops": gpu.bf16_dense_tflops, "interconnect": gpu.interconnect},
        inputs=req.model_dump() | {"model": a.id},
        assumptions=assumptions,
    )
