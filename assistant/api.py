"""The one entry point for front ends (CLI, app, Slack): resolve names, call the tools.

Imports stay light (no LangChain, no Gradio) so `gpu-advisor vram` starts fast.
"""

from __future__ import annotations

__all__ = ["Advisor", "Answer", "advisor", "catalog_info", "cost", "guide", "recommend", "catalog_refresh", "list_gpus", "list_models", "price_db", "prices", "resolve_model_arch",
           "levers", "solve", "speed", "train_time", "transfer_cost", "vram", "image_cost", "image_recommend", "image_speed", "image_vram"]

import math
from typing import Any

from knowledge.catalog import (load_diffusion_models, load_gpus, load_models, load_providers,
                               load_training_efficiency,
                               load_kernels, model_from_config_file, resolve_diffusion, resolve_engine, resolve_gpu,
                               resolve_kernel, resolve_model)
from tools.architecture import arch_from_params, count_params
from tools.cost import (BillingPolicy, CostInputs, ProviderRates, ServingRequest, SpotAssumptions, cost_report,
                        serving_economics)
from assistant.image_api import image_cost, image_recommend, image_speed, image_vram, is_image_pipeline
from tools.errors import InvalidCombination, InvalidInput, UnknownModel
from tools.schemas import MAX_PARAMS_B, ModelArch, PriceQuery, PriceResult, VramEstimate, VramRequest, validated
from tools.throughput import (EngineProfile, SpeedEstimate, SpeedRequest, check_context_window, estimate_speed,
                              max_batch_for_memory)
from tools.training import TrainEstimate, TrainRequest, estimate_train_time
from tools.vram import estimate_vram


def resolve_model_arch(model: str | None = None, config: str | None = None,
                       params_b: float | None = None) -> ModelArch:
    """Exactly one of a catalog name, a config.json path or a parameter count (billions)."""
    given = [x is not None for x in (model, config, params_b)]
    if sum(given) != 1:
        raise InvalidCombination("give exactly one of --model NAME, --config PATH or --params-b N")
    if model is not None:
        if not str(model).strip():
            raise InvalidInput("model", model, "a model name such as llama-3.1-8b")
        return resolve_model(model)
    if config is not None:
        return model_from_config_file(config)
    assert params_b is not None
    if not isinstance(params_b, (int, float)) or not math.isfinite(params_b) or not 0 < params_b <= MAX_PARAMS_B:
        raise InvalidInput("params_b", params_b,
                           f"a number of billions of parameters above 0 and at most {MAX_PARAMS_B:,.0f}")
    return arch_from_params(float(params_b))


def _gpu_memory(gpu: str | None) -> tuple[Any, str]:
    if gpu is None:
        return None, ""
    match = resolve_gpu(gpu)
    gpu_mem, note = match.gpu.as_gpu_memory(), match.note
    if gpu_mem is None:
        note = (note + " " if note else "") + f"The memory of {match.gpu.name} is not in the GPU data, so no fit verdict."
    return gpu_mem, note


def vram(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
         gpu: str | None = None, gpu_memory_gb: float | None = None, offload_text_encoders: bool = False,
         **request: Any) -> VramEstimate:
    """Per-GPU memory estimate for a model, with an optional fit verdict against `gpu`.

    LLMs get the full breakdown (tools.vram); image pipelines (SDXL, SD3, FLUX.1...) their
    component weights (tools.diffusion).

    Raises:
        AdvisorError subclasses with user-facing messages (unknown model/GPU, invalid input).
    """
    try:
        arch = resolve_model_arch(model, config, params_b)
    except UnknownModel as llm_error:
        pipe = resolve_diffusion(model) if model is not None else None
        if pipe is None:
            raise llm_error from None
        return image_vram(model=model, gpu=gpu, gpu_memory_gb=gpu_memory_gb,
                          offload_text_encoders=offload_text_encoders, **request)
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    gpu_mem, note = _gpu_memory(gpu)
    if gpu_mem is None and gpu_memory_gb is not None:
        if not isinstance(gpu_memory_gb, (int, float)) or not math.isfinite(gpu_memory_gb) or not 0 < gpu_memory_gb <= 10_000:
            raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory size in GB above 0 and at most 10,000")
        from tools.schemas import GpuMemory
        # a "24 GB GPU" is 24 GiB as vendors count it
        gpu_mem = GpuMemory(name=f"a {gpu_memory_gb:g} GB GPU", memory_gb=gpu_memory_gb * 2**30 / 1e9)
    est = estimate_vram(arch, req, gpu_mem)
    if gpu_mem is not None:
        gib = gpu_mem.memory_gb * 1e9 / 2**30
        est.assumptions.append(f"{gpu_mem.name}: {gib:g} GiB as the vendor states it (nvidia-smi counts GiB) "
                               f"= {gpu_mem.memory_gb:.1f} GB; fits means the total, CUDA context included, is within it.")
    if note:
        est.assumptions.insert(0, note)
    return est


