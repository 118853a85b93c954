"""Numbers for people: every printed δ or ε is rounded toward the safe side.

A printed guarantee must stay a guarantee: δ and ε of a privacy guarantee round **up**
(:func:`format_upper`), an attack bound (the lower side of a bracket) rounds **down**
(:func:`format_lower`). The rounding is done on the exact decimal value of the double, so the printed
number is never on the wrong side, even for subnormal values. Machine-readable output (``--json``,
exports) keeps full precision and does not use these functions.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

from lpdp._validate import check_int

__all__ = ["format_upper", "format_lower"]


def _format(x: float, digits: int, rounding: str) -> str:
    digits = check_int(digits, "digits")
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = digits
        ctx.rounding = rounding
        q = (+Decimal(x)).normalize()  # unary plus rounds the exact value of x to `digits` digits
    exponent = q.adjusted()
    if -4 <= exponent < digits:
        return format(q, "f")
    sign, mantissa_digits, _ = q.as_tuple()
    text = "".join(map(str, mantissa_digits))
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{exponent:+03d}"


def format_upper(x: float, digits: int = 6) -> str:
    """``x`` with ``digits`` significant digits, rounded up: the printed value is never below ``x``.

    Use it for δ and ε of a privacy guarantee (the upper side of a bracket). The layout follows
    ``format(x, "g")``: fixed notation for exponents -4 to ``digits - 1``, scientific otherwise.

    Parameters
    ----------
    x : float
        The number to print (``inf`` and ``nan`` print as such).
    digits : int
        Significant digits (default 6).

    Returns
    -------
    str
        A decimal string whose value is >= ``x``.

    Examples
    --------
    >>> from lpdp.display import format_upper
    >>> format_upper(12.62871234), format_upper(1.0000001e-6, 3), format_upper(0.25)
    ('12.6288', '1.01e-06', '0.25')
    """
    return _format(x, digits, ROUND_CEILING)


def format_lower(x: float, digits: int = 6) -> str:
    """``x`` with ``digits`` significant digits, rounded down: the printed value is never above ``x``.

    Use it for attack bounds (the lower side of a bracket) and for anything whose safe side is below,
    such as a number of rounds a budget allows.

    Examples
    --------
    >>> from lpdp.display import format_lower
    >>> format_lower(12.62879), format_lower(1.999999e-6, 3), format_lower(float("inf"))
    ('12.6287', '1.99e-06', 'inf')
    """
    return _format(x, digits, ROUND_FLOOR)
