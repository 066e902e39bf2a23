"""Regions people say (europe, us, a country, a city) match every provider's naming; the answer names them."""

import csv
import datetime as dt

import pytest

from knowledge.catalog import DATA_DIR
from knowledge.price_db import PriceDb
from knowledge.prices.regions import locate, resolve_place
from tools.schemas import PriceQuery

SHIPPED = list(csv.DictReader(open(DATA_DIR / "prices" / "offers.csv", newline="")))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    d = PriceDb(tmp_path_factory.mktemp("home") / "prices.duckdb", today=dt.date(2026, 6, 1))
    d.ensure()
    return d


@pytest.mark.parametrize("provider, region, country, continent", [
    ("aws", "eu-north-1", "SE", "europe"),
    ("azure", "westeurope", "NL", "europe"),
    ("gcp", "europe-west4", "NL", "europe"),
    ("verda", "FIN-01", "FI", "europe"),
    ("vast", "Germany, DE, EU", "DE", "europe"),  # "Place, CC, CONTINENT"
    ("vast", "CN, AS", "CN", "asia"),  # blank place trimmed by the snapshot
    ("lium", "DE", "DE", "europe"),  # bare country code
    ("runpod", "US", "US", "north-america"),
    ("shadeform", "paris-france-1", "FR", "europe"),  # place-country-N
    ("lambda", "europe-central-1", "", "europe"),  # continent from the name only
    ("nebius", "us-central1", "US", "north-america"),
    ("hyperbolic", "default", "", ""),  # unknown stays unknown
])
def test_every_naming_style_is_located(provider, region, country, continent):
    p = locate(provider, region)
    assert (p.country, p.continent) == (country, continent)


# the EU-27 and the EEA's Iceland, Liechtenstein and Norway (where GDPR applies): not Russia, the UK or Switzerland
EU_EEA = ("AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU", "MT",
          "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO")


@pytest.mark.parametrize("text, continents, countries, place", [
    ("Europe", ("europe",), (), ""), ("eu", (), EU_EEA, ""), ("EEA", (), EU_EEA, ""), ("us", (), ("US",), ""),
    ("USA", (), ("US",), ""), ("asia", ("asia",), (), ""), ("apac", ("asia", "oceania"), (), ""),
    ("Germany", (), ("DE",), ""), ("de", (), ("DE",), ""), ("UK", (), ("GB",), ""),
    ("Frankfurt", (), (), "frankfurt"), ("us-east", (), (), ""),
])
def test_words_people_say(text, continents, countries, place):
    q = resolve_place(text)
    assert (q.continents, q.countries, q.place) == (continents, countries, place)


def test_region_data_is_sourced_and_consistent():
    countries = {r["code"]: r for r in csv.DictReader(open(DATA_DIR / "countries.csv"))}
    for r in csv.DictReader(open(DATA_DIR / "regions.csv")):
        assert r["source"] and (r["country"] in countries or (not r["country"] and r["continent"])), r
    assert all(c["source"] and c["continent"] for c in countries.values())


def test_every_shipped_region_has_a_continent_but_the_unknowable():
    missing = {(r["provider"], r["region"]) for r in SHIPPED if not r["continent"]}
    assert missing <= {("hyperbolic", "default"), ("seeweb", "")}, missing


def test_europe_spans_every_providers_naming(db):
    res = db.query(PriceQuery(region="europe", limit=1000), None)
    regions = set(res.regions_matched)
    assert {"eu-north-1", "westeurope", "europe-west4", "FIN-01", "Germany, DE, EU", "DE", "paris-france-1"} <= regions
    assert all(o.continent == "europe" for o in res.offers)
    assert "europe" in res.region_note.lower() and str(len(regions)) in res.region_note


def test_us_is_the_country_not_a_substring(db):
    res = db.query(PriceQuery(region="us", limit=1000), None)
    assert {"us-east-1", "eastus", "US"} <= set(res.regions_matched)
    assert "australiaeast" not in res.regions_matched  # 'us' inside 'australiaeast' matched before
    assert all(o.country == "US" for o in res.offers)


def test_city_and_region_substring(db):
    fra = set(db.query(PriceQuery(region="frankfurt", limit=500), None).regions_matched)
    assert {"eu-central-1", "europe-west3", "germanywestcentral"} <= fra and "westeurope" not in fra
    east = db.query(PriceQuery(region="us-east", limit=200), None)
    assert east.offers and all("us-east" in o.region for o in east.offers)
    assert "part of a region name" in east.region_note


def test_cheapest_a100_80gb_spot_in_europe_is_the_catalog_minimum(db):
    from knowledge.prices.gpu_names import price_gpu_ids

    ids, note, forms = price_gpu_ids("A100 80GB")
    assert set(ids) == {"a100-80gb-sxm", "a100-80gb-pcie"} and "PCIe" in note and len(forms) == 2
    res = db.query(PriceQuery(region="europe", pricing="spot", limit=1), ids)
    # By hand over offers.csv: every A100 80GB (SXM or PCIe) row with a spot price in a European region
    # (AWS eu-*, Azure *europe/france/germany/..., GCP europe-*, Verda FIN-*, Vast '..., EU', Lium/Seeweb codes).
    europe = {"FIN-01", "FIN-02", "FIN-03", "francecentral", "germanywestcentral", "germanynorth", "italynorth",
              "northeurope", "norwayeast", "polandcentral", "spaincentral", "swedencentral", "switzerlandnorth",
              "uksouth", "westeurope", "europe-west4", "eu-central-1", "eu-west-1", "eu-west-2", "eu-north-1"}
    rows = [r for r in SHIPPED if r["gpu_id"] in ids and r["spot_price_usd_per_gpu_hour"]
            and (r["region"] in europe or r["region"].endswith(", EU"))]
    best = min(float(r["spot_price_usd_per_gpu_hour"]) for r in rows)
    assert res.offers[0].spot_price_usd_per_gpu_hour == pytest.approx(best)
    assert res.offers[0].provider == "verda" and best == pytest.approx(0.4515)  # Verda, Finland


def test_the_eu_is_not_geographic_europe(db):
    eu = db.query(PriceQuery(region="eu", limit=1000), None).offers
    europe = db.query(PriceQuery(region="europe", limit=1000), None).offers
    assert eu and all(o.country in EU_EEA for o in eu)
    outside = {o.country for o in europe} - set(EU_EEA)
    assert outside, "the shipped offers include European countries outside the EU (the UK, Russia ...)"
    assert not outside & {o.country for o in eu}
