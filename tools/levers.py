"""The way forward for a negative verdict: the smallest standard changes that make a job work.

`find_levers` takes a request that does not fit (or is too slow, past a deadline, over a budget)
and tries the levers practitioners reach for, each evaluated with the calculators
(tools.vram, tools.throughput, tools.training, tools.solve) — never a rule of thumb:

  training : gradient checkpointing, chunked cross-entropy, double quantisation (QLoRA), 8-bit
             AdamW, a smaller micro-batch (gradient accumulation keeps the effective batch), LoRA
             instead of full fine-tuning, QLoRA (nf4 + double quant), a shorter sequence, more GPUs
             (FSDP / ZeRO-3), a bigger GPU from the list given;
  inference: FP8 KV cache, chunked prefill, 8-bit weights (fp8 where the GPU has FP8 tensor cores,
             else int8), fewer concurrent sequences, 4-bit weights (int4 AWQ/GPTQ), a shorter
             context, more GPUs (tensor parallel), a bigger GPU from the list given.

Each lever has a size (1 = a flag with no cost in quality, 2 = a small trade-off, 3 = changes the
model's numerics or the data, 4 = different hardware). The answer is the one to three smallest that
work (single levers first, then pairs), as typed `Lever` findings: reason codes and parameters, no
English — the renderers turn codes into text. When no single lever or pair works, the nearest
combination: the memory levers stacked (precision, KV cache, checkpointing, LoRA/QLoRA) with the
fewest GPUs of the given kind or of the cheapest kind that holds it; when even that fails, a
`nothing_works` finding says why, with the numbers (the need per GPU with every lever applied on the
largest GPU of the catalog, or the best speed, time or cost reached).
"""

from __future__ import annotations

__all__ = ["Lever", "LeverGoal", "LeverSearch", "find_levers", "practitioner_defaults", "apply_practitioner_defaults"]

import math
from typing import Any, Callable, Iterable

from pydantic import BaseModel, ConfigDict, Field

from tools.cost import Finding
from tools.errors import AdvisorError
from tools.schemas import GpuSpec, ModelArch, VramRequest
from tools.solve import fits_in, max_batch_that_fits, max_context_that_fits
from tools.throughput import EngineProfile, SpeedRequest, estimate_speed
from tools.training import TrainRequest, estimate_train_time
from tools.units import weight_format
from tools.vram import estimate_vram


MIN_USEFUL_CONTEXT = 1024  # tokens: a shorter context is too short for a chat turn or a fine-tuning example

def practitioner_defaults(method: str) -> dict[str, Any]:
    """The settings practitioners run unless told otherwise.

    Fine-tuning (full, lora, qlora): gradient (activation) checkpointing on — torchtune's recipe
    configs set `enable_activation_checkpointing: True`, Unsloth and the QLoRA guides enable it.
    QLoRA: nf4 weights with double quantisation (QLoRA paper, Dettmers et al. 2023, sec. 3; the
    `bnb_4bit_use_double_quant=True` config of Hugging Face's QLoRA guide). Inference: none.
    """
    if method == "inference":
        return {}
    out: dict[str, Any] = {"grad_checkpointing": True}
    if method == "qlora":
        out |= {"weight_precision": "nf4", "double_quant": True}
    return out


def apply_practitioner_defaults(req: VramRequest, given: Iterable[str] | None = None
                                ) -> tuple[VramRequest, list[Finding]]:
    """Fill the fields the user did not set with `practitioner_defaults(req.method)`.

    Args:
        req: the request as understood.
        given: the field names the user set; default `req.model_fields_set` (pydantic's record).

    Returns:
        (the request with defaults applied, one `default_applied` finding per field changed).
    """
    given = set(req.model_fields_set if given is None else given)
    update: dict[str, Any] = {}
    for field, value in practitioner_defaults(req.method).items():
        if field in given:
            continue
        if field == "double_quant" and weight_format(req.resolved_weight_precision).name not in ("nf4", "fp4"):
            continue
        current = {"grad_checkpointing": req.resolved_grad_checkpointing,
                   "weight_precision": req.resolved_weight_precision}.get(field, getattr(req, field))
        if current != value:
            update[field] = value
    if not update:
        return req, []
    out = req.model_copy(update=update)
    return out, [Finding(code="default_applied", params={"field": k, "value": v}) for k, v in update.items()]


