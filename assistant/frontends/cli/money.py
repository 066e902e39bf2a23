"""`gpu-advisor prices | catalog | cost | recommend`: offers, costs and recommendations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from assistant.frontends.cli.args import Parser, add_listing, add_model_args, add_request_options, integer, positive_float
from assistant.frontends.cli.images import add_image_args, format_image_cost, image_kwargs
from tools.load import TRAFFIC_FIELDS
from tools.recommend import RecommendRequest
from tools.schemas import PriceQuery


def add_prices(sub: Any) -> None:
    p = sub.add_parser("prices", help="cloud GPU offers from the price catalog, cheapest first")
    add_request_options(p, PriceQuery, skip=("pricing",), exclusive=[("gpus", "min_gpus")],
                        flags={"max_price_usd_per_gpu_hour": ["--max-price"]},
                        help_extra={"gpu": "or a comma list: H100 (SXM, PCIe and NVL), 'H100 SXM', 'L4,A10G'",
                                    "sort": "default gpu-hour"})
    s = p.add_mutually_exclusive_group()
    s.add_argument("--spot", action="store_const", const="spot", dest="pricing", help="spot/interruptible prices only")
    s.add_argument("--on-demand", action="store_const", const="on-demand", dest="pricing", help="on-demand prices only")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_prices)


def _where(o: Any) -> str:
    """Region, plus the zone when one zone's price is shown (e.g. an AWS Local Zone's spot price)."""
    parts = ([f"zone {o.zone}"] if o.zone else []) + ([f"spot in {o.spot_zone}"] if o.spot_zone else [])
    return (o.region or "-") + (f" ({'; '.join(parts)})" if parts else "")


def _money(v: float | None) -> str:
    return "-" if v is None else f"{v:,.2f}" if v >= 1 else f"{v:,.3f}"


def _run_prices(args: argparse.Namespace) -> int:
    from assistant.service import api
    from assistant.engine.formatting import table

    res = api.prices(**{f: getattr(args, f) for f in PriceQuery.model_fields})
    notes = res.notices + [n for n in (res.gpu_note, res.region_note) if n] + [n + "." for n in res.not_in_data]
    if args.json:
        print(json.dumps({"as_of": res.as_of, "stale": res.stale, "data_note": res.data_note,
                          "total_matches": res.total_matches, "offers": [o.to_contract() for o in res.offers],
                          "notices": notes, "gpu_forms": res.gpu_forms, "regions_matched": res.regions_matched,
                          "not_in_data": res.not_in_data}, indent=2))
        return 0
    for n in notes:
        print(n)
    if not res.offers:
        print("No offer matches these filters.")
    else:
        print(table(("provider", "instance", "GPU", "n", "GB/GPU", "$/GPU-h", "$/inst-h", "spot $/GPU-h", "region"),
                    [(o.provider, o.instance_type or "(GPU only)", o.gpu_name, str(o.gpu_count),
                      "-" if o.gpu_memory_gb is None else f"{o.gpu_memory_gb:.0f}", _money(o.price_usd_per_gpu_hour),
                      _money(o.price_usd_per_hour), _money(o.spot_price_usd_per_gpu_hour), _where(o))
                     for o in res.offers], align="lllrrrrrl"))
        print(f"{len(res.offers)} of {res.total_matches} matching offers.")
    print(res.data_note)
    return 0


def add_catalog(sub: Any) -> None:
    p = sub.add_parser("catalog", help="the price catalog: info, refresh")
    cs = p.add_subparsers(dest="catalog_command", metavar="ACTION", parser_class=Parser)
    cs.required = True
    r = cs.add_parser("refresh", help="load a SkyPilot catalog tree, vms.csv files or URLs; with no --from, "
                                      "SkyPilot's published catalog")
    r.add_argument("--from", dest="sources", action="append", metavar="PATH_OR_URL",
                   help="a vms.csv, a folder (a whole catalogs/v8 tree: every vms.csv, provider = folder name), "
                        "or a URL; repeatable. Default: SkyPilot's published catalog")
    r.add_argument("--provider", help="provider name for the rows (default: the file's folder name)")
    r.add_argument("--strict", action="store_true", help="abort (change nothing) if any file is bad")
    r.add_argument("--as-of", help="the date of the data, YYYY-MM-DD (default: read from the source, else unknown)")
    r.add_argument("--catalog-url", help="base URL of a published catalog (default: SkyPilot's catalogs/v8)")
    r.add_argument("--timeout", type=positive_float, default=30.0, help="seconds per download (default 30)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=_run_refresh)
    add_listing(cs, "info", "rows per provider, date per source, unmapped GPU names", _run_catalog_info)


def _run_refresh(args: argparse.Namespace) -> int:
    from assistant.service import api

    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    rep = api.catalog_refresh(args.sources, args.provider, progress, strict=args.strict, as_of=args.as_of,
                              catalog_url=args.catalog_url, timeout_s=args.timeout)
    d = {"files": rep.files, "per_provider": rep.per_provider, "rows_dropped": rep.dropped, "unmapped": rep.unmapped,
         "skipped": rep.skipped, "bad_files": rep.bad, "new_providers": rep.new_providers, "dates": rep.dates}
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    for prov, c in rep.per_provider.items():
        dt = rep.dates.get(prov, {})
        when = f"data of {dt['as_of']} ({dt['date_from']})" if dt.get("as_of") else "data date unknown"
        print(f"{prov}: {c['rows']} offers ({c['added']} added, {c['changed']} changed, {c['removed']} removed); {when}")
    if rep.new_providers:
        print("New providers (loaded under their folder name): " + ", ".join(rep.new_providers))
    for b in rep.bad:
        line = f" line {b['line']}" if b["line"] else ""
        print(f"NOT LOADED {b['file']}{line}: {b['error']} ({b['provider']} keeps its previous offers)")
    if rep.skipped:
        print(f"Skipped {len(rep.skipped)} file(s): " + "; ".join(f"{s['file']} ({s['why']})" for s in rep.skipped[:20])
              + (" ..." if len(rep.skipped) > 20 else ""))
    if rep.dropped:
        print(f"{rep.dropped} invalid rows dropped (see `gpu-advisor catalog info`).")
    if rep.unmapped:
        print("GPU names not in the catalog (kept, unmapped): " + ", ".join(f"{k} ({v})" for k, v in rep.unmapped.items()))
    return 0


def _run_catalog_info(args: argparse.Namespace) -> int:
    from assistant.service import api
    from assistant.engine.formatting import table

    info = api.catalog_info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"Price catalog: {info['path']}")
    print(table(("provider", "offers", "GPU kinds", "as of"),
                [(p["provider"], str(p["offers"]), str(p["gpu_kinds"]), p["as_of"] or "unknown") for p in info["providers"]],
                align="lrrl"))
    print("Sources:")
    for s in info["sources"]:
        when = f"{s['as_of']} ({s.get('date_from', 'unknown')})" if s["as_of"] else "date unknown (possibly stale)"
        print(f"  {s['provider']}: {when} - {s['source']}")
    if info.get("regions_without_country"):
        print("Regions with no known country: " + "; ".join(f"{p}: {', '.join(r[:8])}"
                                                              for p, r in info["regions_without_country"].items()))
    last = info.get("last_refresh")
    if last and (last.get("bad") or last.get("skipped")):
        print(f"Last refresh ({last['on']}): {len(last.get('bad', []))} bad file(s), "
              f"{len(last.get('skipped', []))} skipped file(s).")
    if info["unmapped_gpu_names"]:
        print("Unmapped GPU names: " + ", ".join(f"{k} ({v})" for k, v in info["unmapped_gpu_names"].items()))
    if info["dropped_reasons"]:
        print("Dropped rows: " + "; ".join(f"{v} x {k}" for k, v in info["dropped_reasons"].items()))
    return 0


def add_cost(sub: Any) -> None:
    p = sub.add_parser("cost", help="what a job or an endpoint costs: billing granularity, spot, storage, egress",
                       description="Cost on the cheapest matching offer (or a price you give). Give --hours, or a "
                                   "model with --method and the data size (the training-time estimate), or --serve.")
    p.add_argument("--gpu", required=True, help="GPU name or family")
    p.add_argument("--gpus", type=integer, help="GPUs per instance (default 1)")
    p.add_argument("--provider", help="only this provider's offers (and its billing/storage/egress rates)")
    p.add_argument("--region", help="part of a region name")
    p.add_argument("--price-usd-per-hour", type=positive_float, help="use this instance price instead of the catalog")
    p.add_argument("--hours", type=positive_float, help="runtime in hours (e.g. 0.333 for a 20-minute run)")
    p.add_argument("--minutes", type=positive_float, help="runtime in minutes")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model")
    g.add_argument("--config")
    g.add_argument("--params-b", type=positive_float)
    p.add_argument("--method", help="training: full | lora | qlora")
    p.add_argument("--dataset-tokens", type=positive_float)
    p.add_argument("--examples", type=integer)
    p.add_argument("--tokens-per-example", type=integer)
    p.add_argument("--epochs", type=positive_float)
    p.add_argument("--serve", action="store_true", help="cost of an always-on endpoint: $/million tokens and per month")
    p.add_argument("--engine")
    p.add_argument("--precision")
    p.add_argument("--batch", type=integer, help="serving: concurrent sequences")
    p.add_argument("--prompt-tokens", type=integer)
    p.add_argument("--output-tokens", type=integer)
    p.add_argument("--tokens-per-day", type=positive_float, help="serving: tokens the endpoint must write a day; "
                   "says the busy hours, the copies needed and the month's cost at that volume")
    p.add_argument("--requests", type=integer, help="an offline generation job: prompts to run, each --prompt-tokens "
                   "in and --output-tokens out (hours on one copy, the cost)")
    p.add_argument("--deadline-hours", type=positive_float, help="generation job: hours it must finish in "
                   "(the copies of the model it needs)")
    p.add_argument("--users-online", type=integer, help="serving: people using it at once (with --think-time-s)")
    p.add_argument("--requests-per-minute", type=positive_float, help="serving: requests a minute (average)")
    p.add_argument("--requests-per-hour", type=positive_float, help="serving: requests an hour (average)")
    p.add_argument("--requests-per-day", type=positive_float, help="serving: requests a day (average)")
    p.add_argument("--think-time-s", type=positive_float, help="serving: seconds between a reply and the user's next "
                   "request (default 60 with --users-online)")
    p.add_argument("--peak-factor", type=positive_float, help="serving: peak rate / average rate (default 1)")
    p.add_argument("--interruptions-per-hour", type=positive_float, help="spot: expected interruptions per hour (default 0.05)")
    p.add_argument("--checkpoint-every-min", type=positive_float, help="spot: minutes between checkpoints (default 30)")
    p.add_argument("--restart-min", type=positive_float, help="spot: minutes to resume after an interruption (default 10)")
    p.add_argument("--storage-gb", type=positive_float, help="persistent storage to keep (GB)")
    p.add_argument("--months", type=positive_float, help="months of storage (default 1)")
    p.add_argument("--egress-gb", type=positive_float, help="data downloaded out of the cloud (GB)")
    add_image_args(p, jobs=True, endpoint=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_cost)


def _run_cost(args: argparse.Namespace) -> int:
    from assistant.service import api

    hours = args.hours
    if args.minutes is not None:
        hours = (hours or 0) + args.minutes / 60
    d = api.cost(gpu=args.gpu, gpus=args.gpus, provider=args.provider, region=args.region,
                 price_usd_per_hour=args.price_usd_per_hour, hours=hours, model=args.model, config=args.config,
                 params_b=args.params_b, method=args.method, dataset_tokens=args.dataset_tokens, examples=args.examples,
                 tokens_per_example=args.tokens_per_example, epochs=args.epochs, serve=args.serve, engine=args.engine,
                 precision=args.precision, batch=args.batch, prompt_tokens=args.prompt_tokens,
                 output_tokens=args.output_tokens, storage_gb=args.storage_gb, months=args.months,
                 egress_gb=args.egress_gb, tokens_per_day=args.tokens_per_day, requests=args.requests,
                 deadline_hours=args.deadline_hours, traffic={k: getattr(args, k) for k in TRAFFIC_FIELDS},
                 interruptions_per_hour=args.interruptions_per_hour,
                 checkpoint_every_h=None if args.checkpoint_every_min is None else args.checkpoint_every_min / 60,
                 restart_h=None if args.restart_min is None else args.restart_min / 60, **image_kwargs(args))
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    if "speed" in d and ("batch_job" in d or "endpoint" in d):  # an image pipeline
        print(format_image_cost(d))
        return 0
    usd = lambda v: "unknown" if v is None else f"${v:,.2f}"  # noqa: E731
    o = d.get("offer")
    if o:
        print(f"Offer: {o['provider']} {o['instance_type'] or ''} ({o['gpu_count']} x {o['gpu']}, {o['region']}) "
              f"at ${o['price_usd_per_hour']:,.2f}/hour")
    if "serving" in d:
        _print_serving(d["serving"], usd)
    else:
        _print_job(d, usd)
    if "storage_usd" in d:
        print(f"  storage: {usd(d['storage_usd'])}")
    if "egress_usd" in d:
        print(f"  egress: {usd(d['egress_usd'])}")
    if d.get("total_usd") is not None:
        print(f"  total (on-demand + storage + egress): {usd(d['total_usd'])}")
    print("Assumptions:")
    for a in d["assumptions"]:
        print(f"  - {a}")
    print(d["data_note"])
    return 0


def _print_serving(s: dict[str, Any], usd: Any) -> None:
    """An endpoint's economics: tokens/s, $ per million tokens, the month, the traffic's load and volume."""
    print(f"Serving at {s['aggregate_tokens_per_s']:,.0f} tokens/s (batch {s['batch']}, {s['engine']}, estimate):")
    if s.get("usd_per_million_tokens") is not None:
        print(f"  {usd(s['usd_per_million_tokens'])} per million generated tokens; always on: {usd(s['monthly_usd'])} a month")
    if s.get("spot_usd_per_million_tokens") is not None:
        print(f"  on spot: {usd(s['spot_usd_per_million_tokens'])} per million tokens (not advisable for an endpoint)")
    if s.get("load"):
        print(f"  {s['load']['assumption']}")
        if s.get("usd_per_million_tokens_served") is not None:
            print(f"  {usd(s['usd_per_million_tokens_served'])} per million tokens served, always on "
                  f"({s['replicas']} replica{'s' if s['replicas'] > 1 else ''}, busy {s['busy_fraction']:.0%})")
    v = s.get("volume")
    if v:
        print(f"  {v['tokens_per_day']:,.0f} tokens a day: one copy is busy {v['busy_hours_per_day']:.2f} h a day; "
              f"{v['copies_needed']} cop{'y keeps' if v['copies_needed'] == 1 else 'ies keep'} up running all day "
              f"(at batch {s.get('batch')})")
        if v.get("usd_per_month_busy_hours") is not None:
            print(f"  paying only the busy hours: {usd(v['usd_per_month_busy_hours'])} a month; always on: "
                  f"{usd(v['usd_per_month_always_on'])} a month = {usd(v['usd_per_million_own_tokens_always_on'])}"
                  " per million of these tokens")


def _print_job(d: dict[str, Any], usd: Any) -> None:
    """A job's runtime (a training or generation estimate, or as given), its billing and spot."""
    print(f"Runtime {d['runtime_hours']:,.3f} h (estimate)" if "training" in d or "generation_job" in d
          else f"Runtime {d['runtime_hours']:,.3f} h")
    j = d.get("generation_job")
    if j:
        print(f"  {j['requests']:,} prompts ({j['prompt_tokens']:,} in, {j['output_tokens']:,} out), {j['batch']} at a "
              f"time on {j['gpus_per_copy']} GPU(s) per copy: {j['prompt_tokens_per_s_per_copy']:,.0f} prompt "
              f"tokens/s read, {j['output_tokens_per_s_per_copy']:,.0f} tokens/s written; prefill "
              f"{j['prefill_hours_one_copy']:,.2f} h of {j['hours_one_copy']:,.2f} h")
        if j.get("copies_for_deadline"):
            print(f"  within {j['deadline_hours']:g} h: {j['copies_for_deadline']} copies, "
                  f"{j['hours_at_that_count']:,.2f} h each")
    if "billing" in d:
        b = d["billing"]
        print(f"  on-demand: {usd(d.get('on_demand_cost_usd'))} "
              f"(billed per second {usd(b['per_second_usd'])}, per minute {usd(b['per_minute_usd'])}, "
              f"per hour {usd(b['per_hour_usd'])})")
    sp = d.get("spot")
    if sp and sp.get("cost_usd") is not None:
        print(f"  spot ({sp['provider']}): expected {usd(sp['cost_usd'])} over {sp['wall_hours']:,.2f} h "
              f"with {sp['expected_interruptions']:.2f} expected interruptions")
    elif sp and sp.get("note"):
        print(f"  spot: {sp['note']}")


