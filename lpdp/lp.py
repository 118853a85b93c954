"""Solver-backed queries over intersections of regions: HiGHS linear programs through cvxpy.

An intersection ``∩_r F_r`` is the polygon ``{z = (bI, bII) : G z <= h}``: one half-plane per edge of every
region (``1 - bII - e^L bI <= δ_r(L)``, scaled so that no coefficient exceeds 1 and nothing overflows),
plus ``z >= 0`` and ``bI + bII <= 1``. Each query is a cvxpy problem built once with Parameters and
re-solved. After every solve the status must be optimal and the primal residuals within
:data:`~lpdp._numerics.SOLVER_RESIDUAL_TOL`; otherwise a :class:`~lpdp.errors.SolverError` is raised, never
a number.

The solver only *finds* the answer; the number returned is a certificate checked outside it, with every
floating-point error bounded:

* ``delta`` is an upper bound (a valid privacy guarantee). Any valid inequality ``1 - bII - σ bI <= D`` of
  the intersection bounds ``δ(ε)`` when ``σ <= e^ε`` (because ``bI >= 0``), and a convex combination of two
  such inequalities is again one. The certificate uses the lines the LP found active at its optimum: for
  slopes ``σ_a < e^ε < σ_b`` and a weight ``t`` chosen so that ``(1 - t) σ_a + t σ_b <= e^ε`` holds in
  exact arithmetic (checked through ``expm1`` with its error bounded), the bound is
  ``(1 - t) D_a + t D_b``, where ``D = min_r δ_r`` at each slope is evaluated as a sum of positive terms
  (``math.fsum``) and rounded up by a margin that covers the error of ``exp``/``expm1`` and underflow. The
  single line at ``σ = e^ε`` itself (``min_r δ_r(ε)``) is always a candidate. Nothing subtracts from 1, so
  δ keeps its relative precision however small it is.
* ``tradeoff`` is a lower bound on the type II error (also the safe side): the intersection's trade-off
  function is the largest of the regions' lines ``1 - D - σ t``, evaluated with outward rounding.

The certificate must agree with the solver's primal value to the tolerance; a larger duality gap raises.
Nearly parallel constraints (ε differing by ~1e-9) make vertices ill-conditioned; HiGHS may then fail,
which raises, never answers.

HiGHS prints a banner on the C-level standard output when an instance is created (HiGHS#2749); solves run
with file descriptor 1 redirected so ``--json`` output stays clean.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator, Sequence

import numpy as np

from lpdp._numerics import MEMBERSHIP_TOL, SOLVER_RESIDUAL_TOL
from lpdp.errors import ParameterError, SolverError
from lpdp.region import PrivacyRegion

__all__ = ["IntersectionLP", "is_subset"]

_HIGHS_OPTIONS = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}
#: Machine epsilon: a result within k ulps of the truth is within a factor ``1 ± k·_EPS_M``.
_EPS_M = 2.0 ** -52
#: The smallest subnormal: the absolute error of a term that underflows.
_TINY = 2.0 ** -1074
_NORMAL_MIN = 2.0 ** -1022
#: A row counts as active at the optimum when its multiplier or its slack is below these.
_ACTIVE_DUAL_RTOL = 1e-12
_ACTIVE_SLACK = 1e-9
#: Lines tried on each side of the query slope in the δ certificate.
_PAIR_CANDIDATES = 8


@contextlib.contextmanager
def _stdout_silenced() -> Iterator[None]:
    """Send C-level writes to file descriptor 1 to /dev/null for the duration (HiGHS banner)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):   # captured streams without a descriptor
        fd = 1
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def _delta_up(region: PrivacyRegion, loss: float) -> float:
    """An upper bound on ``max_{z in F} (1 - bII - e^loss bI)`` for any real ``loss``, rounding included.

    ``δ(σ) = p_inf + Σ_{L_j > loss} p_j (1 - e^{loss - L_j})``: each term is ``exp(log p)`` times
    ``-expm1(loss - L_j)``, within 10 ulps of its exact value (``exp`` and ``expm1`` within 4 ulps each, the
    argument's rounding amplified at most once, one product), or within a few subnormals of it when it
    underflows; ``math.fsum`` adds them with one rounding. The margin ``(1 + 16 ε_m)`` plus 8 subnormals
    per term below the normal range covers all of it.
    """
    L = region.losses
    above = L > loss
    with np.errstate(under="ignore"):
        terms = np.exp(region.log_p[above]) * -np.expm1(loss - L[above])
    p_inf = math.exp(region.log_p_inf)
    underflows = int(np.count_nonzero(terms < _NORMAL_MIN))
    underflows += int(region.log_p_inf > -math.inf and p_inf < _NORMAL_MIN)
    bound = (math.fsum(terms) + p_inf) * (1.0 + 16.0 * _EPS_M) + 8.0 * underflows * _TINY
    return min(1.0, float(np.nextafter(bound, math.inf)))


