"""The conversation store on SQLite and on the real PostgreSQL: round trip, owners, compaction, caps, TTL."""

from __future__ import annotations

import json
import random

import pytest

from assistant.runtime.settings import StoreSettings
from assistant.threads import StoreFull, ThreadTooLarge, new_thread_id
from assistant.threads.base import InvalidState, pack_answer, turn_bytes
from tools.errors import InvalidInput

ALICE, BOB = "user:alice", "user:bob"


def noise(n: int, seed: int = 0) -> str:
    """n bytes of text zlib cannot shrink (answers over 1 KB are stored compressed)."""
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(n))


def test_round_trip_keeps_turns_in_order_and_the_latest_state(make_store):
    s = make_store()
    for i in range(3):
        rec = s.append_turn(ALICE, "plan", f"question {i}", f"answer {i}", {"model": "llama-3-8b", "turn": i})
    assert rec.turn_count == 3 and rec.state == {"model": "llama-3-8b", "turn": 2}
    loaded = s.load(ALICE, "plan")
    assert [(t.question, t.answer) for t in loaded.turns] == [(f"question {i}", f"answer {i}") for i in range(3)]
    assert loaded.turns[0].at.endswith("+00:00")  # ISO 8601 in UTC
    assert loaded.as_json()["turns"][2] == {"question": "question 2", "answer": "answer 2", "at": loaded.turns[2].at}
    assert [t.thread_id for t in s.list_threads(ALICE)] == ["plan"]


def test_another_owners_thread_is_unknown(make_store):
    s = make_store()
    s.append_turn(ALICE, "alice-plan", "Can I run Llama-3-8B on a 24 GB GPU?", "Yes.", {"model": "llama-3-8b"})
    assert s.load(BOB, "alice-plan") is None
    assert s.list_threads(BOB) == []
    assert s.delete(BOB, "alice-plan") is False
    bob = s.append_turn(BOB, "alice-plan", "hi", "hello", {})  # Bob's own thread of that name, fresh
    assert bob.turn_count == 1 and bob.state == {}
    assert s.load(ALICE, "alice-plan").turn_count == 1  # Alice's is untouched
    assert s.load("slack:T1:C1", "alice-plan") is None


def test_compaction_keeps_the_latest_turns_and_a_linear_size(make_store):
    s = make_store(StoreSettings(max_turns=5))
    for i in range(12):
        rec = s.append_turn(ALICE, "t", f"q{i}", f"a{i}", {"i": i})
    assert rec.turn_count == 12 and rec.compacted_turns == 7
    assert [t.question for t in rec.turns] == ["q7", "q8", "q9", "q10", "q11"]
    # size = state '{"i":11}' (8 bytes) + q7..q9 with a7..a9 (2 + 2 bytes) and q10, q11 with a10, a11
    # (3 + 3 bytes), each with a 25-byte timestamp: 8 + 3 x 29 + 2 x 31 = 157
    expected = len('{"i":11}') + sum(turn_bytes(t.question, t.answer, t.at) for t in rec.turns)
    assert rec.size_bytes == expected == 157


def test_per_thread_cap_refuses_a_turn_too_large_and_keeps_every_turn(make_store):
    s = make_store(StoreSettings(max_thread_bytes=16 * 1024))
    for i in range(3):
        rec = s.append_turn(ALICE, "t", f"q{i}", noise(3000, i), {})
    assert len(rec.turns) == 3 and rec.size_bytes <= 16 * 1024
    with pytest.raises(ThreadTooLarge, match="per-thread limit is 16 KB"):
        s.append_turn(ALICE, "t", "huge", noise(20_000), {})
    assert s.load(ALICE, "t").turn_count == 3  # nothing written


def test_total_cap_refuses_new_growth_with_a_clear_message(make_store):
    s = make_store(StoreSettings(max_total_bytes=1024 * 1024))
    for i in range(3):
        s.append_turn(ALICE, f"t{i}", "q", noise(300_000, i), {})
    with pytest.raises(StoreFull, match="conversation store is full.*GPU_ADVISOR_STORE_MAX_MB"):
        s.append_turn(BOB, "t", "q", noise(300_000, 9), {})
    assert s.load(BOB, "t") is None and s.load(ALICE, "t0").turn_count == 1  # the others still read


