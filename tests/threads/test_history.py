"""Issue 31, defect 9: a thread keeps its whole history. After 100 turns GET /api/threads/{id} returned 50
(the oldest were dropped past GPU_ADVISOR_THREAD_MAX_TURNS=50); now no turn is dropped by default: a
thread is bounded in bytes (answers kept compressed), and a full thread refuses the new turn with a message
instead of dropping old ones without the user's say."""

from __future__ import annotations

import random

import pytest

from assistant.runtime.settings import StoreSettings
from assistant.threads import ThreadTooLarge

ALICE = "user:alice"


def answer_like(i: int, size: int = 2600) -> str:
    """An answer shaped like the advisor's (Markdown table rows, figures, sources), about `size` bytes."""
    rng = random.Random(i)
    gpus = ["H100 SXM", "A100 80GB", "L40S", "L4", "RTX 4090", "H200", "MI300X"]
    lines = [f"**Turn {i}.** Llama-3-8B in FP16 needs {rng.uniform(10, 90):.1f} GiB with 8k context.", "",
             "| GPU | provider | region | $/h | fits |", "|---|---|---|---:|---|"]
    while sum(len(x) + 1 for x in lines) < size - 80:
        lines.append(f"| {rng.choice(gpus)} | {rng.choice(['aws', 'gcp', 'azure', 'lambda'])} | "
                     f"{rng.choice(['us-east-1', 'eu-west-4', 'asia-south1'])} | {rng.uniform(0.2, 12):.2f} | "
                     f"{rng.choice(['yes', 'no, 2 needed', 'yes, 31 GiB free'])} |")
    lines.append(f"_Sources: knowledge/prices snapshot, model card; turn {i}_")
    return "\n".join(lines)


def test_200_turns_are_all_kept_under_1_mb(make_store):
    s = make_store(StoreSettings())  # the defaults
    for i in range(200):
        rec = s.append_turn(ALICE, "long", f"question {i}: and on an H100?", answer_like(i), {"query": {"turn": i}})
    loaded = s.load(ALICE, "long")
    assert loaded.turn_count == 200 and len(loaded.turns) == 200 and loaded.compacted_turns == 0
    assert [t.question for t in loaded.turns] == [f"question {i}: and on an H100?" for i in range(200)]
    assert loaded.turns[0].answer == answer_like(0) and loaded.turns[199].answer == answer_like(199)
    assert rec.size_bytes < 1024 * 1024, rec.size_bytes


def test_a_full_thread_refuses_the_new_turn_and_keeps_the_old(make_store):
    s = make_store(StoreSettings(max_thread_bytes=16 * 1024))
    rng = random.Random(7)
    noise = lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(3000))  # noqa: E731
    kept = 0
    with pytest.raises(ThreadTooLarge, match="reached its size limit.*GPU_ADVISOR_THREAD_MAX_KB"):
        for i in range(20):
            s.append_turn(ALICE, "t", f"q{i}", noise(), {})
            kept += 1
    rec = s.load(ALICE, "t")
    assert 0 < kept < 20 and rec.turn_count == kept and len(rec.turns) == kept  # nothing dropped
    assert rec.turns[0].question == "q0"


def test_an_operator_turn_cap_still_compacts(make_store):
    s = make_store(StoreSettings(max_turns=5))
    for i in range(8):
        rec = s.append_turn(ALICE, "t", f"q{i}", f"a{i}", {})
    assert [t.question for t in rec.turns] == ["q3", "q4", "q5", "q6", "q7"] and rec.compacted_turns == 3


def test_the_turn_cap_is_off_by_default(monkeypatch):
    from assistant.runtime.settings import store_settings

    monkeypatch.delenv("GPU_ADVISOR_THREAD_MAX_TURNS", raising=False)
    assert store_settings().max_turns == 0


def test_get_thread_returns_all_200_turns():
    import httpx

    import app
    from tests.hardening.conftest import free_port

    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        store = app._advisor().store
        for i in range(200):
            store.append_turn("web:anonymous", "two-hundred", f"q{i}", answer_like(i), {"query": {"turn": i}})
        d = httpx.get(url + "api/threads/two-hundred", timeout=30).json()
        assert d["turn_count"] == 200 and d["compacted_turns"] == 0
        assert [t["question"] for t in d["turns"]] == [f"q{i}" for i in range(200)]
        assert d["turns"][150]["answer"] == answer_like(150)
    finally:
        demo.close()
