"""Serving load from traffic (tools.load, tools.serving): Little's law L = lambda x W, worked by hand."""

from __future__ import annotations

import math

import pytest

from knowledge.catalog import resolve_engine, resolve_gpu, resolve_model
from tools.errors import AdvisorError
from tools.load import TrafficRequest, serving_load
from tools.schemas import validated
from tools.serving import ServingRequest, serving_economics
from tools.throughput import SpeedRequest, estimate_speed

L8B, L4, VLLM = resolve_model("llama-3.1-8b"), resolve_gpu("L4").gpu, resolve_engine("vllm")


def test_littles_law_iterates_the_batch_to_its_fixed_point():
    # W(b) = 12 + 0.1 b s, lambda = 30/min = 0.5/s: b=1 -> W 12.1 -> L 6.05 -> 7; W(7) = 12.7 -> L 6.35 -> 7.
    load = serving_load(TrafficRequest(requests_per_minute=30), lambda b: (12 + 0.1 * b, 20.0), 256)
    assert load.concurrent_generations == 7 and load.concurrency == pytest.approx(0.5 * 12.7)
    assert load.basis == "request_rate" and "Little's law" in load.assumption


def test_users_online_with_think_time_is_a_closed_loop():
    # 120 users, 20 s think, W = 10 s flat: lambda = 120 / 30 = 4/s, L = 40 (not 120 concurrent)
    load = serving_load(TrafficRequest(users_online=120, think_time_s=20), lambda b: (10.0, 25.0), 250)
    assert load.average_requests_per_s == pytest.approx(4.0) and load.concurrent_generations == 40
    # the peak factor scales the rate: x 1.5 -> 60
    peak = serving_load(TrafficRequest(users_online=120, think_time_s=20, peak_factor=1.5), lambda b: (10.0, 25.0), 250)
    assert peak.concurrent_generations == 60


def test_users_online_without_think_time_assume_a_minute_and_say_so():
    load = serving_load(TrafficRequest(users_online=200), lambda b: (15.0, 14.0), 200)
    assert load.average_requests_per_s == pytest.approx(200 / 75) and load.concurrent_generations == 40
    assert "60 s after the last reply (assumed)" in load.assumption


@pytest.mark.parametrize("kw", [{"requests_per_minute": 5, "requests_per_day": 100}, {"peak_factor": 2}])
def test_traffic_needs_exactly_one_rate_or_users(kw):
    with pytest.raises(AdvisorError, match="rate"):
        validated(TrafficRequest, **kw)


def test_200_users_at_20_requests_a_minute_of_300_tokens_on_an_l4():
    # 20 requests a minute = 1/3 per second, 100 prompt + 200 output tokens each. The speed tool's latency
    # at batch 5 is W; Little's law: L = W / 3 must round up to the batch 5 (not the 200 users online).
    tr = TrafficRequest(users_online=200, requests_per_minute=20)
    econ = serving_economics(L8B, L4, VLLM, ServingRequest(prompt_tokens=100, output_tokens=200, traffic=tr), 0.80)
    w5 = estimate_speed(L8B, L4, VLLM, SpeedRequest(batch=5, prompt_tokens=100, output_tokens=200)).request_latency_s
    assert 12 < w5 < 15 and math.ceil(w5 / 3) == 5
    assert econ.load.concurrent_generations == 5 == econ.at_load.batch and econ.at_load.basis == "traffic"
    assert econ.load.concurrency == pytest.approx(w5 / 3)
    # always on: $0.80/h over the tokens asked for, 1/3 x 200 = 66.7 tokens/s: 0.8 / (66.67 x 3600) x 1e6 = $3.33
    assert econ.usd_per_million_tokens_served == pytest.approx(0.8 / (200 / 3 * 3600) * 1e6) == pytest.approx(3.333, abs=1e-3)
    assert econ.replicas == 1 and econ.monthly_usd == pytest.approx(0.8 * 730)
    # the throughput-optimal batch the traffic never fills would price it about 25x lower
    idle = serving_economics(L8B, L4, VLLM, ServingRequest(prompt_tokens=100, output_tokens=200), 0.80)
    assert idle.at_load.usd_per_million_tokens < econ.usd_per_million_tokens_served / 20


def test_more_concurrency_than_one_instance_holds_adds_replicas():
    # 6,000 requests a minute at 4,096 + 512 tokens: far more sequences than one L4's KV cache holds
    tr = TrafficRequest(requests_per_minute=6000)
    econ = serving_economics(L8B, L4, VLLM, ServingRequest(prompt_tokens=4096, output_tokens=512, traffic=tr), 0.80)
    assert econ.replicas == math.ceil(econ.load.concurrent_generations / econ.max_batch_in_memory) > 1
    assert econ.at_load.batch <= econ.max_batch_in_memory
    assert econ.monthly_usd == pytest.approx(0.8 * 730 * econ.replicas)
