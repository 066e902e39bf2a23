"""The way forward: one test per lever, numbers worked by hand from tools.vram's formulas.

Conventions (tools.vram): decimal GB; CUDA context = 0.5 GB + 5 % of everything allocated; a
"12 GB" card is 12 GiB = 12.885 GB, "48 GB" = 51.540 GB, "80 GB" = 85.899 GB, less what nvidia-smi
does not report (gpus.csv usable_memory_gib: an RTX 3060 12,282 MiB, an L40S 46,068, an RTX 6000 Ada 49,128).
"""

import pytest

from knowledge.catalog import load_engines, load_gpus, load_training_efficiency, resolve_model
from tools.levers import LeverGoal, apply_practitioner_defaults, find_levers, practitioner_defaults
from tools.schemas import VramRequest
from tools.vram import estimate_vram

GPUS = {g.id: g for g in load_gpus()}
CATALOG = list(GPUS.values())
VLLM = next(e for e in load_engines() if e.id == "vllm")
MFU = load_training_efficiency()


def codes(search):
    return [lv.code for lv in search.levers]


def test_7b_bf16_on_a_12_gb_card_fits_in_8_bit():
    # Mistral 7B v0.1, 2,048 tokens, batch 1. bf16: 7.2417 B params x 2 B = 14.48 GB weights -> 16.26 GB > 12.885.
    # int8 (RTX 3060 has no FP8 tensor cores): 6.9793 B linear params x 1 B + 0.2624 B embedding/head x 2 B
    # = 7.504 GB; KV 2,048 x 131,072 B = 0.268 GB; prefill 2,048 x 126,976 B + 4 B x 32,000 = 0.260 GB;
    # context 0.5 + 0.05 x 8.033 = 0.902 GB; total 8.934 GB, 3.95 GB free.
    by_hand = 6_979_321_856 / 1e9 + 262_410_240 * 2 / 1e9 + 2048 * 131_072 / 1e9 + (2048 * 126_976 + 128_000) / 1e9
    by_hand = by_hand * 1.05 + 0.5
    s = find_levers(resolve_model("mistral-7b"), VramRequest(), GPUS["rtx-3060"], gpus_catalog=CATALOG)
    assert s.problem == "does_not_fit" and s.baseline.memory_gb == pytest.approx(16.26, abs=0.01)
    first = s.levers[0]
    assert first.code == "weights_8bit" and first.params == {"weight_precision": "int8"}
    assert first.fits and first.memory_gb == pytest.approx(by_hand, abs=1e-3) and first.memory_gb == pytest.approx(8.934, abs=1e-3)
    assert first.headroom_gb == pytest.approx(12_282 * 2**20 / 1e9 - by_hand, abs=1e-3)  # 12 GiB x 24564/24576 usable
    assert codes(s)[1] == "weights_4bit" and 1 <= len(s.levers) <= 3
    assert "kv_cache_fp8" in s.tried and "kv_cache_fp8" not in codes(s)  # halves a 0.27 GB cache: not enough


def test_32b_lora_on_an_80_gb_card_fits_with_checkpointing():
    # Qwen2.5 32B, LoRA rank 8 on q,v, batch 1 x 2,048. Weights 32.764 B x 2 B = 65.53 GB; logits
    # 2,048 x 152,064 x 10 B = 3.11 GB. Without checkpointing every layer keeps its activations:
    # 36.5 GB -> 111.1 GB in all. With it only the 64 layer inputs (2,048 x 64 x 2 B x 5,120 = 1.34 GB)
    # and one layer's recompute (1.14 GB) stay: 2.48 GB -> 75.3 GB, 10.6 GB free.
    s = find_levers(resolve_model("qwen2.5-32b"), VramRequest(method="lora", grad_checkpointing=False),
                    GPUS["a100-80gb-sxm"], gpus_catalog=CATALOG)
    assert s.problem == "does_not_fit" and s.baseline.memory_gb == pytest.approx(111.07, abs=0.01)
    lv = s.levers[0]
    assert lv.code == "grad_checkpointing" and lv.size == 1 and lv.params == {"grad_checkpointing": True}
    parts = 65.5278 + 0.0336 + 0.0336 + 0.0671 + 2.4837 + 3.1143  # weights, adapters, grads, AdamW, activations, logits
    assert lv.memory_gb == pytest.approx(parts * 1.05 + 0.5, abs=0.01) and lv.headroom_gb == pytest.approx(10.58, abs=0.01)
    assert 2048 * 64 * 2 * 5120 / 1e9 == pytest.approx(1.342, abs=1e-3)