def list_models() -> list[dict[str, Any]]:
    """Every catalog model: id, name, parameter count (billions), kind, source."""
    out = [{"id": m.id, "name": m.name, "params_b": round(count_params(m).total_b, 3),
            "kind": "llm-moe" if m.is_moe else "llm", "source": m.source} for m in load_models()]
    for mid, comps in load_diffusion_models().items():
        out.append({"id": mid, "name": comps[0].model_name, "params_b": round(sum(c.params_m for c in comps) / 1e3, 3),
                    "kind": "image-generation", "source": comps[0].source})
    return out


def list_gpus() -> list[dict[str, Any]]:
    """Every catalog GPU with its facts (None = unknown)."""
    return [g.model_dump(mode="json") for g in load_gpus()]


def speed(*, model: str | None = None, config: str | None = None, params_b: float | None = None, gpu: str,
          engine: str | None = None, engine_profile: EngineProfile | None = None, kernel: str | None = None,
          **request: Any) -> SpeedEstimate:
    """Decode speed, time to first token and latency of a model on a GPU (labelled estimates),
    with the memory check: does it fit, and the largest batch whose KV cache fits. `kernel` names the
    quantised-matmul kernel family (knowledge/quant_kernels.csv) when the precision does not; by
    default the engine's kernel for the precision is assumed and named in the answer.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    if config is None and params_b is None and engine_profile is None and is_image_pipeline(model):
        return image_speed(model=model, gpu=gpu, engine=engine, kernel=kernel, **request)  # type: ignore[return-value]
    arch = resolve_model_arch(model, config, params_b)
    match = resolve_gpu(gpu)
    eng = engine_profile or resolve_engine(engine)
    req = validated(SpeedRequest, **{k: v for k, v in request.items() if v is not None})
    ctx = req.prompt_tokens + req.output_tokens
    window_warning = check_context_window(arch, ctx)  # over the window: a warning; far over: refused
    kern = resolve_kernel(kernel or req.precision, eng)
    if kernel and kern is None:
        raise InvalidInput("kernel", kernel, ", ".join(k.id for k in load_kernels()))
    est = estimate_speed(arch, match.gpu, eng, req, kernel=kern)
    if window_warning:
        est.warnings.append(window_warning)
        est.assumptions.insert(0, window_warning)
    tp = req.gpus if eng.multi_gpu == "tensor" else 1
    if match.gpu.memory_gb is not None:
        vreq = validated(VramRequest, method="inference", weight_precision=req.precision, batch=1, seq_len=ctx,
                         kv_precision=req.kv_precision, gpus=req.gpus, tensor_parallel=tp,
                         prefill_chunk_tokens=8192 if eng.id in ("vllm", "sglang", "tensorrt-llm") else None)
        one = estimate_vram(arch, vreq)
        # Layer-split engines spread the weights over the GPUs (each holds 1/n of the layers).
        split = req.gpus if eng.multi_gpu == "layer" else 1
        est.memory = max_batch_for_memory(one, match.gpu.memory_gb, split)
        if est.memory["max_batch"] >= 1:
            at_max = estimate_speed(arch, match.gpu, eng, req.model_copy(update={"batch": est.memory["max_batch"]}),
                                    kernel=kern)
            est.memory["aggregate_tokens_per_s_at_max_batch"] = at_max.aggregate_tokens_per_s
        if req.batch > est.memory["max_batch"]:
            est.assumptions.insert(0, (
                f"Does not fit: {arch.name} at batch {req.batch} x {ctx:,} tokens needs more than the "
                f"{match.gpu.memory_gb:.1f} GB of each {match.gpu.name}"
                + (f"; at most {est.memory['max_batch']} sequences fit." if est.memory["max_batch"] >= 1
                   else "; even one sequence does not fit — quantise, add GPUs or pick a bigger GPU.")))
    if match.note:
        est.assumptions.insert(0, match.note)
    if arch.rough:
        est.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return est


def train_time(*, model: str | None = None, config: str | None = None, params_b: float | None = None, gpu: str,
               examples: int | None = None, tokens_per_example: int | None = None, **request: Any) -> TrainEstimate:
    """Fine-tuning throughput, hours and GPU-hours (labelled estimates).

    `dataset_tokens` or `examples` x `tokens_per_example` give the data size.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    arch = resolve_model_arch(model, config, params_b)
    match = resolve_gpu(gpu)
    if request.get("dataset_tokens") is None:
        if examples is None or tokens_per_example is None:
            raise InvalidCombination("the dataset size is missing: give its tokens (e.g. '100M tokens', "
                                     "--dataset-tokens N), or examples and tokens per example (e.g. '50k examples "
                                     "of 512 tokens', --examples N --tokens-per-example T)")
        for name, v in (("examples", examples), ("tokens_per_example", tokens_per_example)):
            if not isinstance(v, int) or v < 1 or v > 10**12:
                raise InvalidInput(name, v, "a whole number from 1 to 1,000,000,000,000")
        request["dataset_tokens"] = float(examples) * tokens_per_example
    req = validated(TrainRequest, **{k: v for k, v in request.items() if v is not None})
    est = estimate_train_time(arch, match.gpu, req, load_training_efficiency())
    if match.note:
        est.assumptions.insert(0, match.note)
    if arch.rough:
        est.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return est


