"""estimate_vram = compute_vram_components (arithmetic) + explain_vram_component (text)."""

import pytest

from knowledge.catalog import resolve_model
from tools.schemas import VramRequest
from tools.vram import compute_vram_components, estimate_vram, explain_vram_component


@pytest.mark.parametrize("model, req", [
    ("llama-3.1-8b", VramRequest()),
    ("qwen2.5-72b", VramRequest(method="qlora", double_quant=True, chunked_loss=True)),
    ("llama-3.1-70b", VramRequest(method="full", gpus=8, sharding="fsdp", grad_checkpointing=True)),
    ("llama-3.1-405b", VramRequest(weight_precision="fp8", gpus=8, tensor_parallel=8, seq_len=8192)),
], ids=["8b-inference", "72b-qlora", "70b-fsdp", "405b-fp8-tp8"])
def test_the_estimate_is_the_computed_components_explained(model, req):
    a = resolve_model(model)
    parts = compute_vram_components(a, req)
    est = estimate_vram(a, req)
    nonzero = [p for p in parts if p.n_bytes > 0]
    assert [p.name for p in nonzero] == [c.name for c in est.components]
    for p, c in zip(nonzero, est.components):
        assert c.gb == pytest.approx(p.n_bytes / 1e9, rel=1e-12)
        assert (c.formula, c.source) == explain_vram_component(p)
    assert est.total_gb == pytest.approx(sum(p.n_bytes for p in nonzero) / 1e9, abs=1e-6)
    # CUDA context = 0.5 GB + 5 % of everything allocated before it
    allocated = sum(p.n_bytes for p in nonzero[:-1]) / 1e9
    assert nonzero[-1].name == "cuda_context" and nonzero[-1].n_bytes / 1e9 == pytest.approx(0.5 + 0.05 * allocated)


def test_explanations_show_the_computed_numbers():
    # Llama 3.1 8B bf16: 8.03 B params x 2 B; KV 131,072 B = 131.1 kB per token
    parts = {p.name: p for p in compute_vram_components(resolve_model("llama-3.1-8b"), VramRequest(seq_len=8192))}
    assert explain_vram_component(parts["weights"])[0] == "8.03B params x 2 B (bf16)"
    assert explain_vram_component(parts["kv_cache"])[0] == "batch 1 x 8,192 tokens x 131.1 kB/token (bf16)"
