"""Faults caused for real: damaged or missing price database, a refresh killed with SIGKILL, a damaged,
locked or full conversation store, a dropped or unreachable PostgreSQL, an unwritable data directory,
an LLM backend down under load."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.threads.services import pg_url  # noqa: F401  (fixture: a database of the run's PostgreSQL)

ROOT = Path(__file__).resolve().parents[2]


def cli(home, *args, timeout=120):
    env = dict(os.environ, GPU_ADVISOR_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "assistant.main", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_corrupt_price_database_is_rebuilt_with_a_notice(tmp_path):
    assert cli(tmp_path, "prices", "--limit", "1").returncode == 0
    (tmp_path / "prices.duckdb").write_bytes(b"this is not a database" * 100)
    p = cli(tmp_path, "prices", "--gpu", "H100", "--limit", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["offers"] and any("rebuilt" in n for n in d["notices"])


def test_price_database_deleted_while_running(tmp_path):
    from knowledge.price_db import PriceDb
    from tools.schemas import PriceQuery

    db = PriceDb(tmp_path / "prices.duckdb")
    db.ensure()
    assert db.query(PriceQuery(limit=1), None).offers
    db.path.unlink()
    res = db.query(PriceQuery(limit=1), None)
    assert res.offers and any("rebuilt" in n for n in res.notices)


def test_refresh_killed_halfway_leaves_the_old_catalog(tmp_path):
    home = tmp_path / "home"
    before = json.loads(cli(home, "catalog", "info", "--json").stdout)
    aws_before = next(p["offers"] for p in before["providers"] if p["provider"] == "aws")
    big = tmp_path / "src" / "aws" / "vms.csv"
    big.parent.mkdir(parents=True)
    with open(big, "w") as fh:
        fh.write("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone,GpuInfo\n")
        for i in range(400_000):
            fh.write(f"g{i}.xlarge,L4,1,4,16,{0.5 + i % 97 / 100:.2f},,r{i % 50},z,\n")
    env = dict(os.environ, GPU_ADVISOR_HOME=str(home))
    proc = subprocess.Popen([sys.executable, "-m", "assistant.main", "catalog", "refresh", "--from", str(big)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if list(home.glob(".prices.duckdb.*")):  # the new catalog is being written
            break
        time.sleep(0.05)
    killed_midway = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    after = json.loads(cli(home, "catalog", "info", "--json").stdout)
    aws_after = next(p["offers"] for p in after["providers"] if p["provider"] == "aws")
    assert killed_midway, "the refresh finished before it could be killed"
    assert aws_after == aws_before  # the old catalog still answers
    assert cli(home, "prices", "--gpu", "L4", "--limit", "1").returncode == 0


def test_corrupt_conversation_store_gets_a_fresh_one(tmp_path):
    assert cli(tmp_path, "ask", "hi").returncode == 0
    (tmp_path / "conversations.sqlite").write_bytes(b"garbage" * 1000)
    p = cli(tmp_path, "ask", "--json", "Cheapest H100 per hour?")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["tool_calls"] and any("damaged" in n for n in d["notices"])
    assert list(tmp_path.glob("conversations.sqlite.corrupt-*"))


def test_locked_conversation_store_still_answers(tmp_path):
    """Another process holds the write lock past the busy timeout: the answer still comes, with a
    notice that this one turn was not saved; the thread's earlier turns were still read."""
    from assistant.service.advisor import Advisor
    from assistant.threads.sqlite_store import SqliteThreadStore

    path = tmp_path / "conversations.sqlite"
    adv = Advisor(store=SqliteThreadStore(str(path), busy_timeout_s=0.3))
    adv.ask("Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", thread_id="t1")
    locker = sqlite3.connect(path, timeout=0.1)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        a = adv.ask("What if I use 32k context instead?", thread_id="t1")
    finally:
        locker.rollback()
        locker.close()
    assert a.tool_calls and any("not saved" in n for n in a.notices)
    assert a.tool_calls[0].args["seq_len"] == 32768 and a.tool_calls[0].args["model"] == "llama-3-8b"
    assert adv.store.load(adv_owner(), "t1").turn_count == 1  # the failed write left nothing half-done


def adv_owner():
    from assistant.threads import local_owner

    return local_owner()


