"""Solving for the unknown: the largest context or batch that fits, the fewest GPUs, the least memory,
the GPU with the best cost.

Every solver searches over the calculators (tools.vram.estimate_vram, tools.throughput,
tools.training through tools.recommend) instead of restating their formulas: memory grows
monotonically with context, batch and 1/GPUs, so bisection or a scan finds the exact integer.
Each returns a `SolveResult`: the solved number, the configuration it was solved at, and the
limiting component (the memory component that stops it, or a code such as `model_max_context`).
"""

from __future__ import annotations

__all__ = ["SolveResult", "fits_in", "max_context_that_fits", "max_batch_that_fits", "largest_model_that_fits",
           "min_gpu_count",
           "min_gpu_memory", "best_gpu_by_cost", "limiting_component", "replicas_for_deadline",
           "JobReplicasRequest", "JobReplicasResult", "job_replicas"]

import math
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.architecture import arch_from_params, count_params
from tools.cost import ENGINE_MAX_NUM_SEQS, BillingPolicy, Finding
from tools.jobs import JobRequest, job_totals
from tools.errors import InvalidInput
from tools.schemas import MAX_SEQ_LEN, GpuOffer, GpuSpec, ModelArch, VramEstimate, VramRequest
from tools.throughput import EngineProfile
from tools.vram import estimate_vram

MAX_INFERENCE_BATCH = 100_000  # the speed estimator's bound on concurrent sequences


class SolveResult(BaseModel):
    """A solved unknown. `value` None = no solution in the searched range (see `limited_by`)."""

    unknown: Literal["max_context", "max_batch", "max_params", "min_gpu_count", "min_gpu_memory", "best_gpu_by_cost"]
    value: int | float | None
    unit: str
    solved: bool
    config: dict[str, Any]
    memory_gb: float | None = None
    gpu_memory_gb: float | None = None
    limited_by: str
    findings: list[Finding] = []
    details: dict[str, Any] = {}


def fits_in(est: VramEstimate, gpu_memory_gb: float, headroom_fraction: float = 0.0) -> bool:
    """Fit rule: per-GPU total <= GPU memory x (1 - headroom). GB (10^9 bytes)."""
    return est.total_gb <= gpu_memory_gb * (1.0 - headroom_fraction)


def limiting_component(before: VramEstimate, after: VramEstimate | None = None) -> str:
    """The memory component that stops the search.

    With two estimates (the last that fits, the first that does not): the component that grew
    the most between them. With one: its largest component (what fills the GPU).
    """
    if after is None:
        return max(before.components_gb.items(), key=lambda kv: kv[1])[0]
    growth = {k: v - before.components_gb.get(k, 0.0) for k, v in after.components_gb.items()}
    return max(growth.items(), key=lambda kv: kv[1])[0]


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_headroom(headroom_fraction: float) -> None:
    if not _is_number(headroom_fraction) or not 0 <= headroom_fraction < 1:
        raise InvalidInput("headroom_fraction", headroom_fraction, "a fraction from 0 to below 1")


def _check_memory(gpu_memory_gb: float, headroom_fraction: float) -> None:
    if not _is_number(gpu_memory_gb) or not 0 < gpu_memory_gb <= 100_000:
        raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory in GB above 0 and at most 100,000")
    _check_headroom(headroom_fraction)


def _largest_fitting(make: Callable[[int], VramRequest], a: ModelArch, lo: int, hi: int, mem: float,
                     headroom: float) -> tuple[int | None, VramEstimate, VramEstimate | None]:
    """Bisection for the largest x in [lo, hi] whose request fits; (None, est at lo, None) if lo does not.

    Returns (x, estimate at x, estimate at x + 1 or None when x = hi).
    """
    est_lo = estimate_vram(a, make(lo))
    if not fits_in(est_lo, mem, headroom):
        return None, est_lo, None
    est_hi = estimate_vram(a, make(hi))
    if fits_in(est_hi, mem, headroom):
        return hi, est_hi, None
    good, bad = lo, hi  # invariant: good fits, bad does not
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits_in(estimate_vram(a, make(mid)), mem, headroom):
            good = mid
        else:
            bad = mid
    return good, estimate_vram(a, make(good)), estimate_vram(a, make(good + 1))


