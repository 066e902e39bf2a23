"""`gpu-advisor`: the process entry; the command line (assistant.frontends.cli) plus `slack`, which serves the bot.

Exit codes: 0 success, 2 bad input (message names the value and what is accepted), 1 unexpected.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from assistant.frontends.cli.args import Parser, integer
from assistant.frontends.cli.calc import add_speed, add_train_time, add_vram
from assistant.frontends.cli.chat import add_ask, add_guide, add_lists
from assistant.frontends.cli.threads import add_thread_parser
from assistant.frontends.cli.money import add_catalog, add_cost, add_prices, add_recommend
from tools.errors import AdvisorError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="gpu-advisor",
                     description="Which cloud GPU to rent for LLM work: will it fit, how fast, what it costs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    add_vram(sub)
    add_speed(sub)
    add_train_time(sub)
    add_prices(sub)
    add_catalog(sub)
    add_cost(sub)
    add_guide(sub)
    add_recommend(sub)
    add_ask(sub)
    add_lists(sub)
    _add_slack(sub)
    add_thread_parser(sub)
    return parser


def _add_slack(sub: Any) -> None:
    p = sub.add_parser("slack", help="run the team Slack bot (Socket Mode if SLACK_APP_TOKEN is set, else HTTP)",
                       description="Serve the Slack bot; see docs/slack.md for creating the app and its env vars.")
    p.add_argument("--port", type=integer, help="HTTP mode: port for /slack/events (default $PORT, else 3000)")
    p.add_argument("--host", default="127.0.0.1",
                   help="HTTP mode: interface to listen on (default 127.0.0.1, behind a TLS proxy; 0.0.0.0 for all)")
    p.set_defaults(func=_run_slack)


def _run_slack(args: argparse.Namespace) -> int:
    from assistant.frontends.slack import bot as slack  # slack_bolt loads only for this command

    try:
        slack.run(port=args.port, host=args.host)
    except slack.SlackConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


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
