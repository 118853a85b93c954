"""The two sides of a :class:`~lpdp.accountant.Guarantee` (:class:`Profile`, :class:`Larger`) and the curves
they draw: the privacy profile δ(ε), the trade-off curve β(α) and the true-positive rate of a membership
test at given false-positive rates (:mod:`lpdp.curves` re-exports them and adds ε against the count, which
needs the router).

Every curve has two sides, like the guarantee it comes from. ``upper`` and ``lower`` bound the true
curve of the composition: for δ(ε) and ε(δ) the upper side is the valid guarantee; for the trade-off
curve β(α) the *lower* side is the guarantee (no test has a smaller type II error β at type I error α)
and the upper side an attack bound (the composed dominating pairs have a test doing at least that
well); the TPR = 1 − β of a test at FPR = α swaps them again.

How each side is obtained:

* **Gaussian route** (``G_μ``): the closed form ``β(α) = Φ(Φ⁻¹(1 − α) − μ)`` (Dong, Roth and Su, 2022),
  widened outward by 1e-12 relative (the error of ``ndtr``/``ndtri`` at ``|z| <= 40`` is below 2000 ulps).
* **Exact finite routes** (a :class:`~lpdp.region.PrivacyRegion`, or the larger δ of a pair composed in
  both orders): the symmetric region is ``∩_{ε>=0} R(ε, δ(ε))`` and, for a polygon, only the ε at its
  losses (and 0) are tight, so ``β(α) = max_ε f_{ε,δ(ε)}(α)`` over those ε *is* the curve (widened by
  8 ulps of the unit square for the floating-point sums), where
  ``f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{-ε}(1 − δ − α))`` (the paper's trade-off function of one
  (ε, δ) constraint).
* **Certified routes**: on a grid ``0 = ε_0 < … < ε_m`` the guarantee side is
  ``max_j f_{ε_j, δ_hi(ε_j)}`` (each term is below the truth, since the pair meets every
  ``(ε_j, δ(ε_j))`` and ``δ_hi >= δ``). The attack side bounds the supremum over every ε in
  ``[ε_j, ε_{j+1}]`` from above using that δ(ε) decreases and e^ε increases there:
  ``max(0, 1 − δ_lo(ε_{j+1}) − e^{ε_j} α, e^{-ε_j}(1 − δ_lo(ε_{j+1}) − α))``, and beyond ``ε_m`` by
  ``max(0, 1 − e^{ε_m} α, e^{-ε_m}(1 − α))``. An interval is split while its bound exceeds the values
  at the grid points by more than ``tol / 2``; the distance between the two sides is then the engine's
  own δ bracket plus at most that, measured (:attr:`Curve.width`), not estimated.

Examples
--------
>>> from lpdp import Accountant
>>> from lpdp.sides import tpr
>>> from lpdp.mechanisms import GaussianMechanism
>>> g = Accountant().compose(GaussianMechanism(2.0), 4).guarantee()       # G_1
>>> c = tpr(g, [1e-3])
>>> round(float(c.lower[0]), 6), round(float(c.upper[0]), 6)
(0.018298, 0.018298)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from lpdp._search import bisect
from lpdp._validate import check_int, check_positive, each_value
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction

__all__ = ["Profile", "Larger", "Curve", "profile", "profile_range", "tradeoff", "tpr", "of_guarantee",
           "GUARANTEE_KINDS", "DELTA_MIN", "FPRS", "FIGURE_FPRS"]


_U = np.finfo(float).eps / 2
#: Relative widening of the Gaussian closed form (ndtr/ndtri at |z| <= 40).
_GAUSS_RTOL = 1e-12
#: Absolute widening of an exact finite curve (sums of a few terms of size <= 1).
_FINITE_ATOL = 8 * _U
#: δ at which the automatic range of a profile stops (and where it counts δ as having left 1).
DELTA_MIN = 1e-12
_NEAR_ONE = 1e-9


class Profile(Protocol):
    """One side of a guarantee: ``δ(ε)`` (vectorised) and the smallest ``ε`` with ``δ(ε) <= delta``."""

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray: ...

    def epsilon(self, delta: float) -> float: ...


@dataclass(frozen=True)
class Larger:
    """The larger δ of two profiles (a pair composed in both orders)."""

    first: Profile
    second: Profile

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        return np.maximum(self.first.delta(epsilon), self.second.delta(epsilon))

    @each_value
    def epsilon(self, delta: float) -> float:
        return max(float(self.first.epsilon(delta)), float(self.second.epsilon(delta)))


@dataclass(frozen=True)
class Curve:
    """Both sides of one curve of a guarantee, on the points ``x``.

    Attributes
    ----------
    kind : str
        ``"profile"`` (δ against ε), ``"tradeoff"`` (β against α), ``"tpr"`` (TPR against FPR) or
        ``"budget"`` (ε at a δ against the count).
    x_name, y_name : str
        Column names of ``x`` and of the two sides (``"epsilon"``/``"delta"``, ``"alpha"``/``"beta"``,
        ``"fpr"``/``"tpr"``, ``"count"``/``"epsilon"``).
    x, lower, upper : numpy.ndarray
        The points and both sides at each (``lower <= truth <= upper``).
    exact : bool
        Whether the sides agree up to floating-point widening.
    meta : dict
        What the curve was computed for (the δ of a budget curve, the route).
    """

    kind: str
    x_name: str
    y_name: str
    x: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    exact: bool
    meta: Mapping[str, Any]

    @property
    def guarantee(self) -> np.ndarray:
        """The side a privacy claim may use: ``upper`` for δ, ε and TPR, ``lower`` for β."""
        return self.lower if self.kind == "tradeoff" else self.upper

    @property
    def attack(self) -> np.ndarray:
        """The side the composed dominating pairs achieve (the other one)."""
        return self.upper if self.kind == "tradeoff" else self.lower

    @property
    def width(self) -> float:
        """Largest distance between the two sides (0 for an exact curve up to widening)."""
        gap = np.asarray(self.upper, float) - np.asarray(self.lower, float)
        finite = np.isfinite(gap)
        return float(np.max(gap[finite])) if finite.any() else math.inf

    def rows(self) -> list[dict[str, Any]]:
        """One table row per point (what ``--export FILE.csv`` writes)."""
        return [{self.x_name: float(x), f"{self.y_name}_lower": float(lo), f"{self.y_name}_upper": float(hi)}
                for x, lo, hi in zip(self.x, self.lower, self.upper, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the columns and what the curve is (JSON exports)."""
        return {"kind": self.kind, "exact": self.exact, **dict(self.meta), self.x_name: self.x.tolist(),
                "lower": self.lower.tolist(), "upper": self.upper.tolist()}


