"""Integrity of every catalog row, and forgiving name resolution."""

import pytest

from knowledge.catalog import load_diffusion_models, load_gpus, load_models, resolve_gpu, resolve_model
from tools.architecture import count_params
from tools.errors import UnknownGpu, UnknownModel

MODELS = load_models()
# Rows whose reported figure counts something the text model lacks (noted in models.csv).
_REPORTED_INCLUDES_MORE = {"gemma-3-4b", "gemma-3-12b", "falcon-40b"}


def test_catalog_size_and_coverage():
    assert len(MODELS) >= 40
    ids = {m.id for m in MODELS}
    for needed in ("llama-2-7b", "llama-2-70b", "llama-3.1-405b", "llama-3.2-1b", "mixtral-8x22b", "qwen2.5-72b",
                   "deepseek-v3", "deepseek-r1-distill-llama-8b", "gemma-3-27b", "phi-4", "falcon-40b",
                   "starcoder2-15b", "tinyllama-1.1b", "bloom-176b", "codellama-34b", "qwen3-30b-a3b"):
        assert needed in ids
    assert {"sdxl-base-1.0", "sd3-medium", "flux.1-dev"} <= set(load_diffusion_models())


@pytest.mark.parametrize("m", MODELS, ids=[m.id for m in MODELS])
def test_every_model_row_is_sourced_and_counts_match_the_card(m):
    assert m.source.startswith("http"), m.id
    assert m.params_reported_b > 0
    tol = 0.12 if m.id in _REPORTED_INCLUDES_MORE else 0.02
    assert count_params(m).total_b == pytest.approx(m.params_reported_b, rel=tol)
    assert m.num_attention_heads % m.num_kv_heads == 0 or m.attention_kind == "MLA"


def test_every_gpu_row_is_sourced():
    gpus = load_gpus()
    assert len(gpus) >= 30
    for g in gpus:
        assert g.source, g.name
        assert g.memory_gib is None or g.memory_gib > 0


@pytest.mark.parametrize("name", ["llama-3.1-8b", "Llama 3.1 8B", "meta-llama/Meta-Llama-3.1-8B-Instruct",
                                  "meta-llama/Llama-3.1-8B", "LLAMA-3.1-8B-INSTRUCT"])
def test_model_names_resolve_forgivingly(name):
    assert resolve_model(name).id == "llama-3.1-8b"


def test_unknown_and_ambiguous_models():
    with pytest.raises(UnknownModel) as exc:
        resolve_model("Llama-9-Ultra-900B-Turbo")
    assert "--params-b" in str(exc.value)
    with pytest.raises(UnknownModel, match="ambiguous"):
        resolve_model("codellama")


@pytest.mark.parametrize("name, expected", [
    ("H100", "H100 SXM"), ("h100 sxm", "H100 SXM"), ("H100-80G-SXM5", "H100 SXM"), ("A100-80GB", "A100 80GB SXM"),
    ("RTX6000Ada", "RTX 6000 Ada"), ("4090", "RTX 4090"), ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("l40s", "L40S"),
    ("H100-80G-PCIe", "H100 PCIe"),
])
def test_gpu_names_resolve(name, expected):
    assert resolve_gpu(name).gpu.name == expected


def test_gpu_family_names_say_which_variant():
    m = resolve_gpu("H100")
    assert "H100 PCIe" in m.variants and "H100 NVL" in m.variants and "ambiguous" in m.note
    with pytest.raises(UnknownGpu) as exc:
        resolve_gpu("H10")
    assert "H100" in str(exc.value)


def test_gpu_catalog_curation():
    gpus = {g.id: g for g in load_gpus()}
    for needed in ("h200-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "gh200", "b200", "a100-80gb-sxm", "a100-40gb-sxm",
                   "a100-80gb-pcie", "a100-40gb-pcie", "l40s", "l40", "l4", "a10g", "a10", "a40", "rtx-a6000",
                   "rtx-6000-ada", "v100-sxm2-16gb", "t4", "rtx-3090", "rtx-4080", "rtx-4090", "rtx-5090", "mi300x",
                   "mi250"):
        assert needed in gpus, needed
    for g in gpus.values():
        if g.fp8_dense_tflops:
            assert g.fp8_support, g.id  # an FP8 rate implies FP8 support
        if g.architecture in ("Ampere", "Turing", "Volta", "Pascal"):
            assert g.fp8_support is False, g.id
        if g.bf16_dense_tflops and g.fp8_dense_tflops:
            assert g.fp8_dense_tflops >= g.bf16_dense_tflops, g.id
        assert g.gpu_class in ("datacenter", "datacenter-gddr", "workstation", "consumer"), g.id
    assert gpus["h100-sxm"].has_nvlink and not gpus["l40s"].has_nvlink and not gpus["rtx-a6000"].has_nvlink
    assert gpus["h100-sxm"].is_hbm and not gpus["rtx-4090"].is_hbm


def test_engines_resolve_and_are_sourced():
    from knowledge.catalog import load_engines, resolve_engine

    assert resolve_engine("ollama").id == "llama.cpp"
    assert resolve_engine("transformers").id == "pytorch-eager"
    assert resolve_engine("TensorRT-LLM").id == "tensorrt-llm"
    assert resolve_engine(None).id == "vllm"
    for e in load_engines():
        assert e.source and 0 < e.bw_eff_hbm <= 1 and 0 < e.bw_eff_gddr <= 1
    from tools.errors import InvalidInput
    with pytest.raises(InvalidInput, match="engine"):
        resolve_engine("deepspeed-mii-9000")
