"""Prices and costs: the offer catalog, billing, spot, storage and egress (knowledge.price_db, tools.cost)."""

from __future__ import annotations

import math
from typing import Any

from knowledge.catalog import (load_providers,
                               resolve_engine, resolve_gpu)
from tools.cost import (BillingPolicy, CostInputs, ProviderRates, ServingRequest, SpotAssumptions, cost_report,
                        hours_for_budget,
                        serving_economics)
from assistant.service.images import image_cost
from knowledge.catalog import is_image_pipeline
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import PriceResult, validated
from tools.serving import BatchJobRequest, batch_generation
from assistant.service.models import resolve_model_arch, speed, train_time
from assistant.service.offers import (catalog_info, catalog_refresh, data_date, offers_and_billing,  # noqa: F401
                                     price_db, prices, providers_in_data)


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
         tokens_per_day: float | None = None, traffic: dict[str, Any] | None = None, budget_usd: float | None = None,
         requests: int | None = None, deadline_hours: float | None = None,
         api_usd_per_million_tokens: float | None = None, spot_price_usd_per_hour: float | None = None,
         **spot: Any) -> dict[str, Any]:
    """What a job (or an always-on endpoint) costs on the cheapest matching offer.

    Resolves the offers, the provider's rates and the runtime (given, or from the training-time
    estimator), then calls tools.cost.cost_report (billing policy, spot, storage, egress, totals)
    and, for serving, tools.cost.serving_economics ($ per million tokens at batch 1 and at the load).
    `traffic` (serving): tools.load.TrafficRequest fields; the batch is the concurrency they make (Little's
    law), with replicas and the $ per million tokens served, idle time included. `budget_usd` with no hours
    and no model: the running hours the budget buys at the offer's price (tools.cost.hours_for_budget).
    `api_usd_per_million_tokens` (serving with traffic): the same traffic's month at that API price, beside it.
    `spot_price_usd_per_hour`: the user's own spot price for the configuration (replaces the offer's).
    `requests` (an offline generation job: N prompts of prompt_tokens in, output_tokens out): the hours on
    one copy of the model (tools.serving.batch_generation), the copies `deadline_hours` needs, the cost of
    those hours; with no GPU count, a copy is the fewest GPUs that hold the model at the job's batch.

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
    job, gen = requests is not None and not serve, None
    if job and gpus is None and not (model is None and config is None and params_b is None):
        gpus, gen = _job_on_fewest_gpus(model, config, params_b, gpu, engine, precision, prompt_tokens, output_tokens,
                                        requests, deadline_hours)
    n = gpus or 1
    hrs = _finite_nonneg("hours", hours, 1e6)
    storage_gb = _finite_nonneg("storage_gb", storage_gb, 1e9)
    egress_gb = _finite_nonneg("egress_gb", egress_gb, 1e9)
    months_v = _finite_nonneg("months", months, 1200) if months is not None else 1.0
    sa = validated(SpotAssumptions, **{k: v for k, v in spot.items() if v is not None})
    n, res_od, res_spot, only_larger = _cost_offers(gpu, n, gpus is None and price_usd_per_hour is None,
                                                    provider, region)
    offer = res_od.offers[0] if res_od.offers else None
    spot_offer = res_spot.offers[0] if res_spot.offers else None
    price, prov = _hourly_price(price_usd_per_hour, provider, offer, spot_offer, f"{n} x {gpu}")
    if spot_price_usd_per_hour is not None and (spot_offer or offer) is not None:  # the user's own spot price
        spot_offer = (spot_offer or offer).model_copy(update={
            "spot_price_usd_per_hour": _finite_nonneg("spot_price_usd_per_hour", spot_price_usd_per_hour, 1e6),
            "provider": prov or (spot_offer or offer).provider})
    inputs: dict[str, Any] = dict(
        gpu=gpu, gpus=n, price_usd_per_hour=price, price_given=price_usd_per_hour is not None,
        provider_filter=provider, rates=ProviderRates.of(prov, load_providers().get(prov or "", {})),
        offer=offer, spot_offer=spot_offer, storage_gb=storage_gb, months=months_v, egress_gb=egress_gb, spot=sa,
        gpu_note=res_od.gpu_note)
    extra, part = _runtime(dict(model=model, config=config, params_b=params_b), gpu, n, price, prov, offer, spot_offer,
                           dict(serve=serve, job=job, hours=hrs, budget_usd=budget_usd, engine=engine,
                                precision=precision, batch=batch, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                                traffic=traffic, tokens_per_day=tokens_per_day, requests=requests,
                                deadline_hours=deadline_hours, api_usd_per_million_tokens=api_usd_per_million_tokens, gen=gen,
                                method=method, dataset_tokens=dataset_tokens,
                                examples=examples, tokens_per_example=tokens_per_example, epochs=epochs))
    inputs |= extra
    rep = cost_report(CostInputs(**inputs))
    head = {"as_of": res_od.as_of or res_spot.as_of, "stale": res_od.stale, "data_note": res_od.data_note,
            "not_in_data": res_od.not_in_data, "price_usd_per_hour": price}
    if only_larger:
        head["only_larger_instance"] = only_larger
    if "training" in part:  # the training estimate right after the configuration it is for
        head_keys = ("gpu", "gpus", "offer", "spot_offer")
        rep = {k: rep[k] for k in head_keys} | part | {k: v for k, v in rep.items() if k not in head_keys}
        part = {}
    return head | part | rep


def _runtime(ref: dict[str, Any], gpu: str, n: int, price: float | None, prov: str | None, offer: Any, spot_offer: Any,
             w: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(cost_report inputs, the part of the result that says where the hours come from): an endpoint's
    serving economics, a generation job's hours, the hours a budget buys, the training estimate, or the
    hours given."""
    has_model = any(v is not None for v in ref.values())
    if w["serve"]:
        if not has_model:
            raise InvalidCombination("serving cost needs the model (--model, --config or --params-b)")
        extra = _serving_inputs(*ref.values(), gpu, n, w["engine"], w["precision"], w["batch"], w["prompt_tokens"],
                                w["output_tokens"], offer, price, spot_offer, w["traffic"])
        if w["tokens_per_day"] is not None:
            extra["tokens_per_day"] = _finite_nonneg("tokens_per_day", w["tokens_per_day"], 1e15) or None
        if w["hours"] is not None:  # "9 to 6 on 22 working days": the endpoint is up (and billed) those hours
            extra["hours_up_per_month"] = w["hours"]
        if w["api_usd_per_million_tokens"] is not None:  # a hosted API's price, weighed against the endpoint
            extra |= {"api_usd_per_million_tokens": w["api_usd_per_million_tokens"]} | \
                {k: w[k] for k in ("prompt_tokens", "output_tokens") if w[k] is not None}
        return extra, {}
    if w["hours"] is not None:
        return {"runtime_hours": w["hours"]}, {}
    if w["job"]:
        if not has_model:
            raise InvalidCombination("a generation job's cost needs the model (--model, --config or --params-b)")
        gen = w["gen"] if w["gen"] is not None and w["gen"].gpus_per_copy == n else \
            _generation_job(*ref.values(), gpu, n, w["engine"], w["precision"], w["prompt_tokens"],
                            w["output_tokens"], w["requests"], w["deadline_hours"])  # (an instance of n GPUs taken)
        return {"runtime_hours": gen.hours_one_copy}, {"generation_job": gen.model_dump()}
    if w["budget_usd"] is not None and not has_model:
        h = _budget_hours(w["budget_usd"], price, prov)
        return {"runtime_hours": h}, {"hours_for_budget": {"budget_usd": w["budget_usd"], "hours": h, "gpu_hours": h * n}}
    if not has_model:
        raise InvalidCombination("give --hours H, or a model with --method and the data size to estimate them")
    tt = train_time(**ref, gpu=gpu, gpus=n, method=w["method"], dataset_tokens=w["dataset_tokens"],
                    examples=w["examples"], tokens_per_example=w["tokens_per_example"], epochs=w["epochs"])
    part: dict[str, Any] = {"training": {
        "tokens_per_s": tt.tokens_per_s, "hours": tt.hours, "gpu_hours": tt.gpu_hours, "method": tt.inputs["method"],
        "total_tokens": tt.total_tokens}}
    budget = _finite_nonneg("budget_usd", w["budget_usd"], 1e9) if w["budget_usd"] is not None else None
    if budget and price:  # "$300 at $1.50/h: how many tokens can I train on?": hours bought x the training rate
        hours = budget / price
        tokens = hours * 3600 * tt.tokens_per_s
        part["budget_buys"] = {"budget_usd": budget, "hours": hours, "tokens": tokens, "million_tokens": tokens / 1e6}
    return {"runtime_hours": tt.hours, "estimator_assumptions": tt.assumptions}, part


