"""The offer catalog on real DuckDB: build, filters, sort, normalisation, injection, refresh, staleness."""

import csv
import datetime as dt
import http.server
import threading
from pathlib import Path

import pytest

from knowledge.catalog import DATA_DIR
from knowledge.offers import map_accelerator
from knowledge.price_db import CatalogError, PriceDb
from tools.schemas import PriceQuery

SHIPPED = list(csv.DictReader(open(DATA_DIR / "prices" / "offers.csv", newline="")))
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone,GpuInfo\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    d = PriceDb(tmp_path_factory.mktemp("home") / "prices.duckdb", today=dt.date(2026, 6, 1))
    d.ensure()
    return d


def q(**kw):
    return PriceQuery(**kw)


def test_built_from_the_shipped_snapshot(db):
    info = db.info()
    assert sum(p["offers"] for p in info["providers"]) == len(SHIPPED) > 2000
    assert any("fractional GPU share" in r for r in info["dropped_reasons"])
    assert any("placeholder" in r for r in info["dropped_reasons"])
    assert {"aws", "gcp", "azure", "lambda", "vast", "runpod"} <= {p["provider"] for p in info["providers"]}
    assert "RTX6000" in info["unmapped_gpu_names"]  # Quadro RTX 6000: not in the GPU catalog, kept and reported


def test_every_shipped_offer_has_a_price_and_per_gpu_prices_divide(db):
    for r in SHIPPED:
        od, sp = r["price_usd_per_hour"], r["spot_price_usd_per_hour"]
        assert od or sp
        if od:
            assert float(r["price_usd_per_gpu_hour"]) == pytest.approx(float(od) / int(r["gpu_count"]), rel=1e-4)
        assert r["source"]
        # a blank city in the source (", CN, AS") is trimmed, not shown as an empty field
        assert r["region"] == r["region"].strip().strip(","), r["region"]


def test_family_filter_and_sort(db):
    res = db.query(q(limit=50), ["h100-sxm", "h100-pcie", "h100-nvl"])
    assert res.offers and all(o.gpu_id.startswith("h100") for o in res.offers)
    prices = [o.price_usd_per_gpu_hour for o in res.offers if o.price_usd_per_gpu_hour is not None]
    assert prices == sorted(prices)
    inst = db.query(q(sort="instance-hour", limit=50), ["h100-sxm"]).offers
    ip = [o.price_usd_per_hour for o in inst if o.price_usd_per_hour is not None]
    assert ip == sorted(ip)


def test_spot_vram_count_price_provider_region_nvlink_filters(db):
    spot = db.query(q(pricing="spot", limit=100), None).offers
    assert spot and all(o.spot_price_usd_per_hour is not None for o in spot)
    sp = [o.spot_price_usd_per_gpu_hour for o in spot]
    assert sp == sorted(sp)
    assert all(o.gpu_memory_gb >= 80 for o in db.query(q(min_vram_gb=80, limit=200), None).offers)
    assert all(o.gpu_count == 8 for o in db.query(q(gpus=8, limit=200), None).offers)
    assert all(o.gpu_count >= 4 for o in db.query(q(min_gpus=4, limit=200), None).offers)
    cheap = db.query(q(max_price_usd_per_gpu_hour=1.0, pricing="on-demand", limit=200), None).offers
    assert cheap and all(o.price_usd_per_gpu_hour <= 1.0 for o in cheap)
    assert {o.provider for o in db.query(q(provider="AWS", limit=200), None).offers} == {"aws"}
    assert all("us-east" in o.region for o in db.query(q(region="us-east", limit=200), None).offers)
    nv = db.query(q(interconnect="nvlink", limit=200), None).offers
    assert nv and all(o.nvlink and o.gpu_count > 1 for o in nv)


def test_accelerator_names_normalise_to_the_catalog():
    assert map_accelerator("aws", "A100", "p4d.24xlarge", 40.0)[0] == "a100-40gb-sxm"
    assert map_accelerator("azure", "A100-80GB", "Standard_NC24ads_A100_v4", None)[0] == "a100-80gb-pcie"
    assert map_accelerator("azure", "H100", "Standard_NC40ads_H100_v5", None)[0] == "h100-nvl"
    assert map_accelerator("gcp", "H100-MEGA", "a3-megagpu-8g", 80.0)[0] == "h100-sxm"
    assert map_accelerator("verda", "RTX-6000-Ada", "x", 48.0)[0] == "rtx-6000-ada"
    assert map_accelerator("lambda", "RTX6000", "gpu_1x_rtx6000", 24.0)[0] is None
    assert map_accelerator("x", "Z9000", "y", 12.0)[0] is None


def test_injection_text_is_only_a_value(db):
    n_before = sum(p["offers"] for p in db.info()["providers"])
    res = db.query(q(region="x'; DROP TABLE offers; --", provider="aws' OR '1'='1"), None)
    assert res.offers == []
    assert sum(p["offers"] for p in db.info()["providers"]) == n_before


def test_queries_are_read_only(db):
    import duckdb
    cur = db._cursor()
    with pytest.raises(duckdb.Error):
        cur.execute("DELETE FROM offers")


