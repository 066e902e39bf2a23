"""Refresh inputs: bad files fail fast and small, dates come from the source (or stay unknown), SkyPilot's
published catalog is fetched per provider (tested against a loopback HTTP server serving a catalog tree).

The 200 MB cases are measured in benchmarks/refresh_catalog.py; here the same inputs are a few MB."""

import datetime as dt
import email.utils
import http.server
import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from knowledge.price_db import CatalogError, PriceDb
from knowledge.prices.reader import BadFile, iter_rows
from tools.errors import InvalidInput
from tools.schemas import PriceQuery

ROWS = Path(__file__).resolve().parents[1] / "data" / "skypilot_rows"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone,GpuInfo\n"


def _first_error(path: Path) -> BadFile:
    with pytest.raises(BadFile) as exc:
        for _ in iter_rows(path, str(path)):
            pass
    return exc.value


def test_random_bytes_are_binary(tmp_path):
    f = tmp_path / "vms.csv"
    f.write_bytes(random.Random(1).randbytes(4 << 20))
    err = _first_error(f)
    assert err.line == 0 and "binary" in err.message


def test_text_without_a_catalog_header_stops_at_line_1(tmp_path):
    f = tmp_path / "vms.csv"
    rnd = random.Random(2)
    words = ["alpha", "beta", "gamma", "delta", "price", "region", "42"]
    with open(f, "w") as fh:
        for _ in range(100_000):
            fh.write(" ".join(rnd.choice(words) for _ in range(8)) + "\n")
    err = _first_error(f)
    assert err.line == 1 and "missing column(s) InstanceType" in err.message


def test_a_huge_line_and_a_bad_byte_later_name_their_line(tmp_path):
    f = tmp_path / "vms.csv"
    f.write_text(HEADER + "g6.xlarge,L4,1,4,16,0.8,,us-west-2,a,\n" + "x" * (2 << 20) + "\n")
    err = _first_error(f)
    assert err.line == 3 and "longer than 1 MiB" in err.message
    f.write_bytes((HEADER + "g6.xlarge,L4,1,4,16,0.8,,us-west-2,a,\n" * 3).encode() + b"g6,L4,\xff\xfe,4\n")
    err = _first_error(f)
    assert err.line == 5 and "not UTF-8" in err.message


def test_bad_inputs_through_refresh_change_nothing(tmp_path):
    db = PriceDb(tmp_path / "home" / "prices.duckdb")
    db.ensure()
    snapshot = db.path.read_bytes()
    f = tmp_path / "aws" / "vms.csv"
    f.parent.mkdir()
    f.write_bytes(os.urandom(1 << 20))
    with pytest.raises(CatalogError, match="binary data"):
        db.refresh([str(f)])
    assert db.path.read_bytes() == snapshot


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "v8"
    for p in ("aws", "cudo"):
        shutil.copytree(ROWS / p, tree / p)
    return tree


def test_git_commit_date_is_the_source_date(tmp_path):
    tree = _tree(tmp_path)
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-03-04T12:00:00Z", GIT_COMMITTER_DATE="2026-03-04T12:00:00Z",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "catalog"]):
        subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True)
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
    db.ensure()
    rep = db.refresh([str(tree)])
    assert rep.dates["aws"] == {"as_of": "2026-03-04", "date_from": "git commit date of the file"}
    res = db.query(PriceQuery(provider="aws"), None)
    assert res.as_of == "2026-03-04" and "89 days old" in res.data_note and res.stale  # 2026-03-04 -> 06-01
    src = next(s for s in db.info()["sources"] if s["provider"] == "aws")
    assert src["date_from"] == "git commit date of the file"


@pytest.mark.parametrize("bad, needle", [("2026-13-01", "YYYY-MM-DD"), ("2099-01-01", "no later than today")])
def test_as_of_is_validated(tmp_path, bad, needle):
    db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
    db.ensure()
    with pytest.raises(InvalidInput, match=needle):
        db.refresh([str(_tree(tmp_path))], as_of=bad)


class _Server:
    """A loopback HTTP server over a folder; `fail` maps a path prefix to an HTTP status or 'slow'."""

    def __init__(self, root: Path, fail: dict[str, object] | None = None):
        fail = fail or {}

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=str(root), **k)

            def do_GET(self):  # noqa: N802
                for prefix, what in fail.items():
                    if self.path.startswith(prefix):
                        if what == "slow":  # past the client's timeout; then hang up without a reply
                            time.sleep(3)
                            self.close_connection = True
                            return
                        else:
                            self.send_error(int(what))
                            return
                super().do_GET()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "srv"
    tree = root / "catalogs" / "v8"
    for p in ("aws", "azure", "gcp", "vast", "cudo"):
        shutil.copytree(ROWS / p, tree / p)
    stamp = dt.datetime(2026, 5, 30, 8, 0, tzinfo=dt.timezone.utc).timestamp()
    os.utime(tree / "aws" / "vms.csv", (stamp, stamp))  # SimpleHTTPRequestHandler sends it as Last-Modified
    return root


def test_published_catalog_fetched_per_provider(tmp_path, served):
    srv = _Server(served)
    try:
        db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
        db.ensure()
        lines = []
        rep = db.refresh(None, catalog_url=srv.url + "/catalogs/v8", progress=lines.append, timeout_s=5)
    finally:
        srv.close()
    assert set(rep.per_provider) == {"aws", "azure", "gcp", "vast", "cudo"}
    assert rep.dates["aws"] == {"as_of": "2026-05-30", "date_from": "Last-Modified header of the URL"}
    assert any(s["why"].endswith("(HTTP 404)") and "/lambda/vms.csv" in s["file"] for s in rep.skipped)
    assert any(line.startswith("[1/") and "fetching" in line for line in lines)
    assert db.query(PriceQuery(provider="aws", region="us-east-1"), None).offers[0].spot_zone == "use1-atl2-az1"


@pytest.mark.parametrize("fail, needle", [({"/catalogs/v8/gcp/": 500}, "HTTP 500"),
                                          ({"/catalogs/v8/azure/": "slow"}, "timed out")])
def test_a_failed_fetch_leaves_the_old_catalog(tmp_path, served, fail, needle):
    srv = _Server(served, fail)
    try:
        db = PriceDb(tmp_path / "home" / "prices.duckdb", today=dt.date(2026, 6, 1))
        db.ensure()
        snapshot = db.path.read_bytes()
        with pytest.raises(CatalogError, match=needle):
            db.refresh(None, catalog_url=srv.url + "/catalogs/v8", timeout_s=1)
        assert db.path.read_bytes() == snapshot
    finally:
        srv.close()


def test_last_modified_header_parses():
    stamp = email.utils.format_datetime(dt.datetime(2026, 5, 30, tzinfo=dt.timezone.utc), usegmt=True)
    assert email.utils.parsedate_to_datetime(stamp).date() == dt.date(2026, 5, 30)