def test_72b_qlora_on_48_gb_fits_with_double_quant_and_chunked_loss():
    # Qwen2.5 72B QLoRA (nf4, checkpointing on): 56.59 GB on an RTX 6000 Ada (48 GiB, ECC off: 49,128 MiB =
    # 51.51 GB usable; an L40S, ECC on, has 48.31 GB and would need a shorter sequence too). Double quantisation:
    # constants 70.21 B x 0.5 bit -> x 0.127 bit: 4.388 -> 1.114 GB. Chunked loss: logits
    # 2,048 x 152,064 x 10 B -> x 2.5 B: 3.114 -> 0.779 GB. Saved (3.274 + 2.336) x 1.05 = 5.89 GB -> 50.70 GB.
    s = find_levers(resolve_model("qwen2.5-72b"), VramRequest(method="qlora"), GPUS["rtx-6000-ada"], gpus_catalog=CATALOG)
    assert s.problem == "does_not_fit" and s.baseline.memory_gb == pytest.approx(56.59, abs=0.01)
    lv = s.levers[0]
    assert lv.code == "chunked_loss+double_quant" and lv.size == 2
    assert lv.params == {"chunked_loss": True, "double_quant": True}
    assert lv.memory_gb == pytest.approx(56.592 - (4.388 - 1.114 + 3.114 - 0.779) * 1.05, abs=0.01)
    assert {"double_quant", "chunked_loss"} <= set(s.tried)  # each alone is not enough


def test_405b_fp8_serving_needs_eight_h100s_in_tensor_parallel():
    # 410.06 GB of fp8 weights: 4 GPUs hold 102.5 GB each (> 85.9), 8 hold 51.3 GB (+ KV, workspace: 55.4 GB)
    s = find_levers(resolve_model("llama-3.1-405b"), VramRequest(weight_precision="fp8", seq_len=8192),
                    GPUS["h100-sxm"], gpus_catalog=CATALOG)
    lv = s.levers[0]
    assert lv.code == "more_gpus_tensor_parallel" and lv.params == {"gpus": 8, "tensor_parallel": 8}
    assert lv.memory_gb == pytest.approx(55.4, abs=0.1)


def test_when_nothing_else_works_several_gpus_of_a_bigger_kind():
    # DeepSeek-V3 in bf16: 671.03 B params x 2 B = 1,342 GB. No lever on one 12 GB card (or 8 of them) holds
    # it; over 8 GPUs (tensor parallel) each holds 167.8 GB of weights, 176.9 GB in all: more than an
    # H200 (141 GiB = 151.4 GB) or a GH200 144GB (154.6 GB), within a B200 (180 GiB = 193.3 GB).
    s = find_levers(resolve_model("deepseek-v3"), VramRequest(), GPUS["rtx-3060"], gpus_catalog=CATALOG)
    lv = s.levers[0]
    assert lv.code == "bigger_gpu+more_gpus_tensor_parallel" and lv.params["gpu_id"] == "b200"
    assert lv.params["gpus"] == lv.params["tensor_parallel"] == 8
    assert 671_026_279_424 * 2 / 1e9 / 8 == pytest.approx(167.76, abs=0.01)
    assert lv.memory_gb == pytest.approx(176.86, abs=0.01)
    assert GPUS["gh200-144gb"].memory_gb < lv.memory_gb < GPUS["b200"].memory_gb


