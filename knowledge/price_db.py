"""The offer catalog in DuckDB: build from the shipped snapshot, query, refresh, describe.

One database file in the data directory. Queries open it read-only (one cached connection per
process, a cursor per call) and are fully parameterised: user text is only ever a bound value.
Builds and refreshes write a new file beside the old one and swap it in with os.replace, so a
crash or a bad input leaves the previous catalog answering. No DuckDB extension is loaded.
"""

from __future__ import annotations

__all__ = ["PriceDb", "RefreshReport", "DB_FILENAME"]

import csv
import datetime as dt
import hashlib
import io
import os
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from knowledge.catalog import DATA_DIR
from knowledge.offers import OFFER_COLUMNS, finalize, parse_skypilot_rows
from tools.errors import AdvisorError, InvalidInput
from tools.schemas import GpuOffer, PriceQuery, PriceResult

DB_FILENAME = "prices.duckdb"
SCHEMA_VERSION = "2"  # bump when the tables change: older files are rebuilt
# No extension downloads; one thread: the scans are small and scheduling overhead dominated p95
# (benchmarks/price_query.py). DuckDB requires the same config for every connection to a file.
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False, "threads": 1}
_SHIPPED = DATA_DIR / "prices"
_DDL = """
CREATE TABLE staged_offers (
  provider VARCHAR, instance_type VARCHAR, accelerator_name VARCHAR, gpu_id VARCHAR, gpu_name VARCHAR,
  gpu_count INTEGER, gpu_memory_gb DOUBLE, vcpus DOUBLE, host_memory_gib DOUBLE,
  price_usd_per_hour DOUBLE, price_usd_per_gpu_hour DOUBLE,
  spot_price_usd_per_hour DOUBLE, spot_price_usd_per_gpu_hour DOUBLE,
  region VARCHAR, price_scope VARCHAR, nvlink BOOLEAN, as_of DATE, source VARCHAR);
CREATE TABLE dropped (provider VARCHAR, instance_type VARCHAR, accelerator_name VARCHAR, region VARCHAR,
  reason VARCHAR, source VARCHAR);
CREATE TABLE sources (provider VARCHAR, source VARCHAR, as_of DATE, note VARCHAR);
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
"""
_SORTS = {
    "gpu-hour": "price_usd_per_gpu_hour",
    "instance-hour": "price_usd_per_hour",
    "spot": "spot_price_usd_per_gpu_hour",
}


class CatalogError(AdvisorError):
    """A catalog file that cannot be used; nothing was changed."""


@dataclass
class RefreshReport:
    per_provider: dict[str, dict[str, int]] = field(default_factory=dict)
    unmapped: dict[str, int] = field(default_factory=dict)
    dropped: int = 0
    files: int = 0


def _shipped_hash() -> str:
    h = hashlib.sha256()
    for name in ("offers.csv", "dropped.csv", "sources.csv"):
        h.update((_SHIPPED / name).read_bytes())
    return h.hexdigest()[:16]


