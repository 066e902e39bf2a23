"""The offer catalog in DuckDB: build from the shipped snapshot, query, refresh, describe.

One database file in the data directory. Queries open it read-only (one cached connection per
process, a cursor per call) and are fully parameterised: user text is only ever a bound value.
Builds and refreshes write a new file beside the old one and swap it in with os.replace, so a
crash or a bad input leaves the previous catalog answering. No DuckDB extension is loaded.
"""

from __future__ import annotations

__all__ = ["CatalogError", "DEFAULT_CATALOG_URL", "PriceDb", "RefreshReport", "DB_FILENAME"]

import csv
import datetime as dt
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from knowledge.catalog import DATA_DIR
from knowledge.offers import DROPPED_COLUMNS, OFFER_COLUMNS
from knowledge.prices.refresh import run_refresh
from knowledge.prices.regions import resolve_place
from knowledge.prices.report import CatalogError, RefreshReport
from tools.schemas import GpuOffer, PriceQuery, PriceResult

DB_FILENAME = "prices.duckdb"
SCHEMA_VERSION = "3"  # bump when the tables change: older files are rebuilt
# SkyPilot's published catalog (sky/skylet/constants.py HOSTED_CATALOG_DIR_URL + CATALOG_SCHEMA_VERSION v8):
# `catalog refresh` with no --from fetches <this>/<provider>/vms.csv for each provider marked published
# in knowledge/prices/provider_rules.csv.
DEFAULT_CATALOG_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
SOURCE_COLUMNS = ("provider", "source", "as_of", "date_from", "note")
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
  region VARCHAR, price_scope VARCHAR, nvlink BOOLEAN, as_of DATE, source VARCHAR, gpu_vendor VARCHAR,
  zone VARCHAR, spot_zone VARCHAR, places VARCHAR, country VARCHAR, continent VARCHAR);
CREATE TABLE dropped (provider VARCHAR, instance_type VARCHAR, accelerator_name VARCHAR, region VARCHAR,
  reason VARCHAR, source VARCHAR);