def add_recommend(sub: Any) -> None:
    p = sub.add_parser("recommend", help="ranked, explained GPU options for serving or fine-tuning a model")
    add_model_args(p)
    add_request_options(p, RecommendRequest, repeat=("precisions",), flags={
        "context_tokens": ["--context"], "concurrent_users": ["--users"], "precisions": ["--precision"],
        "min_tokens_per_s_per_user": ["--min-tokens-per-s"], "budget_usd": ["--budget"], "spot_allowed": ["--spot"],
        "needs_nvlink": ["--nvlink"], "top_n": ["--top"]}, help_extra={
        "workload": "--method alone means finetune", "context_tokens": "serve", "concurrent_users": "serve",
        "min_tokens_per_s_per_user": "serve: tokens/s each user must get", "precisions": "serve; repeatable",
        "engine": "serve: vllm, sglang, tensorrt-llm, llama.cpp ...", "method": "finetune",
        "dataset_tokens": "finetune: training tokens per epoch", "epochs": "finetune", "seq_len": "finetune",
        "batch": "finetune: micro-batch per GPU", "deadline_hours": "finetune", "budget_usd": "USD",
        "spot_allowed": "spot capacity allowed", "needs_nvlink": "require NVLink for multi-GPU",
        "max_gpus": "GPUs per instance at most", "top_n": "options to show"})
    p.add_argument("--examples", type=integer, help="finetune: number of examples (with --tokens-per-example)")
    p.add_argument("--tokens-per-example", type=integer, help="finetune: average tokens per example")
    p.add_argument("--provider", action="append", dest="providers", help="only these providers (repeatable)")
    p.add_argument("--region", action="append", dest="regions", help="only regions containing this text (repeatable)")
    add_image_args(p, jobs=True, endpoint=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_recommend)