_DBS: dict[str, Any] = {}


def price_db() -> Any:
    """The process's PriceDb for the current data directory (built on first use)."""
    from assistant.settings import data_dir
    from knowledge.price_db import DB_FILENAME, PriceDb

    path = str(data_dir() / DB_FILENAME)
    db = _DBS.get(path)
    if db is None:
        db = PriceDb(path)
        db.ensure()
        _DBS[path] = db
    return db


def prices(**query: Any) -> PriceResult:
    """Offers from the price catalog, cheapest first, with the data's date and a staleness flag.

    `gpu` and `provider` take comma lists; `region` takes europe | us | asia | a country | a city, or part
    of a region name; the result lists the regions matched and the GPU forms a name covered.

    Raises:
        AdvisorError subclasses: unknown GPU, provider or vendor, invalid filter values.
    """
    from knowledge.price_db import split_list
    from knowledge.prices.gpu_names import price_gpu_ids

    q = validated(PriceQuery, **{k: v for k, v in query.items() if v is not None})
    if q.gpus is not None and q.min_gpus is not None:
        raise InvalidCombination("give --gpus N or --min-gpus N, not both")
    for lo, hi, names in ((q.min_gpus or q.gpus, q.max_gpus, "--min-gpus/--gpus and --max-gpus"),
                          (q.min_total_vram_gb, q.max_total_vram_gb, "--min-total-vram-gb and --max-total-vram-gb")):
        if lo is not None and hi is not None and lo > hi:
            raise InvalidCombination(f"{names}: the minimum ({lo:g}) is above the maximum ({hi:g})")
    ids, note, forms = (None, "", [])
    if q.gpu is not None:
        if not split_list(q.gpu):
            raise InvalidInput("gpu", q.gpu, "a GPU name such as H100 or 'RTX 4090', or a comma list of them")
        ids, note, forms = price_gpu_ids(q.gpu)
    db = price_db()
    if q.provider is not None:
        known = [p["provider"] for p in db.info()["providers"]]
        asked = split_list(q.provider)
        for p in asked or [q.provider]:
            if p not in known:
                raise InvalidInput("provider", q.provider, ", ".join(known))
    if q.vendor is not None:
        vendors = sorted({g.vendor.lower() for g in load_gpus() if g.vendor})
        if q.vendor.strip().lower() not in vendors:
            raise InvalidInput("vendor", q.vendor, ", ".join(vendors))
    res = db.query(q, ids)
    res.gpu_note, res.gpu_forms = note, forms
    return res


