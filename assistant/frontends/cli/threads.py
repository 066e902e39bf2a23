"""`gpu-advisor thread list | show ID [--json] | delete ID`: the local user's conversations.

The CLI's threads belong to `local:<os user>`; with GPU_ADVISOR_DATABASE_URL set they are read from
the team's PostgreSQL, else from the SQLite store in the data directory. Light imports only (no LangChain).
"""

from __future__ import annotations

__all__ = ["add_thread_parser"]

import argparse
import json
import sys
from typing import Any


def add_thread_parser(sub: Any) -> None:
    """Register the `thread` command and its three subcommands."""
    p = sub.add_parser("thread", help="your conversations: list, show ID [--json], delete ID",
                       description="Threads of the local user (see `ask --thread`).")
    ts = p.add_subparsers(dest="thread_command", metavar="SUBCOMMAND")
    ts.required = True
    ls = ts.add_parser("list", help="your threads, most recent first")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=_run_list)
    show = ts.add_parser("show", help="the turns of one thread")
    show.add_argument("thread_id")
    show.add_argument("--json", action="store_true",
                      help='{"thread_id", "turns": [{"question", "answer", "at"}], ...} (as GET /api/threads/ID)')
    show.set_defaults(func=_run_show)
    rm = ts.add_parser("delete", help="forget one thread")
    rm.add_argument("thread_id")
    rm.set_defaults(func=_run_delete)


def _store() -> tuple[Any, str]:
    from assistant.threads import local_owner, open_store

    store = open_store()
    for note in store.notices:
        print(f"note: {note}", file=sys.stderr)
    return store, local_owner()


def _run_list(args: argparse.Namespace) -> int:
    store, owner = _store()
    threads = store.list_threads(owner)
    if args.json:
        print(json.dumps({"owner": owner, "threads": [t.as_json() for t in threads]}, ensure_ascii=False, indent=2))
        return 0
    if not threads:
        print(f"No threads for {owner}. Start one with: gpu-advisor ask --thread NAME \"question\"")
        return 0
    for t in threads:
        first = t.first_question if len(t.first_question) <= 60 else t.first_question[:57] + "..."
        print(f"{t.thread_id}  {t.turn_count:>3} turn(s)  {t.as_json()['updated_at']}  {first}")
    return 0


def _run_show(args: argparse.Namespace) -> int:
    store, owner = _store()
    rec = store.load(owner, args.thread_id)
    if rec is None:
        print(f"error: no thread {args.thread_id!r} for {owner} (see `gpu-advisor thread list`).", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rec.as_json(), ensure_ascii=False, indent=2))
        return 0
    if rec.compacted_turns:
        print(f"({rec.compacted_turns} earlier turn(s) compacted away)\n")
    for i, t in enumerate(rec.turns, start=rec.compacted_turns + 1):
        print(f"[{i}] {t.at}\n> {t.question}\n\n{t.answer}\n")
    return 0


def _run_delete(args: argparse.Namespace) -> int:
    store, owner = _store()
    if not store.delete(owner, args.thread_id):
        print(f"error: no thread {args.thread_id!r} for {owner}.", file=sys.stderr)
        return 1
    print(f"Deleted thread {args.thread_id}.")
    return 0
