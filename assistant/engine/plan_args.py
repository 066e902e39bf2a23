"""Arguments for the tools from the typed Query: the model, the GPU sides and their counts, the memory and
data arguments, with the practitioner's defaults (stated in the answer by compose). Shared by the first
round (plan.py) and the second (plan_forward.py)."""

from __future__ import annotations

__all__ = ["DEFAULTS", "MAX_SIDES", "TRAINING", "Call", "Done", "context_of", "count_for", "data_args", "gpu_sides",
           "hourly_only", "is_generation_job", "is_training", "job_requests", "model_args", "model_sides", "train_method", "unique_calls", "vram_args"]

from typing import Any

from assistant.engine.query import Query
from knowledge.catalog import is_image_pipeline, resolve_engine
from tools.schemas import DEFAULT_ENGINE, ENGINE_PREFILL_CHUNK_TOKENS
from tools.serving import BatchJobRequest
from tools.units import weight_format

DEFAULTS = {
    "context_tokens": 4096,
    "finetune_method": "lora",
    "tokens_per_example": 512,
    # a generation job's length per request when only its total is given: the batch-job tool's own default
    "output_tokens": BatchJobRequest.model_fields["output_tokens"].default,
    "nominal_requests": 100_000,  # a capacity question ("requests a day one GPU handles") is sized on this many
    "nominal_run_tokens": 1e8,  # a fine-tune with no data size is timed and costed per 100M tokens, said so
    "billing_gpu": "A100",
    "billing_hours": 20 / 60,
    "example_model": "llama-3.1-8b",  # a speed question about a GPU alone: a common 8B model, said so
    "ranking_images": 1000,  # "fastest GPU for FLUX" with no count: ranked on a batch of 1,000 images, said so
    "max_training_gpus": 1024}  # the fewest GPUs for a fine-tune is searched up to this many (FSDP over nodes)
MAX_SIDES = 3
TRAINING = ("full", "lora", "qlora", "finetune")

Call = dict[str, Any]
Done = list[tuple[str, dict, dict]]


def model_args(q: Query) -> dict[str, Any]:
    if q.model:
        return {"model": q.model}
    if q.params_b is not None:
        return {"params_b": q.params_b}
    if q.model_unknown:
        return {"model": q.model_unknown}  # the tool answers with the closest known names
    return {}


def model_sides(q: Query) -> list[dict[str, Any]]:
    """The models a comparison names, main first ("Llama 3.1 8B vs Mistral 7B"); the main one alone otherwise."""
    main = model_args(q)
    if "compare" not in q.intents or not main:
        return [main]
    return [main] + [{"model": m} for m in q.other_models[:MAX_SIDES - 1]]


def is_training(q: Query) -> bool:
    return q.method in TRAINING or (q.method is None and bool(q.dataset_tokens or q.epochs or (q.examples and not q.prompt_tokens)))


def is_generation_job(q: Query) -> bool:
    """A fixed amount of generation ("summarise 5M documents", "generate 1M tokens"), not an endpoint's
    traffic: sized by tools.serving.batch_generation (hours, copies for a deadline, cost)."""
    traffic = q.concurrent_users or q.tokens_per_day or q.requests_per_day or q.requests_per_hour or \
        q.requests_per_minute or q.daily_users
    return q.method == "inference" and bool(q.examples or q.generated_tokens) and not traffic and \
        not (q.model and is_image_pipeline(q.model))