def _generation_job(model: str | None, config: str | None, params_b: float | None, gpu: str, n: int,
                    engine: str | None, precision: str | None, prompt_tokens: int | None, output_tokens: int | None,
                    requests: int, deadline_hours: float | None) -> Any:
    """tools.serving.batch_generation for the resolved model, GPU and engine."""
    shape = {k: v for k, v in (("precision", precision), ("prompt_tokens", prompt_tokens),
                               ("output_tokens", output_tokens), ("deadline_hours", deadline_hours)) if v is not None}
    req = validated(BatchJobRequest, requests=requests, gpus=n, **shape)
    return batch_generation(resolve_model_arch(model, config, params_b), resolve_gpu(gpu).gpu, resolve_engine(engine), req)


def _job_on_fewest_gpus(model: str | None, config: str | None, params_b: float | None, gpu: str, engine: str | None,
                        precision: str | None, prompt_tokens: int | None, output_tokens: int | None, requests: int,
                        deadline_hours: float | None) -> tuple[int | None, Any]:
    """(GPUs per copy, the job on them): the fewest of 1, 2, 4, 8 GPUs whose copy runs the job's sequences (None
    and no job when not even 8 do: the job on 1 GPU then says why)."""
    for k in (1, 2, 4, 8):
        try:
            job = _generation_job(model, config, params_b, gpu, k, engine, precision, prompt_tokens, output_tokens,
                                  requests, deadline_hours)
            return (k if k > 1 else None), job
        except InvalidCombination:
            continue
    return None, None