def _half_planes(regions: Sequence[PrivacyRegion]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``G z <= h`` and the log-slope of the line each row is (``-inf``: ``bII >= 0``; NaN: no line).

    The line ``1 - bII - e^L bI <= d`` is divided by ``max(1, e^L)``: ``(-1, -e^{-L}) z <= -(1 - d) e^{-L}``
    for ``L > 0`` and ``(-e^L, -1) z <= d - 1`` otherwise, so nothing overflows however large ``|L|`` is.
    """
    rows, rhs, slopes = [], [], []
    for r in regions:
        if len(r) == 0:
            continue
        L = r.losses
        d = r.support(L)
        with np.errstate(under="ignore"):
            down, up = np.exp(-np.maximum(L, 0.0)), np.exp(np.minimum(L, 0.0))
        rows.append(np.column_stack([-up, -down]))
        rhs.append((d - 1.0) * down)
        slopes.append(L)
    rows += [np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, 1.0]])]
    rhs += [np.array([0.0, 0.0, 1.0])]
    slopes += [np.array([math.nan, -math.inf, math.nan])]
    return np.vstack(rows), np.concatenate(rhs), np.concatenate(slopes)


class IntersectionLP:
    """Linear programs over the intersection of any number of privacy regions.

    Parameters
    ----------
    regions : sequence of PrivacyRegion
        The regions to intersect (at least one).

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.lp import IntersectionLP
    >>> lp = IntersectionLP([PrivacyRegion.from_dp(1.3, 0), PrivacyRegion.from_dp(0.5, 0.2)])
    >>> round(lp.delta(1.0), 9)
    0.094133071
    >>> lp.contains((0.5, 0.4))
    True
    """

    def __init__(self, regions: Sequence[PrivacyRegion]) -> None:
        import cvxpy as cp

        try:
            regions = list(regions)
        except TypeError:
            raise ParameterError(f"regions={regions!r}: need a sequence of PrivacyRegion") from None
        if not regions or not all(isinstance(r, PrivacyRegion) for r in regions):
            raise ParameterError(f"regions={regions!r}: need at least one PrivacyRegion")
        self._regions = regions
        self._G, self._h, self._row_loss = _half_planes(regions)
        self._bound_cache: dict[float, float] = {}
        self._z = cp.Variable(2)
        self._weights = cp.Parameter(2, nonneg=True)
        self._t = cp.Parameter()
        self._point = cp.Parameter(2)
        self._s = cp.Variable()
        feas = self._G @ self._z <= self._h
        self._delta_con = feas
        self._delta_prob = cp.Problem(cp.Minimize(self._weights @ self._z), [feas])
        self._trade_cons = [self._G @ self._z <= self._h, self._z[0] <= self._t]
        self._trade_prob = cp.Problem(cp.Minimize(self._z[1]), self._trade_cons)
        self._member_prob = cp.Problem(cp.Minimize(self._s),
                                       [self._G @ self._point - self._h <= self._s, self._s >= 0])

    def _solve(self, prob) -> None:
        try:
            with _stdout_silenced():
                prob.solve(solver="HIGHS", **_HIGHS_OPTIONS)
        except Exception as exc:  # cvxpy raises its own SolverError subclasses
            raise SolverError(f"HiGHS failed: {exc}") from None
        if prob.status != "optimal":
            raise SolverError(f"HiGHS returned status {prob.status!r} (expected 'optimal')")

    def _check_primal(self) -> np.ndarray:
        z = np.asarray(self._z.value, dtype=float)
        resid = float(np.max(self._G @ z - self._h))
        if not resid <= SOLVER_RESIDUAL_TOL:
            raise SolverError(f"LP solution violates a constraint by {resid:.3g} "
                              f"(tolerance {SOLVER_RESIDUAL_TOL:g})")
        return z

    def _active_losses(self, z: np.ndarray, dual: object) -> np.ndarray:
        """Log-slopes of the lines active at the optimum (positive multiplier or no slack), deduplicated."""
        lam = np.nan_to_num(np.asarray(dual, dtype=float).ravel()[: self._h.size])
        active = (lam > _ACTIVE_DUAL_RTOL * max(float(lam.max(initial=0.0)), 1e-300)) | \
                 (self._h - self._G @ z <= _ACTIVE_SLACK)
        loss = self._row_loss[active]
        return np.unique(loss[~np.isnan(loss) & (loss < math.inf)])

    def _bound(self, loss: float) -> float:
        """``D(σ) = min_r δ_r(σ)`` at ``σ = e^loss``, rounded up: ``1 - bII - σ bI <= D`` holds on the set."""
        if loss == -math.inf:
            return 1.0           # the line bII >= 0
        if loss not in self._bound_cache:
            self._bound_cache[loss] = min(_delta_up(r, loss) for r in self._regions)
        return self._bound_cache[loss]

    def _certified_support(self, loss: float, lines: np.ndarray) -> float:
        """Least certified upper bound on ``max (1 - bII - e^loss bI)`` from the given lines (see module)."""
        best = self._bound(loss)
        lows = np.sort(lines[lines < loss])[::-1][:_PAIR_CANDIDATES]
        highs = np.sort(lines[lines > loss])[:_PAIR_CANDIDATES]
        for a in lows:
            # Real weights (1 - t, t) keep the combined slope at most e^loss iff t β <= (1 - t) α with
            # α = 1 - e^{a - loss} and β = e^{b - loss} - 1; bound α below and β above, then t below.
            alpha = 1.0 if a == -math.inf else -math.expm1(a - loss)
            alpha_lo = alpha * (1.0 - 8.0 * _EPS_M)
            for b in highs:
                x = float(b - loss)
                if x > 700.0:
                    continue     # the weight on b would underflow: the line at e^loss is as good
                beta_up = math.expm1(x) * (1.0 + 2.0 * (x + 8.0) * _EPS_M)
                t = alpha_lo / (alpha_lo + beta_up) * (1.0 - 4.0 * _EPS_M)
                value = ((1.0 - t) * self._bound(float(a)) + t * self._bound(float(b))) * (1.0 + 8.0 * _EPS_M)
                best = min(best, float(np.nextafter(value, math.inf)))
        return best

    def _support(self, loss: float) -> float:
        """``max (1 - bII - e^loss bI)`` over the intersection, as a certified upper bound."""
        with np.errstate(under="ignore"):
            w = np.array([math.exp(min(loss, 0.0)), math.exp(-max(loss, 0.0))])
        self._weights.value = w      # minimise (e^loss bI + bII) / max(1, e^loss)
        self._solve(self._delta_prob)
        z = self._check_primal()
        bound = self._certified_support(loss, self._active_losses(z, self._delta_con.dual_value))
        gap = bound * w[1] - (w[1] * (1.0 - z[1]) - w[0] * z[0])    # in units of max(1, e^loss)
        if gap > SOLVER_RESIDUAL_TOL:
            raise SolverError(f"duality gap {gap:.3g} at epsilon {loss!r} exceeds the tolerance")
        return max(0.0, bound)

    def delta(self, epsilon: float | Sequence[float]) -> float | np.ndarray:
        """Tight ``δ(ε) = max (1 - bII - e^ε bI)`` over the intersection, as a certified upper bound.

        The bound holds in exact arithmetic (see the module docstring) and is within the solver's
        tolerance of the optimum, usually within a few ulps.
        """
        try:
            eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        except (TypeError, ValueError):
            raise ParameterError(f"epsilon={epsilon!r}: must be a number or an array of numbers") \
                from None
        if np.any(~np.isfinite(eps)) or np.any(eps < 0):
            raise ParameterError(f"epsilon={epsilon!r}: must be finite and >= 0")
        out = np.array([self._support(float(e)) for e in eps.ravel()])
        return float(out[0]) if np.ndim(epsilon) == 0 else out.reshape(eps.shape)

    def tradeoff(self, t: float) -> float:
        """Least type II error at type I error at most ``t``, as a certified lower bound.

        The intersection's trade-off function is the largest of its regions' lines ``1 - D(σ) - σ t``;
        the lines active at the LP optimum are evaluated with outward rounding, so the answer never
        exceeds the exact value (the side that keeps a guarantee valid).
        """
        try:
            t = float(t)
        except (TypeError, ValueError):
            raise ParameterError(f"t={t!r}: must be a number in [0, 1]") from None
        if not 0.0 <= t <= 1.0:
            raise ParameterError(f"t={t!r}: must be in [0, 1]")
        self._t.value = t
        self._solve(self._trade_prob)
        z = self._check_primal()
        if z[0] > t + SOLVER_RESIDUAL_TOL:
            raise SolverError(f"LP solution has type I error {z[0]!r} > t = {t!r}")
        lower = 0.0
        for loss in self._active_losses(z, self._trade_cons[0].dual_value):
            if loss == -math.inf:
                continue         # bII >= 0: the lower bound 0 we start from
            c_lo = float(np.nextafter(1.0 - self._bound(float(loss)), -math.inf))
            if t > 0.0:
                slope_up = math.exp(min(loss, 709.0)) * (1.0 + 8.0 * _EPS_M)
                c_lo = float(np.nextafter(c_lo - float(np.nextafter(slope_up * t, math.inf)), -math.inf))
            lower = max(lower, c_lo)
        if z[1] - lower > SOLVER_RESIDUAL_TOL:
            raise SolverError(f"duality gap {z[1] - lower:.3g} at t={t!r} exceeds the tolerance")
        return min(1.0, lower)

    def contains(self, point: Sequence[float], *, tol: float = MEMBERSHIP_TOL) -> bool:
        """Whether ``(bI, bII)`` satisfies every half-plane (largest violation by LP, within ``tol``)."""
        try:
            p = np.asarray(point, dtype=float)
        except (TypeError, ValueError):
            p = np.empty(0)
        if p.shape != (2,) or not np.all(np.isfinite(p)):
            raise ParameterError(f"point={point!r}: must be a finite (type I, type II) pair")
        self._point.value = p
        self._solve(self._member_prob)
        s = float(self._s.value)
        if abs(s - max(0.0, float(np.max(self._G @ p - self._h)))) > SOLVER_RESIDUAL_TOL:
            raise SolverError("LP membership answer disagrees with its own constraint residuals")
        return s <= tol

    def contains_region(self, other: PrivacyRegion | IntersectionLP, *, tol: float = 1e-9) -> bool:
        """Whether every point of ``other`` (a region or an intersection) lies in this intersection.

        Decided line by line: for each edge line ``1 - bII - e^L bI <= δ_r(L)`` of this intersection, the
        certified upper bound on ``max_{z in other} (1 - bII - e^L bI)`` must be at most ``δ_r(L) + tol``.
        """
        inner = other if isinstance(other, IntersectionLP) else IntersectionLP([other])
        for r in self._regions:
            for loss, d in zip(r.losses, r.support(r.losses), strict=True):
                if inner._support(float(loss)) > d + tol:
                    return False
        return True


def is_subset(inner: Sequence[PrivacyRegion], outer: Sequence[PrivacyRegion]) -> bool:
    """Whether ``∩ inner ⊆ ∩ outer``, decided by LPs over the inner intersection.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.lp import is_subset
    >>> is_subset([PrivacyRegion.from_dp(0.5, 0)], [PrivacyRegion.from_dp(1.0, 0.1)])
    True
    """
    return IntersectionLP(outer).contains_region(IntersectionLP(inner))
