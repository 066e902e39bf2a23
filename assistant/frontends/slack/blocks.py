"""Block Kit for an advisor Answer, built from its typed sections (assistant/engine/answer.py).

Pure formatting (no Slack client, no I/O), so it is tested without a workspace. Nothing here parses
rendered text: the blocks come from `answer.sections` through assistant.engine.render.render_slack
(verdict in bold, key numbers as fields, tables as code blocks, the way forward as a numbered list,
assumptions and sources as context). An answer without sections (an error reply) is one section.

Slack's limits (api.slack.com/reference/block-kit/blocks): 50 blocks a message, 3,000 characters
a section text, 10 fields of 2,000, 10 context elements of 2,000; `text` is cut at 40,000.
"""

from __future__ import annotations

__all__ = ["MAX_FIELDS", "answer_blocks", "escape"]

from typing import Any

from assistant.engine.render import render_slack
from assistant.engine.render.slack import MAX_FIELDS, clip, escape

_SECTION_CHARS = 3000
_FALLBACK_CHARS = 39_000


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def answer_blocks(answer: Any) -> tuple[str, list[dict[str, Any]]]:
    """Block Kit for an advisor Answer.

    Args:
        answer: an `assistant.service.advisor.Answer` (or a dict with the same fields) whose `sections` hold
            the typed answer; `answer` (the text) is used only when there are no sections.

    Returns:
        (text, blocks): `text` is the whole answer as plain mrkdwn, the fallback Slack shows in
        notifications and to clients without Block Kit; `blocks` the Block Kit message.
    """
    sections = _get(answer, "sections")
    if sections:
        return render_slack(sections)
    text = escape(str(_get(answer, "answer", "") or ""))
    if not text:
        return "", []
    return clip(text,
                _FALLBACK_CHARS), [{"type": "section", "text": {"type": "mrkdwn", "text": clip(text, _SECTION_CHARS),
                                                                       "verbatim": True}}]
