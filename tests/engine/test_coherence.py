"""The coherence guard: each invariant with a turn built to violate it, and the same turn made right."""

from assistant.engine.coherence import check

_SCEN = [{"gpu": "A100 80GB SXM", "filters": {"regions": ["europe"], "providers": [], "spot": False}}]


def _rules(done, scen=_SCEN):
    return [v["rule"] for v in check(scen, done)["violations"]]


def test_fit_on_one_variant_and_price_on_another_is_a_violation():
    fit = ("vram_calculator", {"gpu": "A100 80GB SXM"}, {"fit": {"fits": True}})
    cost = ("cost_estimator", {"gpu": "A100 40GB PCIe"}, {"offer": None})
    assert _rules([fit, cost]) == ["one_gpu"]
    assert _rules([fit, ("cost_estimator", {"gpu": "A100 80GB SXM"}, {"offer": None})]) == []


def test_an_offer_outside_the_regions_asked_for_is_a_violation():
    # gcp europe-west4 is in the Netherlands; us-central1 is in the United States
    eu = {"provider": "gcp", "region": "europe-west4"}
    us = {"provider": "gcp", "region": "us-central1"}
    rec = ("recommend_gpus", {"regions": ["europe"]}, {"options": [{"offer": eu}, {"offer": us}]})
    assert _rules([rec]) == ["filters"]
    assert _rules([("recommend_gpus", {}, {"options": [{"offer": eu}]})]) == []


def test_spot_prices_after_spot_was_ruled_out_is_a_violation():
    assert _rules([("price_query", {"pricing": "spot", "region": "europe"}, {"offers": []})]) == ["filters"]
    assert _rules([("price_query", {"pricing": "on-demand", "region": "europe"}, {"offers": []})]) == []


def test_per_user_speed_above_total_throughput_is_a_violation():
    bad = ("speed_estimator", {"gpu": "A100 80GB SXM"}, {"decode_tokens_per_s": 40.0, "aggregate_tokens_per_s": 20.0,
                                                         "inputs": {"gpus": 1, "model": "llama-3.1-8b"}})
    assert _rules([bad]) == ["per_user_speed"]


def test_tensor_parallel_must_divide_the_attention_heads():
    # Llama 3.1 8B has 32 attention heads: 4 divides them, 3 does not
    def speed(n):
        return ("speed_estimator", {"gpu": "A100 80GB SXM"}, {"decode_tokens_per_s": 10.0,
                "aggregate_tokens_per_s": 10.0, "inputs": {"gpus": n, "model": "llama-3.1-8b"}})
    assert _rules([speed(3)]) == ["tensor_parallel"]
    assert _rules([speed(4)]) == []


def test_every_answer_carries_the_guards_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    from assistant.service import api

    ans = api.advisor().ask("Can I run Llama 3.1 70B on 2 A100s and what would it cost per month?")
    assert ans.coherence == {"ok": True, "violations": []}
