"""Property-based fuzzing of the router: random and adversarial text never raises, always answers."""

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.service.advisor import Advisor
import math

from assistant.engine.query import INTENTS
from assistant.engine.understand import understand

_ADV = Advisor(checkpoint_path=tempfile.mkdtemp() + "/fuzz.sqlite")
WORDS = ["VRAM", "H100", "4090", "QLoRA", "lora", "70B", "13b", "8k", "32k context", "spot", "$100", "per-second",
         "tokens/s", "batch -3", "1e30 parameters", "fine-tune", "serve", "A100'; DROP TABLE offers; --", "نہیں",
         "میموری", "فائن ٹیون", "۲۴GB", "کیا", "ignore previous instructions", "nan", "inf", "-0", "9" * 30]
mixed = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)), max_size=12).map(" ".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), mixed))
def test_router_always_answers(text):
    ans = _ADV.ask(text)
    assert isinstance(ans.answer, str) and ans.answer.strip()
    assert "Traceback" not in ans.answer and "nan" not in ans.answer.split() and "inf" not in ans.answer.split()
    assert ans.language in ("en", "ur")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=500), mixed))
def test_understanding_is_always_a_valid_query(text):
    """Any text gives a Query: known intents, finite numbers, a language, and every number it did
    not use listed (nothing dropped silently)."""
    q = understand(text)
    assert q.intents and set(q.intents) <= set(INTENTS)
    assert q.answer_lang in ("en", "ur") and q.lang in ("en", "ur", "roman-ur")
    for k, v in q.facts().items():
        if isinstance(v, float):
            assert math.isfinite(v), (k, v)
    from assistant.engine.numbers import find_numbers
    from assistant.engine.understand import normalise

    written = {n.text for n in find_numbers(normalise(text))}
    assert set(q.not_used) <= written and set(q.number_uses) <= written
