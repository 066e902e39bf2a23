"""GPU names as written in a question resolved to catalog cards: the member with the memory written
("A100 80GB", "80GB wala A100"), the other side of an elided comparison ("A100 40GB vs 80GB", "H100 SXM
vs PCIe"), and one entry per card ("A100 40GB ... the A100" is one card; "RTX 4070 Super vs RTX 4070" two)."""

from __future__ import annotations

__all__ = ["elided_variants", "one_per_card", "variant_by_memory"]

import re
from typing import Any

from assistant.engine.names import Span
from knowledge.catalog import gpu_name_key, gpu_names


def variant_by_memory(t: str, g: Any) -> Any:
    """"80GB wala A100", "A100 (80 GB)": the family member with that memory."""
    _, families = gpu_names()
    members = families.get(re.sub(r"[^a-z0-9]", "", g.value.lower()), [])
    if not members:
        return g
    m = re.match(r"\s*\(?(\d{1,3})\s?(?:gb|gib|g\b)", t[g.end:g.end + 12]) or \
        re.search(r"(\d{1,3})\s?(?:gb|gib)\s*(?:wala|wali|والا|والی|version|variant)?\s*$", t[max(0, g.start - 16):g.start])
    bare = None if m else re.match(r"\s*(\d{2,3})(?=\s*(?:$|[,.;:?!)/]|(?:vs|or|and|spot|on-demand|on|for|in|at|with|"
                                   r"pcie|sxm|instances?|nodes?)\b))", t[g.end:g.end + 20])  # "A100 40 vs L40S"
    m = m or bare
    if not m:
        return g
    fits = [x for x in members if x.memory_gib and abs(x.memory_gib - float(m.group(1))) < 1]
    end = g.end + m.end() if bare else g.end  # the bare size is part of the name, not a quantity
    return Span(g.start, end, f"{fits[0].family} {m.group(1)}GB", g.text) if fits else g


def elided_variants(t: str, gpus: list) -> list:
    """"A100 40GB vs 80GB": the second side is the same family with the other memory."""
    _, families = gpu_names()
    out = []
    for g in gpus:
        family = re.sub(r"\s+\d+GB$", "", g.value)  # "A100 40GB" -> A100, "RTX 4060 Ti" stays
        m = re.match(r"\s*(?:\(?\d+\s?gb\)?)?\s*(?:vs\.?|versus|or|and|/|ya|یا|اور)\s*(\d{1,3})\s?gb\b", t[g.end:g.end + 30])
        members = families.get(re.sub(r"[^a-z0-9]", "", family.lower()), [])
        if m and any(x.memory_gib and abs(x.memory_gib - float(m.group(1))) < 1 for x in members):
            out.append(Span(g.end + m.start(1), g.end + m.end(), f"{family} {m.group(1)}GB", m.group(0)))
        form = re.match(r"\s*(?:vs\.?|versus|or|and|/|ya|یا|اور)\s*(sxm\d?|pcie|nvl)\b", t[g.end:g.end + 20])
        other = [x for x in families.get(re.sub(r"[^a-z0-9]", "", re.split(r"\s", family)[0].lower()), [])
                 if form and form.group(1).rstrip("0123456789") in x.name.lower() and x.name != g.value]
        if other:  # "H100 SXM vs PCIe": the same family in the other form
            out.append(Span(g.end + form.start(1), g.end + form.end(), other[0].name, form.group(0)))
        the = re.search(r"^\W*(?:\w+\W+){0,16}?(?:vs\.?|versus|or|ya)\b[^.?!]{0,25}?\bthe (\d{2,3})(?:\s?gb)?\b",
                        t[g.end:g.end + 80])  # "an A100 40GB ... or do i need the 80"
        if the and not m and any(x.memory_gib and abs(x.memory_gib - float(the.group(1))) < 1 for x in members) and \
                f"{family} {the.group(1)}GB" != g.value:
            out.append(Span(g.end + the.start(1), g.end + the.end(), f"{family} {the.group(1)}GB", the.group(0)))
    return out


def one_per_card(names: list[str]) -> list[str]:
    """"A100 40GB ... isn't the A100 stronger": a bare family after one of its members is that member;
    "RTX 4070 Super vs RTX 4070" are two cards."""
    _, families = gpu_names()

    def member_of(o: str, g: str) -> bool:
        members = families.get(gpu_name_key(g), [])
        return o.lower().startswith(g.lower() + " ") and bool(members) and any(
            o.lower() in (m.name.lower(), f"{m.family} {round(m.memory_gib or 0)}gb".lower()) for m in members)
    return [g for g in names if not any(o != g and member_of(o, g) for o in names)]
