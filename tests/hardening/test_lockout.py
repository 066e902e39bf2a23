"""Issue 31, defect 3: nobody can lock others out. Ten requests without credentials from one address
locked every user of that address out for 300 s; five wrong passwords for a user name locked that
user out everywhere. Now failed sign-ins count per (user, address) with a growing back-off, a request
without credentials is no failed sign-in, and a pair that signed in before is not held by its
address's count of other names' failures."""

from __future__ import annotations

import httpx
import pytest

from assistant.frontends.web.security import LoginThrottle


def throttle(clock: list[float]) -> LoginThrottle:
    return LoginThrottle(window_s=300, per_client=10, per_user=5, clock=lambda: clock[0])


def test_wrong_passwords_elsewhere_do_not_lock_a_user_out():
    clock = [0.0]
    t = throttle(clock)
    for i in range(8):  # an attacker at one address guesses alice's password
        t.failed("203.0.113.66", "alice")
    assert t.retry_after("203.0.113.66", "alice") > 0  # the attacker waits
    assert t.retry_after("198.51.100.7", "alice") == 0  # alice, at her own address, does not


def test_back_off_grows_per_failure_and_is_capped():
    clock = [0.0]
    t = throttle(clock)
    waits = []
    for _ in range(16):
        t.failed("203.0.113.66", "alice")
        waits.append(t.retry_after("203.0.113.66", "alice"))
    assert waits[:4] == [0, 0, 0, 0]  # four free mistakes
    assert waits[4:9] == [1, 2, 4, 8, 16]
    assert max(waits) == 300 and waits[-1] == 300
    clock[0] += 300
    assert t.retry_after("203.0.113.66", "alice") == 0


def test_an_address_spraying_names_does_not_hold_a_user_who_signed_in_there_before():
    clock = [0.0]
    t = throttle(clock)
    t.succeeded("alice", "10.0.0.8")  # alice works behind the office NAT
    for i in range(12):  # someone on the same NAT tries many names
        t.failed("10.0.0.8", f"user{i}")
    assert t.retry_after("10.0.0.8", "newcomer") > 0  # new names from that address wait
    assert t.retry_after("10.0.0.8", "alice") == 0  # alice does not


def test_requests_without_credentials_do_not_lock_out_signed_in_users(monkeypatch):
    import app
    from tests.hardening.conftest import free_port

    monkeypatch.setenv("GPU_ADVISOR_AUTH", "alice:alice-pw")
    monkeypatch.delenv("GPU_ADVISOR_AUTH_FILE", raising=False)
    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    app._THROTTLE.failures._mem.clear()
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        for _ in range(12):
            assert httpx.post(url + "api/ask", json={"question": "hi"}, timeout=30).status_code == 401
            assert httpx.get(url + "api/threads/x", timeout=30).status_code == 401
        r = httpx.post(url + "api/ask", json={"question": "Cheapest L4?"}, auth=("alice", "alice-pw"), timeout=60)
        assert r.status_code == 200, r.text
        # five wrong passwords for alice from here: this address waits, with Retry-After
        for i in range(5):
            httpx.post(url + "login", data={"username": "alice", "password": f"guess{i}"}, timeout=30)
        r = httpx.post(url + "login", data={"username": "alice", "password": "guess"}, timeout=30)
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    finally:
        demo.close()
        app._THROTTLE.failures._mem.clear()


@pytest.mark.parametrize("who", ["alice", "ALICE"])
def test_pairs_count_by_the_canonical_name(who):
    clock = [0.0]
    t = throttle(clock)
    for _ in range(6):
        t.failed("203.0.113.66", "alice")
    assert t.retry_after("203.0.113.66", who) > 0


def test_requests_without_credentials_do_not_spend_a_signed_in_users_budget(monkeypatch):
    import app
    from tests.hardening.conftest import free_port

    monkeypatch.setenv("GPU_ADVISOR_AUTH", "alice:alice-pw")
    monkeypatch.delenv("GPU_ADVISOR_AUTH_FILE", raising=False)
    monkeypatch.setattr(app._LIMIT, "per_min", 6)  # a burst of one
    app._LIMIT.buckets.clear()
    app._THROTTLE.failures._mem.clear()
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        anon = [httpx.get(url + "api/threads/x", timeout=30).status_code for _ in range(3)]
        assert anon[0] == 401 and anon[1:] == [429, 429]  # this address's budget is spent
        alice = [httpx.get(url + "api/threads/x", auth=("alice", "alice-pw"), timeout=30) for _ in range(2)]
        assert alice[0].status_code == 404  # her own budget: not locked out by the address
        assert alice[1].status_code == 429 and "retry-after" in alice[1].headers
    finally:
        demo.close()
        app._LIMIT.buckets.clear()
        app._THROTTLE.failures._mem.clear()