def max_context_that_fits(a: ModelArch, req: VramRequest, gpu_memory_gb: float, headroom_fraction: float = 0.0
                          ) -> SolveResult:
    """The longest sequence (prompt + output for inference, training length for fine-tuning) that fits.

    When to use: "how much context fits on an L4?", "max sequence length for LoRA on 24 GB".
    Method: bisection on `seq_len` over estimate_vram, everything else as in `req`, up to the
    model's context window (config max_position_embeddings). Units: tokens; memory per GPU in GB.
    `limited_by`: the component that grew most at the limit (kv_cache, activations, logits), or
    `model_max_context` when the window, not memory, is the limit.
    """
    _check_memory(gpu_memory_gb, headroom_fraction)
    hi = a.max_context or 10_000_000
    ctx, est, nxt = _largest_fitting(lambda s: req.model_copy(update={"seq_len": s}), a, 1, min(hi, MAX_SEQ_LEN),
                                     gpu_memory_gb, headroom_fraction)
    return _result("max_context", ctx, "tokens", est, nxt, gpu_memory_gb,
                   "model_max_context" if ctx == hi else None)


def max_batch_that_fits(a: ModelArch, req: VramRequest, gpu_memory_gb: float, headroom_fraction: float = 0.0
                        ) -> SolveResult:
    """The most sequences at `req.seq_len` that fit: concurrent users for serving, micro-batch for training.

    When to use: "how many users at 8k context on an L40S?", "max batch for QLoRA on a 4090".
    Method: bisection on `batch` over estimate_vram. Units: sequences; GB per GPU. Above vLLM's
    default max_num_seqs (256) the finding `above_engine_default_cap` says the engine must be
    configured for it.
    """
    _check_memory(gpu_memory_gb, headroom_fraction)
    hi = MAX_INFERENCE_BATCH if req.method == "inference" else 100_000
    b, est, nxt = _largest_fitting(lambda n: req.model_copy(update={"batch": n}), a, 1, hi, gpu_memory_gb,
                                   headroom_fraction)
    res = _result("max_batch", b, "sequences", est, nxt, gpu_memory_gb, "search_bound" if b == hi else None)
    if b is not None and req.method == "inference" and b > ENGINE_MAX_NUM_SEQS:
        res.findings.append(Finding(code="above_engine_default_cap", params={"engine_cap": ENGINE_MAX_NUM_SEQS}))
    return res


MAX_PARAMS_SEARCHED_B = 2000.0  # the bisection's upper bound: beyond every public model


def largest_model_that_fits(req: VramRequest, gpu_memory_gb: float, candidates: list[tuple[str, ModelArch]],
                            headroom_fraction: float = 0.0) -> SolveResult:
    """The largest model that fits at the settings of `req` (method, precision, sequence length, batch, GPUs).

    When to use: "biggest model I can QLoRA on a 48 GB card?", "largest model for 24 GB at 4-bit?".
    Method: bisection on the parameter count, in tenths of a billion, over estimate_vram of a dense
    Llama-shaped model of that size (tools.architecture.arch_from_params: a rough shape, so the KV cache
    and activations are approximate); and each of `candidates` (named real models) checked at the same
    settings, the largest that fit listed in `details["models"]` (name, params_b, memory_gb), largest first.
    Units: billions of parameters; GB per GPU.
    """
    _check_memory(gpu_memory_gb, headroom_fraction)

    def est(tenths: int) -> VramEstimate:
        return estimate_vram(_splittable(arch_from_params(tenths / 10), req.gpus), req)

    lo, hi = 1, int(MAX_PARAMS_SEARCHED_B * 10)
    if not fits_in(est(lo), gpu_memory_gb, headroom_fraction):
        return _result("max_params", None, "params_b", est(lo), None, gpu_memory_gb, None)
    good, bad = lo, hi
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if fits_in(est(mid), gpu_memory_gb, headroom_fraction) else (good, mid)
    res = _result("max_params", good / 10, "params_b", est(good), est(good + 1), gpu_memory_gb, None)
    fitting = []
    for name, arch in candidates:
        try:
            e = estimate_vram(arch, req)
        except InvalidInput:
            continue  # its heads do not split over req.gpus GPUs: not a candidate at this degree
        if fits_in(e, gpu_memory_gb, headroom_fraction):
            fitting.append({"name": name, "params_b": round(count_params(arch).total / 1e9, 2), "memory_gb": e.total_gb})
    fitting.sort(key=lambda m: (-m["params_b"], m["name"]))
    sizes: dict[float, dict[str, Any]] = {}
    for m in fitting:  # one name per size: the Llama 3, 3.1 and 3.3 70B are one answer
        sizes.setdefault(round(m["params_b"]), m)
    return res.model_copy(update={"details": {"models": list(sizes.values())[:5]}})


