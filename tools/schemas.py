"""Pydantic models shared by the tools: model architectures, requests and estimates.

Every numeric field carries its unit in its name (`_gb` = 10**9 bytes, `_b` = billions).
"""

from __future__ import annotations

__all__ = [
    "ATTENTION_KINDS",
    "LORA_TARGETS",
    "METHODS",
    "OPTIMIZERS",
    "SHARDINGS",
    "TRAINING_PRECISIONS",
    "KV_PRECISIONS",
    "ModelArch",
    "DiffusionComponent",
    "MemoryComponent",
    "FitVerdict",
    "GpuMemory",
    "GpuSpec",
    "VramRequest",
    "VramEstimate",
    "validated",
]

from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tools.errors import InvalidCombination, InvalidInput
from tools.units import canonical_format, weight_format

# One declaration per accepted set: the Literal types every request model uses (tools.throughput,
# tools.serving too); the tuples are derived for messages and forms.
Method = Literal["inference", "full", "lora", "qlora"]
TrainingPrecision = Literal["mixed", "bf16"]
Optimizer = Literal["adamw", "adamw8bit", "paged-adamw8bit", "sgd", "adafactor"]
Sharding = Literal["none", "zero1", "zero2", "zero3", "fsdp"]
KvPrecision = Literal["fp16", "bf16", "fp8", "int8"]
AttentionKind = Literal["MHA", "GQA", "MQA", "MLA"]
METHODS, TRAINING_PRECISIONS, OPTIMIZERS, SHARDINGS, KV_PRECISIONS, ATTENTION_KINDS = (
    get_args(t) for t in (Method, TrainingPrecision, Optimizer, Sharding, KvPrecision, AttentionKind))
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")

# Tokens a serving engine prefills per step by default (the prompt in chunks): vLLM V1 and SGLang chunk at
# 8,192 (max_num_batched_tokens / chunked_prefill_size), TensorRT-LLM's context chunking likewise; llama.cpp's
# physical batch (n_ubatch) is 512. Engines not listed prefill a sequence's whole prompt at once.
ENGINE_PREFILL_CHUNK_TOKENS = {"vllm": 8192, "sglang": 8192, "tensorrt-llm": 8192, "llama.cpp": 512}
# The serving engine an answer assumes when none is named (speed, serving memory, recommendations): the usual default.
DEFAULT_ENGINE = "vllm"
# GPU memory a serving engine keeps back by default: vLLM allocates gpu_memory_utilization = 0.9 of each GPU
# (EngineArgs --gpu-memory-utilization, docs.vllm.ai/en/latest/configuration/engine_args.html), so a fit that
# needs more than 90 % runs only with that flag raised
ENGINE_MEMORY_RESERVE = {"vllm": 0.10, "vllm-v0": 0.10}


def engine_memory_reserve(engine: str | None) -> float:
    """Share of each GPU's memory a serving engine keeps back by default (the serving default engine when None;
    0 for an engine that allocates as it goes)."""
    return ENGINE_MEMORY_RESERVE.get(engine or DEFAULT_ENGINE, 0.0)
MAX_PARAMS_B = 1_000_000.0  # one quadrillion parameters: beyond any model, still finite arithmetic
MAX_SEQ_LEN = 100_000_000
MAX_BATCH = 1_000_000
MAX_GPUS = 4096


