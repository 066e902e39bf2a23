"""Hand-worked checks of the calculator's formulas on explicit architectures (no catalog)."""

import math

import pytest

from tools.architecture import arch_from_params, count_params
from tools.errors import InvalidCombination, InvalidInput
from tools.schemas import ModelArch, VramRequest, validated
from tools.vram import estimate_vram, kv_cache_bytes_per_token, lora_param_count

# Llama 3.1 8B, numbers from meta-llama/Llama-3.1-8B config.json.
LLAMA31_8B = ModelArch(id="l8", name="Llama 3.1 8B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                       num_kv_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256,
                       max_context=131072)
# Llama 2 7B (meta-llama/Llama-2-7b-hf config.json): MHA, 32k vocab.
LLAMA2_7B = ModelArch(id="l27", name="Llama 2 7B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                      num_kv_heads=32, head_dim=128, intermediate_size=11008, vocab_size=32000,
                      attention_kind="MHA", max_context=4096)
# Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config.json).
MIXTRAL = ModelArch(id="mx", name="Mixtral 8x7B", num_layers=32, hidden_size=4096, num_attention_heads=32,
                    num_kv_heads=8, head_dim=128, intermediate_size=14336, vocab_size=32000,
                    num_experts=8, experts_per_token=2, max_context=32768)
# DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json), MLA + MoE with 3 dense layers.
DSV3 = ModelArch(id="dsv3", name="DeepSeek-V3", num_layers=61, hidden_size=7168, num_attention_heads=128,
                 num_kv_heads=128, head_dim=192, intermediate_size=18432, vocab_size=129280,
                 num_experts=256, experts_per_token=8, moe_intermediate_size=2048, num_shared_experts=1,
                 first_dense_layers=3, attention_kind="MLA", kv_lora_rank=512, q_lora_rank=1536,
                 qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, max_context=163840)


def req(**kw):
    return validated(VramRequest, **kw)


def test_llama31_8b_parameter_count_is_exact():
    # 2 * 128256 * 4096 + 32 * (2*4096^2 + 2*4096*1024 + 3*4096*14336 + 2*4096) + 4096
    assert count_params(LLAMA31_8B).total == 8_030_261_248


def test_moe_total_and_active_params_match_model_cards():
    c = count_params(MIXTRAL)  # Mistral: 46.7B total, 12.9B active
    assert c.total_b == pytest.approx(46.7, rel=0.01)
    assert c.active_b == pytest.approx(12.9, rel=0.01)
    d = count_params(DSV3)  # DeepSeek-V3 report: 671B total, 37B active (without the 14B MTP module)
    assert d.total_b == pytest.approx(671, rel=0.01)
    assert d.active_b == pytest.approx(37, rel=0.03)


def test_bf16_inference_weights_are_two_bytes_per_param():
    e = estimate_vram(LLAMA31_8B, req(method="inference", weight_precision="bf16"))
    assert e.components_gb["weights"] == pytest.approx(2 * 8_030_261_248 / 1e9, abs=1e-3)


def test_kv_cache_gqa_by_hand():
    # 2 (K,V) * 8 kv heads * 128 dims * 2 bytes * 32 layers = 131,072 B per token; x 8192 tokens x 4 seqs
    assert kv_cache_bytes_per_token(LLAMA31_8B, 2.0) == 131_072
    e = estimate_vram(LLAMA31_8B, req(method="inference", seq_len=8192, batch=4))
    assert e.components_gb["kv_cache"] == pytest.approx(131_072 * 8192 * 4 / 1e9, abs=1e-3)
    e8 = estimate_vram(LLAMA31_8B, req(method="inference", seq_len=8192, batch=4, kv_precision="fp8"))
    assert e8.components_gb["kv_cache"] == pytest.approx(e.components_gb["kv_cache"] / 2, abs=1e-3)


def test_kv_cache_mla_is_the_compressed_latent():
    # (kv_lora_rank 512 + rope 64) * 2 bytes * 61 layers = 70,272 B per token
    assert kv_cache_bytes_per_token(DSV3, 2.0) == 70_272


