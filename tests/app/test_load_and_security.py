"""/ask under load (20 clients x 25 questions), the per-client rate limit, sign-in, and each security
finding of issue 19 (throttling, API description, uploads, malformed bodies, proxies, secrets, owners)."""

import httpx
import pytest

from tests.app.load import run, run_rest
from tests.threads.services import redis_url  # noqa: F401  (fixture)


def test_ask_under_load(app_url, monkeypatch):
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)  # 20 clients on one loopback address, not 20 users
    # gradio_client with one TLS context per Client: the stock one builds two per call (~50 ms CPU),
    # which on these 2 cores, shared with the server, measured the client (assistant/frontends/web/queue.py).
    r = run(app_url, clients=20, per_client=25, shared_tls=True)
    print(f"\n/ask load: {r}")
    assert r["requests"] == 500 and r["errors"] == 0
    # The target is p95 <= 1 s: measured 0.6-0.7 s by benchmarks/app_load.py on the shared 2-core
    # machine (the server alone in its process; here the 20 clients share its process). This bound
    # guards against regressions; benchmarks/run_all.py reports the measured figure.
    assert r["p95_s"] <= 3.0


def test_rest_ask_under_load(app_url, monkeypatch):
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)  # 20 clients on one loopback address, not 20 users
    r = run_rest(app_url, clients=20, per_client=25)
    print(f"\nPOST /api/ask load: {r}")
    assert r["requests"] == 500 and r["errors"] == 0
    assert r["p95_s"] <= 6.0  # regression guard; the measured p95 is reported by benchmarks/run_all.py


def test_rest_ask_contract(app_url, monkeypatch):
    import httpx

    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    ok = httpx.post(app_url + "api/ask", json={"question": "Cheapest H100 per hour?", "thread_id": "rest-c"},
                    timeout=60)
    assert ok.status_code == 200
    body = ok.json()
    assert body["thread_id"] == "rest-c" and "H100" in body["answer"]
    assert any(c["name"] == "price_query" for c in body["tool_calls"])
    for bad, needle in ((b"not json", "JSON object"), (b"[1, 2]", "JSON object"),
                        (b'{"question": "hi", "sql": "DROP TABLE offers"}', "JSON object"),
                        (b'{"question": "   "}', "empty"), (b'{"question": 42}', "must be text")):
        r = httpx.post(app_url + "api/ask", content=bad, timeout=30)
        assert r.status_code == 400 and needle in r.json()["error"], (bad, r.text)
    monkeypatch.setattr(app._LIMIT, "per_min", 6)  # a burst of one per address
    app._LIMIT.buckets.clear()
    codes = [httpx.post(app_url + "api/ask", json={"question": "Cheapest A100?"}, timeout=60).status_code
             for _ in range(3)]
    assert codes[0] == 200 and 429 in codes[1:]
    app._LIMIT.buckets.clear()


def test_rate_limit_per_client(monkeypatch):
    import app

    monkeypatch.setenv("GPU_ADVISOR_RATE_LIMIT", "6")  # 6 a minute: a burst of one
    lim = app._RateLimit()
    assert lim.allow("1.2.3.4") and not lim.allow("1.2.3.4") and lim.allow("5.6.7.8")


def test_basic_auth_when_configured(monkeypatch):
    import httpx

    import app
    from tests.app.conftest import free_port

    monkeypatch.setenv("GPU_ADVISOR_AUTH", "team:s3cret")
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    try:
        assert httpx.get(url + "config", timeout=10).status_code in (401, 403)
        with httpx.Client(timeout=10) as c:
            r = c.post(url + "login", data={"username": "team", "password": "s3cret"})
            assert r.status_code == 200
            assert c.get(url + "config").status_code == 200
        q = {"question": "Cheapest L4?"}
        assert httpx.post(url + "api/ask", json=q, timeout=30).status_code == 401
        assert httpx.post(url + "api/ask", json=q, auth=("team", "wrong"), timeout=30).status_code == 401
        assert httpx.post(url + "api/ask", json=q, auth=("team", "s3cret"), timeout=60).status_code == 200
    finally:
        demo.close()


def test_curated_bad_inputs_through_rest_ask(app_url, monkeypatch):
    """The hardening list through POST /api/ask: 200 with an answer, or 400 with a message; never a
    traceback, a 500, or inf/nan the question did not contain; the server stays up."""
    import httpx

    import app
    from tests.hardening.bad_inputs import CURATED, new_naninf

    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    with httpx.Client(timeout=60) as c:
        for q in CURATED:
            r = c.post(app_url + "api/ask", json={"question": q})
            assert r.status_code in (200, 400), (q[:80], r.status_code, r.text[:300])
            text = r.json()["answer"] if r.status_code == 200 else r.json()["error"]
            assert text.strip() and "Traceback" not in text
            assert not new_naninf(q, text), (q[:80], text[:300])
        assert c.post(app_url + "api/ask", json={"question": "Cheapest L4?"}).status_code == 200


