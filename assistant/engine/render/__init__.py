"""Renderers of the typed answer, one per front end: CLI text, Gradio Markdown, Slack Block Kit.

Each reads `Sections` (assistant/engine/answer.py) through the same layout; none parses text.
    render_text(sections) -> str
    render_markdown(sections) -> str
    render_slack(sections) -> (fallback_text, blocks)
"""

from __future__ import annotations

__all__ = ["render", "render_markdown", "render_slack", "render_text", "scrub_sections"]

from typing import Any

from assistant.engine.answer import Sections
from assistant.engine.render.layout import Block, cell_text, finding_text, key_number_text, layout, offer_text
from assistant.engine.formatting import table as text_table


def _sections(s: Sections | dict[str, Any]) -> Sections:
    return s if isinstance(s, Sections) else Sections.model_validate(s)


def _text_block(b: Block) -> list[str]:
    if b.kind == "heading":
        return ["", b.text.rstrip(":：") + ":"]
    if b.kind == "bullets":
        return [f"- {x}" for x in b.items]
    if b.kind == "numbered":
        out = []
        for i, (title, subs) in enumerate(b.items, 1):
            out.append(f"{i}. {title}")
            out += [f"   - {x}" for x in subs]
        return out
    if b.kind == "table":
        return text_table(b.headers, b.rows, "".join("r" if n else "l" for n in b.numeric)).split("\n")
    if b.kind == "cites":
        return [f"- [{pid}] “{quote}” ({title})" for pid, title, quote in b.items]
    if b.kind == "note" or b.kind == "understood":
        return [b.text] if b.kind == "understood" else ["", b.text]
    return [b.text]


def render_text(sections: Sections | dict[str, Any]) -> str:
    """Plain text for the terminal: headings end with ':', one bullet per line, fixed-width tables."""
    blocks = layout(_sections(sections))
    lines: list[str] = []
    for i, b in enumerate(blocks):
        part = _text_block(b)
        if b.kind == "headline" and i > 0 and blocks[i - 1].kind == "understood":
            part = [""] + part
        lines += part
    return _squeeze(lines)


def _squeeze(lines: list[str]) -> str:
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and (not out or not out[-1].strip()):
            continue
        out.append(ln.rstrip())
    return "\n".join(out).strip()


def _md_escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_block(b: Block) -> list[str]:
    if b.kind == "understood":
        return [f"_{b.text}_", ""]
    if b.kind == "headline":
        return [f"**{b.text}**" if len(b.text) <= 200 else b.text, ""]
    if b.kind == "notice":
        return [f"> {b.text}", ""]
    if b.kind == "heading":
        return ["", f"#### {b.text.rstrip(':：')}", ""]
    if b.kind == "bullets":
        return [f"- {x}" for x in b.items] + [""]
    if b.kind == "numbered":
        out = []
        for i, (title, subs) in enumerate(b.items, 1):
            out.append(f"{i}. {title}")
            out += [f"    - {x}" for x in subs]
        return out + [""]
    if b.kind == "table":
        head = "| " + " | ".join(_md_escape_cell(h) for h in b.headers) + " |"
        sep = "|" + "|".join("---:" if n else ":---" for n in b.numeric) + "|"
        body = ["| " + " | ".join(_md_escape_cell(c) for c in r) + " |" for r in b.rows]
        return [head, sep, *body, ""]
    if b.kind == "cites":
        return [f"- **[{pid}]** “{quote}” — _{title}_" for pid, title, quote in b.items] + [""]
    if b.kind == "note":
        return ["", f"_{b.text}_", ""]
    return [b.text, ""]


def render_markdown(sections: Sections | dict[str, Any]) -> str:
    """Markdown for the Gradio chat: bold verdict, #### headings, lists, pipe tables, italic notes;
    the calculators' own notes folded in a <details> block."""
    lines: list[str] = []
    first = True
    for b in layout(_sections(sections)):
        if b.kind == "headline":
            lines += [f"**{b.text}**" if first and len(b.text) <= 300 else b.text, ""]
            first = False
        elif b.role == "details" and b.kind == "heading":
            lines += ["", f"<details><summary>{b.text}</summary>", ""]
        elif b.role == "details":
            lines += [f"- {x}" for x in b.items] + ["", "</details>", ""]
        else:
            lines += _md_block(b)
    return _squeeze(lines)


def render_slack(sections: Sections | dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, Block Kit blocks) for Slack; see assistant/engine/render/slack.py."""
    from assistant.engine.render.slack import blocks_for

    s = _sections(sections)
    return blocks_for(layout(s), render_text(s))


def render(sections: Sections | dict[str, Any], fmt: str = "text") -> str:
    """render_text or render_markdown by name ('text' | 'markdown')."""
    return render_markdown(sections) if fmt == "markdown" else render_text(sections)


def scrub_sections(sections: Sections | dict[str, Any], unbacked: list[str]) -> Sections:
    """The answer without the statements that show a number no tool result or user message backs.

    The grounding check reads the rendered text; this drops, in the typed answer, each finding, key
    number, table row, option or note whose own text (in the answer's language) shows one of
    `unbacked`, so headings, lists and tables keep their shape (no text is cut apart)."""
    s = _sections(sections).model_copy(deep=True)
    lang = s.lang

    def bad(text: str) -> bool:
        return any(u and u in text for u in unbacked)

    for name in ("understood", "headline", "explanation", "assumptions", "notices"):
        setattr(s, name, [f for f in getattr(s, name) if not bad(finding_text(lang, f))])
    s.key_numbers = [k for k in s.key_numbers if not bad(key_number_text(lang, k))]
    for t in s.tables:
        units = list(t.units) + [""] * len(t.columns)
        t.rows = [r for r in t.rows if not bad(" ".join(cell_text(lang, c, units[i]) for i, c in enumerate(r)))]
    for name in ("options", "way_forward"):
        kept = []
        for o in getattr(s, name):
            o.numbers = [k for k in o.numbers if not bad(key_number_text(lang, k))]
            if o.offer and bad(offer_text(lang, o.offer)):
                o.offer = None
            if not bad(finding_text(lang, o.title)):
                kept.append(o)
        setattr(s, name, kept)
    s.tables = [t for t in s.tables if t.rows]
    s.details = [d for d in s.details if not bad(d)]
    return s
