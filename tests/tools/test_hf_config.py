"""config.json of each common family, with the key names that family really uses.

Expected parameter counts are the model cards' (Mistral 7.24B, Falcon-7B 6.92B, StarCoder-15B
15.5B, BLOOM-7B1 7.07B, Phi-2 2.78B, Gemma 2 9B 9.24B, DeepSeek-V3 671B, Qwen3-30B-A3B 30.5B).
"""

import pytest

from tools.architecture import count_params
from tools.errors import ConfigError
from tools.hf_config import arch_from_hf_config

CONFIGS = [
    pytest.param({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                  "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
                  "sliding_window": 4096, "max_position_embeddings": 32768}, 7.24, "GQA", id="mistral-7b-v0.1"),
    pytest.param({"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
                  "multi_query": True, "vocab_size": 65024, "new_decoder_architecture": False}, 6.92, "MQA",
                 id="falcon-7b-multi_query"),
    pytest.param({"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
                  "num_kv_heads": 8, "new_decoder_architecture": True, "vocab_size": 65024,
                  "tie_word_embeddings": False}, 41.8, "GQA", id="falcon-40b-new_decoder"),
    pytest.param({"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48, "n_inner": 24576,
                  "multi_query": True, "vocab_size": 49152, "n_positions": 8192}, 15.5, "MQA", id="starcoder-gpt_bigcode"),
    pytest.param({"model_type": "bloom", "hidden_size": 4096, "n_layer": 30, "n_head": 32, "vocab_size": 250880},
                 7.07, "MHA", id="bloom-7b1"),
    pytest.param({"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
                  "intermediate_size": 10240, "vocab_size": 51200, "tie_word_embeddings": False}, 2.78, "MHA",
                 id="phi-2"),
    pytest.param({"model_type": "gemma2", "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
                  "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
                  "sliding_window": 4096}, 9.24, "GQA", id="gemma2-9b-head_dim"),
    pytest.param({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 5376,
                  "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                  "intermediate_size": 21504, "vocab_size": 262208, "sliding_window": 1024}}, 27.0, "GQA",
                 id="gemma3-27b-text_config"),
    pytest.param({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
                  "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
                  "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
                  "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                  "v_head_dim": 128, "vocab_size": 129280}, 671.0, "MLA", id="deepseek-v3-mla-moe"),
    pytest.param({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
                  "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
                  "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936}, 30.5, "GQA", id="qwen3-30b-a3b"),
]


@pytest.mark.parametrize("cfg, params_b, kind", CONFIGS)
def test_family_params_and_attention(cfg, params_b, kind):
    a = arch_from_hf_config(cfg)
    assert a.attention_kind == kind
    assert count_params(a).total_b == pytest.approx(params_b, rel=0.03)


def test_falcon_multi_query_has_one_kv_head_and_gemma3_local_layers():
    falcon = arch_from_hf_config(CONFIGS[1].values[0])
    assert falcon.num_kv_heads == 1 and not falcon.gated_mlp
    g3 = arch_from_hf_config(CONFIGS[7].values[0])
    assert g3.sliding_window == 1024 and g3.local_layer_fraction == pytest.approx(5 / 6)
    mixtral = arch_from_hf_config({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
                                   "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                                   "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000})
    assert mixtral.num_experts == 8 and count_params(mixtral).active_b == pytest.approx(12.9, rel=0.01)


@pytest.mark.parametrize("cfg, match", [
    ({"model_type": "t5", "d_model": 512}, "Unsupported model_type 't5'"),
    ({"hidden_size": 10}, "no model_type"),
    ({"model_type": "llama", "hidden_size": 4096}, "num_hidden_layers"),
    ({"model_type": "llama", "hidden_size": -1, "num_hidden_layers": 2, "num_attention_heads": 1,
      "intermediate_size": 4}, "hidden_size"),
    ([1, 2], "JSON object"),
])
def test_bad_configs_are_named(cfg, match):
    with pytest.raises(ConfigError, match=match):
        arch_from_hf_config(cfg)
