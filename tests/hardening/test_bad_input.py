"""At least 300 bad inputs through the Python API and the CLI: an answer or a clear error, never a traceback,
never inf/nan in an answer, the process stays up, and nothing is written outside the data directory."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.service.advisor import Advisor
from tests.hardening.bad_inputs import CURATED, new_naninf

ROOT = Path(__file__).resolve().parents[2]
_ADV = Advisor(checkpoint_path=tempfile.mkdtemp() + "/bad.sqlite")


def _ok_answer(ans, question):
    assert isinstance(ans.answer, str) and ans.answer.strip()
    assert "Traceback" not in ans.answer
    assert not new_naninf(question, ans.answer), ans.answer[:300]
    for c in ans.tool_calls:
        blob = json.dumps(c.result)
        assert "NaN" not in blob and "Infinity" not in blob


@pytest.mark.parametrize("q", CURATED, ids=[f"curated-{i}" for i in range(len(CURATED))])
def test_curated_bad_inputs_through_the_api(q):
    _ok_answer(_ADV.ask(q), q)


@settings(max_examples=220, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.text(max_size=400),
    st.text(alphabet=st.characters(min_codepoint=0x0600, max_codepoint=0x06FF), max_size=200),
    st.builds(lambda n, u: f"VRAM for a {n}B model with batch {u} on a {n} GB GPU",
              st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**12, 10**12)),
    st.builds(lambda a, b: f"cost of {a} hours on {b} H100s spot", st.floats(allow_nan=True, allow_infinity=True),
              st.integers(-10**6, 10**6)),
))
def test_random_text_and_numbers_through_the_api(q):
    _ok_answer(_ADV.ask(q), q)


def test_overlong_message_is_capped_with_a_notice():
    a = _ADV.ask("Cheapest H100 per hour? " + "x" * 100_000)
    assert a.notices and "first 4,000" in a.notices[0] and a.tool_calls


CLI_CASES = [
    ("vram", "--params-b", "nan"), ("vram", "--params-b", "-1"), ("vram", "--params-b", "1e30"),
    ("vram", "--model", "llama-3-8b", "--batch", "-3"), ("vram", "--model", "llama-3-8b", "--seq-len", "0"),
    ("vram", "--model", "A100'; DROP TABLE offers; --"), ("vram", "--model", "x" * 5000),
    ("speed", "--model", "llama-3-8b", "--gpu", "inf"), ("speed", "--params-b", "inf", "--gpu", "H100"),
    ("prices", "--max-price", "nan"), ("prices", "--gpu", "\x01\x02"), ("prices", "--limit", "-5"),
    ("cost", "--gpu", "H100", "--hours", "-1"), ("cost", "--gpu", "H100", "--hours", "1e400"),
    ("recommend", "--params-b", "0.0"), ("train-time", "--model", "llama-3-8b", "--gpu", "H100", "--epochs", "-1"),
    ("ask", ""), ("ask", "   "), ("ask", "\x1b[2J"), ("ask", "a" * 20000),
    ("guide", ""), ("catalog", "refresh", "--from", "ftp://x/y.csv"), ("models", "--bogus"), ("nonsense-command",),
]


@pytest.mark.parametrize("args", CLI_CASES, ids=[f"cli-{i}" for i in range(len(CLI_CASES))])
def test_cli_bad_inputs(args, tmp_path):
    home = tmp_path / "home"
    work = tmp_path / "cwd"
    work.mkdir()
    env = dict(os.environ, GPU_ADVISOR_HOME=str(home), HOME=str(tmp_path / "userhome"))
    p = subprocess.run([sys.executable, "-m", "assistant.main", *args], cwd=work, env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode in (0, 2), (p.returncode, p.stderr[-500:])
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    if p.returncode == 2:
        assert p.stderr.strip().startswith(("error:", "usage:"))
    out = p.stdout
    assert not re.search(r"\b(NaN|Infinity)\b", out)
    assert not list(work.iterdir()), "nothing may be written outside the data directory"
    assert not (tmp_path / "userhome").exists()