def catalog_info() -> dict[str, Any]:
    """Rows per provider, date per source (and how it is known), unmapped GPU names, drop reasons,
    regions with no known country, what the last refresh skipped or could not read."""
    return price_db().info()


def catalog_refresh(sources: list[str] | None, provider: str | None = None, progress: Any = None, *,
                    strict: bool = False, as_of: str | None = None, catalog_url: str | None = None,
                    timeout_s: float = 30.0) -> Any:
    """Refresh providers' offers from SkyPilot catalog files, folders (whole `catalogs/v8` trees) or URLs;
    with no sources, from SkyPilot's published catalog. Atomic swap; see PriceDb.refresh."""
    from knowledge.price_db import DEFAULT_CATALOG_URL

    db = price_db()
    if provider is not None:
        provider = provider.strip().lower()
        if not provider or not provider.replace("-", "").replace("_", "").isalnum():
            raise InvalidInput("provider", provider, "a provider name of letters, digits, '-' or '_'")
    return db.refresh(sources or None, provider, progress, strict=strict, as_of=as_of,
                      catalog_url=catalog_url or DEFAULT_CATALOG_URL, timeout_s=timeout_s)


def _finite_nonneg(name: str, v: Any, hi: float) -> float | None:
    if v is None:
        return None
    if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v > hi:
        raise InvalidInput(name, v, f"a number from 0 to {hi:,.0f}")
    return float(v)


