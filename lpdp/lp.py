"""Solver-backed queries over intersections of regions: HiGHS linear programs through cvxpy.

An intersection ``∩_r F_r`` is the polygon ``{z = (bI, bII) : G z <= h}``: one half-plane per edge of every
region (``bII >= 1 - δ_r(L) - e^L bI``, each row scaled by ``max(1, e^L)``), plus ``z >= 0`` and
``bI + bII <= 1``. Each query is a cvxpy problem built once with Parameters and re-solved. After every solve
the status must be optimal and the primal residuals within :data:`~lpdp._numerics.SOLVER_RESIDUAL_TOL`;
otherwise a :class:`~lpdp.errors.SolverError` is raised, never a number. Answers are dual certificates:
the δ query returns ``h^T λ + ||G^T λ - c||_1`` (an upper bound for any ``λ >= 0``) and the trade-off
query a lower bound on the type II error, so both err on the safe side, and a duality gap above the
tolerance is an error. Nearly parallel constraints (ε differing by ~1e-9) make vertices ill-conditioned;
HiGHS may then fail, which raises, never answers.

HiGHS prints a banner on the C-level standard output when an instance is created (HiGHS#2749); solves run
with file descriptor 1 redirected so ``--json`` output stays clean.
"""

from __future__ import annotations

import contextlib
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


def _half_planes(regions: Sequence[PrivacyRegion]) -> tuple[np.ndarray, np.ndarray]:
    rows, rhs = [], []
    for r in regions:
        if len(r) == 0:
            continue
        slope = np.exp(r.losses)
        d = r.support(r.losses)
        scale = np.maximum(1.0, slope)
        rows.append(np.column_stack([-slope / scale, -1.0 / scale]))
        rhs.append((d - 1.0) / scale)
    rows += [np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, 1.0]])]
    rhs += [np.array([0.0, 0.0, 1.0])]
    return np.vstack(rows), np.concatenate(rhs)


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

        regions = list(regions)
        if not regions or not all(isinstance(r, PrivacyRegion) for r in regions):
            raise ParameterError(f"regions={regions!r}: need at least one PrivacyRegion")
        self._G, self._h = _half_planes(regions)
        self._z = cp.Variable(2)
        self._slope = cp.Parameter(nonneg=True)
        self._t = cp.Parameter()
        self._point = cp.Parameter(2)
        self._s = cp.Variable()
        feas = self._G @ self._z <= self._h
        self._delta_con = feas
        self._delta_prob = cp.Problem(cp.Maximize(1 - self._z[1] - self._slope * self._z[0]), [feas])
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

    def _support(self, slope: float) -> float:
        """``max (1 - bII - slope·bI)`` over the intersection, as a certified upper bound (dual)."""
        self._slope.value = slope
        self._solve(self._delta_prob)
        z = self._check_primal()
        lam = np.maximum(np.asarray(self._delta_con.dual_value, dtype=float), 0.0)
        c = np.array([-slope, -1.0])
        dual_bound = 1.0 + float(self._h @ lam) + float(np.abs(self._G.T @ lam - c).sum())
        primal = 1.0 - z[1] - slope * z[0]
        if dual_bound - primal > SOLVER_RESIDUAL_TOL * max(1.0, slope):
            raise SolverError(f"duality gap {dual_bound - primal:.3g} at slope {slope!r} exceeds the "
                              f"tolerance")
        return min(1.0, max(0.0, dual_bound))

    def delta(self, epsilon: float | Sequence[float]) -> float | np.ndarray:
        """Tight ``δ(ε) = max (1 - bII - e^ε bI)`` over the intersection (a certified upper bound)."""
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        if np.any(~np.isfinite(eps)) or np.any(eps < 0):
            raise ParameterError(f"epsilon={epsilon!r}: must be finite and >= 0")
        out = np.array([self._support(float(np.exp(e))) for e in eps])
        return float(out[0]) if np.ndim(epsilon) == 0 else out

    def tradeoff(self, t: float) -> float:
        """Least type II error at type I error at most ``t`` (the intersection's trade-off function)."""
        t = float(t)
        if not 0.0 <= t <= 1.0:
            raise ParameterError(f"t={t!r}: must be in [0, 1]")
        self._t.value = t
        self._solve(self._trade_prob)
        z = self._check_primal()
        if z[0] > t + SOLVER_RESIDUAL_TOL:
            raise SolverError(f"LP solution has type I error {z[0]!r} > t = {t!r}")
        # Dual certificate: for λ, μ >= 0, bII >= -(h^T λ + t μ) - ||G^T λ + μ e_I + e_II||_1 on the
        # feasible set (z in [0, 1]^2), a lower bound on f(t): the side that keeps a guarantee valid.
        lam = np.maximum(np.asarray(self._trade_cons[0].dual_value, dtype=float), 0.0)
        mu = max(float(np.asarray(self._trade_cons[1].dual_value)), 0.0)
        resid = self._G.T @ lam + np.array([mu, 1.0])
        lower = -(float(self._h @ lam) + t * mu) - float(np.abs(resid).sum())
        if z[1] - lower > SOLVER_RESIDUAL_TOL:
            raise SolverError(f"duality gap {z[1] - lower:.3g} at t={t!r} exceeds the tolerance")
        return float(min(1.0, max(0.0, lower)))

    def contains(self, point: Sequence[float], *, tol: float = MEMBERSHIP_TOL) -> bool:
        """Whether ``(bI, bII)`` satisfies every half-plane (largest violation by LP, within ``tol``)."""
        p = np.asarray(point, dtype=float)
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

        Decided half-plane by half-plane: for each of this intersection's edge lines
        ``1 - bII - s bI <= d``, the LP ``max_{z in other} (1 - bII - s bI)`` must be at most ``d + tol``.
        """
        inner = other if isinstance(other, IntersectionLP) else IntersectionLP([other])
        G, h = self._G[:-3], self._h[:-3]
        # Row (-s/c, -1/c) <= (d - 1)/c with c = max(1, s).
        scale = -1.0 / G[:, 1]
        for s, d in zip(G[:, 0] * scale * -1.0, 1.0 + h * scale, strict=True):
            if inner._support(float(s)) > d + tol:
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