# ---------------------------------------------------------------------------------------------- profile
def _sides(guarantee: Any, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = guarantee.delta(eps)
    return np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float))


def _first_below(fn: Any, target: float, lo: float, hi: float, iters: int = 48) -> float:
    """Smallest ε in [lo, hi] (to ``iters`` halvings) with ``fn(ε) <= target``; ``fn`` decreasing."""
    return bisect(lambda e: fn(e) > target, lo, hi, rtol=1e-9, iterations=iters)[1]


def profile_range(guarantee: Any, *, delta_min: float = DELTA_MIN) -> tuple[float, float]:
    """The automatic ε range of a privacy profile: from where the guarantee's δ leaves 1 (below
    ``1 − 1e-9``; 0 if it already has) to where it reaches ``delta_min``, or, when δ never falls that
    low (a mechanism with a δ part), to where it is within 0.1 % of its floor.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> lo, hi = profile_range(Accountant().compose(pure(1.0), 4).guarantee())
    >>> lo, round(hi, 3)
    (0.0, 4.0)
    """
    check_positive(delta_min, "delta_min")
    if delta_min >= 1:
        raise ParameterError(f"delta_min={delta_min!r}: must be below 1")

    def upper(e: float) -> float:
        return float(_sides(guarantee, np.array([e]))[1][0])

    stop = float(guarantee.epsilon(delta_min)[1])
    if not math.isfinite(stop):             # a δ part: stop where δ is within 0.1 % of its floor
        far = 1.0
        while far < 1024 and upper(2 * far) < upper(far) * (1 - 1e-6):
            far *= 2
        floor = upper(far)
        stop = _first_below(upper, floor * (1 + 1e-3), 0.0, far) if upper(0.0) > floor * (1 + 1e-3) else far
    start = 0.0
    if upper(0.0) >= 1 - _NEAR_ONE:
        start = _first_below(upper, 1 - _NEAR_ONE, 0.0, stop)
        start = max(0.0, start - 0.02 * (stop - start))       # show where it leaves 1
    if stop <= start:
        stop = start + 1.0
    return start, stop