def cost(*, gpu: str, gpus: int | None = None, provider: str | None = None, region: str | None = None,
         price_usd_per_hour: float | None = None, hours: float | None = None,
         model: str | None = None, config: str | None = None, params_b: float | None = None,
         method: str | None = None, dataset_tokens: float | None = None, examples: int | None = None,
         tokens_per_example: int | None = None, epochs: float | None = None,
         serve: bool = False, engine: str | None = None, precision: str | None = None, batch: int | None = None,
         prompt_tokens: int | None = None, output_tokens: int | None = None,
         storage_gb: float | None = None, months: float | None = None, egress_gb: float | None = None,
         **spot: Any) -> dict[str, Any]:
    """What a job (or an always-on endpoint) costs on the cheapest matching offer.

    Resolves the offers, the provider's rates and the runtime (given, or from the training-time
    estimator), then calls tools.cost.cost_report (billing policy, spot, storage, egress, totals)
    and, for serving, tools.cost.serving_economics ($ per million tokens at batch 1 and at the load).

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    if config is None and params_b is None and is_image_pipeline(model):
        if storage_gb is not None or egress_gb is not None:
            raise InvalidCombination("storage and egress are not costed for image jobs; leave out --storage-gb/--egress-gb")
        spot.pop("checkpoint_every_h", None)  # every finished image is a checkpoint
        return image_cost(model=model, gpu=gpu, gpus=gpus, provider=provider, region=region, serve=serve,
                          price_usd_per_hour=price_usd_per_hour, engine=engine, precision=precision, batch=batch,
                          hours=hours, method=method, dataset_tokens=dataset_tokens, examples=examples,
                          tokens_per_example=tokens_per_example, epochs=epochs, prompt_tokens=prompt_tokens,
                          output_tokens=output_tokens, **spot)
    n = gpus or 1
    hrs = _finite_nonneg("hours", hours, 1e6)
    storage_gb = _finite_nonneg("storage_gb", storage_gb, 1e9)
    egress_gb = _finite_nonneg("egress_gb", egress_gb, 1e9)
    months_v = _finite_nonneg("months", months, 1200) if months is not None else 1.0
    sa = validated(SpotAssumptions, **{k: v for k, v in spot.items() if v is not None})
    res_od = prices(gpu=gpu, gpus=n, provider=provider, region=region, pricing="on-demand", limit=1)
    res_spot = prices(gpu=gpu, gpus=n, provider=provider, region=region, pricing="spot", limit=1)
    offer = res_od.offers[0] if res_od.offers else None
    spot_offer = res_spot.offers[0] if res_spot.offers else None
    if price_usd_per_hour is not None:
        price = _finite_nonneg("price_usd_per_hour", price_usd_per_hour, 1e6)
        prov = (provider or "").lower() or None
    elif offer is not None:
        price, prov = offer.price_usd_per_hour, offer.provider
    elif spot_offer is None:
        raise InvalidCombination(f"no offer in the catalog matches {n} x {gpu}"
                                 + (f" at {provider}" if provider else "") + "; give --price-usd-per-hour")
    else:
        price, prov = None, spot_offer.provider
    inputs: dict[str, Any] = dict(
        gpu=gpu, gpus=n, price_usd_per_hour=price, price_given=price_usd_per_hour is not None,
        provider_filter=provider, rates=ProviderRates.of(prov, load_providers().get(prov or "", {})),
        offer=offer, spot_offer=spot_offer, storage_gb=storage_gb, months=months_v, egress_gb=egress_gb, spot=sa,
        gpu_note=res_od.gpu_note)
    has_model = not (model is None and config is None and params_b is None)
    if serve:
        if not has_model:
            raise InvalidCombination("serving cost needs the model (--model, --config or --params-b)")
        inputs |= _serving_inputs(model, config, params_b, gpu, n, engine, precision, batch, prompt_tokens,
                                  output_tokens, offer, price, spot_offer)
    elif hrs is None:
        if not has_model:
            raise InvalidCombination("give --hours H, or a model with --method and the data size to estimate them")
        tt = train_time(model=model, config=config, params_b=params_b, gpu=gpu, gpus=n, method=method,
                        dataset_tokens=dataset_tokens, examples=examples, tokens_per_example=tokens_per_example,
                        epochs=epochs)
        inputs |= {"runtime_hours": tt.hours, "estimator_assumptions": tt.assumptions}
        training = {"tokens_per_s": tt.tokens_per_s, "hours": tt.hours, "gpu_hours": tt.gpu_hours,
                    "method": tt.inputs["method"], "total_tokens": tt.total_tokens}
    else:
        inputs["runtime_hours"] = hrs
    rep = cost_report(CostInputs(**inputs))
    head = {"as_of": res_od.as_of or res_spot.as_of, "stale": res_od.stale, "data_note": res_od.data_note}
    if not serve and hrs is None:
        head_keys = ("gpu", "gpus", "offer", "spot_offer")
        rep = {k: rep[k] for k in head_keys} | {"training": training} | {k: v for k, v in rep.items() if k not in head_keys}
    return head | rep


def _serving_inputs(model: str | None, config: str | None, params_b: float | None, gpu: str, n: int,
                    engine: str | None, precision: str | None, batch: int | None, prompt_tokens: int | None,
                    output_tokens: int | None, offer: Any, price: float | None, spot_offer: Any) -> dict[str, Any]:
    """Serving economics for cost(): $/M tokens at batch 1 and at `batch` (or the best batch in memory)."""
    arch = resolve_model_arch(model, config, params_b)
    spec = resolve_gpu(gpu).gpu
    eng = resolve_engine(engine)
    shape = {k: v for k, v in (("precision", precision), ("prompt_tokens", prompt_tokens),
                               ("output_tokens", output_tokens)) if v is not None}
    mem = (offer.gpu_memory_gb if offer is not None else None) or spec.memory_gb
    sp = speed(model=model, config=config, params_b=params_b, gpu=gpu, gpus=n, engine=engine, precision=precision,
               batch=batch, prompt_tokens=prompt_tokens, output_tokens=output_tokens)  # validates; memory check
    sreq = validated(ServingRequest, gpus=n, concurrent_users=batch, gpu_memory_gb=mem, **shape)
    econ = serving_economics(arch, spec, eng, sreq, price,
                             spot_offer.spot_price_usd_per_hour if spot_offer is not None else None)
    if econ.at_load.batch != sp.inputs["batch"]:
        sp = speed(model=model, config=config, params_b=params_b, gpu=gpu, gpus=n, engine=engine,
                   precision=precision, batch=econ.at_load.batch, prompt_tokens=prompt_tokens,
                   output_tokens=output_tokens)
    return {"serving": econ, "estimator_assumptions": sp.assumptions,
            "serving_info": {"engine": sp.engine, "bound": sp.bound, "memory": sp.memory}}


def transfer_cost(*, provider: str, egress_gb: float | None = None, storage_gb: float | None = None,
                  months: float | None = None) -> Any:
    """Egress and storage of one provider without a GPU job ("500 GB out of AWS"): tools.cost.usage_costs
    at the provider's rates (knowledge/providers.csv); an unknown rate is None with a reason code.

    Raises:
        InvalidInput: an unknown provider or a negative amount.
    """
    from tools.cost import usage_costs

    facts = load_providers()
    key = str(provider).strip().lower()
    if key not in facts:
        raise InvalidInput("provider", provider, ", ".join(sorted(facts)))
    egress = _finite_nonneg("egress_gb", egress_gb, 1e9)
    storage = _finite_nonneg("storage_gb", storage_gb, 1e9)
    m = _finite_nonneg("months", months, 1200) if months is not None else 1.0
    return usage_costs(ProviderRates.of(key, facts[key]), storage, m if m is not None else 1.0, egress)


def guide(question: str, lang: str | None = None, k: int = 3) -> list[Any]:
    """Guide passages that answer `question`, in its language (or `lang`)."""
    from knowledge.guide_index import search_guide

    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("question", question, "a question in English or Urdu")
    if lang is not None and lang not in ("en", "ur"):
        raise InvalidInput("lang", lang, "en or ur")
    if not isinstance(k, int) or not 1 <= k <= 10:
        raise InvalidInput("k", k, "an integer from 1 to 10")
    return search_guide(question[:4000], lang, k)


def recommend(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
              providers: list[str] | None = None, regions: list[str] | None = None, **goal: Any) -> Any:
    """Ranked GPU options for serving or fine-tuning `model`, with reasons and what was ruled out.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools.recommend import RecommendRequest, recommend as _recommend

    if config is None and params_b is None and is_image_pipeline(model):
        return image_recommend(model=model, providers=providers, regions=regions, **goal)
    arch = resolve_model_arch(model, config, params_b)
    if goal.get("examples") is not None or goal.get("tokens_per_example") is not None:
        ex, tpe = goal.pop("examples", None), goal.pop("tokens_per_example", None)
        if ex is None or tpe is None:
            raise InvalidCombination("give --examples N together with --tokens-per-example T")
        for name, v in (("examples", ex), ("tokens_per_example", tpe)):
            if not isinstance(v, int) or not 1 <= v <= 10**12:
                raise InvalidInput(name, v, "a whole number from 1 to 1,000,000,000,000")
        goal["dataset_tokens"] = float(ex) * tpe
        if goal.get("seq_len") is None:  # examples of ~T tokens are trained as sequences of T tokens
            goal["seq_len"] = tpe
    if goal.get("precisions") is not None:
        from tools.units import weight_format
        for p in goal["precisions"]:
            try:
                weight_format(p)
            except KeyError:
                raise InvalidInput("precision", p, "bf16, fp16, fp8, int8, int4, q4_k_m, q8_0 ...") from None
    req = validated(RecommendRequest, **{k: v for k, v in goal.items() if v is not None})
    eng = resolve_engine(req.engine)
    offers, data_note, gpus, billing = _offers_and_billing(providers, regions)
    rec = _recommend(arch, req, offers, gpus, eng, load_training_efficiency(), billing)
    dates = sorted({o["offer"]["as_of"] for o in rec.options if o["offer"]["as_of"]})
    rec.assumptions.append(data_note if offers else "No offer matched the provider/region filters.")
    if arch.rough:
        rec.assumptions.insert(0, "Only the parameter count was given: a Llama-like shape was assumed.")
    return rec.model_copy(update={"chart": rec.chart | {"as_of": dates}})


