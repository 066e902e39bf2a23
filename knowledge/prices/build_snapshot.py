"""Maintainer tool: curate the shared offer snapshot into knowledge/prices/offers.csv.

    python -m knowledge.prices.build_snapshot ../shared/data/offers_snapshot.csv

Input: the snapshot's own columns (SkyPilot rows already collapsed per region, with provider,
source and price_scope). Output: offers.csv (normalised through knowledge.offers.Normaliser, the
same per-provider code path as `catalog refresh`; per-GPU-hour prices, as_of per source),
dropped.csv (every row not kept, with the reason) and sources.csv (as_of per source).
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

from knowledge.offers import DROPPED_COLUMNS, OFFER_COLUMNS, Normaliser, finalize

HERE = Path(__file__).resolve().parent
_DATE = re.compile(r"commit (\d{4}-\d{2}-\d{2})")


def _as_skypilot_row(r: dict[str, str]) -> dict[str, str]:
    """A shared-snapshot row in SkyPilot vms.csv terms (its zones are already collapsed per region; GCP A2/A3/
    A4/G2 rows already carry the host VM, which the GCP rule recognises by their machine type)."""
    return {"InstanceType": r["instance_type"], "AcceleratorName": r["accelerator_name"],
            "AcceleratorCount": r["accelerator_count"], "vCPUs": r["vcpus"], "MemoryGiB": r["memory_gib"],
            "Price": r["price_hourly_usd"], "SpotPrice": r["spot_price_hourly_usd"], "Region": r["region"],
            "gpu_memory_gib": r["gpu_memory_gib"]}


def main(path: str) -> int:
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["provider"], r["source"])].append(_as_skypilot_row(r))
    offers, dropped, sources = [], [], []
    for (provider, source), rs in sorted(groups.items()):
        m = _DATE.search(source)
        as_of = m.group(1) if m else ""
        sources.append({"provider": provider, "source": source, "as_of": as_of,
                        "date_from": "commit date named in the source" if as_of else "unknown",
                        "note": "" if as_of else "commit date not shown by the index: date unknown"})
        n = Normaliser(provider, source, as_of or None)  # the same per-provider rules as `catalog refresh`
        for r in rs:
            n.add(r)
        res = n.finish()
        offers += [finalize(o) for o in res.offers]
        dropped += res.dropped
    for name, data, cols in (("offers.csv", offers, OFFER_COLUMNS), ("dropped.csv", dropped, DROPPED_COLUMNS),
                             ("sources.csv", sources, ("provider", "source", "as_of", "date_from", "note"))):
        with open(HERE / name, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(data)
    print(f"{len(offers)} offers, {len(dropped)} dropped, {len(sources)} sources")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/offers_snapshot.csv"))