def _hourly_price(given: Any, provider: str | None, offer: Any, spot_offer: Any, what: str
                  ) -> tuple[float | None, str | None]:
    """(on-demand $/h, provider): the price given, else the offer's; spot only: no on-demand price."""
    if given is not None:
        return _finite_nonneg("price_usd_per_hour", given, 1e6), (provider or "").lower() or None
    if offer is not None:
        return offer.price_usd_per_hour, offer.provider
    if spot_offer is None:
        held = ""
        if provider:  # what that provider does have, so "not in the data" is not read as "not sold"
            gpus = sorted({o.gpu_name for o in prices(provider=provider, limit=200).offers if o.gpu_name})
            held = f" (it lists {', '.join(gpus[:6])})" if gpus else ""
        raise InvalidCombination(f"{provider + ' has' if provider else 'the catalog has'} no {what} in the price "
                                 f"data dated {data_date()}{held}; say its hourly price to cost it there")
    return None, spot_offer.provider


def _cost_offers(gpu: str, n: int, any_count: bool, provider: str | None, region: str | None
                 ) -> tuple[int, PriceResult, PriceResult, dict[str, Any] | None]:
    """(GPU count, on-demand and spot offers, the larger instance taken): n GPUs, else, when no count was
    given, the smallest instance that has the GPU ("an A100 80GB at AWS" is sold only as 8, in a p4de)."""
    res_od = prices(gpu=gpu, gpus=n, provider=provider, region=region, pricing="on-demand", limit=1)
    res_spot = prices(gpu=gpu, gpus=n, provider=provider, region=region, pricing="spot", limit=1)
    if not any_count or res_od.offers or res_spot.offers:
        return n, res_od, res_spot, None
    larger = prices(gpu=gpu, min_gpus=2, provider=provider, region=region, pricing="on-demand", limit=1,
                    sort="instance-hour")
    if not larger.offers:
        return n, res_od, res_spot, None
    o = larger.offers[0]
    res_spot = prices(gpu=gpu, gpus=o.gpu_count, provider=provider, region=region, pricing="spot", limit=1)
    return o.gpu_count, larger, res_spot, {"gpus": o.gpu_count, "instance": o.instance_type, "provider": o.provider}


