"""Refresh from SkyPilot catalog trees as they are: offers checked against the raw rows by hand.

Fixture: tests/data/skypilot_rows/ (rows copied verbatim from real catalogs; see its README), copied to a
temporary folder so no git date leaks in. Every expected number below is worked from those rows.
"""

import datetime as dt
import shutil
from pathlib import Path

import pytest

from knowledge.price_db import CatalogError, PriceDb
from tools.schemas import PriceQuery

ROWS = Path(__file__).resolve().parents[1] / "data" / "skypilot_rows"
REAL_TREE = Path(__file__).resolve().parents[3] / "shared" / "data" / "skypilot_catalog_v8"
GB_PER_GIB = 2**30 / 1e9


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    tree = tmp_path_factory.mktemp("tree") / "v8"
    shutil.copytree(ROWS, tree)
    db = PriceDb(tmp_path_factory.mktemp("home") / "prices.duckdb", today=dt.date(2026, 6, 1))
    db.ensure()
    rep = db.refresh([str(tree)], as_of="2026-05-20")
    return db, rep, tree


def one(db, **kw):
    offers = db.query(PriceQuery(limit=50, **{k: v for k, v in kw.items() if k != "it"}), None).offers
    got = [o for o in offers if o.instance_type == kw.get("it")]
    assert len(got) == 1, [(o.instance_type, o.region) for o in offers]
    return got[0]


def test_tree_with_unknown_provider_and_non_offer_files_loads(refreshed):
    _, rep, tree = refreshed
    assert set(rep.per_provider) == {"gcp", "aws", "azure", "vast", "cudo", "shadeform", "acmegpu"}
    assert rep.new_providers == ["acmegpu"] and not rep.bad
    skipped = {Path(s["file"]).relative_to(tree).as_posix() for s in rep.skipped}
    assert skipped == {"README.md", "gcp/images.csv", "common/accelerators.csv", "kubernetes/images.csv"}
    assert rep.dates["gcp"] == {"as_of": "2026-05-20", "date_from": "--as-of"}


@pytest.mark.parametrize("it, od, spot, n, gpu_id", [
    # host VM row + accelerator row of the same zone (us-central1-a/b/c all equal):
    pytest.param("a3-highgpu-8g", 9.46006 + 33.60609, 3.86318 + 32.0104, 8, "h100-sxm", id="a3-8xH100=43.06615"),
    pytest.param("g2-standard-4", 0.14679 + 0.56004, 0.06168 + 0.2343, 1, "l4", id="g2-L4=0.70683"),
    # GPU-only spot 1.964 is above GPU-only on-demand 1.8462, but with the VM spot is cheaper: 2.51378 < 2.94582
    pytest.param("a2-ultragpu-1g", 1.09962 + 1.8462, 0.54978 + 1.964, 1, "a100-80gb-sxm", id="a2-ultra-spot-kept"),
    pytest.param("a2-highgpu-1g", 0.73948 + 2.93391, 0.36975 + 1.4341, 1, "a100-40gb-sxm", id="a2-high=3.67339"),
])
def test_gcp_host_vm_and_gpu_summed_per_zone(refreshed, it, od, spot, n, gpu_id):
    o = one(refreshed[0], provider="gcp", region="us-central1", it=it)
    assert o.price_usd_per_hour == pytest.approx(od, abs=1e-6)
    assert o.spot_price_usd_per_hour == pytest.approx(spot, abs=1e-6)
    assert o.price_usd_per_gpu_hour == pytest.approx(od / n, abs=1e-6)
    assert o.gpu_id == gpu_id and o.gpu_count == n and o.price_scope == "instance (host VM + GPU summed)"


def test_gcp_attachable_t4_is_gpu_only_and_tpus_are_not_gpus(refreshed):
    db = refreshed[0]
    t4 = db.query(PriceQuery(provider="gcp", limit=50), ["t4"]).offers
    assert len(t4) == 1 and t4[0].instance_type is None and t4[0].price_usd_per_hour == pytest.approx(0.35)
    assert t4[0].price_scope.startswith("accelerator_only")
    assert not [o for o in db.query(PriceQuery(provider="gcp", limit=100), None).offers if "tpu" in o.accelerator_name]
    assert any(r.startswith("not a GPU: Google TPU") for r in db.info()["dropped_reasons"])