class ModelArch(BaseModel):
    """Architecture numbers of a decoder-only transformer, as in its Hugging Face config.json."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    hf_repo: str = ""
    model_type: str = ""
    num_layers: int = Field(ge=1, le=100_000)
    hidden_size: int = Field(ge=1, le=10_000_000)
    num_attention_heads: int = Field(ge=1, le=100_000)
    num_kv_heads: int = Field(ge=1, le=100_000)
    head_dim: int = Field(ge=1, le=100_000)
    intermediate_size: int = Field(ge=1, le=100_000_000)
    vocab_size: int = Field(ge=1, le=100_000_000)
    tied_embeddings: bool = False
    gated_mlp: bool = True
    num_experts: int = Field(0, ge=0, le=100_000)
    experts_per_token: int = Field(0, ge=0, le=100_000)
    moe_intermediate_size: int = Field(0, ge=0, le=100_000_000)
    num_shared_experts: int = Field(0, ge=0, le=1000)
    first_dense_layers: int = Field(0, ge=0)
    attention_kind: AttentionKind = "GQA"
    kv_lora_rank: int = Field(0, ge=0)
    q_lora_rank: int = Field(0, ge=0)
    qk_rope_head_dim: int = Field(0, ge=0)
    qk_nope_head_dim: int = Field(0, ge=0)
    v_head_dim: int = Field(0, ge=0)
    sliding_window: int = Field(0, ge=0)
    local_layer_fraction: float = Field(0.0, ge=0.0, le=1.0)
    qkv_bias: bool = False
    max_context: int = Field(0, ge=0)
    params_reported_b: float = Field(0.0, ge=0.0)
    source: str = ""
    rough: bool = Field(False, description="True when built from a parameter count alone")

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0


class DiffusionComponent(BaseModel):
    """One component (UNet/DiT, text encoder, VAE) of an image-generation pipeline."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    model_name: str
    component: str
    component_class: str = ""
    params_m: float = Field(gt=0)
    default_dtype: str = "bf16"
    source: str = ""


class MemoryComponent(BaseModel):
    """One named part of the per-GPU memory, with its formula in words and its source."""

    name: str
    gb: float = Field(ge=0)
    formula: str
    source: str


