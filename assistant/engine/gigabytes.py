"""An amount in GB or TB: the memory of a card ("a 24gb card", "the 5090's 32GB", "32gb should be enough"),
data kept on disk ("2 TB of checkpoints") or data moved out ("egress ~500 GB"), told apart by the words
of the amount's own clause."""

from __future__ import annotations

__all__ = ["memory_role"]

import re

_MEMORY_NEAR = re.compile(r"card|gpu|vram|class|wala|wali|wale|memory|version|variant|والا|والی|والے|کارڈ|جی پی یو|میموری")
_EGRESS_NEAR = re.compile(r"egress|out of|\bout\b(?! of memory)|outbound|transfer|download|pull(?:ing)? (?:it )?down|"
                          r"serv(?:e|ing) out|send|move|bahar|باہر|ایگریس")
_STORAGE_NEAR = re.compile(r"storage|disk|ssd|nvme|volume|store|checkpoints?\b|persist|bucket|s3|file ?system|"
                           r"اسٹوریج|سٹوریج|فائل سسٹم|رکھ")


def memory_role(v: float, right: str, left: str, has_model: bool, gpu_spans, at: int) -> tuple[str, float] | None:
    right = re.split(r"\d", right, maxsplit=1)[0]  # "2TB of checkpoints ... and ~500GB egress": each amount its own words
    if re.match(r"\s*(?:gb|gib|gigs?|g)?\s*(?:of\s+)?(?:system\s+|host\s+|cpu\s+|ddr\d?\s+)?(?:ram|ریم)\b", right):
        return ("host_ram_gb", v)  # "64gb ram but the gpu only has 8gb": the computer's memory, not the card's
    if re.match(r"\s*(?:gb|gib|gigs?|g)?\s*(?:of vram\s*)?(?:should|would|will|is|be|would be|ho|hai|isn'?t|is not|not|"
                r"won'?t be|wouldn'?t be)?\s*(?:be\s+)?(?:enough|sufficient|suffice|kafi|kaafi|کافی)\b", right) or \
            re.match(r"\s*(?:gb|gib)\s+\S", right) and any(0 < s - at <= 12 for s, _ in gpu_spans):  # "my 32GB 5090"
        return ("gpu_memory_gb", v)  # "32gb should be enough right?": the card's memory
    if re.search(r"(?:card|gpu|کارڈ|جی پی یو)\s*(?:کی|ki|ka|کا|of|has|with)\s*$", left) or \
            gpu_spans and re.match(r"\s*(?:gb|gib)\s*(?:hi|ہی)\s*(?:hai|he|ہے)", right) or \
            gpu_spans and re.search(r"(?:\bit'?s|\bit is|\bit has|اس میں|is mein|isme|میرے والے میں|mere wale mein|"
                                    r"\bmine has|\bmine is)\s*$", left):  # "it's 192GB right?", "میرے والے میں 12GB"
        return ("gpu_memory_gb", v)  # "ایک card کی 192GB میں": the card's memory
    if re.match(r"\s*(?:gb|gib|gigs?|g)?\s*(?:wala|wali|waala|والا|والی)?\s*(?:card|gpu|vram|graphics|کارڈ|جی پی یو)", right) or \
            re.search(r"\bfits? (?:in|on|into|within)\s*$", left):
        return ("gpu_memory_gb", v)  # "a 24gb card with grad checkpointing off"
    # the words after the amount first ("2 TB storage", "500 GB of checkpoints ... to pull down"), then before it
    if _STORAGE_NEAR.search(right[:20]) and _EGRESS_NEAR.search(right[:60]) and \
            re.search(r"\b(?:all of (?:it|them)|everything|it all|them all|the whole)", right[:80]):
        return ("_storage_and_egress", v)  # "keep ~2TB of checkpoints and then download all of it"
    if _STORAGE_NEAR.match(right.lstrip(" .,:-")[:12]):
        return ("storage_gb", v)
    clause = re.split(r"\band\b|[,;+]|\bplus\b|\d", left)[-1][-22:]  # the words of this amount's own clause
    if _EGRESS_NEAR.search(clause):
        return ("egress_gb", v)  # "egress roughly 500 GB of checkpoints", "pulling ~500gb of checkpoints out"
    if re.search(r"\b(?:keep|keeping|store|storing|hold|holding|park|parking)\b\W+(?:\w+\W+){0,2}$", clause):
        return ("storage_gb", v)  # "keep 500gb of checkpoints and download 200gb"
    if _EGRESS_NEAR.search(right[:60]):
        return ("egress_gb", v)
    if _STORAGE_NEAR.search(right[:45]) or re.search(r"dataset|data\b", right[:20]):
        return ("storage_gb", v)
    if _EGRESS_NEAR.search(left[-30:]):
        return ("egress_gb", v)
    if _STORAGE_NEAR.search(left[-30:]):
        return ("storage_gb", v)
    if any(0 <= at - e <= 12 and re.fullmatch(r"\s*(?:'s|’s|with|has|having|of|is|ka|ki|کا|کی|والا|والی|ہے جس میں|jis mein|which has|will have|would have|has|have|ہے|hai)?\s*[(،,]?\s*",
                                              left[len(left) - (at - e):])
           for _, e in gpu_spans) or re.search(r"\b(?:both|dono|donon|each)\b\W+(?:\w+\W+){0,2}$|دونوں\s+(?:\S+\s+){0,2}$",
                                               left[-24:]) and gpu_spans:
        return ("gpu_memory_gb", v)  # "the 5090's 32GB", "T4 (16 GB)", "both are 24GB"
    if _MEMORY_NEAR.search(right[:25]) or re.search(r"(?:with|of|has|having|got|only|my|a|an|one|single|\()\s*$", left) \
            or not gpu_spans:
        return ("gpu_memory_gb", v)
    return None
