"""Cloud instance names as people write them ("g5.2xlarge", "a p4d", "Standard_NC24ads_A100_v4"):
which provider, which GPU and how many, read from the shipped offers table
(knowledge/prices/offers.csv, SkyPilot catalog rows with their source), never restated in code.

    instance_index() -> {lowercase name: Instance}   exact instance types, and AWS-style families
                                                     (the part before the dot) that belong to one
                                                     provider and one GPU
"""

from __future__ import annotations

__all__ = ["Instance", "instance_index"]

import csv
import re
from functools import lru_cache
from typing import NamedTuple

from knowledge.catalog import DATA_DIR

_OFFERS = DATA_DIR / "prices" / "offers.csv"


class Instance(NamedTuple):
    provider: str
    gpu_name: str
    gpu_count: int | None  # None for a family ("g5"), whose sizes differ in GPU count


@lru_cache(maxsize=1)
def instance_index() -> dict[str, Instance]:
    exact: dict[str, set[Instance]] = {}
    families: dict[str, set[tuple[str, str]]] = {}
    with open(_OFFERS, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            name = row["instance_type"].strip().lower()
            if not name:
                continue
            exact.setdefault(name, set()).add(Instance(row["provider"], row["gpu_name"], int(float(row["gpu_count"]))))
            family = name.split(".")[0]
            if "." in name and re.match(r"[a-z][a-z0-9-]+$", family):
                families.setdefault(family, set()).add((row["provider"], row["gpu_name"]))
    out = {f: Instance(*next(iter(v)), None) for f, v in families.items() if len(v) == 1}
    out.update({n: next(iter(v)) for n, v in exact.items() if len(v) == 1})
    return out
