"""Property-based: any combination of inputs gives finite numbers or a typed, readable error."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.service import api
from tools.errors import AdvisorError

MODELS = ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "gemma-3-27b", "falcon-7b", "phi-2", "qwen3-30b-a3b"]
numbers = st.one_of(st.integers(-10, 10**9), st.floats(allow_nan=True, allow_infinity=True), st.none())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(MODELS + [None]),
    params_b=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    method=st.sampled_from(["inference", "full", "lora", "qlora", "train", None]),
    precision=st.sampled_from(["bf16", "fp8", "int4", "nf4", "q4_k_m", "int3", None]),
    optimizer=st.sampled_from(["adamw", "adamw8bit", "sgd", "adafactor", "lion", None]),
    batch=numbers, seq_len=numbers, gpus=numbers, lora_rank=numbers,
    sharding=st.sampled_from(["none", "zero2", "zero3", "fsdp", "ddp", None]),
    tp=st.sampled_from([None, 1, 2, 3, 8, 16]),
    gpu=st.sampled_from([None, "H100", "4090", "T4", "GH200", "H10"]),
)
def test_never_crashes_never_nan(model, params_b, method, precision, optimizer, batch, seq_len, gpus, lora_rank,
                                 sharding, tp, gpu):
    if model is None and params_b is None:
        params_b = 7.0
    if model is not None:
        params_b = None
    try:
        est = api.vram(model=model, params_b=params_b, gpu=gpu, method=method, weight_precision=precision,
                       optimizer=optimizer, batch=batch, seq_len=seq_len, gpus=gpus, lora_rank=lora_rank,
                       sharding=sharding, tensor_parallel=tp)
    except AdvisorError as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return
    assert math.isfinite(est.total_gb) and est.total_gb > 0
    assert all(math.isfinite(v) and v >= 0 for v in est.components_gb.values())
    if est.fit is not None:
        assert math.isfinite(est.fit.headroom_gb)
