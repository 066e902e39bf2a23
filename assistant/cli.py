"""`gpu-advisor` command line: a thin front end over assistant.api.

Exit codes: 0 success, 2 bad input (message names the value and what is accepted), 1 unexpected.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from assistant.cli_args import Parser
from assistant.cli_calc import _add_speed, _add_train_time, _add_vram
from assistant.cli_chat import _add_ask, _add_guide, _add_lists, _add_slack
from assistant.cli_money import _add_catalog, _add_cost, _add_prices, _add_recommend
from tools.errors import AdvisorError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="gpu-advisor",
                     description="Which cloud GPU to rent for LLM work: will it fit, how fast, what it costs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
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