class LeverGoal(BaseModel):
    """What "works" means beyond fitting in memory (each optional)."""

    model_config = ConfigDict(extra="forbid")

    # no upper bound that a user's target could pass: an impossible target is answered, not refused
    min_tokens_per_s_per_user: float | None = Field(None, gt=0, le=1e15, allow_inf_nan=False)
    output_tokens: int = Field(256, ge=1, le=1_000_000, description="inference: generated tokens per request")
    deadline_hours: float | None = Field(None, gt=0, le=1e6, allow_inf_nan=False)
    budget_usd: float | None = Field(None, gt=0, le=1e9, allow_inf_nan=False)
    dataset_tokens: float | None = Field(None, gt=0, le=1e15, allow_inf_nan=False)
    epochs: float = Field(1.0, gt=0, le=1000, allow_inf_nan=False)
    usd_per_gpu_hour: dict[str, float] = Field({}, description="price per GPU-hour by GPU id, for the budget")
    headroom_fraction: float = Field(0.0, ge=0, lt=1, allow_inf_nan=False)
    max_gpus: int = Field(8, ge=1, le=64)


class Lever(BaseModel):
    """One change and its result. `params` are the changed request fields (and gpu/gpus)."""

    code: str
    params: dict[str, Any]
    size: int
    memory_gb: float
    gpu: str
    gpu_memory_gb: float
    fits: bool
    headroom_gb: float
    works: bool
    tokens_per_s_per_user: float | None = None
    hours: float | None = None
    cost_usd: float | None = None
    offer: dict[str, Any] | None = Field(None, description="cheapest on-demand offer, filled by the service layer")
    findings: list[Finding] = []


class LeverSearch(BaseModel):
    """The problem found at the request as given, and the smallest changes that fix it."""

    problem: str  # fits | does_not_fit | too_slow | past_deadline | over_budget
    baseline: Lever
    levers: list[Lever]
    tried: list[str]
    defaults_applied: list[Finding] = []
    nothing_works: Finding | None = Field(None, description="when no change works: why, with the numbers")


class _Ctx(BaseModel):
    """What every lever evaluation needs (internal)."""

    model_config = {"arbitrary_types_allowed": True}

    a: ModelArch
    gpu: GpuSpec
    goal: LeverGoal
    gpus_catalog: list[GpuSpec]
    engine: EngineProfile | None
    mfu_table: dict[str, tuple[float, str]] | None
    best: dict[str, Lever] = {}  # the best speed, time and cost reached by any configuration that fits


def _evaluate(ctx: _Ctx, code: str, size: int, req: VramRequest, gpu: GpuSpec, params: dict[str, Any]) -> Lever:
    """Memory (estimate_vram) and, when the goal asks, speed / hours / cost for one configuration."""
    mem = gpu.memory_gb or 0.0
    est = estimate_vram(ctx.a, req)
    ok = mem > 0 and fits_in(est, mem, ctx.goal.headroom_fraction)
    lever = Lever(code=code, params=params, size=size, memory_gb=est.total_gb, gpu=gpu.name, gpu_memory_gb=mem,
                  fits=ok, headroom_gb=mem - est.total_gb, works=ok)
    try:
        lever = _check_goal(ctx, lever, req, gpu)
    except AdvisorError as exc:  # a GPU whose bandwidth or tensor rate is unknown: cannot be judged
        return lever.model_copy(update={"works": False, "findings": [
            Finding(code="goal_not_estimable", params={"gpu": gpu.name, "why": str(exc)})]})
    _keep_best(ctx.best, lever)
    return lever