def _offers_and_billing(providers: list[str] | None, regions: list[str] | None) -> tuple[list[Any], str, dict, dict]:
    """Every catalog offer matching the provider/region filters, the data note, GPU specs by id and
    billing policies by provider: the arguments the pure recommend/solve tools take."""
    db = price_db()
    known = {p["provider"] for p in db.info()["providers"]}
    for p in providers or []:
        if p.strip().lower() not in known:
            raise InvalidInput("provider", p, ", ".join(sorted(known)))
    offers, note = [], ""
    for prov in (providers or [None]):
        for reg in (regions or [None]):
            res = db.query(PriceQuery(provider=prov, region=reg, limit=1000, pricing="any"), None)
            offers += res.offers
            note = res.data_note
            if res.total_matches > 1000:  # the catalog is bigger than one page: take every GPU type's cheapest rows
                for gid in {o.gpu_id for o in offers if o.gpu_id}:
                    offers += db.query(PriceQuery(provider=prov, region=reg, limit=200), [gid]).offers
    gpus = {g.id: g for g in load_gpus()}
    billing = {p: BillingPolicy(provider=p, increment_s=f.get("billing_increment_s"),
                                minimum_s=f.get("minimum_charge_s") or 0) for p, f in load_providers().items()}
    return offers, note, gpus, billing


