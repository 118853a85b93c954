"""`PrivacyRegion`: the exact privacy region of a finite dominating pair (Sec. II-B).

A region is the set ``{(bI, bII) : f(bI) <= bII <= 1 - bI}`` of a trade-off function ``f``. Everything lpdp
builds from (ε, δ) constraints is a convex polygon, and every such polygon is the region of a finite
*dominating pair*: each edge of the lower boundary is one outcome with mass ``p`` under the first
distribution (``P = M(x)``) and ``q`` under the second (``Q = M(x')``) and privacy loss
``L = log(p / q)``. Edges are stored in log space, sorted by loss (steepest edge, largest loss, first):

* edge vector ``(q_j, -p_j)``; the boundary starts at ``(0, 1 - p_inf)`` where ``p_inf`` is the mass of
  the outcomes with ``q = 0`` (loss ``+inf``, the vertical edge) and ends at ``(1 - q_ninf, 0)`` where
  ``q_ninf`` is the mass of outcomes with ``p = 0`` (loss ``-inf``);
* tight δ: ``δ(ε) = p_inf + Σ_{L_j > ε} p_j (1 - e^{ε - L_j})``, a sum of positive terms (no cancellation).

With this orientation ``δ(ε)`` is the hockey-stick divergence ``H_{e^ε}(P || Q)`` of the pair, and equals
the support function ``max_{(bI, bII) in F} (1 - bII - e^ε bI)`` of the region (design.md, "One object,
three faces").
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from lpdp._numerics import (
    EXACT,
    MASS_SUM_RTOL,
    MEMBERSHIP_TOL,
    NEGLIGIBLE_NATS,
    UNIT_ROUNDOFF,
    ErrorBound,
    log1mexp,
    log1mexp_one,
    logsumexp,
    round_down,
    round_up,
)
from lpdp._search import bisect
from lpdp._validate import check_delta, check_epsilon, each_value
from lpdp.display import format_lower, format_upper, region_html
from lpdp.errors import InternalError, ParameterError
from lpdp.plot import regions

__all__ = ["PrivacyRegion", "LowerSide", "check_normalised", "largest_delta_gap", "lines_error",
           "merge_error"]

_NEG_INF = -math.inf
_LOG_TINY = math.log(1e-300)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=float)
    a.setflags(write=False)
    return a


class PrivacyRegion:
    """The privacy region of a finite dominating pair, kept as exact log-space edges.

    Build it with :meth:`from_dp`, :meth:`from_constraints`, :meth:`from_pair`, :meth:`from_vertices` or
    :meth:`from_log_masses`; it is immutable.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> r = PrivacyRegion.from_constraints([(1.3, 0.0), (0.5, 0.2)])
    >>> [(round(e, 4), round(d, 4)) for e, d in r.profile()]
    [(0.5, 0.2), (1.3, 0.0)]
    >>> round(float(r.delta(1.0)), 6)
    0.094133
    >>> PrivacyRegion.from_dp(1.3, 0.0).contains(r)
    True
    """

    __slots__ = ("_loss", "_log_p", "_log_q", "_log_p_inf", "_log_q_ninf", "_prefix", "_err", "_term_queries",
                 "__weakref__")

    _loss: np.ndarray
    _log_p: np.ndarray
    _log_q: np.ndarray
    _log_p_inf: float
    _log_q_ninf: float
    _prefix: _Face | None
    _err: ErrorBound

    # ------------------------------------------------------------------ construction
    def __init__(self, loss: np.ndarray, log_p: np.ndarray, log_q: np.ndarray,
                 log_p_inf: float, log_q_ninf: float, err: ErrorBound = EXACT) -> None:
        # Private: use the from_* constructors, which validate and normalise.
        object.__setattr__(self, "_loss", _readonly(loss))
        object.__setattr__(self, "_log_p", _readonly(log_p))
        object.__setattr__(self, "_log_q", _readonly(log_q))
        object.__setattr__(self, "_log_p_inf", float(log_p_inf))
        object.__setattr__(self, "_log_q_ninf", float(log_q_ninf))
        object.__setattr__(self, "_prefix", None)
        object.__setattr__(self, "_term_queries", 0)
        object.__setattr__(self, "_err", err)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"PrivacyRegion is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"PrivacyRegion is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[type, tuple]:
        # Pickle (Dask workers, copy.deepcopy) through the constructor: slot assignment is refused above,
        # and the prefix face is rebuilt on the first query.
        return (PrivacyRegion, (self._loss, self._log_p, self._log_q, self._log_p_inf, self._log_q_ninf,
                                self._err))

    @classmethod
    def from_log_masses(cls, loss: Iterable[float], log_p: Iterable[float],
                        log_q: Iterable[float] | None = None, *, log_p_inf: float = _NEG_INF,
                        log_q_ninf: float = _NEG_INF, check_total: bool = True,
                        error: ErrorBound | None = None) -> PrivacyRegion:
        """Region of a dominating pair given as finite losses and log masses.

        Parameters
        ----------
        loss : array_like
            Finite privacy losses ``L_j = log(p_j / q_j)``. Atoms with exactly equal losses are merged
            (give equal losses for equal keys, e.g. computed from integer count vectors).
        log_p, log_q : array_like
            Natural logs of the masses under P and Q. ``log_q`` defaults to ``log_p - loss``.
        log_p_inf : float
            Log of the P-mass of outcomes with ``q = 0`` (loss ``+inf``).
        log_q_ninf : float
            Log of the Q-mass of outcomes with ``p = 0`` (loss ``-inf``).
        check_total : bool
            Require both distributions to sum to one (relative tolerance 1e-9).
        error : ErrorBound, optional
            How far the given atoms may lie from the exact pair they stand for (default: they are exact).
            Certified queries (:meth:`delta`, :meth:`delta_lower`, :meth:`epsilon`, ...) widen by it.

        Examples
        --------
        >>> import numpy as np
        >>> from lpdp import PrivacyRegion
        >>> e = 1.0
        >>> lp = np.log([np.e / (1 + np.e), 1 / (1 + np.e)])
        >>> r = PrivacyRegion.from_log_masses([e, -e], lp)
        >>> round(float(r.delta(0.0)), 6)
        0.462117
        """
        L = np.asarray(list(loss) if not isinstance(loss, np.ndarray) else loss, dtype=float)
        lp = np.asarray(list(log_p) if not isinstance(log_p, np.ndarray) else log_p, dtype=float)
        if L.shape != lp.shape or L.ndim != 1:
            raise ParameterError(f"loss and log_p must be 1-D of equal length (got {L.shape} and "
                                 f"{lp.shape})")
        # a derived Q-mass is at most 1 (log p - L cancels for large |L|: an ulp of L = -16650, the
        # all-"other" atom of 343 randomized responses with ε0 = 48.5, is 3.6e-12)
        lq = np.minimum(lp - L, 0.0) if log_q is None else np.asarray(
            list(log_q) if not isinstance(log_q, np.ndarray) else log_q, dtype=float)
        if lq.shape != L.shape:
            raise ParameterError(f"log_q must have the shape of loss {L.shape} (got {lq.shape})")
        if not np.all(np.isfinite(L)):
            raise ParameterError("loss: every finite atom needs a finite loss; put q = 0 outcomes in "
                                 "log_p_inf and p = 0 outcomes in log_q_ninf")
        if np.any(np.isnan(lp)) or np.any(np.isnan(lq)) or np.any(lp > 1e-12) or np.any(lq > 1e-12):
            raise ParameterError("log_p, log_q: log masses must be <= 0 and not NaN")
        keep = np.isfinite(lp) & np.isfinite(lq)
        L, lp, lq = L[keep], lp[keep], lq[keep]
        order = np.argsort(-L, kind="stable")
        L, lp, lq = L[order], lp[order], lq[order]
        err = EXACT if error is None else error
        if L.size > 1:
            starts = np.flatnonzero(np.concatenate(([True], np.diff(L) != 0)))
            if starts.size < L.size:
                lp = _log_reduce(lp, starts)
                lq = _log_reduce(lq, starts)
                L = L[starts]
                err = merge_error(err, int(np.max(np.diff(np.append(starts, keep.sum())))))
        if check_total:
            tp = np.logaddexp(logsumexp(lp), log_p_inf)
            tq = np.logaddexp(logsumexp(lq), log_q_ninf)
            for name, t in (("P", tp), ("Q", tq)):
                if not abs(math.expm1(t)) <= MASS_SUM_RTOL:
                    raise ParameterError(f"masses under {name} sum to {math.exp(t)!r}: must sum to 1")
        return cls(L, lp, lq, log_p_inf, log_q_ninf, err)

    @classmethod
    def from_pair(cls, p: Sequence[float], q: Sequence[float], *, log: bool = False) -> PrivacyRegion:
        """Region of the pair (P, Q) on a finite outcome set: ``δ(ε) = Σ_j max(0, p_j - e^ε q_j)``.

        The given floats are taken as exact masses; each loss and log mass is computed in log space and
        carries its floating-point error (:class:`~lpdp._numerics.ErrorBound`), so certified queries
        never understate δ (docs/reliability.md, "Tables").

        Parameters
        ----------
        p, q : sequence of float
            Masses of each outcome under P = M(x) and Q = M(x') (or their logs with ``log=True``).

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> r = PrivacyRegion.from_pair([0.1, 0.6, 0.3, 0.0], [0.0, 0.3, 0.6, 0.1])
        >>> round(float(r.delta(0.0)), 6)
        0.4
        """
        lp = np.asarray(p, dtype=float)
        lq = np.asarray(q, dtype=float)
        if lp.shape != lq.shape or lp.ndim != 1 or lp.size == 0:
            raise ParameterError(f"p and q must be non-empty 1-D sequences of equal length "
                                 f"(got shapes {lp.shape} and {lq.shape})")
        if not log:
            for name, a in (("p", lp), ("q", lq)):
                bad = np.flatnonzero(~((a >= 0) & (a <= 1)))
                if bad.size:
                    i = int(bad[0])
                    raise ParameterError(f"{name}[{i}]={float(a[i])!r}: masses must be in [0, 1]")
            pm, qm = lp, lq
            with np.errstate(divide="ignore"):
                lp, lq = np.log(lp), np.log(lq)
        p_zero, q_zero = lp == _NEG_INF, lq == _NEG_INF
        finite = ~p_zero & ~q_zero
        u = UNIT_ROUNDOFF
        loss = lp[finite] - lq[finite]
        # log(p) and log(q): numpy's log is within 4 ulps, 8 u |log p| (ulp(x) <= 2 u |x|).
        eta = 2 * u * np.abs(loss) + 8 * u * (np.abs(lp[finite]) + np.abs(lq[finite]))
        per_nat = 0.0 if log else 8 * u
        if log:
            eta = 1.01 * u * np.abs(loss)                   # one rounded subtraction of exact logs
        else:
            # log(p / q) where the quotient is a normal double: one rounding (u) and one log (8 u |L|)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
                ratio = pm[finite] / qm[finite]
            normal = np.isfinite(ratio) & (ratio >= np.finfo(float).tiny)
            with np.errstate(divide="ignore"):
                direct = np.log(np.where(normal, ratio, 1.0))
            loss = np.where(normal, direct, loss)
            eta = np.where(normal, 1.01 * u + 8 * u * np.abs(loss), eta)
            eta = np.where(pm[finite] == qm[finite], 0.0, eta)     # equal masses: loss exactly 0
        n_inf = int(np.count_nonzero(q_zero & ~p_zero) + np.count_nonzero(p_zero & ~q_zero))
        err = ErrorBound(loss=round_up(float(np.max(eta, initial=0.0))),
                         mass=u * (2 * n_inf + 8) + per_nat * NEGLIGIBLE_NATS, per_nat=per_nat + 2 * u)
        return cls.from_log_masses(
            loss, lp[finite], lq[finite],
            log_p_inf=logsumexp(lp[q_zero & ~p_zero]),
            log_q_ninf=logsumexp(lq[p_zero & ~q_zero]), error=err,
        )

    @classmethod
    def from_dp(cls, epsilon: float, delta: float) -> PrivacyRegion:
        """``R(ε, δ)``, the region of ``f_{ε,δ}`` (Sec. II-B); ``R(0, 1)`` is the full triangle.

        Its dominating pair is the (ε, δ) randomised response: P = [δ, (1-δ)e^ε/(1+e^ε),
        (1-δ)/(1+e^ε), 0] and Q its mirror.

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> PrivacyRegion.from_dp(0.0, 1.0).area()
        0.5
        """
        eps = check_epsilon(epsilon, "epsilon")
        dlt = check_delta(delta, "delta")
        log_p_inf = math.log(dlt) if dlt > 0 else _NEG_INF
        if dlt == 1.0:
            return cls(np.empty(0), np.empty(0), np.empty(0), 0.0, 0.0)
        # log1p, logaddexp, log: a few ulps each of values below 1 + ε in magnitude; the sums round once.
        err = ErrorBound(mass=16 * UNIT_ROUNDOFF * (1.0 + eps), per_nat=8 * UNIT_ROUNDOFF,
                         inf_mass=2 * UNIT_ROUNDOFF * (abs(log_p_inf) + 1.0) if dlt > 0 else None,
                         inf_exact=dlt if dlt > 0 else None)
        log_rest = math.log1p(-dlt)
        hi = log_rest + eps - float(np.logaddexp(0.0, eps))   # (1-δ) e^ε / (1+e^ε)
        lo = log_rest - float(np.logaddexp(0.0, eps))         # (1-δ) / (1+e^ε)
        if eps == 0.0:
            return cls(np.array([0.0]), np.array([log_rest]), np.array([log_rest]),
                       log_p_inf, log_p_inf, err)
        return cls(np.array([eps, -eps]), np.array([hi, lo]), np.array([lo, hi]),
                   log_p_inf, log_p_inf, err)

    @classmethod
    def from_constraints(cls, constraints: Iterable[tuple[float, float]]) -> PrivacyRegion:
        """``∩_i R(ε_i, δ_i)``: a mechanism that satisfies every constraint at once (Sec. II-B).

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> r = PrivacyRegion.from_constraints([(1.0, 1e-6), (0.3, 1e-3)])
        >>> [(e, float(f"{d:.3g}")) for e, d in r.profile()]
        [(0.3, 0.001), (1.0, 1e-06)]
        """
        if isinstance(constraints, (str, bytes)) or not isinstance(constraints, Iterable):
            raise ParameterError(f"constraints={constraints!r}: must be a list of (epsilon, delta) pairs")
        pairs = list(constraints)
        if not pairs:
            raise ParameterError("constraints=[]: at least one (epsilon, delta) pair is needed")
        checked = []
        for i, pair in enumerate(pairs):
            try:
                e, d = pair
            except (TypeError, ValueError):
                raise ParameterError(f"constraints[{i}]={pair!r}: must be an (epsilon, delta) pair")\
                    from None
            checked.append((check_epsilon(e, f"constraints[{i}].epsilon"),
                            check_delta(d, f"constraints[{i}].delta")))
        # A copy of the memoised region: the same arrays, none of the queries other callers made (which
        # route answers δ, term by term or the prefix face, follows a region's own query count, and the
        # two agree to their certified bounds, not bit for bit: an answer must not depend on history).
        return copy.copy(_constraints_region(cls, tuple(checked)))

    @classmethod
    def _from_checked_constraints(cls, pairs: tuple[tuple[float, float], ...]) -> PrivacyRegion:
        """:meth:`from_constraints` of validated pairs (memoised by :func:`_constraints_region`: a region
        is immutable, and its certified bound costs a few evaluations, a third of a small accountant
        query that builds its mechanism anew)."""
        losses, ds, cs, rel = [], [], [], []
        for e, d in pairs:
            # f_{ε,δ} is the max of the lines 1-δ-e^ε t and e^{-ε}(1-δ-t); write each as 1-d-e^L t.
            losses += [e, -e]
            ds += [d, -math.expm1(-e) + math.exp(-e) * d]
            cs += [1.0 - d, math.exp(-e) * (1.0 - d)]
            rel += [0.0, 8 * UNIT_ROUNDOFF]     # the given δ; expm1, exp, a product and a sum of positives
        lines = (np.array(losses), np.array(ds) * (1 - np.array(rel)), np.array(ds) * (1 + np.array(rel)))
        env = cls._from_lines(np.array(losses), np.array(ds), np.array(cs))
        # The result is symmetric: keep the edges with L >= 0, whose larger mass p was measured near the
        # top (accurate when small), and mirror them, so δ(∞) and the mass at -inf agree exactly.
        pos = env._loss > 0
        zero = env._loss == 0
        total = np.logaddexp.reduce(np.concatenate(
            [[env._log_p_inf], env._log_p[pos], env._log_p[zero], env._log_q[pos]]))
        if not abs(math.expm1(total)) <= MASS_SUM_RTOL:
            return env.with_error(lines_error(env, *lines))  # ε within rounding of 0: keep the envelope
        out = cls.from_log_masses(
            np.concatenate([env._loss[pos], env._loss[zero], -env._loss[pos][::-1]]),
            np.concatenate([env._log_p[pos], env._log_p[zero], env._log_q[pos][::-1]]),
            np.concatenate([env._log_q[pos], env._log_q[zero], env._log_p[pos][::-1]]),
            log_p_inf=env._log_p_inf, log_q_ninf=env._log_p_inf, check_total=False, error=env._err)
        return out.with_error(lines_error(out, *lines))

    @classmethod
    def from_vertices(cls, points: Iterable[Sequence[float]]) -> PrivacyRegion:
        """The smallest region (convex, containing the diagonal) that holds the given points.

        Points are (type I, type II) error pairs in the triangle ``bI + bII <= 1``; the lower convex hull
        of the points, ``(0, 1)`` and ``(1, 0)`` becomes the boundary.

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> r = PrivacyRegion.from_vertices([(0.0, 0.9), (0.2, 0.2), (0.9, 0.0)])
        >>> round(float(r.tradeoff(0.2)), 12)
        0.2
        """
        pts = np.asarray(list(points), dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise ParameterError(f"points: expected (bI, bII) pairs, got an array of shape {pts.shape}")
        for i, (x, y) in enumerate(pts):
            if not (0 <= x <= 1 and 0 <= y <= 1 and x + y <= 1 + 1e-12):
                raise ParameterError(f"points[{i}]=({x!r}, {y!r}): must satisfy 0 <= bI, 0 <= bII, "
                                     f"bI + bII <= 1")
        pts = np.vstack([pts, [[0.0, 1.0], [1.0, 0.0]]])
        hull = _lower_hull(pts)
        dx, dy = np.diff(hull[:, 0]), -np.diff(hull[:, 1])
        vertical, horizontal = dx == 0, dy == 0
        finite = ~vertical & ~horizontal
        with np.errstate(divide="ignore"):
            lq, lp = np.log(dx[finite]), np.log(dy[finite])
        return cls.from_log_masses(
            lp - lq, lp, lq,
            log_p_inf=math.log(dy[vertical].sum()) if dy[vertical].sum() > 0 else _NEG_INF,
            log_q_ninf=math.log(dx[horizontal].sum()) if dx[horizontal].sum() > 0 else _NEG_INF,
            check_total=False,
        )

    @classmethod
    def _from_lines(cls, losses: np.ndarray, ds: np.ndarray, cs: np.ndarray | None = None
                    ) -> PrivacyRegion:
        """Region under ``max(0, max_k (c_k - e^{L_k} t))`` with ``c_k = 1 - d_k``: an upper envelope.

        Each line is given by its exact loss ``L_k``, ``d_k`` (accurate when small) and optionally
        ``c_k = 1 - d_k`` (accurate when small, e.g. for very negative losses), so no step subtracts
        nearly equal numbers and no ``e^L`` overflows: breakpoints are
        ``t = (c_j - c_k) e^{-L_j} / (1 - e^{L_k - L_j})`` and their depths below 1 are
        ``u = d_k + (c_j - c_k) / (e^{L_j - L_k} - 1)``. The envelope's edges keep the exact losses; each
        edge's larger mass (``p`` for ``L >= 0``, ``q`` otherwise) is measured and the other follows
        from ``L``, so ``log p - log q = L`` exactly. Breakpoints are rounded to double precision.
        """
        cs = 1.0 - ds if cs is None else cs
        order = np.lexsort((ds, -losses))   # steepest first, then smallest d (highest line)
        L, d, c = losses[order], ds[order], cs[order]
        first = np.concatenate(([True], np.diff(L) != 0))   # equal slopes: keep the highest line
        L, d, c = L[first], d[first], c[first]
        L = np.append(L, _NEG_INF)          # the line bII = 0 closes the envelope
        d = np.append(d, 1.0)
        c = np.append(c, 0.0)

        def gap(j: int, k: int) -> float:      # c_j - c_k, from whichever form has no cancellation
            return d[k] - d[j] if max(d[j], d[k]) < 0.5 else c[j] - c[k]

        def meet(j: int, k: int) -> tuple[float, float, float]:
            """Where the flatter line k overtakes line j: (t, depth u = 1 - y, y), no overflow."""
            g = float(gap(j, k))
            try:
                rise = g / -math.expm1(L[k] - L[j])      # e^{L_j} t
            except OverflowError:                      # nearly parallel lines meet far away
                rise = math.copysign(math.inf, g)
            log_t = math.log(abs(rise)) - L[j] if rise != 0 else -math.inf
            t = math.copysign(math.exp(min(log_t, 700.0)), rise)   # beyond 1 is clipped anyway
            return t, d[j] + rise, c[k] - g / math.expm1(min(L[j] - L[k], 700.0))

        # Convex-hull trick. A line is dropped when the next one overtakes it no later than it became
        # the top; "later" is compared along the line itself, by depth for steep lines (whose t may
        # underflow) and by t for flat ones.
        stack: list[int] = []
        points: list[tuple[float, float, float]] = []
        for k in range(L.size):
            point = (0.0, d[k], c[k])
            while stack:
                j = stack[-1]
                t, u, y = meet(j, k)
                if (u <= points[-1][1]) if L[j] >= 0 else (t <= points[-1][0]):
                    stack.pop()
                    points.pop()
                    point = (0.0, d[k], c[k])
                else:
                    point = (t, u, y)
                    break
            stack.append(k)
            points.append(point)
        idx = np.array(stack)
        t = np.clip([pt[0] for pt in points], 0.0, 1.0)
        u = np.clip([pt[1] for pt in points], 0.0, 1.0)
        y = np.clip([pt[2] for pt in points], 0.0, 1.0)
        seg_L = L[idx[:-1]]
        dq = np.diff(t)
        dp = np.where(np.maximum(u[:-1], u[1:]) < 0.5, np.diff(u), -np.diff(y))
        with np.errstate(divide="ignore"):
            lp = np.where(seg_L >= 0, np.log(np.maximum(dp, 0.0)), seg_L + np.log(np.maximum(dq, 0.0)))
        keep = np.isfinite(lp)
        seg_L, lp = seg_L[keep], lp[keep]
        t_end = float(t[-1])
        if 1.0 - t_end <= 4 * np.finfo(float).eps:
            t_end = 1.0   # the last line meets bII = 0 at bI = 1 up to rounding: no mass at -inf
        p_inf = float(d[idx[0]])
        log_inf = math.log(p_inf) if p_inf > 0 else _NEG_INF
        # the +inf mass is the steepest line's δ, a given double: kept exactly (ε at that δ is exact)
        err = ErrorBound(inf_mass=2 * UNIT_ROUNDOFF * (abs(log_inf) + 1.0), inf_exact=p_inf) if p_inf > 0 \
            else None
        return cls.from_log_masses(
            seg_L, lp, lp - seg_L,
            log_p_inf=log_inf,
            log_q_ninf=math.log1p(-t_end) if t_end < 1 else _NEG_INF,
            check_total=False, error=err,
        )

    # ------------------------------------------------------------------ exact face
    @property
    def losses(self) -> np.ndarray:
        """Finite privacy losses of the edges, largest (steepest edge) first."""
        return self._loss

    @property
    def log_p(self) -> np.ndarray:
        """Log P-masses of the finite edges (aligned with :attr:`losses`)."""
        return self._log_p

    @property
    def log_q(self) -> np.ndarray:
        """Log Q-masses of the finite edges (aligned with :attr:`losses`)."""
        return self._log_q

    @property
    def log_p_inf(self) -> float:
        """Log of the P-mass with loss ``+inf`` (the vertical edge at ``bI = 0``; ``δ(∞)``)."""
        return self._log_p_inf

    @property
    def log_q_ninf(self) -> float:
        """Log of the Q-mass with loss ``-inf`` (the horizontal edge at ``bII = 0``)."""
        return self._log_q_ninf

    def _face(self) -> _Face:
        """The prefix face (built once, on the first query): δ and ``1 - δ`` at any ε in O(log N)."""
        face = self._prefix
        if face is None:
            err = self._err
            with np.errstate(invalid="ignore"):
                mass_err = None if err.is_zero else np.where(np.isfinite(self._log_p),
                                                             err.log_mass(-self._log_p), 0.0)
            inf_err = err.log_inf(abs(self._log_p_inf)) if self._log_p_inf > _NEG_INF else 0.0
            face = _Face(self._loss, self._log_p, self._log_p_inf, mass_err, inf_err)
            object.__setattr__(self, "_prefix", face)
        return face

    def _log_delta_unchecked(self, eps: np.ndarray) -> np.ndarray:
        out = self._face().log_delta(np.atleast_1d(np.asarray(eps, dtype=float)))
        return np.minimum(out, 0.0)   # δ <= 1 always; masses rounded up by 1e-13 must not exceed it

    def support(self, epsilon: np.ndarray | Sequence[float]) -> np.ndarray:
        """``max_{(bI, bII) in F} (1 - bII - e^ε bI)`` for any real ε (δ(ε) extended to ε < 0).

        The edge of loss ``L`` lies on the line ``bII = 1 - support(L) - e^L bI``, so ``support`` at the
        edge losses gives the half-plane description of the region.
        """
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        return np.exp(self._log_delta_unchecked(eps))

    def _log_cosupport(self, eps: np.ndarray) -> np.ndarray:
        """``log(1 - δ(ε)) = log(Σ_{L_j <= ε} p_j + e^ε Σ_{L_j > ε} q_j)``: a sum of positive terms.

        Accurate where ``δ(ε)`` is close to 1 (very negative ε), where ``1 - support`` would cancel.
        """
        return self._face().log_cosupport(np.atleast_1d(np.asarray(eps, dtype=float)))

    @property
    def error(self) -> ErrorBound:
        """How far the stored atoms may lie from the exact pair the region stands for."""
        return self._err

    def with_error(self, error: ErrorBound) -> PrivacyRegion:
        """The same atoms with another error bound (a route's certified floating-point error)."""
        return PrivacyRegion(self._loss, self._log_p, self._log_q, self._log_p_inf, self._log_q_ninf, error)

    def mirrored(self) -> PrivacyRegion:
        """The region of the reversed pair (Q, P): losses negated, P and Q swapped, the error bound mirrored.

        Examples
        --------
        >>> r = PrivacyRegion.from_pair([0.75, 0.25], [0.25, 0.75])
        >>> bool(abs(r.mirrored().delta(0.0) - r.delta(0.0)) < 1e-12)      # randomized response: symmetric
        True
        """
        top = float(np.max(np.abs(self._loss), initial=0.0))
        return PrivacyRegion.from_log_masses(-self._loss[::-1], self._log_q[::-1], self._log_p[::-1],
                                             log_p_inf=self._log_q_ninf, log_q_ninf=self._log_p_inf,
                                             check_total=False, error=self._err.mirrored(top))

    @property
    def lower(self) -> LowerSide:
        """The attack side: ``delta``/``epsilon`` never above the exact pair's (see :meth:`delta_lower`)."""
        return LowerSide(self)

    def log_delta(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """``log δ(ε)``, certified from above (useful where δ underflows a float, below 1e-308)."""
        eps = self._check_eps_array(epsilon)
        out = self._certified(eps, upper=True)
        return float(out[0]) if np.ndim(epsilon) == 0 else out.reshape(np.shape(epsilon))

    def log_delta_lower(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """``log δ(ε)``, certified from below."""
        eps = self._check_eps_array(epsilon)
        out = self._certified(eps, upper=False)
        return float(out[0]) if np.ndim(epsilon) == 0 else out.reshape(np.shape(epsilon))

    def delta(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """Tight ``δ(ε) = p_inf + Σ_{L_j > ε} p_j (1 - e^{ε - L_j})`` (vectorised over ε >= 0), certified
        from above: never below the exact pair's δ, floating-point error included (:meth:`delta_lower`
        is the other side; they agree to about 1e-12 relative).

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> PrivacyRegion.from_dp(1.0, 0.1).delta([0.0, 1.0]).round(6).tolist()
        [0.515905, 0.1]
        """
        out = self._exact_inf(epsilon, _exp_up(self.log_delta(epsilon)))
        return float(out) if np.ndim(epsilon) == 0 else out

    def _exact_inf(self, epsilon: object, out: np.ndarray) -> np.ndarray:
        """Where no finite atom can lie above ε, δ(ε) is the +inf mass: its exact double when known."""
        exact = self._err.inf_exact
        if exact is None:
            return out
        return np.where(np.asarray(epsilon, dtype=float) >= self._beyond_from(), exact, out)

    def delta_lower(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """``δ(ε)`` certified from below (an attack bound: the exact pair's δ is at least this).

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> r = PrivacyRegion.from_pair([0.75, 0.25], [0.25, 0.75])
        >>> r.delta_lower(0.0) <= 0.5 <= r.delta(0.0)
        True
        """
        out = self._exact_inf(epsilon, _exp_down(self.log_delta_lower(epsilon)))
        return float(out) if np.ndim(epsilon) == 0 else out

    def _certified(self, eps: np.ndarray, upper: bool) -> np.ndarray:
        """Certified ``log δ`` at each ε: from the prefix face with its running error bound where that
        bound is small enough (:meth:`_certified_face`; O(log N) per ε), term by term elsewhere
        (:meth:`_certified_terms`)."""
        if self._prefix is None and self._term_queries + eps.size <= FACE_AFTER:
            # a few δ of a fresh region: summing the terms costs less than building the face
            object.__setattr__(self, "_term_queries", self._term_queries + eps.size)
            return self._certified_terms(eps, upper)
        if eps.size == 1:       # one ε: the computation an ε(δ) query checks its answer with
            one, kept, _ = self._certified_face_one(float(eps[0]), upper)
            return np.array([one]) if kept else self._certified_terms(eps, upper)
        val, ok = self._certified_face(eps, upper)
        if not ok.all():
            val[~ok] = self._certified_terms(eps[~ok], upper)
        return val

    def _certified_face(self, eps: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """Certified ``log δ`` at each ε from the prefix face (docs/reliability.md, "Certified prefix
        face") and where it is kept: its bound at most :data:`FACE_RTOL` beyond the term-by-term one's."""
        err, rel = self._err, self._err.loss_rel
        shifted = self._face_point(eps, upper, np.nextafter)
        val, bound = self._face().certified_log_delta(shifted, upper)
        ok = bound <= self._face_tolerance(np.abs(np.where(np.isfinite(val), val, 0.0)))
        if rel and upper:
            ok &= shifted >= 0        # negative losses are raised by rel |L̂|: only atoms above 0 count
        if upper:
            val = np.minimum(val, 0.0)
            late = ok & (shifted < err.dropped_top) if err.dropped > _NEG_INF else None
            if late is not None and late.any():   # the left-out mass below its top loss
                add = np.logaddexp(val[late], err.dropped)
                val[late] = np.minimum(np.nextafter(add + UNIT_ROUNDOFF * (np.abs(add) + 8), np.inf), 0.0)
        return val, ok

    def _face_point(self, eps: Any, upper: bool, nextafter: Any) -> Any:
        """Where the prefix face is evaluated for a side at ε (an array with ``np.nextafter``, one float
        with ``math.nextafter``): ε moved by the loss error ``η`` outward, and on the lower side by
        ``rel L̂_max`` (it lowers each positive loss by ``rel L̂ <= rel L̂_max``)."""
        err = self._err
        eta = err.loss if upper else err.loss + err.loss_down
        if eta:
            eps = nextafter(eps - eta, -math.inf) if upper else nextafter(eps + eta, math.inf)
        if err.loss_rel and not upper and self._loss.size and self._loss[0] > 0:
            eps = nextafter(eps + err.loss_rel * float(self._loss[0]) * (1 + 4 * UNIT_ROUNDOFF), math.inf)
        return eps

    def _face_tolerance(self, depth: Any) -> Any:
        """The largest face bound kept at ``depth = |log δ|``: about as tight as the term-by-term answers,
        whose rounding grows like ``u |log δ|`` and whose route error is at most the bound at the terms'
        weighted mean depth (``|log δ| + log N``)."""
        err = self._err
        route = 0.0 if err.is_zero else err.log_mass(depth + math.log(self._loss.size + 1.0) + 1.0)
        return FACE_RTOL + 1.25 * (16 * UNIT_ROUNDOFF * depth + route)

    def _certified_face_one(self, eps: float, upper: bool) -> tuple[float, bool, float]:
        """:meth:`_certified_face` at one ε in ``math`` (the same shifts, bound and test; the face's
        :meth:`_Face.certified_one`): ``(value, kept, slope)``, the slope ``d log δ / dε`` of the nominal
        value for a search to step with."""
        err, rel = self._err, self._err.loss_rel
        shifted = self._face_point(eps, upper, math.nextafter)
        val, bound, slope = self._face().certified_one(shifted)
        if bound == math.inf:
            return val, False, slope
        out = math.nextafter(val + bound, math.inf) if upper else math.nextafter(val - bound, -math.inf)
        ok = bound <= float(self._face_tolerance(abs(out)))
        if rel and upper:
            ok = ok and shifted >= 0
        if upper:
            out = min(out, 0.0)
            if ok and err.dropped > _NEG_INF and shifted < err.dropped_top:   # the left-out mass
                add = _logaddexp_one(out, err.dropped)
                out = min(math.nextafter(add + UNIT_ROUNDOFF * (abs(add) + 8), math.inf), 0.0)
        return out, ok, slope

    def _certified_terms(self, eps: np.ndarray, upper: bool) -> np.ndarray:
        """Certified ``log δ`` at each ε, term by term (docs/reliability.md, "Certified evaluation").

        With the route's bound (loss error ``η``, per-atom log-mass error ``Δ_j``), the exact pair's
        ``δ(ε) <= Σ_j p̂_j e^{Δ_j} (1 - e^{ε - η - L̂_j})_+`` (raising every loss by η is evaluating at
        ``ε - η``) and ``>= Σ_j p̂_j e^{-Δ_j} (1 - e^{ε + η - L̂_j})_+``. Each term is evaluated as
        ``exp(g_j - m)`` with ``g_j = ℓ̂_j + log(1 - e^{x_j})``, ``x_j = ε ∓ η - L̂_j``, ``m = max g``, and its
        own rounding bounded by ``r_j = u (3 |g_j| + |g_j - m| + 2 |log(1-e^{x_j})| + 8)`` (the
        subtraction, ``log1mexp``, the sum and ``exp``, each a few ulps); the two sides add and subtract
        ``Σ w_j expm1(±(Δ_j + r_j))``, and the pairwise sum, the log and the addition of ``m`` are bounded by
        ``u (2 log2 n + 2 |m| + 2 |log S| + 16)``. Atoms more than :data:`NEGLIGIBLE_NATS` below the
        prefix face's estimate are not summed one by one: the upper side adds their count times the
        largest of their masses (times 2), the lower side drops them. Cost: O(atoms above ε) comparisons
        and O(relevant atoms) ``exp``.
        """
        err = self._err
        rel = err.loss_rel
        eta = err.loss if upper else err.loss + err.loss_down
        L, lp = self._loss, self._log_p
        u = UNIT_ROUNDOFF
        if eta:
            shifted = np.nextafter(eps - eta, -np.inf) if upper else np.nextafter(eps + eta, np.inf)
        else:
            shifted = eps
        # atoms with L̂ > the shifted ε (upper: negative L̂ may rise by rel |L̂|, a few more)
        reach = np.where(shifted < 0, shifted * (1 - 2.0 * rel) - 1e-300, shifted) if (rel and upper) \
            else shifted
        counts = np.searchsorted(-L, -reach, side="left")
        log_inf = self._log_p_inf
        has_inf = log_inf > _NEG_INF
        inf_err = err.log_inf(abs(log_inf)) if has_inf else 0.0
        exact_masses = err.is_zero
        width = int(np.max(counts, initial=0))
        if eps.size > 1 and width and eps.size * width <= _DENSE_CELLS:
            return self._certified_dense(shifted, width, upper, err, rel, has_inf, inf_err)
        guesses = self._face().log_delta(shifted)
        out = np.empty(eps.shape)
        for t in range(eps.size):
            s, n, guess = float(shifted[t]), int(counts[t]), float(guesses[t])
            rest, dropped_top = 0, _NEG_INF
            if n:
                lpn = lp[:n]
                if guess > _NEG_INF:
                    keep = lpn >= guess - NEGLIGIBLE_NATS - math.log(n + 1.0)
                    kept = int(np.count_nonzero(keep))
                    if kept < n:
                        rest = n - kept
                        dropped_top = float(np.max(lpn, where=~keep, initial=_NEG_INF))
                        idx = np.flatnonzero(keep)
                        lpn, ln = lpn[idx], L[idx]
                    else:
                        ln = L[:n]
                else:
                    ln = L[:n]
            else:
                lpn = ln = lp[:0]
            if upper and err.dropped > _NEG_INF and s < err.dropped_top:
                rest_top = float(np.logaddexp(dropped_top + math.log(2.0 * rest) if rest else _NEG_INF,
                                              err.dropped))
                rest, dropped_top = 1, rest_top - math.log(2.0)
            if lpn.size == 0 and not rest:
                if not has_inf:
                    out[t] = _NEG_INF
                elif not inf_err or err.inf_exact is not None:
                    out[t] = log_inf    # only the +inf mass, exact as stored (delta() returns the double)
                else:               # only the +inf mass, widened by its own bound
                    out[t] = round_up(log_inf + inf_err) if upper else round_down(log_inf - inf_err)
                continue
            if rel:
                # outward-rounded losses: the upper side raises the negative ones by rel |L̂|, the lower
                # side lowers the positive ones
                # (atoms the shift does not touch keep the plain difference, whose rounding r_j covers)
                moved = (ln < 0) if upper else (ln > 0)
                xs = s - ln - rel * np.maximum(-ln, 0.0) if upper else s - ln + rel * np.maximum(ln, 0.0)
                xs = np.where(moved, np.nextafter(xs, -np.inf) if upper else np.nextafter(xs, np.inf), xs)
                live = xs < 0
                if not np.all(live):
                    lpn, xs = lpn[live], xs[live]
            else:
                xs = s - ln
            with np.errstate(divide="ignore"):
                ell = log1mexp(xs)
            g = lpn + ell
            m = max(float(np.max(g, initial=_NEG_INF)), log_inf)
            if m == _NEG_INF:
                out[t] = round_up(dropped_top + math.log(2.0 * rest)) if upper and rest else _NEG_INF
                continue
            with np.errstate(under="ignore"):
                w = np.exp(g - m)
            r = u * (3 * np.abs(g) + np.abs(g - m) - 2 * ell + 8)
            if not exact_masses:
                r = r + err.log_mass(-lpn)
            w_sum = float(np.sum(w))
            w_inf = math.exp(log_inf - m) if has_inf else 0.0
            if upper:
                total = w_sum + float(np.dot(w, np.expm1(r)))
                total += w_inf * math.exp(inf_err + u * (abs(log_inf) + abs(m) + 4)) if has_inf else 0.0
                if rest:
                    total += 2.0 * rest * math.exp(min(dropped_top - m, 0.0))
            else:
                total = w_sum - float(np.dot(w, -np.expm1(-r)))
                total += w_inf * math.exp(-inf_err - u * (abs(log_inf) + abs(m) + 4)) if has_inf else 0.0
            if math.isnan(total):           # an infinite bound times a zero term: no information
                total = math.inf if upper else 0.0
            if not total > 0:
                out[t] = _NEG_INF if not upper else round_up(m)
                continue
            log_s = math.log(total)
            gamma = u * (2 * math.log2(g.size + 2) + 2 * abs(m) + 2 * abs(log_s) + 16)
            out[t] = min(round_up(m + log_s + gamma), 0.0) if upper else round_down(m + log_s - gamma)
        return out

    def _certified_dense(self, shifted: np.ndarray, width: int, upper: bool, err: ErrorBound, rel: float,
                         has_inf: bool, inf_err: float) -> np.ndarray:
        """:meth:`_certified` for several ε at once over the ``width`` largest atoms (one array of
        ``ε × atoms``: the same terms and bounds, every atom summed)."""
        u = UNIT_ROUNDOFF
        L, lp = self._loss[:width], self._log_p[:width]
        # Atoms whose mass lies more than NEGLIGIBLE_NATS + log(n + 1) below the smallest row's largest
        # term are bounded in aggregate, as in the loop: each term is at most its mass, so the upper side
        # adds twice their count times the largest of them (their own bounds included) and the lower side
        # drops them (together below e^-45 relative to every row). That row's largest term, from the row
        # of the largest ε, bounds every row's from below (each term falls as ε grows).
        with np.errstate(divide="ignore", invalid="ignore"):
            x_top = float(np.max(shifted)) - L
            floor = max(float(np.max(np.where(x_top < 0, lp + log1mexp(np.minimum(x_top, -1e-300)), _NEG_INF),
                                     initial=_NEG_INF)), self._log_p_inf) - NEGLIGIBLE_NATS \
                - math.log(lp.size + 1.0)
        rest, rest_top = 0, _NEG_INF
        if floor > _NEG_INF and lp.size:
            keep = lp >= floor
            if not np.all(keep):
                rest = int(lp.size - np.count_nonzero(keep))
                rest_top = float(np.max(lp, where=~keep, initial=_NEG_INF))
                L, lp = L[keep], lp[keep]
        s = shifted[:, None]
        xs = s - L[None, :]
        if rel:
            moved = ((L < 0) if upper else (L > 0))[None, :]
            xs = xs - rel * np.maximum(-L, 0.0) if upper else xs + rel * np.maximum(L, 0.0)
            xs = np.where(moved, np.nextafter(xs, -np.inf) if upper else np.nextafter(xs, np.inf), xs)
        live = xs < 0
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            ell = np.where(live, log1mexp(np.where(live, xs, -1.0)), 0.0)
            g = np.where(live, lp[None, :] + ell, _NEG_INF)
            log_inf = self._log_p_inf
            m = np.max(g, axis=1, initial=_NEG_INF)   # every atom may lie 760 nats below the +inf mass
            if has_inf:
                m = np.maximum(m, log_inf)
            # the upper side adds the left-out mass e^dropped below its top loss (as the loop does)
            extra = (shifted < err.dropped_top) if (upper and err.dropped > _NEG_INF) \
                else np.zeros(shifted.shape, dtype=bool)
            m = np.where(extra, np.maximum(m, err.dropped), m)
            any_live = np.any(live, axis=1)
            m_safe = np.where(np.isfinite(m), m, 0.0)[:, None]
            w = np.where(live, np.exp(g - m_safe), 0.0)
            gf = np.where(live, g, 0.0)
            r = u * (3 * np.abs(gf) + np.abs(gf - m_safe) - 2 * ell + 8)
            if not err.is_zero:
                r = r + np.asarray(err.log_mass(-lp))[None, :]
            sign = 1.0 if upper else -1.0
            cor = np.sum(np.where(w > 0, w * np.expm1(sign * r), 0.0), axis=1)   # no 0 * inf
            total = np.sum(w, axis=1) + cor
            if has_inf:
                mi = m_safe[:, 0]
                total = total + np.exp(log_inf - mi) * np.exp(sign * (inf_err + u * (abs(log_inf) + np.abs(mi)
                                                                                      + 4)))
            total = total + np.where(extra, np.exp(np.minimum(err.dropped - m_safe[:, 0], 0.0)), 0.0)
            if upper and rest:
                total = total + 2.0 * rest * np.exp(np.minimum(rest_top - m_safe[:, 0], 0.0))
            total = np.where(np.isnan(total), np.inf if upper else 0.0, total)
            log_s = np.log(np.where(total > 0, total, 1.0))
            n = np.sum(live, axis=1)
            gamma = u * (2 * np.log2(n + 2.0) + 2 * np.abs(m_safe[:, 0]) + 2 * np.abs(log_s) + 16)
            val = m_safe[:, 0] + log_s + sign * gamma
        out = np.nextafter(val, np.inf if upper else -np.inf)
        out = np.minimum(out, 0.0) if upper else out
        out = np.where(total > 0, out, _NEG_INF if not upper else np.nextafter(m_safe[:, 0], np.inf))
        if has_inf:   # rows with only the +inf mass: its stored log (exact) or widened by its own bound
            only = ~any_live & ~extra & (not (upper and rest))   # (the upper side keeps left-out atoms)
            if not inf_err or err.inf_exact is not None:
                out[only] = log_inf
            else:
                out[only] = round_up(log_inf + inf_err) if upper else round_down(log_inf - inf_err)
        else:
            out[~any_live & ~extra] = _NEG_INF
        return out

    def _log_delta_nominal(self, e: float) -> float:
        return float(self._log_delta_unchecked(np.array([e]))[0])

    def _epsilon_nominal(self, log_dlt: float) -> float:
        """The smallest ε >= 0 with the *computed* (uncertified) δ(ε) <= e^{log_dlt} (closed form, then
        rounded up until the prefix face agrees)."""
        if log_dlt >= self._log_delta_nominal(0.0):
            return 0.0
        if log_dlt < self._log_p_inf:
            return math.inf
        face = self._face()
        lo, hi = face.solve(log_dlt)

        def valid(e: float) -> bool:
            return self._log_delta_nominal(e) <= log_dlt

        for _ in range(4):                    # the closed form is right to a few ulps: step up
            if valid(lo):
                return lo
            lo = float(np.nextafter(lo, math.inf))
        if not valid(hi):
            raise InternalError(f"epsilon: delta({hi!r}) exceeds delta at a breakpoint where it should "
                                f"not (a defect in lpdp: please report it)")
        return bisect(lambda e: not valid(e), lo, hi)[1]    # keeping valid(hi), not valid(lo)

    def _crossing(self, log_dlt: float, shift: float, upper: bool) -> float | None:
        """A double just past the ε where one certified side's ``log δ`` (the prefix face's, one ε at a
        time: :meth:`_certified_face_one`) crosses ``log_dlt``: for the upper side one where it is at or
        below ``log_dlt``, for the lower side one where it is above. Newton steps from the nominal answer
        moved by ``shift``, each aimed a few roundings past the crossing and kept inside the bracket of the
        points seen on either side (else halving it); the answer is the first point on the wanted side
        within :data:`_CROSSING_WINDOW` such margins of the aim (usually the second point evaluated), or
        the wanted end of a bracket of adjacent doubles. ``None`` (the caller's bisection answers) when
        :data:`_CROSSING_STEPS` find neither, or a step leaves ``ε > 0`` or reaches a point the face cannot
        answer for (past the largest loss, where δ drops to ``p_inf``; where its bound is too wide)."""
        if not self._loss.size or log_dlt < self._log_p_inf:
            return None
        x = self._face().solve(log_dlt)[0]      # the nominal crossing (closed form between atoms)
        x = x + shift if shift else x
        margin = 8 * UNIT_ROUNDOFF * (abs(log_dlt) + 1.0)
        # the wanted side lies above the crossing for the upper side (δ falls with ε), below for the lower
        side = 1.0 if upper else -1.0
        outward = math.copysign(math.inf, side)
        good = bad = math.nan                   # the nearest points seen on the wanted and the other side
        for _ in range(_CROSSING_STEPS):
            if not (math.isfinite(x) and x > 0.0):
                return None
            val, ok, slope = self._certified_face_one(x, upper)
            if not (ok and slope < 0):
                return None
            aim = log_dlt - side * margin
            if val <= log_dlt if upper else val > log_dlt:
                if abs(val - aim) <= _CROSSING_WINDOW * margin:
                    return x
                good = x if not (good - x) * side <= 0 else good          # the least such x (upper)
            else:
                bad = x if not (x - bad) * side <= 0 else bad             # the largest such x (upper)
                margin *= 2               # landed short: the values' rounding is wider, aim further
                aim = log_dlt - side * margin
            if math.nextafter(good, -outward) == bad:
                return good               # adjacent doubles on either side
            following = x + (val - aim) / -slope
            if not (math.isnan(good) or math.isnan(bad) or min(good, bad) < following < max(good, bad)):
                following = 0.5 * (good + bad)
            x = following if following != x else math.nextafter(x, outward if x == bad else -outward)
        return None

    def _beyond_from(self) -> float:
        """The least ``e`` from which no finite atom of the exact pair can have a loss above ``e`` (upper
        side)."""
        err = self._err
        top = self._top_loss()
        if top > _NEG_INF:
            if err.loss_rel and top < 0:
                top = top + err.loss_rel * abs(top)
            top = round_up(top + err.loss) if err.loss else top
        if err.dropped > _NEG_INF:
            top = max(top, err.dropped_top + err.loss)
        return top

    def _beyond(self, e: float) -> bool:
        """Whether no finite atom of the exact pair can have a loss above ``e`` (upper side)."""
        return e >= self._beyond_from()

    def _top_loss(self) -> float:
        return float(self._loss[0]) if self._loss.size else _NEG_INF

    @each_value
    def epsilon(self, delta: float) -> float:
        """Smallest ``ε >= 0`` with ``δ(ε) <= delta``, certified from above (a valid privacy guarantee);
        ``inf`` when ``delta`` may be below ``δ(∞) = p_inf``; an array of ``delta`` gives an array.

        The returned ε is checked with the certified :meth:`delta`: ``delta(ε) <= delta``.
        :meth:`epsilon_lower` is the attack side.

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> PrivacyRegion.from_dp(1.0, 0.1).epsilon(0.1)
        1.0
        """
        dlt = check_delta(delta, "delta")
        log_dlt = math.log(dlt) if dlt > 0 else _NEG_INF
        eta = self._err.loss

        exact_inf = self._err.inf_exact

        def cert(e: float) -> float:
            if exact_inf is not None and exact_inf <= dlt and self._beyond(e):
                return _NEG_INF          # δ(e) is exactly the +inf mass, a given double <= delta
            return float(self._certified(np.array([e]), upper=True)[0])

        if dlt > 0.0 and exact_inf is None:
            # the nominal answer, then a few vectorised certified evaluations around it (adjacent doubles
            # where the certified δ crosses delta); the searches below where that finds no crossing
            found = self._crossing(log_dlt, eta, upper=True)
            if found is not None:
                return found
        if cert(0.0) <= log_dlt:
            return 0.0
        if self._log_p_inf > _NEG_INF and cert(math.inf if not self._loss.size else
                                              round_up(self._top_loss() + eta) + 1.0) > log_dlt:
            return math.inf
        top_loss = self._top_loss()
        if self._err.loss_rel and top_loss < 0:
            top_loss = round_up(top_loss + self._err.loss_rel * abs(top_loss))
        top = round_up(top_loss + eta) if eta else top_loss
        if self._err.dropped > _NEG_INF:
            top = max(top, round_up(self._err.dropped_top + eta))
        if dlt == 0.0:
            return max(top, 0.0)   # no finite loss of the exact pair exceeds L̂_max + η
        target = log_dlt
        hi = top
        if not math.isfinite(hi) or cert(hi) > log_dlt:
            hi = round_up(round_up(self._top_loss() + eta) + 1.0) if self._loss.size else 1.0
            if cert(hi) > log_dlt:
                return math.inf
        for _ in range(8):
            e = self._epsilon_nominal(target)
            if not math.isfinite(e):
                break
            e = round_up(e + eta) if eta else e
            c = cert(e)
            if c <= log_dlt:
                return e
            target -= 2.0 * (c - log_dlt) + 4 * UNIT_ROUNDOFF * max(abs(log_dlt), 1.0)
            lo = e
        else:
            lo = 0.0
        lo = 0.0 if not math.isfinite(lo) else lo
        return bisect(lambda e: cert(e) > log_dlt, lo, hi)[1]    # cert(hi) <= log_dlt < cert(lo)

    @each_value
    def epsilon_lower(self, delta: float) -> float:
        """An ε below the exact pair's smallest ε with ``δ(ε) <= delta`` (an attack bound): at the
        returned ε, :meth:`delta_lower` is above ``delta`` (or it is 0).

        Examples
        --------
        >>> from lpdp import PrivacyRegion
        >>> r = PrivacyRegion.from_dp(1.0, 0.1)
        >>> r.epsilon_lower(0.1) <= 1.0 <= r.epsilon(0.1)
        True
        """
        dlt = check_delta(delta, "delta")
        log_dlt = math.log(dlt) if dlt > 0 else _NEG_INF
        eta = self._err.loss

        def cert(e: float) -> float:
            return float(self._certified(np.array([e]), upper=False)[0])

        if dlt > 0.0:
            found = self._crossing(log_dlt, -(eta + self._err.loss_down), upper=False)
            if found is not None:
                return found
        if cert(0.0) <= log_dlt:
            return 0.0
        if self._log_p_inf > _NEG_INF:
            big = round_up(self._top_loss() + eta) + 1.0 if self._loss.size else 0.0
            if cert(big) > log_dlt:
                return math.inf          # the exact pair's δ(∞) is above delta
        if dlt == 0.0:
            top_loss = self._top_loss()
            if self._err.loss_rel and top_loss > 0:
                top_loss = round_down(top_loss - self._err.loss_rel * abs(top_loss))
            eta_down = eta + self._err.loss_down
            e = round_down(top_loss - eta_down) if eta_down else round_down(top_loss)
        else:
            e = self._epsilon_nominal(log_dlt)
            e = round_down(round_down(e - eta) if eta else round_down(e))
        step = 4 * UNIT_ROUNDOFF * max(abs(e), 1.0)
        for _ in range(60):
            if e <= 0:
                return 0.0
            if cert(e) > log_dlt:
                return e
            e = round_down(e - step)
            step *= 4
        return 0.0

    # ------------------------------------------------------------------ profile face
    def profile(self) -> list[tuple[float, float]]:
        """The tight pairs ``(ε_j, δ(ε_j))``, one per edge with ``ε_j >= 0``, sorted by ε, each δ
        certified from above like :meth:`delta` (never below the exact pair's, floating-point error
        included; within about 1e-12 relative of it).

        For a symmetric region the region equals ``∩_j R(ε_j, δ_j)`` (Sec. II-B). All pairs cost O(N)
        together: prefix sums with a bound of their own rounding, and :meth:`delta` where that bound is
        wider than 1e-11 relative (docs/reliability.md, "Profiles").

        Examples
        --------
        >>> from lpdp.compose import homogeneous
        >>> r = homogeneous(0.5, 1e-6, 10)
        >>> e, d = r.profile()[2]
        >>> e, r.delta_lower(e) <= d <= r.delta(e) * (1 + 1e-12)
        (2.0, True)
        """
        eps = np.sort(self._loss[self._loss >= 0])
        if eps.size == 0:
            eps = np.array([0.0])
        return list(zip(eps.tolist(), _profile_upper(self, eps).tolist(), strict=True))

    # ------------------------------------------------------------------ polygon face
    def boundary(self) -> np.ndarray:
        """Lower boundary from ``(0, 1)`` to ``(1, 0)`` as an ``(n, 2)`` array (type I, type II)."""
        q = np.exp(self._log_q)
        x = np.concatenate(([0.0, 0.0], np.cumsum(q)))
        # β after the first i atoms is the P-mass of the atoms still to come: a tail sum of positive
        # terms (not 1 - a cumulative sum, whose cancellation leaves an absolute error of about 1e-16
        # on a β of 1e-10), so small β keep their relative accuracy.
        tail = np.exp(_log_cumsum(self._log_p[::-1])[0][::-1])
        parts = ([1.0, -math.expm1(self._log_p_inf)], tail[1:], [0.0]) if q.size else ([1.0, 0.0],)
        y = np.concatenate(parts)
        if q.size:
            x[-1] = -math.expm1(self._log_q_ninf)
        y = np.maximum(y, 0.0)
        x = np.minimum(x, 1.0)
        pts = np.vstack([np.column_stack([x, y]), [[1.0, 0.0]]])
        keep = np.concatenate(([True], np.any(np.diff(pts, axis=0) != 0, axis=1)))
        return pts[keep]

    @property
    def vertices(self) -> np.ndarray:
        """Polygon vertices, counter-clockwise from ``(0, 1)`` (the diagonal closes the polygon)."""
        return self.boundary()

    @property
    def polygon(self):
        """The region as a Shapely ``Polygon``."""
        from shapely.geometry import Polygon

        v = self.vertices
        # Edges of mass below 1e-14 give vertices that nearly coincide, which Shapely's overlay
        # operations mishandle: merge them into their predecessor (a change below 1e-14 in area).
        near = np.concatenate(([False], np.max(np.abs(np.diff(v, axis=0)), axis=1) < 1e-14))
        v = v[~near] if len(v) - near.sum() >= 3 else v
        if len(v) < 3:  # R(0, 0) is the diagonal: a polygon of zero area
            v = np.array([v[0], 0.5 * (v[0] + v[-1]), v[-1]])
        poly = Polygon(v)
        return poly if poly.is_valid or poly.area == 0 else poly.buffer(0)

    def tradeoff(self, t: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        """The trade-off function ``f(t)``: least type II error at type I error ``t`` in [0, 1]."""
        arr = np.asarray(t, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
            raise ParameterError(f"t={t!r}: must be in [0, 1]")
        b = self.boundary()
        if len(b) > 1 and b[1, 0] == 0.0:
            b = b[1:]  # f(0) is the bottom of the vertical edge at bI = 0
        out = np.interp(arr, b[:, 0], b[:, 1])
        return float(out) if arr.ndim == 0 else out

    def area(self) -> float:
        """Area of the region (``0.5`` for ``R(0, 1)``, ``0`` for ``R(0, 0)``)."""
        v = self.vertices
        x, y = v[:, 0], v[:, 1]
        return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)

    # ------------------------------------------------------------------ queries
    def contains(self, other: PrivacyRegion | Sequence[float], *, tol: float = MEMBERSHIP_TOL
                 ) -> bool:
        """Whether a point ``(bI, bII)`` or a whole region lies in this region.

        For a region the test is exact in log space: ``other ⊆ self`` iff ``δ_other(L) <= δ_self(L)`` at
        every edge loss ``L`` of ``self`` (the region is the intersection of its edges' half-planes),
        with relative tolerance ``tol`` and an absolute one of 1e-300 (subnormal δ carry no digits).
        """
        if isinstance(other, PrivacyRegion):
            if self._loss.size == 0:
                return True
            mine = self._log_delta_unchecked(self._loss)
            theirs = other._log_delta_unchecked(self._loss)
            return bool(np.all(theirs <= np.logaddexp(mine + tol, _LOG_TINY)))
        try:
            x, y = (float(v) for v in other)
        except (TypeError, ValueError):
            raise ParameterError(f"point={other!r}: must be a (type I, type II) pair") from None
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ParameterError(f"point={other!r}: coordinates must be finite")
        if x < -tol or y < -tol or x + y > 1 + tol:
            return False
        return bool(y >= self.tradeoff(min(max(x, 0.0), 1.0)) - tol)

    def intersect(self, other: PrivacyRegion) -> PrivacyRegion:
        """``self ∩ other``: the region of ``max(f_self, f_other)`` (both constraints hold).

        The edges keep their exact losses; the breakpoints are rounded to double precision.
        """
        lines = [r._loss for r in (self, other)]
        L = np.concatenate(lines)
        if L.size == 0:
            return self if self._log_p_inf >= other._log_p_inf else other
        d = np.concatenate([r.support(r._loss) for r in (self, other)])
        c = np.concatenate([np.exp(r._log_cosupport(r._loss)) for r in (self, other)])
        # The vertical edges (δ(∞)) need no line of their own: each lies on the steepest edge's line.
        out = PrivacyRegion._from_lines(L, d, c)
        # each line's δ certified from both sides by its own region
        d_lo = np.concatenate([r._exact_inf(r._loss, _exp_down(r._certified(r._loss, upper=False)))
                               for r in (self, other)])
        d_hi = np.concatenate([r._exact_inf(r._loss, _exp_up(r._certified(r._loss, upper=True)))
                               for r in (self, other)])
        return out.with_error(lines_error(out, L, d_lo, d_hi))

    # ------------------------------------------------------------------ misc
    @property
    def is_symmetric(self) -> bool:
        """Whether the pair is its own mirror (loss ``L`` with masses (p, q) matches ``-L`` with (q, p))."""
        L, lp, lq = self._loss, self._log_p, self._log_q
        return bool(
            np.allclose(L, -L[::-1], rtol=0, atol=1e-12)
            and np.allclose(lp, lq[::-1], rtol=1e-9, atol=0)
            and math.isclose(math.exp(self._log_p_inf), math.exp(self._log_q_ninf), rel_tol=1e-9,
                             abs_tol=1e-300)
        )

    def __len__(self) -> int:
        return int(self._loss.size)

    def __repr__(self) -> str:
        eps = np.sort(self._loss[self._loss >= 0])
        count = max(eps.size, 1)
        eps = eps[:4] if eps.size else np.array([0.0])
        # each pair is a guarantee: the certified δ, and ε and δ rounded up (never below the tight pair)
        shown = ", ".join(f"({format_upper(e)}, {format_upper(d)})"
                          for e, d in zip(eps, np.atleast_1d(self.delta(eps)), strict=True))
        more = f", ... {count - 4} more" if count > 4 else ""
        return f"PrivacyRegion(profile=[{shown}{more}], edges={self._loss.size})"

    def _repr_html_(self) -> str:
        return region_html(self)

    def plot(self, ax: Any = None, **style: Any) -> list[Any]:
        """Draw the region's lower boundary (:func:`lpdp.plot.regions`); returns the artists.

        Examples
        --------
        >>> artists = PrivacyRegion.from_dp(1.0, 0.1).plot(label="R(1, 0.1)")
        """
        label = style.pop("label", "region")
        return regions([self], labels=[label], ax=ax, styles=[style])

    def _check_eps_array(self, epsilon: object) -> np.ndarray:
        try:
            arr = np.atleast_1d(np.asarray(epsilon, dtype=float)).ravel()
        except (TypeError, ValueError):
            raise ParameterError(f"epsilon={epsilon!r}: must be a number or an array of numbers") \
                from None
        bad = ~np.isfinite(arr) | (arr < 0)
        if np.any(bad):
            raise ParameterError(f"epsilon={float(arr[bad][0])!r}: must be finite and >= 0")
        return arr


class LowerSide:
    """The attack side of a region: ``delta`` and ``epsilon`` certified from below.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> r = PrivacyRegion.from_dp(1.0, 0.1)
    >>> r.lower.delta(1.0) <= 0.1 <= r.delta(1.0)
    True
    """

    __slots__ = ("region",)

    def __init__(self, region: PrivacyRegion) -> None:
        self.region = region

    def __repr__(self) -> str:
        # the attack side: the tight pairs' δ certified from below, rounded down
        r = self.region
        eps = np.sort(r.losses[r.losses >= 0])[:4]
        eps = eps if eps.size else np.array([0.0])
        lows = np.atleast_1d(r.delta_lower(eps))
        shown = ", ".join(f"({format_lower(e)}, {format_lower(d)})" for e, d in zip(eps, lows, strict=True))
        more = f", ... {len(r.losses[r.losses >= 0]) - 4} more" if np.count_nonzero(r.losses >= 0) > 4 else ""
        return f"LowerSide(profile=[{shown}{more}], edges={len(r)})"

    def delta(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        return self.region.delta_lower(epsilon)

    def epsilon(self, delta: float) -> float:
        return self.region.epsilon_lower(delta)

    def log_delta(self, epsilon: float | Sequence[float] | np.ndarray) -> np.ndarray | float:
        return self.region.log_delta_lower(epsilon)


@functools.lru_cache(maxsize=256)
def _constraints_region(cls: type[PrivacyRegion], pairs: tuple[tuple[float, float], ...]) -> PrivacyRegion:
    """The memo of :meth:`PrivacyRegion.from_constraints` (validated pairs, exact doubles as keys)."""
    return cls._from_checked_constraints(pairs)


def check_normalised(region: PrivacyRegion, what: str) -> None:
    """Internal consistency check of a region lpdp computed: P and Q each sum to one (to 1e-9).

    Raises :class:`~lpdp.errors.InternalError` (a defect in lpdp, not in the user's input) otherwise.
    """
    for name, atoms, extra in (("P", region.log_p, region.log_p_inf), ("Q", region.log_q, region.log_q_ninf)):
        t = float(np.logaddexp(logsumexp(atoms), extra))
        if not abs(math.expm1(t)) <= MASS_SUM_RTOL:
            raise InternalError(f"{what}: masses under {name} sum to {math.exp(t)!r}, not 1 (a defect in "
                                f"lpdp: please report it)")


def largest_delta_gap(tight: PrivacyRegion, loose: PrivacyRegion) -> tuple[float, float]:
    """``max_{ε >= 0} (δ_loose(ε) - δ_tight(ε))`` and the ε where it is attained (the first such ε).

    Between consecutive edge losses of either region each δ is ``A - B e^ε``, so their difference is
    monotone there, and beyond the largest loss it is constant: the maximum over ε >= 0 is attained at 0
    or at one of those losses, and evaluating there is exact (no grid).

    Parameters
    ----------
    tight, loose : PrivacyRegion
        Two regions, typically an exact one and a baseline that contains it (then the gap is >= 0).

    Returns
    -------
    (float, float)
        The largest gap and the ε at which it is attained.

    Examples
    --------
    >>> from lpdp.region import PrivacyRegion, largest_delta_gap
    >>> gap, at = largest_delta_gap(PrivacyRegion.from_dp(0.5, 0.0), PrivacyRegion.from_dp(1.0, 0.01))
    >>> round(gap, 6), at
    (0.294773, 0.5)
    """
    eps = np.unique(np.concatenate(([0.0], tight.losses, loose.losses)))
    eps = eps[eps >= 0]
    gap = np.asarray(loose.delta(eps)) - np.asarray(tight.delta(eps))
    i = int(np.argmax(gap))
    return float(gap[i]), float(eps[i])


#: Certified evaluations of several ε at once use one dense (ε × atoms) array up to this many cells.
_DENSE_CELLS = 1 << 20
#: Certified δ evaluations of a region answered term by term before its prefix face is built (building the
#: face costs about as much as ~30 term-by-term evaluations; ε queries build it at once).
FACE_AFTER = 32
#: Error bound (nats, i.e. relative) of a prefix-face answer that a certified query keeps beyond 1.25 times
#: the term-by-term evaluation's own (``16 u |log δ|`` and the route's error at the terms' mean depth); a
#: larger one (deep tails of huge lattices) is evaluated term by term.
FACE_RTOL = 2.0 ** -43
#: A scaled cumulative sum below this (relative to its reference) is not trusted: go one level deeper.
_CUM_DEEP = 1e-250
#: Each level moves the reference down by ``-log(_CUM_DEEP)`` nats.
_CUM_SPAN = 575.0
#: Levels of scaled cumulative sums (about 9000 nats) before the ``logaddexp`` fallback.
_CUM_LEVELS = 16


def _row_log_cumsum(v: np.ndarray, err: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``log Σ_{t' <= t} e^{v[r, t']}`` along each row of a 2-D array, in scaled linear arithmetic, and,
    when ``err`` (absolute bounds on the errors of ``v``, 0 where ``v = -inf``) is given, a bound on the
    error of each output (``inf`` where none is derived); else ``None``.

    Per row, ``cumsum(exp(v - ref))`` with ``ref`` the row's maximum: a sum of positive terms (relative
    error at most ``B u`` for rows of length B). A prefix below ``_CUM_DEEP`` (its terms underflowed) is
    recomputed with ``ref`` moved down by ``_CUM_SPAN`` nats, level after level (prefix sums only grow
    along a row, so the unresolved entries are a prefix of it); the few left after ``_CUM_LEVELS`` levels
    (more than 9000 nats below their row's maximum) fall back to ``np.logaddexp.accumulate``. A resolved
    entry loses only terms below ``e^{ref - 745}``, i.e. nothing at double precision.

    The bound (running error analysis, docs/reliability.md, "Certified prefix face"): term ``j`` is
    ``exp(fl(v_j - ref))``, off its exact value by ``τ_j = err_j + u |v_j - ref| + 2 u`` in log; the
    cumulative sum of positive terms adds ``t u`` relative at position ``t`` (``t`` terms added) and the
    weighted mean of the ``τ_j`` (weights the terms, the sum of ``y_j τ_j`` formed the same way), both
    taken 1% larger for second-order terms, and terms in the subnormal range or flushed to 0 at most
    ``2^-1074`` each; the ``log`` adds ``2 u (|log cs| + 1)`` and adding ``ref`` back ``u |out|``.
    """
    out = np.full(v.shape, _NEG_INF)
    bound = None if err is None else np.zeros(v.shape)   # -inf entries (no mass before them) are exact
    top = np.max(v, axis=1, initial=_NEG_INF)
    live = np.isfinite(top)
    pending = live[:, None] & (np.maximum.accumulate(v, axis=1) > _NEG_INF)
    u = UNIT_ROUNDOFF
    for level in range(_CUM_LEVELS):
        if level == 0:                                 # every row, whole (most sums end here)
            rows: Any = slice(None)
            width = v.shape[1]
        else:
            rows = np.flatnonzero(pending.any(axis=1))  # only rows with unresolved entries (row-wise sums)
            if rows.size == 0:
                return out, bound
            if rows.size == v.shape[0]:
                rows = slice(None)                     # every row: views instead of gathered copies
            width = int(np.flatnonzero(pending[rows].any(axis=0))[-1]) + 1
        vr = v[rows, :width]
        ref = np.where(live[rows], top[rows] - _CUM_SPAN * level, 0.0)[:, None]
        # (entries outside ``ok`` are computed and not kept: no masking inside the arithmetic)
        with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
            depth = vr - ref
            y = np.exp(np.minimum(depth, 700.0))
            cs = np.cumsum(y, axis=1)
            ok = pending[rows, :width] & (cs >= _CUM_DEEP)
            log_cs = np.log(cs)
            res = log_cs + ref
        _put(out, rows, width, res, ok)
        if bound is not None and ok.any():
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                # a term that underflowed (y = 0: depth below -745, or v = -inf with err 0) weighs 0
                # whatever its τ; the depth is capped so that its τ stays finite (no 0 * inf)
                tau = err[rows, :width] + u * np.minimum(np.abs(depth), 746.0) + 2 * u
                weighted = np.cumsum(y * tau, axis=1)
                t = np.arange(1, width + 1, dtype=float)
                rel = 1.01 * (weighted / cs + t * u) + t * 2.0 ** -1074 / cs
                new = rel + 2 * u * (np.abs(log_cs) + 1) + u * np.abs(res)
            _put(bound, rows, width, new, ok)
        pend = pending[rows, :width]
        pend &= ~ok
        if not isinstance(rows, slice):
            pending[rows, :width] = pend
    for r in np.flatnonzero(pending.any(axis=1)):
        exact = np.logaddexp.accumulate(v[r])
        out[r, pending[r]] = exact[pending[r]]
        if bound is not None:
            bound[r, pending[r]] = math.inf          # no bound derived here
    return out, bound


def _put(dst: np.ndarray, rows: Any, width: int, src: np.ndarray, keep: np.ndarray) -> None:
    """``dst[rows, :width] = src`` where ``keep`` (a view when ``rows`` is a slice: no gathered copy)."""
    if isinstance(rows, slice):
        np.copyto(dst[rows, :width], src, where=keep)
    else:
        sub = dst[rows, :width]
        np.copyto(sub, src, where=keep)
        dst[rows, :width] = sub


def _blocks(n: int) -> int:
    """Row length of the blocked prefix sums: about sqrt(n), so errors grow like ``2 sqrt(n) u``."""
    return max(16, math.isqrt(max(n, 1)) + 1)


def _log_add_bound(x: np.ndarray, y: np.ndarray, ex: np.ndarray, ey: np.ndarray, out: np.ndarray
                   ) -> np.ndarray:
    """Error bound of ``out = logaddexp(x, y)`` from the inputs' bounds: ``log(e^x + e^y)`` moves by the
    weighted mean of the inputs' errors (weights ``e^{x - out}``, ``e^{y - out}``, taken 1% larger for
    the rounding of ``out`` and second-order terms), and its own rounding (a subtraction, ``exp``,
    ``log1p``, an addition) is within ``u (|out| + 8)``; exact when an input is ``-inf``."""
    x_none, y_none = x == _NEG_INF, y == _NEG_INF
    # out is finite unless both inputs are -inf, where both weights are 0 (the NaN of -inf - -inf unused)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        wx = np.where(x_none, 0.0, np.exp(np.minimum(x - out, 0.0)) * ex)
        wy = np.where(y_none, 0.0, np.exp(np.minimum(y - out, 0.0)) * ey)
        w = wx + wy
        return np.where(x_none | y_none, w, 1.01 * w + UNIT_ROUNDOFF * (np.abs(out) + 8))


def _log_add_one(x: float, y: float, ex: float, ey: float, out: float) -> float:
    """:func:`_log_add_bound` for one pair of floats (the same bound)."""
    if x == _NEG_INF or y == _NEG_INF:
        return (0.0 if x == _NEG_INF else ex) + (0.0 if y == _NEG_INF else ey)
    ref = out if math.isfinite(out) else 0.0
    w = math.exp(min(x - ref, 0.0)) * ex + math.exp(min(y - ref, 0.0)) * ey
    return 1.01 * w + UNIT_ROUNDOFF * (abs(ref) + 8)


def _logaddexp_one(x: float, y: float) -> float:
    """``np.logaddexp`` of two floats in ``math`` (numpy's formula: the larger plus
    ``log1p(e^{-|x - y|})``)."""
    if x == y:
        return x + _LOG2 if x > _NEG_INF else x
    return x + math.log1p(math.exp(y - x)) if x > y else y + math.log1p(math.exp(x - y))


_LOG2 = math.log(2.0)


def _log_cumsum(v: np.ndarray, err: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``log Σ_{j <= t} e^{v_j}`` for every t: blocked, so the relative error is ``O(sqrt(n) u)``; with
    ``err`` (bounds on the errors of ``v``), a bound on each output's error (see :func:`_row_log_cumsum`)."""
    n = v.size
    if n == 0:
        return v.copy(), (None if err is None else v.copy())
    b = _blocks(n)
    rows = -(-n // b)
    padded = np.full(rows * b, _NEG_INF)
    padded[:n] = v
    pad_err = None
    if err is not None:
        pad_err = np.zeros(rows * b)
        pad_err[:n] = err
        pad_err = pad_err.reshape(rows, b)
    local, e_local = _row_log_cumsum(padded.reshape(rows, b), pad_err)
    carry_in = None if e_local is None else e_local[:, -1][None, :]
    carry, e_carry = _row_log_cumsum(local[:, -1][None, :], carry_in)
    carry = carry[0]
    out = local.copy()
    out[1:] = np.logaddexp(local[1:], carry[:-1, None])
    if e_local is None or e_carry is None:
        return out.ravel()[:n], None
    bound = e_local.copy()
    bound[1:] = _log_add_bound(local[1:], np.broadcast_to(carry[:-1, None], local[1:].shape), e_local[1:],
                               np.broadcast_to(e_carry[0, :-1, None], local[1:].shape), out[1:])
    return out.ravel()[:n], bound.ravel()[:n]


class _Face:
    """Prefix sums of a region's atoms that answer δ(ε) and ``1 - δ(ε)`` in O(log N) per ε.

    With atoms sorted by decreasing loss ``L_1 > L_2 > ... > L_N``, every ε in ``[L_{n+1}, L_n)`` has the
    same atoms above it, and ``δ(ε) = C_n + (1 - e^{ε - L_n}) D_n`` with

    * ``C_n = δ(L_n) = p_inf + Σ_{j<n} p_j (1 - e^{L_n - L_j})`` (the breakpoint values) and
    * ``D_n = Σ_{j<=n} p_j e^{L_n - L_j}`` (``= e^{L_n} Σ_{j<=n} q_j``),

    both sums of positive terms, so the formula never cancels. They follow from
    ``C_{n+1} = C_n + (1 - e^{L_{n+1} - L_n}) D_n`` and ``D_{n+1} = p_{n+1} + e^{L_{n+1} - L_n} D_n``,
    computed as blocked prefix sums in log space (relative error ``O(sqrt(N) u)``, about 1e-13 at
    N = 10^6). Within a block every exponent is taken relative to the block's first loss, so the rounding
    of the exponents is that of loss *differences*, as in the direct sum, however large the losses are.
    ``1 - δ(ε) = Σ_{j>n} p_j + e^{ε - L_n} D_n`` uses suffix sums of p the same way.
    """

    __slots__ = ("loss", "log_p", "log_p_inf", "log_c", "log_d", "_log_tail", "err_c", "err_d", "_neg_loss")

    def __init__(self, loss: np.ndarray, log_p: np.ndarray, log_p_inf: float,
                 mass_err: np.ndarray | None = None, inf_err: float = 0.0) -> None:
        """``mass_err`` (per atom) and ``inf_err`` bound the stored log masses' own errors (the route's
        :class:`~lpdp._numerics.ErrorBound`); ``err_c`` and ``err_d`` then bound the errors of ``log_c``
        and ``log_d`` against the exact pair's (``inf`` where no bound is derived; see
        :meth:`certified_log_delta`)."""
        n = loss.size
        self.loss = loss
        self._neg_loss = -loss                           # increasing: searchsorted finds the atoms above ε
        self.log_p = log_p
        self.log_p_inf = log_p_inf
        self._log_tail: np.ndarray | None = None
        if n == 0:
            self.log_c = self.log_d = self.err_c = self.err_d = np.empty(0)
            return
        u = UNIT_ROUNDOFF
        b = _blocks(n)
        rows = -(-n // b)
        L = np.full(rows * b, loss[-1])
        L[:n] = loss
        lp = np.full(rows * b, _NEG_INF)
        lp[:n] = log_p
        me = np.zeros(rows * b)
        if mass_err is not None:
            me[:n] = mass_err
        L, lp, me = L.reshape(rows, b), lp.reshape(rows, b), me.reshape(rows, b)
        anchor = L[:, :1]
        # Within a row: Σ_{s<=j<=n} p_j e^{L_n - L_j} = e^{L_n - L_s} Σ_{s<=j<=n} p_j e^{L_s - L_j}.
        shift = anchor - L                               # one rounding: u |shift|
        v = lp + shift                                   # one more: u |v|
        with np.errstate(invalid="ignore"):
            e_v = np.where(np.isfinite(v), me + u * (np.abs(shift) + 2 * np.abs(v)), 0.0)
        row, e_row = _row_log_cumsum(v, e_v)
        log_d = row + (L - anchor)
        assert e_row is not None
        with np.errstate(invalid="ignore"):
            e_d = np.where(np.isfinite(log_d), e_row + u * (np.abs(shift) + np.abs(log_d)), 0.0)
        # Carry D across rows: D_n += e^{L_n - L_{s-1}} D_{s-1}. Each row's last log D after its carry, and
        # its bound, by a scalar recursion over the rows (in math); then every other entry at once from
        # the carried one.
        within, e_within = log_d.copy(), e_d.copy()
        last_l, last_w, last_e = L[:, -1].tolist(), within[:, -1].tolist(), e_within[:, -1].tolist()
        last_d, errs = [last_w[0]], [last_e[0]]
        for r in range(1, rows):
            if last_d[-1] > _NEG_INF:
                gap = last_l[r] - last_l[r - 1]
                carried = last_d[-1] + gap
                d = _logaddexp_one(last_w[r], carried)
                e_carried = errs[-1] + u * (abs(gap) + abs(carried))
                errs.append(_log_add_one(last_w[r], carried, last_e[r], e_carried, d))
            else:
                d = last_w[r]
                errs.append(last_e[r])
            last_d.append(d)
        if rows > 1:
            prev, prev_err = np.array(last_d), np.array(errs)
            gap = L[1:] - L[:-1, -1:]
            carried = prev[:-1, None] + gap
            log_d[1:] = np.logaddexp(within[1:], carried)
            log_d[1:, -1] = prev[1:]              # the values the recursion carried and bounded
            with np.errstate(invalid="ignore"):
                e_carried = prev_err[:-1, None] + u * (np.abs(gap) + np.abs(carried))
            e_d[1:] = _log_add_bound(within[1:], carried, e_within[1:], e_carried, log_d[1:])
        log_d, e_d = log_d.ravel()[:n], e_d.ravel()[:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            gaps = np.diff(loss)
            l1m = log1mexp(gaps)
            steps = l1m + log_d[:-1]
            # the rounded difference moves log1mexp by at most u (its slope times |gap| is below 1),
            # log1mexp itself a few ulps, the sum one rounding
            e_steps = np.where(np.isfinite(steps), e_d[:-1] + u * (4 * np.abs(l1m) + 6 + np.abs(steps)), 0.0)
        cum, e_cum = _log_cumsum(steps, e_steps)
        assert e_cum is not None
        first = np.concatenate(([_NEG_INF], cum))
        e_first = np.concatenate(([0.0], e_cum))
        self.log_d = log_d
        self.err_d = e_d
        if log_p_inf == _NEG_INF:         # no +inf mass: C is the sum itself, with its bound (exactly
            self.log_c, self.err_c = first, e_first      # what the logaddexp and its bound give)
        else:
            self.log_c = np.logaddexp(log_p_inf, first)
            self.err_c = _log_add_bound(np.full(n, log_p_inf), first, np.full(n, inf_err), e_first,
                                        self.log_c)

    @property
    def log_tail(self) -> np.ndarray:
        """``log Σ_{j >= n} p_j`` (suffix sums of p, for ``1 - δ``; built on first use)."""
        if self._log_tail is None:
            self._log_tail = _log_cumsum(self.log_p[::-1])[0][::-1]
        return self._log_tail

    def _above(self, eps: np.ndarray) -> np.ndarray:
        """How many atoms have a loss above each ε (losses are sorted in decreasing order)."""
        return self._neg_loss.searchsorted(-eps, side="left")

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        n = self._above(eps)
        out = np.full(eps.shape, self.log_p_inf)
        hit = n > 0
        i = n[hit] - 1
        with np.errstate(divide="ignore"):
            out[hit] = np.logaddexp(self.log_c[i], log1mexp(eps[hit] - self.loss[i]) + self.log_d[i])
        return out

    def certified_log_delta(self, eps: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """``log δ`` at each ε (the exact pair's losses taken as the stored ones: the caller shifts ε by
        the loss error) with its error bound from the face's running bounds, rounded outward: ``(value,
        bound)``; the caller keeps the values whose bound is small enough (:data:`FACE_RTOL`). Where no
        atom lies above ε the bound is ``inf`` (the caller's term-by-term evaluation answers)."""
        n = self._above(eps)
        out = np.full(eps.shape, _NEG_INF)
        bound = np.full(eps.shape, math.inf)
        hit = n > 0
        if not hit.any():
            return out, bound
        u = UNIT_ROUNDOFF
        i = n[hit] - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            x = eps[hit] - self.loss[i]
            l1m = log1mexp(x)
            t = l1m + self.log_d[i]
            e_t = self.err_d[i] + u * (4 * np.abs(l1m) + 6 + np.abs(t))
            val = np.logaddexp(self.log_c[i], t)
            e = _log_add_bound(self.log_c[i], t, self.err_c[i], e_t, val) * (1 + 2.0 ** -20)
            out[hit] = np.nextafter(val + e, np.inf) if upper else np.nextafter(val - e, -np.inf)
        bound[hit] = np.where(np.isfinite(val), e, math.inf)
        return out, bound

    def certified_one(self, eps: float) -> tuple[float, float, float]:
        """:meth:`certified_log_delta` at one ε in ``math`` (the same formulas and bound; an ε(δ) query
        evaluates a few points, where numpy's per-call overhead is most of the cost): ``(value, bound,
        slope)``, the nominal ``log δ`` before the outward rounding, its bound (``inf`` where none is
        derived) and ``d log δ / dε`` there (``0`` with no atom above ε)."""
        n = int(self._neg_loss.searchsorted(-eps, side="left"))
        if n == 0:
            return _NEG_INF, math.inf, 0.0
        u = UNIT_ROUNDOFF
        i = n - 1
        log_c, log_d = float(self.log_c[i]), float(self.log_d[i])
        x = eps - float(self.loss[i])
        l1m = log1mexp_one(x)
        t = l1m + log_d
        e_t = float(self.err_d[i]) + u * (4 * abs(l1m) + 6 + abs(t))
        val = _logaddexp_one(log_c, t)
        if not math.isfinite(val):
            return val, math.inf, 0.0
        e = _log_add_one(log_c, t, float(self.err_c[i]), e_t, val) * (1 + 2.0 ** -20)
        # δ = C + (1 - e^{ε - L}) D between breakpoints: dδ/dε = -e^{ε - L} D
        return val, e, -math.exp(x + log_d - val)

    def log_cosupport(self, eps: np.ndarray) -> np.ndarray:
        n = self._above(eps)
        size = self.loss.size
        below = np.where(n < size, self.log_tail[np.minimum(n, size - 1)] if size else _NEG_INF, _NEG_INF)
        hit = n > 0
        i = n[hit] - 1
        above = np.full(eps.shape, _NEG_INF)
        above[hit] = eps[hit] - self.loss[i] + self.log_d[i]
        return np.logaddexp(below, above)

    def solve(self, log_dlt: float) -> tuple[float, float]:
        """The ε >= 0 with ``δ(ε) = e^{log_dlt}`` for ``p_inf <= delta < δ(0)``, before rounding up, and
        the breakpoint ``L_i >= ε`` above it (where ``δ(L_i) <= delta``)."""
        i = int(self.log_c.searchsorted(log_dlt, side="right")) - 1
        if log_dlt == _NEG_INF:             # δ = 0 (p_inf = 0): first reached at the breakpoint itself
            return float(self.loss[i]), float(self.loss[i])
        # δ(L_i) = C_i <= delta < C_{i+1} = δ(L_{i+1}): ε in [L_{i+1}, L_i], where
        # delta = C_i + (1 - e^{ε - L_i}) D_i, i.e. ε = L_i + log(1 - (delta - C_i) / D_i).
        log_gap = log_dlt + log1mexp_one(min(float(self.log_c[i]) - log_dlt, 0.0))
        ratio = log_gap - float(self.log_d[i])
        eps = float(self.loss[i]) + (log1mexp_one(ratio) if ratio < 0 else _NEG_INF)
        floor = float(self.loss[i + 1]) if i + 1 < self.loss.size else 0.0
        return max(eps, floor, 0.0), float(self.loss[i])


#: The extended type the certified profile accumulates in, and its unit roundoff (2^-64 for the 80-bit
#: long double of x86-64; where ``long double`` is a double it is ``u`` and every bound widens with it).
_LD = np.longdouble
_U_LD = float(np.finfo(np.longdouble).eps) / 2
#: Terms of a prefix sum at least this far below its reference are exponentiated in the extended type,
#: and terms below :data:`_LD_CUT` are bounded by ``e^_LD_CUT`` each (they would underflow it).
_F64_CUT = -700.0
_LD_CUT = float(np.log(np.finfo(np.longdouble).tiny)) + 40.0
#: Newton steps of an ε(δ) query on the prefix face (:meth:`PrivacyRegion._crossing`), and how many of its
#: margins (8 u (|log δ| + 1), a few roundings of the values) an answer may lie beyond its aim.
_CROSSING_STEPS = 8
_CROSSING_WINDOW = 8.0
#: The profile takes :meth:`PrivacyRegion.delta` wherever its prefix bound is wider than this (in log).
_PROFILE_WIDTH = 1e-11


def _exp_up64(x: np.ndarray) -> np.ndarray:
    """Upper bounds of ``e^x`` as doubles for ``x`` in the extended type: ``x`` rounds to a double ``f``
    (``|f - x| <= u |x|``), numpy's ``exp`` is within 4 ulps (``8 u``), and the factor
    ``1 + u (12.5 + 1.02 |f|)`` and the product round once each (below -745, ``e^-745``)."""
    f = np.maximum(x.astype(float), -745.0)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(f) * (1.0 + UNIT_ROUNDOFF * (12.5 + 1.02 * np.abs(f)))


def _prefix_log_up(y: np.ndarray) -> np.ndarray:
    """Upper bounds of ``log Σ_{i <= j} e^{y_i}`` for every j, rigorous when each ``y_i`` (extended type)
    is an upper bound of its true log term (docs/reliability.md, "Profiles").

    The terms are taken relative to ``ref = max y``: ``y - ref`` rounds once (``v``, the extended unit
    roundoff) and is moved ``4 v |y - ref|`` up; each term is bounded from above by :func:`_exp_up64`
    (below -700 by the extended ``exp``, 4 of its ulps, and below :data:`_LD_CUT`, where that type
    underflows, by ``e^_LD_CUT``); the cumulative sum of ``j <= n`` positive terms in the extended type is
    within ``γ_{n-1} <= 1.01 (n - 1) v`` of the exact sum whatever the order; the log (4 ulps) and the
    addition of ``ref`` round a few ``v`` more."""
    v = _U_LD
    out = np.full(y.shape, _NEG_INF, dtype=_LD)
    if y.size == 0:
        return out
    ref = np.max(y)
    if not np.isfinite(ref):
        return out
    d = (y - ref) * (_LD(1) - _LD(4 * v))
    f = d.astype(float)
    with np.errstate(under="ignore"):
        tau = _exp_up64(d).astype(_LD)
    low = f < _F64_CUT
    if np.any(low):
        mid = low & (d >= _LD_CUT)
        tau[low] = np.exp(_LD(_LD_CUT))
        tau[mid] = np.exp(d[mid]) * (_LD(1) + _LD(10 * v))
    tau[np.isneginf(y)] = 0
    with np.errstate(divide="ignore"):
        ls = np.log(np.cumsum(tau))
        out = ref + ls
    margin = _LD(v) * (13 * np.abs(ls) + (6 * abs(float(ref)) + 4 + 1.05 * y.size))
    return np.where(np.isfinite(ls), out + margin, out)


def _logaddexp_up(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """An upper bound of ``log(e^x + e^y)`` in the extended type (``y`` finite): ``m + log1p(e^{-|x - y|})``
    with the difference moved up by its rounding and ``exp``, ``log1p`` and the sum 4 ulps each."""
    v = _U_LD
    m = np.maximum(x, y)
    r = m + np.log1p(np.exp(-np.abs(x - y) * (_LD(1) - _LD(4 * v))))
    return r + _LD(v) * (2 * np.abs(r) + 24)


def _decayed_prefix_log_up(y: np.ndarray, Lx: np.ndarray) -> np.ndarray:
    """Upper bounds of ``log D_k``, ``D_k = Σ_{j <= k} e^{y_j + L_k}`` (``y_j = log w_j - L_j``), for every k.

    The losses span any range, so the sums are taken in rows of about ``sqrt(N)`` atoms, each relative to
    its own largest term (:func:`_prefix_log_up`), and carried from row to row as
    ``D_k = e^{L_k - L_e} D_e + e^{L_k} Σ_{e < j <= k} e^{y_j}`` (``e`` the last atom of the row before):
    one extended ``logaddexp`` per atom, whose roundings add up over the rows (a few ``v`` each)."""
    v = _U_LD
    size = y.size
    b = _blocks(size)
    out = np.empty(size, dtype=_LD)
    prev, prev_loss = _LD(_NEG_INF), _LD(0)
    for start in range(0, size, b):
        rows = slice(start, min(start + b, size))
        lq = _prefix_log_up(y[rows])
        own = Lx[rows] + lq
        own = own + _LD(2 * v) * (np.abs(Lx[rows]) + np.abs(lq))
        if np.isfinite(prev):
            carried = (Lx[rows] - prev_loss) + prev
            carried = carried + _LD(2 * v) * (np.abs(Lx[rows] - prev_loss) + abs(prev) + np.abs(carried))
            own = _logaddexp_up(carried, own)       # every y is finite, so every own sum is
        out[rows] = own
        prev, prev_loss = own[-1], Lx[rows][-1]
    return out


def _log1mexp_up(x: np.ndarray) -> np.ndarray:
    """An upper bound of ``log(1 - e^x)`` for ``x < 0`` given in the extended type: ``x`` moved down by
    its rounding to a double, then :func:`log1mexp` (expm1/exp and log/log1p, 2 ulps each, condition
    number at most 1: within ``8 u (|value| + 1)``), as a double rounded up."""
    xf = np.nextafter((x * (_LD(1) + _LD(2 * _U_LD))).astype(float), -np.inf)
    with np.errstate(divide="ignore"):
        val = log1mexp(np.minimum(xf, -5e-324))
    return val + 8.5 * UNIT_ROUNDOFF * (np.abs(val) + 1.0)


def _profile_upper(region: PrivacyRegion, eps: np.ndarray) -> np.ndarray:
    """Certified upper δ at every ε of a sorted array, in O(N) together (docs/reliability.md, "Profiles").

    With each atom's mass raised by its bound, ``w_j = e^{ℓ̂_j + Δ_j} >= p_j``, and the query moved down
    by the loss error, ``s <= ε - η``, the exact pair's ``δ(ε) <= Σ_{L̂_j > s} w_j (1 - e^{s - L̂_j}) +
    p_inf e^{Δ_inf} (+ the left-out mass)``. With the ``n`` atoms above s, that sum is
    ``C_{n-1} + (1 - e^{s - L̂_{n-1}}) D_{n-1}`` (the prefix face's identity), where
    ``D_k = e^{L̂_k} Σ_{j<=k} w_j e^{-L̂_j}`` and ``C_k = Σ_{i<k} (1 - e^{L̂_{i+1} - L̂_i}) D_i`` are prefix
    sums of positive terms; ``D_k <= F_k = Σ_{j<=k} w_j`` and ``δ <= F_{n-1} + p_inf`` bound them too
    (they take over where the first underflows). Every log is carried in the extended type and raised by
    its rounding, so each of these is an upper bound; where the result is more than
    :data:`_PROFILE_WIDTH` plus the atoms' own bound above the prefix face's nominal value at ``s`` (or
    ``s < 0`` with outward-rounded losses, or no atom above ``s``), :meth:`PrivacyRegion.delta` answers.
    """
    err = region._err
    L, lp = region._loss, region._log_p
    u, v = UNIT_ROUNDOFF, _U_LD
    s = np.nextafter(eps - err.loss, -np.inf) if err.loss else eps
    n = np.searchsorted(-L, -s, side="left")
    direct = (n == 0) | ((s < 0) & (err.loss_rel > 0))
    out = np.zeros(eps.shape)
    size = int(np.max(n[~direct], initial=0))
    if size:
        Lf, lpf = L[:size], lp[:size]
        bound = np.asarray(err.log_mass(np.abs(lpf)), dtype=float) * (1 + 8 * u)
        mag = (np.abs(lpf) + np.abs(Lf) + 1.0) * (8 * v)           # covers the extended roundings below
        Lx = Lf.astype(_LD)
        a = lpf.astype(_LD) + (bound + mag).astype(_LD)             # >= log p_j
        log_f = _prefix_log_up(a)
        chain = _decayed_prefix_log_up((a - Lx) + mag.astype(_LD), Lx)
        log_d = np.minimum(chain, log_f)
        # some D_i, i <= k, bounded by a clearly smaller F_i (the chain underflowed there)
        substituted = np.maximum.accumulate(log_f < chain - _LD(_PROFILE_WIDTH))
        gaps = (Lx[:-1] - Lx[1:]) * (_LD(1) + _LD(2 * v))
        log_c = _prefix_log_up(_log1mexp_up(-gaps).astype(_LD) + log_d[:-1]
                               + (4 * v * (np.abs(log_d[:-1].astype(float)) + 30.0)).astype(_LD))
        k = n[~direct] - 1
        x = s[~direct].astype(_LD) - Lx[k]
        t_d = _log1mexp_up(x).astype(_LD) + log_d[k]
        t_d = t_d + (4 * v * (np.abs(t_d.astype(float)) + 30.0)).astype(_LD)
        rest = 0.0
        log_inf = region._log_p_inf
        if log_inf > _NEG_INF:
            inf = _LD(log_inf) + _LD(err.log_inf(abs(log_inf))) * _LD(1 + 4 * u)
            rest += float(_exp_up64(np.array([inf]))[0])
        if err.dropped > _NEG_INF:
            left_out = float(_exp_up64(np.array([_LD(err.dropped)]))[0])
            rest = rest + np.where(s[~direct] < err.dropped_top, left_out, 0.0)
        with np.errstate(under="ignore"):
            main = (np.where(k >= 1, _exp_up64(log_c[np.maximum(k - 1, 0)]) if log_c.size else 0.0, 0.0)
                    + _exp_up64(t_d)) + rest
            alt = _exp_up64(log_f[k]) + rest
        up = np.nextafter(np.minimum(main, alt) * (1 + 4 * u), np.inf)
        out[~direct] = np.minimum(up, 1.0)
        # the sum through the chain of D is as tight as its roundings; only where F stood in for some D_i
        # (an underflowed chain) may it be loose: there it is compared with the prefix face's nominal
        suspect = np.flatnonzero(substituted[k] & (up >= 1e-300))
        if suspect.size:
            with np.errstate(divide="ignore", invalid="ignore"):
                excess = np.log(up[suspect]) - region._face().log_delta(s[~direct][suspect])
                deepest = np.maximum.accumulate(np.abs(lpf))[k[suspect]]
                allowed = _PROFILE_WIDTH + np.asarray(err.log_mass(deepest), dtype=float)
            wide = suspect[~(excess <= allowed)]
            direct[np.flatnonzero(~direct)[wide]] = True
    # no atom above s and no left-out mass there: δ is the +inf mass (its bound, or the exact double)
    alone = direct & (n == 0) & ~(s < err.dropped_top)
    if np.any(alone):
        log_inf = region._log_p_inf
        widen = err.log_inf(abs(log_inf)) if log_inf > _NEG_INF and err.inf_exact is None else 0.0
        out[alone] = float(_exp_up(round_up(log_inf + widen) if widen else log_inf))
        direct &= ~alone
    if np.any(direct):
        out[direct] = region.delta(eps[direct])
    return region._exact_inf(eps, out)


def _exp_up(x: np.ndarray | float) -> np.ndarray:
    """``e^x`` rounded up (numpy's exp is within 1 ulp), clipped to [0, 1] for log probabilities."""
    with np.errstate(under="ignore"):
        v = np.exp(np.asarray(x, dtype=float))
    return np.minimum(np.where(v > 0, np.nextafter(v, np.inf), v), 1.0)


def _exp_down(x: np.ndarray | float) -> np.ndarray:
    """``e^x`` rounded down (for the attack side), clipped to [0, 1]."""
    with np.errstate(under="ignore"):
        v = np.exp(np.asarray(x, dtype=float))
    return np.clip(np.nextafter(v, -np.inf), 0.0, 1.0)


def merge_error(err: ErrorBound, group: int) -> ErrorBound:
    """The bound after atoms are merged ``group`` at a time by :func:`_log_reduce` (a sum of positive
    terms in log space).

    Each term ``e^{a - m}`` (``m`` the group's largest) is rounded to ``u (|a - m| + 2)`` relative, and
    ``x e^{-x} <= 1/e`` bounds the weighted sum of the ``|a - m| u`` parts; the pairwise sum adds
    ``group u``, the log and the addition of ``m`` ``u (|ℓ| + 2)``. The inherited per-atom bounds: the
    relative error of the sum is the weighted mean of its terms', whose weighted mean depth below it is at
    most ``log group`` (an entropy; :meth:`ErrorBound.times`), so they are charged ``1 + log group`` nats.
    """
    depth = 1.0 + math.log(max(group, 1))
    u = UNIT_ROUNDOFF
    return err.widened(mass=err.per_nat * depth + err.per_sqrt_nat * math.sqrt(depth) + u * (group + 6),
                       per_nat=2 * u)


def lines_error(region: PrivacyRegion, losses: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray
                ) -> ErrorBound:
    """The bound of a region built from lines ``1 - bII - e^{L_i} bI <= d_i`` (:meth:`PrivacyRegion.
    from_constraints`, :meth:`~PrivacyRegion.intersect`), whose exact ``d_i`` lie in ``[d_lo, d_hi]``:
    a uniform relative bound on δ itself (docs/reliability.md, "Regions from lines").

    ``δ`` is convex in ``σ = e^ε`` (a support function) for the exact region and for the computed one;
    the computed one is affine in σ between its atoms' losses. Upper side: the exact δ at an atom loss
    ``L_k`` is at most ``d_hi(L_k)`` (its line holds on the region), so if ``d_hi <= e^m δ̂`` at every
    atom loss, at ``σ -> ∞`` (``δ(∞)``) and at ``σ = 0`` (where the exact δ is 1), the convex exact δ
    lies under the affine ``e^m δ̂`` between them: ``δ <= e^m δ̂`` at every ε. Lower side: ``δ̂ <= e^m δ``
    at the exact region's own breakpoints (the losses of its active lines, where ``δ = d``) gives it
    everywhere the same way; it is checked at the computed region's atoms, i.e. the computed hull's active
    lines are taken to be the exact one's (a line within rounding of active is its neighbours' meeting
    point either way). ``δ̂`` is itself bracketed by the certified evaluation of the stored atoms. The
    bound is returned as a ``mass`` term (and the same on the ``+inf`` mass), which the certified
    evaluation applies as the factor ``e^{±m}`` on δ, and products and mixtures carry like an atom's
    (their δ are positive combinations of the factors' δ at shifted ε).
    """
    u = UNIT_ROUNDOFF
    base = region._err
    if region._loss.size == 0:
        return base
    order = np.argsort(-losses, kind="stable")
    L, lo, hi = losses[order], d_lo[order], d_hi[order]
    starts = np.flatnonzero(np.concatenate(([True], np.diff(L) != 0)))
    # lines of equal slope: the exact δ there is at most the smallest d (and at least the smallest d_lo)
    L, lo, hi = L[starts], np.minimum.reduceat(lo, starts), np.minimum.reduceat(hi, starts)
    at = np.searchsorted(-L, -region._loss)
    if not (np.all(at < L.size) and np.all(L[np.minimum(at, L.size - 1)] == region._loss)):
        raise InternalError("a region from lines has an edge on no line (a defect in lpdp: please report it)")
    hat_lo = region._certified(region._loss, upper=False)
    hat_hi = region._certified(region._loss, upper=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(hi[at] > 0, np.log(hi[at]) - hat_lo, 0.0)
        down = np.where(hat_hi > _NEG_INF, hat_hi - np.log(lo[at]), 0.0)
    total = float(np.logaddexp(logsumexp(region._log_p), region._log_p_inf))
    spread = u * (4 * region._loss.size + 8)               # the sum's own rounding (positive terms)
    worst = max(float(np.max(up, initial=0.0)), float(np.max(down, initial=0.0)),
                -total + spread, total + spread)
    p_inf_hi, p_inf_lo = float(np.min(hi)), float(np.min(lo))   # δ(∞) = the least d (every line at bI = 0)
    if region._log_p_inf > _NEG_INF:
        with np.errstate(divide="ignore"):
            worst = max(worst, math.log(p_inf_hi) - region._log_p_inf,
                        region._log_p_inf - (math.log(p_inf_lo) if p_inf_lo > 0 else _NEG_INF))
    elif p_inf_hi > 0:
        worst = math.inf
    if not math.isfinite(worst):
        worst = math.inf
    m = round_up(worst * (1 + 1e-9) + 4 * u) if worst > 0 else 4 * u
    inf = base.inf_mass if base.inf_mass is not None else 0.0
    return ErrorBound(loss=base.loss, mass=round_up(base.mass + m), per_nat=base.per_nat,
                      per_sqrt_nat=base.per_sqrt_nat, inf_mass=round_up(inf + m),
                      loss_rel=base.loss_rel, loss_down=base.loss_down,
                      inf_exact=base.inf_exact if base.inf_exact is not None and p_inf_lo == p_inf_hi
                      == base.inf_exact else None)


def _log_reduce(a: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``log Σ e^a`` over consecutive groups beginning at ``starts``."""
    m = np.maximum.reduceat(a, starts)
    m = np.where(np.isfinite(m), m, 0.0)
    rep = np.repeat(m, np.diff(np.append(starts, a.size)))
    with np.errstate(divide="ignore"):
        return np.log(np.add.reduceat(np.exp(a - rep), starts)) + m


def _lower_hull(points: np.ndarray) -> np.ndarray:
    """Lower convex hull (Andrew's monotone chain) of points that include ``(0, 1)`` and ``(1, 0)``.

    Returns the chain from ``(0, 1)`` down to ``(1, 0)``: the lower boundary of the smallest convex
    region that holds the points and the diagonal.
    """
    pts = np.unique(points, axis=0)
    pts = pts[np.lexsort((-pts[:, 1], pts[:, 0]))]   # by x, then y descending
    hull: list[np.ndarray] = []
    for p in pts:
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (a[0] - o[0]) * (p[1] - o[1]) - (a[1] - o[1]) * (p[0] - o[0])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return np.array(hull)
