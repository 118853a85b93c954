"""Symmetric trade-off functions for f-DP: Gaussian ``G_μ``, Laplace, and any symmetric convex callable.

A trade-off function ``f(t) = inf {type II error : type I error <= t}`` is convex, continuous and
non-increasing on [0, 1] with ``f(t) <= 1 - t`` (Sec. II-B). Section IV of the paper (Sec. IV)
works with *symmetric* ones (``f = f^{-1}``): they have one fixed point ``c = f(c)`` and their graph,
rotated by π/4 (the *normal rotation*), is an even function ``g`` on ``[z, -z]`` with ``z = -f(0)/√2``.

Every :class:`TradeoffFunction` gives ``f``, ``f'``, ``f''`` (closed forms where known, central differences
otherwise), the fixed point, the rotation ``g, g', g''``, and the tight ``δ_f(ε) = max_t (1 - f(t) - e^ε t)``
(the privacy profile; closed form for the Gaussian and Laplace, tangent point otherwise).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from lpdp import _special as special
from lpdp._numerics import (
    UNIT_ROUNDOFF,
    balle_wang_float,
    gaussian_delta_bounds,
    gaussian_delta_float,
    gaussian_epsilon_nominal,
)
from lpdp._search import bisect, bisect_array, crossing_near
from lpdp._validate import check_int, check_positive
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["TradeoffFunction", "gaussian", "gaussian_delta", "gaussian_epsilon", "gaussian_hockey",
           "composed_mu", "laplace", "from_callable"]

ArrayLike = float | np.ndarray
_SQRT2 = math.sqrt(2.0)
#: Tolerance of the symmetry / convexity checks of a user-supplied f (absolute, in the unit square).
SHAPE_TOL = 1e-7
#: Tolerance of the symmetry check ``f(f(t)) = t`` of a user-supplied f.
SYMMETRY_TOL = 1e-6
#: Added to a numerically maximised δ_f(ε): covers the float error of evaluating f near 1.
NUMERIC_DELTA_SLACK = 2.0 ** -49
#: Largest Gaussian parameter μ accepted: ε at any δ of ``G_μ`` composed up to 10^12 times stays finite in
#: double precision (it grows like μ² k / 2); a larger μ is no privacy at all.
MAX_MU = 1e100
#: Largest ε = sensitivity/scale of one Laplace mechanism: its profile is ``1 - e^{(ε' - ε)/2}`` for
#: ``ε' < ε``, so a larger ε releases its input at every useful ε'.
MAX_LAPLACE_EPSILON = 1e6
#: Largest μ of a *composed* Gaussian ``G_μ`` (up to 10^100 mechanisms of ``MAX_MU``).
MAX_COMPOSED_MU = 1e150
#: Bisection steps of the vectorised root finders (halves [0, 1] far below double precision).
_BISECT_STEPS = 80


def _bisect_increasing(h: Callable[[np.ndarray], np.ndarray], target: np.ndarray) -> np.ndarray:
    """Solve ``h(x) = target`` on [0, 1] for a non-decreasing ``h``, vectorised (bisection)."""
    target = np.asarray(target, dtype=float)
    return bisect_array(lambda x: h(x) < target, np.zeros_like(target), np.ones_like(target),
                        _BISECT_STEPS)


def _max_concave(h: Callable[[np.ndarray], np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """``max_{t in [0, 1]} h(t)`` for a concave, vectorised ``h`` (ternary search, then the best end)."""
    lo, hi = np.zeros(shape), np.ones(shape)
    for _ in range(_BISECT_STEPS * 2):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        left = h(m1) < h(m2)
        lo, hi = np.where(left, m1, lo), np.where(left, hi, m2)
    return np.maximum.reduce([h(0.5 * (lo + hi)), h(np.zeros(shape)), h(np.ones(shape))])


def _scalar(x: np.ndarray, like: object) -> ArrayLike:
    return float(x) if np.ndim(like) == 0 else x


def _g_prime_at(d: np.ndarray) -> np.ndarray:
    """``g' = (1 + f') / (1 - f')`` from ``f'`` at ``x_u`` (``-1`` where ``f'`` is ``-inf``)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(d), -1.0, (1.0 + d) / (1.0 - d))


@dataclass(frozen=True, eq=False)
class TradeoffFunction:
    """A symmetric (``f = f^{-1}``), convex trade-off function with its derivatives (Sec. IV).

    Build one with :func:`gaussian`, :func:`laplace` or :func:`from_callable`; call it like ``f(t)``.

    Examples
    --------
    >>> from lpdp.tradeoff import gaussian
    >>> f = gaussian(1.0)
    >>> round(f.fixed_point, 6), round(float(f(f.fixed_point)), 6)
    (0.308538, 0.308538)
    >>> round(float(f.g(0.0)), 6) == round(f.fixed_point * 2 ** 0.5, 6)
    True
    """

    name: str
    _f: Callable[[np.ndarray], np.ndarray]
    _df: Callable[[np.ndarray], np.ndarray]
    _d2f: Callable[[np.ndarray], np.ndarray]
    _delta: Callable[[np.ndarray], np.ndarray] | None = None
    _c: float | None = None
    _compose: Callable[[int], TradeoffFunction] | None = None
    _epsilon: Callable[[float], float] | None = None

    # ------------------------------------------------------------------ f and its derivatives
    def __call__(self, t: ArrayLike) -> ArrayLike:
        return _scalar(self._f(self._check_t(t)), t)

    def derivative(self, t: ArrayLike) -> ArrayLike:
        """``f'(t)`` (``-inf`` at 0 when the graph starts vertical, e.g. the Gaussian)."""
        return _scalar(self._df(self._check_t(t)), t)

    def second_derivative(self, t: ArrayLike) -> ArrayLike:
        """``f''(t)``."""
        return _scalar(self._d2f(self._check_t(t)), t)

    @cached_property
    def f0(self) -> float:
        """``f(0) = 1 - δ_f(∞)``."""
        return float(self._f(np.array([0.0]))[0])

    @cached_property
    def fixed_point(self) -> float:
        """The fixed point ``c`` with ``f(c) = c`` (in ``(0, 1/2]``)."""
        if self._c is not None:
            return self._c
        return float(_bisect_increasing(lambda x: x - self._f(x), np.array([0.0]))[0])

    # ------------------------------------------------------------------ normal rotation (Sec. IV)
    @property
    def z(self) -> float:
        """Left end ``z = -f(0)/√2`` of the rotated domain ``[z, -z]``."""
        return -self.f0 / _SQRT2

    def x_of_u(self, u: ArrayLike) -> ArrayLike:
        """The abscissa ``x_u`` with ``(x_u - f(x_u))/√2 = u`` (``x - f(x)`` is increasing)."""
        uu = np.asarray(u, dtype=float)
        if np.any(~np.isfinite(uu)) or np.any(uu < self.z - 1e-15) or np.any(uu > -self.z + 1e-15):
            raise ParameterError(f"u={u!r}: must be in [z, -z] = [{self.z!r}, {-self.z!r}]")
        return _scalar(_bisect_increasing(lambda x: x - self._f(x), _SQRT2 * uu), u)

    def g(self, u: ArrayLike) -> ArrayLike:
        """Rotated graph ``g(u) = (x_u + f(x_u))/√2``: even on ``[z, -z]``."""
        return _scalar(self._g_at(np.asarray(self.x_of_u(u))), u)

    def g_prime(self, u: ArrayLike) -> ArrayLike:
        """``g'(u) = (1 + f'(x_u)) / (1 - f'(x_u))`` (``-1`` where ``f'`` is ``-inf``)."""
        return _scalar(_g_prime_at(self._df(np.asarray(self.x_of_u(u)))), u)

    def g_second(self, u: ArrayLike) -> ArrayLike:
        """``g''(u) = 2√2 f''(x_u) / (1 - f'(x_u))^3``."""
        x = np.asarray(self.x_of_u(u))
        return _scalar(self._g_second_at(x, self._df(x)), u)

    def rotation(self, u: ArrayLike) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
        """``(g(u), g'(u), g''(u))`` from one solve of ``x_u`` (each of :meth:`g`, :meth:`g_prime` and
        :meth:`g_second` solves it: an 80-step bisection evaluating f).

        Examples
        --------
        >>> from lpdp.tradeoff import gaussian
        >>> f = gaussian(1.0)
        >>> [bool(a == b) for a, b in zip(f.rotation(-0.2), (f.g(-0.2), f.g_prime(-0.2), f.g_second(-0.2)))]
        [True, True, True]
        """
        x = np.asarray(self.x_of_u(u))
        d = self._df(x)
        return (_scalar(self._g_at(x), u), _scalar(_g_prime_at(d), u), _scalar(self._g_second_at(x, d), u))

    def _g_at(self, x: np.ndarray) -> np.ndarray:
        return (x + self._f(x)) / _SQRT2

    def _g_second_at(self, x: np.ndarray, d: np.ndarray) -> np.ndarray:
        d2 = self._d2f(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(np.isinf(d), 0.0, 2.0 * _SQRT2 * d2 / (1.0 - d) ** 3)

    # ------------------------------------------------------------------ privacy profile
    def tangent_point(self, epsilon: ArrayLike) -> ArrayLike:
        """The ``t`` in ``[0, c]`` where ``f'(t) = -e^ε``: the tangent of slope ``-e^ε`` touches there."""
        eps = np.asarray(epsilon, dtype=float)
        s = -np.exp(eps)
        return _scalar(_bisect_increasing(self._df, s), epsilon)

    def delta(self, epsilon: ArrayLike) -> ArrayLike:
        """Tight ``δ_f(ε) = max_t (1 - f(t) - e^ε t)``: ``R(ε, δ_f(ε))`` is the tangent half-plane.

        Closed form for the Gaussian and Laplace. Otherwise the concave ``1 - f(t) - e^ε t`` is maximised by
        ternary search (no derivative needed) and the result rounded up by ``NUMERIC_DELTA_SLACK`` (the
        float error of evaluating f), so it is never below the true δ: approximations from below stay
        valid privacy guarantees.

        Examples
        --------
        >>> from lpdp.tradeoff import laplace
        >>> round(float(laplace(1.0).delta(0.0)), 6)  # 1 - e^{-1/2}
        0.393469
        """
        eps = np.asarray(epsilon, dtype=float)
        if not ((eps >= 0).all() and (eps < math.inf).all()):       # (NaN fails the first)
            raise ParameterError(f"epsilon={epsilon!r}: must be finite and >= 0")
        if self._delta is not None:       # a closed form: its values lie in [0, 1] already
            return _scalar(self._delta(eps), epsilon)
        out = _max_concave(lambda t: 1.0 - self._f(t) - np.exp(eps) * t, eps.shape) + NUMERIC_DELTA_SLACK
        return _scalar(np.minimum(np.maximum(out, 0.0), 1.0), epsilon)

    def epsilon(self, delta: ArrayLike) -> ArrayLike:
        """Smallest ``ε >= 0`` with ``δ_f(ε) <= delta``, rounded up (vectorised; ``inf`` when
        ``delta < δ_f(∞) = 1 - f(0)``).

        Examples
        --------
        >>> from lpdp.tradeoff import gaussian
        >>> f = gaussian(0.5)
        >>> e = f.epsilon(1e-5)
        >>> float(f.delta(e)) <= 1e-5 < float(f.delta(e - 1e-9))
        True
        """
        d = np.asarray(delta, dtype=float)
        if np.any(~(d >= 0)) or np.any(d > 1):
            raise ParameterError(f"delta={delta!r}: must be in [0, 1]")
        out = np.array([self._epsilon_one(float(x)) for x in d.ravel()]).reshape(d.shape)
        return _scalar(out, delta)

    def _epsilon_one(self, delta: float) -> float:
        if self._epsilon is not None:
            return self._epsilon(delta)
        if float(self.delta(0.0)) <= delta:
            return 0.0
        if delta < 1.0 - self.f0 or delta == 0.0:
            return math.inf
        hi = 1.0
        while float(self.delta(hi)) > delta:
            if hi > 1e300:  # the smallest valid ε is beyond double range
                return math.inf
            hi *= 2.0
        return bisect(lambda e: float(self.delta(e)) > delta, 0.0, hi)[1]

    def inscribed_region(self) -> PrivacyRegion:
        """A polygon with its vertices on the graph of f (a fixed grid, log-spaced near ``t = 0``).

        Chords of a convex f lie above it, so the polygon is inside the exact region: an attack-bound side,
        meant for plots and areas (the exact answers come from :meth:`delta` and the accountant).

        Examples
        --------
        >>> from lpdp.tradeoff import gaussian
        >>> f = gaussian(1.0)
        >>> r = f.inscribed_region()
        >>> bool(r.delta(1.0) <= f.delta(1.0) < r.delta(1.0) + 1e-4)
        True
        """
        t = np.unique(np.concatenate([np.geomspace(1e-9, 1e-2, 80), np.linspace(0.0, 1.0, 801)]))
        return PrivacyRegion.from_vertices(np.column_stack([t, self._f(t)]))

    def composed(self, k: int) -> TradeoffFunction | None:
        """The exact k-fold composition where a closed form is known (``G_μ -> G_{μ√k}``), else ``None``."""
        k = check_int(k, "k", 1)
        return None if self._compose is None else self._compose(k)

    def _check_t(self, t: ArrayLike) -> np.ndarray:
        if type(t) is float:    # one comparison instead of three array reductions (f(t) in a bisection)
            if not 0.0 <= t <= 1.0:
                raise ParameterError(f"t={t!r}: must be in [0, 1]")
            return np.asarray(t)
        arr = np.asarray(t, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
            raise ParameterError(f"t={t!r}: must be in [0, 1]")
        return arr


def gaussian_delta(epsilon: ArrayLike, mu: float, side: str = "upper") -> ArrayLike:
    """Tight ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` of ``G_μ`` (Balle and Wang, 2018, Theorem 8),
    certified: ``side="upper"`` (default) is never below it, ``"lower"`` never above.

    The one implementation of the Gaussian profile (vectorised over ε >= 0). Written as
    ``Φ(a) (1 - exp(ε + log Φ(b) - log Φ(a)))``: a difference of positives, no overflow, full relative
    precision in the tail; its floating-point error is bounded and the value widened by it, and where the
    bound is too wide (μ tiny, where the two terms cancel) δ is evaluated with mpmath
    (:func:`lpdp._numerics.gaussian_delta_bounds`).

    Examples
    --------
    >>> from lpdp.tradeoff import gaussian_delta
    >>> round(gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    mu = check_positive(mu, "mu")
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ParameterError(f"epsilon={epsilon!r}: must be finite and >= 0")
    if side not in ("upper", "lower"):
        raise ParameterError(f"side={side!r}: must be 'upper' or 'lower'")
    lo, hi = gaussian_delta_bounds(eps, mu)
    return _scalar(hi if side == "upper" else lo, epsilon)


def gaussian_epsilon(delta: float, mu: float, side: str = "upper") -> float:
    """Certified ``ε(δ)`` of ``G_μ``: ``side="upper"`` (default) the smallest ε (to adjacent doubles) whose
    certified upper δ (:func:`gaussian_delta`) is at most ``delta``, so the exact ε(δ) is at or below it
    (``inf`` when no ε is); ``"lower"`` the largest ε whose certified lower δ is still above ``delta``, so
    the exact ε(δ) is above it (0 when no ε >= 0 is).

    The float closed form gives the crossing to a few ulps (:func:`lpdp._numerics.gaussian_epsilon_nominal`);
    the certified evaluation at points stepping outward from it, then between the two that straddle the
    answer (:func:`lpdp._search.crossing_near`, a handful of vectorised evaluations), finds the adjacent
    doubles where the certified side crosses ``delta``. Where that float bound is not accepted (the
    crossing far in a tail, μ tiny) it falls back to a bisection of :func:`gaussian_delta` (mpmath where
    needed). Either way the answer is checked by the certified side itself, so it is sound whatever the
    guess.

    Examples
    --------
    >>> from lpdp.tradeoff import gaussian_delta, gaussian_epsilon
    >>> e = gaussian_epsilon(1e-5, 1.0)
    >>> gaussian_delta(e, 1.0) <= 1e-5 < gaussian_delta(gaussian_epsilon(1e-5, 1.0, "lower"), 1.0, "lower")
    True
    """
    upper = side == "upper"
    if not upper and side != "lower":
        raise ParameterError(f"side={side!r}: must be 'upper' or 'lower'")

    def above(e: float) -> bool:
        return float(gaussian_delta(e, mu, side)) > delta

    if 0.0 < delta < 1.0:
        guess = gaussian_epsilon_nominal(delta, mu)

        def below(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            lo, hi, ok = gaussian_delta_float(x, mu, for_epsilon=True)
            return (hi if upper else lo) > delta, ok

        found = crossing_near(below, guess)
        if found is not None:
            return found[1] if upper else found[0]
    if not above(0.0):
        return 0.0
    if delta == 0.0 and upper:
        return math.inf
    hi = 1.0
    while above(hi):
        if hi > 1e300:  # the smallest valid ε is beyond double range
            return math.inf if upper else hi
        hi *= 2.0
    lo, hi = bisect(above, 0.0, hi)
    return hi if upper else lo


@dataclass(frozen=True)
class GaussianLower:
    """The attack side of ``G_μ``'s profile: ``delta`` and ``epsilon`` never above the exact ones.

    Examples
    --------
    >>> lo = GaussianLower(1.0)
    >>> bool(lo.delta(1.0) <= 0.12693673750664394 <= gaussian(1.0).delta(1.0))
    True
    >>> lo.epsilon(1e-6) <= gaussian(1.0).epsilon(1e-6)
    True
    """

    mu: float

    def delta(self, epsilon: ArrayLike) -> ArrayLike:
        return gaussian_delta(epsilon, self.mu, "lower")

    def epsilon(self, delta: ArrayLike) -> ArrayLike:
        """The largest ε (to adjacent doubles) whose certified lower δ is still above ``delta``: the exact
        ε(δ) is above it (0 when no ε >= 0 is)."""
        d = np.asarray(delta, dtype=float)
        out = np.array([self._one(float(x)) for x in d.ravel()]).reshape(d.shape)
        return _scalar(out, delta)

    def _one(self, delta: float) -> float:
        return gaussian_epsilon(delta, self.mu, "lower")


def gaussian_hockey(c: np.ndarray, mu: float) -> np.ndarray:
    """``E[(1 - e^{c - L})_+]`` for ``L ~ N(μ²/2, μ²)`` at any real ``c`` (array, unchecked): the
    Balle–Wang profile of :func:`gaussian_delta` continued to ``c < 0``, where it is ``1 - e^c`` as
    ``μ -> 0`` (the formula's one evaluation is :func:`lpdp._numerics.balle_wang_float`; the filters'
    Gaussian audits call this at ``ε - s``).

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp.tradeoff import gaussian_hockey
    >>> gaussian_hockey(np.array([-1.0, 1.0]), 1.0).round(6).tolist()
    [0.678818, 0.126937]
    """
    _, _, la, _, _, d = balle_wang_float(np.asarray(c, dtype=float), mu)
    return np.clip(np.where(la == -np.inf, 0.0, d), 0.0, 1.0)   # Φ(a) = 0 in double: δ <= Φ(a) = 0


def check_mu(mu: object, name: str = "mu", limit: float = MAX_MU) -> float:
    """A Gaussian parameter ``0 < μ <= limit`` (default :data:`MAX_MU`, one mechanism)."""
    v = check_positive(mu, name)
    if v > limit:
        raise ParameterError(f"{name}={mu!r}: must be at most {limit:g} (a Gaussian with a larger mu "
                             f"releases its input: no finite epsilon at any useful delta)")
    return v


def check_laplace(scale: object, sensitivity: object = 1.0, name: str = "scale") -> float:
    """``ε = sensitivity/scale`` of a Laplace mechanism, in ``(0, MAX_LAPLACE_EPSILON]``."""
    b, s = check_positive(scale, name), check_positive(sensitivity, "sensitivity")
    e = s / b
    if not e <= MAX_LAPLACE_EPSILON:
        raise ParameterError(f"{name}={scale!r}: epsilon = sensitivity/scale = {e:.3g} must be at most "
                             f"{MAX_LAPLACE_EPSILON:g} (a larger epsilon releases the input)")
    return e


def composed_mu(parts: Iterable[tuple[float, int]]) -> float:
    """μ of the composition of ``k`` runs of each ``G_μ``: ``sqrt(Σ k μ²)`` (Dong, Roth and Su 2022,
    Corollary 3.3), scaled by the largest μ so that the squares neither underflow nor overflow, and
    rounded up: each term ``k (μ / top)²`` is within 4u of its value, the correctly rounded sum and square
    root and the final product add at most 2u, so ``(1 + 8u)`` times the float result is at or above the
    exact μ (a larger μ is a weaker guarantee).

    Examples
    --------
    >>> round(composed_mu([(1.0, 4), (2.0, 3)]), 12)
    4.0
    >>> composed_mu([(1e-300, 10**6)]) > 0.0  # the plain sum of squares underflows to 0
    True
    """
    parts = [(float(mu), int(k)) for mu, k in parts if k]
    top = max((mu for mu, _ in parts), default=0.0)
    if not top > 0.0:
        return 0.0
    return top * math.sqrt(math.fsum(k * (mu / top) ** 2 for mu, k in parts)) * (1.0 + 2.0**-50)


def gaussian(mu: float) -> TradeoffFunction:
    """``G_μ(t) = Φ(Φ^{-1}(1 - t) - μ)``, the trade-off of N(0,1) vs N(μ,1) (Dong, Roth, Su; Sec. IV).

    Its k-fold composition is exactly ``G_{μ√k}``; its fixed point is ``Φ(-μ/2)`` and its profile is
    ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)``.

    Examples
    --------
    >>> from lpdp.tradeoff import gaussian
    >>> round(float(gaussian(1.0).delta(1.0)), 6)
    0.126937
    """
    mu = check_mu(mu, limit=MAX_COMPOSED_MU)

    def f(t: np.ndarray) -> np.ndarray:
        if "scipy.special" not in sys.modules and not np.any((t > 0) & (t < 1)):
            return 1.0 - t      # f(0) = 1 and f(1) = 0 (and no scipy import for the end points)
        with np.errstate(divide="ignore"):
            return special.ndtr(-special.ndtri(t) - mu)   # -Φ^{-1}(t) = Φ^{-1}(1 - t), accurate for small t

    def df(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore"):
            return -np.exp(-mu * special.ndtri(t) - mu * mu / 2)

    def d2f(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            zt = special.ndtri(t)
            return mu * np.exp(-mu * zt - mu * mu / 2 + zt * zt / 2) * math.sqrt(2 * math.pi)

    def delta(eps: np.ndarray) -> np.ndarray:
        return gaussian_delta_bounds(eps, mu)[1]     # (μ and ε checked already: TradeoffFunction.delta)

    return TradeoffFunction(f"G_{mu:g}", f, df, d2f, delta, float(special.ndtr(-mu / 2)),
                            lambda k: gaussian(composed_mu([(mu, k)])), lambda d: gaussian_epsilon(d, mu))


def laplace(b: float, *, sensitivity: float = 1.0) -> TradeoffFunction:
    """Exact trade-off of Lap(0, b) vs Lap(sensitivity, b) (Dong, Roth, Su), ``r = sensitivity/b``.

    ``f(t) = 1 - e^r t`` for ``t < e^{-r}/2``, ``e^{-r}/(4t)`` for ``t <= 1/2``, ``e^{-r}(1 - t)`` above;
    fixed point ``e^{-r/2}/2`` and profile ``δ(ε) = 1 - e^{(ε - r)/2}`` for ``ε <= r``, certified from
    above (its float error bounded and added, :func:`_laplace_delta`).

    Examples
    --------
    >>> from lpdp.tradeoff import laplace
    >>> f = laplace(1.0)
    >>> round(float(f(0.25)), 6)  # e^{-1} / (4 * 0.25)
    0.367879
    """
    e = check_laplace(b, sensitivity, name="b")
    # |e - r| for the exact ratio r of the given doubles: 0 when the quotient is exact, else half an ulp.
    e_err = 0.0 if Fraction(sensitivity) / Fraction(b) == Fraction(e) else UNIT_ROUNDOFF * e
    a = math.exp(-e)

    def f(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            mid = a / (4 * np.maximum(t, a / 2))
        return np.where(t < a / 2, 1 - t / a, np.where(t <= 0.5, mid, a * (1 - t)))

    def df(t: np.ndarray) -> np.ndarray:
        return np.where(t < a / 2, -1 / a, np.where(t <= 0.5, -a / (4 * np.maximum(t, a / 2) ** 2), -a))

    def d2f(t: np.ndarray) -> np.ndarray:
        return np.where((t >= a / 2) & (t <= 0.5), a / (2 * np.maximum(t, a / 2) ** 3), 0.0)

    def delta(eps: np.ndarray) -> np.ndarray:
        return _laplace_delta(eps, e, e_err)

    return TradeoffFunction(f"Laplace(b={b / sensitivity:g})", f, df, d2f, delta, math.exp(-e / 2) / 2)


def _laplace_delta(epsilon: np.ndarray, r: float, r_err: float) -> np.ndarray:
    """Certified upper side of the Laplace profile ``1 - e^{(ε - r*)/2}`` for ``ε < r*``, 0 beyond, given
    a double ``r`` within ``r_err`` of the exact ``r*``.

    ``x = fl(ε - r) / 2`` (halving is exact) is within ``s = (r_err + u |ε - r|) / 2`` of ``(ε - r*)/2``,
    and ``1 - e^x`` has slope at most 1 for ``x <= 0``, so the exact δ is at most ``1 - e^x + s``; ``expm1``
    is within one ulp (``2u`` relative) of ``1 - e^x``. ``(d + s)(1 + 4u)`` covers that and the three
    roundings of the sum, the product and ``s``, and it is rounded up once more; from ``ε >= r + r_err``
    on, the exact δ is 0.

    Examples
    --------
    >>> import numpy as np
    >>> d = float(_laplace_delta(np.array(0.5), 1.0, 0.0))    # 1 - e^{-1/4} = 0.22119921692859512
    >>> 0.22119921692859512 <= d < 0.22119921692859512 + 1e-15
    True
    """
    u = UNIT_ROUNDOFF
    eps = np.asarray(epsilon, dtype=float)
    gap = np.minimum(eps - r, 0.0)
    d = -np.expm1(gap / 2)
    up = np.minimum(np.nextafter((d + (r_err - u * gap) / 2) * (1 + 4 * u), np.inf), 1.0)
    return np.where(eps < r + r_err, up, 0.0)


def from_callable(f: Callable[[np.ndarray], np.ndarray], *,
                  derivative: Callable[[np.ndarray], np.ndarray] | None = None,
                  second_derivative: Callable[[np.ndarray], np.ndarray] | None = None,
                  name: str = "f") -> TradeoffFunction:
    """A symmetric convex trade-off function given as a vectorised callable on [0, 1].

    Missing derivatives are taken by central differences (one-sided at the ends). The shape is checked on
    a grid: ``f`` must be non-increasing, convex, ``f(t) <= 1 - t``, ``f(1) = 0`` (to ``SHAPE_TOL``) and
    symmetric (``f(f(t)) = t``, to ``SYMMETRY_TOL``); otherwise :class:`ParameterError` names what fails.

    Examples
    --------
    >>> from lpdp.tradeoff import from_callable
    >>> f = from_callable(lambda t: (1 - t ** 0.5) ** 2, name="sqrt")
    >>> round(f.fixed_point, 6)
    0.25
    """
    h = 1e-6

    def df(t: np.ndarray) -> np.ndarray:
        lo, hi = np.clip(t - h, 0, 1), np.clip(t + h, 0, 1)
        return (f(hi) - f(lo)) / (hi - lo)

    def d2f(t: np.ndarray) -> np.ndarray:
        lo, hi = np.clip(t - 1e-4, 0, 1), np.clip(t + 1e-4, 0, 1)
        d1 = derivative or df
        return (d1(hi) - d1(lo)) / (hi - lo)

    def fv(t: np.ndarray) -> np.ndarray:
        return np.asarray(f(np.asarray(t, dtype=float)), dtype=float)

    grid = np.linspace(0.0, 1.0, 2001)
    try:
        y = fv(grid)
    except Exception as exc:  # a user callable may raise anything
        raise ParameterError(f"f={name}: calling it on [0, 1] failed: {exc}") from None
    if y.shape != grid.shape or not np.all(np.isfinite(y)):
        raise ParameterError(f"f={name}: must return finite values of the input's shape on [0, 1]")
    checks = [
        (np.all(np.diff(y) <= SHAPE_TOL), "non-increasing"),
        (np.all(np.diff(y, 2) >= -SHAPE_TOL), "convex"),
        (np.all((y >= -SHAPE_TOL) & (y <= 1 - grid + SHAPE_TOL)), "within 0 <= f(t) <= 1 - t"),
        (abs(y[-1]) <= SHAPE_TOL, "f(1) = 0"),
    ]
    for ok, what in checks:
        if not ok:
            raise ParameterError(f"f={name}: must be {what} on [0, 1]")
    back = fv(np.clip(y, 0.0, 1.0))
    worst = int(np.argmax(np.abs(back - grid)))
    if abs(back[worst] - grid[worst]) > SYMMETRY_TOL:
        raise ParameterError(f"f={name}: must be symmetric (f(f(t)) = t), but f(f({grid[worst]:g})) = "
                             f"{back[worst]:.6g}")
    return TradeoffFunction(name, fv, derivative or df, second_derivative or d2f)
