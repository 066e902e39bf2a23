"""Argument types, the model options and the request-model options shared by the `gpu-advisor` subcommands."""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Iterable
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel


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


def add_listing(sub: Any, name: str, help_text: str, run: Any) -> None:
    """A subcommand that lists something: its one option is --json (print the rows as JSON, not a table)."""
    p = sub.add_parser(name, help=help_text)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own messages, exit 2, no traceback
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def _field_kind(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """(base type, Literal choices) of a request field's annotation, `X | None` unwrapped."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else str
    if get_origin(annotation) is Literal:
        return str, get_args(annotation)
    return get_origin(annotation) or annotation, ()


def _default_text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def add_request_options(parser: Any, request_cls: type[BaseModel], *, flags: dict[str, list[str]] | None = None,
                        skip: Iterable[str] = (), help_extra: dict[str, str] | None = None,
                        repeat: Iterable[str] = (), exclusive: Iterable[Iterable[str]] = ()) -> None:
    """One option per field of `request_cls` (the tool's one declaration), dest = the field name.

    `--field-name` always; `flags[field]` adds the spellings that are contracts (listed first, e.g.
    --precision for weight_precision). The type comes from the annotation (int: `integer`, float:
    `positive_float`, bool: --x/--no-x, Literal: choices, else text); fields in `repeat` may be given
    more than once, the fields of each `exclusive` set exclude each other. The default stays None so
    the request model applies its own; the help is the field's description, `help_extra[field]`, and
    "(default: X)" from the model unless the text already speaks of the default. Values are checked
    by the request model, not here.
    """
    flags, help_extra, skip, repeat = flags or {}, help_extra or {}, set(skip), set(repeat)
    group = {name: g for names in exclusive for g in [parser.add_mutually_exclusive_group()] for name in names}
    for name, field in request_cls.model_fields.items():
        if name in skip:
            continue
        canonical = "--" + name.replace("_", "-")
        opts = list(dict.fromkeys([*flags.get(name, []), canonical]))
        text = "; ".join(t for t in (field.description, help_extra.get(name)) if t)
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        if default is not None and "default" not in text:
            text = (text + " " if text else "") + f"(default: {_default_text(default)})"
        kw: dict[str, Any] = {"dest": name, "default": None, "help": text.replace("%", "%%") or None}
        base, choices = _field_kind(field.annotation)
        if choices:
            kw["choices"] = choices
        elif base is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif base is int:
            kw["type"] = integer
        elif base is float:
            kw["type"] = positive_float
        if name in repeat:
            kw["action"] = "append"
        group.get(name, parser).add_argument(*opts, **kw)
