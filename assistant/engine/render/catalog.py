"""Message catalogs (assistant/engine/messages/<lang>.json) and the formatting of their parameters.

A template is a `str.format` string; a placeholder's format spec says how to show its value:
`{x:k}` a catalog key (its label), `{x:t}` a vocabulary term (looked up as `term.<x>`), `{x:gb}`,
`{x:usd_h}`, `{x:tokens}` ... a quantity with that unit (`unit.<u>` templates). Without a spec, a
nested finding ({"code", "params"}) or quantity ({"v", "u"}) renders itself, an int gets
separators, a float `formatting.number`, a list is joined. Numbers stay numbers until here.
"""

from __future__ import annotations

__all__ = ["LANGS", "MISSING", "catalog", "fmt_value", "instance_name", "label", "message", "quantity", "term"]

import json
import logging
import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any

from assistant.engine.formatting import compact, count, number, usd

MESSAGES_DIR = Path(__file__).resolve().parent.parent / "messages"
MISSING: set[str] = set()  # codes asked for that no catalog has (a test keeps this empty)
log = logging.getLogger(__name__)
LANGS = ("en", "ur")
_MONEY = {"usd", "usd_h", "usd_gpu_h", "usd_mtok", "usd_month", "usd_gb", "usd_gb_month"}
_COUNTS = {"tokens", "int", "gpus", "seq", "examples", "users", "steps", "images"}
# GGUF quantisation names are shown as llama.cpp writes them (Q4_K_M), not as lower-case identifiers.
_GGUF = re.compile(r"i?q\d(?:_[a-z0-9]+)+")


def _name(s: str) -> str:
    return s.upper() if _GGUF.fullmatch(s) else s


_ID_WORDS = {"pcie": "PCIe", "secure": "Secure", "community": "Community"}


def instance_name(raw: str) -> str:
    """A provider's instance id as a reader sees it: underscores read as spaces ("Standard NC24ads A100
    v4"); an all-lower-case id (Lambda's "gpu_1x_h100_pcie") also drops its "gpu" prefix and shows
    model names in capitals ("1x H100 PCIe"). Ids without underscores stay as they are."""
    s = str(raw)
    if "_" not in s:
        return s
    parts = [p for p in s.split("_") if p]
    if s == s.lower():
        parts = parts[1:] if len(parts) > 1 and parts[0] == "gpu" else parts
        parts = [_ID_WORDS.get(p, p.upper() if re.fullmatch(r"[a-z]+\d[a-z0-9]*", p) else p) for p in parts]
    return " ".join(_ID_WORDS.get(p.lower(), p) if p.isupper() and p.lower() in _ID_WORDS else p for p in parts)


@lru_cache(maxsize=None)
def catalog(lang: str) -> dict[str, str]:
    """{code: template} of one language (English for an unknown language)."""
    lang = lang if lang in LANGS else "en"
    data = json.loads((MESSAGES_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def _humanize(key: str) -> str:
    return key.rsplit(".", 1)[-1].replace("_", " ")


@lru_cache(maxsize=None)
def _namespaces() -> frozenset[str]:
    """The prefixes of the catalog's keys (col, num, term ...)."""
    return frozenset(k.split(".", 1)[0] for k in catalog("en"))


def label(lang: str, key: str) -> str:
    """The text of a catalog key, a name shown as it is when it is not a key (no dot, a space, or a
    prefix no key has: "llama.cpp" is an engine's name, not a code)."""
    key = str(key)
    if "." not in key or " " in key or key.split(".", 1)[0] not in _namespaces():
        return key
    t = catalog(lang).get(key) or catalog("en").get(key)
    return t if t is not None else _humanize(key)


def term(lang: str, value: Any) -> str:
    """A vocabulary value (lora, spot, memory ...) in the answer's language; a name stays as it is."""
    if isinstance(value, bool):
        return label(lang, "term.yes" if value else "term.no")
    t = catalog(lang).get(f"term.{value}")
    return t if t is not None else str(value)


def quantity(lang: str, v: Any, unit: str = "", short: bool = False) -> str:
    """A number with its unit in the answer's language ("$1.29/h", "2,048 tokens", "17.9 GB");
    `short` uses the table form of the unit where there is one ("$0.16/M tokens")."""
    if v is None:
        return label(lang, "value.unknown")
    if isinstance(v, dict):
        return fmt_value(lang, v)
    if isinstance(v, str):
        s = _name(v)
    elif unit in _MONEY:
        s = usd(v)
    elif unit in _COUNTS or (isinstance(v, int) and not isinstance(v, bool)) or (
            unit == "h" and float(v).is_integer()):
        s = count(v)
    elif unit in ("gib", "min", "pct"):
        s = compact(v)
    else:
        s = number(v)
    tmpl = (short and catalog(lang).get(f"unit_short.{unit}")) or (catalog(lang).get(f"unit.{unit}") if unit else None)
    return tmpl.format(v=s) if tmpl else (f"{s} {unit}" if unit else s)


def fmt_value(lang: str, v: Any, spec: str = "") -> str:
    if spec == "k":
        return label(lang, v)
    if spec == "i":
        return instance_name(v)
    if spec == "t":
        if isinstance(v, dict):
            return fmt_value(lang, v)
        if isinstance(v, (list, tuple)):
            return _join(lang, [term(lang, x) for x in v])
        return term(lang, v)
    if spec:
        if isinstance(v, (list, tuple)):
            return _join(lang, [quantity(lang, x, spec) for x in v])
        return quantity(lang, v, spec)
    if isinstance(v, dict):
        if "code" in v:
            return message(lang, v["code"], v.get("params") or {})
        if "v" in v:
            return quantity(lang, v["v"], v.get("u", ""))
    if isinstance(v, bool):
        return term(lang, v)
    if isinstance(v, int):
        return count(v)
    if isinstance(v, float):
        return number(v)
    if isinstance(v, (list, tuple)):
        return _join(lang, [fmt_value(lang, x) for x in v])
    return "" if v is None else _name(str(v))


def _join(lang: str, items: list[str]) -> str:
    return label(lang, "sep.list").join(i for i in items if i)


class _Formatter(string.Formatter):
    def __init__(self, lang: str):
        self.lang = lang

    def format_field(self, value: Any, format_spec: str) -> str:
        return fmt_value(self.lang, value, format_spec)


def message(lang: str, code: str, params: dict[str, Any] | None = None) -> str:
    """The catalog template of `code` filled with `params` (English template when the language lacks it)."""
    params = params or {}
    tmpl = catalog(lang).get(code)
    if tmpl is None:
        tmpl = catalog("en").get(code)
    if tmpl is None:  # a code no catalog has: said plainly, and recorded for the tests (MISSING)
        MISSING.add(code)
        log.warning("message code %r is in no catalog", code)
        return _humanize(code)
    return _tidy(_Formatter(lang).vformat(tmpl, (), _Params(params)))


_EMPTY_BRACKETS = re.compile(r"\s*\(\s*[,،]?\s*\)")
_LEADING_COMMA = re.compile(r"\(\s*[,،]\s*")


def _tidy(text: str) -> str:
    """An optional part left empty leaves no trace: "gcp ()" -> "gcp", "(, $0.35)" -> "($0.35)"."""
    return _LEADING_COMMA.sub("(", _EMPTY_BRACKETS.sub("", text))


class _Params(dict):
    """Missing optional parameters format as empty text rather than failing the whole answer."""

    def __missing__(self, key: str) -> str:
        return ""
