"""Usable GPU memory: what nvidia-smi reports (ECC and driver reservations off), used by every fit.

Figures worked by hand from the cited nvidia-smi totals (knowledge/gpus.csv usable_memory_source):
T4 15,360 MiB = 15 GiB = 16.106 GB; L4 23,034 MiB = 22.49 GiB; A10G 23,028 MiB = 22.49 GiB;
L40S 46,068 MiB = 44.99 GiB = 48.305 GB.
"""

from __future__ import annotations

import pytest

from knowledge.catalog import load_gpus, resolve_gpu, resolve_model
from tools.schemas import FitVerdict, VramRequest
from tools.vram import estimate_vram

GPUS = {g.id: g for g in load_gpus()}


def test_every_gpu_has_a_sourced_usable_memory_no_larger_than_the_vendor_figure():
    for g in GPUS.values():
        assert g.usable_memory_gib and g.usable_memory_source, g.id
        assert g.usable_memory_gib <= g.memory_gib, g.id
        assert g.usable_memory_source.startswith(("nvidia-smi", "NVML", "derived:")), g.id


def test_t4_is_15_gib_usable_16_1_gb():
    t4 = resolve_gpu("T4").gpu
    assert t4.usable_memory_gib == 15.0 and t4.memory_gb == pytest.approx(15 * 2**30 / 1e9) == pytest.approx(16.106, abs=1e-3)
    assert t4.marketing_memory_gb == 16 and t4.memory_display == "T4, 16 GB; 15 GiB usable"
    assert "15360 MiB" in t4.usable_memory_source


@pytest.mark.parametrize("gid, mib", [("l4", 23_034), ("a10g", 23_028)])
def test_24_gb_datacenter_cards_have_about_22_5_gib(gid, mib):
    g = GPUS[gid]
    assert g.usable_memory_gib == pytest.approx(mib / 1024) == pytest.approx(22.5, abs=0.02)
    assert g.memory_gb == pytest.approx(mib * 2**20 / 1e9) and "derived" not in g.usable_memory_source


def test_l40s_has_one_usable_value_in_the_fit():
    l40s = GPUS["l40s"]
    assert l40s.memory_gb == pytest.approx(46_068 * 2**20 / 1e9) == pytest.approx(48.305, abs=1e-3)
    est = estimate_vram(resolve_model("llama-3.1-8b"), VramRequest(), l40s.as_gpu_memory())
    assert est.fit.gpu_memory_gb == round(l40s.memory_gb, 2) == 48.31
    assert est.fit.marketing_memory_gb == 48


def test_vram_json_fit_is_the_usable_value_and_says_so():
    from assistant.service import api

    est = api.vram(model="llama-3.1-8b", gpu="T4", weight_precision="int8")
    assert est.to_json_dict()["fit"]["gpu_memory_gb"] == 16.11  # not 17.18 (16 GiB)
    assert any("15.0 GiB = 16.1 GB usable" in a and "nvidia-smi" in a for a in est.assumptions)


def test_a_fit_with_under_5_percent_free_is_tight():
    f = FitVerdict.of(85.5, "A100 80GB SXM", 85.9)
    assert f.fits and f.tight and f.headroom_pct == pytest.approx(0.5, abs=0.05)
    assert not FitVerdict.of(80.0, "A100 80GB SXM", 85.9).tight  # 6.9 % free
    assert not FitVerdict.of(86.0, "A100 80GB SXM", 85.9).tight  # does not fit: not tight, a miss


def test_a_tight_serving_fit_names_the_levers_that_give_margin():
    # Llama 3.1 8B bf16 on an L4 (24.15 GB usable) holds 25,055 tokens (tests/tools/test_solve.py); at
    # 24,000 tokens the total is 1.05 x (16.0605 + 24,000 x 258,048 B + 513,024 B) + 0.5 = 23.867 GB:
    # 1.2 % free, tight. An FP8 KV cache halves 24,000 x 131,072 B = 3.146 GB -> 1.573 GB: 22.21 GB, 8 % free.
    a, l4 = resolve_model("llama-3.1-8b"), GPUS["l4"]
    est = estimate_vram(a, VramRequest(seq_len=24_000), l4.as_gpu_memory())
    assert est.total_gb == pytest.approx(1.05 * (16.0605 + 24_000 * 258_048 / 1e9 + 513_024 / 1e9) + 0.5, abs=1e-3)
    assert est.fit.fits and est.fit.tight
    levers = {lv["code"]: lv for lv in est.fit.margin_levers}
    assert set(levers) == {"fp8_kv_cache", "shorter_context"}
    assert levers["fp8_kv_cache"]["total_gb"] == pytest.approx(est.total_gb - 1.05 * 24_000 * 65_536 / 1e9, abs=0.01)
    ctx = levers["shorter_context"]["params"]["seq_len"]
    assert ctx % 256 == 0 and ctx < 24_000
    for lv in levers.values():
        assert lv["headroom_pct"] >= 5.0
    # the next 256 tokens would leave under 5 % free
    assert estimate_vram(a, VramRequest(seq_len=ctx + 256)).total_gb > 0.95 * l4.memory_gb
