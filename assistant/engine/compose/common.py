"""Helpers shared by the answer parts: result lookup, verdicts, details, the data's date, errors."""

from __future__ import annotations

import re
from typing import Any

from assistant.engine.answer import Finding, KeyNumber, Sections
from assistant.engine.query import Query

Done = list[tuple[str, dict, dict]]

# A tool note that names a code identifier or a CLI flag is not for a chat answer.
_CODEISH = re.compile(r"--[a-z]|\b[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]\b|`|\btorch\.|\bconfig\.json\b")
_CLOSEST = re.compile(r"Closest known: (.*?)\.(?:\s|$)")
_UNKNOWN = re.compile(r"^Unknown (model|GPU) '(.*?)'")
_AMBIGUOUS = re.compile(r"^(?:Model|GPU) name '(.*?)' is ambiguous: it matches (.*?)\. Say which\.")
_INVALID = re.compile(r"^Invalid (\w+): (.*?)\. Accepted: (.*)\.$", re.S)


def results(done: Done, *names: str) -> list[tuple[dict, dict]]:
    """(args, result) of the successful calls of these tools, in call order."""
    return [(a, r) for n, a, r in done if n in names and isinstance(r, dict) and "error" not in r]


def set_verdict(s: Sections, verdict: str) -> None:
    """The first part to decide sets the verdict; a later 'info' never overrides it."""
    if s.verdict == "info":
        s.verdict = verdict  # type: ignore[assignment]


def add_details(s: Sections, notes: list[str] | None, limit: int = 8) -> None:
    """English tool notes for the details list, without code identifiers, flags or repeats."""
    if s.lang != "en":
        return
    for x in notes or []:
        if isinstance(x, str) and x and not _CODEISH.search(x) and x not in s.details and len(s.details) < limit:
            s.details.append(x)


def note_data(s: Sections, r: dict[str, Any]) -> None:
    """Keep the newest price date seen in a result (and whether it is stale)."""
    d = r.get("as_of")
    if isinstance(d, str) and d and (s.data_date is None or d > s.data_date):
        s.data_date = d
    if r.get("stale"):
        s.data_stale = True


def kn(label: str, value: Any, unit: str = "", note: Finding | None = None) -> KeyNumber:
    return KeyNumber(label=label, value=value, unit=unit, note=note)


def q_(v: Any, u: str) -> dict[str, Any]:
    """A quantity parameter for a message: rendered with its unit in the answer's language. A whole float is
    kept as an int, so the stored answer renders the same after a round trip through the browser's JSON
    (JavaScript has one number type: 60.0 comes back as 60, which would read "60 s" where "60.0 s" was shown)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        v = int(v)
    return {"v": v, "u": u}


def model_name(r: dict[str, Any], q: Query | None = None) -> str:
    """The model's display name: from the result, else the catalog's name for its id, else as asked."""
    m = r.get("model")
    if isinstance(m, dict) and m.get("name"):
        return str(m["name"])
    mid = (r.get("inputs") or {}).get("model") if isinstance(r.get("inputs"), dict) else None
    mid = mid or (m if isinstance(m, str) else None)
    mid = mid or (q.model if q is not None else None)
    if mid:
        return catalog_model_name(str(mid))
    if q is not None:
        return q.model_text or (f"{q.params_b:g}B" if q.params_b else "")
    return ""


def model_label(r: dict[str, Any], q: Query | None = None) -> Any:
    """The model for a message: its name, or a phrase for a shape built from a size alone."""
    m = r.get("model")
    if isinstance(m, dict) and m.get("rough") and m.get("params_b"):
        return {"code": "name.rough_model", "params": {"b": f"{float(m['params_b']):g}B"}}
    if q is not None and q.params_b and not q.model and not (isinstance(m, dict) and m.get("name")):
        return {"code": "name.rough_model", "params": {"b": f"{q.params_b:g}B"}}
    return model_name(r, q)


def gpu_label(name: Any, q: Query | None) -> Any:
    """A GPU for a message: its name, or a phrase when only a memory size was given."""
    if q is not None and q.gpu_memory_gb and not q.gpus:
        return {"code": "name.gpu_of_memory", "params": {"gb": q_(user_number(q.gpu_memory_gb), "gb")}}
    return name


def instance(raw: Any) -> Any:
    """A provider's instance id for a message or table cell: a phrase the renderer shows readably
    (render.catalog.instance_name); "" when there is none."""
    return {"code": "name.instance", "params": {"id": str(raw)}} if raw else ""


def offer_where(offer: dict[str, Any]) -> Any:
    """'provider instance' of an offer as a phrase (the instance shown readably)."""
    return {"code": "name.offer_where", "params": {"provider": offer.get("provider") or "—",
                                                   "instance": instance(offer.get("instance_type"))}}


def user_number(v: Any) -> Any:
    """A number as the user gave it: 80 rather than 80.0."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