def _run_recommend(args: argparse.Namespace) -> int:
    from assistant.service import api

    goal = {f: getattr(args, f) for f in (*RecommendRequest.model_fields, "examples", "tokens_per_example")}
    if goal["workload"] is None and args.method:
        goal["workload"] = "finetune"
    rec = api.recommend(model=args.model, config=args.config, params_b=args.params_b, providers=args.providers,
                        regions=args.regions, **goal, **image_kwargs(args))
    if args.json:
        print(json.dumps(rec.model_dump(), indent=2, default=str))
        return 0
    if rec.status == "needs_input":
        print("Missing: " + ", ".join(rec.missing))
    for line in rec.not_in_data:
        print(f"Not in the data: {line}.")
    for o in rec.options:
        off = o["offer"]
        head = (f"{o['rank']}. {o['gpu_count']} x {o['gpu']} - {off['provider']} {off['instance_type'] or ''}"
                + (f" ({off['region']})" if off['region'] else ""))
        print(head)
        for r in o["reasons"]:
            print(f"     - {r}")
    if rec.status == "nothing_fits":
        print("Nothing fits. What would:")
        for s in rec.suggestions:
            print(f"  - {s}")
    if rec.ruled_out:
        print("Ruled out:")
        for r in rec.ruled_out[:15]:
            print(f"  - {r['reason']}")
    print("Assumptions:")
    for a in rec.assumptions:
        print(f"  - {a}")
    return 0