# ---------------------------------------------------------------- issue 19: the findings, each with a test

@pytest.fixture()
def team_app(tmp_path, monkeypatch):
    """The app with sign-in on: alice with a plain password (env), bob with a scrypt hash (file)."""
    import app
    from assistant.frontends.web.security import hash_password
    from tests.app.conftest import free_port

    users = tmp_path / "users.txt"
    users.write_text(f"# team members\nbob:{hash_password('bob-pw')}\n", encoding="utf-8")
    monkeypatch.setenv("GPU_ADVISOR_AUTH", "alice:alice-pw")
    monkeypatch.setenv("GPU_ADVISOR_AUTH_FILE", str(users))
    demo = app.build_demo()
    url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
    yield url
    demo.close()


@pytest.fixture()
def fresh_throttle():
    import app

    app._THROTTLE.failures._mem.clear()
    app._LIMIT.buckets.clear()
    yield app._THROTTLE
    app._THROTTLE.failures._mem.clear()


def test_several_users_plain_and_hashed(team_app, fresh_throttle):
    q = {"question": "Cheapest L4?"}
    assert httpx.post(team_app + "api/ask", json=q, auth=("alice", "alice-pw"), timeout=60).status_code == 200
    assert httpx.post(team_app + "api/ask", json=q, auth=("bob", "bob-pw"), timeout=60).status_code == 200
    assert httpx.post(team_app + "api/ask", json=q, auth=("bob", "alice-pw"), timeout=60).status_code == 401
    with httpx.Client(timeout=10) as c:
        assert c.post(team_app + "login", data={"username": "bob", "password": "bob-pw"}).status_code == 200
        assert c.get(team_app + "config").status_code == 200


