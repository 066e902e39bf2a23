"""`catalog refresh`: read catalog inputs, normalise each file through knowledge.offers (the same code path
as the shipped snapshot), then swap a new catalog in. Per-file: good files load, bad files are reported with
file and line and leave their provider's old rows in place; strict mode aborts on any bad file.
"""

from __future__ import annotations

__all__ = ["run_refresh"]

import datetime as dt
import json
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Protocol

from knowledge.offers import Normaliser, finalize, provider_rule, provider_rules
from knowledge.prices.reader import BadFile, CatalogInput, download, expand_inputs, iter_rows
from knowledge.prices.report import CatalogError, RefreshReport
from tools.errors import InvalidInput


class CatalogStore(Protocol):
    """What a refresh needs of the price database (knowledge.price_db.PriceDb)."""

    today: dt.date | None

    def snapshot_rows(self) -> tuple[list[dict], list[dict], list[dict], dict[str, str]]: ...

    def write_new(self, offers: list[dict], dropped: list[dict], sources: list[dict], meta: dict[str, str]) -> None: ...


_PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def _published_providers() -> list[str]:
    return [p for p, r in provider_rules().items() if r.get("published") == "yes"]


def _check_as_of(as_of: str | None, today: dt.date) -> str | None:
    if as_of is None:
        return None
    try:
        d = dt.date.fromisoformat(str(as_of).strip())
    except ValueError:
        raise InvalidInput("as_of", as_of, "a date as YYYY-MM-DD") from None
    if d > today:
        raise InvalidInput("as_of", as_of, f"a date no later than today ({today.isoformat()})")
    return d.isoformat()


def _fetch_all(urls: list[tuple[str, str]], tmp: Path, timeout_s: float, progress: Callable[[str], None] | None,
               missing_ok: bool) -> tuple[list[CatalogInput], list[dict[str, str]]]:
    """Download (provider, url) pairs; any failure but a 404 of the published catalog aborts the refresh."""
    inputs, skipped = [], []
    for i, (prov, url) in enumerate(urls, start=1):
        if progress:
            progress(f"[{i}/{len(urls)}] fetching {url}")
        dest = tmp / prov / "vms.csv"
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            date, how = download(url, dest, timeout_s, progress)
        except BadFile as exc:
            if missing_ok and exc.message.startswith("HTTP 404"):
                skipped.append({"file": url, "why": "not in the published catalog (HTTP 404)"})
                continue
            raise CatalogError(f"{exc}. Nothing was changed.") from None
        inputs.append(CatalogInput(url, dest, prov, date, how))
    return inputs, skipped


def _gather(sources: list[str] | None, provider: str | None, tmp: Path, catalog_url: str, timeout_s: float,
            progress: Callable[[str], None] | None) -> tuple[list[CatalogInput], list[dict[str, str]]]:
    if not sources:
        base = catalog_url.rstrip("/")
        return _fetch_all([(p, f"{base}/{p}/vms.csv") for p in _published_providers()], tmp, timeout_s, progress,
                          missing_ok=True)
    urls = [s for s in sources if s.startswith(("http://", "https://"))]
    for s in sources:
        if "://" in s and s not in urls:
            raise InvalidInput("from", s, "a file, a folder, or an http(s):// URL")
    pairs = []
    for u in urls:
        parts = [p for p in urllib.parse.urlparse(u).path.split("/") if p]
        pairs.append(((provider or (parts[-2] if len(parts) >= 2 else "")).lower(), u))
    inputs, skipped = _fetch_all(pairs, tmp, timeout_s, progress, missing_ok=False)
    try:
        inputs += expand_inputs([s for s in sources if s not in urls], provider)
    except BadFile as exc:
        raise CatalogError(f"{exc}. Nothing was changed.") from None
    skipped += [{"file": c.label, "why": c.skipped} for c in inputs if c.path is None]
    return [c for c in inputs if c.path is not None], skipped


