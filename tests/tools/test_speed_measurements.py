"""The speed estimator against published decode measurements (tests/data/speed_measurements.csv).

Engine and kernel profiles (knowledge/engines.csv, knowledge/quant_kernels.csv) were fitted on these
rows by benchmarks/calibrate_speed.py. The in-sample checks guard that fit; the leave-one-source-out
checks (every source predicted by a fit on the others) guard the out-of-sample figure reported in the
README. The issue's target is 10 % LOSO overall and 15 % per engine with two or more sources (both
reached: 9.3 % overall, every such engine at most 14.2 %); the bounds below are the measured figures plus
a small margin, so a change that makes out-of-sample accuracy worse fails here.
"""

import statistics

import pytest

from benchmarks.calibrate_speed import loso
from tests.tools.speed_cases import error_table, load_cases, source_key, summary

CASES = load_cases()
SCORED = [c for c in CASES if not c.exclude]
ORIGINAL_SOURCES = {c.source for c in CASES if int(c.id[1:].split("-")[0]) <= 94}


def test_table_is_big_and_varied_enough():
    assert len(SCORED) >= 150
    assert len({c.engine for c in SCORED}) >= 8
    assert len({c.row["gpu_id"] for c in SCORED}) >= 12
    assert any(int(c.row["gpus"]) > 1 for c in SCORED) and any(int(c.row["batch"]) >= 32 for c in SCORED)
    for c in CASES:
        assert c.row["source"].startswith("http") and c.measured > 0
        assert c.row["metric"] in ("decode_per_sequence", "aggregate_output", "decode_aggregate")


def test_at_least_40_new_measurements_from_new_sources_with_their_setup():
    new = [c for c in CASES if int(c.id[1:].split("-")[0]) >= 95]
    fresh = [c for c in new if c.source not in ORIGINAL_SOURCES]
    assert len(fresh) >= 40 and len({c.source for c in fresh}) >= 5
    for c in new:
        assert c.row["batch"] and c.row["prompt_tokens"] and c.row["output_tokens"] and c.row["engine_version"]


def test_source_key_merges_revisions_of_one_file():
    a = "https://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/README.md (table x)"
    b = "https://github.com/o/r/blob/fedcba9876543210fedcba9876543210fedcba98/README.md#perf"
    assert source_key(a) == source_key(b) == "https://github.com/o/r/blob/README.md"


def test_in_sample_median_error_at_most_10_percent():
    s = summary(error_table(SCORED))
    assert s["median_abs_pct"] <= 10.0, s


@pytest.mark.parametrize("engine, bound", [
    ("llama.cpp", 12.0), ("llama.cpp-legacy", 15.0), ("vllm", 10.0), ("vllm-v0", 10.0), ("torch-compile", 10.0),
    ("tensorrt-llm", 10.0), ("pytorch-eager-legacy", 10.0), ("sglang", 10.0), ("exllamav2", 15.0), ("mlc", 10.0),
    # transformers rows come from machines whose hosts differ (the RTX 4090 desktop runs Python ~2-3x
    # faster than the H100 and T4 servers): modelled by the shared desktop-host factor. Measured 8.4 %.
    ("pytorch-eager", 12.0)])
def test_each_engine_in_sample_median(engine, bound):
    rows = error_table([c for c in SCORED if c.engine == engine])
    assert statistics.median(abs(r["error_pct"]) for r in rows) <= bound


@pytest.fixture(scope="module")
def loso_rows():
    return loso(SCORED)


def test_leave_one_source_out_overall(loso_rows):
    # measured 9.3 % (226 rows, 36 sources) with bitsandbytes host operations and eager transformers
    # layers counted from the code, the dequantise thresholds read from the GPTQ kernels' code, vLLM V1
    # priced like torch.compile out of sample, ExLlamaV2's attention efficiency fitted on its long rows and
    # the H20's decode shortfall carried by the GPU (9.6 % while SGLang's single-GPU fit carried it);
    # 10.0 % on the 218 rows before the ExLlamaV2 context sweep, 12.5 % for the model before issue 18's
    # kernel families. The target is 10 %.
    assert len(loso_rows) == len(SCORED)
    assert summary(loso_rows)["median_abs_pct"] <= 10.0


def test_leave_one_source_out_per_engine_with_two_or_more_sources(loso_rows):
    # measured: llama.cpp 7.5 %, llama.cpp-legacy 11.5 %, torch-compile 6.5 %, tensorrt-llm 7.0 % (5.4 % while
    # the H20's shortfall held the shared HBM3 factor down, which helped its two H100 rows),
    # vllm-v0 4.8 %, mlc 10.5 %, pytorch-eager-legacy 14.2 %, pytorch-eager 11.4 % (20.7 % before its layers
    # were priced by counted torch calls; 46 of its 50 rows come from one source), exllamav2 10.1 % (30.7 %
    # before the context sweep and its attention efficiency). Target 15 % each.
    bounds = {"llama.cpp": 9.0, "llama.cpp-legacy": 13.0, "torch-compile": 8.0, "tensorrt-llm": 8.5,
              "vllm-v0": 6.5, "mlc": 12.0, "pytorch-eager-legacy": 15.0, "pytorch-eager": 13.0, "exllamav2": 12.0}
    for eng, bound in bounds.items():
        mine = [r for r in loso_rows if r["engine"] == eng]
        assert len({r["source"] for r in mine}) >= 2
        assert statistics.median(abs(r["error_pct"]) for r in mine) <= bound, eng