def profile(guarantee: Any, epsilon: Sequence[float] | np.ndarray | None = None, *, points: int = 200,
            epsilon_range: tuple[float, float] | None = None, delta_min: float = DELTA_MIN) -> Curve:
    """δ(ε) on both sides: at the given ``epsilon``, else at ``points`` values evenly over
    ``epsilon_range`` (default :func:`profile_range`).

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> c = profile(Accountant().compose(GaussianMechanism(1.0)).guarantee(), [1.0])
    >>> round(float(c.upper[0]), 6)
    0.126937
    """
    if epsilon is None:
        lo, hi = epsilon_range if epsilon_range is not None else profile_range(guarantee,
                                                                               delta_min=delta_min)
        if not (0 <= lo < hi < math.inf):
            raise ParameterError(f"epsilon_range={epsilon_range!r}: must be 0 <= low < high < inf")
        eps = np.linspace(float(lo), float(hi), check_int(points, "points", 2))
    else:
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    dlo, dhi = _sides(guarantee, eps)
    return Curve("profile", "epsilon", "delta", eps, dlo, dhi, bool(guarantee.exact),
                 {"route": guarantee.route})


# ---------------------------------------------------------------------------------------------- trade-off
def _f_eps_delta(eps: np.ndarray, delta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``max_j f_{ε_j, δ_j}(α)`` for every α (rows: ε_j, columns: α)."""
    e = eps[:, None]
    d = delta[:, None]
    a = alpha[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        one = 1.0 - d - np.exp(e) * a
        two = np.exp(-e) * (1.0 - d - a)
    out = np.maximum(np.maximum(one, two), 0.0)
    return np.nan_to_num(out, nan=0.0).max(axis=0)


def _interval_bound(eps: np.ndarray, dlo: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Upper bound of ``f_{ε, δ(ε)}(α)`` over each ``ε in [ε_j, ε_{j+1}]`` (rows: intervals)."""
    e = eps[:-1, None]
    d = dlo[1:, None]
    a = alpha[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        one = 1.0 - d - np.exp(e) * a
        two = np.exp(-e) * np.maximum(1.0 - d - a, 0.0)
    return np.nan_to_num(np.maximum(np.maximum(one, two), 0.0), nan=0.0)


def _tail_bound(top: float, alpha: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.maximum(np.maximum(1.0 - math.exp(top) * alpha, math.exp(-top) * (1.0 - alpha)), 0.0)


def _losses(side: Any) -> np.ndarray | None:
    """The tight ε of an exact finite side (|losses| and 0), or None when it is not finite."""
    if isinstance(side, PrivacyRegion):
        loss = side.losses[np.isfinite(side.losses)]
        return np.unique(np.concatenate([[0.0], np.abs(loss)]))
    if isinstance(side, Larger):
        a, b = _losses(side.first), _losses(side.second)
        return None if a is None or b is None else np.unique(np.concatenate([a, b]))
    return None


def _check_alpha(alpha: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a < 0) or np.any(a > 1):
        raise ParameterError(f"{name}={alpha!r}: must be values in [0, 1]")
    return a


def _beta(guarantee: Any, alpha: np.ndarray, tol: float, max_points: int) -> tuple[np.ndarray, np.ndarray,
                                                                                      bool]:
    """(guarantee side, attack side, exact) of β at each α."""
    side = guarantee.upper
    if guarantee.exact and isinstance(side, TradeoffFunction):     # the Gaussian route: G_μ in closed form
        beta = np.asarray(side(alpha), float)
        return beta * (1 - _GAUSS_RTOL), np.minimum(beta * (1 + _GAUSS_RTOL), 1.0), True
    eps = _losses(side) if guarantee.exact else None
    if eps is not None:
        # the guarantee's β from the certified upper δ, the attack's from the certified lower δ (both
        # exact routes' sides, docs/reliability.md), each widened by the evaluation's rounding
        d_lo, d_hi = _sides(guarantee, eps)
        beta_g, beta_a = _f_eps_delta(eps, d_hi, alpha), _f_eps_delta(eps, d_lo, alpha)
        return np.maximum(beta_g - _FINITE_ATOL, 0.0), np.minimum(beta_a + _FINITE_ATOL, 1.0), True
    return (*_certified_beta(guarantee, alpha, tol, max_points), False)


def _certified_beta(guarantee: Any, alpha: np.ndarray, tol: float, max_points: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    positive = alpha[alpha > 0]
    a_min = float(positive.min()) if positive.size else 1.0
    top = max(math.log(1.0 / a_min) + 1.0, math.log(10.0 / tol))   # the tail bound is then below tol / 10
    floor = tol             # below this δ, its value moves β by less than tol: not evaluated

    def sides(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """δ on both sides at increasing ``e``, evaluated only up to the first ε with
        δ_hi <= floor; beyond it δ_hi there (δ decreases, so it is still an upper bound) and 0 (a lower
        bound) stand in. Deep tails are never asked for, where the engine would refine its lattice."""
        lo, hi = np.zeros(e.shape), np.full(e.shape, cut[1])
        start, last = 0, 1.0
        while start < e.size and e[start] < cut[0]:
            stop = start + (16 if last > 1e3 * floor else 1)       # one at a time near the floor
            idx = np.arange(start, min(stop, e.size))
            idx = idx[e[idx] < cut[0]]
            lo[idx], hi[idx] = _sides(guarantee, e[idx])
            small = idx[hi[idx] <= floor]
            if small.size:
                cut[:] = [float(e[small[0]]), float(hi[small[0]])]
            start, last = int(idx[-1]) + 1, float(hi[idx[-1]])
        beyond = e > cut[0]
        lo[beyond], hi[beyond] = 0.0, np.maximum(hi[beyond], cut[1])
        return lo, hi

    cut = [math.inf, 0.0]
    eps = np.linspace(0.0, top, 65)
    dlo, dhi = sides(eps)
    watched = alpha >= math.exp(-top)            # α = 0 is bounded by 1 only (δ(∞) is not evaluated)
    while True:
        guar = _f_eps_delta(eps, dhi, alpha)
        per = _interval_bound(eps, dlo, alpha)
        att = np.maximum(per.max(axis=0), _tail_bound(top, alpha))
        reach = _f_eps_delta(eps, dlo, alpha)     # what the attack side tends to as the grid refines
        loose = (per[:, watched] > reach[watched] + tol / 2).any(axis=1)
        loose &= np.diff(eps) > 1e-7 * max(1.0, top)
        if not loose.any() or eps.size >= max_points:
            break
        mids = 0.5 * (eps[:-1][loose] + eps[1:][loose])
        mlo, mhi = sides(mids)
        order = np.argsort(np.concatenate([eps, mids]), kind="stable")
        eps = np.concatenate([eps, mids])[order]
        dlo = np.concatenate([dlo, mlo])[order]
        dhi = np.concatenate([dhi, mhi])[order]
    return np.maximum(guar - _FINITE_ATOL, 0.0), np.minimum(att + _FINITE_ATOL, 1.0)


def tradeoff(guarantee: Any, alpha: Sequence[float] | np.ndarray | None = None, *, points: int = 201,
             tol: float = 1e-4, max_points: int = 4000) -> Curve:
    """The trade-off curve β(α): least type II error of any test at type I error α, both sides.

    ``lower`` is the guarantee (every test of the composition has ``β >= lower``), ``upper`` the attack
    bound (a test of the composed dominating pairs has ``β <= upper``). Exact routes give both to within
    floating-point widening; certified routes refine their ε grid until the sides are within ``tol``
    (or ``max_points`` evaluations of δ).

    Parameters
    ----------
    guarantee : Guarantee
        From :meth:`lpdp.Accountant.guarantee`.
    alpha : array of float in [0, 1], optional
        Type I errors; default ``points`` values evenly over (0, 1] and 20 log-spaced from 1e-6 below
        the first (α = 0 itself bounds the attack side by 1 only on certified routes).
    tol : float
        Target distance between the two sides of a certified curve.
    max_points : int
        Most ε at which a certified curve evaluates δ.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> c = tradeoff(Accountant().compose(pure(1.0)).guarantee(), [0.0, 0.1, 0.5])
    >>> [round(float(b), 6) for b in c.lower]
    [1.0, 0.728172, 0.18394]
    """
    if alpha is None:       # evenly on [0, 1], and log-spaced below its first step (low FPRs)
        even = np.linspace(0.0, 1.0, check_int(points, "points", 2))
        a = np.concatenate([np.geomspace(1e-6, even[1], 20, endpoint=False), even[1:]])
    else:
        a = _check_alpha(alpha, "alpha")
    tol = check_positive(tol, "tol")
    lo, hi, exact = _beta(guarantee, a, tol, check_int(max_points, "max_points", 65))
    return Curve("tradeoff", "alpha", "beta", a, lo, hi, exact, {"route": guarantee.route})


#: False-positive rates of :func:`tpr` by default (the low-FPR regime membership attacks report).
FPRS = (1e-4, 1e-3, 1e-2)


def tpr(guarantee: Any, fpr: Sequence[float] | np.ndarray = FPRS, *, tol: float = 1e-4,
        max_points: int = 4000) -> Curve:
    """The largest true-positive rate of a membership test at each false-positive rate, both sides.

    ``upper`` (``1 − β_lower``) is the guarantee: no attack on the composition does better;
    ``lower`` (``1 − β_upper``) is achieved by a test of the composed dominating pairs. For the randomized
    response of Kairouz et al. the two agree to 1e-15 (the exact finite route).

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import randomized_response
    >>> c = tpr(Accountant().compose(randomized_response(2, 1.0)).guarantee(), [0.1])
    >>> round(float(c.upper[0]), 6)    # e^1 * 0.1 for FPR below 1/(1 + e)
    0.271828
    """
    a = _check_alpha(fpr, "fpr")
    beta = tradeoff(guarantee, a, tol=tol, max_points=max_points)
    with np.errstate(invalid="ignore"):
        upper = np.minimum(np.nextafter(1.0 - beta.lower, np.inf), 1.0)
        lower = np.maximum(np.nextafter(1.0 - beta.upper, -np.inf), 0.0)
    return Curve("tpr", "fpr", "tpr", a, lower, upper, beta.exact, {"route": guarantee.route})


#: The curves of a guarantee alone (:func:`of_guarantee`); ``lpdp.curves.KINDS`` adds ``"budget"``.
GUARANTEE_KINDS = ("profile", "tradeoff", "tpr")
#: False-positive rates of a TPR figure (log-spaced from 1e-5 to 1).
FIGURE_FPRS = tuple(float(v) for v in np.geomspace(1e-5, 1.0, 26))


def of_guarantee(kind: str, guarantee: Any, *, epsilon_range: tuple[float, float] | None = None,
                 fpr: Sequence[float] | None = None) -> Curve:
    """One curve of a guarantee by name: ``"profile"`` over ``epsilon_range`` (default automatic),
    ``"tradeoff"`` on [0, 1], ``"tpr"`` at ``fpr`` (default :data:`FIGURE_FPRS`).

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> of_guarantee("tpr", Accountant().compose(pure(1.0)).guarantee(), fpr=[0.1]).kind
    'tpr'
    """
    if kind == "profile":
        return profile(guarantee, epsilon_range=epsilon_range)
    if kind == "tradeoff":
        return tradeoff(guarantee)
    if kind == "tpr":
        return tpr(guarantee, FIGURE_FPRS if fpr is None else fpr)
    raise ParameterError(f"kind={kind!r}: must be one of {', '.join(GUARANTEE_KINDS)}")
