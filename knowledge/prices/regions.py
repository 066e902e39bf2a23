"""Where an offer's region is (place, country, continent), and what a region word a person says covers.

Data: knowledge/regions.csv (provider, region -> places, country, continent; a source per row),
knowledge/countries.csv (ISO 3166-1 code -> name, aliases, continent per the UN M49 geoscheme) and
knowledge/region_groups.csv (europe, asia, us-style words -> continents or countries).

Region names no table lists are read by the naming patterns real catalogs use:
"Place, CC, CONTINENT" (Vast), a bare two-letter country code (RunPod, Lium) and
"place-countryname-N" (Shadeform). Anything else stays unknown and is not matched by a place word.
"""

from __future__ import annotations

__all__ = ["Place", "PlaceQuery", "country_words", "locate", "resolve_place"]

import csv
import re
from dataclasses import dataclass
from functools import lru_cache

from knowledge.catalog import DATA_DIR


@dataclass(frozen=True)
class Place:
    places: str = ""  # ';'-separated city / state names, lower case
    country: str = ""  # ISO 3166-1 alpha-2
    continent: str = ""  # europe | north-america | south-america | asia | oceania | africa


@dataclass(frozen=True)
class PlaceQuery:
    """What a --region word means: continents, countries or a place name; empty = a substring of region names."""

    label: str
    continents: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    place: str = ""

def _read(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return [{k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh)]


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


@lru_cache(maxsize=1)
def _countries() -> dict[str, dict[str, str]]:
    return {r["code"]: r for r in _read("countries.csv")}


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    out = {}
    for code, r in _countries().items():
        for n in (r["name"], *r["aliases"].split(";")):
            if n.strip():
                out[_norm(n)] = code
    return out


@lru_cache(maxsize=1)
def country_words() -> re.Pattern:
    """Every country name and alias of countries.csv as one word-bounded pattern (longest first), for reading
    a country a question names ("must stay in Israel") as a region; two-letter codes are left out ("in" is not India)."""
    names = sorted((n for n in _country_names() if len(n) > 2), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(n).replace(r"\ ", r"[\s-]+") for n in names) + r")\b")


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], Place]:
    out = {}
    for r in _read("regions.csv"):
        cont = r["continent"] or _countries().get(r["country"], {}).get("continent", "")
        places = ";".join(_norm(x) for x in r["places"].split(";") if x.strip())
        out[(r["provider"], r["region"])] = Place(places, r["country"], cont)
    return out


@lru_cache(maxsize=1)
def _places_index() -> set[str]:
    idx = set()
    for p in _table().values():
        idx |= {x for x in p.places.split(";") if x}
    return idx


_VAST = re.compile(r"^(?:(?P<place>[^,]*),\s*)?(?P<cc>[A-Z]{2}),\s*[A-Z]{2}$")
_CC = re.compile(r"^[A-Z]{2}$")
_DASHED = re.compile(r"^(?P<place>[a-z]+)-(?P<country>[a-z]+)-\d+$")


@lru_cache(maxsize=4096)
def locate(provider: str, region: str | None) -> Place:
    """Place, country and continent of one provider's region name (empty fields when unknown)."""
    region = (region or "").strip()
    if not region:
        return Place()
    hit = _table().get((provider, region)) or _table().get(("*", region))
    if hit:
        return hit
    cc, place = "", ""
    if m := _VAST.match(region):
        cc, place = m["cc"], (m["place"] or "").strip()
    elif _CC.match(region):
        cc = region
    elif m := _DASHED.match(region.lower()):
        cc = _country_names().get(m["country"], "")
        place = m["place"] if cc else ""
    country = _countries().get(cc)
    if not country:
        return Place()
    return Place(_norm(place), cc, country["continent"])


@lru_cache(maxsize=1)
def _groups() -> dict[str, dict[str, str]]:
    out = {}
    for r in _read("region_groups.csv"):
        for n in (r["group"], r["name"], *r["aliases"].split(";")):
            if n.strip():
                out[_norm(n)] = r
    return out


def resolve_place(text: str) -> PlaceQuery:
    """What a region word covers: a group (europe, asia, apac ...), a country (name, alias or ISO code),
    a city/state named in regions.csv, or nothing (then callers match it as part of a region name)."""
    key = _norm(text)
    if g := _groups().get(key):
        conts = tuple(c for c in g["continents"].split(";") if c)
        ccs = tuple(c for c in g["countries"].split(";") if c)
        return PlaceQuery(g["name"], conts, ccs)
    code = _country_names().get(key) or (key.upper() if len(key) == 2 and key.upper() in _countries() else "")
    if code:
        return PlaceQuery(_countries()[code]["name"], countries=(code,))
    if key in _places_index():
        return PlaceQuery(text.strip(), place=key)
    return PlaceQuery(text.strip())
