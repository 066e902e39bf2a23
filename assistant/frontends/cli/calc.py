"""`gpu-advisor vram | speed | train-time`: the calculators on the command line."""

from __future__ import annotations

import argparse
import json
from typing import Any

from assistant.frontends.cli.args import add_model_args, add_request_options, integer
from assistant.frontends.cli.images import add_image_args, format_image_speed, image_kwargs
from tools.schemas import VramRequest
from tools.throughput import SpeedRequest
from tools.training import TrainRequest


def add_vram(sub: Any) -> None:
    p = sub.add_parser("vram", help="per-GPU memory for inference, full fine-tuning, LoRA or QLoRA",
                       description="Estimate per-GPU memory (decimal GB) split into components.")
    add_model_args(p)
    add_request_options(p, VramRequest, flags={"weight_precision": ["--precision"],
                                               "prefill_chunk_tokens": ["--prefill-chunk"]},
                        help_extra={"tensor_parallel": "inference: default --gpus"})
    p.add_argument("--offload-text-encoders", action="store_true",
                   help="image pipelines: encode the prompt, then move the text encoders to CPU")
    p.add_argument("--gpu", help="judge the fit against this GPU, e.g. 'RTX 4090', H100, A100-80GB")
    add_image_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_vram)


def _run_vram(args: argparse.Namespace) -> int:
    from assistant.service import api

    request = {f: getattr(args, f) for f in VramRequest.model_fields}
    if request["tensor_parallel"] is None and request["method"] in (None, "inference") and request["gpus"]:
        request["tensor_parallel"] = request["gpus"]  # inference splits the model over every GPU given
    est = api.vram(model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu,
                   offload_text_encoders=args.offload_text_encoders, **request, **image_kwargs(args))
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


def add_speed(sub: Any) -> None:
    p = sub.add_parser("speed", help="decode tokens/s, time to first token and latency on a GPU (estimates)",
                       description="Estimate inference speed from the memory/compute roofline, calibrated per engine.")
    add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name, e.g. H100, 'RTX 4090', A100-80GB")
    p.add_argument("--kernel", help="quantised kernel family (knowledge/quant_kernels.csv), e.g. marlin, gptq-exllama, "
                                    "bnb-4bit; default: the engine's kernel for the precision")
    p.add_argument("--engine", help="vllm (default, V1 engine), vllm-v0, sglang, tensorrt-llm, llama.cpp (ollama), "
                                    "llama.cpp-legacy, torch-compile, pytorch-eager (transformers), "
                                    "pytorch-eager-legacy, exllamav2, mlc")
    add_request_options(p, SpeedRequest, help_extra={"gpus": "tensor parallel; llama.cpp splits layers"})
    add_image_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_speed)


def _run_speed(args: argparse.Namespace) -> int:
    from assistant.service import api

    est = api.speed(model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu, engine=args.engine,
                    **{f: getattr(args, f) for f in SpeedRequest.model_fields},
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


def add_train_time(sub: Any) -> None:
    p = sub.add_parser("train-time", help="fine-tuning tokens/s, hours and GPU-hours (estimates)")
    add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name")
    add_request_options(p, TrainRequest, help_extra={"dataset_tokens": "or --examples with --tokens-per-example",
                                                     "mfu": "e.g. from your own runs"})
    p.add_argument("--examples", type=integer, help="number of examples (with --tokens-per-example)")
    p.add_argument("--tokens-per-example", type=integer, help="average tokens per example")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_train_time)


def _run_train_time(args: argparse.Namespace) -> int:
    from assistant.service import api

    est = api.train_time(model=args.model, config=args.config, params_b=args.params_b, gpu=args.gpu,
                         examples=args.examples, tokens_per_example=args.tokens_per_example,
                         **{f: getattr(args, f) for f in TrainRequest.model_fields})
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