def engine_name(engine_id: str | None) -> str:
    """The engine's display name (vLLM, SGLang ...) from the catalog; the id when unknown."""
    from knowledge.catalog import resolve_engine
    from tools.errors import AdvisorError

    if not engine_id:
        return ""
    try:
        return resolve_engine(engine_id).name
    except AdvisorError:
        return str(engine_id)


def catalog_model_name(model_id: str) -> str:
    from knowledge.catalog import resolve_diffusion, resolve_model
    from tools.errors import AdvisorError

    try:
        return resolve_model(model_id).name or model_id
    except AdvisorError:
        pipe = resolve_diffusion(model_id)  # an image pipeline: its components carry the name
        return pipe[0].model_name if pipe else model_id


_FLAG = re.compile(r",?\s*--[a-z][\w-]*(?:\s+[A-Z]\b)?")
_GIVE_NOTHING = re.compile(r";\s*give\s*(?=$|[.;,)])")
_SNAKE = re.compile(r"\b([a-z][a-z0-9]*)_([a-z0-9_]*[a-z0-9])\b")
_CODE = re.compile(r"`[^`]*`")


def chat_text(text: str) -> str:
    """A tool's message for a chat answer: CLI flags, code spans and identifiers taken out
    ("give --price-usd-per-hour" is for the command line; "context_tokens" reads "context tokens")."""
    t = _CODE.sub("", _FLAG.sub("", str(text)))
    t = _GIVE_NOTHING.sub("", t)
    t = _SNAKE.sub(lambda m: m.group(0).replace("_", " "), t)
    return re.sub(r"\s{2,}", " ", t).replace(" .", ".").replace("( ", "(").strip()


def error_info(r: dict[str, Any]) -> dict[str, Any]:
    """What went wrong, as data: {'type', 'name', 'suggestions'} or {'type', 'field', 'value', 'accepted'}.

    Reads `error_info` (or an `error` dict) when the tool wrapper gives one; otherwise reads the
    message of the typed errors in tools/errors.py, whose wording is that module's contract."""
    err = r.get("error")
    if isinstance(r.get("error_info"), dict):
        return dict(r["error_info"])
    if isinstance(err, dict):
        return dict(err)
    text = str(err or "")
    m = _UNKNOWN.match(text)
    if m:
        close = _CLOSEST.search(text)
        return {"type": "UnknownModel" if m.group(1) == "model" else "UnknownGpu", "name": m.group(2),
                "suggestions": [x.strip() for x in close.group(1).split(",")] if close else []}
    m = _AMBIGUOUS.match(text)
    if m:
        return {"type": "Ambiguous", "name": m.group(1), "suggestions": [x.strip() for x in m.group(2).split(",")]}
    m = _INVALID.match(text)
    if m:
        return {"type": "InvalidInput", "field": m.group(1), "value": m.group(2), "accepted": m.group(3)}
    return {"type": "Other", "message": text}
