"""Block Kit for an advisor Answer: verdict, key numbers, an options table, details and sources.

Pure formatting (no Slack client, no I/O), so it is tested without a workspace. It reads the
answer text the way compose writes it (verdict first, "- " bullets, "Assumptions:", "Prices: ...",
"Why (from the guide):" with "- [id] “quote”" lines) and the tool results for the table; a line
it does not recognise stays in the message as it is, so nothing the advisor said is lost.

Slack's limits (api.slack.com/reference/block-kit/blocks): 50 blocks a message, 3,000 characters
a section text, 10 fields of 2,000, 10 context elements of 2,000; `text` is cut at 40,000.
"""

from __future__ import annotations

__all__ = ["MAX_FIELDS", "answer_blocks", "escape"]

import re
from typing import Any

from assistant.formatting import number

MAX_FIELDS = 10
_SECTION_CHARS = 3000
_FIELD_CHARS = 2000
_CONTEXT_CHARS = 2000
_FALLBACK_CHARS = 39_000
_QUOTE_CHARS = 140
_CELL_CHARS = 24
_TABLE_ROWS = 12
_BOLD_VERDICT_CHARS = 200  # a whole paragraph in bold reads badly: only a one-line verdict is bolded

# Headings as compose writes them, in English and Urdu.
_ASSUMPTIONS = ("Assumptions:", "مفروضات:")
_PRICES = ("Prices:", "قیمتیں:")
_CITE_BULLET = re.compile(r"^-\s*\[[\w.-]+\]\s*“")
_NUMBERED = re.compile(r"^\d+[.۔]\s")
_DIGIT = re.compile(r"\d")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")


def escape(text: str) -> str:
    """Escape the three characters Slack's mrkdwn reserves (&, <, >); everything else, RTL included, is kept."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return _PARTIAL_ENTITY.sub("", text[: limit - 1]).rstrip() + "…"


def _mrkdwn(text: str, limit: int) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": _clip(text, limit), "verbatim": True}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def _parse(text: str) -> dict[str, Any]:
    """Split the answer into verdict, body lines, assumptions, guide-quote lines and the prices note."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    out: dict[str, Any] = {"verdict": lines[0].strip() if lines else "", "body": [], "assumptions": [],
                           "assumptions_head": _ASSUMPTIONS[0], "why": [], "note": ""}
    mode = "body"
    for i, line in enumerate(lines[1:], start=1):
        s = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if s.startswith(_PRICES):
            out["note"], mode = s.split(":", 1)[1].strip(), "body"
        elif s in _ASSUMPTIONS:
            out["assumptions_head"], mode = s, "assumptions"
        elif s.endswith(":") and _CITE_BULLET.match(nxt):
            out["why_head"], mode = s, "why"
        elif mode == "assumptions" and s.startswith("- "):
            out["assumptions"].append(s[2:])
        elif mode == "why" and _CITE_BULLET.match(s):
            out["why"].append(s)
        else:
            mode = "body"
            out["body"].append(line)
    return out


def _fmt(x: Any, nd: int = 2) -> str:
    if not isinstance(x, (int, float)):
        return "-" if x is None else str(x)
    return number(x, nd)


def _offer_rows(tool_calls: list[Any]) -> list[list[str]]:
    rows = []
    for tc in tool_calls:
        res = _get(tc, "result")
        if _get(tc, "name") != "price_query" or not isinstance(res, dict):
            continue
        spot = (_get(tc, "args") or {}).get("pricing") == "spot"
        for o in res.get("offers") or []:
            price = o.get("spot_price_usd_per_gpu_hour") if spot else o.get("price_usd_per_gpu_hour")
            rows.append([o.get("provider") or "-", o.get("instance_type") or "-", str(o.get("gpu_count") or "-"),
                         "$" + _fmt(price), "spot" if spot else "on-demand", o.get("region") or "-"])
    return [["Provider", "Instance", "GPUs", "$/GPU-h", "Pricing", "Region"]] + rows if rows else []


def _option_rows(tool_calls: list[Any]) -> list[list[str]]:
    options: list[dict[str, Any]] = []
    for tc in tool_calls:
        res = _get(tc, "result")
        if _get(tc, "name") == "recommend_gpus" and isinstance(res, dict):
            options += [o for o in res.get("options") or [] if isinstance(o, dict)]
    if not options:
        return []
    training = any(o.get("hours") is not None for o in options)
    head = ["#", "GPUs", "Provider", "GB/GPU", "tok/s"] + (["Hours", "$/h", "$ job"] if training else ["$/h", "$/Mtok"])
    rows = [head]
    for i, o in enumerate(options, start=1):
        offer = o.get("offer") or {}
        row = [str(o.get("rank") or i), f"{o.get('gpu_count') or 1} x {o.get('gpu') or '?'}", offer.get("provider") or "-",
               f"{_fmt(o.get('vram_per_gpu_gb'), 1)}/{_fmt(o.get('gpu_memory_gb'), 1)}", _fmt(o.get("tokens_per_s"), 1)]
        if training:
            row += [_fmt(o.get("hours")), "$" + _fmt(o.get("price_usd_per_hour")), "$" + _fmt(o.get("job_cost_usd"))]
        else:
            row += ["$" + _fmt(o.get("price_usd_per_hour")), "$" + _fmt(o.get("usd_per_million_tokens"))]
        rows.append(row)
    return rows


