"""The speed estimator against published decode measurements (tests/data/speed_measurements.csv).

Engine efficiencies in knowledge/engines.csv were fitted on these rows (benchmarks/calibrate_speed.py,
whose --holdout mode reports the out-of-sample error); this test guards the calibrated result.
"""

import statistics

import pytest

from tests.tools.speed_cases import error_table, load_cases, summary

CASES = load_cases()
SCORED = [c for c in CASES if not c.exclude]


def test_table_is_big_and_varied_enough():
    assert len(SCORED) >= 20
    assert len({c.row["engine_id"] for c in SCORED}) >= 5
    assert len({c.row["gpu_id"] for c in SCORED}) >= 8
    assert any(int(c.row["gpus"]) > 1 for c in SCORED) and any(int(c.row["batch"]) >= 32 for c in SCORED)
    for c in CASES:
        assert c.row["source"].startswith("http") and c.measured > 0


def test_median_error_at_most_20_percent():
    s = summary(error_table(SCORED))
    assert s["median_abs_pct"] <= 20.0, s


@pytest.mark.parametrize("engine", ["llama.cpp", "vllm", "torch-compile", "tensorrt-llm"])
def test_each_calibrated_engine_median_within_20_percent(engine):
    rows = [r for r in error_table([c for c in SCORED if c.row["engine_id"] == engine])]
    assert statistics.median(abs(r["error_pct"]) for r in rows) <= 20.0
