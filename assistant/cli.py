"""`gpu-advisor` command line: a thin front end over assistant.api.

Exit codes: 0 success, 2 bad input (message names the value and what is accepted), 1 unexpected.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from assistant.image_cli import add_image_args, format_image_cost, format_image_speed, image_kwargs
from tools.errors import AdvisorError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own messages, exit 2, no traceback
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def _positive_float(text: str) -> float:
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _int(text: str) -> int:
    try:
        v = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v != v or v in (float("inf"), float("-inf")) or v != int(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    return int(v)


def _add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--model", help="catalog name, e.g. llama-3.1-8b or meta-llama/Llama-3.1-8B")
    g.add_argument("--config", help="path to a Hugging Face config.json")
    g.add_argument("--params-b", type=_positive_float, help="parameter count in billions (rough estimate)")


def _add_vram(sub: Any) -> None:
    p = sub.add_parser("vram", help="per-GPU memory for inference, full fine-tuning, LoRA or QLoRA",
                       description="Estimate per-GPU memory (decimal GB) split into components.")
    _add_model_args(p)
    p.add_argument("--method", default="inference", help="inference | full | lora | qlora (default inference)")
    p.add_argument("--precision", "--weight-precision", dest="weight_precision",
                   help="weights: fp32 bf16 fp16 fp8 int8 int4 nf4 fp4, or GGUF q4_0 q4_k_m q5_k_m q6_k q8_0 f16")
    p.add_argument("--double-quant", action="store_true", default=None, help="nf4/fp4 double quantisation")
    p.add_argument("--training-precision", help="mixed (fp32 master + optimizer) | bf16 (all bf16); default mixed")
    p.add_argument("--optimizer", help="adamw | adamw8bit | paged-adamw8bit | sgd | adafactor (default adamw)")
    p.add_argument("--batch", type=_int, help="micro-batch (training) or concurrent sequences (inference); default 1")
    p.add_argument("--seq-len", type=_int, help="tokens per sequence (inference: prompt + output); default 2048")
    p.add_argument("--grad-checkpointing", action=argparse.BooleanOptionalAction, default=None,
                   help="activation checkpointing (default: on for qlora, off otherwise)")
    p.add_argument("--attention", help="sdpa (default, flash/memory-efficient) | eager")
    p.add_argument("--lora-rank", type=_int, help="LoRA rank (default 8)")
    p.add_argument("--lora-targets", help="comma list of q,k,v,o,gate,up,down,lm_head, attn, mlp or all-linear (default q,v)")
    p.add_argument("--lora-dropout", type=_positive_float, help="LoRA dropout probability (default 0.05)")
    p.add_argument("--chunked-loss", action="store_true", default=None,
                   help="chunked/fused cross-entropy (torchtune, Unsloth, Liger): no full fp32 logits")
    p.add_argument("--gpus", type=_int, help="number of GPUs (default 1)")
    p.add_argument("--sharding", help="training: none | zero1 | zero2 | zero3 | fsdp (default none)")
    p.add_argument("--tensor-parallel", type=_int, help="inference: tensor-parallel degree (default --gpus)")
    p.add_argument("--kv-precision", help="KV cache: fp16 | bf16 | fp8 | int8 (default bf16)")
    p.add_argument("--prefill-chunk", type=_int, dest="prefill_chunk_tokens",
                   help="inference: tokens per prefill step (default: the whole prompt; vLLM uses 8192)")
    p.add_argument("--offload-text-encoders", action="store_true",
                   help="image pipelines: encode the prompt, then move the text encoders to CPU")
    p.add_argument("--gpu", help="judge the fit against this GPU, e.g. 'RTX 4090', H100, A100-80GB")
    add_image_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_vram)


def _run_vram(args: argparse.Namespace) -> int:
    from assistant import api

    tp = args.tensor_parallel
    if tp is None and args.method == "inference" and args.gpus:
        tp = args.gpus
    est = api.vram(
        model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu,
        method=args.method, weight_precision=args.weight_precision, double_quant=args.double_quant,
        training_precision=args.training_precision, optimizer=args.optimizer, batch=args.batch,
        seq_len=args.seq_len, grad_checkpointing=args.grad_checkpointing, attention=args.attention,
        lora_rank=args.lora_rank, lora_targets=args.lora_targets, gpus=args.gpus,
        sharding=args.sharding, tensor_parallel=tp, kv_precision=args.kv_precision,
        lora_dropout=args.lora_dropout, chunked_loss=args.chunked_loss,
        prefill_chunk_tokens=args.prefill_chunk_tokens, offload_text_encoders=args.offload_text_encoders,
        **image_kwargs(args),
    )
    if args.json:
        print(json.dumps(est.to_json_dict(), indent=2))
        return 0
    print(_format_vram(est))
    return 0


def _format_vram(est: Any) -> str:
    from assistant.engine.formatting import table

    m = est.model
    title = f"{m['name']} ({m['params_b']:.2f}B params{', MoE' if m['moe'] else ''}) - {est.inputs['method']}"
    rows = [(c.name, f"{c.gb:,.2f}", c.formula) for c in est.components]
    rows.append(("total", f"{est.total_gb:,.2f}", "per GPU"))
    lines = [title, table(("component", "GB", "formula"), rows, align="lrl")]
    if est.fit is not None:
        f = est.fit
        verdict = "FITS" if f.fits else "DOES NOT FIT"
        rel = "left" if f.fits else "short"
        lines.append(f"{verdict} on {f.gpu}: {est.total_gb:,.2f} GB of {f.gpu_memory_gb:,.2f} GB "
                     f"({abs(f.headroom_gb):,.2f} GB / {abs(f.headroom_pct):.1f}% {rel})")
    lines.append("Assumptions:")
    lines += [f"  - {a}" for a in est.assumptions]
    return "\n".join(lines)


def _add_speed(sub: Any) -> None:
    p = sub.add_parser("speed", help="decode tokens/s, time to first token and latency on a GPU (estimates)",
                       description="Estimate inference speed from the memory/compute roofline, calibrated per engine.")
    _add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name, e.g. H100, 'RTX 4090', A100-80GB")
    p.add_argument("--gpus", type=_int, help="GPUs the model is split over (tensor parallel; llama.cpp splits layers)")
    p.add_argument("--precision", help="bf16 fp16 fp8 int8 int4, a kernel where it matters (gptq, gptq-marlin, awq, "
                                       "bnb-nf4, bnb-int8 ...), or GGUF q4_0 q4_k_m q5_k_m q6_k q8_0 f16 (default bf16)")
    p.add_argument("--kernel", help="quantised kernel family (knowledge/quant_kernels.csv), e.g. marlin, gptq-exllama, "
                                    "bnb-4bit; default: the engine's kernel for the precision")
    p.add_argument("--kv-precision", help="KV cache: fp16 | bf16 | fp8 | int8 (default bf16)")
    p.add_argument("--engine", help="vllm (default, V1 engine), vllm-v0, sglang, tensorrt-llm, llama.cpp (ollama), "
                                    "llama.cpp-legacy, torch-compile, pytorch-eager (transformers), "
                                    "pytorch-eager-legacy, exllamav2, mlc")
    p.add_argument("--batch", type=_int, help="concurrent sequences (default 1)")
    p.add_argument("--prompt-tokens", type=_int, help="prompt tokens per sequence (default 512)")
    p.add_argument("--output-tokens", type=_int, help="generated tokens per sequence (default 256)")
    add_image_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_speed)


def _run_speed(args: argparse.Namespace) -> int:
    from assistant import api

    est = api.speed(model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu, gpus=args.gpus,
                    precision=args.precision, kv_precision=args.kv_precision, engine=args.engine,
                    batch=args.batch, prompt_tokens=args.prompt_tokens, output_tokens=args.output_tokens,
                    **({"kernel": args.kernel} if args.kernel else {}), **image_kwargs(args))
    d = est.model_dump()
    d["estimate"] = True
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    if "seconds_per_image" in d:  # an image pipeline
        print(format_image_speed(est))
        return 0
    mem = est.memory or {}
    lines = [f"{est.inputs['model']} on {est.gpu['name']}"
             + (f" x{est.inputs['gpus']}" if est.inputs["gpus"] > 1 else "") + f" with {est.engine} "
             f"({est.inputs['precision']}" + (f" on the {est.kernel} kernel" if est.kernel not in ("", "dense") else "")
             + f", batch {est.inputs['batch']}) - ESTIMATE, {est.bound}-bound",
             f"  decode per sequence   {est.decode_tokens_per_s:,.1f} tokens/s",
             f"  aggregate (batch)     {est.aggregate_tokens_per_s:,.1f} tokens/s",
             f"  time to first token   {est.time_to_first_token_s:,.3f} s",
             f"  request latency       {est.request_latency_s:,.2f} s "
             f"({est.inputs['prompt_tokens']:,} in + {est.inputs['output_tokens']:,} out)"]
    if mem:
        lines.append(f"  memory                {'fits' if mem['fits'] else 'DOES NOT FIT'}; up to {mem['max_batch']:,} "
                     f"concurrent sequences fit at this context"
                     + (f" ({mem['aggregate_tokens_per_s_at_max_batch']:,.0f} tokens/s there)"
                        if mem.get("aggregate_tokens_per_s_at_max_batch") else ""))
    lines.append("Assumptions:")
    lines += [f"  - {a}" for a in est.assumptions]
    print("\n".join(lines))
    return 0


def _add_train_time(sub: Any) -> None:
    p = sub.add_parser("train-time", help="fine-tuning tokens/s, hours and GPU-hours (estimates)")
    _add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name")
    p.add_argument("--gpus", type=_int, help="number of GPUs (default 1)")
    p.add_argument("--method", help="full | lora (default) | qlora")
    p.add_argument("--dataset-tokens", type=_positive_float, help="training tokens per epoch")
    p.add_argument("--examples", type=_int, help="number of examples (with --tokens-per-example)")
    p.add_argument("--tokens-per-example", type=_int, help="average tokens per example")
    p.add_argument("--epochs", type=_positive_float, help="epochs (default 1)")
    p.add_argument("--batch", type=_int, help="micro-batch per GPU (default 4)")
    p.add_argument("--seq-len", type=_int, help="tokens per sequence (default 2048)")
    p.add_argument("--grad-checkpointing", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--sharding", help="multi-GPU: fsdp (default) | ddp")
    p.add_argument("--mfu", type=_positive_float, help="override the utilisation (0-1), e.g. from your own runs")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_train_time)


def _run_train_time(args: argparse.Namespace) -> int:
    from assistant import api

    est = api.train_time(model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu, gpus=args.gpus,
                         method=args.method, dataset_tokens=args.dataset_tokens, examples=args.examples,
                         tokens_per_example=args.tokens_per_example, epochs=args.epochs, batch=args.batch,
                         seq_len=args.seq_len, grad_checkpointing=args.grad_checkpointing, sharding=args.sharding,
                         mfu=args.mfu)
    d = est.model_dump()
    d["estimate"] = True
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    i = est.inputs
    lines = [f"{i['model']} {i['method']} on {i['gpus']} x {est.gpu['name']} - ESTIMATE, {est.bound}-bound",
             f"  throughput   {est.tokens_per_s:,.0f} tokens/s",
             f"  time         {est.hours:,.2f} h for {est.total_tokens:,.0f} tokens",
             f"  GPU-hours    {est.gpu_hours:,.2f}",
             "Assumptions:"]
    lines += [f"  - {a}" for a in est.assumptions]
    print("\n".join(lines))
    return 0


def _add_prices(sub: Any) -> None:
    p = sub.add_parser("prices", help="cloud GPU offers from the price catalog, cheapest first")
    p.add_argument("--gpu", help="a GPU model or family, or a comma list, e.g. H100 (SXM, PCIe and NVL), 'H100 SXM', "
                                "'A100 80GB' (SXM and PCIe), 'L4,A10G'")
    p.add_argument("--min-vram-gb", type=_positive_float, help="per-GPU memory at least this many GB")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--gpus", type=_int, help="exactly N GPUs per instance")
    g.add_argument("--min-gpus", type=_int, help="at least N GPUs per instance")
    p.add_argument("--max-gpus", type=_int, help="at most N GPUs per instance")
    p.add_argument("--min-total-vram-gb", type=_positive_float, help="GPU memory of the whole instance at least, GB")
    p.add_argument("--max-total-vram-gb", type=_positive_float, help="GPU memory of the whole instance at most, GB")
    p.add_argument("--min-vcpus", type=_positive_float, help="host vCPUs at least")
    p.add_argument("--min-ram-gb", type=_positive_float, help="host RAM at least, GB")
    p.add_argument("--vendor", help="GPU vendor: nvidia | amd | intel ...")
    p.add_argument("--max-price", type=_positive_float, dest="max_price_usd_per_gpu_hour",
                   help="at most this many USD per GPU-hour")
    s = p.add_mutually_exclusive_group()
    s.add_argument("--spot", action="store_const", const="spot", dest="pricing", help="spot/interruptible prices only")
    s.add_argument("--on-demand", action="store_const", const="on-demand", dest="pricing", help="on-demand prices only")
    p.add_argument("--provider", help="e.g. aws, gcp, azure, lambda, runpod, vast, nebius, or a comma list 'aws,gcp'")
    p.add_argument("--region", help="europe | us | asia | a country | a city (e.g. frankfurt), or part of a region "
                                   "name (us-east)")
    p.add_argument("--interconnect", help="nvlink: multi-GPU instances with an NVLink-class fabric")
    p.add_argument("--sort", help="gpu-hour (default) | instance-hour | spot")
    p.add_argument("--limit", type=_int, help="rows to show (default 20)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_prices)


def _where(o: Any) -> str:
    """Region, plus the zone when one zone's price is shown (e.g. an AWS Local Zone's spot price)."""
    parts = ([f"zone {o.zone}"] if o.zone else []) + ([f"spot in {o.spot_zone}"] if o.spot_zone else [])
    return (o.region or "-") + (f" ({'; '.join(parts)})" if parts else "")


def _money(v: float | None) -> str:
    return "-" if v is None else f"{v:,.2f}" if v >= 1 else f"{v:,.3f}"


def _run_prices(args: argparse.Namespace) -> int:
    from assistant import api
    from assistant.engine.formatting import table

    res = api.prices(gpu=args.gpu, min_vram_gb=args.min_vram_gb, gpus=args.gpus, min_gpus=args.min_gpus,
                     max_price_usd_per_gpu_hour=args.max_price_usd_per_gpu_hour, pricing=args.pricing,
                     provider=args.provider, region=args.region, interconnect=args.interconnect, sort=args.sort,
                     limit=args.limit, max_gpus=args.max_gpus, min_total_vram_gb=args.min_total_vram_gb,
                     max_total_vram_gb=args.max_total_vram_gb, min_vcpus=args.min_vcpus, min_ram_gb=args.min_ram_gb,
                     vendor=args.vendor)
    notes = res.notices + [n for n in (res.gpu_note, res.region_note) if n]
    if args.json:
        print(json.dumps({"as_of": res.as_of, "stale": res.stale, "data_note": res.data_note,
                          "total_matches": res.total_matches, "offers": [o.to_contract() for o in res.offers],
                          "notices": notes, "gpu_forms": res.gpu_forms, "regions_matched": res.regions_matched},
                         indent=2))
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


def _add_catalog(sub: Any) -> None:
    p = sub.add_parser("catalog", help="the price catalog: info, refresh")
    cs = p.add_subparsers(dest="catalog_command", metavar="ACTION", parser_class=_Parser)
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
    r.add_argument("--timeout", type=_positive_float, default=30.0, help="seconds per download (default 30)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=_run_refresh)
    i = cs.add_parser("info", help="rows per provider, date per source, unmapped GPU names")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=_run_catalog_info)


def _run_refresh(args: argparse.Namespace) -> int:
    from assistant import api

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
    from assistant import api
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


def _add_cost(sub: Any) -> None:
    p = sub.add_parser("cost", help="what a job or an endpoint costs: billing granularity, spot, storage, egress",
                       description="Cost on the cheapest matching offer (or a price you give). Give --hours, or a "
                                   "model with --method and the data size (the training-time estimate), or --serve.")
    p.add_argument("--gpu", required=True, help="GPU name or family")
    p.add_argument("--gpus", type=_int, help="GPUs per instance (default 1)")
    p.add_argument("--provider", help="only this provider's offers (and its billing/storage/egress rates)")
    p.add_argument("--region", help="part of a region name")
    p.add_argument("--price-usd-per-hour", type=_positive_float, help="use this instance price instead of the catalog")
    p.add_argument("--hours", type=_positive_float, help="runtime in hours (e.g. 0.333 for a 20-minute run)")
    p.add_argument("--minutes", type=_positive_float, help="runtime in minutes")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model")
    g.add_argument("--config")
    g.add_argument("--params-b", type=_positive_float)
    p.add_argument("--method", help="training: full | lora | qlora")
    p.add_argument("--dataset-tokens", type=_positive_float)
    p.add_argument("--examples", type=_int)
    p.add_argument("--tokens-per-example", type=_int)
    p.add_argument("--epochs", type=_positive_float)
    p.add_argument("--serve", action="store_true", help="cost of an always-on endpoint: $/million tokens and per month")
    p.add_argument("--engine")
    p.add_argument("--precision")
    p.add_argument("--batch", type=_int, help="serving: concurrent sequences")
    p.add_argument("--prompt-tokens", type=_int)
    p.add_argument("--output-tokens", type=_int)
    p.add_argument("--interruptions-per-hour", type=_positive_float, help="spot: expected interruptions per hour (default 0.05)")
    p.add_argument("--checkpoint-every-min", type=_positive_float, help="spot: minutes between checkpoints (default 30)")
    p.add_argument("--restart-min", type=_positive_float, help="spot: minutes to resume after an interruption (default 10)")
    p.add_argument("--storage-gb", type=_positive_float, help="persistent storage to keep (GB)")
    p.add_argument("--months", type=_positive_float, help="months of storage (default 1)")
    p.add_argument("--egress-gb", type=_positive_float, help="data downloaded out of the cloud (GB)")
    add_image_args(p, jobs=True, endpoint=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_cost)


def _run_cost(args: argparse.Namespace) -> int:
    from assistant import api

    hours = args.hours
    if args.minutes is not None:
        hours = (hours or 0) + args.minutes / 60
    d = api.cost(gpu=args.gpu, gpus=args.gpus, provider=args.provider, region=args.region,
                 price_usd_per_hour=args.price_usd_per_hour, hours=hours, model=args.model, config=args.config,
                 params_b=args.params_b, method=args.method, dataset_tokens=args.dataset_tokens, examples=args.examples,
                 tokens_per_example=args.tokens_per_example, epochs=args.epochs, serve=args.serve, engine=args.engine,
                 precision=args.precision, batch=args.batch, prompt_tokens=args.prompt_tokens,
                 output_tokens=args.output_tokens, storage_gb=args.storage_gb, months=args.months,
                 egress_gb=args.egress_gb, interruptions_per_hour=args.interruptions_per_hour,
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
        s = d["serving"]
        print(f"Serving at {s['aggregate_tokens_per_s']:,.0f} tokens/s (batch {s['batch']}, {s['engine']}, estimate):")
        if s.get("usd_per_million_tokens") is not None:
            print(f"  {usd(s['usd_per_million_tokens'])} per million generated tokens; always on: {usd(s['monthly_usd'])} a month")
        if s.get("spot_usd_per_million_tokens") is not None:
            print(f"  on spot: {usd(s['spot_usd_per_million_tokens'])} per million tokens (not advisable for an endpoint)")
    else:
        print(f"Runtime {d['runtime_hours']:,.3f} h (estimate)" if "training" in d else f"Runtime {d['runtime_hours']:,.3f} h")
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


def _add_guide(sub: Any) -> None:
    p = sub.add_parser("guide", help="search the guides (English or Urdu) for the passages that answer a question")
    p.add_argument("question")
    p.add_argument("--lang", help="en | ur (default: the question's script)")
    p.add_argument("-k", type=_int, default=3, help="passages to return (default 3)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_guide)


def _run_guide(args: argparse.Namespace) -> int:
    from assistant import api

    hits = api.guide(args.question, args.lang, args.k)
    if args.json:
        print(json.dumps([h.__dict__ for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No passage of the guides matches this question.")
    for h in hits:
        print(f"[{h.id}] {h.guide_title} - {h.section}\n{h.text}\n")
    return 0


def _add_recommend(sub: Any) -> None:
    p = sub.add_parser("recommend", help="ranked, explained GPU options for serving or fine-tuning a model")
    _add_model_args(p)
    p.add_argument("--workload", help="serve (default) | finetune")
    p.add_argument("--context", type=_int, dest="context_tokens", help="serve: prompt + output tokens per request (default 4096)")
    p.add_argument("--users", type=_int, dest="concurrent_users", help="serve: concurrent users/sequences (default 1)")
    p.add_argument("--min-tokens-per-s", type=_positive_float, dest="min_tokens_per_s_per_user",
                   help="serve: tokens/s each user must get")
    p.add_argument("--precision", action="append", dest="precisions",
                   help="serve: allowed weight precision, repeatable and tried in order (default bf16)")
    p.add_argument("--engine", help="serve: vllm (default), sglang, tensorrt-llm, llama.cpp ...")
    p.add_argument("--method", help="finetune: full | lora | qlora")
    p.add_argument("--dataset-tokens", type=_positive_float)
    p.add_argument("--examples", type=_int)
    p.add_argument("--tokens-per-example", type=_int)
    p.add_argument("--epochs", type=_positive_float)
    p.add_argument("--seq-len", type=_int)
    p.add_argument("--batch", type=_int, help="finetune: micro-batch per GPU (default 4)")
    p.add_argument("--deadline-hours", type=_positive_float)
    p.add_argument("--budget", type=_positive_float, dest="budget_usd", help="USD")
    p.add_argument("--spot", action="store_true", default=None, dest="spot_allowed", help="spot capacity allowed")
    p.add_argument("--nvlink", action="store_true", default=None, dest="needs_nvlink", help="require NVLink for multi-GPU")
    p.add_argument("--max-gpus", type=_int, help="GPUs per instance at most (default 8)")
    p.add_argument("--provider", action="append", dest="providers", help="only these providers (repeatable)")
    p.add_argument("--region", action="append", dest="regions", help="only regions containing this text (repeatable)")
    p.add_argument("--objective", help="cheapest (default) | fastest | value")
    p.add_argument("--top", type=_int, dest="top_n", help="options to show (default 5)")
    add_image_args(p, jobs=True, endpoint=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_recommend)


def _run_recommend(args: argparse.Namespace) -> int:
    from assistant import api

    keys = ("workload", "context_tokens", "concurrent_users", "min_tokens_per_s_per_user", "precisions", "engine",
            "method", "dataset_tokens", "examples", "tokens_per_example", "epochs", "seq_len", "batch",
            "deadline_hours", "budget_usd", "spot_allowed", "needs_nvlink", "max_gpus", "objective", "top_n")
    goal = {k: getattr(args, k) for k in keys}
    if goal["workload"] is None and args.method:
        goal["workload"] = "finetune"
    rec = api.recommend(model=args.model, config=args.config, params_b=args.params_b, providers=args.providers,
                        regions=args.regions, **goal, **image_kwargs(args))
    if args.json:
        print(json.dumps(rec.model_dump(), indent=2, default=str))
        return 0
    if rec.status == "needs_input":
        print("Missing: " + ", ".join(rec.missing))
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


def _add_ask(sub: Any) -> None:
    p = sub.add_parser("ask", help="ask the assistant a question (English or Urdu)")
    p.add_argument("question", nargs="+", help="the question")
    p.add_argument("--thread", help="thread id: reuse it to ask follow-ups")
    p.add_argument("--backend", help="router (default) or openai:MODEL, anthropic:MODEL, ollama:MODEL "
                                     "(default $GPU_ADVISOR_BACKEND)")
    p.add_argument("--json", action="store_true", help="print the Answer object")
    p.set_defaults(func=_run_ask)
    c = sub.add_parser("chat", help="interactive chat in the terminal (a thread per session)")
    c.add_argument("--thread", help="continue this thread")
    c.add_argument("--backend", help="router (default) or an LLM backend id")
    c.set_defaults(func=_run_chat)


def _run_ask(args: argparse.Namespace) -> int:
    from assistant import api

    q = " ".join(args.question)
    ans = api.advisor(args.backend).ask(q, thread_id=args.thread)
    if args.json:
        print(json.dumps(ans.model_dump(), indent=2, ensure_ascii=False, default=str))
    else:
        print(ans.answer)
        print(f"\n(thread {ans.thread_id})")
    return 0


def _run_chat(args: argparse.Namespace) -> int:
    import uuid

    from rich.console import Console
    from rich.markdown import Markdown

    from assistant import api

    console = Console()
    tid = args.thread or uuid.uuid4().hex
    adv = api.advisor(args.backend)
    console.print(f"[bold]GPU Advisor[/bold] ({adv.backend}) — thread {tid}. Ask in English or Urdu; Ctrl-D to quit.")
    while True:
        try:
            q = console.input("[bold cyan]you>[/bold cyan] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return 0
        if not q.strip():
            continue
        for ev in adv.stream(q, thread_id=tid):
            if ev["type"] == "tool_start":
                console.print(f"[dim]  → {ev['name']}({', '.join(f'{k}={v}' for k, v in ev['args'].items())})[/dim]")
            elif ev["type"] == "answer":
                console.print(Markdown(ev["answer"].answer))


def _add_lists(sub: Any) -> None:
    p = sub.add_parser("models", help="list the models the advisor knows")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_models)
    p = sub.add_parser("gpus", help="list the GPUs the advisor knows")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_gpus)


def _run_models(args: argparse.Namespace) -> int:
    from assistant import api
    from assistant.engine.formatting import table

    rows = api.list_models()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(table(("id", "name", "params (B)", "kind"),
                    [(r["id"], r["name"], f"{r['params_b']:.2f}", r["kind"]) for r in rows], align="llrl"))
    return 0


def _run_gpus(args: argparse.Namespace) -> int:
    from assistant import api
    from assistant.engine.formatting import table

    rows = api.list_gpus()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        fmt = lambda v: "unknown" if v is None else f"{v:g}"
        print(table(("id", "name", "memory (GiB)", "bandwidth (GB/s)", "aliases"),
                    [(r["id"], r["name"], fmt(r["memory_gib"]), fmt(r["mem_bandwidth_gb_per_s"]),
                      ", ".join(r["aliases"][:3])) for r in rows], align="llrrl"))
    return 0


def _add_slack(sub: Any) -> None:
    p = sub.add_parser("slack", help="run the team Slack bot (Socket Mode if SLACK_APP_TOKEN is set, else HTTP)",
                       description="Serve the Slack bot; see docs/slack.md for creating the app and its env vars.")
    p.add_argument("--port", type=_int, help="HTTP mode: port for /slack/events (default $PORT, else 3000)")
    p.add_argument("--host", default="127.0.0.1",
                   help="HTTP mode: interface to listen on (default 127.0.0.1, behind a TLS proxy; 0.0.0.0 for all)")
    p.set_defaults(func=_run_slack)


def _run_slack(args: argparse.Namespace) -> int:
    from assistant import slack

    try:
        slack.run(port=args.port, host=args.host)
    except slack.SlackConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu-advisor",
                     description="Which cloud GPU to rent for LLM work: will it fit, how fast, what it costs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _add_vram(sub)
    _add_speed(sub)
    _add_train_time(sub)
    _add_prices(sub)
    _add_catalog(sub)
    _add_cost(sub)
    _add_guide(sub)
    _add_recommend(sub)
    _add_ask(sub)
    _add_lists(sub)
    _add_slack(sub)
    from assistant.cli_threads import add_thread_parser

    add_thread_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AdvisorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # never a traceback for users; GPU_ADVISOR_DEBUG=1 shows it
        if os.environ.get("GPU_ADVISOR_DEBUG"):
            raise
        print(f"error: internal error ({exc.__class__.__name__}: {exc}). Set GPU_ADVISOR_DEBUG=1 for details.",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