def test_kv_heads_replicate_beyond_tensor_parallel_degree():
    # 8 KV heads over 16 GPUs: each GPU still holds one whole head (not half of one)
    one = kv_cache_bytes_per_token(LLAMA31_8B, 2.0, tensor_parallel=8)
    assert kv_cache_bytes_per_token(LLAMA31_8B, 2.0, tensor_parallel=16) == one == 2 * 1 * 128 * 2 * 32


def test_mixed_precision_full_finetune_is_16_bytes_per_param_and_bf16_is_8():
    p = count_params(LLAMA31_8B).total
    mixed = estimate_vram(LLAMA31_8B, req(method="full", training_precision="mixed"))
    pure = estimate_vram(LLAMA31_8B, req(method="full", training_precision="bf16"))
    state = lambda e: sum(e.components_gb[k] for k in ("weights", "gradients", "optimizer"))
    assert state(mixed) == pytest.approx(16 * p / 1e9, rel=1e-4)
    assert state(pure) == pytest.approx(8 * p / 1e9, rel=1e-4)
    # same activations for both: only the training state differs, by exactly 2x
    assert mixed.components_gb["activations"] == pure.components_gb["activations"]


def test_8bit_adam_state_is_two_bytes_per_param():
    p = count_params(LLAMA31_8B).total
    e = estimate_vram(LLAMA31_8B, req(method="full", training_precision="bf16", optimizer="adamw8bit"))
    assert e.components_gb["optimizer"] == pytest.approx(2 * p / 1e9, rel=0.01)
    s = estimate_vram(LLAMA31_8B, req(method="full", training_precision="bf16", optimizer="sgd"))
    assert s.components_gb["optimizer"] == pytest.approx(2 * p / 1e9, rel=1e-4)  # one bf16 momentum


def test_zero_stages_shard_what_they_should():
    base = dict(method="full", training_precision="mixed", gpus=4)
    none = estimate_vram(LLAMA31_8B, req(**base))
    z1 = estimate_vram(LLAMA31_8B, req(**base, sharding="zero1"))
    z2 = estimate_vram(LLAMA31_8B, req(**base, sharding="zero2"))
    z3 = estimate_vram(LLAMA31_8B, req(**base, sharding="zero3"))
    assert z1.components_gb["optimizer"] == pytest.approx(none.components_gb["optimizer"] / 4, rel=1e-3)
    assert z1.components_gb["gradients"] == none.components_gb["gradients"]
    assert z2.components_gb["gradients"] == pytest.approx(none.components_gb["gradients"] / 4, rel=1e-3)
    assert z2.components_gb["weights"] == none.components_gb["weights"]
    # ZeRO-3: a quarter of the weights plus two gathered layers (218.1M params x 2 B each)
    layer = 218_112_000 - 8192
    assert z3.components_gb["weights"] == pytest.approx((none.components_gb["weights"] / 4) + 2 * layer * 2 / 1e9, rel=1e-3)


def test_lora_param_count_matches_peft_printout():
    # PEFT on Llama-2-7b, r=8, q_proj+v_proj: "trainable params: 4,194,304"
    assert lora_param_count(LLAMA2_7B, 8, ("q", "v")) == 4_194_304
    e = estimate_vram(LLAMA2_7B, req(method="lora", lora_rank=8, lora_targets="q_proj,v_proj", training_precision="mixed"))
    assert e.components_gb["lora_adapters"] == pytest.approx(4_194_304 * 4 / 1e9, abs=1e-4)
    assert e.components_gb["optimizer"] == pytest.approx(4_194_304 * 8 / 1e9, abs=1e-4)


def test_qlora_weights_nf4_and_double_quant_constants():
    c = count_params(LLAMA31_8B)
    e = estimate_vram(LLAMA31_8B, req(method="qlora"))
    # linear layers at 4 bits, embeddings + LM head + norms at 16 bits
    assert e.components_gb["weights"] == pytest.approx((c.blocks_linear * 0.5 + c.unquantized * 2) / 1e9, rel=1e-5)
    assert e.components_gb["quantization_constants"] == pytest.approx(c.blocks_linear * 0.5 / 8 / 1e9, rel=1e-5)
    dq = estimate_vram(LLAMA31_8B, req(method="qlora", double_quant=True))
    # 8/64 + 32/(64*256) = 0.127 bits per parameter (QLoRA paper)
    assert dq.components_gb["quantization_constants"] == pytest.approx(c.blocks_linear * 0.127 / 8 / 1e9, rel=1e-3)


