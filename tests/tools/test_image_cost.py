"""Batch-job and endpoint cost of image generation, worked by hand."""

import pytest

from tools.cost import BillingPolicy, SpotAssumptions
from tools.errors import InvalidCombination, InvalidInput
from tools.image_cost import BatchJobRequest, EndpointRequest, batch_job_cost, endpoint_cost
from tools.schemas import validated

PER_S = BillingPolicy(provider="p", increment_s=1)
PER_H = BillingPolicy(provider="p", increment_s=3600)


def test_short_batch_job_per_second_vs_per_hour():
    # 200 images at 3.0 s each after a 20 s model load: 20 + 600 = 620 s = 0.172222 h
    req = BatchJobRequest(images=200, seconds_per_batch=3.0, startup_s=20)
    s = batch_job_cost(req, 0.80, PER_S)
    h = batch_job_cost(req, 0.80, PER_H)
    assert s["runtime_hours"] == pytest.approx(620 / 3600)
    assert s["on_demand_cost_usd"] == pytest.approx(620 / 3600 * 0.80)      # $0.1378 per second
    assert h["on_demand_cost_usd"] == pytest.approx(0.80)                     # one started hour
    assert h["billing"]["per_second_usd"] == pytest.approx(s["on_demand_cost_usd"])
    assert s["usd_per_1000_images"] == pytest.approx(620 / 3600 * 0.80 / 200 * 1000)


def test_ten_thousand_images_in_batches_on_two_gpus():
    # 10,000 images, 4 per call at 10 s, two GPUs: ceil(10,000 / 4 / 2) = 1,250 calls each = 12,500 s + 30 s load
    req = BatchJobRequest(images=10_000, images_per_batch=4, seconds_per_batch=10, startup_s=30, gpus=2)
    d = batch_job_cost(req, 1.00, PER_H)
    assert d["calls_per_gpu"] == 1250
    assert d["runtime_hours"] == pytest.approx(12_530 / 3600)                # 3.4806 h
    assert d["billed_hours"] == pytest.approx(4.0)                            # hourly billing rounds to 4 h
    assert d["on_demand_cost_usd"] == pytest.approx(4.0 * 1.00 * 2)
    assert d["gpu_hours"] == pytest.approx(2 * 12_530 / 3600)


def test_spot_checkpoints_every_image_and_restarts_with_a_reload():
    req = BatchJobRequest(images=200, seconds_per_batch=3.0, startup_s=20)
    d = batch_job_cost(req, None, PER_S, spot_usd_per_hour=0.30, spot=SpotAssumptions(interruptions_per_hour=0.05))
    # each interruption loses half a batch (1.5 s) plus 10 min restart + 20 s reload = 0.172639 h
    loss_h = 1.5 / 3600 + 10 / 60 + 20 / 3600
    wall = (620 / 3600) / (1 - 0.05 * loss_h)
    assert d["spot"]["wall_hours"] == pytest.approx(wall)
    assert d["spot"]["cost_usd"] == pytest.approx(wall * 0.30)
    assert "on_demand_cost_usd" not in d   # no on-demand price given: not counted as zero


def test_endpoint_replicas_and_cost_per_thousand():
    # 1.5 s per image -> 2,400 images/h per replica; 5,000 images/h need 3 replicas
    d = endpoint_cost(EndpointRequest(images_per_hour=5000, seconds_per_batch=1.5), 0.80)
    assert d["replicas"] == 3
    assert d["utilisation"] == pytest.approx(5000 / 7200)
    assert d["usd_per_1000_images"] == pytest.approx(3 * 0.80 / 5000 * 1000)   # $0.48
    assert d["usd_per_1000_images_at_full_load"] == pytest.approx(0.80 / 2400 * 1000)
    assert d["monthly_usd"] == pytest.approx(3 * 0.80 * 730)


def test_bad_inputs():
    with pytest.raises(InvalidInput, match="images"):
        validated(BatchJobRequest, images=0, seconds_per_batch=1)
    with pytest.raises(InvalidInput, match="seconds_per_batch"):
        validated(BatchJobRequest, images=5, seconds_per_batch=float("nan"))
    with pytest.raises(InvalidCombination):
        endpoint_cost(EndpointRequest(images_per_hour=10, seconds_per_batch=1), 0.0)
