"""`gpu-advisor prices`, `catalog` and `cost` end to end (real DuckDB in a test data directory)."""

import json

import pytest

from tests.assistant.test_cli_vram import run


def test_prices_json_contract_cheapest_h100_on_demand_and_spot():
    od = json.loads(run("prices", "--gpu", "H100", "--on-demand", "--limit", "5", "--json").stdout)
    assert len(od["as_of"]) == 10 and od["stale"] is True  # the snapshot is months old
    keys = ["provider", "instance_type", "gpu", "gpu_count", "gpu_memory_gb", "price_usd_per_hour",
            "price_usd_per_gpu_hour", "spot_price_usd_per_hour", "region", "source"]
    for o in od["offers"]:
        assert list(o)[:len(keys)] == keys and o["gpu"].startswith("H100")
    p = [o["price_usd_per_gpu_hour"] for o in od["offers"]]
    assert p == sorted(p)
    sp = json.loads(run("prices", "--gpu", "H100", "--spot", "--limit", "5", "--json").stdout)
    s = [o["spot_price_usd_per_gpu_hour"] for o in sp["offers"]]
    assert s == sorted(s) and all(v is not None for v in s)


def test_prices_human_table_names_the_date():
    p = run("prices", "--gpu", "L4", "--limit", "3")
    assert p.returncode == 0 and "Prices as of" in p.stdout and "$/GPU-h" in p.stdout


@pytest.mark.parametrize("args, needle", [
    (("prices", "--gpu", "A100'; DROP TABLE offers; --"), "Unknown GPU"),
    (("prices", "--provider", "aws'; DROP TABLE offers; --"), "Invalid provider"),
    (("prices", "--max-price", "-1"), "max_price_usd_per_gpu_hour"),
    (("prices", "--limit", "0"), "limit"),
    (("prices", "--sort", "cheapest"), "sort"),
    (("prices", "--min-vram-gb", "nan"), "min_vram_gb"),
    (("cost", "--gpu", "A100"), "--hours"),
    (("cost", "--gpu", "H100", "--hours", "2", "--storage-gb", "inf"), "storage_gb"),
    (("catalog", "refresh", "--from", "/nonexistent/vms.csv"), "no such file"),
])
def test_bad_price_input(args, needle):
    p = run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and "Traceback" not in p.stderr


def test_injection_left_the_table_intact():
    run("prices", "--gpu", "A100'; DROP TABLE offers; --")
    assert json.loads(run("prices", "--limit", "1", "--json").stdout)["total_matches"] > 2000


def test_cost_twenty_minutes_on_gcp_bills_per_second():
    d = json.loads(run("cost", "--gpu", "L4", "--provider", "gcp", "--minutes", "20", "--json").stdout)
    price = d["offer"]["price_usd_per_hour"]
    assert d["billing"]["increment_s"] == 1 and d["billed_hours"] == pytest.approx(1 / 3)
    assert d["on_demand_cost_usd"] == pytest.approx(price / 3)
    assert d["billing"]["per_hour_usd"] == pytest.approx(price)


def test_cost_from_training_estimate_with_spot_and_unknown_storage():
    d = json.loads(run("cost", "--gpu", "A100", "--model", "mistral-7b", "--method", "lora", "--examples", "50000",
                       "--tokens-per-example", "512", "--epochs", "3", "--provider", "vast", "--storage-gb", "50",
                       "--json").stdout)
    assert d["runtime_hours"] == pytest.approx(d["training"]["hours"])
    assert d["storage_usd"] is None and d["total_usd"] is None  # vast storage is host-priced: unknown
    assert any("unknown" in a for a in d["assumptions"])


def test_serving_cost_per_million_tokens():
    d = json.loads(run("cost", "--gpu", "H100", "--model", "llama-3.1-8b", "--serve", "--batch", "32", "--json").stdout)
    s = d["serving"]
    assert s["usd_per_million_tokens"] == pytest.approx(
        d["offer"]["price_usd_per_hour"] / (s["aggregate_tokens_per_s"] * 3600) * 1e6)
    assert s["monthly_usd"] == pytest.approx(d["offer"]["price_usd_per_hour"] * 730)
    assert any("not advisable" in a for a in d["assumptions"])


def test_catalog_info_lists_sources_and_unmapped():
    d = json.loads(run("catalog", "info", "--json").stdout)
    assert d["providers"] and d["sources"] and "RTX6000" in d["unmapped_gpu_names"]