def _keep_best(best: dict[str, Lever], lv: Lever) -> None:
    """The fastest per user, the shortest run and the cheapest run seen so far (for `nothing_works`)."""
    if not lv.fits:
        return
    for key, attr, sign in (("speed", "tokens_per_s_per_user", 1), ("hours", "hours", -1), ("cost", "cost_usd", -1)):
        value, prev = getattr(lv, attr), best.get(key)
        if value is not None and (prev is None or sign * value > sign * getattr(prev, attr)):
            best[key] = lv


def _check_goal(ctx: _Ctx, lever: Lever, req: VramRequest, gpu: GpuSpec) -> Lever:
    ok, g = lever.fits, ctx.goal
    if ok and req.method == "inference" and g.min_tokens_per_s_per_user and ctx.engine is not None:
        out = min(g.output_tokens, max(1, req.seq_len - 1))
        spd = estimate_speed(ctx.a, gpu, ctx.engine, SpeedRequest(
            precision=req.resolved_weight_precision, kv_precision=req.kv_precision, batch=min(req.batch, 100_000),
            prompt_tokens=max(0, req.seq_len - out), output_tokens=out, gpus=min(req.gpus, 64)))
        lever.tokens_per_s_per_user = spd.decode_tokens_per_s
        lever.works = spd.decode_tokens_per_s >= g.min_tokens_per_s_per_user
    if ok and req.method != "inference" and g.dataset_tokens and ctx.mfu_table is not None \
            and (g.deadline_hours or g.budget_usd):
        tt = estimate_train_time(ctx.a, gpu, TrainRequest(
            method=req.method, dataset_tokens=g.dataset_tokens, epochs=g.epochs, gpus=req.gpus, batch=req.batch,
            seq_len=req.seq_len, grad_checkpointing=req.resolved_grad_checkpointing,
            sharding="fsdp" if req.sharding in ("zero3", "fsdp") else "ddp"), ctx.mfu_table)
        lever.hours = tt.hours
        price = g.usd_per_gpu_hour.get(gpu.id)
        lever.cost_usd = None if price is None else tt.gpu_hours * price
        if g.deadline_hours and tt.hours > g.deadline_hours:
            lever.works = False
        if g.budget_usd and (lever.cost_usd is None or lever.cost_usd > g.budget_usd):
            lever.works = False
    return lever


def _problem(base: Lever, goal: LeverGoal) -> str:
    if not base.fits:
        return "does_not_fit"
    if base.works:
        return "fits"
    if base.tokens_per_s_per_user is not None and goal.min_tokens_per_s_per_user \
            and base.tokens_per_s_per_user < goal.min_tokens_per_s_per_user:
        return "too_slow"
    if base.hours is not None and goal.deadline_hours and base.hours > goal.deadline_hours:
        return "past_deadline"
    return "over_budget"


# ---- the levers: each returns (code, size, request, gpu, params) or None when it does not apply ----------

_Cand = tuple[str, int, VramRequest, GpuSpec, dict[str, Any]]


def _flag_levers(ctx: _Ctx, req: VramRequest, gpu: GpuSpec) -> list[_Cand]:
    out: list[_Cand] = []
    fmt = weight_format(req.resolved_weight_precision)

    def add(code: str, size: int, **update: Any) -> None:
        out.append((code, size, req.model_copy(update=update), gpu, update))

    if req.method == "inference":
        if req.kv_precision not in ("fp8", "int8"):
            add("kv_cache_fp8", 1, kv_precision="fp8")
        if req.prefill_chunk_tokens is None and req.seq_len > 8192:
            add("chunked_prefill", 1, prefill_chunk_tokens=8192)
        if fmt.bits_per_param > 8.01:
            add("weights_8bit", 2, weight_precision="fp8" if gpu.fp8_support else "int8")
        if fmt.bits_per_param > 4.01:
            add("weights_4bit", 3, weight_precision="int4")
        return out
    if not req.resolved_grad_checkpointing:
        add("grad_checkpointing", 1, grad_checkpointing=True)
    elif ctx.goal.deadline_hours:  # recomputing the forward costs time: off when memory allows
        add("grad_checkpointing_off", 2, grad_checkpointing=False)
    if not req.chunked_loss:
        add("chunked_loss", 1, chunked_loss=True)
    if req.method == "qlora" and fmt.name in ("nf4", "fp4") and not req.double_quant:
        add("double_quant", 1, double_quant=True)
    if req.method == "full" and req.optimizer == "adamw":
        add("optimizer_8bit", 2, optimizer="adamw8bit")
    if req.method == "full":
        add("lora", 3, method="lora", weight_precision=None, training_precision="mixed")
    if req.method in ("full", "lora"):
        add("qlora", 3, method="qlora", weight_precision="nf4", double_quant=True, grad_checkpointing=True,
            training_precision="mixed")
    return out


