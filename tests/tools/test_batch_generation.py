"""An offline generation job (N prompts in, N answers out): hours within the roofline's bounds, totals that add up."""

import math

import pytest

from assistant.service.models import resolve_model_arch
from knowledge.catalog import resolve_engine, resolve_gpu
from tools.errors import InvalidCombination
from tools.serving import ENGINE_MAX_NUM_SEQS, BatchJobRequest, batch_generation


def _job(model="llama-3.1-8b", gpu="A100 80GB SXM", **kw):
    return batch_generation(resolve_model_arch(model), resolve_gpu(gpu).gpu, resolve_engine(None), BatchJobRequest(**kw))


def test_prefill_and_decode_hours_sit_between_the_roofline_floor_and_a_30_percent_efficiency():
    # 5M documents x 1,500 tokens in, 150 out, Llama 3.1 8B (8.03e9 params) on one A100 80GB (312 TFLOPS, 2,039 GB/s).
    j = _job(requests=5_000_000, prompt_tokens=1500, output_tokens=150)
    # prefill floor: 2 x 8.03e9 x 7.5e9 prompt tokens / 312e12 FLOP/s = 386,000 s = 107 h
    floor_prefill_h = 2 * 8.03e9 * 5_000_000 * 1500 / 312e12 / 3600
    assert floor_prefill_h < j.prefill_hours_one_copy < floor_prefill_h / 0.3
    # decode floor: (5M / batch) steps x 150, each reading the 16.06 GB of weights at 2,039 GB/s
    steps = 5_000_000 / j.batch * 150
    floor_decode_h = steps * 16.06e9 / 2039e9 / 3600
    decode_h = j.hours_one_copy - j.prefill_hours_one_copy
    assert floor_decode_h < decode_h
    assert j.batch <= min(j.max_batch_in_memory, ENGINE_MAX_NUM_SEQS)


def test_totals_add_up():
    j = _job(requests=2_000_000, prompt_tokens=500, output_tokens=300, deadline_hours=24)
    # every output token written: rate x time = requests x tokens per request
    assert j.output_tokens_per_s_per_copy * j.hours_one_copy * 3600 == pytest.approx(2_000_000 * 300, rel=1e-9)
    assert j.prompt_tokens_per_s_per_copy * j.hours_one_copy * 3600 == pytest.approx(2_000_000 * 500, rel=1e-9)
    assert j.copies_for_deadline == math.ceil(j.hours_one_copy / 24)
    assert j.hours_at_that_count == pytest.approx(j.hours_one_copy / j.copies_for_deadline)
    assert j.hours_at_that_count <= 24
    double = _job(requests=4_000_000, prompt_tokens=500, output_tokens=300)
    assert double.hours_one_copy == pytest.approx(2 * j.hours_one_copy)


def test_a_model_that_does_not_fit_is_refused_with_the_way_out():
    with pytest.raises(InvalidCombination, match="does not fit on 1 x"):
        _job(model="llama-3.1-70b", gpu="L4", requests=10, prompt_tokens=500, output_tokens=100)


@pytest.mark.parametrize("bad", [{"requests": 0}, {"requests": -5}, {"requests": 10, "deadline_hours": 0},
                                 {"requests": 10, "deadline_hours": float("inf")}])
def test_bad_inputs_are_rejected(bad):
    with pytest.raises(ValueError):
        BatchJobRequest(**bad)
