"""Read a Hugging Face `config.json` (already parsed to a dict) into a `ModelArch`.

Key names differ by family; each mapping below is the one the family's transformers
configuration class really uses (e.g. Falcon: n_head/n_head_kv/multi_query/new_decoder_architecture;
GPT-BigCode: n_embd/n_layer/n_inner/multi_query; BLOOM: n_layer/n_head; Phi: partial rotary;
DeepSeek-V3: kv_lora_rank/q_lora_rank/n_routed_experts/first_k_dense_replace).
"""

from __future__ import annotations

__all__ = ["arch_from_hf_config", "SUPPORTED_MODEL_TYPES"]

from typing import Any

from pydantic import ValidationError

from tools.errors import ConfigError
from tools.schemas import ModelArch

_GATED = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
          "gemma3", "gemma3_text", "phi3", "phimoe", "deepseek_v2", "deepseek_v3", "olmo", "olmo2",
          "cohere", "granite", "internlm2", "yi", "baichuan", "stablelm", "exaone", "glm", "glm4",
          "smollm3", "ministral", "mistral3", "llama4_text", "gpt_oss", "hunyuan_v1_dense", "seed_oss"}
_PLAIN = {"phi", "falcon", "gpt_bigcode", "gpt_neox", "bloom", "starcoder2", "gpt2", "gptj", "opt", "mpt"}
_QKV_BIAS = {"qwen2", "qwen2_moe", "phi", "bloom", "starcoder2", "gpt_bigcode", "gpt_neox", "gpt2"}
SUPPORTED_MODEL_TYPES = tuple(sorted(_GATED | _PLAIN))


def _first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            return v
    return default


def arch_from_hf_config(cfg: dict[str, Any], name: str = "custom config") -> ModelArch:
    """Map a config.json dict to a ModelArch.

    Args:
        cfg: the parsed config.json (multimodal configs with a `text_config` are unwrapped).
        name: display name (e.g. the file path).

    Raises:
        ConfigError: missing keys or an unknown model_type, with the key named.
    """
    if not isinstance(cfg, dict):
        raise ConfigError("config.json must hold a JSON object")
    if isinstance(cfg.get("text_config"), dict) and "hidden_size" not in cfg:
        inner = dict(cfg["text_config"])
        inner.setdefault("model_type", cfg.get("model_type", ""))
        cfg = inner
    mt = str(cfg.get("model_type", "")).lower()
    if mt not in _GATED and mt not in _PLAIN:
        if not mt:
            raise ConfigError("config.json has no model_type; known: " + ", ".join(SUPPORTED_MODEL_TYPES))
        raise ConfigError(f"Unsupported model_type {mt!r} in config.json. Known: " + ", ".join(SUPPORTED_MODEL_TYPES))

    hidden = _first(cfg, "hidden_size", "n_embd", "d_model")
    layers = _first(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _first(cfg, "num_attention_heads", "n_head", "num_heads")
    if hidden is None or layers is None or heads is None:
        missing = [k for k, v in (("hidden_size", hidden), ("num_hidden_layers", layers),
                                  ("num_attention_heads", heads)) if v is None]
        raise ConfigError(f"config.json lacks {', '.join(missing)} (model_type {mt!r})")
    try:
        hidden, layers, heads = int(hidden), int(layers), int(heads)
    except (TypeError, ValueError):
        raise ConfigError("hidden_size, num_hidden_layers and num_attention_heads must be integers") from None

    kv, head_dim = _kv_heads(cfg, mt, hidden, heads)
    inter, experts, per_tok, moe_inter, shared, first_dense = _mlp_shape(cfg, mt, hidden)
    kind, head_dim = _attention_kind(cfg, int(kv), heads, head_dim)
    sliding, local_frac = _sliding_window(cfg, mt)
    tied_default = mt in ("gemma", "gemma2", "gemma3", "gemma3_text", "bloom", "gpt_bigcode", "gpt2", "starcoder2",
                        "falcon")
    try:
        return ModelArch(
            id="custom-config", name=name, model_type=mt,
            num_layers=layers, hidden_size=hidden, num_attention_heads=heads,
            num_kv_heads=int(kv), head_dim=int(head_dim), intermediate_size=int(inter),
            vocab_size=int(_first(cfg, "vocab_size", "padded_vocab_size", default=32000)),
            tied_embeddings=bool(cfg.get("tie_word_embeddings", tied_default)),
            gated_mlp=mt in _GATED,
            num_experts=experts, experts_per_token=per_tok if experts else 0,
            moe_intermediate_size=moe_inter, num_shared_experts=shared, first_dense_layers=first_dense,
            attention_kind=kind,
            kv_lora_rank=int(cfg.get("kv_lora_rank") or 0), q_lora_rank=int(cfg.get("q_lora_rank") or 0),
            qk_rope_head_dim=int(cfg.get("qk_rope_head_dim") or 0),
            qk_nope_head_dim=int(cfg.get("qk_nope_head_dim") or 0),
            v_head_dim=int(cfg.get("v_head_dim") or 0),
            sliding_window=sliding, local_layer_fraction=local_frac,
            qkv_bias=bool(cfg.get("attention_bias", cfg.get("qkv_bias", mt in _QKV_BIAS))),
            max_context=int(_first(cfg, "max_position_embeddings", "n_positions", "seq_length", default=0) or 0),
            source="config.json",
        )
    except ValidationError as exc:
        e = exc.errors()[0]
        field = e["loc"][0] if e.get("loc") else "value"
        raise ConfigError(f"config.json: {field}={e.get('input')!r} is not valid ({e['msg']})") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"config.json has a value of the wrong type: {exc}") from None