def _normalise(c: CatalogInput) -> Any:
    """One file through the per-provider normaliser. Raises BadFile."""
    n = Normaliser(c.provider, c.label, c.as_of)
    for row in iter_rows(c.path, c.label):
        n.add(row)
    res = n.finish()
    if res.gpu_rows and not res.offers:
        reasons: dict[str, int] = {}
        for d in res.dropped:
            reasons[d["reason"]] = reasons.get(d["reason"], 0) + 1
        top = "; ".join(f"{v} x {k}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
        raise BadFile(c.label, 0, f"no valid GPU offer in the file ({len(res.dropped)} rows dropped: {top})")
    return res


def run_refresh(db: CatalogStore, sources: list[str] | None, provider: str | None,
                progress: Callable[[str], None] | None, *, strict: bool, as_of: str | None, catalog_url: str,
                timeout_s: float) -> RefreshReport:
    """See PriceDb.refresh."""
    today = db.today or dt.date.today()
    as_of = _check_as_of(as_of, today)
    report = RefreshReport()
    tmp = Path(tempfile.mkdtemp(prefix="gpu-advisor-refresh-"))
    try:
        inputs, report.skipped = _gather(sources, provider, tmp, catalog_url, timeout_s, progress)
        loaded: dict[str, list[tuple[CatalogInput, Any]]] = {}
        failed: set[str] = set()
        for i, c in enumerate(inputs, start=1):
            if as_of:
                c.as_of, c.date_from = as_of, "--as-of"
            if not _PROVIDER_NAME.match(c.provider):
                report.skipped.append({"file": c.label, "why": f"folder name {c.provider!r} is not a provider name "
                                       "(letters, digits, '-', '_'); pass --provider NAME"})
                continue
            if progress:
                progress(f"[{i}/{len(inputs)}] reading {c.label} ({c.provider})")
            try:
                res = _normalise(c)
            except BadFile as exc:
                report.bad.append({"file": exc.label, "line": exc.line, "error": exc.message, "provider": c.provider})
                failed.add(c.provider)
                continue
            if not res.gpu_rows:
                report.skipped.append({"file": c.label, "why": "no GPU rows (CPU-only catalog)"})
                continue
            loaded.setdefault(c.provider, []).append((c, res))
        report.files = len(inputs)
        bad_text = "; ".join(f"{b['file']}" + (f" line {b['line']}" if b["line"] else "") + f": {b['error']}"
                             for b in report.bad)
        if report.bad and strict:
            raise CatalogError(f"--strict: {len(report.bad)} bad file(s): {bad_text}. Nothing was changed.")
        for p in failed:
            loaded.pop(p, None)  # a provider with a bad file keeps its old rows
        if not loaded:
            why = bad_text or "no vms.csv with GPU rows found in " + ", ".join(sources or [catalog_url])
            raise CatalogError(f"{why}. Nothing was changed.")
        _swap(db, loaded, report, today, progress)
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(db: CatalogStore, loaded: dict[str, list], report: RefreshReport, today: dt.date,
          progress: Callable[[str], None] | None) -> None:
    old, old_dropped, old_sources, meta = db.snapshot_rows()
    known = {o["provider"] for o in old}
    new_offers, new_dropped, new_sources = [], [], []
    key = lambda o: (o["instance_type"] or "", o["accelerator_name"], o["gpu_count"], o["region"], o["gpu_memory_gb"])  # noqa: E731
    for prov, items in loaded.items():
        new = []
        for _, res in items:
            new += [finalize(o) for o in res.offers]
            res.offers.clear()  # keep one copy of a large provider's rows in memory
        for c, res in items:
            new_dropped += res.dropped
            report.dropped += len(res.dropped)
            for k, v in res.unmapped.items():
                report.unmapped[k] = report.unmapped.get(k, 0) + v
            new_sources.append({"provider": prov, "source": c.label, "as_of": c.as_of, "date_from": c.date_from,
                                "note": f"refreshed {today.isoformat()}"})
            report.dates[prov] = {"as_of": c.as_of, "date_from": c.date_from}
        before = {key(o): o for o in old if o["provider"] == prov}
        after = {key(o): o for o in new}
        changed = sum(1 for k in before.keys() & after.keys()
                      if (before[k]["price_usd_per_hour"], before[k]["spot_price_usd_per_hour"])
                      != (after[k]["price_usd_per_hour"], after[k]["spot_price_usd_per_hour"]))
        report.per_provider[prov] = {"added": len(after.keys() - before.keys()), "changed": changed,
                                     "removed": len(before.keys() - after.keys()), "rows": len(after)}
        if prov not in known and not provider_rule(prov).get("source"):
            report.new_providers.append(prov)
        meta[f"refreshed:{prov}"] = today.isoformat()
        new_offers += new
    meta["last_refresh"] = json.dumps({"on": today.isoformat(), "files": report.files, "skipped": report.skipped,
                                       "bad": report.bad, "new_providers": report.new_providers})
    if progress:
        progress("writing the new catalog")
    keep = lambda rows: [r for r in rows if r["provider"] not in loaded]  # noqa: E731
    db.write_new(keep(old) + new_offers, keep(old_dropped) + new_dropped, keep(old_sources) + new_sources, meta)