def _sizing(model: str | None, config: str | None, params_b: float | None, gpu: str | None,
            gpu_memory_gb: float | None, request: dict[str, Any]) -> tuple[ModelArch, VramRequest, Any, float | None]:
    """Resolve the model, the VramRequest and the GPU (or a bare memory size, vendor GiB) for solve/levers."""
    arch = resolve_model_arch(model, config, params_b)
    req = validated(VramRequest, **{k: v for k, v in request.items() if v is not None})
    spec = resolve_gpu(gpu).gpu if gpu is not None else None
    mem = spec.memory_gb if spec is not None else None
    if mem is None and gpu_memory_gb is not None:
        if not isinstance(gpu_memory_gb, (int, float)) or not 0 < gpu_memory_gb <= 10_000:
            raise InvalidInput("gpu_memory_gb", gpu_memory_gb, "a GPU memory size in GB above 0 and at most 10,000")
        mem = gpu_memory_gb * 2**30 / 1e9  # a "24 GB GPU" is 24 GiB as vendors count it
    return arch, req, spec, mem


def solve(*, unknown: str, model: str | None = None, config: str | None = None, params_b: float | None = None,
          gpu: str | None = None, gpu_memory_gb: float | None = None, max_gpus: int = 64,
          headroom_fraction: float = 0.0, providers: list[str] | None = None, regions: list[str] | None = None,
          apply_defaults: bool = True, **request: Any) -> Any:
    """Solve for the unknown (tools.solve): max_context | max_batch | min_gpu_count | min_gpu_memory |
    best_gpu_by_cost. `request`: VramRequest fields (method, weight_precision, seq_len, batch ...), or for
    best_gpu_by_cost the recommend goal (workload, context_tokens, concurrent_users, method, dataset_tokens ...).
    Practitioner defaults fill what the user did not set (see `levers`); the result's findings say which.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools import solve as s

    if unknown == "best_gpu_by_cost":
        from tools.recommend import RecommendRequest

        arch = resolve_model_arch(model, config, params_b)
        req = validated(RecommendRequest, **{k: v for k, v in request.items() if v is not None})
        offers, _, gpus, billing = _offers_and_billing(providers, regions)
        return s.best_gpu_by_cost(arch, req, offers, gpus, resolve_engine(req.engine), load_training_efficiency(),
                                  billing)
    from tools.levers import apply_practitioner_defaults

    solvers = {"max_context": s.max_context_that_fits, "max_batch": s.max_batch_that_fits}
    if unknown not in (*solvers, "min_gpu_count", "min_gpu_memory"):
        raise InvalidInput("unknown", unknown, "max_context, max_batch, min_gpu_count, min_gpu_memory, best_gpu_by_cost")
    arch, vreq, _, mem = _sizing(model, config, params_b, gpu, gpu_memory_gb, request)
    applied = []
    if apply_defaults:
        vreq, applied = apply_practitioner_defaults(vreq)
    if unknown == "min_gpu_memory":
        res = s.min_gpu_memory(arch, vreq, list(load_gpus()), headroom_fraction)
    elif mem is None:
        raise InvalidCombination(f"solving for {unknown} needs the GPU (--gpu NAME) or its memory (gpu_memory_gb)")
    elif unknown == "min_gpu_count":
        res = s.min_gpu_count(arch, vreq, mem, max_gpus, headroom_fraction)
    else:
        res = solvers[unknown](arch, vreq, mem, headroom_fraction)
    return res.model_copy(update={"findings": applied + res.findings})


def levers(*, model: str | None = None, config: str | None = None, params_b: float | None = None,
           gpu: str | None = None, gpu_memory_gb: float | None = None, engine: str | None = None,
           goal: dict[str, Any] | None = None, apply_defaults: bool = True, **request: Any) -> Any:
    """The way forward (tools.levers.find_levers) for `request` on `gpu`, each lever with its cheapest
    on-demand offer. `goal`: LeverGoal fields (min_tokens_per_s_per_user, deadline_hours, budget_usd,
    dataset_tokens, epochs, max_gpus ...); a budget is priced at each GPU's cheapest GPU-hour in the catalog.
    Practitioner defaults (checkpointing for fine-tuning, double quant for QLoRA) fill what the user
    did not set, and `defaults_applied` says which.

    Raises:
        AdvisorError subclasses with user-facing messages.
    """
    from tools.levers import LeverGoal, apply_practitioner_defaults, find_levers

    if goal is not None and not isinstance(goal, dict):
        raise InvalidInput("goal", goal, "a mapping of min_tokens_per_s_per_user, deadline_hours, budget_usd, "
                           "dataset_tokens, epochs, max_gpus ...")
    if gpu is None and gpu_memory_gb is None:
        raise InvalidCombination("the way forward needs the GPU (gpu) or its memory (gpu_memory_gb)")
    arch, vreq, spec, mem = _sizing(model, config, params_b, gpu, gpu_memory_gb, request)
    if spec is None:  # "a 12 GB card": a GPU of that memory and nothing else known (no speed levers)
        from tools.schemas import GpuSpec

        spec = GpuSpec(id="memory-only", name=f"a {gpu_memory_gb:g} GB GPU", memory_gib=gpu_memory_gb)
    applied = []
    if apply_defaults:
        vreq, applied = apply_practitioner_defaults(vreq)
    g = validated(LeverGoal, **{k: v for k, v in (goal or {}).items() if v is not None})
    db = price_db()
    if g.budget_usd is not None and not g.usd_per_gpu_hour:
        rows = db.query(PriceQuery(pricing="on-demand", sort="gpu-hour", limit=1000), None).offers
        cheapest: dict[str, float] = {}
        for o in rows:
            if o.gpu_id and o.price_usd_per_gpu_hour is not None:
                cheapest[o.gpu_id] = min(cheapest.get(o.gpu_id, math.inf), o.price_usd_per_gpu_hour)
        g = g.model_copy(update={"usd_per_gpu_hour": cheapest})
    res = find_levers(arch, vreq, spec, goal=g, gpus_catalog=list(load_gpus()),
                      engine=resolve_engine(engine), mfu_table=load_training_efficiency())
    by_name = {x.name: x.id for x in load_gpus()}
    for lv in res.levers:
        n = int(lv.params.get("gpus", vreq.gpus))
        found = db.query(PriceQuery(gpus=n, pricing="on-demand", limit=1), [by_name.get(lv.gpu, spec.id)]).offers
        lv.offer = found[0].to_contract() if found else None
    return res.model_copy(update={"defaults_applied": applied})


_ADVISORS: dict[str, Any] = {}


def advisor(backend: str | None = None) -> Any:
    """The process's Advisor for the current data directory and backend (created on first use)."""
    from assistant.advisor import Advisor
    from assistant.settings import data_dir

    from assistant.backends import resolve_backend

    b = resolve_backend(backend)
    key = f"{data_dir()}|{b}"
    if key not in _ADVISORS:
        _ADVISORS[key] = Advisor(b)
    return _ADVISORS[key]


def __getattr__(name: str) -> Any:  # lazy re-exports: importing LangChain costs ~1 s
    if name in ("Advisor", "Answer"):
        import assistant.advisor as adv

        return getattr(adv, name)
    raise AttributeError(name)
