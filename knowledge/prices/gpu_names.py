"""GPU names in price questions mean what people mean: "A100 80GB" covers the SXM and the PCIe card unless
a form factor is named; a comma list names several GPUs."""

from __future__ import annotations

__all__ = ["price_gpu_ids"]

import re

from knowledge.catalog import gpu_ids_for, load_gpus

_FORM_WORDS = re.compile(r"(?i)(sxm\d?|pci-?e?|nvl(ink)?|oam|mezzanine)")


def price_gpu_ids(text: str) -> tuple[list[str], str, list[str]]:
    """GPU catalog ids for a --gpu value, a sentence saying what was covered, and the GPU names included.

    A name that resolves to one GPU and names no form factor also covers the family members with the same
    memory in other forms (A100 80GB -> A100 80GB SXM + A100 80GB PCIe; V100 -> SXM2 16GB + PCIe 16GB).

    Raises:
        UnknownGpu: an item no GPU matches (with the closest names).
    """
    gpus = {g.id: g for g in load_gpus()}
    ids: list[str] = []
    notes: list[str] = []
    for item in [p.strip() for p in str(text).split(",") if p.strip()]:
        got, note = gpu_ids_for(item)
        if len(got) == 1 and not _FORM_WORDS.search(item):
            g = gpus[got[0]]
            same = [o.id for o in gpus.values() if g.family and o.family == g.family and o.memory_gib == g.memory_gib
                    and o.form_factor != g.form_factor and o.id != g.id]
            if same:
                got = got + same
                note = (f"'{item}' covers {' and '.join(gpus[i].name for i in got)} (name a form, e.g. "
                        f"'{gpus[got[0]].name}', for one).")
        ids += [i for i in got if i not in ids]
        if note:
            notes.append(note)
    return ids, " ".join(notes), [gpus[i].name for i in ids if i in gpus]