CREATE TABLE sources (provider VARCHAR, source VARCHAR, as_of DATE, date_from VARCHAR, note VARCHAR);
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
"""
_SORTS = {
    "gpu-hour": "price_usd_per_gpu_hour",
    "instance-hour": "price_usd_per_hour",
    "spot": "spot_price_usd_per_gpu_hour",
}


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


# PriceQuery's numeric bounds: field -> SQL condition on an offer row, the field's value bound as `$<field>`.
_NUMERIC_BOUNDS: dict[str, str] = {
    "min_vram_gb": "gpu_memory_gb >= $min_vram_gb",
    "gpus": "gpu_count = $gpus",
    "min_gpus": "gpu_count >= $min_gpus",
    "max_gpus": "gpu_count <= $max_gpus",
    "min_total_vram_gb": "gpu_memory_gb * gpu_count >= $min_total_vram_gb",
    "max_total_vram_gb": "gpu_memory_gb * gpu_count <= $max_total_vram_gb",
    "min_vcpus": "vcpus >= $min_vcpus",
    # host RAM is stored in GiB; the filter is in GB (10^9 bytes): 1 GiB = 1.073741824 GB
    "min_ram_gb": "host_memory_gib * 1.073741824 >= $min_ram_gb",
}


def _where(q: PriceQuery, gpu_ids: list[str] | None) -> tuple[str, dict[str, Any], str]:
    """SQL condition (text values bound as parameters) for a PriceQuery, and how its region was read."""
    where, params = ["1=1"], {}

    def add(sql: str, **kw: Any) -> None:
        where.append(sql)
        params.update(kw)

    if gpu_ids is not None:
        add("list_contains($gpu_ids, gpu_id)", gpu_ids=gpu_ids)
    for name, sql in _NUMERIC_BOUNDS.items():
        if getattr(q, name) is not None:
            add(sql, **{name: getattr(q, name)})
    if q.vendor:
        add("lower(gpu_vendor) = lower($vendor)", vendor=q.vendor.strip())
    price_col = "spot_price_usd_per_gpu_hour" if q.pricing == "spot" else "price_usd_per_gpu_hour"
    if q.pricing == "spot":
        where.append("spot_price_usd_per_hour IS NOT NULL")
    elif q.pricing == "on-demand":
        where.append("price_usd_per_hour IS NOT NULL")
    if q.max_price_usd_per_gpu_hour is not None:
        add(f"coalesce({price_col}, spot_price_usd_per_gpu_hour) <= $max_price", max_price=q.max_price_usd_per_gpu_hour)
    if q.provider:
        add("list_contains($providers, lower(provider))", providers=split_list(q.provider))
    label = ""
    if q.region:
        pq = resolve_place(q.region)
        if pq.continents or pq.countries:
            add("(list_contains($continents, continent) OR list_contains($countries, country))",
                continents=list(pq.continents), countries=list(pq.countries))
            label = pq.label
        elif pq.place:
            add("list_contains(string_split(coalesce(places, ''), ';'), $place)", place=pq.place)
            label = f"the place {pq.label}"
        else:
            add("lower(region) LIKE '%' || lower($region) || '%'", region=q.region.strip())
            label = "part of a region name"
    if q.interconnect == "nvlink":
        where.append("nvlink")
    return " AND ".join(where), params, label


def split_list(text: str) -> list[str]:
    """'aws, GCP' -> ['aws', 'gcp'] (comma lists of providers or GPUs)."""
    return [p.strip().lower() for p in str(text).split(",") if p.strip()]


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
        self.write_new(offers, _read_csv_rows(_SHIPPED / "dropped.csv"), _read_csv_rows(_SHIPPED / "sources.csv"),
                       {"shipped_hash": _shipped_hash()})

    def write_new(self, offers: list[dict], dropped: list[dict], sources: list[dict], meta: dict[str, str]) -> None:
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
                _insert(con, "dropped", DROPPED_COLUMNS, dropped, scratch)
                _insert(con, "sources", SOURCE_COLUMNS, sources, scratch)
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
        cond, params, region_label = _where(q, gpu_ids)
        sort = _SORTS[q.sort] if q.sort else ("spot_price_usd_per_gpu_hour" if q.pricing == "spot" else "price_usd_per_gpu_hour")
        order = f"{sort} ASC NULLS LAST, tie"
        sql = f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers WHERE {cond} ORDER BY {order} LIMIT $limit"
        cur = self._cursor()
        try:
            rows = cur.execute(sql, params | {"limit": q.limit}).fetchall()
            # the total only matters when the page is full; a top-N sort stays cheap without it
            total = len(rows) if len(rows) < q.limit else cur.execute(
                f"SELECT count(*) FROM offers WHERE {cond}", params).fetchone()[0]
            regions = [r[0] for r in cur.execute(
                f"SELECT DISTINCT region FROM offers WHERE {cond} ORDER BY 1 LIMIT 500", params).fetchall()] \
                if q.region else []
            dates = self._source_dates(cur)
        finally:
            cur.close()
        offers = []
        for r in rows:
            d = dict(zip(OFFER_COLUMNS, r))
            d["as_of"] = d["as_of"].isoformat() if d["as_of"] else None
            offers.append(GpuOffer(**d))
        res = self._result(offers, total, dates)
        if q.region:
            res.regions_matched = regions
            shown = ", ".join(regions[:12]) + (f" and {len(regions) - 12} more" if len(regions) > 12 else "")
            res.region_note = (f"'{q.region.strip()}' was read as {region_label}: {len(regions)} region"
                               f"{'' if len(regions) == 1 else 's'} matched ({shown})." if regions else
                               f"'{q.region.strip()}' was read as {region_label}: no region with these filters.")
        return res

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
            src = cur.execute("SELECT provider, source, as_of, date_from, note FROM sources ORDER BY provider").fetchall()
            nowhere = cur.execute("SELECT provider, list(DISTINCT region ORDER BY region) FROM offers "
                                  "WHERE country IS NULL AND continent IS NULL GROUP BY 1 ORDER BY 1").fetchall()
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
            "sources": [{"provider": p, "source": s, "as_of": d.isoformat() if d else None,
                         "date_from": df or "unknown", "note": nt} for p, s, d, df, nt in src],
            "regions_without_country": {p: r for p, r in nowhere},
            "unmapped_gpu_names": dict(unm),
            "dropped_reasons": dict(drp),
            "refreshed": {k.split(":", 1)[1]: v for k, v in meta.items() if k.startswith("refreshed:")},
            "last_refresh": json.loads(meta["last_refresh"]) if meta.get("last_refresh") else None,
        }

    # ---- refresh --------------------------------------------------------------------------------
    def refresh(self, sources: list[str] | None = None, provider: str | None = None,
                progress: Callable[[str], None] | None = None, *, strict: bool = False, as_of: str | None = None,
                catalog_url: str = DEFAULT_CATALOG_URL, timeout_s: float = 30.0) -> RefreshReport:
        """Replace the offers of each provider found in `sources` (files, folders of SkyPilot catalog trees,
        http(s) URLs; None = SkyPilot's published catalog at `catalog_url`) and swap the new catalog in
        atomically. Bad files are reported and leave their provider's old rows in place (`strict`: abort).

        Raises:
            CatalogError: nothing loadable, a failed download, or (strict) any bad file; nothing was changed.
        """
        self.ensure()
        return run_refresh(self, sources, provider, progress, strict=strict, as_of=as_of,
                           catalog_url=catalog_url, timeout_s=timeout_s)

    def snapshot_rows(self) -> tuple[list[dict], list[dict], list[dict], dict[str, str]]:
        """Every offer, dropped row, source and meta value of the current catalog (dates as ISO strings)."""
        iso = lambda v: v.isoformat() if hasattr(v, "isoformat") else v  # noqa: E731
        cur = self._cursor()
        try:
            offers = [dict(zip(OFFER_COLUMNS, r)) for r in cur.execute(f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers").fetchall()]
            dropped = [dict(zip(DROPPED_COLUMNS, r)) for r in cur.execute(f"SELECT {', '.join(DROPPED_COLUMNS)} FROM dropped").fetchall()]
            sources = [dict(zip(SOURCE_COLUMNS, r)) for r in cur.execute(f"SELECT {', '.join(SOURCE_COLUMNS)} FROM sources").fetchall()]
            meta = dict(cur.execute("SELECT key, value FROM meta").fetchall())
        finally:
            cur.close()
        for row in offers + sources:
            row["as_of"] = iso(row["as_of"])
        return offers, dropped, sources, meta