def job_requests(q: Query) -> int:
    """The prompts a generation job runs: the rows given, else the tokens to write / the output per request."""
    if q.examples:
        return int(q.examples)
    if not q.generated_tokens:  # "how many requests a day can one L40S handle?": the rates of a nominal job
        return DEFAULTS["nominal_requests"]
    per = q.output_tokens or DEFAULTS["output_tokens"]
    return max(1, -(-int(q.generated_tokens or 0) // per))


def train_method(q: Query) -> str:
    if q.method in ("full", "lora", "qlora"):
        return q.method
    if q.precision in ("int4", "nf4"):
        return "qlora"
    return DEFAULTS["finetune_method"]


def count_for(q: Query, gpu: str | None) -> int | None:
    """The GPUs per instance for one card: its own count ("1x H100 or 2x L40S"), else the one stated."""
    return q.gpu_counts.get(gpu or "") or q.gpu_count


def gpu_sides(q: Query) -> list[dict[str, Any]]:
    """One dict per GPU the question names (a memory size counts as a GPU); [{}] when none. An unknown
    GPU is not guessed: the need is computed without it and a price lookup offers the closest names."""
    sides: list[dict[str, Any]] = [{"gpu": g} | ({"gpus": q.gpu_counts[g]} if g in q.gpu_counts else {})
                                   for g in q.gpus[:MAX_SIDES]]
    if not sides and q.gpu_memory_gb:
        sides = [{"gpu_memory_gb": q.gpu_memory_gb}]
    return sides or [{}]


def context_of(q: Query) -> int:
    if q.context_tokens:
        return q.context_tokens
    if q.prompt_tokens or q.output_tokens:
        return (q.prompt_tokens or 0) + (q.output_tokens or 0)
    return DEFAULTS["context_tokens"]


def vram_args(q: Query) -> dict[str, Any]:
    a: dict[str, Any] = dict(model_args(q))
    if is_training(q):
        a["method"] = train_method(q)
        if q.context_tokens:
            a["seq_len"] = q.context_tokens
        a["batch"] = q.batch
        a["grad_checkpointing"] = True if q.grad_checkpointing is None else q.grad_checkpointing
        a["optimizer"] = q.optimizer
        a["training_precision"] = q.training_precision
        a["lora_rank"] = q.lora_rank
        if a["method"] != "qlora" or q.precision in ("nf4", "int4"):
            a["weight_precision"] = None if a["method"] == "qlora" else q.precision
    else:
        a["method"] = "inference"
        a["seq_len"] = context_of(q)
        a["batch"] = q.concurrent_users or q.batch
        a["weight_precision"] = q.precision
        a["kv_precision"] = q.kv_precision
        # "on vLLM at 32k": the engine prefills the prompt in chunks, so its activations are a chunk's, not 32k's
        # (no engine named: the serving default's); a chunk as long as the context changes nothing, so it is left out
        chunk = ENGINE_PREFILL_CHUNK_TOKENS.get(q.engine or DEFAULT_ENGINE)
        if chunk and (q.engine or (a["seq_len"] or 0) > chunk):
            a["prefill_chunk_tokens"] = chunk
    if q.gpu_count and q.gpu_count > 1:
        a["gpus"] = q.gpu_count
        if a["method"] == "inference" and q.engine and resolve_engine(q.engine).multi_gpu == "layer":
            a["layer_split"] = True  # llama.cpp splits layers across the cards: any count, no head divisor
    return {k: v for k, v in a.items() if v is not None}


def named_format(q: Query) -> str | None:
    """The precision for the speed tool: the quantisation format as the user named it ('awq', 'gptq',
    'bnb-int8'), which picks the engine's kernel for it, when it still stores the weights as q.precision
    does (a follow-up that moves to fp8 leaves an earlier 'awq' behind); else q.precision."""
    if q.quant_format and q.precision and weight_format(q.quant_format).name == weight_format(q.precision).name:
        return q.quant_format
    return q.precision


def hourly_only(q: Query) -> bool:
    """Cheapest GPU with no data size, image count or load: the cheapest hour of a GPU that holds it."""
    if q.solve_for != "cheapest_gpu" or q.deadline_hours or q.budget_usd_total:
        return False
    if q.model and is_image_pipeline(q.model):
        return not (q.images or q.concurrent_users or q.duration_hours)
    return is_training(q) and not (q.dataset_tokens or q.examples)


def unique_calls(calls: list[Call]) -> list[Call]:
    """The same tool with the same arguments runs once (two intents may ask for the same call)."""
    seen, out = set(), []
    for c in calls:
        key = (c["name"], repr(sorted(c["args"].items())))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def data_args(q: Query) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if q.dataset_tokens:
        out["dataset_tokens"] = q.dataset_tokens
    elif q.examples:
        out["examples"] = q.examples
        out["tokens_per_example"] = q.tokens_per_example or DEFAULTS["tokens_per_example"]
    else:  # no data size: the rate and the price of a nominal run, said so (hours scale with the real data)
        out["dataset_tokens"] = DEFAULTS["nominal_run_tokens"]
    if q.epochs:
        out["epochs"] = q.epochs
    return out


def speed_args(q: Query) -> dict[str, Any]:
    """The speed estimator's arguments for the question's model and settings (no GPU, no batch): the
    example model when none is named (the answer names it)."""
    base: dict[str, Any] = dict(model_args(q)) or {"model": DEFAULTS["example_model"]}
    for k, v in (("precision", named_format(q)), ("engine", q.engine), ("prompt_tokens", q.prompt_tokens),
                 ("output_tokens", q.output_tokens)):
        if v:
            base[k] = v
    if q.context_tokens and not q.prompt_tokens:
        base["prompt_tokens"] = max(1, q.context_tokens * 3 // 4)
        base.setdefault("output_tokens", max(1, q.context_tokens - base["prompt_tokens"]))
    if q.gpu_count and q.gpu_count > 1:
        base["gpus"] = q.gpu_count
    return base