def test_gradient_checkpointing_cuts_activations():
    off = estimate_vram(LLAMA31_8B, req(method="lora", batch=4, grad_checkpointing=False))
    on = estimate_vram(LLAMA31_8B, req(method="lora", batch=4, grad_checkpointing=True))
    assert on.components_gb["activations"] < off.components_gb["activations"] / 4
    # checkpointing keeps each layer's 16-bit input: 32 layers x 4*2048 tokens x 4096 x 2 B at least
    assert on.components_gb["activations"] >= 32 * 4 * 2048 * 4096 * 2 / 1e9


def test_activations_scale_linearly_with_tokens():
    a = estimate_vram(LLAMA2_7B, req(method="full", batch=1, seq_len=1024)).components_gb["activations"]
    b = estimate_vram(LLAMA2_7B, req(method="full", batch=2, seq_len=2048)).components_gb["activations"]
    assert b == pytest.approx(4 * a, rel=1e-5)


def test_eager_attention_adds_quadratic_term():
    sdpa = estimate_vram(LLAMA2_7B, req(method="full", seq_len=4096)).components_gb["activations"]
    eager = estimate_vram(LLAMA2_7B, req(method="full", seq_len=4096, attention="eager")).components_gb["activations"]
    # 6 bytes x 32 heads x 4096^2 per layer, 32 layers
    assert eager - sdpa == pytest.approx(6 * 32 * 4096 * 4096 * 32 / 1e9, rel=1e-5)


def test_fit_verdict_headroom():
    from tools.schemas import GpuMemory
    e = estimate_vram(LLAMA31_8B, req(method="inference"), GpuMemory(name="X", memory_gb=20.0))
    assert e.fit.fits is (e.total_gb <= 20.0)
    assert e.fit.headroom_gb == pytest.approx(20.0 - e.total_gb, abs=0.01)


@pytest.mark.parametrize("kw, field", [
    (dict(batch=-3), "batch"),
    (dict(batch=0), "batch"),
    (dict(seq_len=0), "seq_len"),
    (dict(weight_precision="int3"), "weight_precision"),
    (dict(method="train"), "method"),
    (dict(optimizer="lion"), "optimizer"),
    (dict(gpus=0), "gpus"),
    (dict(gpus=10**6), "gpus"),
    (dict(lora_targets="q,foo"), "lora_targets"),
    (dict(kv_precision="int2"), "kv_precision"),
], ids=lambda x: str(x))
def test_bad_values_name_the_field(kw, field):
    with pytest.raises(InvalidInput) as exc:
        req(**kw)
    assert exc.value.field == field
    assert repr(list(kw.values())[0]) in str(exc.value)
    assert "Accepted" in str(exc.value)


@pytest.mark.parametrize("kw", [
    dict(method="inference", tensor_parallel=4, gpus=2),
    dict(method="full", weight_precision="nf4"),
    dict(method="qlora", weight_precision="bf16"),
    dict(method="inference", sharding="fsdp", gpus=2),
    dict(method="lora", weight_precision="int8", double_quant=True),
])
def test_inconsistent_combinations_are_refused(kw):
    with pytest.raises(InvalidCombination):
        req(**kw)


def test_lora_rank_above_hidden_size_is_refused():
    with pytest.raises(InvalidInput, match="lora_rank.*4096"):
        estimate_vram(LLAMA31_8B, req(method="lora", lora_rank=5000))


def test_tensor_parallel_must_divide_heads():
    with pytest.raises(InvalidInput, match="tensor_parallel"):
        estimate_vram(LLAMA31_8B, req(method="inference", tensor_parallel=3, gpus=3))


def test_huge_but_valid_inputs_stay_finite():
    a = arch_from_params(500_000)  # 500 trillion parameters
    e = estimate_vram(a, req(method="full", batch=1_000_000, seq_len=100_000_000, gpus=4096, sharding="fsdp"))
    assert math.isfinite(e.total_gb) and e.total_gb > 0
    assert all(math.isfinite(v) for v in e.components_gb.values())


def test_rough_arch_matches_requested_size():
    for pb in (0.5, 7, 70, 405):
        assert count_params(arch_from_params(pb)).total_b == pytest.approx(pb, rel=0.005)