def test_stale_flag_by_age(tmp_path):
    fresh = PriceDb(tmp_path / "p.duckdb", today=dt.date(2026, 6, 1))
    fresh.ensure()
    gcp = fresh.query(q(provider="gcp", limit=5), None)
    assert gcp.as_of == "2026-05-20" and gcp.stale is False and "12 days old" in gcp.data_note
    old = PriceDb(tmp_path / "p.duckdb", today=dt.date(2026, 11, 29))
    assert old.query(q(provider="gcp", limit=5), None).stale is True
    aws = fresh.query(q(provider="aws", limit=5), None)  # skypilot-catalog rows: date unknown
    assert aws.stale is True and "unknown" in aws.data_note


def _vms(path: Path, rows: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


GOOD_AWS = [
    'p5.48xlarge,H100,8,192,2048,55.04,20.00,us-east-1,us-east-1a,"{\'Gpus\': [{\'Name\': \'H100\', \'Count\': 8, \'MemoryInfo\': {\'SizeInMiB\': 81920}}]}"',
    'p5.48xlarge,H100,8,192,2048,55.04,18.50,us-east-1,us-east-1b,',
    'g6.xlarge,L4,1,4,16,0.805,0.30,us-west-2,us-west-2a,',
    'g6f.large,L4,0.125,2,8,0.2,,us-west-2,us-west-2a,',
    'c5.large,,,2,4,0.085,,us-east-1,us-east-1a,',
]


def test_refresh_good_file_replaces_only_that_provider(tmp_path):
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 11, 29))
    db.ensure()
    before = {p["provider"]: p["offers"] for p in db.info()["providers"]}
    rep = db.refresh([str(_vms(tmp_path / "aws" / "vms.csv", GOOD_AWS))], as_of="2026-11-20")
    after = {p["provider"]: p["offers"] for p in db.info()["providers"]}
    assert after["aws"] == 2 and rep.per_provider["aws"]["rows"] == 2  # zones merged, CPU row skipped
    assert rep.dropped == 1  # the fractional g6f slice
    assert {k: v for k, v in after.items() if k != "aws"} == {k: v for k, v in before.items() if k != "aws"}
    h = db.query(PriceQuery(provider="aws", gpus=8), ["h100-sxm"]).offers[0]
    assert h.spot_price_usd_per_hour == pytest.approx(18.50)  # lowest of the region's zones
    assert h.price_usd_per_gpu_hour == pytest.approx(55.04 / 8)
    assert h.as_of == "2026-11-20" and h.gpu_memory_gb == pytest.approx(80 * 2**30 / 1e9, abs=0.01)
    assert h.spot_zone == "us-east-1b"  # 18.50 is one zone's price (us-east-1a asks 20.00)
    src = next(x for x in db.info()["sources"] if x["provider"] == "aws")
    assert src["as_of"] == "2026-11-20" and src["date_from"] == "--as-of"


def test_refresh_without_a_date_is_unknown_and_stale_never_0_days_old(tmp_path):
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 11, 29))
    db.ensure()
    db.refresh([str(_vms(tmp_path / "aws" / "vms.csv", GOOD_AWS))])  # a plain folder: no git, no header date
    res = db.query(PriceQuery(provider="aws"), None)
    assert all(o.as_of is None for o in res.offers)
    assert res.stale is True and "unknown" in res.data_note and "0 days" not in res.data_note
    assert next(x for x in db.info()["sources"] if x["provider"] == "aws")["date_from"] == "unknown"


@pytest.mark.parametrize("content, needle", [
    ("", "empty"),
    (HEADER, "no rows"),
    (HEADER + "p5.48xlarge,H100,8,192,2048,55.04\n", "fields"),
    ("Name,Cost\nx,1\n", "missing column"),
    (HEADER + "p5.48xlarge,H100,8,192,2048,-1,,us-east-1,a,\n", "no valid GPU offer"),
])
def test_refresh_bad_file_changes_nothing(tmp_path, content, needle):
    db = PriceDb(tmp_path / "home" / "prices.duckdb")
    db.ensure()
    snapshot = db.path.read_bytes()
    f = tmp_path / "aws" / "vms.csv"
    f.parent.mkdir(parents=True)
    f.write_text(content)
    with pytest.raises(CatalogError, match=needle):
        db.refresh([str(f)])
    assert db.path.read_bytes() == snapshot


def test_refresh_crash_midway_leaves_the_old_catalog(tmp_path, monkeypatch):
    db = PriceDb(tmp_path / "home" / "prices.duckdb")
    db.ensure()
    snapshot = db.path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("knowledge.price_db.os.replace", boom)
    with pytest.raises(OSError):
        db.refresh([str(_vms(tmp_path / "aws" / "vms.csv", GOOD_AWS))])
    assert db.path.read_bytes() == snapshot
    assert not list(db.path.parent.glob(".prices.duckdb.*"))  # no temp files left behind


def test_refresh_from_an_http_url(tmp_path):
    _vms(tmp_path / "srv" / "lambda" / "vms.csv", ['gpu_1x_h100_sxm5,H100,1,26,225,3.29,,us-east-1,,'])

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path / "srv"), **k)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        db = PriceDb(tmp_path / "home" / "prices.duckdb")
        db.ensure()
        lines = []
        rep = db.refresh([f"http://127.0.0.1:{srv.server_address[1]}/lambda/vms.csv"], progress=lines.append)
        assert rep.per_provider["lambda"]["rows"] == 1 and lines
        assert db.query(PriceQuery(provider="lambda"), None).offers[0].price_usd_per_hour == pytest.approx(3.29)
    finally:
        srv.shutdown()
