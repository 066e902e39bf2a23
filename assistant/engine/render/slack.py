"""Block Kit from the answer's layout (pure: no Slack client, no I/O).

Slack's limits (api.slack.com/reference/block-kit/blocks): 50 blocks a message, 3,000 characters a
section text, 10 fields of 2,000, 10 context elements of 2,000; `text` is cut at 40,000.
"""

from __future__ import annotations

__all__ = ["MAX_FIELDS", "blocks_for", "clip", "escape"]

import re
from typing import Any

from assistant.engine.render.layout import Block

MAX_FIELDS = 10
MAX_BLOCKS = 50
_SECTION_CHARS = 3000
_FIELD_CHARS = 2000
_CONTEXT_CHARS = 2000
_CONTEXT_ELEMENTS = 10
_FALLBACK_CHARS = 39_000
_QUOTE_CHARS = 280
_OPTION_COLUMNS = 3  # options side by side in Slack: the best three
_BOLD_CHARS = 200  # a whole paragraph in bold reads badly: only a short verdict is bolded
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")


def escape(text: str) -> str:
    """Escape the three characters Slack's mrkdwn reserves (&, <, >); everything else, RTL included, is kept."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return _PARTIAL_ENTITY.sub("", text[: limit - 1]).rstrip() + "…"


def _mrkdwn(text: str, limit: int) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": clip(text, limit), "verbatim": True}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(text, _SECTION_CHARS)}


def _table_text(b: Block) -> str:
    """A monospace table in a code block; numeric columns right-aligned; rows dropped to fit a section."""
    rows = [b.headers] + b.rows
    widths = [max(len(r[j]) for r in rows if j < len(r)) for j in range(len(b.headers))]
    num = b.numeric + [False] * len(widths)

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(r, widths, num)).rstrip()

    while True:
        text = "```\n" + "\n".join(escape(line(r)) for r in rows) + "\n```"
        if len(text) <= _SECTION_CHARS or len(rows) <= 2:
            return clip(text, _SECTION_CHARS)
        rows.pop()


def _numbered(b: Block) -> str:
    out = []
    for i, (title, subs) in enumerate(b.items, 1):
        out.append(f"{i}. {escape(title)}")
        out += [f"      • {escape(x)}" for x in subs]
    return "\n".join(out)


def _table_section(b: Block, heading: str) -> dict[str, Any]:
    """A table as a code block under its heading; an options table cut to a phone's width."""
    title = f"*{escape(heading)}*\n" if heading else ""
    if b.role == "options" and len(b.headers) > _OPTION_COLUMNS + 1:
        b = Block("table", headers=b.headers[:_OPTION_COLUMNS + 1], numeric=b.numeric[:_OPTION_COLUMNS + 1],
                  rows=[r[:_OPTION_COLUMNS + 1] for r in b.rows], role=b.role)
    return _section(title + _table_text(b))


def blocks_for(blocks: list[Block], fallback: str) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, Block Kit blocks): verdict in bold, key numbers as fields, tables as code blocks,
    assumptions and sources as context."""
    out: list[dict[str, Any]] = []
    heading = ""
    headline: list[str] = []
    sources: list[dict[str, Any]] = []
    for b in blocks:
        if b.role == "details":
            continue  # the calculators' own notes stay in the fallback text
        if b.kind == "understood":
            out.append({"type": "context", "elements": [_mrkdwn("_" + escape(b.text) + "_", _CONTEXT_CHARS)]})
        elif b.kind == "headline":
            headline.append(b.text)
            continue
        elif b.kind == "heading":
            heading = b.text.rstrip(":：")
            continue
        elif b.kind == "notice":
            out.append(_section(":warning: " + escape(b.text)))
        elif b.kind == "bullets" and b.role == "key_numbers":
            fields = [_mrkdwn(escape(x), _FIELD_CHARS) for x in b.items[:MAX_FIELDS]]
            out.append({"type": "section", "text": _mrkdwn(f"*{escape(heading)}*", _SECTION_CHARS), "fields": fields})
            if len(b.items) > MAX_FIELDS:
                out.append(_section("\n".join("• " + escape(x) for x in b.items[MAX_FIELDS:])))
        elif b.kind == "bullets" and b.role == "assumptions":
            text = f"*{escape(heading)}*\n" + "\n".join("• " + escape(x) for x in b.items)
            out.append({"type": "context", "elements": [_mrkdwn(text, _CONTEXT_CHARS)]})
        elif b.kind == "bullets":
            out.append(_section(f"*{escape(heading)}*\n" + "\n".join("• " + escape(x) for x in b.items)))
        elif b.kind == "numbered":
            out.append(_section(f"*{escape(heading)}*\n" + _numbered(b)))
        elif b.kind == "table":
            out.append(_table_section(b, heading))
        elif b.kind == "cites":
            for pid, title, quote in b.items[: _CONTEXT_ELEMENTS - 1]:
                piece = f"*[{escape(pid)}]* {escape(title)}: “{escape(clip(quote, _QUOTE_CHARS))}”"
                sources.append(_mrkdwn(piece, _CONTEXT_CHARS))
        elif b.kind == "note" and b.role == "date":
            sources.append(_mrkdwn(":date: " + escape(b.text), _CONTEXT_CHARS))
        elif b.kind == "note":
            out.append({"type": "context", "elements": [_mrkdwn(escape(b.text), _CONTEXT_CHARS)]})
        heading = ""
    if headline:
        top = escape(headline[0])
        bold = len(top) <= _BOLD_CHARS and "*" not in top
        first = _section("\n".join([f"*{top}*" if bold else top] + [escape(h) for h in headline[1:]]))
        at = 1 if out and out[0]["type"] == "context" and blocks and blocks[0].kind == "understood" else 0
        out.insert(at, first)
    if sources:
        out.append({"type": "context", "elements": sources[:_CONTEXT_ELEMENTS]})
    if len(out) > MAX_BLOCKS:
        out = out[: MAX_BLOCKS - 1] + [out[-1]]
    return clip(escape(fallback), _FALLBACK_CHARS), out
