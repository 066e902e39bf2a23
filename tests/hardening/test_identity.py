"""Issue 31, defect 1: owner keys are injective. Names that the old `[A-Za-z0-9_.@-]` filter folded
together ('علی' and 'حسن' both became 'user:___') are distinct owners; a name is read as Unicode NFC,
case-folded, so 'Alice' and 'ALICE' are one user, and the users file may not list both."""

from __future__ import annotations

import unicodedata

import pytest

from assistant.threads import local_owner, web_owner
from assistant.threads.base import check_key

COLLIDING_TODAY = [("علی", "حسن"), ("José", "Jos_"), ("a b", "a_b"), ("zoë", "zo_"), ("李", "王")]


@pytest.mark.parametrize("a, b", COLLIDING_TODAY, ids=[f"{a}-vs-{b}" for a, b in COLLIDING_TODAY])
def test_two_names_that_collided_get_two_owners(a, b):
    assert web_owner(a) != web_owner(b)
    check_key(web_owner(a), "t")  # a valid store key: the store needs no change of alphabet
    check_key(web_owner(b), "t")


def test_owner_is_nfc_and_casefold_and_plain_names_keep_their_key():
    decomposed = unicodedata.normalize("NFD", "José")
    assert web_owner(decomposed) == web_owner("José") == web_owner("JOSÉ")
    assert web_owner("Alice") == web_owner("alice") == "user:alice"  # ASCII names: the key they had (lower-cased)
    assert web_owner("bob.smith@example.com") == "user:bob.smith@example.com"
    assert web_owner(None) == "web:anonymous"


def test_encoding_is_lossless():
    from assistant.threads import owner_name

    for name in ("علی", "حسن", "a b", "李", "x" * 200, "user:evil"):
        assert owner_name(web_owner(name)) == unicodedata.normalize("NFC", name).casefold()


def test_local_owner_is_lossless_too(monkeypatch):
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "علی")
    first = local_owner()
    monkeypatch.setattr(getpass, "getuser", lambda: "حسن")
    assert local_owner() != first


def test_two_users_whose_names_collided_do_not_read_each_other(tmp_path):
    from assistant.threads.sqlite_store import SqliteThreadStore

    s = SqliteThreadStore(str(tmp_path / "c.sqlite"))
    s.append_turn(web_owner("علی"), "plan", "Can I run Llama-3-8B on a 24 GB GPU?", "Yes, 18.5 GB.", {})
    assert s.load(web_owner("حسن"), "plan") is None
    assert s.load(web_owner("علی"), "plan") is not None


def test_users_file_matches_names_by_the_same_rule(monkeypatch, tmp_path):
    from assistant.frontends.web.security import AuthConfigError, Users

    monkeypatch.setenv("GPU_ADVISOR_AUTH", "علی:pw1,حسن:pw2,Alice:pw3")
    monkeypatch.delenv("GPU_ADVISOR_AUTH_FILE", raising=False)
    users = Users.from_env()
    assert users.check("علی", "pw1") and not users.check("علی", "pw2") and users.check("حسن", "pw2")
    assert users.check("ALICE", "pw3")  # the same user as 'Alice'
    monkeypatch.setenv("GPU_ADVISOR_AUTH", "alice:pw1,ALICE:pw2")
    with pytest.raises(AuthConfigError, match="twice"):
        Users.from_env()


def test_a_hash_mangled_by_the_shell_is_refused_not_taken_as_a_password(monkeypatch):
    """Issue 31 (10): "scrypt$16384$8$1$salt$hash" in double quotes loses its $ parts and became a plain password."""
    import subprocess

    from assistant.frontends.web.security import AuthConfigError, Users, hash_password

    hashed = hash_password("pw")
    mangled = subprocess.run(["bash", "-c", f'echo "{hashed}"'], capture_output=True, text=True).stdout.strip()
    assert mangled != hashed
    monkeypatch.delenv("GPU_ADVISOR_AUTH_FILE", raising=False)
    monkeypatch.setenv("GPU_ADVISOR_AUTH", f"carol:{mangled}")
    with pytest.raises(AuthConfigError, match="single quotes"):
        Users.from_env()
    monkeypatch.setenv("GPU_ADVISOR_AUTH", f"carol:{hashed}")
    assert Users.from_env().check("carol", "pw")


def test_a_plain_entry_costs_the_same_scrypt_as_a_hashed_one(monkeypatch):
    """Issue 31 (10): a wrong password took 11 ms for a plain entry and 140-160 ms for a hashed one."""
    import hashlib

    from assistant.frontends.web.security import Users, hash_password

    calls = []
    real = hashlib.scrypt
    monkeypatch.setattr(hashlib, "scrypt", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    users = Users({"plain": "pw", "hashed": hash_password("pw")})
    for who in ("plain", "hashed", "unknown"):
        calls.clear()
        assert not users.check(who, "wrong")
        assert len(calls) == 1, who