def _table_text(rows: list[list[str]]) -> str:
    """A monospace table in a code block; numeric columns right-aligned; rows dropped to fit a section."""
    cells = [[_clip(str(c), _CELL_CHARS) for c in r] for r in rows[: _TABLE_ROWS + 1]]
    numeric = [all(_DIGIT.search(r[j]) and not r[j][0].isalpha() for r in cells[1:]) for j in range(len(cells[0]))]
    widths = [max(len(r[j]) for r in cells) for j in range(len(cells[0]))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric)).rstrip()

    while True:
        text = "```\n" + "\n".join(escape(line(r)) for r in cells) + "\n```"
        if len(text) <= _SECTION_CHARS or len(cells) <= 2:
            return _clip(text, _SECTION_CHARS)
        cells.pop()


def _data_date(p: dict[str, Any], tool_calls: list[Any]) -> str:
    """The prices' date line: the answer's "Prices:" note, else an assumption that dates the prices
    (taken out of the assumptions), else the newest `as_of` in the tool results."""
    if p["note"]:
        return p["note"]
    for a in p["assumptions"]:
        if a.startswith("Prices as of") and _DATE.search(a):
            p["assumptions"].remove(a)
            return a
    dates: list[str] = []
    for tc in tool_calls:
        res = _get(tc, "result")
        if isinstance(res, dict):
            found = [res.get("as_of")] + list((res.get("chart") or {}).get("as_of") or [])
            dates += [d for d in found if isinstance(d, str) and _DATE.fullmatch(d)]
    return f"Prices as of {max(dates)}." if dates else ""


def answer_blocks(answer: Any) -> tuple[str, list[dict[str, Any]]]:
    """Block Kit for an advisor Answer.

    Args:
        answer: an `assistant.api.Answer` (or a dict with the same fields: answer, citations, tool_calls).

    Returns:
        (text, blocks): `text` is the whole answer as plain mrkdwn, the fallback Slack shows in
        notifications and to clients without Block Kit; `blocks` are a verdict section, key
        numbers as fields (at most MAX_FIELDS), a code-block table of offers or options when the
        tools returned them, the rest of the body, the assumptions, and a context block with the
        guide citations and the prices' data date.
    """
    raw = str(_get(answer, "answer", "") or "")
    tool_calls = list(_get(answer, "tool_calls", None) or [])
    citations = list(_get(answer, "citations", None) or [])
    p = _parse(raw)
    blocks: list[dict[str, Any]] = []

    verdict = escape(p["verdict"])
    if verdict:
        bold = len(p["verdict"]) <= _BOLD_VERDICT_CHARS and "*" not in p["verdict"]
        blocks.append({"type": "section", "text": _mrkdwn(f"*{verdict}*" if bold else verdict, _SECTION_CHARS)})

    body: list[str] = p["body"]
    offer_rows, option_rows = _offer_rows(tool_calls), _option_rows(tool_calls)
    fields: list[str] = []
    if option_rows:
        # The table lists the options; the best one's reasons become the key numbers.
        kept, in_first, seen_option = [], False, False
        for line in body:
            s = line.strip()
            if _NUMBERED.match(s):
                in_first, seen_option = not seen_option, True
            elif line[:1].isspace() and s.startswith("- ") and seen_option:
                if in_first:
                    fields.append(s[2:])
            else:
                in_first = False
                kept.append(line)
        body = kept
    elif offer_rows:
        # The table holds the offer rows: drop them and the headings that only introduced them.
        kept = []
        for i, line in enumerate(body):
            s = line.strip()
            nxt = body[i + 1].strip() if i + 1 < len(body) else ""
            if s.startswith("- ") or (s.endswith(":") and nxt.startswith("- ")) or line in kept:
                continue
            kept.append(line)
        body = kept
    else:
        kept = []
        for i, line in enumerate(body):
            s = line.strip()
            if s.startswith("- ") and _DIGIT.search(s) and len(fields) < MAX_FIELDS:
                fields.append(s[2:])
            else:
                kept.append(line)
        # A heading whose bullets all became fields ("Key numbers:") has nothing left under it.
        body = [ln for i, ln in enumerate(kept)
                if not (ln.strip().endswith(":") and (i + 1 == len(kept) or kept[i + 1].strip().endswith(":")))]

    if fields:
        blocks.append({"type": "section", "fields": [_mrkdwn(escape(f), _FIELD_CHARS) for f in fields[:MAX_FIELDS]]})
    table = option_rows or offer_rows
    if table:
        blocks.append({"type": "section", "text": _mrkdwn(_table_text(table), _SECTION_CHARS)})
    if body:
        blocks.append({"type": "section", "text": _mrkdwn(escape("\n".join(body)), _SECTION_CHARS)})
    if not citations and p["why"]:  # quotes without structured citations: keep them as text
        blocks.append({"type": "section", "text": _mrkdwn(escape("\n".join([p.get("why_head", "")] + p["why"])),
                                                          _SECTION_CHARS)})
    date = _data_date(p, tool_calls)
    if p["assumptions"]:
        text = f"*{escape(p['assumptions_head'])}*\n" + "\n".join("• " + escape(a) for a in p["assumptions"])
        blocks.append({"type": "context", "elements": [_mrkdwn(text, _CONTEXT_CHARS)]})

    context = []
    shown = "\n".join(body)
    for c in citations[:9]:
        pid, title, quote = (str(_get(c, k, "") or "") for k in ("passage_id", "title", "quote"))
        piece = f"*[{escape(pid)}]* {escape(title)}".rstrip()
        if quote and quote not in shown:  # a guide-only answer already shows the passages in full
            piece += f": “{escape(_clip(quote, _QUOTE_CHARS))}”"
        context.append(_mrkdwn(piece, _CONTEXT_CHARS))
    if date:
        context.append(_mrkdwn(":date: " + escape(date), _CONTEXT_CHARS))
    if context:
        blocks.append({"type": "context", "elements": context})

    return _clip(escape(raw), _FALLBACK_CHARS), blocks