def _solver_levers(ctx: _Ctx, req: VramRequest, gpu: GpuSpec, works: Callable[[Lever], bool]) -> list[_Cand]:
    """Levers whose value is solved for: batch, context, GPU count, a bigger GPU."""
    out: list[_Cand] = []
    mem, head = gpu.memory_gb or 0.0, ctx.goal.headroom_fraction
    if mem and req.batch > 1:
        r = max_batch_that_fits(ctx.a, req.model_copy(update={"batch": 1}), mem, head)
        if r.solved and r.value is not None and r.value < req.batch:
            b = int(r.value)
            params: dict[str, Any] = {"batch": b}
            if req.method != "inference":
                params["grad_accumulation_steps"] = math.ceil(req.batch / b)
            code = "fewer_concurrent_sequences" if req.method == "inference" else "smaller_micro_batch"
            out.append((code, 2, req.model_copy(update={"batch": b}), gpu, params))
    if mem and req.seq_len > 1:
        r = max_context_that_fits(ctx.a, req, mem, head)
        # a context cut to a sliver of what was asked is no way forward: at least MIN_USEFUL_CONTEXT tokens and an
        # eighth of the length asked
        useful = min(req.seq_len, max(MIN_USEFUL_CONTEXT, req.seq_len // 8))
        if r.solved and r.value is not None and useful <= r.value < req.seq_len:
            s = int(r.value)
            code = "shorter_context" if req.method == "inference" else "shorter_sequence"
            out.append((code, 3, req.model_copy(update={"seq_len": s}), gpu, {"seq_len": s}))
    out += _more_gpus(ctx, req, gpu, works)
    out += _bigger_gpu(ctx, req, gpu, works)
    return out


def _count_update(ctx: _Ctx, req: VramRequest, n: int) -> tuple[str, dict[str, Any]] | None:
    """n GPUs: tensor parallel for inference (n must divide the heads), FSDP/ZeRO-3 for training."""
    if req.method == "inference":
        if ctx.a.num_attention_heads % n:
            return None
        return "more_gpus_tensor_parallel", {"gpus": n, "tensor_parallel": n}
    return "more_gpus_fsdp", {"gpus": n, "sharding": req.sharding if req.sharding in ("zero3", "fsdp") else "fsdp"}


def _more_gpus(ctx: _Ctx, req: VramRequest, gpu: GpuSpec, works: Callable[[Lever], bool]) -> list[_Cand]:
    for n in range(req.gpus + 1, ctx.goal.max_gpus + 1):
        step = _count_update(ctx, req, n)
        if step is None:
            continue
        code, upd = step
        r = req.model_copy(update=upd)
        if works(_evaluate(ctx, code, 4, r, gpu, upd)):
            return [(code, 4, r, gpu, upd)]
    return []


def _several_bigger_gpus(ctx: _Ctx, req: VramRequest, gpu: GpuSpec) -> list[Lever]:
    """Last resort: the fewest GPUs of a bigger kind (n = 2 .. max_gpus, smallest or cheapest kind first)."""
    prices = ctx.goal.usd_per_gpu_hour
    pool = sorted((g for g in ctx.gpus_catalog if g.memory_gb and g.memory_gb > (gpu.memory_gb or 0)),
                  key=lambda g: (prices.get(g.id, math.inf), g.memory_gb or 0, g.name))
    for n in range(max(2, req.gpus + 1), ctx.goal.max_gpus + 1):
        step = _count_update(ctx, req, n)
        if step is None:
            continue
        code, upd = step
        for g in pool:
            lv = _evaluate(ctx, f"bigger_gpu+{code}", 8, req.model_copy(update=upd), g,
                           {"gpu": g.name, "gpu_id": g.id} | upd)
            if lv.works:
                return [lv]
    return []


def _bigger_gpu(ctx: _Ctx, req: VramRequest, gpu: GpuSpec, works: Callable[[Lever], bool]) -> list[_Cand]:
    """The first GPU of the list that works, in order of price per GPU-hour when known, else memory.
    A memory problem looks only at GPUs with more memory; speed, deadline and budget at any."""
    prices = ctx.goal.usd_per_gpu_hour
    pool = [g for g in ctx.gpus_catalog if g.memory_gb and g.id != gpu.id
            and (g.memory_gb > (gpu.memory_gb or 0) or ctx.goal.min_tokens_per_s_per_user or ctx.goal.deadline_hours
                 or ctx.goal.budget_usd)]
    pool.sort(key=lambda g: (prices.get(g.id, math.inf), g.memory_gb or 0, g.name))
    for g in pool:
        code = "bigger_gpu" if (g.memory_gb or 0) > (gpu.memory_gb or 0) else "other_gpu"
        if works(_evaluate(ctx, code, 4, req, g, {"gpu": g.name, "gpu_id": g.id})):
            return [(code, 4, req, g, {"gpu": g.name, "gpu_id": g.id})]
    return []


def find_levers(a: ModelArch, req: VramRequest, gpu: GpuSpec, *, goal: LeverGoal | None = None,
                gpus_catalog: list[GpuSpec] | None = None, engine: EngineProfile | None = None,
                mfu_table: dict[str, tuple[float, str]] | None = None, max_levers: int = 3) -> LeverSearch:
    """The one to three smallest changes that make `req` work on `gpu`.

    When to use: after any negative verdict — does not fit, too slow (goal.min_tokens_per_s_per_user,
    needs `engine`), past the deadline or over the budget (goal.deadline_hours / budget_usd with
    dataset_tokens, needs `mfu_table`; budget needs goal.usd_per_gpu_hour).
    Method: evaluate each single lever with the calculators, and pairs of levers (a flag, then any
    other); when nothing works, several GPUs of a bigger kind. Sorted by size (1 flag .. 4 hardware), then by the order listed in the
    module docstring. Memory per GPU in GB (10^9 bytes); fits means total <= memory x (1 - headroom).

    Returns:
        LeverSearch: `problem` (fits | does_not_fit | too_slow | past_deadline | over_budget), the
        baseline, the working levers (empty when nothing tried works), and the codes tried.
    """
    ctx = _Ctx(a=a, gpu=gpu, goal=goal or LeverGoal(), gpus_catalog=list(gpus_catalog or []), engine=engine,
               mfu_table=mfu_table)
    base = _evaluate(ctx, "as_given", 0, req, gpu, {})
    search = LeverSearch(problem=_problem(base, ctx.goal), baseline=base, levers=[], tried=[])
    if search.problem == "fits":
        return search

    def works(lv: Lever) -> bool:
        return lv.works

    singles = [(c, _evaluate(ctx, c[0], c[1], c[2], c[3], c[4])) for c in
               _flag_levers(ctx, req, gpu) + _solver_levers(ctx, req, gpu, works)]
    search.tried = [c[0] for c, _ in singles]
    found = [lv for _, lv in singles if lv.works]
    alone = {lv.code for lv in found}
    firsts = [c for c, _ in singles if c[1] <= 3 and c[0] not in _SOLVED and c[0] not in alone]
    found += [lv for lv in _pairs(ctx, firsts, works) if not alone & set(lv.code.split("+"))]
    found = found or _several_bigger_gpus(ctx, req, gpu) or _nearest_stack(ctx, req, gpu)
    found.sort(key=lambda lv: (lv.size, _ORDER.index(lv.code.split("+")[0]) if lv.code.split("+")[0] in _ORDER else 99))
    search.levers = found[:max_levers]
    if not found:
        search.nothing_works = _why_nothing_works(ctx, req, gpu, search.problem)
    return search


def _stacks(req: VramRequest, gpu: GpuSpec) -> list[tuple[list[str], dict[str, Any]]]:
    """The memory levers stacked, mildest first: (codes, request update), each keeping the user's
    workload (context, batch, data) and changing only how it is held in memory."""
    fmt = weight_format(req.resolved_weight_precision)
    if req.method == "inference":
        base: tuple[list[str], dict[str, Any]] = ([], {})
        if req.kv_precision not in ("fp8", "int8"):
            base = (["kv_cache_fp8"], {"kv_precision": "fp8"})
        if req.prefill_chunk_tokens is None and req.seq_len > 8192:
            base = (base[0] + ["chunked_prefill"], base[1] | {"prefill_chunk_tokens": 8192})
        out = [base]
        if fmt.bits_per_param > 8.01:
            out.append((base[0] + ["weights_8bit"], base[1] | {"weight_precision": "fp8" if gpu.fp8_support else "int8"}))
        if fmt.bits_per_param > 4.01:
            out.append((base[0] + ["weights_4bit"], base[1] | {"weight_precision": "int4"}))
        return [x for x in out if x[0]]
    base = ([], {})
    if not req.resolved_grad_checkpointing:
        base = (["grad_checkpointing"], {"grad_checkpointing": True})
    if not req.chunked_loss:
        base = (base[0] + ["chunked_loss"], base[1] | {"chunked_loss": True})
    if req.method == "qlora" and fmt.name in ("nf4", "fp4") and not req.double_quant:
        base = (base[0] + ["double_quant"], base[1] | {"double_quant": True})
    out = [base]
    if req.method == "full" and req.optimizer == "adamw":
        out.append((base[0] + ["optimizer_8bit"], base[1] | {"optimizer": "adamw8bit"}))
    if req.method == "full":
        out.append((["lora"] + base[0], base[1] | {"method": "lora", "weight_precision": None,
                                                    "training_precision": "mixed"}))
    if req.method in ("full", "lora"):
        out.append((["qlora"] + [c for c in base[0] if c != "grad_checkpointing"], base[1] | {
            "method": "qlora", "weight_precision": "nf4", "double_quant": True, "grad_checkpointing": True,
            "training_precision": "mixed"}))
    return [x for x in out if x[0]]


def _gpus_to_try(ctx: _Ctx, gpu: GpuSpec) -> list[GpuSpec]:
    """The GPU given, then the catalog's other GPUs (bigger ones for a memory problem), cheapest first."""
    prices = ctx.goal.usd_per_gpu_hour
    memory_only = not (ctx.goal.min_tokens_per_s_per_user or ctx.goal.deadline_hours or ctx.goal.budget_usd)
    pool = [g for g in ctx.gpus_catalog if g.memory_gb and g.id != gpu.id
            and (g.memory_gb > (gpu.memory_gb or 0) or not memory_only)]
    pool.sort(key=lambda g: (prices.get(g.id, math.inf), g.memory_gb or 0, g.name))
    return [gpu] + pool


def _nearest_stack(ctx: _Ctx, req: VramRequest, gpu: GpuSpec) -> list[Lever]:
    """No single lever or pair works: the mildest stack of memory levers with the fewest GPUs of the
    kind given, else of the cheapest (then smallest) kind that works; one combined lever, or []."""
    for codes, update in _stacks(req, gpu):
        stacked = req.model_copy(update=update)
        for g in _gpus_to_try(ctx, gpu):
            for n in range(1, ctx.goal.max_gpus + 1):
                step = _count_update(ctx, stacked, n) if n > 1 else ("", {})
                if step is None:
                    continue
                parts = codes + ([step[0]] if step[0] else []) + (["bigger_gpu"] if g.id != gpu.id else [])
                params = update | step[1] | ({"gpu": g.name, "gpu_id": g.id} if g.id != gpu.id else {})
                lv = _evaluate(ctx, "+".join(parts), 9 + len(parts), stacked.model_copy(update=step[1]), g, params)
                if lv.works:
                    return [lv]
    return []


def _why_nothing_works(ctx: _Ctx, req: VramRequest, gpu: GpuSpec, problem: str) -> Finding:
    """Nothing in the catalog works: for memory, the need per GPU with every memory lever stacked on
    the largest GPU of the catalog at the most GPUs tried (and the part that dominates it); for a
    goal, the best speed, time or cost any configuration that fits reached."""
    goal_metric = {"too_slow": ("speed", "tokens_per_s_per_user"), "past_deadline": ("hours", "hours"),
                   "over_budget": ("cost", "cost_usd")}.get(problem)
    if goal_metric and goal_metric[0] in ctx.best:
        lv = ctx.best[goal_metric[0]]
        return Finding(code="nothing_works", params={
            "problem": problem, "best": getattr(lv, goal_metric[1]), "gpu": lv.gpu, "gpus": lv.params.get("gpus", req.gpus),
            "levers": [c for c in lv.code.split("+") if c != "as_given"], "lever_params": lv.params})
    stacks = _stacks(req, gpu)
    codes, update = stacks[-1] if stacks else ([], {})
    biggest = max([gpu] + [g for g in ctx.gpus_catalog if g.memory_gb], key=lambda g: (g.memory_gb or 0, g.name))
    stacked = req.model_copy(update=update)
    n = next((k for k in range(ctx.goal.max_gpus, 0, -1) if k == 1 or _count_update(ctx, stacked, k)), 1)
    if n > 1:
        stacked = stacked.model_copy(update=_count_update(ctx, stacked, n)[1])  # type: ignore[index]
    est = estimate_vram(ctx.a, stacked)
    part = max(est.components_gb.items(), key=lambda kv: kv[1])
    return Finding(code="nothing_works", params={
        "problem": "does_not_fit", "memory_gb": est.total_gb, "gpu": biggest.name, "gpu_memory_gb": biggest.memory_gb,
        "gpus": n, "levers": codes, "lever_params": update, "largest_component": part[0], "largest_gb": part[1]})


_SOLVED = ("smaller_micro_batch", "fewer_concurrent_sequences", "shorter_context", "shorter_sequence")
_ORDER = ["kv_cache_fp8", "chunked_prefill", "grad_checkpointing", "chunked_loss", "double_quant", "weights_8bit",
          "grad_checkpointing_off",
          "optimizer_8bit", "fewer_concurrent_sequences", "smaller_micro_batch", "weights_4bit", "lora", "qlora",
          "shorter_context", "shorter_sequence", "more_gpus_tensor_parallel", "more_gpus_fsdp", "bigger_gpu", "other_gpu"]


def _pairs(ctx: _Ctx, firsts: list[_Cand], works: Callable[[Lever], bool]) -> list[Lever]:
    """A flag or precision lever, then every lever again on top of it (solved levers re-solved)."""
    out: list[Lever] = []
    for code1, size1, req1, gpu1, p1 in firsts:
        seconds = _flag_levers(ctx, req1, gpu1) + _solver_levers(ctx, req1, gpu1, works)
        for code2, size2, req2, gpu2, p2 in seconds:
            if code2 == code1:
                continue
            lv = _evaluate(ctx, f"{code1}+{code2}", size1 + size2, req2, gpu2, p1 | p2)
            if lv.works:
                out.append(lv)
    best: dict[frozenset[str], Lever] = {}
    for lv in out:  # the same pair found in both orders counts once
        key = frozenset(lv.code.split("+"))
        if key not in best or lv.memory_gb < best[key].memory_gb:
            best[key] = lv
    return list(best.values())
