"""An amount of time: how long a job or an endpoint runs (duration) or the time it must finish in
(deadline), told apart by the words around it ("by", "within", "I only have", "kaggle kills at")."""

from __future__ import annotations

__all__ = ["time_role"]

import re

from knowledge.lexicon import patterns


def time_role(hours: float, left: str, right: str) -> tuple[str, float]:
    if hours < 1 / 60 and re.search(rf"(?:{patterns('ttft_cues').pattern})[^.?!]{{0,40}}$", left):
        return ("observed_ttft_s", hours * 3600)  # "the first token takes 4 s": a time the user sees, in seconds
    cue = patterns("checkpoint_cues").pattern
    if re.search(rf"(?:{cue})[^.?!\d]{{0,25}}$", left) or re.match(rf"\s*\w*\s*(?:pe|par|پر|on)?\s*(?:a |ek )?(?:{cue})", right):
        return ("checkpoint_every_hours", hours)  # "checkpoint every 30 min", "checkpoint har 30 min pe save"
    if hours == 24 and re.match(r"\s*\w*\s*(?:/\s*7|a day|chal|چل|run|non-?stop|round the clock)", right):
        return ("_always_on", hours)  # "24 گھنٹے چلے گا", "24 hours a day": always on, not a one-day job
    if re.search(r"(?:kills?|limit|cap|time ?out|times out|cut ?off|max(?:imum)? (?:session|runtime))\b[^.?!]{0,20}$", left):
        return ("deadline_hours", hours)  # "kaggle kills the session at 12h"
    cue = patterns("deadline_cues")
    if re.search(r"(?:call it|say|i\.e\.|that'?s|so|roughly)\s*~?\s*$", left) and cue and cue.search(left[-40:]):
        return ("deadline_hours", hours)  # "by Friday — call it 48 hours"
    l_tail = left[-10:]  # "by 6 hours", "within 2 days": the cue sits right before the amount
    if re.match(r"\s*\w*\s*(?:tak|تک)\s+(?:musalsal|lagatar|مسلسل|لگاتار|روزانہ|چل)", right):
        return ("duration_hours", hours)  # "ایک ہفتے تک مسلسل چلانے": for a week, non-stop
    if cue and cue.search(l_tail) or \
            re.match(r"\s*\w*\s*(?:tak|تک|کے اندر|اندر|ke andar|andar|se pehle|سے پہلے|میں|mein|me)\b", right) \
            or re.search(r"(?:deadline|due\b|ڈیڈ ?لائن)", left) or \
            re.search(r"\b(?:i|we) (?:only )?(?:have|got)\b[^.?!]{0,22}$", left) or \
            re.search(r"(?:میرے پاس|ہمارے پاس|mere paas|hamare paas)\W+(?:\w+\W+){0,2}$", left) or \
            re.search(r"\b(?:sirf|only|bas|just)\W*$|صرف\W*$", left) and \
            re.match(r"\s*\w*\s*(?:hain|hai|ہیں|ہے|left|baqi|باقی)\b", right) or \
            re.match(r"\s*\w*\s*(?:ka|ki|کا|کی)\s+(?:time|waqt|وقت)\s+(?:hai|ہے)", right) or \
            re.match(r"\s*\w*\s*(?:ki|ka|کی|کا|of)?\s*(?:deadline|ڈیڈ ?لائن)", right) or \
            re.search(r"\(\W*$", left) and cue and cue.search(left[-40:]):  # "until end of quarter (~6 weeks)"
        return ("deadline_hours", hours)
    return ("duration_hours", hours)
