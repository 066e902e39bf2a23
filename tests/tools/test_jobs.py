"""Job totals (tools.jobs): GPU-hours = work / rate, the GPUs a deadline needs, the cost, worked by hand."""

from __future__ import annotations

import pytest

from tools.errors import AdvisorError
from tools.jobs import JobRequest, job_totals


def test_100k_images_at_13_s_each():
    # 100,000 x 13 s = 1,300,000 s = 361.1 GPU-hours; in 48 h: ceil(361.1 / 48) = ceil(7.52) = 8 GPUs,
    # 361.1 / 8 = 45.1 h wall; at $0.50 per GPU-hour: 8 x 45.14 x 0.5 = $180.56
    t = job_totals(JobRequest(units=100_000, unit="images", seconds_per_unit=13, deadline_hours=48,
                              price_usd_per_gpu_hour=0.50))
    assert t.gpu_hours == pytest.approx(1_300_000 / 3600) == pytest.approx(361.1, abs=0.05)
    assert t.gpus == 8 and t.wall_hours == pytest.approx(361.111 / 8, abs=1e-3) and t.meets_deadline
    assert t.cost_usd == pytest.approx(361.111 * 0.5, abs=0.01)  # the GPU-hours x price, whatever the split
    assert "361.1 GPU-hours" in t.formula and "= 8 GPUs" in t.formula


def test_instances_round_up_and_a_rate_in_units_per_second():
    # 1e9 tokens at 2,500 tokens/s per GPU = 111.1 GPU-hours; 24 h -> 5 GPUs -> two 4-GPU instances = 8 GPUs
    t = job_totals(JobRequest(units=1e9, unit="tokens", units_per_s=2500, deadline_hours=24, gpus_per_instance=4))
    assert t.gpu_hours == pytest.approx(111.11, abs=0.01) and t.instances == 2 and t.gpus == 8
    assert t.wall_hours == pytest.approx(111.11 / 8, abs=0.01) and t.cost_usd is None


def test_given_gpus_and_a_deadline_it_misses():
    t = job_totals(JobRequest(units=100_000, seconds_per_unit=13, gpus=4, deadline_hours=48))
    assert t.gpus == 4 and t.wall_hours == pytest.approx(90.28, abs=0.01) and t.meets_deadline is False


@pytest.mark.parametrize("kw", [{}, {"seconds_per_unit": 1, "units_per_s": 1}])
def test_the_rate_is_given_once(kw):
    from tools.schemas import validated
    with pytest.raises(AdvisorError, match="rate"):
        validated(JobRequest, units=10, **kw)


def test_service_and_api_share_it():
    from assistant.service import api
    assert api.job_totals(units=100_000, unit="images", seconds_per_unit=13, deadline_hours=48).gpus == 8
