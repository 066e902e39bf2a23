"""decide(): the winner of a comparison, worked by hand."""

import pytest
from pydantic import ValidationError

from tools.compare import CompareRequest, CompareSide, decide


def side(name, rate=None, usd=None, fits=True):
    return CompareSide(name=name, rate_per_s=rate, usd_per_hour=usd, fits=fits)


def test_per_dollar_weighs_rate_against_price():
    # A10G 31.2 tok/s at $1.01/h = 30.9 tok/s per $/h; L4 16.2 tok/s at $0.38/h = 42.6: the L4 wins per dollar
    d = decide(CompareRequest(sides=[side("A10G", 31.2, 1.01), side("L4", 16.2, 0.38)]))
    assert d.criterion == "per_dollar" and d.winner == "L4" and d.ranked == ["L4", "A10G"]
    # by speed the A10G wins
    assert decide(CompareRequest(sides=[side("A10G", 31.2, 1.01), side("L4", 16.2, 0.38)], criterion="speed")).winner == "A10G"


def test_a_side_without_a_price_cannot_win_per_dollar_so_speed_decides_and_says_which():
    d = decide(CompareRequest(sides=[side("RTX 4090", 44.9, None), side("A10G", 27.9, 1.01)]))
    assert d.criterion == "speed" and d.winner == "RTX 4090" and d.unpriced == ["RTX 4090"]


def test_a_side_that_does_not_fit_never_wins():
    d = decide(CompareRequest(sides=[side("T4", 30.0, 0.35, fits=False), side("L4", 16.2, 0.38)]))
    assert d.winner == "L4" and d.only_fit and d.ranked == ["L4", "T4"]


def test_within_two_percent_is_a_tie():
    d = decide(CompareRequest(sides=[side("a", 100, 1.0), side("b", 101, 1.0)]))
    assert d.winner is None and d.ranked == ["b", "a"]


def test_bad_input_is_refused():
    with pytest.raises(ValidationError):
        CompareRequest(sides=[side("a", 1, 1)])
    with pytest.raises(ValidationError):
        CompareSide(name="x", rate_per_s=float("inf"))
    with pytest.raises(ValidationError):
        CompareSide(name="x", usd_per_hour=-1)