def test_threads_expire_after_the_ttl(make_store):
    now = [1_000_000.0]
    s = make_store(StoreSettings(ttl_days=30), clock=lambda: now[0])
    s.append_turn(ALICE, "old", "q", "a", {})
    now[0] += 29 * 86400
    s.append_turn(ALICE, "recent", "q", "a", {})
    assert s.load(ALICE, "old") is not None
    now[0] += 2 * 86400  # "old" is now 31 days untouched, "recent" 2 days
    assert s.load(ALICE, "old") is None and [t.thread_id for t in s.list_threads(ALICE)] == ["recent"]
    assert s.purge_expired() == 1
    again = s.append_turn(ALICE, "old", "new start", "a", {})
    assert again.turn_count == 1 and again.turns[0].question == "new start"


@pytest.mark.parametrize("owner, thread_id", [
    pytest.param(ALICE, "", id="empty-id"),
    pytest.param(ALICE, "a" * 129, id="id-too-long"),
    pytest.param(ALICE, "../etc/passwd", id="path-in-id"),
    pytest.param(ALICE, "x y", id="space-in-id"),
    pytest.param("", "t", id="empty-owner"),
    pytest.param(None, "t", id="no-owner"),
])
def test_malformed_keys_are_refused(make_store, owner, thread_id):
    s = make_store()
    with pytest.raises(InvalidInput):
        s.append_turn(owner, thread_id, "q", "a", {})
    with pytest.raises(InvalidInput):
        s.load(owner, thread_id)


def test_text_json_cannot_hold(make_store):
    s = make_store()
    rec = s.append_turn(ALICE, "t", "bad \ud800 surrogate", "ok", {})
    assert rec.turns[0].question == "bad \ufffd surrogate"
    with pytest.raises(InvalidState, match="thread state could not be saved"):
        s.append_turn(ALICE, "t", "q", "a", {"x": float("nan")})
    rec = s.append_turn(ALICE, "t", "q", "a", {"text": "lone \udc80 in the state"})
    assert rec.state == {"text": "lone \ufffd in the state"} and rec.turn_count == 2


def test_new_thread_ids_are_random_and_unguessable():
    ids = {new_thread_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)  # 128 bits each


def test_state_is_json_round_tripped(make_store):
    s = make_store()
    state = {"query": {"model": "llama-3.1-70b", "context_tokens": 32768, "gpus": [1, 2]}, "lang": "ur"}
    s.append_turn(ALICE, "t", "q", "a", state)
    assert s.load(ALICE, "t").state == json.loads(json.dumps(state))


def test_a_100_turn_thread_of_the_longest_questions_stays_under_5_mb_on_disk(tmp_path):
    """Issue 19: 100 follow-ups wrote 252 MB with the checkpointer. Worst case here: 100 questions at the
    4,000-character limit with 8,000-character answers, default limits (every turn kept, 1 MiB per
    thread, answers compressed)."""
    import os

    from assistant.runtime.settings import StoreSettings
    from assistant.threads.sqlite_store import SqliteThreadStore

    path = tmp_path / "conversations.sqlite"
    s = SqliteThreadStore(str(path), StoreSettings())
    for i in range(100):
        rec = s.append_turn(ALICE, "long", f"{i:04d}" + "q" * 3996, "a" * 8000, {"query": {"turn": i}})
    # 100 kept turns x (4,000 + the packed 8,000-byte answer + 25) bytes + the state, under the 1 MiB cap
    packed = len(pack_answer("a" * 8000).encode("utf-8"))
    assert rec.turn_count == 100 and len(rec.turns) == 100
    assert rec.size_bytes == 100 * (4000 + packed + 25) + len('{"query":{"turn":99}}') <= 1024 * 1024
    on_disk = sum(os.path.getsize(f"{path}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{path}{suffix}"))
    assert on_disk <= 5_000_000, on_disk
