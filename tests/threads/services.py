"""The real PostgreSQL and Redis on 127.0.0.1 for tests: a database / key prefix per run, dropped after.

Import the fixtures into a test module (`from tests.threads.services import pg_url, redis_url`); a test
using them skips, with the reason, when the service is not running.
"""

from __future__ import annotations

import os
import secrets
from typing import Iterator

import pytest

PG_ADMIN_URL = os.environ.get("GPU_ADVISOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("GPU_ADVISOR_TEST_REDIS", "redis://127.0.0.1:6379/0")


def _pg_admin():
    import psycopg

    return psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test run (dropped at the end)."""
    try:
        admin = _pg_admin()
    except Exception as exc:  # psycopg missing, server down, auth refused
        pytest.skip(f"PostgreSQL is not reachable at {PG_ADMIN_URL.split('@')[-1]} ({type(exc).__name__}); "
                    "start it (see README 'Deploy for a team') to run the team-deployment tests")
    name = f"gpa_test_{secrets.token_hex(6)}"
    admin.execute(f"CREATE DATABASE {name}")
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[tuple[str, str]]:
    """(url, key prefix) on the local Redis; every key under the prefix is deleted at the end."""
    try:
        import redis

        client = redis.Redis.from_url(REDIS_TEST_URL, socket_timeout=3, socket_connect_timeout=3)
        client.ping()
    except Exception as exc:
        pytest.skip(f"Redis is not reachable at {REDIS_TEST_URL} ({type(exc).__name__}); "
                    "start it to run the shared rate-limit and Slack de-duplication tests")
    prefix = f"gpa-test-{secrets.token_hex(6)}:"
    try:
        yield REDIS_TEST_URL, prefix
    finally:
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)
        client.close()
