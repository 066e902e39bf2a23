"""Maintainer tool: curate the shared offer snapshot into knowledge/prices/offers.csv.

    python -m knowledge.prices.build_snapshot ../shared/data/offers_snapshot.csv

Input: the snapshot's own columns (SkyPilot rows already collapsed per region, with provider,
source and price_scope). Output: offers.csv (normalised, per-GPU-hour prices, as_of per source),
dropped.csv (every row not kept, with the reason) and sources.csv (as_of per source).
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

from knowledge.offers import OFFER_COLUMNS, finalize, parse_skypilot_rows

HERE = Path(__file__).resolve().parent
_DATE = re.compile(r"commit (\d{4}-\d{2}-\d{2})")
# Placeholder prices named in the snapshot's README (gap 5): mithril lists 1.0 per GPU-hour with
# spot equal to on-demand for every row.
_PLACEHOLDER_PROVIDERS = {"mithril": "placeholder prices (1.0 per GPU-hour, spot equal to on-demand; shared/data README gap 5)"}
# Vast's GpuInfo sizes are for all GPUs of the instance (e.g. 2x A100 = 160 GiB).
_MEMORY_IS_TOTAL = {"vast"}


def main(path: str) -> int:
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["provider"], r["source"])].append({
            "InstanceType": r["instance_type"], "AcceleratorName": r["accelerator_name"],
            "AcceleratorCount": r["accelerator_count"], "vCPUs": r["vcpus"], "MemoryGiB": r["memory_gib"],
            "Price": r["price_hourly_usd"], "SpotPrice": r["spot_price_hourly_usd"], "Region": r["region"],
            "gpu_memory_gib": r["gpu_memory_gib"], "price_scope": r["price_scope"]})
    offers, dropped, sources = [], [], []
    for (provider, source), rs in sorted(groups.items()):
        m = _DATE.search(source)
        as_of = m.group(1) if m else ""
        sources.append({"provider": provider, "source": source, "as_of": as_of,
                        "note": "" if as_of else "commit date not shown by the index: date unknown"})
        if provider in _PLACEHOLDER_PROVIDERS:
            dropped += [{"provider": provider, "instance_type": r["InstanceType"], "accelerator_name": r["AcceleratorName"],
                         "region": r["Region"], "reason": _PLACEHOLDER_PROVIDERS[provider], "source": source} for r in rs]
            continue
        res = parse_skypilot_rows(rs, provider, source, as_of or None, memory_is_total=provider in _MEMORY_IS_TOTAL)
        offers += [finalize(o) for o in res.offers]
        dropped += [{k: d[k] for k in ("provider", "instance_type", "accelerator_name", "region", "reason")} | {"source": source}
                    for d in res.dropped]
    for name, data, cols in (("offers.csv", offers, OFFER_COLUMNS),
                             ("dropped.csv", dropped, ("provider", "instance_type", "accelerator_name", "region", "reason", "source")),
                             ("sources.csv", sources, ("provider", "source", "as_of", "note"))):
        with open(HERE / name, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(data)
    print(f"{len(offers)} offers, {len(dropped)} dropped, {len(sources)} sources")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/offers_snapshot.csv"))