def test_recommend_cli_json_and_guide_cli():
    d = json.loads(run("recommend", "--model", "llama-3-8b", "--method", "qlora", "--examples", "20000",
                       "--tokens-per-example", "512", "--budget", "100", "--top", "3", "--json").stdout)
    assert d["status"] == "ok" and 1 <= len(d["options"]) <= 3
    assert [o["rank"] for o in d["options"]] == list(range(1, len(d["options"]) + 1))
    assert d["chart"]["options"] and d["citations"]
    g = run("guide", "Why does generation speed depend on memory bandwidth more than FLOPs?")
    assert g.returncode == 0 and "[ga-" in g.stdout
    bad = run("recommend", "--model", "llama-3-8b", "--method", "qlora", "--examples", "100")
    assert bad.returncode == 2 and "tokens-per-example" in bad.stderr


def test_cheapest_a100_80gb_spot_in_europe_covers_both_forms_and_every_naming():
    d = json.loads(run("prices", "--gpu", "A100 80GB", "--spot", "--region", "europe", "--limit", "3", "--json").stdout)
    assert set(d["gpu_forms"]) == {"A100 80GB SXM", "A100 80GB PCIe"}
    # Verda FIN-01: 1A100.22V spot 0.4515 USD/h for one GPU (knowledge/prices/offers.csv); the best GCP
    # europe-* answer the substring match gave before was 1.33
    top = d["offers"][0]
    assert top["provider"] == "verda" and top["region"].startswith("FIN") and top["spot_price_usd_per_gpu_hour"] == 0.4515
    assert {"FIN-01", "westeurope"} <= set(d["regions_matched"])
    assert any("read as Europe" in n for n in d["notices"]) and any("PCIe" in n for n in d["notices"])


@pytest.mark.parametrize("args, check", [
    (("--max-gpus", "1"), lambda o: o["gpu_count"] <= 1),
    (("--min-total-vram-gb", "640"), lambda o: o["gpu_memory_gb"] * o["gpu_count"] >= 640),
    (("--max-total-vram-gb", "30"), lambda o: o["gpu_memory_gb"] * o["gpu_count"] <= 30),
    (("--vendor", "amd"), lambda o: o["gpu_vendor"] == "AMD"),
    (("--provider", "aws,lambda"), lambda o: o["provider"] in ("aws", "lambda")),
    (("--gpu", "L4,T4"), lambda o: o["gpu"] in ("L4", "T4")),
    (("--min-vcpus", "96"), lambda o: o["vcpus"] >= 96),
    (("--min-ram-gb", "1000"), lambda o: o["host_memory_gib"] * 2**30 / 1e9 >= 1000),  # GiB stored, GB asked
], ids=["max-gpus", "min-total", "max-total", "vendor", "providers", "gpus", "vcpus", "ram"])
def test_new_filters(args, check):
    d = json.loads(run("prices", *args, "--limit", "200", "--json").stdout)
    assert d["offers"] and all(check(o) for o in d["offers"])


@pytest.mark.parametrize("args, needle", [
    (("prices", "--vendor", "nvidiax"), "Invalid vendor"),
    (("prices", "--provider", "aws,nosuch"), "Invalid provider"),
    (("prices", "--min-gpus", "8", "--max-gpus", "2"), "above the maximum"),
    (("catalog", "refresh", "--from", "/nonexistent/v8", "--as-of", "2099-01-01"), "no later than today"),
])
def test_bad_new_price_input(args, needle):
    p = run(*args)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, (p.stdout, p.stderr)


def test_catalog_refresh_tree_reports_files_providers_and_dates(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    from tests.assistant.test_cli_vram import ROOT

    tree = tmp_path / "v8"
    shutil.copytree(ROOT / "tests" / "data" / "skypilot_rows", tree)
    env = dict(os.environ, GPU_ADVISOR_HOME=str(tmp_path / "home"))  # not the session's catalog
    p = subprocess.run([sys.executable, "-m", "assistant.main", "catalog", "refresh", "--from", str(tree),
                        "--as-of", "2026-05-20", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["new_providers"] == ["acmegpu"] and not d["bad_files"] and len(d["skipped"]) == 4
    assert d["dates"]["gcp"] == {"as_of": "2026-05-20", "date_from": "--as-of"}
    p = subprocess.run([sys.executable, "-m", "assistant.main", "catalog", "info"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert "2026-05-20 (--as-of)" in p.stdout and "acmegpu" in p.stdout