def test_aws_p5_zones_collapse_and_the_local_zone_spot_is_named(refreshed):
    o = one(refreshed[0], provider="aws", region="us-east-1", it="p5.48xlarge")
    assert o.price_usd_per_hour == pytest.approx(55.04) and o.price_usd_per_gpu_hour == pytest.approx(6.88)
    # spot by zone: 10.2397 (use1-atl2-az1, Atlanta Local Zone), 55.04, 19.2531, 21.1543, 55.04, 25.7522, 17.6289
    assert o.spot_price_usd_per_hour == pytest.approx(10.2397) and o.spot_zone == "use1-atl2-az1"
    assert o.zone is None  # 55.04 in every zone
    assert o.gpu_memory_gb == pytest.approx(80 * GB_PER_GIB, abs=1e-3) and o.nvlink and o.gpu_id == "h100-sxm"
    eu = one(refreshed[0], provider="aws", region="eu-north-1", it="p5.48xlarge")
    assert eu.spot_price_usd_per_hour == pytest.approx(28.3188) and eu.spot_zone == "eun1-az3"  # others blank
    assert eu.country == "SE" and eu.continent == "europe"


def test_azure_nd_h100_nc_a100_pcie_and_fractions_dropped(refreshed):
    db = refreshed[0]
    nd = one(db, provider="azure", region="eastus", it="Standard_ND96isr_H100_v5")
    assert nd.gpu_id == "h100-sxm" and nd.price_usd_per_gpu_hour == pytest.approx(98.32 / 8) and nd.nvlink
    assert nd.spot_price_usd_per_hour == pytest.approx(18.169536)
    nc = one(db, provider="azure", region="westeurope", it="Standard_NC24ads_A100_v4")
    assert nc.gpu_id == "a100-80gb-pcie" and nc.price_usd_per_hour == pytest.approx(4.775) and not nc.nvlink
    assert nc.continent == "europe" and nc.country == "NL"
    its = {o.instance_type for o in db.query(PriceQuery(provider="azure", limit=200), None).offers}
    assert "Standard_NV4as_v4" not in its and "Standard_NV6ads_A10_v5" not in its  # 1/8 MI25, 1/6 A10
    assert {"Standard_NV32as_v4", "Standard_NV36ads_A10_v5"} <= its  # whole GPUs stay
    reasons = db.info()["dropped_reasons"]
    assert any("1/8 of an MI25" in r for r in reasons) and any("1/6 of an A10" in r for r in reasons)
    # "at least 16 GB on Azure" no longer starts with a $0.23 eighth of an MI25
    cheap = db.query(PriceQuery(provider="azure", min_vram_gb=16, limit=1), None).offers[0]
    assert cheap.instance_type != "Standard_NV4as_v4"


@pytest.mark.parametrize("region, it, gpu_id, gib, per_gpu", [
    # GpuInfo SizeInMiB is the instance total: 163840 / 2 = 81920 MiB = 80 GiB per GPU
    pytest.param("Montana, US, NA", "2x-A100_SXM4-32-65536", "a100-80gb-sxm", 80, 1.87 / 2, id="vast-2x-80GB"),
    pytest.param("Germany, DE, EU", "2x-A100_SXM4-32-65536", "a100-40gb-sxm", 40, 1.87 / 2, id="vast-2x-40GB"),
    pytest.param("South Korea, KR, AS", "2x-A100_PCIE-32-65536", "a100-40gb-pcie", 40, 1.33 / 2, id="vast-2x-pcie"),
    # 1150168 / 8 = 143771 MiB = 140.4 GiB per H200 (not 1,206 GB)
    pytest.param("France, FR, EU", "8x-H200-32-65536", "h200-sxm", 1150168 / 8 / 1024, 20.71 / 8, id="vast-8x-H200"),
])
def test_vast_memory_is_per_gpu(refreshed, region, it, gpu_id, gib, per_gpu):
    o = one(refreshed[0], provider="vast", region=region, it=it)
    assert o.gpu_id == gpu_id and o.gpu_memory_gb == pytest.approx(gib * GB_PER_GIB, abs=1e-3)
    assert o.price_usd_per_gpu_hour == pytest.approx(per_gpu) and o.spot_price_usd_per_hour is None  # 0.00 = none


