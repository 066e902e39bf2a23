"""One rounding rule: halves round up as written, so a value and its two-decimal copy read the same."""

from assistant.engine.formatting import compact, count, number, usd


def test_a_half_rounds_up_as_written():
    # 22.494 GiB (the L4's usable memory) = 24.153 GB; the fit reports it rounded to 24.15: both read 24.2,
    # where float formatting gave 24.1 for the stored 24.1499...
    assert number(24.153) == number(24.15) == "24.2"
    assert number(0.125) == "0.13" and number(-0.125) == "-0.13"
    assert compact(79.65) == "79.7" and compact(24.0) == "24"


def test_precision_shrinks_as_the_figure_grows():
    assert [number(x) for x in (1234.5, 123.4, 12.34, 1.234)] == ["1,235", "123", "12.3", "1.23"]
    assert count(2048) == "2,048" and usd(0.0366) == "0.0366" and usd(1.294) == "1.29"
