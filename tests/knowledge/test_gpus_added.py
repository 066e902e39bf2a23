"""Consumer and workstation cards added to knowledge/gpus.csv: common spellings resolve to the right
card (not a sibling), and the stored figures are the cited ones.

Figures below are read from the sources named in each row's `source`: the TechPowerUp GPU database
(memory, bus, data rate, SMs, boost clock, TDP), NVIDIA's GeForce compare page (AI TOPS), the Turing
in-depth blog (RTX 2080 Ti), GPUOpen's RDNA matrix-core table (512 FP16/BF16/INT8 per clock per CU on RDNA 3).
"""

import pytest

from knowledge.catalog import gpu_ids_for, load_gpus, resolve_gpu

GPUS = {g.id: g for g in load_gpus()}

ADDED = ("rtx-4060-ti-8gb", "rtx-4060-ti-16gb", "rtx-4070-super", "rtx-4070-ti", "rtx-4070-ti-super", "rtx-4080-super",
         "rtx-5080", "rtx-5070-ti", "rtx-5060-ti-8gb", "rtx-5060-ti-16gb", "rtx-3090-ti", "rtx-3080-ti", "rtx-3080-12gb",
         "rtx-3070-ti", "rtx-3070", "rtx-3060-ti", "rtx-3060-8gb", "rtx-2080-ti", "rtx-2060", "rtx-2060-12gb", "titan-rtx",
         "gtx-1080-ti", "rtx-a4500", "rtx-a2000", "rtx-a2000-12gb", "rx-7900-xtx", "rx-7900-xt", "radeon-pro-w7900")


@pytest.mark.parametrize("name, gpu_id", [
    ("4060 Ti 16GB", "rtx-4060-ti-16gb"), ("RTX 4060 Ti 16GB", "rtx-4060-ti-16gb"),
    ("NVIDIA GeForce RTX 4060 Ti 16GB", "rtx-4060-ti-16gb"), ("4060ti 16gb", "rtx-4060-ti-16gb"),
    ("RTX 4060 Ti 8GB", "rtx-4060-ti-8gb"), ("rtx 4070 ti super", "rtx-4070-ti-super"), ("4070 Ti", "rtx-4070-ti"),
    ("RTX 4070 Super", "rtx-4070-super"), ("RTX 4070", "rtx-4070"), ("4080 Super", "rtx-4080-super"),
    ("RTX 4080", "rtx-4080"), ("RTX 3080 12GB", "rtx-3080-12gb"), ("RTX 3080 10GB", "rtx-3080"),
    ("3090 Ti", "rtx-3090-ti"), ("3090", "rtx-3090"), ("RTX 3060 8GB", "rtx-3060-8gb"), ("RTX 3060", "rtx-3060"),
    ("3060 Ti", "rtx-3060-ti"), ("5060 Ti 16GB", "rtx-5060-ti-16gb"), ("GTX 1080 Ti", "gtx-1080-ti"),
    ("TITAN RTX", "titan-rtx"), ("RTX A2000 12GB", "rtx-a2000-12gb"), ("7900 XTX", "rx-7900-xtx"),
    ("Radeon RX 7900 XT", "rx-7900-xt"), ("AMD Radeon PRO W7900", "radeon-pro-w7900"),
])
def test_common_spellings_resolve_to_the_card_meant(name, gpu_id):
    assert resolve_gpu(name).gpu.id == gpu_id


def test_a_size_less_family_name_says_which_member_it_took():
    m = resolve_gpu("RTX 4060 Ti")
    assert m.gpu.id == "rtx-4060-ti-8gb" and m.variants == ("RTX 4060 Ti 16GB",) and "ambiguous" in m.note
    m = resolve_gpu("RTX 3080")  # the existing 10 GB row is the family default, the 12 GB model its variant
    assert m.gpu.id == "rtx-3080" and m.gpu.memory_gib == 10 and m.variants == ("RTX 3080 12GB",)
    ids, note = gpu_ids_for("RTX 5060 Ti")  # a price question covers both memory sizes
    assert set(ids) == {"rtx-5060-ti-8gb", "rtx-5060-ti-16gb"} and "covers" in note


@pytest.mark.parametrize("gpu_id, memory_gib, bandwidth", [
    ("rtx-4060-ti-16gb", 16, 288), ("rtx-4060-ti-8gb", 8, 288), ("rtx-4070-ti-super", 16, 672.3),
    ("rtx-4070-super", 12, 504.2), ("rtx-4080-super", 16, 736.3), ("rtx-3080-12gb", 12, 912.4), ("rtx-3060-8gb", 8, 240),
    ("rtx-5080", 16, 960), ("rtx-5060-ti-16gb", 16, 448), ("rtx-2080-ti", 11, 616), ("gtx-1080-ti", 11, 484),
    ("rx-7900-xtx", 24, 960), ("radeon-pro-w7900", 48, 864),
])
def test_memory_and_bandwidth_are_the_cited_figures(gpu_id, memory_gib, bandwidth):
    g = GPUS[gpu_id]
    assert (g.memory_gib, g.mem_bandwidth_gb_per_s) == (memory_gib, bandwidth)