def test_login_throttled_per_client_with_retry_after(team_app, fresh_throttle):
    """Issue 19 measured 1,000 wrong passwords in 1.4 s. Now: 5 failures for one user name, then 429."""
    codes = [httpx.post(team_app + "login", data={"username": "alice", "password": f"guess{i}"}).status_code
             for i in range(7)]
    assert codes == [400] * 5 + [429] * 2
    r = httpx.post(team_app + "login", data={"username": "alice", "password": "alice-pw"})
    assert r.status_code == 429 and 0 < int(r.headers["retry-after"]) <= 300  # even the right one waits
    # the client address is limited too: 10 failures in all, whichever user names it tries
    for i in range(5):
        httpx.post(team_app + "login", data={"username": f"user{i}", "password": "x"})
    r = httpx.post(team_app + "login", data={"username": "bob", "password": "bob-pw"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    # Basic credentials on the JSON API count towards the same limit
    r = httpx.post(team_app + "api/ask", json={"question": "hi"}, auth=("carol", "x"), timeout=30)
    assert r.status_code == 429 and "retry-after" in r.headers


def test_login_throttle_per_user_and_address():
    """Issue 31: five failures on alice from five addresses no longer lock alice out everywhere."""
    from assistant.frontends.web.security import LoginThrottle

    clock = [0.0]
    t = LoginThrottle(window_s=300, per_client=10, per_user=5, clock=lambda: clock[0])
    for i in range(5):  # five addresses, one failure each, all on alice
        t.failed(f"10.0.0.{i}", "alice")
    assert t.retry_after("10.9.9.9", "alice") == 0 and t.retry_after("10.0.0.1", "alice") == 0
    for _ in range(4):  # five in all from one address: that pair waits 1 s
        t.failed("10.0.0.1", "alice")
    assert t.retry_after("10.0.0.1", "alice") == 1 and t.retry_after("10.9.9.9", "alice") == 0
    clock[0] = 1.0
    assert t.retry_after("10.0.0.1", "alice") == 0


def test_api_description_only_after_sign_in(team_app, fresh_throttle):
    page = httpx.get(team_app, timeout=10)
    assert page.status_code == 200 and "window.gradio_api_info = null;" in page.text
    assert '"api_name"' not in page.text and "named_endpoints" not in page.text
    for path in ("openapi.json", "gradio_api/openapi.json", "gradio_api/info", "config"):
        assert httpx.get(team_app + path, timeout=10).status_code in (401, 404), path
    with httpx.Client(timeout=10) as c:
        c.post(team_app + "login", data={"username": "alice", "password": "alice-pw"})
        assert "named_endpoints" in c.get(team_app).text  # signed in: the page describes the API again


def test_uploads_are_refused(app_url):
    """With auth off, issue 19 could upload a file anonymously and fetch it back; no front end needs uploads."""
    r = httpx.post(app_url + "gradio_api/upload", files={"files": ("x.html", b"<script>alert(1)</script>")})
    assert r.status_code == 403 and "turned off" in r.json()["error"]


@pytest.mark.parametrize("body, needle", [
    pytest.param(b'{"question": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested deeper", id="deep-json"),
    pytest.param(b'{"question": "cheapest \\ud800 H100"}', "surrogate", id="lone-surrogate"),
    pytest.param(b'{"question": "x", "thread_id": "' + b"a" * 70_000 + b'"}', "larger than", id="huge-body"),
    pytest.param(b"\xff\xfe{}", "not UTF-8", id="not-utf8"),
])
def test_malformed_bodies_get_400_and_save_nothing(app_url, monkeypatch, body, needle):
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    r = httpx.post(app_url + "api/ask", content=body, timeout=30)
    assert r.status_code == 400 and needle in r.json()["error"], r.text[:200]


def test_forwarded_for_is_ignored_unless_from_a_trusted_proxy(monkeypatch):
    import app
    from tests.app.conftest import free_port

    def burst(url: str) -> list[int]:
        app._LIMIT.buckets.clear()
        return [httpx.post(url + "api/ask", json={"question": "Cheapest A100?"}, timeout=60,
                           headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in range(3)]

    monkeypatch.setattr(app._LIMIT, "per_min", 6)  # a burst of one per client
    for trusted, expect_rotation_works in (("", False), ("127.0.0.1", True)):
        monkeypatch.setenv("GPU_ADVISOR_TRUSTED_PROXIES", trusted)
        demo = app.build_demo()
        url = app.launch(demo, "127.0.0.1", free_port(), block=False, quiet=True)
        try:
            codes = burst(url)
        finally:
            demo.close()
        if expect_rotation_works:  # behind a configured proxy each forwarded address is its own client
            assert codes == [200, 200, 200]
        else:  # a rotating header from an untrusted peer changes nothing
            assert codes[0] == 200 and 429 in codes[1:]
    app._LIMIT.buckets.clear()


def test_rate_limit_is_shared_through_redis(monkeypatch, redis_url):
    """Two replicas (two RateLimit objects) draw on one budget in Redis: a burst of one, then 429s."""
    from assistant.runtime.limits import RateLimit

    url, prefix = redis_url
    monkeypatch.setenv("GPU_ADVISOR_REDIS_URL", url)
    monkeypatch.setenv("GPU_ADVISOR_REDIS_PREFIX", prefix)
    monkeypatch.setenv("GPU_ADVISOR_RATE_LIMIT", "6")  # 6 a minute: burst 1, one more every 10 s
    a, b = RateLimit(), RateLimit()
    assert a.allow("198.51.100.7") and not b.allow("198.51.100.7") and not a.allow("198.51.100.7")
    assert b.allow("198.51.100.8")  # another client has its own bucket


def test_provider_error_text_is_scrubbed_before_it_reaches_a_user(tmp_path, monkeypatch):
    """Issue 19: a mock provider echoing the API key showed it in `backend`."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    from assistant.service.advisor import Advisor
    from assistant.threads.sqlite_store import SqliteThreadStore

    key = "sk-proj-4f9Qz1xLmN8pR2sT6uV0wY3a"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    class EchoKey(FakeMessagesListChatModel):
        def bind_tools(self, tools, **kw):
            return self

        def _generate(self, *a, **kw):
            raise RuntimeError(f"401 Unauthorized: Incorrect API key provided: {key}. Authorization: Bearer {key}")

    adv = Advisor(store=SqliteThreadStore(str(tmp_path / "c.sqlite")), chat_model=EchoKey(responses=[]))
    ans = adv.ask("Cheapest H100 per hour?")
    dumped = ans.model_dump_json()
    assert key not in dumped and "sk-proj-" not in dumped
    assert ans.backend.startswith("router (fallback: RuntimeError: 401 Unauthorized") and "[redacted]" in ans.backend


@pytest.mark.parametrize("text, secret", [
    pytest.param("Incorrect API key provided: sk-ant-api03-AbCdEf123456", "sk-ant-api03-AbCdEf123456", id="anthropic"),
    pytest.param("token xoxb-1234-5678-abcdefgh rejected", "xoxb-1234-5678-abcdefgh", id="slack-token"),
    pytest.param("GET https://x?api_key=abc123def456 failed", "abc123def456", id="query-key"),
    pytest.param("could not connect to postgresql://app:pa55w0rd@db:5432/x", "pa55w0rd", id="url-password"),
    pytest.param("header Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig123", "eyJhbGciOi", id="bearer"),
])
def test_scrub_secrets_shapes(text, secret):
    from assistant.frontends.web.security import scrub_secrets

    out = scrub_secrets(text)
    assert secret not in out and "[redacted]" in out


def test_api_ask_cannot_reach_a_slack_thread(app_url, monkeypatch):
    """Issue 19: /api/ask accepted slack:TEAM:CHANNEL:TS and continued a Slack DM. Owners differ now."""
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    adv = app._advisor()
    tid = "slack:T0SECRET:D0DM:1700000000.000100"
    adv.ask("Can I run Llama-3-8B in FP16 on a 24 GB GPU with 8k context?", thread_id=tid, owner="slack:T0SECRET:D0DM")
    assert httpx.get(app_url + f"api/threads/{tid}", timeout=10).status_code == 404
    r = httpx.post(app_url + "api/ask", json={"question": "What if I use 32k context instead?", "thread_id": tid},
                   timeout=60)
    assert r.status_code == 200
    assert not [c for c in r.json()["tool_calls"] if c["args"].get("model") == "llama-3-8b"]  # nothing was read
    assert adv.store.load("slack:T0SECRET:D0DM", tid).turn_count == 1  # and nothing was written there
    mine = httpx.get(app_url + f"api/threads/{tid}", timeout=10).json()  # the web caller's own thread of that name
    assert [t["question"] for t in mine["turns"]] == ["What if I use 32k context instead?"]


def test_thread_history_for_its_owner(app_url, monkeypatch):
    import app

    monkeypatch.setattr(app._LIMIT, "per_min", 0)
    first = httpx.post(app_url + "api/ask", json={"question": "Cheapest L4 per hour?"}, timeout=60).json()
    tid = first["thread_id"]
    assert len(tid) == 32  # a new id: 128 random bits
    httpx.post(app_url + "api/ask", json={"question": "and on spot?", "thread_id": tid}, timeout=60)
    d = httpx.get(app_url + f"api/threads/{tid}", timeout=10).json()
    assert d["thread_id"] == tid and [t["question"] for t in d["turns"]] == ["Cheapest L4 per hour?", "and on spot?"]
    assert d["turns"][0]["answer"] == first["answer"] and set(d["turns"][0]) == {"question", "answer", "at"}
    assert httpx.get(app_url + "api/threads/no-such-thread", timeout=10).status_code == 404


def test_team_database_down_is_a_503_with_the_fix(tmp_path, monkeypatch):
    import json

    import app

    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))  # a fresh advisor for this data directory
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", "postgresql://gpa:pw-not-shown@127.0.0.1:1/gpa")
    r = app._rest_answer({"question": "Cheapest L4?"}, "web:anonymous")
    body = json.loads(r.body)
    assert r.status_code == 503 and "GPU_ADVISOR_DATABASE_URL" in body["error"] and "pw-not-shown" not in body["error"]


def test_sign_in_throttle_is_shared_through_redis(monkeypatch, redis_url):
    """Wrong passwords sent to one replica count at the other: rotating replicas does not reset the limit."""
    from assistant.frontends.web.security import LoginThrottle

    url, prefix = redis_url
    monkeypatch.setenv("GPU_ADVISOR_REDIS_URL", url)
    monkeypatch.setenv("GPU_ADVISOR_REDIS_PREFIX", prefix + "login:")
    replica_a, replica_b = LoginThrottle(per_client=10, per_user=5), LoginThrottle(per_client=10, per_user=5)
    for i in range(6):
        (replica_a if i % 2 else replica_b).failed("203.0.113.9", "alice")
    assert replica_a.retry_after("203.0.113.9", "alice") == 2  # the 6th failure: 2 s, counted across replicas
    assert replica_b.retry_after("203.0.113.99", "alice") == 0 and replica_b.retry_after("203.0.113.9", "bob") == 0
    replica_b.succeeded("alice", "203.0.113.9")  # a right password clears the pair everywhere
    assert replica_a.retry_after("203.0.113.9", "alice") == 0


def test_hash_command_and_bad_auth_entries(monkeypatch, capsys):
    import io

    from assistant.frontends.web import security as web_security

    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse\n"))
    assert web_security.main(["hash"]) == 0
    hashed = capsys.readouterr().out.strip()
    assert hashed.startswith("scrypt$16384$8$1$") and "correct horse" not in hashed
    monkeypatch.setenv("GPU_ADVISOR_AUTH", f"carol:{hashed}")
    users = web_security.Users.from_env()
    assert users.check("carol", "correct horse") and not users.check("carol", "correct horse ")
    monkeypatch.setenv("GPU_ADVISOR_AUTH", "just-a-password")
    with pytest.raises(web_security.AuthConfigError, match="user:password"):
        web_security.Users.from_env()
