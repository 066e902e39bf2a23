"""Prices and costs: the offer catalog, billing, spot, storage and egress (knowledge.price_db, tools.cost)."""

from __future__ import annotations

import math
from typing import Any

from knowledge.catalog import (load_gpus, load_providers,
                               resolve_engine, resolve_gpu)
from tools.cost import (BillingPolicy, CostInputs, ProviderRates, ServingRequest, SpotAssumptions, cost_report,
                        serving_economics)
from assistant.service.images import image_cost
from knowledge.catalog import is_image_pipeline
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import PriceQuery, PriceResult, validated
from assistant.service.models import resolve_model_arch, speed, train_time


_DBS: dict[str, Any] = {}


def price_db() -> Any:
    """The process's PriceDb for the current data directory (built on first use)."""
    from assistant.runtime.settings import data_dir
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
    absent: list[str] = []
    if q.provider is not None:
        kept, absent = providers_in_data(split_list(q.provider) or [q.provider])
        q = q.model_copy(update={"provider": ",".join(kept)})
    if q.vendor is not None:
        vendors = sorted({g.vendor.lower() for g in load_gpus() if g.vendor})
        if q.vendor.strip().lower() not in vendors:
            raise InvalidInput("vendor", q.vendor, ", ".join(vendors))
    res = db.query(q, ids)
    res.gpu_note, res.gpu_forms = note, forms
    if q.gpu is not None and not res.total_matches:
        absent.append(f"No {q.gpu} offer" + (f" from {q.provider}" if q.provider else "")
                      + (f" in {q.region}" if q.region else "") + f" is in the price data dated {_data_date()}")
    res.not_in_data = absent
    return res


def _data_date() -> str:
    """The newest date the price data states (the date its answers cite)."""
    dates = [p["as_of"] for p in price_db().info()["providers"] if p.get("as_of")]
    return max(dates) if dates else "unknown"


def providers_in_data(providers: list[str]) -> tuple[list[str], list[str]]:
    """(the named providers the price data holds, a sentence for each it does not). A provider the project
    knows (knowledge/providers.csv) that the data does not hold is said, never dropped silently; a name no
    one knows (a typo), or none held at all, is refused naming the ones held.

    Raises:
        InvalidInput: not one of the names is in the price data.
    """
    known = sorted(p["provider"] for p in price_db().info()["providers"])
    kept = [p.strip().lower() for p in providers if p.strip().lower() in known]
    listed = set(load_providers())  # providers the project knows of, held in the price data or not
    unknown = [p for p in providers if p.strip().lower() not in known and p.strip().lower() not in listed]
    if not kept or unknown:
        raise InvalidInput("provider", ", ".join(unknown or providers), ", ".join(known))
    absent = [f"{p.strip()} is not in the price data dated {_data_date()}" for p in providers
              if p.strip().lower() not in known]
    return kept, absent


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
         tokens_per_day: float | None = None, traffic: dict[str, Any] | None = None, **spot: Any) -> dict[str, Any]:
    """What a job (or an always-on endpoint) costs on the cheapest matching offer.

    Resolves the offers, the provider's rates and the runtime (given, or from the training-time
    estimator), then calls tools.cost.cost_report (billing policy, spot, storage, egress, totals)
    and, for serving, tools.cost.serving_economics ($ per million tokens at batch 1 and at the load).
    `traffic` (serving): tools.load.TrafficRequest fields; the batch is the concurrency they make (Little's
    law), with replicas and the $ per million tokens served, idle time included.

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
                                  output_tokens, offer, price, spot_offer, traffic)
        if tokens_per_day is not None:
            inputs["tokens_per_day"] = _finite_nonneg("tokens_per_day", tokens_per_day, 1e15) or None
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
    head = {"as_of": res_od.as_of or res_spot.as_of, "stale": res_od.stale, "data_note": res_od.data_note,
            "not_in_data": res_od.not_in_data}
    if not serve and hrs is None:
        head_keys = ("gpu", "gpus", "offer", "spot_offer")
        rep = {k: rep[k] for k in head_keys} | {"training": training} | {k: v for k, v in rep.items() if k not in head_keys}
    return head | rep


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
