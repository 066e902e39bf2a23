"""Rows added for commonly asked open models: their config numbers reproduce published counts.

Each expected figure is published independently of the row (a model card, a leaderboard record,
or the size of the released checkpoint files); the count comes from the catalog's own formula
(tools.architecture.count_params), with the catalog's usual 2% tolerance for card figures.
"""

import pytest

from knowledge.catalog import resolve_model
from tools.architecture import count_params
from tools.errors import UnknownModel

CARD_TOL = 0.02  # as tests/knowledge/test_catalog.py for card figures


def _total_b(model_id: str) -> float:
    return count_params(resolve_model(model_id)).total_b


def test_yi_34b_matches_the_leaderboard_parameter_count():
    # open-llm-leaderboard request for 01-ai/Yi-1.5-34B: "params": 34.389 (same shapes as Yi-34B)
    assert _total_b("yi-34b") == pytest.approx(34.389, abs=0.001)


@pytest.mark.parametrize("model_id, shard_gb, bytes_per_param", [
    ("olmo-2-7b", 4.95 + 4.99 + 4.92 + 4.86 + 4.86 + 4.61, 4),  # fp32 shards of allenai/OLMo-2-1124-7B
    ("granite-3.1-8b", 4.97 + 4.99 + 4.97 + 1.41, 2),           # bf16 shards of ibm-granite/granite-3.1-8b-instruct
])
def test_counts_match_the_released_checkpoint_size(model_id, shard_gb, bytes_per_param):
    assert _total_b(model_id) == pytest.approx(shard_gb / bytes_per_param, rel=0.01)


@pytest.mark.parametrize("model_id, card_total_b, card_active_b", [
    ("llama-4-scout", 109, 17),     # llama-models MODEL_CARD.md: 17B activated, 109B total (incl. vision encoder)
    ("llama-4-maverick", 400, 17),  # 17B activated, 400B total
    ("gpt-oss-120b", 117, None),    # OpenAI: 117B parameters
    ("gpt-oss-20b", 21, None),      # 21B parameters
])
def test_moe_rows_match_the_card(model_id, card_total_b, card_active_b):
    counts = count_params(resolve_model(model_id))
    assert counts.total_b == pytest.approx(card_total_b, rel=CARD_TOL)
    if card_active_b is not None:
        assert counts.active_b == pytest.approx(card_active_b, rel=CARD_TOL)


def test_llama_32_vision_row_is_the_decoder_and_the_encoder_makes_up_the_card_total():
    # Vision tower from the config: 32 + 8 ViT layers of width 1280 (4 attention projections, 2-matrix
    # MLP of 5120) and a 7680 -> 4096 projector; decoder + tower = the card's 10.6B.
    tower = 40 * (4 * 1280 * 1280 + 2 * 1280 * 5120) + 7680 * 4096
    assert _total_b("llama-3.2-11b-vision") + tower / 1e9 == pytest.approx(10.6, rel=0.01)


def test_command_r_v01_is_mha_and_08_2024_is_gqa():
    v01, aug = resolve_model("c4ai-command-r-v01"), resolve_model("c4ai-command-r-08-2024")
    assert (v01.num_kv_heads, aug.num_kv_heads) == (64, 8)


@pytest.mark.parametrize("name, expected", [
    ("Qwen/QwQ-32B", "qwen2.5-32b"),
    ("Yi-1.5-34B-Chat", "yi-34b"),
    ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.1-24b"),
    ("Mistral Small 24B", "mistral-small-24b"),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "llama-3.2-11b-vision"),
    ("Command R+", "command-r-plus-104b"),
    ("openai/gpt-oss-20b", "gpt-oss-20b"),
])
def test_added_names_resolve(name, expected):
    assert resolve_model(name).id == expected


def test_bare_command_r_asks_which_one():
    with pytest.raises(UnknownModel, match="ambiguous"):
        resolve_model("Command R")
