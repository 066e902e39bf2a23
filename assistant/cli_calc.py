"""`gpu-advisor vram | speed | train-time`: the calculators on the command line."""

from __future__ import annotations

import argparse
import json
from typing import Any

from assistant.cli_args import add_model_args, integer, positive_float
from assistant.image_cli import add_image_args, format_image_speed, image_kwargs


def _add_vram(sub: Any) -> None:
    p = sub.add_parser("vram", help="per-GPU memory for inference, full fine-tuning, LoRA or QLoRA",
                       description="Estimate per-GPU memory (decimal GB) split into components.")
    add_model_args(p)
    p.add_argument("--method", default="inference", help="inference | full | lora | qlora (default inference)")
    p.add_argument("--precision", "--weight-precision", dest="weight_precision",
                   help="weights: fp32 bf16 fp16 fp8 int8 int4 nf4 fp4, or GGUF q4_0 q4_k_m q5_k_m q6_k q8_0 f16")
    p.add_argument("--double-quant", action="store_true", default=None, help="nf4/fp4 double quantisation")
    p.add_argument("--training-precision", help="mixed (fp32 master + optimizer) | bf16 (all bf16); default mixed")
    p.add_argument("--optimizer", help="adamw | adamw8bit | paged-adamw8bit | sgd | adafactor (default adamw)")
    p.add_argument("--batch", type=integer, help="micro-batch (training) or concurrent sequences (inference); default 1")
    p.add_argument("--seq-len", type=integer, help="tokens per sequence (inference: prompt + output); default 2048")
    p.add_argument("--grad-checkpointing", action=argparse.BooleanOptionalAction, default=None,
                   help="activation checkpointing (default: on for qlora, off otherwise)")
    p.add_argument("--attention", help="sdpa (default, flash/memory-efficient) | eager")
    p.add_argument("--lora-rank", type=integer, help="LoRA rank (default 8)")
    p.add_argument("--lora-targets", help="comma list of q,k,v,o,gate,up,down,lm_head, attn, mlp or all-linear (default q,v)")
    p.add_argument("--lora-dropout", type=positive_float, help="LoRA dropout probability (default 0.05)")
    p.add_argument("--chunked-loss", action="store_true", default=None,
                   help="chunked/fused cross-entropy (torchtune, Unsloth, Liger): no full fp32 logits")
    p.add_argument("--gpus", type=integer, help="number of GPUs (default 1)")
    p.add_argument("--sharding", help="training: none | zero1 | zero2 | zero3 | fsdp (default none)")
    p.add_argument("--tensor-parallel", type=integer, help="inference: tensor-parallel degree (default --gpus)")
    p.add_argument("--kv-precision", help="KV cache: fp16 | bf16 | fp8 | int8 (default bf16)")
    p.add_argument("--prefill-chunk", type=integer, dest="prefill_chunk_tokens",
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
    add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name, e.g. H100, 'RTX 4090', A100-80GB")
    p.add_argument("--gpus", type=integer, help="GPUs the model is split over (tensor parallel; llama.cpp splits layers)")
    p.add_argument("--precision", help="bf16 fp16 fp8 int8 int4, a kernel where it matters (gptq, gptq-marlin, awq, "
                                       "bnb-nf4, bnb-int8 ...), or GGUF q4_0 q4_k_m q5_k_m q6_k q8_0 f16 (default bf16)")
    p.add_argument("--kernel", help="quantised kernel family (knowledge/quant_kernels.csv), e.g. marlin, gptq-exllama, "
                                    "bnb-4bit; default: the engine's kernel for the precision")
    p.add_argument("--kv-precision", help="KV cache: fp16 | bf16 | fp8 | int8 (default bf16)")
    p.add_argument("--engine", help="vllm (default, V1 engine), vllm-v0, sglang, tensorrt-llm, llama.cpp (ollama), "
                                    "llama.cpp-legacy, torch-compile, pytorch-eager (transformers), "
                                    "pytorch-eager-legacy, exllamav2, mlc")
    p.add_argument("--batch", type=integer, help="concurrent sequences (default 1)")
    p.add_argument("--prompt-tokens", type=integer, help="prompt tokens per sequence (default 512)")
    p.add_argument("--output-tokens", type=integer, help="generated tokens per sequence (default 256)")
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
    add_model_args(p)
    p.add_argument("--gpu", required=True, help="GPU name")
    p.add_argument("--gpus", type=integer, help="number of GPUs (default 1)")
    p.add_argument("--method", help="full | lora (default) | qlora")
    p.add_argument("--dataset-tokens", type=positive_float, help="training tokens per epoch")
    p.add_argument("--examples", type=integer, help="number of examples (with --tokens-per-example)")
    p.add_argument("--tokens-per-example", type=integer, help="average tokens per example")
    p.add_argument("--epochs", type=positive_float, help="epochs (default 1)")
    p.add_argument("--batch", type=integer, help="micro-batch per GPU (default 4)")
    p.add_argument("--seq-len", type=integer, help="tokens per sequence (default 2048)")
    p.add_argument("--grad-checkpointing", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--sharding", help="multi-GPU: fsdp (default) | ddp")
    p.add_argument("--mfu", type=positive_float, help="override the utilisation (0-1), e.g. from your own runs")
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