def _kv_heads(cfg: dict[str, Any], mt: str, hidden: int, heads: int) -> tuple[int, int]:
    """(KV heads, head dim): Falcon and GPT-BigCode say multi-query in their own keys."""
    if mt == "falcon":
        if cfg.get("new_decoder_architecture"):
            kv = _first(cfg, "num_kv_heads", "n_head_kv", default=heads)
        elif cfg.get("multi_query", True):
            kv = 1
        else:
            kv = heads
    elif mt == "gpt_bigcode":
        kv = 1 if cfg.get("multi_query", True) else heads
    else:
        kv = _first(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv", default=heads)
    return kv, _first(cfg, "head_dim", default=None) or hidden // heads


def _mlp_shape(cfg: dict[str, Any], mt: str, hidden: int) -> tuple[int, int, int, int, int, int]:
    """(intermediate size, experts, experts per token, expert size, shared experts, leading dense layers)."""
    inter = _first(cfg, "intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim")
    if inter is None:
        inter = 4 * hidden  # falcon, bloom, gpt_bigcode default (transformers: 4 * hidden_size)
    experts = int(_first(cfg, "num_local_experts", "n_routed_experts", "num_experts", default=0) or 0)
    per_tok = int(_first(cfg, "num_experts_per_tok", "num_experts_per_token", default=0) or 0)
    moe_inter = int(_first(cfg, "moe_intermediate_size", default=0) or 0)
    shared = int(_first(cfg, "n_shared_experts", default=0) or 0)
    if mt == "qwen2_moe" and cfg.get("shared_expert_intermediate_size") and moe_inter:
        shared = max(1, int(cfg["shared_expert_intermediate_size"]) // moe_inter)
    first_dense = int(_first(cfg, "first_k_dense_replace", default=0) or 0)
    return inter, experts, per_tok, moe_inter, shared, first_dense


def _attention_kind(cfg: dict[str, Any], kv: int, heads: int, head_dim: int) -> tuple[str, int]:
    """MLA (DeepSeek: head dim = nope + rope parts), MQA, GQA or MHA."""
    if cfg.get("kv_lora_rank"):
        return "MLA", int(cfg.get("qk_nope_head_dim", 0)) + int(cfg.get("qk_rope_head_dim", 0))
    if kv == 1 and heads > 1:
        return "MQA", head_dim
    return ("GQA" if kv < heads else "MHA"), head_dim


def _sliding_window(cfg: dict[str, Any], mt: str) -> tuple[int, float]:
    """(window tokens, fraction of layers that use it): Gemma 2 alternates, Gemma 3 has 5 local of 6."""
    sw = cfg.get("sliding_window")
    if not sw or cfg.get("use_sliding_window", True) is False or mt in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        return 0, 0.0
    if mt == "gemma2":
        return int(sw), 0.5
    if mt.startswith("gemma3"):
        pattern = int(cfg.get("sliding_window_pattern", 6) or 6)
        return int(sw), (pattern - 1) / pattern
    if isinstance(cfg.get("layer_types"), list) and cfg["layer_types"]:
        lt = cfg["layer_types"]
        return int(sw), sum(1 for t in lt if "sliding" in str(t)) / len(lt)
    return int(sw), 1.0