def _splittable(a: ModelArch, gpus: int) -> ModelArch:
    """The rough shape with head counts the tensor-parallel degree divides (as real models are built: a
    model served on 2 GPUs has an even number of heads); the hidden size follows the heads."""
    if gpus <= 1 or (a.num_attention_heads % gpus == 0 and a.num_kv_heads % gpus == 0):
        return a
    heads = math.ceil(a.num_attention_heads / gpus) * gpus
    kv = heads if a.num_kv_heads == a.num_attention_heads else math.ceil(a.num_kv_heads / gpus) * gpus
    return a.model_copy(update={"num_attention_heads": heads, "num_kv_heads": kv,
                                "hidden_size": heads * (a.head_dim or a.hidden_size // a.num_attention_heads)})


def _result(unknown: str, value: int | None, unit: str, est: VramEstimate, nxt: VramEstimate | None,
            mem: float, bound_code: str | None) -> SolveResult:
    if value is None:
        limit = "does_not_fit_at_minimum"
        findings = [Finding(code="does_not_fit_at_minimum", params={"memory_gb": est.total_gb, "gpu_memory_gb": mem,
                                                                    "largest_component": limiting_component(est)})]
    else:
        limit = bound_code or limiting_component(est, nxt)
        findings = []
    return SolveResult(unknown=unknown, value=value, unit=unit, solved=value is not None, config=est.inputs,
                       memory_gb=est.total_gb, gpu_memory_gb=mem, limited_by=limit, findings=findings)


def min_gpu_count(a: ModelArch, req: VramRequest, gpu_memory_gb: float, max_gpus: int = 64,
                  headroom_fraction: float = 0.0) -> SolveResult:
    """The fewest GPUs of one kind (`gpu_memory_gb` each) that hold the job.

    When to use: "how many H100s to serve Llama 3.1 405B in fp8?", "how many A100s for full fine-tuning?".
    Method: scan n = 1 .. max_gpus over estimate_vram's per-GPU figure. Inference: tensor parallel
    over n GPUs (n must divide the attention heads, as vLLM requires). Training: FSDP FULL_SHARD
    (ZeRO-3) over n GPUs unless `req.sharding` names another. Units: GPUs; GB per GPU.
    `limited_by`: the largest component at n - 1 (what forced another GPU), or at max_gpus when
    no count fits (activations do not shrink with sharding).
    """
    _check_memory(gpu_memory_gb, headroom_fraction)
    if not isinstance(max_gpus, int) or isinstance(max_gpus, bool) or not 1 <= max_gpus <= 4096:
        raise InvalidInput("max_gpus", max_gpus, "an integer from 1 to 4096")
    last: VramEstimate | None = None
    for n in range(1, max_gpus + 1):
        if req.method == "inference":
            if a.num_attention_heads % n:
                continue
            r = req.model_copy(update={"gpus": n, "tensor_parallel": n})
        else:
            shard = req.sharding if req.sharding != "none" else "fsdp"
            r = req.model_copy(update={"gpus": n, "sharding": shard if n > 1 else req.sharding})
        est = estimate_vram(a, r)
        if fits_in(est, gpu_memory_gb, headroom_fraction):
            limit = limiting_component(last) if last is not None else "fits_on_one"
            return SolveResult(unknown="min_gpu_count", value=n, unit="GPUs", solved=True, config=est.inputs,
                               memory_gb=est.total_gb, gpu_memory_gb=gpu_memory_gb, limited_by=limit)
        last = est
    assert last is not None
    return SolveResult(unknown="min_gpu_count", value=None, unit="GPUs", solved=False, config=last.inputs,
                       memory_gb=last.total_gb, gpu_memory_gb=gpu_memory_gb, limited_by=limiting_component(last),
                       findings=[Finding(code="exceeds_max_gpus", params={"max_gpus": max_gpus,
                                                                          "memory_gb_at_max": last.total_gb})])


def min_gpu_memory(a: ModelArch, req: VramRequest, gpus: list[GpuSpec], headroom_fraction: float = 0.0
                   ) -> SolveResult:
    """The least per-GPU memory the job needs, and the catalog GPUs that have it (smallest first).

    When to use: "how much VRAM do I need for ...?", "which GPUs can run it?".
    Formula: required GB = estimate_vram total / (1 - headroom); a GPU qualifies when its memory
    (vendor GiB x 2^30 / 10^9 GB) >= required. `value` in GB (10^9 bytes); `details.required_gib`
    the same in GiB as vendors label cards. `limited_by`: the largest component.
    """
    _check_headroom(headroom_fraction)
    est = estimate_vram(a, req)
    need = est.total_gb / (1.0 - headroom_fraction)
    ok = sorted((g for g in gpus if g.memory_gb is not None and g.memory_gb >= need),
                key=lambda g: (g.memory_gb, g.name))
    return SolveResult(unknown="min_gpu_memory", value=need, unit="GB", solved=True, config=est.inputs,
                       memory_gb=est.total_gb, limited_by=limiting_component(est),
                       details={"required_gib": need * 1e9 / 2**30,
                                "gpus": [{"id": g.id, "name": g.name, "memory_gb": g.memory_gb} for g in ok]})


def best_gpu_by_cost(a: ModelArch, req: Any, offers: list[GpuOffer], gpus: dict[str, GpuSpec],
                     engine: EngineProfile, mfu_table: dict[str, tuple[float, str]],
                     billing: dict[str, BillingPolicy], marketplaces: frozenset[str] = frozenset()) -> SolveResult:
    """The GPU configuration with the best cost: $ per million tokens (serving) or the cheapest
    complete fine-tuning run (USD), over the offers given.

    When to use: "which GPU is cheapest per token for Llama 3.1 8B?", "cheapest GPU to LoRA-tune 7B".
    Method: tools.recommend.recommend with objective "value" (fit with 5 % headroom, speed,
    billing, spot when allowed): serving ranks by $/M tokens at the load or the throughput-optimal
    batch (tools.cost.serving_economics); fine-tuning by the job's billed cost. `req` is a
    tools.recommend.RecommendRequest (its deployability rules apply: tools.deployable; `marketplaces`
    names the providers that are marketplaces of hosts). No database access: offers and specs are arguments.
    """
    from tools.recommend import recommend  # recommend imports tools.cost; imported here to keep solve light

    rec = recommend(a, req.model_copy(update={"objective": "value", "top_n": max(req.top_n, 5)}), offers, gpus,
                    engine, mfu_table, billing, marketplaces)
    if not rec.options:
        return SolveResult(unknown="best_gpu_by_cost", value=None, unit="", solved=False, config={},
                           limited_by="nothing_fits", details={"ruled_out": rec.ruled_out,
                                                               "suggestions": rec.suggestions,
                                                               "rejected": rec.rejected})
    best = rec.options[0]
    serve = req.workload == "serve"
    keep = ("gpu", "gpu_id", "gpu_count", "precision", "method", "offer", "price_usd_per_hour", "serving_basis",
            "serving_batch", "usd_per_million_tokens", "usd_per_million_tokens_batch_1", "job_cost_usd",
            "spot_job_cost_usd", "hours", "grad_checkpointing", "replicas", "usd_per_million_tokens_served",
            "drawbacks", "job")
    return SolveResult(unknown="best_gpu_by_cost", value=best["rank_value"],
                       unit="usd_per_million_tokens" if serve else "usd", solved=True,
                       config={k: best[k] for k in keep if k in best}, memory_gb=best["vram_per_gpu_gb"],
                       gpu_memory_gb=best["gpu_memory_gb"], limited_by="cost",
                       details={"runners_up": [{k: o[k] for k in keep if k in o} | {"value": o["rank_value"]}
                                               for o in rec.options[1:4]], "rejected": rec.rejected})


class JobReplicasRequest(BaseModel):
    """A generation job against a deadline: how many copies of the model it needs. Give the job's output
    tokens and one copy's tokens/s, or its images and one copy's images per hour."""

    model_config = ConfigDict(extra="forbid")
    total_output_tokens: float | None = Field(None, gt=0, description="output tokens the job writes (requests x output)")
    tokens_per_s_per_replica: float | None = Field(None, gt=0, description="tokens/s of one copy at its best batch")
    images: int | None = Field(None, gt=0, description="images the job generates")
    images_per_hour_per_replica: float | None = Field(None, gt=0, description="images an hour of one copy")
    deadline_hours: float = Field(gt=0, description="hours the job may take")
    gpus_per_replica: int = Field(1, ge=1, le=4096, description="GPUs one copy of the model needs (memory)")

    @model_validator(mode="after")
    def _one_kind_of_work(self) -> "JobReplicasRequest":
        tokens = self.total_output_tokens is not None and self.tokens_per_s_per_replica is not None
        images = self.images is not None and self.images_per_hour_per_replica is not None
        if tokens == images:
            raise ValueError("give total_output_tokens with tokens_per_s_per_replica, or images with "
                             "images_per_hour_per_replica")
        return self


class JobReplicasResult(BaseModel):
    replicas: int
    gpus_total: int
    gpus_per_replica: int
    deadline_hours: float
    hours_at_that_count: float = Field(description="the job's generation time with that many copies")
    total_output_tokens: float | None = None
    tokens_per_s_per_replica: float | None = None
    images: int | None = None
    images_per_hour_per_replica: float | None = None


def job_replicas(req: JobReplicasRequest) -> JobReplicasResult:
    """Replicas (and GPUs) a generation job needs to finish by its deadline: `replicas_for_deadline`
    copies of the model, each on `gpus_per_replica` GPUs; hours = work / (replicas x rate). The count is
    tools.jobs.job_totals' (a copy is the unit of parallel work), the computation cost and recommend share."""
    if req.images is not None:
        work, rate_per_s = float(req.images), req.images_per_hour_per_replica / 3600
    else:
        work, rate_per_s = req.total_output_tokens, req.tokens_per_s_per_replica
    replicas_for_deadline(work, rate_per_s, req.deadline_hours)  # validates the three figures
    n = job_totals(JobRequest(units=work, units_per_s=rate_per_s, deadline_hours=req.deadline_hours)).gpus  # copies
    return JobReplicasResult(replicas=n, gpus_total=n * req.gpus_per_replica, gpus_per_replica=req.gpus_per_replica,
                             deadline_hours=req.deadline_hours, hours_at_that_count=round(work / (n * rate_per_s * 3600), 3),
                             **req.model_dump(include={"total_output_tokens", "tokens_per_s_per_replica", "images",
                                                       "images_per_hour_per_replica"}))


def replicas_for_deadline(total_tokens: float, tokens_per_s_per_replica: float, deadline_hours: float) -> int:
    """Fewest model replicas that write `total_tokens` output tokens within `deadline_hours`.

    replicas = ceil(total_tokens / (tokens_per_s_per_replica x deadline_hours x 3600)), with the rate
    the speed estimator gives for one replica at its throughput-optimal batch (decode-bound; prompt
    prefill adds to it, so this is a lower bound). Example: 1e9 tokens in 6 h at 15,962 tokens/s per
    H100 -> 1e9 / (15,962 x 21,600) = 2.9 -> 3 replicas.
    """
    for name, v in (("total_tokens", total_tokens), ("tokens_per_s_per_replica", tokens_per_s_per_replica),
                    ("deadline_hours", deadline_hours)):
        if not _is_number(v) or not math.isfinite(float(v)) or float(v) <= 0:
            raise InvalidInput(name, v, "a finite number above 0")
    return max(1, math.ceil(float(total_tokens) / (float(tokens_per_s_per_replica) * float(deadline_hours) * 3600)))