def _budget_hours(budget_usd: Any, price: float | None, provider: str | None) -> float:
    """The hours a budget buys at the on-demand price, in the provider's billing increments."""
    b = _finite_nonneg("budget_usd", budget_usd, 1e9)
    if not price or b is None:
        raise InvalidCombination("the hours a budget buys need an on-demand price: give --price-usd-per-hour")
    f = load_providers().get(provider or "", {})
    return hours_for_budget(b, price, BillingPolicy(provider=provider or "unknown",
                                                    increment_s=f.get("billing_increment_s"),
                                                    minimum_s=f.get("minimum_charge_s") or 0))


def _serving_inputs(model: str | None, config: str | None, params_b: float | None, gpu: str, n: int,
                    engine: str | None, precision: str | None, batch: int | None, prompt_tokens: int | None,
                    output_tokens: int | None, offer: Any, price: float | None, spot_offer: Any,
                    traffic: dict[str, Any] | None = None) -> dict[str, Any]:
    """Serving economics for cost(): $/M tokens at batch 1 and at `batch` (or the best batch in memory)."""
    arch = resolve_model_arch(model, config, params_b)
    spec = resolve_gpu(gpu).gpu
    eng = resolve_engine(engine)
    shape = {k: v for k, v in (("precision", precision), ("prompt_tokens", prompt_tokens),
                               ("output_tokens", output_tokens)) if v is not None}
    mem = spec.memory_gb or (offer.gpu_memory_gb if offer is not None else None)
    sp = speed(model=model, config=config, params_b=params_b, gpu=gpu, gpus=n, engine=engine, precision=precision,
               batch=batch, prompt_tokens=prompt_tokens, output_tokens=output_tokens)  # validates; memory check
    load = _traffic(traffic)
    sreq = validated(ServingRequest, gpus=n, concurrent_users=batch, gpu_memory_gb=mem, traffic=load, **shape)
    econ = serving_economics(arch, spec, eng, sreq, price,
                             spot_offer.spot_price_usd_per_hour if spot_offer is not None else None)
    if econ.at_load.batch != sp.inputs["batch"]:
        sp = speed(model=model, config=config, params_b=params_b, gpu=gpu, gpus=n, engine=engine,
                   precision=precision, batch=econ.at_load.batch, prompt_tokens=prompt_tokens,
                   output_tokens=output_tokens)
    return {"serving": econ, "estimator_assumptions": sp.assumptions,
            "serving_info": {"engine": sp.engine, "bound": sp.bound, "memory": sp.memory}}


def _traffic(traffic: dict[str, Any] | None) -> Any:
    """A validated tools.load.TrafficRequest from the given fields (None when none is given)."""
    from tools.load import TrafficRequest

    given = {k: v for k, v in (traffic or {}).items() if v is not None}
    return validated(TrafficRequest, **given) if given else None


def job_totals(**job: Any) -> Any:
    """A batch job's totals (tools.jobs.job_totals): N units at a rate per GPU -> GPU-hours, the GPUs the
    deadline needs, the wall time and the cost. Fields: units, unit, seconds_per_unit | units_per_s,
    deadline_hours, gpus, gpus_per_instance, overhead_hours, price_usd_per_gpu_hour.

    Raises:
        AdvisorError subclasses naming the value and what is accepted.
    """
    from tools.jobs import JobRequest, job_totals as _job_totals

    return _job_totals(validated(JobRequest, **{k: v for k, v in job.items() if v is not None}))


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
