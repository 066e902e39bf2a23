"""The offer catalog as the service reads it: the process's price database, price queries, providers and
regions held in the data, and the offers + billing that the pure recommend/solve tools take."""

from __future__ import annotations

from typing import Any

from assistant.runtime.settings import data_dir
from knowledge.catalog import load_gpus, load_providers
from knowledge.price_db import DB_FILENAME, DEFAULT_CATALOG_URL, PriceDb, split_list
from knowledge.prices.gpu_names import price_gpu_ids
from tools.cost import BillingPolicy
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import PriceQuery, PriceResult, validated


_DBS: dict[str, Any] = {}


def price_db() -> Any:
    """The process's PriceDb for the current data directory (built on first use)."""
    path = str(data_dir() / DB_FILENAME)
    db = _DBS.get(path)
    if db is None:
        db = PriceDb(path)
        db.ensure()
        _DBS[path] = db
    return db


def prices(**query: Any) -> PriceResult:
    """Offers from the price catalog, cheapest first, with the data's date and a staleness flag.

    `gpu` and `provider` take comma lists; `region` takes europe | us | asia | a country | a city, or part
    of a region name; the result lists the regions matched and the GPU forms a name covered.

    Raises:
        AdvisorError subclasses: unknown GPU, provider or vendor, invalid filter values.
    """
    q = validated(PriceQuery, **{k: v for k, v in query.items() if v is not None})
    if q.gpus is not None and q.min_gpus is not None:
        raise InvalidCombination("give --gpus N or --min-gpus N, not both")
    for lo, hi, names in ((q.min_gpus or q.gpus, q.max_gpus, "--min-gpus/--gpus and --max-gpus"),
                          (q.min_total_vram_gb, q.max_total_vram_gb, "--min-total-vram-gb and --max-total-vram-gb")):
        if lo is not None and hi is not None and lo > hi:
            raise InvalidCombination(f"{names}: the minimum ({lo:g}) is above the maximum ({hi:g})")
    ids, note, forms = (None, "", [])
    if q.gpu is not None:
        if not split_list(q.gpu):
            raise InvalidInput("gpu", q.gpu, "a GPU name such as H100 or 'RTX 4090', or a comma list of them")
        ids, note, forms = price_gpu_ids(q.gpu)
    db = price_db()
    absent: list[str] = []
    if q.provider is not None:
        kept, absent = providers_in_data(split_list(q.provider) or [q.provider])
        q = q.model_copy(update={"provider": ",".join(kept)})
    if q.vendor is not None:
        vendors = sorted({g.vendor.lower() for g in load_gpus() if g.vendor})
        if q.vendor.strip().lower() not in vendors:
            raise InvalidInput("vendor", q.vendor, ", ".join(vendors))
    res = db.query(q, ids)
    res.gpu_note, res.gpu_forms = note, forms
    if q.gpu is not None and not res.total_matches:
        absent.append(f"No {q.gpu} offer" + (f" from {q.provider}" if q.provider else "")
                      + (f" in {q.region}" if q.region else "") + f" is in the price data dated {data_date()}")
    res.not_in_data = absent
    return res


def data_date() -> str:
    """The newest date the price data states (the date its answers cite)."""
    dates = [p["as_of"] for p in price_db().info()["providers"] if p.get("as_of")]
    return max(dates) if dates else "unknown"


def providers_in_data(providers: list[str]) -> tuple[list[str], list[str]]:
    """(the named providers the price data holds, a sentence for each it does not). A provider the project
    knows (knowledge/providers.csv) that the data does not hold is said, never dropped silently; a name no
    one knows (a typo), or none held at all, is refused naming the ones held.

    Raises:
        InvalidInput: not one of the names is in the price data.
    """
    known = sorted(p["provider"] for p in price_db().info()["providers"])
    kept = [p.strip().lower() for p in providers if p.strip().lower() in known]
    listed = set(load_providers())  # providers the project knows of, held in the price data or not
    unknown = [p for p in providers if p.strip().lower() not in known and p.strip().lower() not in listed]
    if not kept or unknown:
        raise InvalidInput("provider", ", ".join(unknown or providers), ", ".join(known))
    absent = [f"{p.strip()} is not in the price data dated {data_date()}" for p in providers
              if p.strip().lower() not in known]
    return kept, absent


def catalog_info() -> dict[str, Any]:
    """Rows per provider, date per source (and how it is known), unmapped GPU names, drop reasons,
    regions with no known country, what the last refresh skipped or could not read."""
    return price_db().info()


def catalog_refresh(sources: list[str] | None, provider: str | None = None, progress: Any = None, *,
                    strict: bool = False, as_of: str | None = None, catalog_url: str | None = None,
                    timeout_s: float = 30.0) -> Any:
    """Refresh providers' offers from SkyPilot catalog files, folders (whole `catalogs/v8` trees) or URLs;
    with no sources, from SkyPilot's published catalog. Atomic swap; see PriceDb.refresh."""
    db = price_db()
    if provider is not None:
        provider = provider.strip().lower()
        if not provider or not provider.replace("-", "").replace("_", "").isalnum():
            raise InvalidInput("provider", provider, "a provider name of letters, digits, '-' or '_'")
    return db.refresh(sources or None, provider, progress, strict=strict, as_of=as_of,
                      catalog_url=catalog_url or DEFAULT_CATALOG_URL, timeout_s=timeout_s)


def offers_and_billing(providers: list[str] | None, regions: list[str] | None) -> tuple[list[Any], str, dict, dict]:
    """Every catalog offer matching the provider/region filters, the data note, GPU specs by id and
    billing policies by provider: the arguments the pure recommend/solve tools take."""
    db = price_db()
    known = {p["provider"] for p in db.info()["providers"]}
    for p in providers or []:
        if p.strip().lower() not in known:
            raise InvalidInput("provider", p, ", ".join(sorted(known)))
    offers, note = [], ""
    for prov in (providers or [None]):
        for reg in (regions or [None]):
            res = db.query(PriceQuery(provider=prov, region=reg, limit=1000, pricing="any"), None)
            offers += res.offers
            note = res.data_note
            if res.total_matches > 1000:  # the catalog is bigger than one page: take every GPU type's cheapest rows
                for gid in {o.gpu_id for o in offers if o.gpu_id}:
                    offers += db.query(PriceQuery(provider=prov, region=reg, limit=200), [gid]).offers
    gpus = {g.id: g for g in load_gpus()}
    billing = {p: BillingPolicy(provider=p, increment_s=f.get("billing_increment_s"),
                                minimum_s=f.get("minimum_charge_s") or 0) for p, f in load_providers().items()}
    return offers, note, gpus, billing