def test_full_finetune_that_cannot_fit_points_to_qlora():
    # Llama 3.1 70B full fine-tuning, mixed precision: 16 B/param x 70.55 B = 1,129 GB before activations
    s = find_levers(resolve_model("llama-3.1-70b"), VramRequest(method="full"), GPUS["h100-sxm"], gpus_catalog=CATALOG)
    assert s.problem == "does_not_fit" and s.baseline.memory_gb > 1129
    assert s.levers[0].code == "qlora" and s.levers[0].fits


def test_smaller_micro_batch_keeps_the_effective_batch_by_accumulation():
    # Llama 3.1 8B LoRA at batch 16 x 2,048 on a 24 GB card: the solver finds the largest micro-batch
    s = find_levers(resolve_model("llama-3.1-8b"), VramRequest(method="lora", batch=16, grad_checkpointing=True,
                                                              chunked_loss=True), GPUS["l4"], gpus_catalog=CATALOG)
    assert s.problem == "does_not_fit" and "smaller_micro_batch" in codes(s)
    lv = next(x for x in s.levers if x.code == "smaller_micro_batch")
    b = lv.params["batch"]
    assert lv.fits and 1 <= b < 16 and lv.params["grad_accumulation_steps"] == -(-16 // b)  # ceil(16 / b)
    over = estimate_vram(resolve_model("llama-3.1-8b"), VramRequest(method="lora", batch=b + 1, grad_checkpointing=True,
                                                                    chunked_loss=True))
    assert over.total_gb > GPUS["l4"].memory_gb  # b is the largest micro-batch that fits


def test_too_slow_serving_gets_tensor_parallel():
    # 70B int4 on one A100 80GB decodes ~30 tokens/s per user (memory-bound); 40 asked -> two GPUs
    s = find_levers(resolve_model("llama-3.1-70b"), VramRequest(weight_precision="int4", seq_len=4096),
                    GPUS["a100-80gb-sxm"], gpus_catalog=CATALOG, engine=VLLM,
                    goal=LeverGoal(min_tokens_per_s_per_user=40))
    assert s.problem == "too_slow" and s.baseline.fits and s.baseline.tokens_per_s_per_user < 40
    assert s.levers and all(lv.tokens_per_s_per_user >= 40 for lv in s.levers)
    assert s.levers[0].code == "more_gpus_tensor_parallel" and s.levers[0].params["gpus"] == 2


def test_past_the_deadline_more_gpus_and_over_budget_a_cheaper_gpu():
    a = resolve_model("llama-3.1-8b")
    # 1e9 tokens of LoRA on one A100: 4 x 8.03 B FLOPs/token (+ attention) / (312 TFLOP/s x MFU) > 10 h
    req = VramRequest(method="lora", batch=4, grad_checkpointing=False)
    s = find_levers(a, req, GPUS["a100-80gb-sxm"], gpus_catalog=CATALOG, mfu_table=MFU,
                    goal=LeverGoal(dataset_tokens=1e9, deadline_hours=10))
    assert s.problem == "past_deadline" and s.baseline.hours > 10
    assert s.levers and all(lv.hours <= 10 for lv in s.levers)
    assert s.levers[0].code == "more_gpus_fsdp" and s.levers[0].params["gpus"] >= 2
    # checkpointing on costs time: the deadline search offers turning it off
    s = find_levers(a, req.model_copy(update={"grad_checkpointing": True}), GPUS["a100-80gb-sxm"],
                    gpus_catalog=CATALOG, mfu_table=MFU, goal=LeverGoal(dataset_tokens=1e9, deadline_hours=10))
    assert "grad_checkpointing_off" in s.tried
    # over budget: 3e8 tokens of LoRA with checkpointing on an H100 at $2.50/h costs ~$26; the list's
    # cheaper GPUs, by price: RTX 4090 ($0.35/h, ~65 h -> ~$23, over) then L40S ($0.60/h, ~30 h -> ~$18)
    prices = {"a100-80gb-sxm": 1.50, "h100-sxm": 2.50, "l40s": 0.60, "rtx-4090": 0.35}
    budget = LeverGoal(dataset_tokens=3e8, budget_usd=20, usd_per_gpu_hour=prices)
    req = VramRequest(method="lora", batch=4, grad_checkpointing=True)
    s = find_levers(a, req, GPUS["h100-sxm"], gpus_catalog=CATALOG, mfu_table=MFU, goal=budget)
    assert s.problem == "over_budget" and s.baseline.cost_usd > 20
    other = next(lv for lv in s.levers if lv.code == "other_gpu")
    assert other.params["gpu_id"] == "l40s" and other.cost_usd <= 20
    assert other.cost_usd == pytest.approx(other.hours * 0.60)


def test_a_request_that_works_needs_no_lever():
    s = find_levers(resolve_model("llama-3.1-8b"), VramRequest(), GPUS["h100-sxm"])
    assert s.problem == "fits" and s.levers == [] and s.baseline.fits


def test_practitioner_defaults_and_which_were_applied():
    assert practitioner_defaults("inference") == {}
    assert practitioner_defaults("lora") == {"grad_checkpointing": True}
    assert practitioner_defaults("qlora") == {"grad_checkpointing": True, "weight_precision": "nf4",
                                              "double_quant": True}
    req, notes = apply_practitioner_defaults(VramRequest(method="lora"))
    assert req.grad_checkpointing is True and [(n.code, n.params["field"]) for n in notes] == [
        ("default_applied", "grad_checkpointing")]
    req, notes = apply_practitioner_defaults(VramRequest(method="lora", grad_checkpointing=False))
    assert req.grad_checkpointing is False and notes == []  # the user's choice stands
    req, notes = apply_practitioner_defaults(VramRequest(method="qlora"))
    # checkpointing is already on for QLoRA and nf4 its default precision: only double quant is new
    assert req.double_quant and {n.params["field"] for n in notes} == {"double_quant"}
    req, notes = apply_practitioner_defaults(VramRequest(method="qlora", weight_precision="int4"))
    assert not req.double_quant  # double quantisation is for nf4/fp4 only


def test_service_wrapper_attaches_the_cheapest_offer_and_the_defaults_applied():
    from assistant.service import api

    s = api.levers(model="llama-3.1-405b", gpu="H100", weight_precision="fp8", seq_len=8192)
    lv = s.levers[0]
    assert lv.code == "more_gpus_tensor_parallel" and lv.params["gpus"] == 8
    # the cheapest on-demand 8 x H100 SXM instance of the bundled catalog
    eight = api.prices(gpu="H100 SXM", gpus=8, pricing="on-demand", limit=1).offers[0]
    assert lv.offer["gpu_count"] == 8 and lv.offer["price_usd_per_hour"] == eight.price_usd_per_hour
    # a LoRA request without a checkpointing choice gets the practitioners' default, and says so
    s = api.levers(model="qwen2.5-32b", gpu="A100 80GB", method="lora")
    assert s.problem == "fits" and s.defaults_applied[0].params == {"field": "grad_checkpointing", "value": True}


def test_bad_goals_are_named():
    from assistant.service import api
    from tools.errors import InvalidInput

    with pytest.raises(InvalidInput, match="Invalid nonsense"):
        api.levers(model="llama-3.1-8b", gpu="L4", goal={"nonsense": 1})
    with pytest.raises(InvalidInput, match="Invalid goal"):
        api.levers(model="llama-3.1-8b", gpu="L4", goal="x")
    with pytest.raises(InvalidInput, match="Invalid budget_usd"):
        api.levers(model="llama-3.1-8b", gpu="L4", goal={"budget_usd": -1})


# ---- when no single lever or pair works -------------------------------------------------------------
# Llama 3.1 70B (80 layers, 8 KV heads x 128, hidden 8,192, MLP 28,672, vocab 128,256, untied) on RTX 4090s
# (24,564 MiB usable = 25.757 GB), at most 2 GPUs, no other GPU in the list.
# Linear params per layer: q, o 8,192^2 + k, v 8,192 x 1,024 (x2) + MLP 3 x 8,192 x 28,672 = 855.6 M;
# x 80 = 68.45 B; int4 = 0.5 B each -> 34.22 GB; embedding + head 2 x 128,256 x 8,192 x 2 B = 4.20 GB;
# over 2 GPUs (tensor parallel): (34.22 + 4.20) / 2 = 19.22 GB of weights per GPU.
# KV per token: 80 x 8 x 128 x 2 (K and V) = 163,840 values.
_W70_INT4_TP2 = (68_451_041_280 * 0.5 + 2 * 128_256 * 8192 * 2) / 1e9 / 2
_TWO_4090S = LeverGoal(max_gpus=2)


def test_no_pair_works_the_nearest_stack_of_levers_does():
    # 2 sequences of 16,384 tokens: bf16 KV = 32,768 x 163,840 x 2 B / 2 GPUs = 5.37 GB; with int4 weights
    # on 2 GPUs that is 29.2 GB (> 25.76): no pair works. FP8 KV halves it to 2.68 GB and chunked prefill
    # (8,192 tokens at a time) halves the activations: weights 19.22 + scales 0.67 + KV 2.68 + activations
    # 1.04 = 23.61 GB, CUDA context 0.5 + 5 % x 23.61 = 1.68 GB: 25.29 GB, 0.48 GB free.
    a = resolve_model("llama-3.1-70b")
    s = find_levers(a, VramRequest(seq_len=16384, batch=2), GPUS["rtx-4090"], goal=_TWO_4090S,
                    gpus_catalog=[GPUS["rtx-4090"]])
    assert s.problem == "does_not_fit" and len(s.levers) == 1 and s.nothing_works is None
    lv = s.levers[0]
    assert lv.code == "kv_cache_fp8+chunked_prefill+weights_4bit+more_gpus_tensor_parallel"
    assert lv.params == {"kv_precision": "fp8", "prefill_chunk_tokens": 8192, "weight_precision": "int4",
                         "gpus": 2, "tensor_parallel": 2}
    est = estimate_vram(a, VramRequest(seq_len=16384, batch=2, **lv.params))
    assert est.components_gb["weights"] == pytest.approx(_W70_INT4_TP2, abs=0.01)
    assert est.components_gb["kv_cache"] == pytest.approx(32_768 * 163_840 / 1e9 / 2, abs=1e-3)
    parts = sum(v for k, v in est.components_gb.items() if k != "cuda_context")
    assert parts == pytest.approx(23.61, abs=0.01) and lv.memory_gb == pytest.approx(parts * 1.05 + 0.5, abs=0.01)
    assert lv.fits and lv.headroom_gb == pytest.approx(24_564 * 2**20 / 1e9 - 25.29, abs=0.01)
    pair = estimate_vram(a, VramRequest(seq_len=16384, batch=2, weight_precision="int4", gpus=2, tensor_parallel=2))
    assert pair.components_gb["kv_cache"] == pytest.approx(5.37, abs=0.01) and pair.total_gb > 25.76  # no pair fits


def test_nothing_in_the_list_works_says_why_with_the_numbers():
    # 2 x 32,768 tokens: even with FP8 KV (65,536 x 163,840 x 1 B / 2 = 5.37 GB), chunked prefill and int4
    # weights (19.22 GB) on 2 GPUs it needs 28.1 GB per GPU, more than a 4090's 25.76; the weights are
    # the largest part.
    s = find_levers(resolve_model("llama-3.1-70b"), VramRequest(seq_len=32768, batch=2), GPUS["rtx-4090"],
                    goal=_TWO_4090S, gpus_catalog=[GPUS["rtx-4090"]])
    assert s.levers == [] and s.nothing_works is not None
    p = s.nothing_works.params
    assert s.nothing_works.code == "nothing_works" and p["problem"] == "does_not_fit"
    assert p["gpu"] == "RTX 4090" and p["gpus"] == 2 and p["gpu_memory_gb"] == pytest.approx(25.757, abs=0.001)  # 24,564 MiB
    assert p["levers"] == ["kv_cache_fp8", "chunked_prefill", "weights_4bit"]
    assert p["lever_params"] == {"kv_precision": "fp8", "prefill_chunk_tokens": 8192, "weight_precision": "int4"}
    assert p["largest_component"] == "weights" and p["largest_gb"] == pytest.approx(_W70_INT4_TP2, abs=0.01)
    assert p["memory_gb"] == pytest.approx(28.11, abs=0.01) and p["memory_gb"] > p["gpu_memory_gb"]


def test_an_impossible_speed_target_reports_the_fastest_setup_tried():
    # 2,000,000 tokens/s per user from Phi-3.5-mini: above any roofline. Decoding reads every weight once
    # per token, so per-user speed <= bandwidth / weight bytes per GPU: a B200 (8 TB/s) with int4 weights
    # (3.82 B x 0.5 B = 1.91 GB) over 8 GPUs reads 0.24 GB per token: at most ~33,500 tokens/s.
    s = find_levers(resolve_model("phi-3.5-mini"), VramRequest(seq_len=4096), GPUS["t4"], gpus_catalog=CATALOG,
                    engine=VLLM, goal=LeverGoal(min_tokens_per_s_per_user=2_000_000))
    assert s.problem == "too_slow" and s.levers == []
    p = s.nothing_works.params
    assert p["problem"] == "too_slow" and 30.5 < p["best"] < 8e12 / (3.82e9 * 0.5 / 8)
    assert p["best"] > s.baseline.tokens_per_s_per_user and 1 <= p["gpus"] <= 8


def test_service_with_no_gpu_starts_from_the_largest_gpu_on_offer():
    # after a recommendation that found nothing, the levers start from the GPU with the most memory that has
    # an on-demand offer, and every GPU is priced at its cheapest GPU-hour (so a bigger GPU is the cheapest)
    from assistant.service import api

    s = api.levers(model="llama-3.1-405b", method="full")
    offered = [g for g in load_gpus() if api.prices(gpu=g.name, pricing="on-demand", limit=1).offers]
    assert s.baseline.gpu_memory_gb == pytest.approx(max(g.memory_gb for g in offered))
    # 405B full fine-tuning: 16 B/param x 405.85 B = 6,494 GB of weights, gradients and AdamW states alone
    assert s.problem == "does_not_fit" and s.baseline.memory_gb > 6494 and s.levers


def test_job_replicas_for_a_generation_deadline():
    """1e9 output tokens in 6 h at 15,962 tokens/s per copy: 1e9 / (15,962 x 21,600) = 2.90 -> 3 copies;
    at 2 GPUs per copy, 6 GPUs; with 3 copies the job takes 1e9 / (3 x 15,962 x 3,600) = 5.80 h."""
    from tools.errors import InvalidInput
    from tools.solve import JobReplicasRequest, job_replicas, replicas_for_deadline

    r = job_replicas(JobReplicasRequest(total_output_tokens=1e9, tokens_per_s_per_replica=15962, deadline_hours=6,
                                        gpus_per_replica=2))
    assert (r.replicas, r.gpus_total) == (3, 6) and r.hours_at_that_count == pytest.approx(5.80, abs=0.01)
    assert replicas_for_deadline(1000, 1000, 1) == 1
    with pytest.raises(InvalidInput):
        replicas_for_deadline(1e9, float("nan"), 6)


def test_job_replicas_for_images_by_a_deadline():
    """20,000 images in 24 h at 534 images/hour per copy: 20,000 / (534 x 24) = 1.56 -> 2 copies, which take
    20,000 / (2 x 534) = 18.73 h; both kinds of work at once is refused."""
    from pydantic import ValidationError
    from tools.solve import JobReplicasRequest, job_replicas

    r = job_replicas(JobReplicasRequest(images=20000, images_per_hour_per_replica=534, deadline_hours=24))
    assert (r.replicas, r.gpus_total) == (2, 2) and r.hours_at_that_count == pytest.approx(18.73, abs=0.01)
    with pytest.raises(ValidationError):
        JobReplicasRequest(images=10, images_per_hour_per_replica=5, total_output_tokens=1e6,
                           tokens_per_s_per_replica=100, deadline_hours=1)
