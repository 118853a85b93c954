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
from html import escape
from typing import Any

import numpy as np

from lpdp._validate import check_int

__all__ = ["format_upper", "format_lower", "region_html", "guarantee_html"]


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


def _table(caption: str, header: tuple[str, ...], rows: list[tuple[str, ...]], note: str = "") -> str:
    cells = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    foot = f"<p><small>{escape(note)}</small></p>" if note else ""
    return (f"<table><caption>{escape(caption)}</caption><thead><tr>{cells}</tr></thead>"
            f"<tbody>{body}</tbody></table>{foot}")


def region_html(region: Any, max_rows: int = 8) -> str:
    """A small HTML table of a :class:`~lpdp.region.PrivacyRegion` (its tight (ε, δ) pairs, at most
    ``max_rows``, each rounded up, so every row is a valid guarantee), for notebooks.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> html = region_html(PrivacyRegion.from_constraints([(1.3, 0.0), (0.5, 0.2)]))
    >>> "<td>0.5</td><td>0.200001</td>" in html
    True
    """
    loss = np.sort(region.losses[region.losses >= 0])
    eps = loss if loss.size else np.array([0.0])
    shown = eps if eps.size <= max_rows else np.concatenate([eps[: max_rows // 2], eps[-(max_rows // 2):]])
    deltas = np.atleast_1d(region.delta(shown))
    rows = [(format_upper(float(e)), format_upper(float(d))) for e, d in zip(shown, deltas, strict=True)]
    if eps.size > max_rows:
        rows.insert(max_rows // 2, ("…", "…"))
    return _table(f"PrivacyRegion: {len(region)} edges, {eps.size} tight (ε, δ) pairs, "
                  f"area {format_upper(region.area(), 4)}", ("ε", "δ(ε)"), rows,
                  "ε and δ rounded up: each row is a valid guarantee.")


def guarantee_html(guarantee: Any, epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0),
                   deltas: tuple[float, ...] = (1e-3, 1e-6, 1e-9)) -> str:
    """A small HTML table of a :class:`~lpdp.accountant.Guarantee`: δ at a few ε and ε at a few δ, the
    guarantee (upper side) rounded up and the attack bound (lower side) rounded down, for notebooks.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> "theorem1" in guarantee_html(Accountant().compose(pure(0.5), 3).compose(pure(1.0)).guarantee())
    True
    """
    d_lo, d_hi = guarantee.delta(list(epsilons))
    e_lo, e_hi = guarantee.epsilon(list(deltas))
    rows = [(f"δ at ε = {e:g}", format_upper(float(hi)), format_lower(float(lo)))
            for e, lo, hi in zip(epsilons, d_lo, d_hi, strict=True)]
    rows += [(f"ε at δ = {d:g}", format_upper(float(hi)), format_lower(float(lo)))
             for d, lo, hi in zip(deltas, e_lo, e_hi, strict=True)]
    exact = guarantee.exact
    return _table(f"Guarantee ({'exact' if exact else 'certified bracket'}, route "
                  f"{guarantee.route})", ("query", "guarantee (upper)", "attack bound (lower)"),
                  rows, "Guarantees rounded up, attack bounds rounded down.")