def test_unwritable_data_directory_still_answers(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")  # a file where the data directory should be: nothing can be created there
    home = blocker / "home"
    p = cli(home, "ask", "--json", "Cheapest L4 per hour?")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["tool_calls"][0]["result"]["offers"]
    assert any("not writable" in n for n in d["notices"])
    q = cli(home, "prices", "--gpu", "L4", "--json")
    assert q.returncode == 0 and any("not writable" in n for n in json.loads(q.stdout)["notices"])


def test_llm_backend_down_under_load_falls_back_every_time(tmp_path):
    from assistant.service.advisor import Advisor
    from tests.assistant.test_backends import Boom

    adv = Advisor(checkpoint_path=str(tmp_path / "t.sqlite"), chat_model=Boom(responses=[]))
    qs = ["Cheapest H100 per hour?", "Can I run Llama-3-8B in FP16 on a 24 GB GPU?", "do i need nvlink?"] * 7
    with ThreadPoolExecutor(max_workers=8) as ex:
        answers = list(ex.map(lambda q: adv.ask(q), qs))
    assert len(answers) == 21 and all(a.backend.startswith("router (fallback:") and a.answer for a in answers)


def test_full_disk_degrades_one_write_not_every_history(tmp_path):
    """SQLite's page limit stands in for a full disk (same SQLITE_FULL error): the write that does not fit
    fails with a typed error and leaves nothing half-written; every thread still reads; writes resume
    once there is room again."""
    from assistant.threads import StoreUnavailable
    from assistant.threads.sqlite_store import SqliteThreadStore

    store = SqliteThreadStore(str(tmp_path / "conversations.sqlite"))
    for i in range(5):
        store.append_turn("user:alice", f"t{i}", "q", "a" * 1000, {})
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full
    with pytest.raises(StoreUnavailable, match="disk is full"):
        for _ in range(200):
            store.append_turn("user:bob", "big", "q", "b" * 20_000, {})
    assert all(store.load("user:alice", f"t{i}").turn_count == 1 for i in range(5))
    before = store.load("user:bob", "big")
    store._conn.execute(f"PRAGMA max_page_count = {pages * 100}")  # space freed
    after = store.append_turn("user:bob", "big", "q", "b", {})
    assert after.turn_count == (before.turn_count if before else 0) + 1


def test_full_disk_through_the_advisor_answers_and_says_not_saved(tmp_path):
    from assistant.service.advisor import Advisor
    from assistant.threads import StoreUnavailable
    from assistant.threads.sqlite_store import SqliteThreadStore

    store = SqliteThreadStore(str(tmp_path / "conversations.sqlite"))
    adv = Advisor(store=store)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreUnavailable):  # fill what free pages are left
        for i in range(100):
            store.append_turn("user:filler", f"f{i}", "q", "x" * 4000, {})
    a = adv.ask("Cheapest H100 per hour?", thread_id="t1")
    assert a.tool_calls and any("disk is full" in n for n in a.notices) and "not saved" in a.answer


def test_postgres_connection_killed_mid_conversation_is_retried(pg_url):
    """The server drops our connection (restart, failover, idle timeout): the next append reconnects."""
    import psycopg

    from assistant.threads.postgres_store import PostgresThreadStore

    store = PostgresThreadStore(pg_url)
    store.append_turn("user:alice", "kill-test", "q1", "a1", {})
    with psycopg.connect(pg_url, autocommit=True) as admin:
        n = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                          "current_database() AND application_name = 'gpu-advisor'").fetchone()[0]
    assert n >= 1
    rec = store.append_turn("user:alice", "kill-test", "q2", "a2", {})
    assert [t.question for t in rec.turns] == ["q1", "q2"]
    store.close()


def test_unreachable_team_database_is_a_clear_error(monkeypatch):
    """A team deployment must not silently split into per-process stores: say what to fix."""
    from assistant.threads import StoreUnavailable, open_store

    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", "postgresql://gpa:hunter2secret@127.0.0.1:1/none")
    with pytest.raises(StoreUnavailable, match="GPU_ADVISOR_DATABASE_URL") as exc:
        open_store()
    assert "hunter2secret" not in str(exc.value)  # the password is not repeated back
