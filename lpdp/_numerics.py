"""Log-space helpers and named tolerances, in one place.

Each helper states the identity it implements. Masses are kept as natural logarithms; ``-inf`` is a zero
mass.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lpdp import _special as special
from lpdp._special import LOG_NDTR_ULPS, log_ndtr, log_ndtr_one

#: Absolute tolerance on constraint residuals of a solver answer (probabilities live in [0, 1]).
SOLVER_RESIDUAL_TOL = 1e-9
#: Tolerance used to decide membership of a point in a region (absolute, in the unit square).
MEMBERSHIP_TOL = 1e-12
#: Relative tolerance when checking that masses sum to one.
MASS_SUM_RTOL = 1e-9


#: ``log sqrt(2 pi)``.
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log n! - log(sqrt(2 pi n) (n/e)^n)`` for integers ``n >= 1`` (Loader 2000): small, accurate.

    A truncated Stirling series above 15 (error below 1e-17), ``gammaln`` below (values under 0.1 from
    ``gammaln`` under 28: absolute error ~1e-15).
    """
    n = np.asarray(n, dtype=float)
    out = np.empty(n.shape)
    small = n <= 15
    ns = n[small]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[small] = special.gammaln(ns + 1.0) - (ns + 0.5) * np.log(ns) + ns - _LOG_SQRT_2PI
    nb = n[~small]
    nn = nb * nb
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    out[~small] = np.where(nb > 500, (s0 - s1 / nn) / nb,
                           np.where(nb > 80, (s0 - (s1 - s2 / nn) / nn) / nb,
                                    np.where(nb > 35, (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / nb,
                                             (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / nb)))
    return out


def _bd0(x: np.ndarray, n: float, log_p: float) -> np.ndarray:
    """``x log(x/m) + m - x`` (>= 0) for ``m = n e^log_p``, without cancellation when ``x`` is close to
    ``m`` (Loader 2000). ``m`` is formed as ``n * e^log_p`` (one rounding), its log as ``log n + log_p``."""
    x = np.asarray(x, dtype=float)
    log_m = np.log(n) + log_p
    m = np.full(x.shape, n * np.exp(log_p))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if m[0:1].size and float(m.flat[0]) >= 1e-300:
            # log(x / m): one rounded quotient, no cancellation of log x against log m
            ratio = x / m
            out = x * np.where((ratio > 1e-300) & (ratio < 1e300), np.log(ratio), np.log(x) - log_m) + m - x
        else:
            out = x * (np.log(x) - log_m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xs, ms = x[near], m[near]
        v = (xs - ms) / (xs + ms)
        s = (xs - ms) * v
        ej = 2.0 * xs * v
        v2 = v * v
        for j in range(1, 20):          # |v| < 0.1: each term is 100 times smaller than the last
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        out[near] = s
    return out


def log_binom_pmf(n: int, i: np.ndarray, log_p: float, log_q: float) -> np.ndarray:
    """``log(C(n, i) p^i q^(n-i))`` for a success probability ``p = e^log_p`` with ``q = e^log_q = 1 - p``.

    Loader's saddle-point form (Loader, "Fast and accurate computation of binomial probabilities", 2000):
    ``-(stirlerr terms) - bd0(i, n p) - bd0(n - i, n q) - log sqrt(2 pi i (n-i)/n)``. Every term is small
    or is the (positive) deviance of the point, so the log mass keeps ~1e-15 *absolute* accuracy where it
    matters (``gammaln(n+1)`` alone would carry an absolute error ``u log n!``, 2e-10 at n = 10^6).
    ``p`` and ``q`` are first rescaled to sum to one.
    """
    i = np.asarray(i, dtype=float)
    nf = float(n)
    log_p, log_q = _renormalised(log_p, log_q)
    out = np.empty(i.shape)
    lo, hi = i == 0, i == nf
    out[lo] = nf * log_q
    out[hi] = nf * log_p
    mid = ~(lo | hi)
    x = i[mid]
    lc = _stirlerr(np.array(nf)) - _stirlerr(x) - _stirlerr(nf - x) - _bd0(x, nf, log_p) \
        - _bd0(nf - x, nf, log_q)
    out[mid] = lc - _LOG_SQRT_2PI - 0.5 * (np.log(x) + np.log1p(-x / nf))
    return out


def _renormalised(log_p: float, log_q: float) -> tuple[float, float]:
    """``log p, log q`` rescaled so that ``p + q = 1`` for the rounded inputs (otherwise ``n (p + q - 1)``,
    up to 1e-10 at n = 10^6, leaks into the binomial)."""
    total = float(np.logaddexp(log_p, log_q))
    return log_p - total, log_q - total


def _rounded_means(n: int, log_p: float, log_q: float) -> tuple[float, float, float, float]:
    """The renormalised ``log p, log q`` and the means ``n p``, ``n q`` exactly as :func:`_bd0` forms them."""
    log_p, log_q = _renormalised(log_p, log_q)
    return log_p, log_q, float(float(n) * np.exp(log_p)), float(float(n) * np.exp(log_q))


@dataclass(frozen=True)
class BinomialCorrection:
    """What turns :func:`log_binom_pmf` for rounded ``p̂, q̂`` into the binomial of the exact ``p, q``:
    ``a + b x`` inside, ``at_zero`` and ``at_n`` at the end points (:func:`binomial_correction`)."""

    a: float
    b: float
    at_zero: float
    at_n: float

    def apply(self, n: int, i: np.ndarray, log_pmf: np.ndarray) -> np.ndarray:
        """``log_pmf`` (of counts ``i`` out of ``n``) corrected."""
        x = np.asarray(i, dtype=float)
        nf = float(n)
        return log_pmf + np.where(x == 0, self.at_zero, np.where(x == nf, self.at_n, self.a + self.b * x))


def binomial_correction(n: int, log_p: float, log_q: float, p_exact: object, q_exact: object = None
                        ) -> tuple[BinomialCorrection, ErrorBound]:
    """The correction of :func:`log_binom_pmf` ``(n, ·, log_p, log_q)`` to the binomial of the *exact*
    success probability ``p_exact`` (an mpmath number; ``q_exact = 1 - p_exact`` given separately where
    that cancels), and the floating-point bound of the corrected log masses.

    Loader's deviance ``bd0(x, m) = x log(x/m) + m - x`` is affine in ``m`` and ``log m``, so replacing the
    rounded means ``m̂_1 = n p̂``, ``m̂_2 = n q̂`` (as :func:`_bd0` forms them) by the exact ``n p``, ``n q``
    changes the log mass by exactly ``(m̂_1 - m_1) + (m̂_2 - m_2) - x log(m̂_1/m_1) - (n - x) log(m̂_2/m_2)``,
    an affine function of ``x`` (computed here at 40 digits); the end points ``n log q̂`` and ``n log p̂``
    move by ``n log(q/q̂)`` and ``n log(p/p̂)``. What is left (docs/reliability.md, "Kairouz"): the
    deviances' own rounding (64 u per nat, as in :func:`binomial_error`), three ``stirlerr`` values (1e-15
    each), the coefficients and the evaluation of the correction (4 u of its terms' size each) and its
    addition (u per nat); nothing grows with ``sqrt(n)``, unlike the uncorrected :func:`binomial_error`.
    """
    import mpmath

    u = UNIT_ROUNDOFF
    lp, lq, m1, m2 = _rounded_means(n, log_p, log_q)
    with mpmath.workdps(40):
        pe = mpmath.mpf(p_exact)
        qe = 1 - pe if q_exact is None else mpmath.mpf(q_exact)
        d1, d2 = mpmath.mpf(m1) - n * pe, mpmath.mpf(m2) - n * qe
        l1, l2 = mpmath.log(mpmath.mpf(m1) / (n * pe)), mpmath.log(mpmath.mpf(m2) / (n * qe))
        corr = BinomialCorrection(float(d1 + d2 - n * l2), float(l2 - l1), float(n * (mpmath.log(qe) - lq)),
                                  float(n * (mpmath.log(pe) - lp)))
    size = abs(corr.a) + n * abs(corr.b) + abs(corr.at_zero) + abs(corr.at_n)
    return corr, ErrorBound(mass=round_up(u * 40 + 3.1e-15 + 8 * u * size), per_nat=65 * u)


def binomial_error(n: int, log_p: float, log_q: float, p_exact: object, q_exact: object = None
                   ) -> ErrorBound:
    """Floating-point bound of :func:`log_binom_pmf` ``(n, ·, log_p, log_q)`` against the binomial of the
    exact success probability ``p_exact`` (an mpmath number; docs/reliability.md, "Binomial masses").

    * The means ``m_1 = n p``, ``m_2 = n q`` that Loader's deviances use are rounded; their relative errors
      ``ρ_1, ρ_2`` are measured here against ``p_exact`` (40 digits). The sum of the two deviances moves by
      ``|x - m_1| (ρ_1 + ρ_2)`` to first order (its derivatives in ``m`` are ``1 - x/m``), and
      ``|x - n p| <= sqrt(n |ℓ| / 2)`` by the Chernoff bound ``P(X = x) <= e^{-2 (x - np)^2 / n}``.
    * The deviances themselves: the series (``|x - m| < 0.1 (x + m)``) is accurate to a few ulps of its
      value; the direct form ``x log(x/m) + m - x`` holds a deviance of at least ``0.018 x``, and its terms
      (``|x log(x/m)| + |m - x| <= 0.5 x``) are each rounded to a few ulps: 64 u per nat covers both and
      the log, sums and ``log sqrt(2 pi x (n-x)/n)``.
    * Three ``stirlerr`` values: absolute error below 1e-15 each.
    """
    import mpmath

    u = UNIT_ROUNDOFF
    _, _, m1, m2 = _rounded_means(n, log_p, log_q)
    with mpmath.workdps(40):
        pe = mpmath.mpf(p_exact)
        qe = 1 - pe if q_exact is None else mpmath.mpf(q_exact)   # give q when 1 - p cancels
        rho1 = abs(mpmath.mpf(m1) / (n * pe) - 1)
        rho2 = abs(mpmath.mpf(m2) / (n * qe) - 1)
        rho = float(rho1 + rho2) * (1 + 1e-6) + 4 * u        # + the rounding of m inside _bd0
    return ErrorBound(mass=u * 40 + 3.1e-15, per_nat=64 * u,
                      per_sqrt_nat=round_up(rho * math.sqrt(n / 2.0)))


def log1mexp(x: np.ndarray | float) -> np.ndarray:
    """``log(1 - e^x)`` for ``x <= 0``, accurate on both sides of ``-log 2`` (Maechler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log1mexp_one(x: float) -> float:
    """:func:`log1mexp` of one float in ``math`` (the same formula, libm's functions; a query's few scalar
    evaluations cost less than numpy's per-call overhead); ``-inf`` at 0."""
    if x > _MINUS_LOG2:
        m = -math.expm1(x)
        return math.log(m) if m > 0 else -math.inf
    return math.log1p(-math.exp(x))


_MINUS_LOG2 = -math.log(2.0)


def log_softplus(x: np.ndarray | float) -> np.ndarray:
    """``log(1 + e^x)`` without overflow."""
    return np.logaddexp(0.0, x)


def logsumexp(a: np.ndarray) -> float:
    """``log Σ e^a`` over all entries; ``-inf`` (not NaN) for an empty or all ``-inf`` input."""
    a = np.asarray(a, dtype=float).ravel()
    if a.size == 0:
        return -np.inf
    m = float(np.max(a))
    if m == -np.inf:
        return -np.inf
    if m == np.inf:
        return np.inf
    return m + float(np.log(np.sum(np.exp(a - m))))


#: The unit roundoff of IEEE double precision, ``2^-53``.
UNIT_ROUNDOFF = 2.0 ** -53
#: Nats below a query's answer beyond which atoms are bounded in aggregate rather than term by term:
#: ``e^-45 < 3e-20``, so they move a certified answer by less than 1e-19 relative.
NEGLIGIBLE_NATS = 45.0


def round_up(x: float) -> float:
    """The next double above ``x`` (``x`` when it is 0, infinite or NaN: a sum of zero error terms is
    exactly 0)."""
    return math.nextafter(x, math.inf) if (x and math.isfinite(x)) else x


def fraction_up(q: Fraction) -> float:
    """The smallest double at or above the rational ``q`` (exact rational arithmetic on double inputs, then
    one outward rounding: tight and certified).

    Examples
    --------
    >>> from fractions import Fraction
    >>> fraction_up(Fraction(1, 2)), fraction_up(Fraction(1, 3)) > 1 / 3
    (0.5, True)
    """
    x = float(q)
    return math.nextafter(x, math.inf) if Fraction(x) < q else x


def round_down(x: float) -> float:
    """The next double below ``x`` (``x`` when it is infinite or NaN)."""
    return math.nextafter(x, -math.inf) if math.isfinite(x) else x


@dataclass(frozen=True)
class ErrorBound:
    """Floating-point error of a finite dominating pair computed in log space.

    A region lpdp computes stands for a mathematically exact pair (the composition of the given doubles,
    taken as exact numbers). The region's stored atom ``j`` (loss ``L̂_j``, log P-mass ``ℓ̂_j``) differs
    from the true atom ``(L_j, ℓ_j)`` by at most

    * ``L̂_j - loss - loss_down - loss_rel max(L̂_j, 0) <= L_j <= L̂_j + loss + loss_rel max(-L̂_j, 0)``
      (nats), for every finite atom: ``loss`` either way, ``loss_down`` only downwards (a loss moved up
      onto a merged level), ``loss_rel`` for losses rounded *outward* (``|L| <= |L̂| <= |L| (1 + rel)``);
    * ``|ℓ_j - ℓ̂_j| <= mass + per_nat |ℓ̂_j| + per_sqrt_nat sqrt(|ℓ̂_j| + 1)`` (nats), for every atom and
      for the ``+inf`` mass, unless ``inf_mass`` is given: then that bounds the ``+inf`` mass's log;
      ``inf_exact``, when given, is that mass as an exact double (a given δ), so a query at that δ can be
      answered exactly;
    * atoms left out of the region (masses below a floor, e.g. ``2^-1517``) have total P-mass at most
      ``e^dropped`` and losses at most ``dropped_top``: the upper side adds that mass below ``dropped_top``.

    The model composes: a product of pairs adds the ``mass`` terms, keeps the largest ``per_nat`` (the
    magnitudes of the factors' log masses add up to the product's) and adds ``per_sqrt_nat`` in quadrature
    (Cauchy-Schwarz), which is how a binomial's sensitivity to a rounded success probability,
    ``|i - k p| u``, grows (``|i - kp| <= sqrt(k |ℓ| / 2)`` by the Chernoff bound). Certified queries
    (:meth:`lpdp.PrivacyRegion.delta`, :meth:`~lpdp.PrivacyRegion.delta_lower`) widen by it;
    docs/reliability.md gives each route's argument.

    Examples
    --------
    >>> from lpdp._numerics import ErrorBound
    >>> e = ErrorBound(loss=1e-16, mass=1e-15)
    >>> e.log_mass(10.0) == 1e-15
    True
    >>> e.times(e).mass >= 2e-15          # the masses' errors add (rounded up)
    True
    """

    loss: float = 0.0
    mass: float = 0.0
    per_nat: float = 0.0
    per_sqrt_nat: float = 0.0
    inf_mass: float | None = None
    dropped: float = -math.inf
    dropped_top: float = -math.inf
    loss_rel: float = 0.0
    loss_down: float = 0.0
    inf_exact: float | None = None

    def absolute(self, max_abs_loss: float) -> ErrorBound:
        """The same bound with every loss error symmetric and absolute (``|L̂| <= max_abs_loss``): the
        form products need (losses of mixed signs add, so relative errors do not carry over)."""
        if not (self.loss_rel or self.loss_down):
            return self
        return ErrorBound(round_up(self.loss + self.loss_down
                                   + self.loss_rel * max_abs_loss * (1 + 2 * UNIT_ROUNDOFF)),
                          self.mass, self.per_nat, self.per_sqrt_nat, self.inf_mass, self.dropped,
                          self.dropped_top)

    def log_inf(self, magnitude: float) -> float:
        """The bound on the log of the ``+inf`` mass (of magnitude ``|log p_inf|``)."""
        return float(self.log_mass(magnitude)) if self.inf_mass is None else self.inf_mass

    def log_mass(self, magnitude: float | np.ndarray) -> float | np.ndarray:
        """The bound on a log mass of magnitude ``|ℓ̂|`` (vectorised)."""
        if not (self.per_nat or self.per_sqrt_nat):
            return self.mass if np.ndim(magnitude) == 0 else np.full(np.shape(magnitude), self.mass)
        if isinstance(magnitude, float):        # one value (a query's scalar path): math, not numpy
            return self.mass + self.per_nat * magnitude + self.per_sqrt_nat * math.sqrt(magnitude + 1.0)
        return self.mass + self.per_nat * magnitude + self.per_sqrt_nat * np.sqrt(magnitude + 1.0)

    @property
    def is_zero(self) -> bool:
        return not (self.loss or self.mass or self.per_nat or self.per_sqrt_nat)

    def widened(self, *, loss: float = 0.0, mass: float = 0.0, per_nat: float = 0.0,
                per_sqrt_nat: float = 0.0, loss_rel: float = 0.0, loss_down: float = 0.0) -> ErrorBound:
        """This bound plus further error terms (each rounded up)."""
        return ErrorBound(round_up(self.loss + loss) if loss else self.loss,
                          round_up(self.mass + mass) if mass else self.mass,
                          round_up(self.per_nat + per_nat) if per_nat else self.per_nat,
                          round_up(self.per_sqrt_nat + per_sqrt_nat) if per_sqrt_nat else self.per_sqrt_nat,
                          self.inf_mass, self.dropped, self.dropped_top,
                          round_up(self.loss_rel + loss_rel) if loss_rel else self.loss_rel,
                          round_up(self.loss_down + loss_down) if loss_down else self.loss_down)

    def with_dropped_top(self, top: float) -> ErrorBound:
        """This bound with the losses of left-out mass bounded by ``top`` (the lattice's largest loss)."""
        if self.dropped == -math.inf or top >= self.dropped_top:
            return self
        return ErrorBound(self.loss, self.mass, self.per_nat, self.per_sqrt_nat, self.inf_mass,
                          self.dropped, top, self.loss_rel, self.loss_down)

    def with_dropped(self, log_mass: float, top: float) -> ErrorBound:
        """This bound with a further ``e^log_mass`` of P-mass left out, at losses up to ``top``."""
        if log_mass == -math.inf:
            return self
        return ErrorBound(self.loss, self.mass, self.per_nat, self.per_sqrt_nat, self.inf_mass,
                          _log_add_up(self.dropped, log_mass), max(self.dropped_top, top), self.loss_rel,
                          self.loss_down)

    def times(self, other: ErrorBound, count: int = 1, terms: float = 2.0 ** 20) -> ErrorBound:
        """The bound of a product of this pair with ``count`` copies of ``other`` (before the product's own
        rounding, which the caller adds with :meth:`widened`).

        An atom of the product has ``ℓ = ℓ_a + Σ ℓ_b`` (all ``<= 0``, so the magnitudes add), and terms
        more than :data:`NEGLIGIBLE_NATS` below a merged atom are bounded in aggregate by the caller.
        An atom of the product sums up to ``terms`` such products; the relative error of a sum of positive
        terms is the weighted mean of theirs, and the weighted mean depth of the terms below the sum
        (weights ``e^{-d_j} / Z``, ``Z >= 1``) is their entropy minus ``log Z``, at most ``log terms``: the
        per-nat parts are charged for ``1 + log terms`` nats. Relative loss errors must have been made
        absolute first (:meth:`absolute`)."""
        if self.loss_rel or other.loss_rel or self.loss_down or other.loss_down:
            raise ValueError("ErrorBound.times: make relative loss errors absolute first")
        n = float(count)
        depth = 1.0 + math.log(max(terms, 1.0))
        per_nat = max(self.per_nat, other.per_nat)
        per_sqrt = math.sqrt(self.per_sqrt_nat ** 2 + n * other.per_sqrt_nat ** 2)
        # mass left out of a factor is at most that mass in the product (the others sum to <= 1 + tiny),
        # at a loss the caller bounds (:meth:`with_dropped_top`): each added as :meth:`with_dropped` adds
        # it (formed here at once: this runs for every squaring of a convolution power)
        dropped, top = -math.inf, -math.inf
        for e, times in ((self, 1.0), (other, n)):
            if e.dropped > -math.inf:
                dropped, top = _log_add_up(dropped, e.dropped + math.log(times) + 1e-12), math.inf
        mass = round_up(self.mass + n * other.mass + per_nat * depth + per_sqrt * math.sqrt(depth))
        return ErrorBound(round_up(self.loss + n * other.loss), mass, per_nat, round_up(per_sqrt), None,
                          dropped, top)

    def mirrored(self, max_abs_loss: float) -> ErrorBound:
        """The bound of the reversed pair (Q, P): ``log q = log p - L`` carries both errors (and
        ``|log p| <= |log q| + |L|``; the subtraction rounds once more)."""
        self = self.absolute(max_abs_loss)
        out = self.widened(mass=self.loss + self.per_nat * max_abs_loss + 2 * UNIT_ROUNDOFF
                           + self.per_sqrt_nat * math.sqrt(max_abs_loss),
                           per_nat=2 * UNIT_ROUNDOFF)
        out = ErrorBound(out.loss, out.mass, out.per_nat, out.per_sqrt_nat)
        if self.dropped > -math.inf:      # left-out Q-mass: e^{-L} times the P-mass, |L| <= max_abs_loss
            out = out.with_dropped(self.dropped + max_abs_loss, math.inf)
        return out

    def to_dict(self) -> dict[str, float | None]:
        return dataclasses.asdict(self)


def _log_add_up(a: float, b: float) -> float:
    """``log(e^a + e^b)`` rounded up (``b`` finite): ``max + log1p(e^{-|a - b|})``, the logaddexp's
    roundings below the added 1e-15 and the last one below the step to the next double."""
    hi, lo = max(a, b), min(a, b)
    total = hi if lo == -math.inf else hi + math.log1p(math.exp(lo - hi))
    return round_up(total + 1e-15)


#: The error of a region taken as exact (its atoms are the given numbers).
EXACT = ErrorBound()


#: Largest certified relative error of the float evaluation of the Gaussian profile before mpmath is used.
GAUSSIAN_FLOAT_RTOL = 1e-12


def balle_wang_float(eps: np.ndarray, mu: float) -> tuple[np.ndarray, ...]:
    """The Balle–Wang profile ``δ(ε) = Φ(a) - e^ε Φ(b)``, ``a = -ε/μ + μ/2``, ``b = -ε/μ - μ/2`` (Balle and
    Wang, 2018, Theorem 8) in floats, for any real ``ε`` (array): ``(a, b, log Φ(a), log Φ(b), r, δ)`` with
    ``r = ε + log Φ(b) - log Φ(a)`` and ``δ = Φ(a) (1 - e^r)`` (``nan`` where ``Φ(a)`` is 0 in double). The
    one evaluation of the formula: :func:`gaussian_delta_bounds` certifies it, and
    :func:`lpdp.tradeoff.gaussian_hockey` continues it to ``ε < 0``.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(balle_wang_float(np.array([1.0]), 1.0)[-1][0]), 6)
    0.126937
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _balle_wang(eps, mu, log_ndtr, np.exp, np.expm1)


def _balle_wang(eps: Any, mu: float, log_phi: Any, exp: Any, expm1: Any) -> tuple[Any, ...]:
    """The formula of :func:`balle_wang_float` with the given ``log Φ``, ``exp`` and ``expm1``: numpy's on
    arrays, :mod:`math`'s on one float (:func:`_gaussian_sides`)."""
    q = eps / mu
    a, b = -q + mu / 2, -q - mu / 2
    la, lb = log_phi(a), log_phi(b)
    r = eps + lb - la
    return a, b, la, lb, r, exp(la) * -expm1(r)


def gaussian_delta_bounds(eps: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """Certified ``(lower, upper)`` of ``δ(ε) = Φ(a) - e^ε Φ(b)``, ``a = -ε/μ + μ/2``, ``b = -ε/μ - μ/2``
    (Balle and Wang, 2018, Theorem 8), for the given doubles taken as exact (docs/reliability.md,
    "Gaussian"): :func:`gaussian_delta_float` where its bound is accepted, mpmath elsewhere.

    Elsewhere δ is evaluated with mpmath at 30 digits more than the cancellation costs (``-log10(1-e^r)``),
    whose error is far below the ``1e-25`` relative the sides are widened by.
    """
    eps = np.asarray(eps, dtype=float)
    lo, hi, ok = gaussian_delta_float(eps, mu)
    if ok.all():
        return lo, hi
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)     # writable, also for a scalar ε
    for i in np.flatnonzero(~ok.ravel()):
        a, b = _gaussian_delta_mp(float(eps.flat[i]), mu)
        lo.flat[i] = max(math.nextafter(a, -math.inf), 0.0)
        hi.flat[i] = min(math.nextafter(b, math.inf) if b > 0 else b, 1.0)
    return lo, hi


def gaussian_delta_float(eps: np.ndarray, mu: float, *, for_epsilon: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The float evaluation of the Gaussian profile with its proven error bound: ``(lower, upper, ok)``,
    the sides valid (rounded outward, in [0, 1]) where ``ok``, i.e. where the bound is at most
    :data:`GAUSSIAN_FLOAT_RTOL` relative (:func:`gaussian_delta_bounds` evaluates the rest in mpmath).
    With ``for_epsilon``, ``ok`` is where the bound moves an ε(δ) answer by at most that much relative:
    a relative error ``ρ`` of δ moves the crossing by ``ρ / |d log δ/dε|`` and ``|d log δ/dε| =
    e^r / (1 - e^r)``, so ``ρ <= GAUSSIAN_FLOAT_RTOL max(1, ε e^r / (1 - e^r))`` (in the tails, where δ
    falls fast, this accepts the float route where a δ query needs mpmath). The sides are valid bounds
    wherever the bound is finite; the threshold only decides how tight they must be.

    ``δ = Φ(a) (1 - exp(ε + log Φ(b) - log Φ(a)))``, and:

    * ``a`` and ``b`` are each within ``Δ = 3 u (ε/μ + μ/2)`` of the exact values (a quotient, a halving,
      a sum); ``log Φ`` has slope ``φ/Φ <= |x| + 1``, and :func:`lpdp._special.log_ndtr` is within
      ``c u (|log Φ(x)| + 1)`` of its value (``c`` = ``LOG_NDTR_ULPS``):
      ``|Δ log Φ(x)| <= (|x| + 1) Δ + c u (|log Φ(x)| + 1)``;
    * ``r = ε + log Φ(b) - log Φ(a) <= 0`` carries both errors and ``2 u (ε + |log Φ(a)| + |log Φ(b)|)``;
      ``1 - e^r`` then has relative error ``Δr e^r / (1 - e^r)`` (large only when ``r`` is near 0: tiny
      μ, where the two terms cancel) plus ``2 u``, and the product ``4 u``.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi, ok = gaussian_delta_float(np.array([1.0]), 1.0)
    >>> bool(ok[0] and lo[0] <= 0.12693673750664394 <= hi[0])
    True
    """
    eps = np.asarray(eps, dtype=float)
    # Point by point in math: on the few points a query asks (ten ε, a Newton ladder) the formula and its
    # bound, ~25 float operations, cost less than as many numpy calls on small arrays (16 against 38 µs for
    # ten ε); a curve of 1000 ε takes ~2 ms.
    sides = [_gaussian_sides(e, mu, for_epsilon) for e in eps.ravel().tolist()]
    if not sides:
        return np.zeros(eps.shape), np.ones(eps.shape), np.zeros(eps.shape, dtype=bool)
    lo, hi, ok = zip(*sides, strict=True)
    return np.array(lo).reshape(eps.shape), np.array(hi).reshape(eps.shape), np.array(ok).reshape(eps.shape)


def _gaussian_sides(eps: float, mu: float, for_epsilon: bool) -> tuple[float, float, bool]:
    """One point of :func:`gaussian_delta_float` (whose docstring has the argument): ``(lower, upper,
    ok)``."""
    try:
        a, b, la, lb, r, d = _balle_wang(eps, mu, log_ndtr_one, math.exp, math.expm1)
    except (OverflowError, ValueError):       # where numpy would give inf or NaN: refused (mpmath answers)
        return 0.0, 1.0, False
    if not d > 0.0:                           # r >= 0, Φ(a) = 0 or NaN: refused (d <= 1 follows from r < 0)
        return 0.0, 1.0, False
    u = UNIT_ROUNDOFF
    one_minus = -math.expm1(r)
    da = (3 * u) * abs(b)                     # b = -(ε/μ + μ/2): its rounding is that of the sum
    e_la = (abs(a) + 1) * da + (LOG_NDTR_ULPS * u) * (1 - la)     # log Φ <= 0: |log Φ| = -log Φ
    e_lb = (abs(b) + 1) * da + (LOG_NDTR_ULPS * u) * (1 - lb)
    e_r = e_la + e_lb + (2 * u) * (eps - la - lb)
    cond = math.exp(r) / one_minus
    rho = e_la + e_r * cond + 8 * u
    if not rho <= (GAUSSIAN_FLOAT_RTOL * max(1.0, eps * cond) if for_epsilon else GAUSSIAN_FLOAT_RTOL):
        return 0.0, 1.0, False
    lo = max(math.nextafter(d * (1 - rho), -math.inf), 0.0)
    return lo, min(math.nextafter(d * (1 + rho), math.inf), 1.0), True


def gaussian_epsilon_nominal(delta: float, mu: float) -> float:
    """The ε where the float closed form of ``G_μ``'s profile (:func:`gaussian_delta_float`) crosses
    ``0 < delta < δ(0)``, to a few ulps; ``nan`` when the iteration does not settle. A guess only: the
    certified answers start from it (:func:`lpdp.tradeoff.gaussian_epsilon`).

    Newton's method on ``F(ε) = log δ(ε) - log delta`` (:func:`balle_wang_float`),
    ``F' = -e^r / (1 - e^r)`` with ``r = ε + log Φ(b) - log Φ(a)``, kept inside a bracket (bisection when
    a step leaves it). The bracket starts at ``[0, μ²/2 + μ √(2 log(1/delta))]``: there
    ``δ <= Φ(a) <= e^{-a²/2} = delta``.

    Examples
    --------
    >>> e = gaussian_epsilon_nominal(1e-5, 1.0)
    >>> lo, hi, ok = gaussian_delta_float(np.array([e * (1 - 1e-12), e * (1 + 1e-12)]), 1.0)
    >>> bool(lo[0] > 1e-5 > hi[1])
    True
    """
    target = math.log(delta)
    lo, hi = 0.0, mu * mu / 2 + mu * math.sqrt(-2.0 * target)
    e = hi
    for _ in range(100):
        _, _, la_v, _, r_v, _ = balle_wang_float(np.array([e]), mu)
        la, r = float(la_v[0]), float(r_v[0])
        if not (r < 0 and math.isfinite(la)):
            return math.nan
        f = la + math.log(-math.expm1(r)) - target
        if f > 0:
            lo = e
        else:
            hi = e
        step = f * math.expm1(min(-r, 700.0))   # -F / F' (capped: a huge step is bisected)
        nxt = e + step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - e) <= 4 * math.ulp(e) or nxt in (lo, hi):
            return nxt
        e = nxt
    return math.nan


def _mp_log_ncdf(x: object, rel: object) -> tuple[object, object]:
    """A bracket of ``log Φ(x)`` in mpmath: mpmath's ``ncdf`` (relative error below ``rel``) for moderate
    ``x``; beyond ``|x| = 10^6`` (mpmath's erfc overflows near the float range) the asymptotic series of
    the Mills ratio, ``Φ(x) = φ(x)/|x| (1 - 1/x² + 3/x⁴ - 15/x⁶ + ...)`` for ``x < 0``, whose partial
    sums alternate around it (four terms and the fifth: a bracket of relative width ``105/x⁸``), and
    ``1 - φ(x)/x <= Φ(x) <= 1`` for ``x > 0``."""
    import mpmath

    if abs(x) <= 10 ** 6:
        v = mpmath.log(mpmath.ncdf(x))
        return v + mpmath.log1p(-rel), v + mpmath.log1p(rel)
    log_phi = -x * x / 2 - mpmath.log(2 * mpmath.pi) / 2
    if x < 0:
        base = log_phi - mpmath.log(-x)
        w = 1 / (x * x)
        s4 = 1 - w + 3 * w ** 2 - 15 * w ** 3
        return base + mpmath.log(s4), base + mpmath.log(s4 + 105 * w ** 4)
    return mpmath.log1p(-mpmath.exp(log_phi) / x), mpmath.mpf(0)


def _gaussian_delta_mp(eps: float, mu: float) -> tuple[float, float]:
    """``δ(ε)`` of ``G_μ`` in mpmath as a bracket of doubles (see :func:`gaussian_delta_bounds`): interval
    bounds of ``log Φ(a)`` and ``log Φ(b)``, then ``Φ(a) - e^ε Φ(b)`` from the ends that make it largest
    and smallest, at a precision raised until the cancellation leaves 25 digits."""
    import mpmath

    digits = 40
    for _ in range(6):
        with mpmath.workdps(digits):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a, b = -e / m + m / 2, -e / m - m / 2
            rel = mpmath.mpf(10) ** (5 - digits)
            la_lo, la_hi = _mp_log_ncdf(a, rel)
            lb_lo, lb_hi = _mp_log_ncdf(b, rel)
            hi = mpmath.exp(la_hi) - mpmath.exp(e + lb_lo)
            lo = mpmath.exp(la_lo) - mpmath.exp(e + lb_hi)
            if lo > 0 and (hi - lo) / lo < mpmath.mpf(10) ** -20:
                hi_v = float(hi)
                return float(lo), hi_v if hi_v > 0 else 5e-324
            top = mpmath.exp(la_hi)        # δ <= Φ(a) whatever the cancellation
            lost = -mpmath.log10((hi - lo) / top) if hi > lo and top > 0 else 0
            digits = max(digits + 20, int(digits + 25 + lost))
    return 0.0, max(min(float(top), 1.0), 5e-324)
