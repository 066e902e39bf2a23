"""Issue 31, defect 2: sign-in spans replicas and follows the users file. A UI session from one replica
was refused by the other (401); removing a user from GPU_ADVISOR_AUTH_FILE did not end their UI
sign-in, and a user added to it could not sign in until a restart."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from tests.hardening.conftest import free_port


@pytest.fixture()
def two_replicas(monkeypatch, tmp_path):
    import app

    users = tmp_path / "users.txt"
    users.write_text("alice:alice-pw\nbob:bob-pw\n", encoding="utf-8")
    monkeypatch.delenv("GPU_ADVISOR_AUTH", raising=False)
    monkeypatch.setenv("GPU_ADVISOR_AUTH_FILE", str(users))
    monkeypatch.setenv("GPU_ADVISOR_SESSION_SECRET", "a-shared-secret-of-the-deployment-0123456789")
    app._THROTTLE.failures._mem.clear()
    demos = [app.build_demo(), app.build_demo()]
    urls = [app.launch(d, "127.0.0.1", free_port(), block=False, quiet=True) for d in demos]
    yield urls, users
    for d in demos:
        d.close()


def _edit(path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a new modification time even within one tick


def test_a_session_from_one_replica_is_accepted_by_the_other(two_replicas):
    (a, b), _ = two_replicas
    with httpx.Client(timeout=30) as c:
        assert c.post(a + "login", data={"username": "alice", "password": "alice-pw"}).status_code == 200
        assert c.get(a + "config").status_code == 200
        assert c.get(b + "config").status_code == 200  # no sticky sessions needed


def test_a_forged_or_altered_session_is_refused(two_replicas):
    (a, b), _ = two_replicas
    with httpx.Client(timeout=30) as c:
        c.post(a + "login", data={"username": "alice", "password": "alice-pw"})
        for name, value in list(c.cookies.items()):
            user, dot, rest = value.partition(".")
            c.cookies.set(name, "Ym9i" + dot + rest)  # the same signature, bob's name
        assert c.get(b + "config").status_code == 401


def test_a_removed_user_is_refused_by_both_and_a_new_one_signs_in(two_replicas):
    (a, b), users = two_replicas
    with httpx.Client(timeout=30) as bob, httpx.Client(timeout=30) as carol:
        assert bob.post(a + "login", data={"username": "bob", "password": "bob-pw"}).status_code == 200
        assert bob.get(b + "config").status_code == 200
        _edit(users, "alice:alice-pw\ncarol:carol-pw\n")
        time.sleep(0.1)
        assert bob.get(a + "config").status_code == 401 and bob.get(b + "config").status_code == 401
        assert carol.post(b + "login", data={"username": "carol", "password": "carol-pw"}).status_code == 200
        assert carol.get(a + "config").status_code == 200


def test_a_changed_password_ends_the_old_sessions(two_replicas):
    (a, b), users = two_replicas
    with httpx.Client(timeout=30) as c:
        c.post(a + "login", data={"username": "alice", "password": "alice-pw"})
        _edit(users, "alice:new-pw\nbob:bob-pw\n")
        assert c.get(b + "config").status_code == 401