class GpuSpec(BaseModel):
    """One GPU model's hardware facts. None = not found in any cited source (unknown, not zero).

    Rates are dense (no sparsity) tensor-core figures; `derived` names the fields computed from
    other vendor figures (e.g. with-sparsity / 2).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    family: str = ""
    family_default: bool = False
    vendor: str = ""
    memory_gib: float | None = Field(None, gt=0, description="vendor 'GB' figure; vendors and nvidia-smi count GiB")
    memory_type: str = ""
    mem_bandwidth_gb_per_s: float | None = Field(None, gt=0)
    bf16_dense_tflops: float | None = Field(None, gt=0, description="BF16 (FP16 where no BF16) tensor, FP32 accumulate")
    fp8_dense_tflops: float | None = Field(None, gt=0)
    int8_dense_tops: float | None = Field(None, gt=0)
    fp8_support: bool | None = None
    interconnect: str = ""
    nvlink_gb_per_s: float | None = Field(None, gt=0, description="GPU-to-GPU link, bidirectional total per GPU")
    form_factor: str = ""
    architecture: str = ""
    gpu_class: str = Field("", description="datacenter | datacenter-gddr | workstation | consumer")
    release_year: int | None = None
    source: str = ""
    derived: str = ""
    notes: str = ""
    board_power_w: float | None = Field(None, gt=0, description="maximum board power (TDP), W, vendor datasheet")
    full_clock_tflops_per_w: float | None = Field(
        None, gt=0, description="dense 16-bit tensor TFLOPS per board watt of this GPU's chip at full clocks, from a "
                                "higher-power card of the same chip (named in power_source); None = no such card known")
    power_source: str = ""
    decode_bw_share: float | None = Field(
        None, gt=0, le=1, description="share of the datasheet bandwidth decode reaches on this GPU with an engine's "
                                      "usual efficiency, where published measurements show it falls short (fitted by "
                                      "benchmarks/calibrate_speed.py, rows in decode_bw_source); None = no shortfall known")
    decode_bw_source: str = ""
    usable_memory_gib: float | None = Field(
        None, gt=0, description="GiB a framework can allocate: the total nvidia-smi reports (ECC and driver "
                                "reservations already taken off); None = unknown (the vendor figure is used)")
    usable_memory_source: str = Field("", description="the nvidia-smi output cited, or 'derived: <rule>'")

    @property
    def sustained_tensor_tflops(self) -> float | None:
        """The dense 16-bit tensor rate the board's power allows, TFLOPS: board_power_w x
        full_clock_tflops_per_w (a low-power card of a chip cannot run it at the clocks its peak
        figure assumes). None where either figure is unknown (then only the peak is known)."""
        if self.board_power_w is None or self.full_clock_tflops_per_w is None:
            return None
        return self.board_power_w * self.full_clock_tflops_per_w

    @property
    def memory_gb(self) -> float | None:
        """Usable memory in decimal GB (10^9 bytes), the figure every fit compares against:
        usable_memory_gib x 2^30 / 10^9 (the vendor's GiB where no usable figure is known)."""
        gib = self.usable_memory_gib or self.memory_gib
        return None if gib is None else gib * 2**30 / 1e9

    @property
    def marketing_memory_gb(self) -> float | None:
        """The vendor's "GB" label ("80 GB", "24 GB"), for display only: vendors count GiB."""
        return self.memory_gib

    @property
    def memory_display(self) -> str:
        """"T4, 16 GB; 15 GiB usable": the vendor's size and what nvidia-smi leaves to allocate."""
        if self.memory_gib is None:
            return f"{self.name}, memory unknown"
        if self.usable_memory_gib is None:
            return f"{self.name}, {self.memory_gib:g} GB"
        return f"{self.name}, {self.memory_gib:g} GB; {self.usable_memory_gib:.1f} GiB usable".replace(".0 GiB", " GiB")

    @property
    def is_hbm(self) -> bool:
        return self.memory_type.upper().startswith("HBM")

    @property
    def has_nvlink(self) -> bool:
        """A GPU-to-GPU fabric every GPU of a server uses (SXM/OAM NVLink, Infinity Fabric, Gaudi RoCE);
        PCIe cards with an optional two-card bridge do not count."""
        return self.nvlink_gb_per_s is not None and "bridge" not in self.interconnect.lower()

    def as_gpu_memory(self) -> "GpuMemory | None":
        gb = self.memory_gb
        return None if gb is None else GpuMemory(name=self.name, memory_gb=gb,
                                                 marketing_memory_gb=self.marketing_memory_gb,
                                                 source=self.usable_memory_source)


TIGHT_HEADROOM_FRACTION = 0.05  # a fit leaving under 5 % of usable memory free is tight (fragmentation, spikes)


class GpuMemory(BaseModel):
    """The part of a GPU the VRAM verdict needs: its name and usable memory (GB), with the vendor's
    label and the usable figure's source when the GPU is a catalog one."""

    name: str
    memory_gb: float = Field(gt=0)
    marketing_memory_gb: float | None = Field(None, description="the vendor's 'GB' label, display only")
    source: str = ""

    def sentence(self) -> str:
        """The assumption an answer states about the memory a fit was judged against."""
        gib = self.memory_gb * 1e9 / 2**30
        if self.marketing_memory_gb is None or not self.source:
            return (f"{self.name}: {gib:g} GiB as the vendor states it = {self.memory_gb:.1f} GB; fits means the "
                    "total, CUDA context included, is within it.")
        return (f"{self.name}: a {self.marketing_memory_gb:g} GB card; {gib:.1f} GiB = {self.memory_gb:.1f} GB usable, "
                "the total nvidia-smi reports (ECC and driver reservations already off"
                + ("; derived" if self.source.startswith("derived") else "") + "); fits means the total, "
                "CUDA context included, is within it, and under 5 % left free is tight.")


class FitVerdict(BaseModel):
    gpu: str
    gpu_memory_gb: float  # usable memory (nvidia-smi's total), GB
    fits: bool
    headroom_gb: float
    headroom_pct: float
    tight: bool = False
    marketing_memory_gb: float | None = None
    usable_memory_source: str = ""
    margin_levers: list[dict[str, Any]] = []

    @classmethod
    def of(cls, total_gb: float, gpu_name: str, gpu_memory_gb: float, marketing_memory_gb: float | None = None,
           source: str = "") -> "FitVerdict":
        """Headroom = usable GPU memory - estimated total (GB and % of the card); fits when headroom >= 0;
        tight when it fits with under TIGHT_HEADROOM_FRACTION (5 %) of the memory free."""
        head = gpu_memory_gb - total_gb
        fits = head >= 0
        return cls(gpu=gpu_name, gpu_memory_gb=round(gpu_memory_gb, 2), fits=fits,
                   headroom_gb=round(head, 2), headroom_pct=round(100 * head / gpu_memory_gb, 1),
                   tight=fits and head < TIGHT_HEADROOM_FRACTION * gpu_memory_gb,
                   marketing_memory_gb=marketing_memory_gb, usable_memory_source=source)


class VramRequest(BaseModel):
    """What to size: method, precisions, batch/sequence and parallelism (per-GPU result)."""

    model_config = ConfigDict(extra="forbid")

    method: Method = Field(
        "inference", description="inference | full | lora | qlora")
    weight_precision: str | None = Field(
        None, description="fp32, bf16, fp16, fp8, int8, int4, nf4, fp4 or a GGUF format "
        "(q4_0, q4_k_m, q5_k_m, q6_k, q8_0, f16); default bf16 (nf4 for qlora)")
    training_precision: TrainingPrecision = Field(
        "mixed", description="mixed (fp32 master weights + fp32 optimizer) | bf16 (all bf16)")
    optimizer: Optimizer = Field(
        "adamw", description="adamw | adamw8bit | paged-adamw8bit | sgd | adafactor")
    batch: int = Field(1, ge=1, le=MAX_BATCH, description="an integer from 1 to 1,000,000")
    seq_len: int = Field(2048, ge=1, le=MAX_SEQ_LEN,
                         description="an integer number of tokens from 1 to 100,000,000")
    grad_checkpointing: bool | None = Field(
        None, description="true | false; default: on for qlora, off otherwise")
    attention: Literal["sdpa", "eager"] = Field("sdpa", description="sdpa | eager")
    lora_rank: int = Field(8, ge=1, le=65536, description="an integer from 1 to the hidden size")
    lora_dropout: float = Field(0.05, ge=0.0, lt=1.0, allow_inf_nan=False,
                                description="a dropout probability from 0 to below 1 (default 0.05)")
    lora_targets: tuple[str, ...] = Field(
        ("q", "v"), description="a comma list of q, k, v, o, gate, up, down, attn, mlp, or all-linear")
    gpus: int = Field(1, ge=1, le=MAX_GPUS, description="an integer from 1 to 4096")
    sharding: Sharding = Field(
        "none", description="none | zero1 | zero2 | zero3 | fsdp")
    tensor_parallel: int = Field(1, ge=1, le=MAX_GPUS, description="an integer from 1 to --gpus")
    layer_split: bool = Field(False, description="inference: the layers split across the GPUs (llama.cpp, pipeline "
                                                 "parallel): weights and KV cache / gpus, any GPU count")
    kv_precision: KvPrecision = Field(
        "bf16", description="fp16 | bf16 | fp8 | int8")
    double_quant: bool = Field(False, description="true | false (nf4/fp4 only)")
    chunked_loss: bool = Field(
        False, description="true | false: chunked/fused cross-entropy (torchtune CEWithChunkedOutputLoss, "
        "Unsloth, Liger) instead of materialising fp32 logits")
    prefill_chunk_tokens: int | None = Field(
        None, ge=1, le=MAX_SEQ_LEN, description="inference: tokens per prefill step; default the whole prompt "
        "of one sequence (transformers); serving engines chunk (vLLM 8192, llama.cpp 512)")

    @field_validator("weight_precision")
    @classmethod
    def _known_format(cls, v: str | None) -> str | None:
        return canonical_format(v)

    @field_validator("lora_targets", mode="before")
    @classmethod
    def _expand_targets(cls, v: Any) -> tuple[str, ...]:
        items = v.split(",") if isinstance(v, str) else list(v)
        out: list[str] = []
        groups = {"attn": ("q", "k", "v", "o"), "mlp": ("gate", "up", "down"),
                  "all-linear": LORA_TARGETS, "all": LORA_TARGETS}
        aliases = {"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o", "gate_proj": "gate",
                   "up_proj": "up", "down_proj": "down", "query": "q", "key": "k", "value": "v",
                   "projection": "o", "attention": "attn", "all_linear": "all-linear", "head": "lm_head"}
        for raw in items:
            t = str(raw).strip().lower()
            if not t:
                continue
            t = aliases.get(t, t)
            expanded = groups.get(t, (t,))
            for e in expanded:
                if e not in LORA_TARGETS and e != "lm_head":
                    raise ValueError("a comma list of q, k, v, o, gate, up, down, lm_head, attn, mlp, or all-linear")
                if e not in out:
                    out.append(e)
        if not out:
            raise ValueError("at least one of q, k, v, o, gate, up, down, lm_head, attn, mlp, or all-linear")
        return tuple(out)

    @model_validator(mode="after")
    def _consistent(self) -> "VramRequest":
        if self.tensor_parallel > self.gpus:
            raise ValueError(f"tensor_parallel ({self.tensor_parallel}) must not exceed gpus ({self.gpus})")
        if self.method == "inference" and self.sharding != "none":
            raise ValueError("sharding applies to training; use tensor_parallel for inference")
        if self.method != "inference" and self.tensor_parallel > 1:
            raise ValueError("tensor_parallel applies to inference; use sharding (zero1-3, fsdp) for training")
        if self.layer_split and (self.method != "inference" or self.tensor_parallel > 1):
            raise ValueError("layer_split applies to inference without tensor_parallel")
        fmt = weight_format(self.resolved_weight_precision)
        if self.method == "qlora" and fmt.bits_per_param > 4.01:
            raise ValueError("qlora loads the base model in 4-bit: use nf4, fp4 or int4")
        if self.method == "full" and fmt.is_quantized:
            raise ValueError("full fine-tuning trains the weights themselves: use fp32, bf16 or fp16")
        if self.double_quant and fmt.name not in ("nf4", "fp4"):
            raise ValueError("double_quant applies to nf4/fp4 weights only")
        return self

    @property
    def resolved_weight_precision(self) -> str:
        if self.weight_precision:
            return self.weight_precision
        return "nf4" if self.method == "qlora" else "bf16"

    @property
    def resolved_grad_checkpointing(self) -> bool:
        if self.grad_checkpointing is None:
            return self.method == "qlora"
        return self.grad_checkpointing


class VramEstimate(BaseModel):
    """Per-GPU memory estimate, decimal GB, split into named components."""

    total_gb: float
    components_gb: dict[str, float]
    components: list[MemoryComponent]
    model: dict[str, Any]
    inputs: dict[str, Any]
    assumptions: list[str]
    fit: FitVerdict | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The CLI's --json contract: total_gb, components_gb, model, inputs, assumptions[, fit]."""
        out: dict[str, Any] = {
            "total_gb": self.total_gb,
            "components_gb": self.components_gb,
            "model": self.model,
            "inputs": self.inputs,
            "assumptions": self.assumptions,
            "formulas": {c.name: {"formula": c.formula, "source": c.source} for c in self.components},
        }
        if self.fit is not None:
            out["fit"] = self.fit.model_dump()
        return out


M = TypeVar("M", bound=BaseModel)


def validated(model_cls: type[M], **values: Any) -> M:
    """Build a pydantic model, turning validation errors into one InvalidInput naming every bad field.

    The message names each field, the value given and what is accepted (the field's description
    or pydantic's own constraint text), so every front end can show it as it is.
    """
    try:
        return model_cls(**values)
    except ValidationError as exc:
        parts: list[tuple[str, Any, str]] = []
        for err in exc.errors():
            loc = err.get("loc") or ()
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            if not loc:  # a model-level rule: its message says it all
                raise InvalidCombination(f"Invalid combination of inputs: {msg}.") from None
            field = str(loc[0])
            info = model_cls.model_fields.get(field)
            accepted = info.description if info is not None and info.description else ""
            if accepted and msg and not msg.startswith(("Input should", "Field required")):
                accepted = msg
            parts.append((field, values.get(field, err.get("input")), accepted or msg))
        first = parts[0]
        exc_out = InvalidInput(*first)
        exc_out.problems = parts
        if len(parts) > 1:
            exc_out.args = (" ".join(f"Invalid {f}: {v!r}. Accepted: {str(a).rstrip('.')}." for f, v, a in parts),)
            exc_out.fields = [p[0] for p in parts]
        raise exc_out from None




# ---- prices -------------------------------------------------------------------------------------


class PriceQuery(BaseModel):
    """Filters for the offer catalog. Text values are bound as parameters, never spliced into SQL."""

    model_config = ConfigDict(extra="forbid")

    gpu: str | None = Field(None, max_length=200, description="a GPU model or family name, e.g. H100, 'RTX 4090'")
    min_vram_gb: float | None = Field(None, gt=0, le=10_000, allow_inf_nan=False,
                                      description="per-GPU memory in GB, above 0 and at most 10,000")
    gpus: int | None = Field(None, ge=1, le=1024, description="GPUs per instance, an integer from 1 to 1024")
    min_gpus: int | None = Field(None, ge=1, le=1024, description="at least this many GPUs per instance, 1 to 1024")
    max_price_usd_per_gpu_hour: float | None = Field(None, gt=0, le=10_000, allow_inf_nan=False,
                                                     description="USD per GPU-hour, above 0 and at most 10,000")
    pricing: Literal["any", "on-demand", "spot"] = Field("any", description="any | on-demand | spot")
    provider: str | None = Field(None, max_length=300,
                                 description="a provider name or a comma list, e.g. aws, lambda, runpod or 'aws,gcp'")
    region: str | None = Field(None, max_length=100,
                               description="europe | us | asia | a country | a city, or part of a region name (us-east)")
    interconnect: Literal["nvlink"] | None = Field(None, description="nvlink")
    sort: Literal["gpu-hour", "instance-hour", "spot"] | None = Field(None, description="gpu-hour | instance-hour | spot")
    limit: int = Field(20, ge=1, le=1000, description="an integer from 1 to 1000")
    max_gpus: int | None = Field(None, ge=1, le=1024, description="at most this many GPUs per instance, 1 to 1024")
    min_total_vram_gb: float | None = Field(None, gt=0, le=1_000_000, allow_inf_nan=False,
                                            description="GPU memory of the whole instance (all GPUs) at least, GB")
    max_total_vram_gb: float | None = Field(None, gt=0, le=1_000_000, allow_inf_nan=False,
                                            description="GPU memory of the whole instance (all GPUs) at most, GB")
    min_vcpus: float | None = Field(None, gt=0, le=100_000, allow_inf_nan=False, description="host vCPUs at least")
    min_ram_gb: float | None = Field(None, gt=0, le=1_000_000, allow_inf_nan=False,
                                     description="host RAM at least, GB (10^9 bytes)")
    vendor: str | None = Field(None, max_length=50, description="GPU vendor: nvidia | amd | intel ...")


class GpuOffer(BaseModel):
    """One rentable instance type in one region."""

    provider: str
    instance_type: str | None = None
    accelerator_name: str
    gpu_id: str | None = None
    gpu_name: str
    gpu_count: int
    gpu_memory_gb: float | None = None
    vcpus: float | None = None
    host_memory_gib: float | None = None
    price_usd_per_hour: float | None = None
    price_usd_per_gpu_hour: float | None = None
    spot_price_usd_per_hour: float | None = None
    spot_price_usd_per_gpu_hour: float | None = None
    region: str | None = None
    price_scope: str = "instance"
    nvlink: bool = False
    as_of: str | None = None
    source: str = ""
    gpu_vendor: str | None = None
    zone: str | None = Field(None, description="the zone whose on-demand price this is, when one zone holds it")
    spot_zone: str | None = Field(None, description="the zone whose spot price this is, when one zone holds it")
    places: str | None = None  # ';'-separated city/state names of the region, lower case
    country: str | None = None  # ISO 3166-1 alpha-2
    continent: str | None = None

    def to_contract(self) -> dict[str, Any]:
        """The `prices --json` offer fields (stable), plus the extra ones after them."""
        d = self.model_dump()
        d["gpu"] = d.pop("gpu_name")
        keys = ["provider", "instance_type", "gpu", "gpu_count", "gpu_memory_gb", "price_usd_per_hour",
                "price_usd_per_gpu_hour", "spot_price_usd_per_hour", "region", "source"]
        return {k: d[k] for k in keys} | {k: v for k, v in d.items() if k not in keys}


class PriceResult(BaseModel):
    as_of: str | None
    stale: bool
    data_note: str
    total_matches: int
    offers: list[GpuOffer]
    notices: list[str] = []
    gpu_note: str = ""
    gpu_forms: list[str] = []  # the GPU catalog names a --gpu value covered (e.g. A100 80GB SXM and PCIe)
    regions_matched: list[str] = []  # the region names a --region value matched, sorted
    region_note: str = ""
    not_in_data: list[str] = []  # a provider or GPU named that the price data does not hold, in words

