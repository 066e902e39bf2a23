"""THE list of tools the assistant may call: LangChain tools over the service functions (the same ones assistant.service.api exports).

Each tool has a pydantic argument schema and a docstring written for a model. A tool never
raises for a user-facing problem: an AdvisorError comes back as {"error": "..."} so the model (or
the router) can tell the user what was wrong and what is accepted.
"""

from __future__ import annotations

__all__ = ["TOOLS", "TOOL_NAMES", "run_tool"]  # noqa: F822 (TOOLS: built on first use, see __getattr__)

import copy
import json
import math
import os
import threading
from collections import OrderedDict
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from assistant.service import models, money, offers, planning
from knowledge import concepts
from tools.errors import AdvisorError
from tools.recommend import RecommendRequest
from tools.schemas import TIGHT_HEADROOM_FRACTION, PriceQuery, VramRequest, engine_memory_reserve
from tools.solve import JobReplicasRequest, SolveResult, job_replicas
from tools.throughput import SpeedRequest
from tools.training import TrainRequest

Num = float | None


class ModelRef(BaseModel):
    model_config = ConfigDict(extra="forbid")  # an argument no tool takes is an error, never dropped
    model: str | None = Field(None, description="catalog model name, e.g. 'llama-3.1-8b', 'Mistral 7B', 'flux.1-dev'")
    params_b: Num = Field(None, description="parameter count in billions when no name is known (rough)")


class ImageShape(BaseModel):
    model_config = ConfigDict(extra="forbid")
    """Image-pipeline settings (SDXL, SD3, FLUX.1 ...); ignored for language models."""

    resolution: int | None = Field(None, description="pixels of one side of a square image, e.g. 1024")
    steps: int | None = Field(None, description="denoising steps")
    guidance: Num = Field(None, description="classifier-free guidance scale (1 = off)")
    placement: str | None = Field(None, description="all-on-gpu, drop-text-encoders, model-offload, sequential-offload")


