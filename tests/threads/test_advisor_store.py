"""The advisor through the store: a thread's context is its owner's alone; odd text is saved safely."""

from __future__ import annotations

import pytest

FIT_Q = "Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?"


@pytest.fixture(scope="module")
def adv(tmp_path_factory):
    from assistant.service.advisor import Advisor
    from assistant.threads.sqlite_store import SqliteThreadStore

    return Advisor(store=SqliteThreadStore(str(tmp_path_factory.mktemp("adv") / "conversations.sqlite")))


def _vram_args(ans):
    return [c.args for c in ans.tool_calls if c.name == "vram_calculator"]


def test_follow_up_uses_the_owners_thread_only(adv):
    adv.ask(FIT_Q, thread_id="alice-plan", owner="user:alice")
    mine = adv.ask("What if I use 32k context instead?", thread_id="alice-plan", owner="user:alice")
    assert _vram_args(mine)[0]["seq_len"] == 32768 and _vram_args(mine)[0]["model"] == "llama-3-8b"
    theirs = adv.ask("What if I use 32k context instead?", thread_id="alice-plan", owner="user:mallory")
    assert not [a for a in _vram_args(theirs) if a.get("model") == "llama-3-8b"]  # nothing of Alice's was read
    assert adv.store.load("user:alice", "alice-plan").turn_count == 2
    assert adv.store.load("user:mallory", "alice-plan").turn_count == 1


def test_new_threads_get_random_ids_and_are_saved(adv):
    a = adv.ask("Cheapest H100 per hour?", owner="user:alice")
    assert len(a.thread_id) == 32
    rec = adv.store.load("user:alice", a.thread_id)
    assert rec.turns[0].question == "Cheapest H100 per hour?" and rec.turns[0].answer == a.answer
    assert rec.state.get("query")  # the engine's folded Query is kept as the thread's state


def test_a_lone_surrogate_is_answered_and_saved_as_a_replacement_character(adv):
    a = adv.ask("cheapest \ud800 H100 per hour?", thread_id="odd", owner="user:alice")
    assert a.answer and a.tool_calls
    assert adv.store.load("user:alice", "odd").turns[0].question == "cheapest \ufffd H100 per hour?"