@pytest.mark.parametrize("gpu_id, bus_bits, gbps", [
    ("rtx-4060-ti-16gb", 128, 18), ("rtx-4070-ti-super", 256, 21), ("rtx-3080-12gb", 384, 19),
    ("rtx-3090-ti", 384, 21), ("rtx-3060-8gb", 128, 15), ("rtx-5070-ti", 256, 28), ("rx-7900-xt", 320, 20),
])
def test_bandwidth_is_bus_width_times_data_rate(gpu_id, bus_bits, gbps):
    # TechPowerUp's memory clocks (e.g. 1313 MHz GDDR6X = 21.008 Gbps) put its figures within 0.1 % of this
    assert GPUS[gpu_id].mem_bandwidth_gb_per_s == pytest.approx(bus_bits * gbps / 8, rel=1e-3)


@pytest.mark.parametrize("gpu_id, ai_tops, per_bf16", [
    ("rtx-4060-ti-16gb", 353, 8), ("rtx-4070-super", 568, 8), ("rtx-4070-ti", 641, 8), ("rtx-4070-ti-super", 706, 8),
    ("rtx-4080-super", 836, 8), ("rtx-5080", 1801, 16), ("rtx-5070-ti", 1406, 16), ("rtx-5060-ti-8gb", 759, 16),
])
def test_ada_and_blackwell_rates_follow_the_existing_rows_convention(gpu_id, ai_tops, per_bf16):
    """AI TOPS (NVIDIA compare page) / 8 on Ada, / 16 on Blackwell: BF16 with FP32 accumulate, as rtx-4080 / rtx-5070."""
    g = GPUS[gpu_id]
    ref = GPUS["rtx-4080" if per_bf16 == 8 else "rtx-5070"]
    assert g.bf16_dense_tflops == pytest.approx(ai_tops / per_bf16)
    assert g.fp8_dense_tflops / g.bf16_dense_tflops == pytest.approx(ref.fp8_dense_tflops / ref.bf16_dense_tflops)
    assert g.int8_dense_tops / g.bf16_dense_tflops == pytest.approx(ref.int8_dense_tops / ref.bf16_dense_tflops)


@pytest.mark.parametrize("gpu_id, sms, boost_mhz", [
    ("rtx-3090-ti", 84, 1860), ("rtx-3080-ti", 80, 1665), ("rtx-3080-12gb", 70, 1710), ("rtx-3070-ti", 48, 1770),
    ("rtx-3070", 46, 1725), ("rtx-3060-ti", 38, 1665),
])
def test_geforce_ampere_rate_is_the_rtx_3090_per_sm_rate(gpu_id, sms, boost_mhz):
    """GA102 whitepaper: RTX 3090 = 71 TFLOPS FP16/BF16 tensor with FP32 accumulate at 82 SM x 1695 MHz."""
    per_sm_clock = 71e12 / (82 * 1695e6)  # ~511 FLOP per clock per SM
    assert GPUS[gpu_id].bf16_dense_tflops == pytest.approx(per_sm_clock * sms * boost_mhz * 1e6 / 1e12, rel=0.01)
    assert GPUS[gpu_id].int8_dense_tops == pytest.approx(4 * GPUS[gpu_id].bf16_dense_tflops, rel=1e-3)


def test_turing_geforce_runs_fp32_accumulate_at_half_rate_and_titan_at_full():
    # Turing in-depth blog, Table 1: RTX 2080 Ti 107.6 (FP16 acc.) / 53.8 (FP32 acc.); TU102 at 1770 MHz 130.5 / 130.5
    assert GPUS["rtx-2080-ti"].bf16_dense_tflops == 53.8 and GPUS["titan-rtx"].bf16_dense_tflops == 130.5
    # the same per-SM rate (512 FLOP/clk with FP32 accumulate) gives the 2080 Ti figure and the RTX 2060 rows
    for gpu_id, sms, mhz in (("rtx-2080-ti", 68, 1545), ("rtx-2060", 30, 1680), ("rtx-2060-12gb", 34, 1650)):
        assert GPUS[gpu_id].bf16_dense_tflops == pytest.approx(512 * sms * mhz / 1e6, rel=0.002), gpu_id


def test_rdna3_matrix_rate_is_512_per_clock_per_cu():
    for gpu_id, cus, mhz in (("rx-7900-xtx", 96, 2498), ("rx-7900-xt", 84, 2394), ("radeon-pro-w7900", 96, 2495)):
        g = GPUS[gpu_id]
        assert g.bf16_dense_tflops == pytest.approx(512 * cus * mhz / 1e6, rel=1e-3), gpu_id
        assert g.fp8_support is False and g.fp8_dense_tflops is None


def test_every_added_row_is_complete_and_sourced():
    for gpu_id in ADDED:
        g = GPUS[gpu_id]
        assert "http" in g.source and g.notes, gpu_id
        assert g.memory_gib and g.memory_type and g.mem_bandwidth_gb_per_s, gpu_id
        assert g.board_power_w and g.power_source and g.release_year, gpu_id
        assert g.architecture and g.gpu_class in ("consumer", "workstation") and g.interconnect and g.form_factor, gpu_id
        assert g.fp8_support is (g.architecture in ("Ada Lovelace", "Blackwell")), gpu_id
        # every card with matrix units has a dense 16-bit tensor rate; the GTX 1080 Ti (Pascal) has none
        assert (g.bf16_dense_tflops is None) == (g.architecture == "Pascal"), gpu_id
