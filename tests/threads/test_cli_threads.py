"""`gpu-advisor thread list | show | delete` over the local user's threads (turns written through the store)."""

from __future__ import annotations

import json

from assistant import main as cli
from assistant.threads import local_owner, open_store


def _seed(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    monkeypatch.delenv("GPU_ADVISOR_DATABASE_URL", raising=False)
    store = open_store()
    store.append_turn(local_owner(), "plan", "Can I run Llama-3-8B on a 24 GB GPU?", "Yes, 18.5 GB.", {})
    store.append_turn(local_owner(), "plan", "and at 32k context?", "Yes, 22.1 GB.", {})
    store.append_turn("user:alice", "alice-only", "secret plan", "...", {})
    store.close()


def test_show_json_has_the_documented_shape(monkeypatch, tmp_path, capsys):
    _seed(monkeypatch, tmp_path)
    assert cli.main(["thread", "show", "plan", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["thread_id"] == "plan" and [t["question"] for t in d["turns"]] == [
        "Can I run Llama-3-8B on a 24 GB GPU?", "and at 32k context?"]
    assert set(d["turns"][0]) == {"question", "answer", "at"}


def test_list_and_delete_see_only_the_local_users_threads(monkeypatch, tmp_path, capsys):
    _seed(monkeypatch, tmp_path)
    assert cli.main(["thread", "list", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [t["thread_id"] for t in d["threads"]] == ["plan"] and d["threads"][0]["turn_count"] == 2
    assert cli.main(["thread", "show", "alice-only"]) == 1  # another owner's thread is unknown here
    assert "no thread 'alice-only'" in capsys.readouterr().err
    assert cli.main(["thread", "delete", "alice-only"]) == 1
    assert cli.main(["thread", "delete", "plan"]) == 0
    assert cli.main(["thread", "show", "plan"]) == 1
    assert open_store().load("user:alice", "alice-only").turn_count == 1