def request_fields(request_cls: type[BaseModel], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A tool's request model as optional tool arguments: the same names, types and descriptions, the
    request's own default named in the description and applied by the tool when the argument is left
    out. This is how every tool schema here derives from the one declaration of its parameters."""
    out: dict[str, Any] = {}
    for name, f in request_cls.model_fields.items():
        if name in skip:
            continue
        default = f.get_default(call_default_factory=True)
        desc = f.description or name.replace("_", " ")
        if default not in (None, [], (), ""):
            desc += f" (default: {', '.join(map(str, default)) if isinstance(default, (list, tuple)) else default})"
        ann = f.annotation
        simple = ann in (int, float, str, bool) or getattr(ann, "__origin__", None) is Literal or \
            set(getattr(ann, "__args__", ())) <= {int, float, str, bool, type(None)}
        out[name] = ((ann | None) if simple else Any, Field(None, description=desc))
    return out


class _VramRefs(ImageShape, ModelRef):
    gpu: str | None = Field(None, description="GPU to judge the fit against, e.g. 'RTX 4090', 'H100'")
    gpu_memory_gb: Num = Field(None, description="judge the fit against a GPU of this many GB (vendor GB)")


class _SpeedRefs(ImageShape, ModelRef):
    gpu: str = Field(description="GPU name")
    engine: str | None = Field(None, description="vllm sglang tensorrt-llm llama.cpp torch-compile pytorch-eager")


class _TrainRefs(ModelRef):
    gpu: str = Field(description="GPU name")
    examples: int | None = Field(None, description="dataset rows (with tokens_per_example instead of dataset_tokens)")
    tokens_per_example: int | None = Field(None, description="average tokens per row")


VramArgs = create_model("VramArgs", __base__=_VramRefs, **request_fields(VramRequest))
SpeedArgs = create_model("SpeedArgs", __base__=_SpeedRefs, **request_fields(SpeedRequest))
TrainArgs = create_model("TrainArgs", __base__=_TrainRefs, **request_fields(TrainRequest))


class _PriceRefs(BaseModel):
    model_config = ConfigDict(extra="forbid")


PriceArgs = create_model("PriceArgs", __base__=_PriceRefs, **request_fields(PriceQuery))


class CostArgs(ImageShape, ModelRef):
    images: int | None = Field(None, description="image pipelines: how many images the job makes")
    storage_gb: Num = Field(None, ge=0, description="persistent storage kept, GB")
    months: Num = Field(None, ge=0, description="months the storage is kept")
    egress_gb: Num = Field(None, ge=0, description="data transferred out of the provider, GB")
    gpu: str
    gpus: int | None = None
    provider: str | None = None
    region: str | None = Field(None, description="region word or name the offer must be in ('europe', 'us-east')")
    engine: str | None = Field(None, description="serving engine (vllm, sglang, tensorrt-llm, llama.cpp ...)")
    hours: Num = Field(None, description="runtime in hours, if known")
    price_usd_per_hour: Num = Field(None, gt=0, description="the user's own price for the whole configuration, "
                                                         "USD per hour (replaces the catalog's)")
    prompt_tokens: int | None = Field(None, gt=0, description="serving: prompt tokens per request")
    output_tokens: int | None = Field(None, gt=0, description="serving: output tokens per request")
    budget_usd: Num = Field(None, ge=0, description="no hours and no model: the running hours this budget buys")
    method: Literal["full", "lora", "qlora"] | None = None
    dataset_tokens: Num = None
    examples: int | None = None
    tokens_per_example: int | None = None
    epochs: Num = None
    serve: bool = Field(False, description="cost of an always-on endpoint instead of a job")
    tokens_per_day: Num = Field(None, gt=0, description="serving: tokens the endpoint must write a day (volume)")
    traffic: dict[str, float] | None = Field(None, description="serving: the traffic (tools.load.TrafficRequest "
                                                              "fields: users_online, requests_per_day, peak_factor ...)")
    api_usd_per_million_tokens: Num = Field(None, gt=0, description="serving with traffic: a hosted API's price per "
                                                                "million tokens, to weigh the endpoint's month against")
    requests: int | None = Field(None, gt=0, description="an offline generation job: prompts to run (documents, "
                                                         "queries), each prompt_tokens in and output_tokens out")
    deadline_hours: Num = Field(None, gt=0, description="generation job: hours it must finish in (copies needed)")
    batch: int | None = None
    precision: str | None = None
    interruptions_per_hour: Num = None
    checkpoint_every_h: Num = Field(None, gt=0, description="spot: hours between the run's checkpoints")
    spot_price_usd_per_hour: Num = Field(None, gt=0, description="the user's own spot price for the whole "
                                                              "configuration, USD per hour (replaces the catalog's)")


class _RecommendRefs(ImageShape, ModelRef):
    workload: Literal["serve", "finetune", "batch", "endpoint"] = Field(
        "serve", description="LLMs: serve or finetune; image pipelines: batch (N images) or endpoint")
    images: int | None = None
    examples: int | None = None
    tokens_per_example: int | None = None
    deadline_hours: Num = None
    budget_usd: Num = None
    providers: list[str] | None = None
    regions: list[str] | None = Field(None, description="region words the offers must be in ('europe', 'germany')")


RecommendArgs = create_model("RecommendArgs", __base__=_RecommendRefs,
                             **request_fields(RecommendRequest, skip=("workload",)))


class SolveArgs(VramArgs):
    unknown: SolveResult.model_fields["unknown"].annotation = Field(  # type: ignore[valid-type]
        description="what to solve for (max_params: the largest model that fits; no model needed)")
    max_gpus: int = Field(64, ge=1, le=4096, description="largest GPU count to try for min_gpu_count")
    headroom_fraction: Num = Field(None, ge=0, lt=1, description="share of each GPU's memory kept free (a serving "
                                                                "engine's reserve: vLLM's gpu_memory_utilization 0.9 -> 0.1)")
    workload: Literal["serve", "finetune"] | None = Field(None, description="best_gpu_by_cost: serving or a fine-tune")
    context_tokens: int | None = None
    concurrent_users: int | None = None
    dataset_tokens: Num = None
    examples: int | None = None
    tokens_per_example: int | None = None
    epochs: Num = None
    providers: list[str] | None = None


class LeverArgs(VramArgs):
    gpu: str | None = Field(None, description="the GPU the request does not fit, or is too slow / costly on")
    engine: str | None = None
    min_tokens_per_s_per_user: Num = None
    deadline_hours: Num = None
    budget_usd: Num = None
    dataset_tokens: Num = None
    epochs: Num = None


class GuideArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(description="the user's question, in their words")
    lang: Literal["en", "ur"] | None = None
    k: int = Field(2, ge=1, le=5)
    topics: list[str] = Field(default_factory=list, max_length=6,
                              description="concepts to explain (ids of knowledge/concepts.json), e.g. 'kv_cache'")


def _clean(x: Any) -> Any:
    """JSON-safe: no NaN/inf, pydantic models and dataclasses as dicts."""
    if hasattr(x, "model_dump"):
        return _clean(x.model_dump())
    if hasattr(x, "__dataclass_fields__"):
        return _clean(dict(x.__dict__))
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


_CACHE: "OrderedDict[str, Any]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_MAX = 512


def _data_stamp() -> str:
    """Changes whenever the price catalog file changes (a refresh), so cached results follow the data."""
    try:
        st = os.stat(offers.price_db().path)
        return f"{st.st_ino}:{st.st_mtime_ns}"
    except (OSError, AdvisorError):
        return "none"


def _guarded(fn, name: str):
    """Run a tool: AdvisorError -> {"error": ...}; results are JSON-safe and memoised (the tools are
    deterministic functions of their arguments and the data)."""
    def run(**kw: Any) -> dict[str, Any]:
        args = {k: v for k, v in kw.items() if v is not None}
        key = json.dumps([name, args, _data_stamp() if name in _PRICE_TOOLS else ""], sort_keys=True, default=str)
        with _CACHE_LOCK:
            if key in _CACHE:
                _CACHE.move_to_end(key)
                return copy.deepcopy(_CACHE[key])
        try:
            out = _clean(fn(**args))
        except AdvisorError as exc:
            out = {"error": str(exc), "error_info": _clean(exc.info())}
        with _CACHE_LOCK:
            _CACHE[key] = out
            while len(_CACHE) > _CACHE_MAX:
                _CACHE.popitem(last=False)
        return copy.deepcopy(out)
    run.__name__ = fn.__name__
    return run


_PRICE_TOOLS = {"price_query", "cost_estimator", "recommend_gpus"}


def _vram(**kw: Any) -> dict:
    mem = kw.pop("gpu_memory_gb", None)
    est = models.vram(**_vram_request(kw), gpu_memory_gb=mem)
    return est.to_json_dict()


def _prices(**kw: Any) -> dict:
    r = offers.prices(**kw)
    return {"as_of": r.as_of, "stale": r.stale, "data_note": r.data_note, "total_matches": r.total_matches,
            "gpu_note": r.gpu_note, "gpu_forms": list(r.gpu_forms), "regions_matched": list(r.regions_matched),
            "region_note": r.region_note, "offers": [o.to_contract() for o in r.offers]}


def _guide(**kw: Any) -> dict:
    hits = planning.guide(kw["question"], kw.get("lang"), kw.get("k", 2))
    out: dict[str, Any] = {"passages": [h.__dict__ for h in hits]}
    if kw.get("topics"):
        out["concepts"] = concepts.explain(kw["topics"], kw.get("lang") or "en")
    return out


def _vram_request(kw: dict[str, Any]) -> dict[str, Any]:
    """Several GPUs: tensor parallel for inference, FSDP for training (one rule for every memory tool)."""
    if kw.get("method", "inference") == "inference" and (kw.get("gpus") or 1) > 1 and not kw.get("tensor_parallel") \
            and not kw.get("layer_split"):
        kw["tensor_parallel"] = kw["gpus"]
    if (kw.get("gpus") or 1) > 1 and kw.get("method") in ("full", "lora", "qlora"):
        kw.setdefault("sharding", "fsdp")
    return kw


def _solve(**kw: Any) -> dict:
    if kw.get("unknown") == "best_gpu_by_cost":
        keep = ("unknown", "model", "params_b", "workload", "context_tokens", "concurrent_users", "method",
                "dataset_tokens", "examples", "tokens_per_example", "epochs", "providers")
        kw = {k: v for k, v in kw.items() if k in keep}
    else:
        kw = _vram_request({k: v for k, v in kw.items() if k not in ("workload", "context_tokens", "concurrent_users",
                                                                     "dataset_tokens", "examples", "tokens_per_example",
                                                                     "epochs", "providers")})
    return planning.solve(**kw).model_dump()


def _levers(**kw: Any) -> dict:
    goal = {k: kw.pop(k) for k in ("min_tokens_per_s_per_user", "deadline_hours", "budget_usd", "dataset_tokens", "epochs")
            if k in kw}
    # a way forward must run as suggested: served, within what the engine allocates (vLLM: 90 %); trained, with the
    # tight-fit margin free (fragmentation, spikes)
    serving = kw.get("method", "inference") == "inference"
    goal["headroom_fraction"] = max(engine_memory_reserve(kw.get("engine")) if serving else 0.0, TIGHT_HEADROOM_FRACTION)
    return planning.levers(**_vram_request(kw), goal=goal).model_dump()


def _recommend(**kw: Any) -> dict:
    return planning.recommend(**kw).model_dump()


_SPECS = [
    ("vram_calculator", _vram, VramArgs,
     "Per-GPU memory (decimal GB) to run or fine-tune a model, split into weights, KV cache, activations, "
     "gradients, optimizer and CUDA context, with a fit verdict against a GPU. Use for 'will it fit', "
     "'how much VRAM'. Every memory number you state must come from this tool."),
    ("speed_estimator", lambda **kw: models.speed(**kw), SpeedArgs,
     "Estimated decode tokens/s per user and for the batch, time to first token and latency of a model on a GPU "
     "with an engine (roofline calibrated on published measurements). Use for speed and batching questions."),
    ("training_time", lambda **kw: models.train_time(**kw), TrainArgs,
     "Estimated fine-tuning throughput (tokens/s), hours and GPU-hours for full, LoRA or QLoRA on a GPU."),
    ("price_query", _prices, PriceArgs,
     "Offers from the cloud GPU price catalog, cheapest first, with the data's date. Use for price questions."),
    ("cost_estimator", lambda **kw: money.cost(**kw), CostArgs,
     "What a job or an always-on endpoint costs on the cheapest matching offer: billing granularity, spot with "
     "interruptions, storage and egress, $ per million tokens and per month."),
    ("recommend_gpus", _recommend, RecommendArgs,
     "Ranked GPU options (fit, speed or time, cost, offer) for serving or fine-tuning a model, with reasons citing "
     "guide passages and what was ruled out."),
    ("solve_for", _solve, SolveArgs,
     "Solve for the unknown instead of checking one configuration: the longest context or the largest batch "
     "(concurrent users) that fits a GPU, the fewest GPUs of a kind, the smallest GPU memory, or the GPU with the "
     "lowest cost per million tokens / per fine-tuning run. Returns the number, the configuration and what limits it."),
    ("job_replicas", lambda **kw: job_replicas(JobReplicasRequest(**kw)).model_dump(), JobReplicasRequest,
     "How many copies of a model (and GPUs) a generation job needs to write its output tokens by a deadline, from the "
     "tokens/s one copy reaches at its throughput-optimal batch (speed_estimator)."),
    ("way_forward", _levers, LeverArgs,
     "The smallest changes that make a configuration fit (or reach a speed, deadline or budget) on a GPU: "
     "checkpointing, 8-bit/4-bit weights, FP8 KV cache, shorter context, smaller batch, more GPUs, a bigger GPU; "
     "each with its memory and cheapest offer. Use after any negative verdict."),
    ("search_guide", _guide, GuideArgs,
     "Passages of the fine-tuning and generative-AI guides that answer a question, in English or Urdu, with ids "
     "to cite. Use for every piece of advice."),
]

TOOL_NAMES = tuple(name for name, *_ in _SPECS)
_BY_NAME = {name: (_guarded(fn, name), schema) for name, fn, schema, _ in _SPECS}


def run_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one registered tool directly: the arguments are validated by its schema (as a LangChain
    tool would), errors come back as {'error': ...}. No LangChain import on this path (CLI start-up)."""
    fn, schema = _BY_NAME[name]
    try:
        parsed = schema.model_validate(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "arguments"
        return {"error": f"invalid arguments for {name}: {where}: {first.get('msg', '')}"}
    return fn(**{k: getattr(parsed, k) for k in args if k in schema.model_fields})


def __getattr__(attr: str) -> Any:
    """TOOLS, the LangChain tools an LLM backend binds (built on first use: importing LangChain's tool
    layer costs about a second, which the embedded engine never pays)."""
    if attr == "TOOLS":
        from langchain_core.tools import StructuredTool

        tools = [StructuredTool.from_function(func=_guarded(fn, name), name=name, description=desc, args_schema=schema)
                 for name, fn, schema, desc in _SPECS]
        globals()["TOOLS"] = tools
        return tools
    raise AttributeError(attr)
