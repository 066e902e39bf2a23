"""Argument types and the model options shared by the `gpu-advisor` subcommands."""

from __future__ import annotations

import argparse
import sys


def positive_float(text: str) -> float:
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def integer(text: str) -> int:
    try:
        v = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v != v or v in (float("inf"), float("-inf")) or v != int(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    return int(v)


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--model", help="catalog name, e.g. llama-3.1-8b or meta-llama/Llama-3.1-8B")
    g.add_argument("--config", help="path to a Hugging Face config.json")
    g.add_argument("--params-b", type=positive_float, help="parameter count in billions (rough estimate)")


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own messages, exit 2, no traceback
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")