def test_cudo_pci_a100_is_the_pcie_card_without_nvlink(refreshed):
    db = refreshed[0]
    o = one(db, provider="cudo", region="us-carlsbad-1", gpus=8, it="intel-ice-lake-a100-pci_8x64v128gb")
    assert o.gpu_id == "a100-80gb-pcie" and not o.nvlink
    assert o.price_usd_per_gpu_hour == pytest.approx(11.5488 / 8) and o.gpu_memory_gb == pytest.approx(80 * GB_PER_GIB, abs=1e-3)
    assert o.vcpus == 64 and o.host_memory_gib == 128 and o.country == "US"
    h = one(db, provider="cudo", region="no-kristiansand-1", gpus=8, it="sapphire-rapids-h100_8x64v128gb")
    assert h.gpu_id == "h100-sxm" and h.nvlink and h.continent == "europe"


def test_shadeform_gpu_memory_field_holds_gb(refreshed):
    db = refreshed[0]
    l4 = one(db, provider="shadeform", region="paris-france-5", it="scaleway_L4")  # 'SizeInMiB': 24 means 24 GB
    a100 = one(db, provider="shadeform", region="culpeper-usa-1", it="crusoe_A100-80GBx2")  # 80 per GPU, 2 GPUs
    assert l4.gpu_id == "l4" and l4.gpu_memory_gb == pytest.approx(24 * GB_PER_GIB, abs=1e-3)
    assert a100.gpu_id == "a100-80gb-sxm" and a100.gpu_memory_gb == pytest.approx(80 * GB_PER_GIB, abs=1e-3)
    assert a100.price_usd_per_gpu_hour == pytest.approx(2.0) and l4.country == "FR" and a100.country == "US"


def test_unknown_provider_loads_under_its_folder_name(refreshed):
    db = refreshed[0]
    o = db.query(PriceQuery(provider="acmegpu"), None).offers
    assert len(o) == 1 and o[0].price_usd_per_hour == pytest.approx(2.40) and o[0].gpu_id == "h100-sxm"
    assert o[0].country == "FR"


def test_bad_file_keeps_that_providers_rows_and_strict_aborts(tmp_path):
    tree = tmp_path / "v8"
    shutil.copytree(ROWS / "aws", tree / "aws")
    shutil.copytree(ROWS / "vast", tree / "vast")
    good = (ROWS / "vast" / "vms.csv").read_text().splitlines()
    (tree / "vast" / "vms.csv").write_text("\n".join(good[:3] + ["8x-H200-32-65536,H200,8,32"]) + "\n")
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
    db.ensure()
    vast_before = next(p["offers"] for p in db.info()["providers"] if p["provider"] == "vast")
    snapshot = db.path.read_bytes()
    with pytest.raises(CatalogError, match=r"vast/vms.csv line 4: 4 fields, the header has 9"):
        db.refresh([str(tree)], strict=True)
    assert db.path.read_bytes() == snapshot
    rep = db.refresh([str(tree)])
    assert list(rep.per_provider) == ["aws"]
    assert rep.bad == [{"file": str(tree / "vast" / "vms.csv"), "line": 4,
                        "error": "4 fields, the header has 9 (truncated or malformed file)", "provider": "vast"}]
    info = db.info()
    assert next(p["offers"] for p in info["providers"] if p["provider"] == "vast") == vast_before
    assert info["last_refresh"]["bad"][0]["line"] == 4


@pytest.mark.skipif(not REAL_TREE.is_dir(), reason="the shared real catalog tree is not on this machine")
def test_whole_real_tree_plus_cudo_unknown_provider_and_non_offer_files(tmp_path):
    tree = tmp_path / "v8"
    shutil.copytree(REAL_TREE, tree)
    for extra in ("cudo", "acmegpu", "common", "kubernetes"):
        shutil.copytree(ROWS / extra, tree / extra)
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
    db.ensure()
    rep = db.refresh([str(tree)])
    assert not rep.bad and rep.new_providers == ["acmegpu"]
    assert set(rep.per_provider) >= {"aws", "azure", "gcp", "lambda", "vast", "nebius", "hyperbolic", "cudo"}
    a3 = one(db, provider="gcp", region="us-central1", gpus=8, it="a3-highgpu-8g")
    assert a3.price_usd_per_hour == pytest.approx(43.06615, abs=1e-6)
    assert sum(1 for _ in db.info()["dropped_reasons"]) and rep.dates["gcp"]["as_of"] is None  # no date given
