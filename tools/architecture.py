"""Parameter counts and linear-layer shapes derived from a model's architecture numbers.

Counts follow the module layout of the Hugging Face implementations (LlamaForCausalLM and its
relatives; DeepSeek-V3 for MLA/MoE): attention q/k/v/o projections, a (gated) MLP or a mixture of
experts, two norms per layer, token embeddings and an LM head that may be tied to them.
"""

from __future__ import annotations

__all__ = ["LinearShape", "ParamCounts", "block_linears", "count_params", "arch_from_params"]

from dataclasses import dataclass
from functools import lru_cache

from tools.schemas import ModelArch
from tools.units import PARAMS_PER_BILLION, billions


@dataclass(frozen=True)
class LinearShape:
    """A linear layer inside one transformer block: in x out features, `copies` per block
    (several experts), `active_copies` of which run for each token. `target` is the LoRA target
    name it answers to (q, k, v, o, gate, up, down)."""

    name: str
    in_features: int
    out_features: int
    copies: float
    active_copies: float
    target: str

    @property
    def params(self) -> float:
        return float(self.in_features) * self.out_features * self.copies


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts (plain numbers of parameters, not billions)."""

    total: float
    active: float
    embedding: float
    lm_head: float
    blocks_linear: float
    blocks_linear_active: float
    norms_and_biases: float

    @property
    def total_b(self) -> float:
        return billions(self.total)

    @property
    def active_b(self) -> float:
        return billions(self.active)

    @property
    def unquantized(self) -> float:
        """Parameters that GPU weight-quantisation formats leave in 16-bit: embeddings, LM head,
        norms and biases (bitsandbytes and GPTQ/AWQ quantise the blocks' linear layers only)."""
        return self.embedding + self.lm_head + self.norms_and_biases


def _attention_linears(a: ModelArch) -> list[LinearShape]:
    h = a.hidden_size
    if a.attention_kind == "MLA":
        nh = a.num_attention_heads
        qk_dim = a.qk_nope_head_dim + a.qk_rope_head_dim
        out: list[LinearShape] = []
        if a.q_lora_rank:
            out += [LinearShape("q_a_proj", h, a.q_lora_rank, 1, 1, "q"),
                    LinearShape("q_b_proj", a.q_lora_rank, nh * qk_dim, 1, 1, "q")]
        else:
            out.append(LinearShape("q_proj", h, nh * qk_dim, 1, 1, "q"))
        out += [
            LinearShape("kv_a_proj_with_mqa", h, a.kv_lora_rank + a.qk_rope_head_dim, 1, 1, "k"),
            LinearShape("kv_b_proj", a.kv_lora_rank, nh * (a.qk_nope_head_dim + a.v_head_dim), 1, 1, "v"),
            LinearShape("o_proj", nh * a.v_head_dim, h, 1, 1, "o"),
        ]
        return out
    q_out = a.num_attention_heads * a.head_dim
    kv_out = a.num_kv_heads * a.head_dim
    return [
        LinearShape("q_proj", h, q_out, 1, 1, "q"),
        LinearShape("k_proj", h, kv_out, 1, 1, "k"),
        LinearShape("v_proj", h, kv_out, 1, 1, "v"),
        LinearShape("o_proj", q_out, h, 1, 1, "o"),
    ]


def _mlp_linears(h: int, inter: int, copies: float, active: float, gated: bool, prefix: str) -> list[LinearShape]:
    if gated:
        return [LinearShape(f"{prefix}gate_proj", h, inter, copies, active, "gate"),
                LinearShape(f"{prefix}up_proj", h, inter, copies, active, "up"),
                LinearShape(f"{prefix}down_proj", inter, h, copies, active, "down")]
    return [LinearShape(f"{prefix}fc1", h, inter, copies, active, "up"),
            LinearShape(f"{prefix}fc2", inter, h, copies, active, "down")]


@lru_cache(maxsize=512)
def block_linears(a: ModelArch) -> tuple[LinearShape, ...]:
    """Linear layers of one average transformer block (cached: ModelArch is frozen).

    For MoE models with leading dense layers (DeepSeek-V3 `first_k_dense_replace`), the dense
    and MoE MLPs are averaged over the layers via fractional `copies`.
    """
    return tuple(_block_linears(a))


def _block_linears(a: ModelArch) -> list[LinearShape]:
    layers = _attention_linears(a)
    h = a.hidden_size
    if not a.is_moe:
        return layers + _mlp_linears(h, a.intermediate_size, 1, 1, a.gated_mlp, "")
    dense_frac = min(a.first_dense_layers, a.num_layers) / a.num_layers
    moe_frac = 1.0 - dense_frac
    expert_inter = a.moe_intermediate_size or a.intermediate_size
    if dense_frac:
        layers += _mlp_linears(h, a.intermediate_size, dense_frac, dense_frac, a.gated_mlp, "dense.")
    layers += _mlp_linears(h, expert_inter, moe_frac * a.num_experts,
                           moe_frac * a.experts_per_token, a.gated_mlp, "experts.")
    if a.num_shared_experts:
        layers += _mlp_linears(h, expert_inter * a.num_shared_experts, moe_frac, moe_frac,
                               a.gated_mlp, "shared_experts.")
    # Router: one h x experts matrix per MoE layer (counted as a linear, never a LoRA target).
    layers.append(LinearShape("router", h, a.num_experts, moe_frac, moe_frac, "router"))
    return layers


@lru_cache(maxsize=512)
def count_params(a: ModelArch) -> ParamCounts:
    """Total and per-token-active parameter counts (cached: ModelArch is frozen).

    Formula: V*h embeddings (+ V*h LM head unless tied) + L * (sum of block linears + 2h norms
    [+ q/k/v biases]) + h final norm. Active parameters count `experts_per_token` experts.
    """
    linears = block_linears(a)
    per_block = sum(x.params for x in linears)
    per_block_active = sum(float(x.in_features) * x.out_features * x.active_copies for x in linears)
    bias = (a.num_attention_heads + 2 * a.num_kv_heads) * a.head_dim if a.qkv_bias else 0
    norms = a.num_layers * (2 * a.hidden_size + bias) + a.hidden_size
    embedding = float(a.vocab_size) * a.hidden_size
    lm_head = 0.0 if a.tied_embeddings else embedding
    blocks = a.num_layers * per_block
    blocks_active = a.num_layers * per_block_active
    return ParamCounts(
        total=embedding + lm_head + blocks + norms,
        active=embedding + lm_head + blocks_active + norms,
        embedding=embedding,
        lm_head=lm_head,
        blocks_linear=blocks,
        blocks_linear_active=blocks_active,
        norms_and_biases=norms,
    )


def arch_from_params(params_b: float) -> ModelArch:
    """A rough Llama-shaped architecture with `params_b` billion parameters.

    Used when only a parameter count is known. Shape rules fitted to the Llama 2/3 family:
    layers ~ 32 * (params_b / 7)^0.3; hidden from L * 12 h^2 + 2 V h = P (rounded to 128);
    head dim 128; GQA with 8 KV heads from 13B up (MHA below, as Llama 2 7B); 32k vocabulary;
    the gated-MLP width is then solved so the total equals the given count. The result is
    flagged `rough`: the KV cache and activations it implies are approximate.
    """
    p = params_b * PARAMS_PER_BILLION
    vocab = 32000
    layers = max(2, int(round(32 * (params_b / 7.0) ** 0.3)))
    a_coef, b_coef = 12.0 * layers, 2.0 * vocab
    h_raw = (-b_coef + (b_coef * b_coef + 4 * a_coef * p) ** 0.5) / (2 * a_coef)
    head_dim = 128 if h_raw >= 512 else 64
    heads = max(1, int(round(h_raw / head_dim)))
    if params_b >= 13:  # GQA models: head counts are multiples of the 8 KV heads
        heads = max(8, int(round(h_raw / head_dim / 8)) * 8)
    hidden = heads * head_dim
    kv_heads = 8 if params_b >= 13 else heads
    attn = 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim + 2 * hidden
    inter = (p - 2.0 * vocab * hidden - hidden - layers * attn) / (3.0 * hidden * layers)
    inter = max(1, int(round(inter)))
    return ModelArch(
        id=f"custom-{params_b:g}b", name=f"{params_b:g}B-parameter model (rough shape)",
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, num_kv_heads=kv_heads,
        head_dim=head_dim, intermediate_size=inter, vocab_size=vocab, tied_embeddings=False,
        gated_mlp=True, attention_kind="GQA" if kv_heads < heads else "MHA",
        params_reported_b=params_b, source="rough Llama-like shape from the parameter count",
        rough=True,
    )
