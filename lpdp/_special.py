"""Special functions: ``scipy.special`` on first use, and the standard normal CDF without it.

Importing ``scipy.special`` costs 0.2-0.3 s, more than the rest of a command-line call such as
``lpdp account --gaussian 3x50 --for-delta 1e-6``, whose only special function is ``log Φ``. Modules use
``from lpdp import _special as special`` and call ``special.gammaln(...)``; any name other than the
functions defined here is looked up in ``scipy.special`` when first used.

:func:`ndtr` and :func:`log_ndtr` are computed from the C library's ``erfc`` (through :mod:`math`) and, in
the far lower tail, the Mills-ratio series. Their error is stated in :func:`log_ndtr` and checked against
mpmath in tests/test_special.py; the certified Gaussian profile (:mod:`lpdp._numerics`) relies on it.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

_SQRT1_2 = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Below this ``x`` the series is used: ``erfc(-x/√2)/2`` would come close to the subnormal range.
_SERIES_BELOW = -37.0
#: Largest relative error of the C library's ``erfc`` assumed by :func:`log_ndtr` (glibc states at most
#: 5 ulps on x86-64; the tests measure it against mpmath).
ERFC_ULPS = 5
#: Arrays of more elements go to scipy's vectorised ``log_ndtr`` / ``ndtr`` (measured within
#: ``4.5 u (|log Φ| + 1)`` of mpmath, inside the same bound), smaller ones and scalars stay in :mod:`math`
#: (small arrays too go to scipy once it is loaded).
SMALL = 256
#: The bound of :func:`log_ndtr`, in units of ``u (|log Φ(x)| + 1)``.
LOG_NDTR_ULPS = ERFC_ULPS + 8


def __getattr__(name: str) -> Any:
    """``scipy.special.name``, imported at the first lookup of a name not defined here, and kept here
    (a module ``__getattr__`` runs on every lookup it answers: the filter sweep's half a million
    ``special.ndtri`` calls spent 9% of their time in this function and its import statement)."""
    if name.startswith("__"):
        raise AttributeError(name)
    from scipy import special  # ~0.25 s: only the commands that need more than Φ pay for it

    value = globals()[name] = getattr(special, name)
    return value


def log_ndtr_one(x: float) -> float:
    """:func:`log_ndtr` of one Python float, in :mod:`math` (within the same bound; no numpy call)."""
    if x != x:
        return math.nan
    if x > 0.0:
        return math.log1p(-0.5 * math.erfc(x * _SQRT1_2))
    if x >= _SERIES_BELOW:
        return math.log(0.5 * math.erfc(-x * _SQRT1_2))
    if x == -math.inf:
        return -math.inf
    # Φ(x) = φ(x)/|x| (1 - 1/x² + 3/x⁴ - ...): alternating, truncation error below the first term left
    # out, 135135/x^14 < 1e-16 relative at x = -37 (and smaller beyond).
    w = 1.0 / (x * x)
    series = 1.0 + w * (-1.0 + w * (3.0 + w * (-15.0 + w * (105.0 + w * (-945.0 + w * 10395.0)))))
    return -0.5 * x * x - _LOG_SQRT_2PI - math.log(-x) + math.log(series)


def _ndtr_one(x: float) -> float:
    return 0.5 * math.erfc(-x * _SQRT1_2) if not x < _SERIES_BELOW else math.exp(log_ndtr_one(x))


_log_ndtr_array = np.frompyfunc(log_ndtr_one, 1, 1)
_ndtr_array = np.frompyfunc(_ndtr_one, 1, 1)


def _elementwise(x: Any, one: Any, many: Any, scipy_name: str) -> Any:
    """``one`` on a scalar, ``many`` (its ``frompyfunc``) on a small array, scipy's on a large one or
    whenever scipy.special is loaded already (then it costs no import, and its vectorised loop is ~50x
    faster than ``frompyfunc``: an f-DP bracket evaluates G_μ on small arrays tens of thousands of
    times). Both are within the bound of :func:`log_ndtr`."""
    loaded = sys.modules.get("scipy.special")
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return np.float64(one(float(x)))
    if loaded is not None:
        return getattr(loaded, scipy_name)(x)
    if x.size > SMALL:
        from scipy import special  # worth loading for a large array

        return getattr(special, scipy_name)(x)
    return many(x).astype(float)


def log_ndtr(x: Any) -> Any:
    """``log Φ(x)``, elementwise, for doubles (a float for a scalar, an array of floats otherwise).

    Scalars and arrays of at most :data:`SMALL` elements are computed here (no scipy import); larger
    arrays by ``scipy.special.log_ndtr``, which the tests hold to the same bound.

    Error: at most ``LOG_NDTR_ULPS · u · (|log Φ(x)| + 1)`` absolute, ``u = 2^-53``. For ``x <= 0`` it is
    ``log(erfc(z)/2)``, ``z = -x·√½``: the product with the rounded ``√½`` is within ``2 u z`` of ``-x/√2``,
    and ``|d log erfc(z)/dz| <= 2z + 2/√π`` moves the log by at most ``(4z² + 2.3 z) u = (2x² + 1.7|x|) u``,
    which is below ``6 u (|log Φ(x)| + 1)`` because ``|log Φ(x)| >= x²/2`` and ``|x| <= (x² + 1)/2``;
    ``erfc`` adds ``ERFC_ULPS`` ulps of relative error and the halving and the log one rounding each
    (``u (|log Φ| + 1)``). For ``x > 0``, ``log1p(-Φ(-x))`` errs by less than ``(ERFC_ULPS + 8) u Φ(-x)``.
    Below ``x = -37`` the Mills series: roundings of terms each below ``x²/2`` (``5 u (|log Φ| + 1)``) and a
    truncation below 1e-16 relative. Measured against mpmath (tests/test_special.py) the error is within
    ``4 u (|log Φ| + 1)``.

    Examples
    --------
    >>> from lpdp._special import log_ndtr
    >>> round(float(log_ndtr(0.0)), 12)
    -0.69314718056
    >>> [round(float(v), 6) for v in log_ndtr([-40.0, 1.0])]
    [-804.608442, -0.172754]
    """
    return _elementwise(x, log_ndtr_one, _log_ndtr_array, "log_ndtr")


def ndtr(x: Any) -> Any:
    """``Φ(x)``, elementwise (``erfc(-x/√2)/2``; ``exp`` of :func:`log_ndtr` below ``x = -37``; arrays of
    more than :data:`SMALL` elements by ``scipy.special.ndtr``). Its relative error is within the absolute
    error of :func:`log_ndtr` plus one rounding.

    Examples
    --------
    >>> from lpdp._special import ndtr
    >>> round(float(ndtr(1.0)), 12)
    0.841344746069
    """
    return _elementwise(x, _ndtr_one, _ndtr_array, "ndtr")
