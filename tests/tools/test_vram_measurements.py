"""The calculator against published peak-memory measurements (tests/data/memory_measurements.csv).

Each row carries its source (torchtune, litgpt, Hugging Face PEFT docs, Qwen speed benchmark).
Figures are compared like with like: measurements of torch.cuda.max_memory_allocated leave out the
CUDA context and allocator reserve, so the comparison does too. Rows the calculator cannot model
(CPU/paged offload, undocumented sharding, README-declared estimates) carry an `exclude` reason.
"""

import pytest

from tests.tools.memory_cases import error_table, load_cases, summary

CASES = load_cases()
SCORED = [c for c in CASES if not c.exclude]


def test_table_is_big_and_varied_enough():
    methods = {c.row["method"] for c in SCORED}
    assert methods == {"inference", "full", "lora", "qlora"}
    assert len(SCORED) >= 30
    assert any(int(c.row["gpus"] or 1) > 1 for c in SCORED)
    for c in CASES:
        assert c.row["source"].strip(), c.id
        assert c.measured_gb > 0


@pytest.mark.parametrize("case", SCORED, ids=[c.id for c in SCORED])
def test_each_measurement_within_35_percent(case):
    (row,) = error_table([case])
    assert abs(row["error_pct"]) <= 35.0, row


def test_median_error_at_most_10_percent():
    s = summary(error_table(SCORED))
    assert s["median_abs_pct"] <= 10.0, s
    assert s["max_abs_pct"] <= 35.0, s
