"""A store factory over both back ends: SQLite in a temp dir, PostgreSQL in a schema of the run's database."""

from __future__ import annotations

import secrets
from typing import Any, Callable

import pytest

from tests.threads.services import pg_url, redis_url  # noqa: F401  (fixtures)


@pytest.fixture(params=["sqlite", "postgresql"])
def make_store(request: Any, tmp_path: Any) -> Callable[..., Any]:
    """make_store(limits=None, clock=None) -> a fresh, empty store of the parametrised back end."""
    from assistant.threads.postgres_store import PostgresThreadStore
    from assistant.threads.sqlite_store import SqliteThreadStore

    made: list[Any] = []
    url = None
    if request.param == "postgresql":
        import psycopg

        base = request.getfixturevalue("pg_url")
        schema = f"t_{secrets.token_hex(5)}"
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(f"CREATE SCHEMA {schema}")
        url = f"{base}?options=-csearch_path%3D{schema}"

    def make(limits: Any = None, clock: Any = None) -> Any:
        kw = {"clock": clock} if clock else {}
        store = (PostgresThreadStore(url, limits, **kw) if url
                 else SqliteThreadStore(str(tmp_path / "conversations.sqlite"), limits, **kw))
        made.append(store)
        return store

    make.backend = request.param  # type: ignore[attr-defined]
    make.url = url or str(tmp_path / "conversations.sqlite")  # type: ignore[attr-defined]
    yield make
    for s in made:
        s.close()
