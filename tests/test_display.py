"""Printed numbers round toward the safe side: checked with exact rational arithmetic."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lpdp import ParameterError
from lpdp.display import format_lower, format_upper

finite = st.floats(allow_nan=False, allow_infinity=False)


def _unit(x: float, digits: int) -> Fraction:
    """One unit in the last printed digit of |x|."""
    e = math.floor(math.log10(abs(Fraction(x)))) if x else 0
    # log10 of a float can be off by one at exact powers of ten: take the larger unit (weaker bound)
    return Fraction(10) ** (e + 1 - digits + 1)


@given(finite, st.integers(1, 17))
def test_upper_is_never_below_and_lower_never_above(x, digits):
    up, lo = format_upper(x, digits), format_lower(x, digits)
    assert Fraction(lo) <= Fraction(x) <= Fraction(up)
    assert float(lo) <= x <= float(up)  # also once read back as a double
    if x != 0:
        assert Fraction(up) - Fraction(lo) <= _unit(x, digits)
    for text in (up, lo):
        mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        assert len(mantissa) <= digits


def test_issue_example_and_layout():
    # 12.6287 printed for an ε whose δ is 1.000137e-6 > 1e-6: the safe print of ε is above it
    assert format_upper(12.62871) == "12.6288" and format_lower(12.62871) == "12.6287"
    assert format(12.62871, ".6g") == "12.6287"  # what round-to-nearest printed
    assert format_upper(0.5) == "0.5" and format_upper(3.0) == "3"
    assert format_upper(1.5e-7, 3) == "1.5e-07" and format_upper(2e20) == "2e+20"
    assert format_upper(5e-324) == "4.94066e-324" and format_lower(5e-324) == "4.94065e-324"
    assert (format_upper(math.inf), format_lower(-math.inf), format_upper(math.nan)) == ("inf", "-inf", "nan")
    assert format_upper(-2.5e-5, 2) == "-2.5e-05" and format_lower(-1.01, 2) == "-1.1"


@pytest.mark.parametrize("digits", [0, -1, 2.5, "3"])
def test_bad_digits(digits):
    with pytest.raises(ParameterError, match="digits"):
        format_upper(1.0, digits)
