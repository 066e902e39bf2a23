"""`gpu-advisor guide | ask | chat | models | gpus | slack`: the assistant and the catalogs."""

from __future__ import annotations

import argparse
import json
from typing import Any

from assistant.frontends.cli.args import add_listing, integer


def add_guide(sub: Any) -> None:
    p = sub.add_parser("guide", help="search the guides (English or Urdu) for the passages that answer a question")
    p.add_argument("question")
    p.add_argument("--lang", help="en | ur (default: the question's script)")
    p.add_argument("-k", type=integer, default=3, help="passages to return (default 3)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_guide)


def _run_guide(args: argparse.Namespace) -> int:
    from assistant.service import api

    hits = api.guide(args.question, args.lang, args.k)
    if args.json:
        print(json.dumps([h.__dict__ for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No passage of the guides matches this question.")
    for h in hits:
        print(f"[{h.id}] {h.guide_title} - {h.section}\n{h.text}\n")
    return 0


def add_ask(sub: Any) -> None:
    p = sub.add_parser("ask", help="ask the assistant a question (English or Urdu)")
    p.add_argument("question", nargs="+", help="the question")
    p.add_argument("--thread", help="thread id: reuse it to ask follow-ups")
    p.add_argument("--backend", help="router (default) or openai:MODEL, anthropic:MODEL, ollama:MODEL "
                                     "(default $GPU_ADVISOR_BACKEND)")
    p.add_argument("--lang", choices=("auto", "en", "ur"), default="auto",
                   help="language of the answer (default: the question's; Roman Urdu is answered in English)")
    p.add_argument("--json", action="store_true", help="print the Answer object")
    p.set_defaults(func=_run_ask)
    c = sub.add_parser("chat", help="interactive chat in the terminal (a thread per session)")
    c.add_argument("--thread", help="continue this thread")
    c.add_argument("--backend", help="router (default) or an LLM backend id")
    c.add_argument("--lang", choices=("auto", "en", "ur"), default="auto", help="language of the answers")
    c.set_defaults(func=_run_chat)


def _run_ask(args: argparse.Namespace) -> int:
    from assistant.service import api

    q = " ".join(args.question)
    ans = api.advisor(args.backend).ask(q, thread_id=args.thread, lang=args.lang)
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

    from assistant.service import api

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
        for ev in adv.stream(q, thread_id=tid, lang=args.lang):
            if ev["type"] == "tool_start":
                console.print(f"[dim]  → {ev['name']}({', '.join(f'{k}={v}' for k, v in ev['args'].items())})[/dim]")
            elif ev["type"] == "answer":
                console.print(Markdown(ev["answer"].answer))


def add_lists(sub: Any) -> None:
    add_listing(sub, "models", "list the models the advisor knows", _run_models)
    add_listing(sub, "gpus", "list the GPUs the advisor knows", _run_gpus)


def _run_models(args: argparse.Namespace) -> int:
    from assistant.service import api
    from assistant.engine.formatting import table

    rows = api.list_models()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(table(("id", "name", "params (B)", "kind"),
                    [(r["id"], r["name"], f"{r['params_b']:.2f}", r["kind"]) for r in rows], align="llrl"))
    return 0


def _run_gpus(args: argparse.Namespace) -> int:
    from assistant.service import api
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