def _read_csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _insert(con: Any, table: str, cols: Iterable[str], rows: list[dict[str, Any]], scratch: Path) -> None:
    """Bulk-load rows through a CSV file and COPY (row-by-row inserts take seconds in DuckDB)."""
    cols = list(cols)
    if not rows:
        return
    with open(scratch, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    con.execute(f"COPY {table} ({', '.join(cols)}) FROM '{scratch}' (HEADER, NULLSTR '')")


class PriceDb:
    """The offer catalog at `path` (a DuckDB file), built from the shipped snapshot on first use."""

    def __init__(self, path: Path | str, today: dt.date | None = None):
        self.path = Path(path)
        self.today = today
        self._lock = threading.Lock()
        self._con: Any = None
        self._con_stamp: tuple | None = None
        self.notices: list[str] = []

    # ---- build ------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Build the database if it is missing, unreadable or older than the shipped data."""
        import duckdb

        if self.path.exists():
            try:
                con = duckdb.connect(str(self.path), read_only=True, config=_CONFIG)
                try:
                    row = con.execute("SELECT value FROM meta WHERE key = 'shipped_hash'").fetchone()
                    schema = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                    refreshed = con.execute("SELECT count(*) FROM meta WHERE key LIKE 'refreshed:%'").fetchone()[0]
                    con.execute("SELECT count(*) FROM offers").fetchone()
                finally:
                    con.close()
                if schema and schema[0] == SCHEMA_VERSION and row and (row[0] == _shipped_hash() or refreshed):
                    return
                self.notices.append("The price catalog was rebuilt from the shipped data (it was older).")
            except duckdb.Error:
                self.notices.append("The price database was unreadable; it was rebuilt from the shipped data.")
                self._close()
                self.path.unlink(missing_ok=True)
        try:
            self._build_from_shipped()
        except OSError:  # a read-only data directory: answer from a catalog built in a temporary directory
            import tempfile

            self.path = Path(tempfile.mkdtemp(prefix="gpu-advisor-")) / DB_FILENAME
            self.notices.append("The data directory is not writable: the price catalog was built in a temporary "
                                "directory for this session.")
            self._build_from_shipped()

    def _build_from_shipped(self) -> None:
        offers = _read_csv_rows(_SHIPPED / "offers.csv")
        for o in offers:
            o["nvlink"] = o.get("nvlink", "").lower() == "true"
        self._write_new(offers, _read_csv_rows(_SHIPPED / "dropped.csv"), _read_csv_rows(_SHIPPED / "sources.csv"),
                        {"shipped_hash": _shipped_hash()})

    def _write_new(self, offers: list[dict], dropped: list[dict], sources: list[dict], meta: dict[str, str]) -> None:
        import duckdb

        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            scratch = tmp.with_suffix(".csv")
            con = duckdb.connect(str(tmp), config=_CONFIG)
            try:
                con.execute(_DDL)
                _insert(con, "staged_offers", OFFER_COLUMNS, offers, scratch)
                # One integer tie-break (cheapest first, then provider/instance/region) keeps the
                # top-N sort of a query narrow: sorting on three text columns doubled its time.
                con.execute("CREATE TABLE offers AS SELECT *, row_number() OVER (ORDER BY "
                            "coalesce(price_usd_per_gpu_hour, spot_price_usd_per_gpu_hour) NULLS LAST, "
                            "provider, instance_type, region) AS tie FROM staged_offers; DROP TABLE staged_offers")
                _insert(con, "dropped", ("provider", "instance_type", "accelerator_name", "region", "reason", "source"),
                        dropped, scratch)
                _insert(con, "sources", ("provider", "source", "as_of", "note"), sources, scratch)
                con.executemany("INSERT INTO meta VALUES (?, ?)", list((meta | {"schema": SCHEMA_VERSION}).items()))
                con.execute("CHECKPOINT")
            finally:
                con.close()
            os.replace(tmp, self.path)
        finally:
            for leftover in (tmp, Path(str(tmp) + ".wal"), tmp.with_suffix(".csv")):
                leftover.unlink(missing_ok=True)
        self._close()

    # ---- query ------------------------------------------------------------------------------
    def _close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
            self._con, self._con_stamp = None, None

    def _cursor(self) -> Any:
        import duckdb

        st = self.path.stat()
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            if self._con is None or self._con_stamp != stamp:
                if self._con is not None:
                    self._con.close()
                self._con = duckdb.connect(str(self.path), read_only=True, config=_CONFIG)
                self._con_stamp = stamp
            return self._con.cursor()

    def query(self, q: PriceQuery, gpu_ids: list[str] | None) -> PriceResult:
        """Offers matching `q`; `gpu_ids` is the resolved GPU filter (None = any GPU).

        A database that went missing or corrupt is rebuilt from the shipped data (with a notice)."""
        import duckdb

        try:
            return self._query(q, gpu_ids)
        except (duckdb.Error, OSError):
            self._close()
            if self.path.exists():
                try:
                    self.path.unlink()
                except OSError:
                    pass
            self.notices.append("The price database was missing or damaged; it was rebuilt from the shipped data.")
            self.ensure()
            return self._query(q, gpu_ids)

    def _query(self, q: PriceQuery, gpu_ids: list[str] | None) -> PriceResult:
        where, params = ["1=1"], {}
        if gpu_ids is not None:
            where.append("list_contains($gpu_ids, gpu_id)")
            params["gpu_ids"] = gpu_ids
        if q.min_vram_gb is not None:
            where.append("gpu_memory_gb >= $min_vram")
            params["min_vram"] = q.min_vram_gb
        if q.gpus is not None:
            where.append("gpu_count = $gpus")
            params["gpus"] = q.gpus
        if q.min_gpus is not None:
            where.append("gpu_count >= $min_gpus")
            params["min_gpus"] = q.min_gpus
        price_col = "spot_price_usd_per_gpu_hour" if q.pricing == "spot" else "price_usd_per_gpu_hour"
        if q.pricing == "spot":
            where.append("spot_price_usd_per_hour IS NOT NULL")
        elif q.pricing == "on-demand":
            where.append("price_usd_per_hour IS NOT NULL")
        if q.max_price_usd_per_gpu_hour is not None:
            where.append(f"coalesce({price_col}, spot_price_usd_per_gpu_hour) <= $max_price")
            params["max_price"] = q.max_price_usd_per_gpu_hour
        if q.provider:
            where.append("lower(provider) = lower($provider)")
            params["provider"] = q.provider
        if q.region:
            where.append("lower(region) LIKE '%' || lower($region) || '%'")
            params["region"] = q.region
        if q.interconnect == "nvlink":
            where.append("nvlink")
        sort = _SORTS[q.sort] if q.sort else ("spot_price_usd_per_gpu_hour" if q.pricing == "spot" else "price_usd_per_gpu_hour")
        order = f"{sort} ASC NULLS LAST, tie"
        cond = " AND ".join(where)
        sql = f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers WHERE {cond} ORDER BY {order} LIMIT $limit"
        cur = self._cursor()
        try:
            rows = cur.execute(sql, params | {"limit": q.limit}).fetchall()
            # the total only matters when the page is full; a top-N sort stays cheap without it
            total = len(rows) if len(rows) < q.limit else cur.execute(
                f"SELECT count(*) FROM offers WHERE {cond}", params).fetchone()[0]
            dates = self._source_dates(cur)
        finally:
            cur.close()
        offers = []
        for r in rows:
            d = dict(zip(OFFER_COLUMNS, r))
            d["as_of"] = d["as_of"].isoformat() if d["as_of"] else None
            offers.append(GpuOffer(**d))
        return self._result(offers, total, dates)

    def _source_dates(self, cur: Any) -> tuple:
        """(oldest, newest, how many undated) source dates; cached until the file changes."""
        stamp = self._con_stamp
        cached = getattr(self, "_dates", None)
        if cached is None or cached[0] != stamp:
            row = cur.execute("SELECT min(as_of), max(as_of), count(*) FILTER (WHERE as_of IS NULL) FROM sources").fetchone()
            self._dates = (stamp, row)
        return self._dates[1]

    def _result(self, offers: list[GpuOffer], total: int, dates: tuple) -> PriceResult:
        today = self.today or dt.date.today()
        known = [o.as_of for o in offers if o.as_of] or ([dates[0].isoformat()] if dates[0] else [])
        as_of = min(known) if known else None
        unknown = any(o.as_of is None for o in offers) if offers else bool(dates[2])
        age = (today - dt.date.fromisoformat(as_of)).days if as_of else None
        stale = unknown or age is None or age > 30
        note = []
        if as_of:
            note.append(f"Prices as of {as_of} ({age} days old)")
        if unknown:
            note.append("some rows come from catalogs whose date is unknown")
        if stale:
            note.append("possibly stale: check the provider's live price before renting")
        notices, self.notices[:] = list(self.notices), []  # each notice is told once
        return PriceResult(as_of=as_of, stale=stale, data_note="; ".join(note) + ".", total_matches=total,
                           offers=offers, notices=notices)

    # ---- info ---------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        import duckdb

        try:
            cur = self._cursor()
            cur.execute("SELECT 1 FROM offers LIMIT 1")
        except (duckdb.Error, OSError):
            self._close()
            self.path.unlink(missing_ok=True) if self.path.exists() else None
            self.notices.append("The price database was missing or damaged; it was rebuilt from the shipped data.")
            self.ensure()
            cur = self._cursor()
        try:
            per = cur.execute("SELECT provider, count(*), count(DISTINCT gpu_id), min(as_of) FROM offers "
                              "GROUP BY provider ORDER BY provider").fetchall()
            src = cur.execute("SELECT provider, source, as_of, note FROM sources ORDER BY provider").fetchall()
            unm = cur.execute("SELECT accelerator_name, count(*) FROM offers WHERE gpu_id IS NULL "
                              "GROUP BY 1 ORDER BY 2 DESC").fetchall()
            drp = cur.execute("SELECT reason, count(*) FROM dropped GROUP BY 1 ORDER BY 2 DESC").fetchall()
            meta = dict(cur.execute("SELECT key, value FROM meta").fetchall())
        finally:
            cur.close()
        return {
            "path": str(self.path),
            "providers": [{"provider": p, "offers": n, "gpu_kinds": g, "as_of": d.isoformat() if d else None}
                          for p, n, g, d in per],
            "sources": [{"provider": p, "source": s, "as_of": d.isoformat() if d else None, "note": nt}
                        for p, s, d, nt in src],
            "unmapped_gpu_names": dict(unm),
            "dropped_reasons": dict(drp),
            "refreshed": {k.split(":", 1)[1]: v for k, v in meta.items() if k.startswith("refreshed:")},
        }

    # ---- refresh --------------------------------------------------------------------------------
    def refresh(self, sources: list[str], provider: str | None = None,
                progress: Callable[[str], None] | None = None) -> RefreshReport:
        """Replace the offers of each provider found in `sources` (files, folders or http(s) URLs
        of SkyPilot vms.csv) and swap the new catalog in atomically.

        Raises:
            CatalogError: a bad, empty or truncated input; the catalog is left unchanged.
        """
        self.ensure()
        inputs = list(_expand(sources))
        if not inputs:
            raise CatalogError(f"No catalog CSV found in {', '.join(sources)}.")
        today = (self.today or dt.date.today()).isoformat()
        new_by_provider: dict[str, list[dict]] = {}
        report = RefreshReport(files=len(inputs))
        new_dropped: list[dict] = []
        new_sources: list[dict] = []
        from knowledge.catalog import load_providers

        known = set(load_providers()) | {p["provider"] for p in self.info()["providers"]}
        for i, (label, loader, guessed) in enumerate(inputs, start=1):
            guess = (guessed or "").strip().lower()
            prov = (provider or (guess if guess in known else "")).strip().lower()
            if not prov:
                raise CatalogError(f"{label}: cannot tell which provider this is (folder {guessed!r} is not a known "
                                   "provider); pass --provider NAME.")
            if progress:
                progress(f"[{i}/{len(inputs)}] reading {label} ({prov})")
            text = loader()
            rows = _parse_csv_text(text, label)
            try:
                res = parse_skypilot_rows(rows, prov, label, today)
            except ValueError as exc:
                raise CatalogError(f"{label}: {exc}. Nothing was changed.") from None
            if not res.offers:
                raise CatalogError(f"{label}: no valid GPU offer in the file "
                                   f"({len(res.dropped)} rows dropped). Nothing was changed.")
            new_by_provider.setdefault(prov, []).extend(finalize(o) for o in res.offers)
            new_dropped += [{k: d[k] for k in ("provider", "instance_type", "accelerator_name", "region", "reason")}
                            | {"source": label} for d in res.dropped]
            new_sources.append({"provider": prov, "source": label, "as_of": today, "note": "refreshed"})
            report.dropped += len(res.dropped)
            for k, v in res.unmapped.items():
                report.unmapped[k] = report.unmapped.get(k, 0) + v
        con = self._cursor()
        try:
            old = [dict(zip(OFFER_COLUMNS, r)) for r in con.execute(f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers").fetchall()]
            old_dropped = [dict(zip(("provider", "instance_type", "accelerator_name", "region", "reason", "source"), r))
                           for r in con.execute("SELECT * FROM dropped").fetchall()]
            old_sources = [dict(zip(("provider", "source", "as_of", "note"), r)) for r in con.execute("SELECT * FROM sources").fetchall()]
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        finally:
            con.close()
        for prov, new in new_by_provider.items():
            key = lambda o: (o["instance_type"], o["accelerator_name"], o["gpu_count"], o["region"])  # noqa: E731
            before = {key(o): o for o in old if o["provider"] == prov}
            after = {key(o): o for o in new}
            changed = sum(1 for k in before.keys() & after.keys()
                          if (before[k]["price_usd_per_hour"], before[k]["spot_price_usd_per_hour"])
                          != (after[k]["price_usd_per_hour"], after[k]["spot_price_usd_per_hour"]))
            report.per_provider[prov] = {"added": len(after.keys() - before.keys()), "changed": changed,
                                         "removed": len(before.keys() - after.keys()), "rows": len(after)}
            meta[f"refreshed:{prov}"] = today
        keep = [o for o in old if o["provider"] not in new_by_provider]
        for o in keep:
            o["as_of"] = o["as_of"].isoformat() if hasattr(o["as_of"], "isoformat") else o["as_of"]
        for s in old_sources:
            s["as_of"] = s["as_of"].isoformat() if hasattr(s["as_of"], "isoformat") else s["as_of"]
        if progress:
            progress("writing the new catalog")
        self._write_new(keep + [o for v in new_by_provider.values() for o in v],
                        [d for d in old_dropped if d["provider"] not in new_by_provider] + new_dropped,
                        [s for s in old_sources if s["provider"] not in new_by_provider] + new_sources, meta)
        return report


def _parse_csv_text(text: str, label: str) -> list[dict[str, str]]:
    if not text.strip():
        raise CatalogError(f"{label}: the file is empty. Nothing was changed.")
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
        width = len(header)
        rows = []
        for n, rec in enumerate(reader, start=2):
            if not rec:
                continue
            if len(rec) != width:
                raise CatalogError(f"{label}: line {n} has {len(rec)} fields, the header has {width} "
                                   "(truncated or malformed file). Nothing was changed.")
            rows.append(dict(zip(header, rec)))
    except csv.Error as exc:
        raise CatalogError(f"{label}: not a readable CSV ({exc}). Nothing was changed.") from None
    if not rows:
        raise CatalogError(f"{label}: the file has a header but no rows. Nothing was changed.")
    return rows


def _expand(sources: list[str]) -> Iterable[tuple[str, Callable[[], str], str | None]]:
    for s in sources:
        if s.startswith(("http://", "https://")):
            parts = [p for p in urllib.parse.urlparse(s).path.split("/") if p]
            guess = parts[-2] if len(parts) >= 2 else None
            yield s, (lambda u=s: _fetch(u)), guess
            continue
        if "://" in s:
            raise InvalidInput("from", s, "a file, a folder, or an http(s):// URL")
        p = Path(s).expanduser()
        if p.is_dir():
            for f in sorted(p.rglob("*.csv")):
                yield str(f), (lambda f=f: f.read_text(encoding="utf-8")), f.parent.name if f.parent != p else p.name
        elif p.is_file():
            yield str(p), (lambda p=p: p.read_text(encoding="utf-8")), p.parent.name or None
        else:
            raise CatalogError(f"{s}: no such file or folder. Nothing was changed.")


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:  # noqa: S310 (http/https only, checked above)
            return resp.read().decode("utf-8")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{url}: could not be fetched ({exc.__class__.__name__}: {exc}). Nothing was changed.") from None
