"""`gpu-advisor vram` end to end, as a user runs it (subprocess: real exit codes, real stderr)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "assistant.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_issue_example_qlora_json():
    p = run("vram", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "2", "--seq-len", "2048", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert set(d) >= {"total_gb", "components_gb", "model", "inputs", "assumptions"}
    assert d["total_gb"] == pytest.approx(sum(d["components_gb"].values()), abs=1e-4)
    assert d["inputs"]["weight_precision"] == "nf4" and d["inputs"]["batch"] == 2
    assert d["model"]["params_b"] == pytest.approx(8.03, abs=0.01)
    assert {"weights", "activations", "lora_adapters", "optimizer", "cuda_context"} <= set(d["components_gb"])


def test_config_fsdp_json(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "tie_word_embeddings": True,
           "max_position_embeddings": 131072}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    one = json.loads(run("vram", "--config", str(path), "--method", "full", "--json").stdout)
    four = run("vram", "--config", str(path), "--method", "full", "--gpus", "4", "--sharding", "fsdp", "--json")
    assert four.returncode == 0, four.stderr
    d = json.loads(four.stdout)
    # Llama 3.2 1B shape: 1.24B params; FSDP over 4 shards the optimizer 4 ways
    assert d["model"]["params_b"] == pytest.approx(1.236, abs=0.005)
    assert d["components_gb"]["optimizer"] == pytest.approx(one["components_gb"]["optimizer"] / 4, rel=1e-3)
    assert d["inputs"]["gpus"] == 4 and d["inputs"]["sharding"] == "fsdp"


def test_fit_verdict_against_gpu():
    p = run("vram", "--model", "llama-3.1-8b", "--gpu", "RTX 4090", "--seq-len", "8192", "--json")
    d = json.loads(p.stdout)
    fit = d["fit"]
    assert fit["gpu"] == "RTX 4090" and fit["gpu_memory_gb"] == pytest.approx(24 * 2**30 / 1e9, abs=0.01)
    assert fit["fits"] is (d["total_gb"] <= fit["gpu_memory_gb"])
    assert fit["headroom_gb"] == pytest.approx(fit["gpu_memory_gb"] - d["total_gb"], abs=0.01)


def test_ambiguous_gpu_is_named():
    p = run("vram", "--model", "llama-3.1-8b", "--gpu", "H100", "--json")
    d = json.loads(p.stdout)
    assert d["fit"]["gpu"] == "H100 SXM"
    assert any("ambiguous" in a and "H100 PCIe" in a for a in d["assumptions"])


def test_human_table_lists_components_and_total():
    p = run("vram", "--model", "mistral-7b", "--method", "lora", "--gpu", "A10G")
    assert p.returncode == 0, p.stderr
    for word in ("weights", "activations", "total", "A10G", "Assumptions"):
        assert word in p.stdout


@pytest.mark.parametrize("args, needle", [
    (("--params-b", "7", "--batch", "-3"), "batch"),
    (("--params-b", "7", "--seq-len", "0"), "seq_len"),
    (("--params-b", "1e30"), "params_b"),
    (("--params-b", "nan"), "params_b"),
    (("--params-b", "-7"), "params_b"),
    (("--params-b", "inf"), "params_b"),
    (("--model", "llama-3.1-8b", "--method", "lora", "--lora-rank", "100000"), "lora_rank"),
    (("--model", "llama-3.1-8b", "--precision", "int3"), "weight_precision"),
    (("--model", "llama-3.1-8b", "--gpus", "99999"), "gpus"),
    (("--model", "llama-3.1-8b", "--gpus", "2", "--tensor-parallel", "4"), "tensor_parallel"),
    (("--model", "Llama-9-Ultra-900B-Turbo"), "Unknown model"),
    (("--model", "llama-3.1-8b", "--gpu", "H10"), "Unknown GPU"),
    (("--model", "llama-3.1-8b", "--gpu", "A100'; DROP TABLE offers; --"), "Unknown GPU"),
    (("--config", "/nonexistent/config.json"), "Cannot read"),
    (("--model", "llama-3.1-8b", "--batch", "two"), "not an integer"),
])
def test_bad_input_exit_2_with_clear_message(args, needle):
    p = run("vram", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout


def test_unknown_model_lists_close_names():
    p = run("vram", "--model", "llama-3.1-9b")
    assert p.returncode == 2
    assert "llama-3.1-8b" in p.stderr and "--params-b" in p.stderr


def test_ambiguous_model_asks_which():
    p = run("vram", "--model", "codellama")
    assert p.returncode == 2
    assert "ambiguous" in p.stderr and "codellama-7b" in p.stderr and "codellama-34b" in p.stderr


def test_image_pipeline_components():
    p = run("vram", "--model", "black-forest-labs/FLUX.1-dev", "--json")
    d = json.loads(p.stdout)
    # FLUX.1-dev transformer 11,901.41M params in bf16 (diffusers config count)
    assert d["components_gb"]["transformer"] == pytest.approx(11901.41e6 * 2 / 1e9, abs=1e-3)
    assert {"text_encoder", "text_encoder_2", "vae"} <= set(d["components_gb"])
    off = json.loads(run("vram", "--model", "flux.1-dev", "--offload-text-encoders", "--json").stdout)
    assert off["total_gb"] < d["total_gb"]
    assert "text_encoder_2" not in off["components_gb"]
    fp8 = json.loads(run("vram", "--model", "flux.1-dev", "--precision", "fp8", "--json").stdout)
    assert fp8["components_gb"]["transformer"] == pytest.approx(11901.41e6 / 1e9, abs=1e-3)


def test_huge_valid_input_is_finite():
    p = run("vram", "--params-b", "500000", "--method", "full", "--gpu", "T4", "--json")
    d = json.loads(p.stdout)
    assert d["fit"]["fits"] is False
    assert all(isinstance(v, float) and v == v and v != float("inf") for v in d["components_gb"].values())
