"""Units and per-format byte sizes: the ONLY place with 1e9, 2**30 and bytes-per-dtype tables.

GB = 10**9 bytes (decimal, what the CLI and JSON report); GiB = 2**30 bytes.
"""

from __future__ import annotations

__all__ = [
    "BYTES_PER_GB",
    "BYTES_PER_GIB",
    "PARAMS_PER_BILLION",
    "WEIGHT_FORMATS",
    "WeightFormat",
    "bytes_to_gb",
    "canonical_format",
    "billions",
    "dtype_bytes",
    "weight_format",
]

from dataclasses import dataclass

BYTES_PER_GB = 1e9
BYTES_PER_GIB = float(2**30)
PARAMS_PER_BILLION = 1e9  # "7B" parameters = 7 * 10**9 (model cards count parameters in decimal billions)


def bytes_to_gb(n_bytes: float) -> float:
    """Decimal gigabytes (10**9 bytes)."""
    return n_bytes / BYTES_PER_GB


def billions(count: float) -> float:
    """A parameter count in billions (10**9), the unit model cards use ("70B")."""
    return count / PARAMS_PER_BILLION


@dataclass(frozen=True)
class WeightFormat:
    """How one weight format stores a parameter.

    bits_per_param: payload bits of one quantised (or plain) weight.
    constant_bits_per_param: extra bits per weight for scales/zero points (block constants).
    quantizes_embeddings: True for GGUF files, whose published bits-per-weight already
        average over every tensor; False for the GPU formats (bitsandbytes, GPTQ/AWQ, FP8),
        which leave embeddings, norms and the LM head in 16-bit.
    source: where the bits come from.
    """

    name: str
    bits_per_param: float
    constant_bits_per_param: float
    quantizes_embeddings: bool
    is_quantized: bool
    source: str

    @property
    def is_gguf(self) -> bool:
        """A llama.cpp GGUF block format (the only formats whose bits already cover every tensor)."""
        return self.quantizes_embeddings

    @property
    def bytes_per_param(self) -> float:
        return self.bits_per_param / 8.0

    @property
    def constant_bytes_per_param(self) -> float:
        return self.constant_bits_per_param / 8.0


_BNB = "bitsandbytes 4-bit: block size 64 with one fp32 absmax per block (QLoRA paper, Dettmers et al. 2023, sec. 3)"
_GPTQ = "GPTQ/AWQ int4 with group size 128: one fp16 scale + one packed 4-bit zero point per group (AutoGPTQ/AutoAWQ)"

WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.name: f
    for f in [
        WeightFormat("fp32", 32, 0, False, False, "IEEE float32"),
        WeightFormat("bf16", 16, 0, False, False, "bfloat16"),
        WeightFormat("fp16", 16, 0, False, False, "IEEE float16"),
        WeightFormat("fp8", 8, 0, False, True,
                     "FP8 E4M3 with per-tensor scales (vLLM / TensorRT-LLM FP8 checkpoints)"),
        WeightFormat("int8", 8, 0, False, True,
                     "LLM.int8() / W8A16: int8 weight with one fp32 scale per output row (negligible)"),
        WeightFormat("int4", 4, (16 + 4) / 128, False, True, _GPTQ),
        WeightFormat("nf4", 4, 32 / 64, False, True, _BNB),
        WeightFormat("fp4", 4, 32 / 64, False, True, _BNB),
        # GGUF: block formats of llama.cpp. Q4_0 = 32 x 4-bit + one fp16 scale per block of 32
        # (18 bytes / 32 weights = 4.5 bits); Q8_0 = 32 x int8 + fp16 scale (8.5 bits).
        # K-quants: bits per weight measured on Llama 2 7B, llama.cpp tools/quantize/README.md.
        WeightFormat("q4_0", 4.5, 0, True, True, "llama.cpp ggml block_q4_0: 18 bytes per 32 weights"),
        WeightFormat("q4_k_m", 4.84, 0, True, True, "llama.cpp tools/quantize/README.md (Llama 2 7B: 4.84 BPW)"),
        WeightFormat("q5_k_m", 5.68, 0, True, True, "llama.cpp tools/quantize/README.md (Llama 2 7B: 5.68 BPW)"),
        WeightFormat("q6_k", 6.56, 0, True, True, "llama.cpp tools/quantize/README.md (Llama 2 7B: 6.56 BPW)"),
        WeightFormat("q8_0", 8.5, 0, True, True, "llama.cpp ggml block_q8_0: 34 bytes per 32 weights"),
        WeightFormat("f16", 16, 0, True, False, "GGUF F16"),
    ]
}

# Names people type for the same format.
_FORMAT_ALIASES = {
    "float32": "fp32", "f32": "fp32", "32bit": "fp32", "32-bit": "fp32", "full": "fp32",
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "16bit": "fp16", "16-bit": "fp16",
    "e4m3": "fp8", "float8": "fp8", "8bit": "int8", "8-bit": "int8", "w8a16": "int8",
    "4bit": "int4", "4-bit": "int4", "gptq": "int4", "awq": "int4", "w4a16": "int4",
    "int4-awq": "int4", "int4-gptq": "int4", "bnb4": "nf4", "qlora": "nf4",
    # Kernel names (tools/kernels.py, knowledge/quant_kernels.csv) store weights in these formats.
    "gptq-marlin": "int4", "awq-marlin": "int4", "marlin": "int4", "machete": "int4", "gptq-exllama": "int4",
    "gptq-exllamav2": "int4", "gptq-cuda-old": "int4", "gptq-cuda": "int4", "awq-gemm": "int4",
    "awq-gemv": "int4", "tinygemm": "int4", "int4wo": "int4", "exl2": "int4", "q4f16_1": "int4",
    "bnb-4bit": "nf4", "bnb-nf4": "nf4", "bnb-fp4": "fp4", "load_in_4bit": "nf4",
    "bnb-int8": "int8", "llm.int8": "int8", "llm-int8": "int8", "bnb8": "int8", "load_in_8bit": "int8",
    "int8wo": "int8", "fp8-w8a8": "fp8",
}


def weight_format(name: str) -> WeightFormat:
    """Look up a weight format by name (case-insensitive, common aliases accepted).

    Raises:
        KeyError: unknown name; the caller turns it into a user-facing message.
    """
    key = str(name).strip().lower().replace(" ", "")
    key = _FORMAT_ALIASES.get(key, key)
    return WEIGHT_FORMATS[key]


def canonical_format(name: str | None, accepted: str = "") -> str | None:
    """The canonical name of weight format `name` ("BF16" -> "bf16", "Q4_K_M" -> "q4_k_m"); None stays None
    (the tool's default applies). For the request models' field validators.

    Raises:
        ValueError: unknown name; the message is `accepted`, else "one of" every known format.
    """
    if name is None:
        return None
    try:
        return weight_format(name).name
    except KeyError:
        raise ValueError(accepted or "one of " + ", ".join(WEIGHT_FORMATS)) from None


def dtype_bytes(name: str) -> float:
    """Bytes of one element stored in a plain (unquantised) dtype or an 8-bit cache format."""
    table = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
    return table[name]
