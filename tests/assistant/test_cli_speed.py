"""`gpu-advisor speed` and `gpu-advisor train-time` end to end."""

import json

import pytest

from tests.assistant.test_cli_vram import run


def test_speed_json_contract():
    p = run("speed", "--model", "llama-3.1-8b", "--gpu", "H100", "--batch", "16", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for k in ("decode_tokens_per_s", "aggregate_tokens_per_s", "time_to_first_token_s", "request_latency_s",
              "bound", "gpu", "assumptions"):
        assert k in d
    assert d["estimate"] is True and d["bound"] in ("memory", "compute", "interconnect")
    assert d["aggregate_tokens_per_s"] == pytest.approx(16 * d["decode_tokens_per_s"], rel=1e-9)
    assert d["memory"]["fits"] and d["memory"]["max_batch"] >= 16
    assert any("ambiguous" in a for a in d["assumptions"])  # H100 -> which variant


def test_l4_vs_a100_int8_from_the_guide_question():
    l4 = json.loads(run("speed", "--model", "llama-2-13b", "--gpu", "L4", "--precision", "int8", "--json").stdout)
    a100 = json.loads(run("speed", "--model", "llama-2-13b", "--gpu", "A100", "--precision", "int8", "--json").stdout)
    assert a100["decode_tokens_per_s"] > 3 * l4["decode_tokens_per_s"]  # 2,039 vs 300 GB/s
    assert l4["bound"] == a100["bound"] == "memory"


def test_model_that_does_not_fit_says_so():
    d = json.loads(run("speed", "--model", "llama-3.1-70b", "--gpu", "RTX 4090", "--json").stdout)
    assert d["memory"]["fits"] is False and d["memory"]["max_batch"] == 0
    assert d["assumptions"][0].startswith("Does not fit")


def test_train_time_examples_and_json():
    p = run("train-time", "--model", "mistral-7b", "--gpu", "A100", "--method", "lora", "--examples", "50000",
            "--tokens-per-example", "512", "--epochs", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["total_tokens"] == 50000 * 512 * 3
    assert d["hours"] == pytest.approx(d["total_tokens"] / d["tokens_per_s"] / 3600, rel=1e-9)
    assert d["gpu_hours"] == pytest.approx(d["hours"])


@pytest.mark.parametrize("args, needle", [
    (("speed", "--model", "llama-3.1-8b", "--gpu", "H10"), "Unknown GPU"),
    (("speed", "--model", "llama-3.1-8b", "--gpu", "H100", "--batch", "0"), "batch"),
    (("speed", "--model", "llama-3.1-8b", "--gpu", "H100", "--prompt-tokens", "10000000"), "context window"),
    (("speed", "--model", "llama-3.1-8b", "--gpu", "H100", "--gpus", "3"), "divisor"),
    (("speed", "--model", "llama-3.1-8b", "--gpu", "H100", "--engine", "warp-drive"), "engine"),
    (("speed", "--model", "llama-3.1-8b", "--gpu", "RTX 5880 Ada"), "bandwidth"),
    (("train-time", "--model", "llama-3.1-8b", "--gpu", "A100"), "dataset-tokens"),
    (("train-time", "--model", "llama-3.1-8b", "--gpu", "A100", "--dataset-tokens", "-5"), "dataset_tokens"),
    (("train-time", "--model", "llama-3.1-8b", "--gpu", "A100", "--dataset-tokens", "1e6", "--epochs", "nan"), "epochs"),
])
def test_speed_bad_input(args, needle):
    p = run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and "Traceback" not in p.stderr
