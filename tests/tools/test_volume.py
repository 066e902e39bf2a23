"""A daily serving volume against one copy's throughput (tools.volume), numbers worked by hand."""

import pytest

from tools.cost import HOURS_PER_MONTH
from tools.volume import serving_volume


def test_two_million_tokens_a_day_at_2400_tokens_per_second():
    # 2,000,000 / (2,400 x 3,600) = 0.2315 h a day; one copy keeps up; 730 h a month = 30.417 days
    v = serving_volume(2_000_000, 2400.0, 1.29, HOURS_PER_MONTH)
    assert v.busy_hours_per_day == pytest.approx(0.23148, rel=1e-4)
    assert v.copies_needed == 1 and v.days_per_month == pytest.approx(30.4167, rel=1e-4)
    assert v.usd_per_month_busy_hours == pytest.approx(0.23148 * 30.4167 * 1.29, rel=1e-4)  # $9.08
    assert v.usd_per_month_always_on == pytest.approx(1.29 * 730)  # $941.70
    # $941.70 over 2M x 30.417 = 60.83M tokens: $15.48 per million
    assert v.usd_per_million_own_tokens_always_on == pytest.approx(941.7 / 60.8333, rel=1e-4)


def test_a_volume_beyond_one_copy_needs_more_copies():
    # 500M tokens a day at 2,000 tokens/s = 69.4 busy hours: 3 copies running all day
    v = serving_volume(500e6, 2000.0, 2.0, HOURS_PER_MONTH)
    assert v.busy_hours_per_day == pytest.approx(69.444, rel=1e-4) and v.copies_needed == 3
    assert v.usd_per_month_always_on == pytest.approx(3 * 2.0 * 730)


def test_no_price_leaves_the_costs_unknown():
    v = serving_volume(1e6, 100.0, None, HOURS_PER_MONTH)
    assert v.usd_per_month_busy_hours is None and v.usd_per_month_always_on is None and v.copies_needed == 1


@pytest.mark.parametrize("tokens, rate", [(0, 100.0), (1e6, 0.0), (float("inf"), 10.0), (-5, 10.0)])
def test_a_volume_or_rate_that_is_not_positive_is_refused(tokens, rate):
    with pytest.raises(ValueError):
        serving_volume(tokens, rate, 1.0, HOURS_PER_MONTH)
