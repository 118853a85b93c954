"""f-DP composition bracketed by multiple DP constraints (paper Section IV; n constraints: docs/fdp.md).

A symmetric trade-off function ``f`` is approximated by the region of n (ε_j, δ_j) constraints

* **from below** (Proposition 1 for n = 2): ``f⁻ = max_j f_{ε_j,δ_j} <= f`` with the largest area. Every
  f-DP mechanism satisfies these constraints, so the composition of ``f⁻`` (Thms 2-3; docs/fdp.md) is a valid
  privacy guarantee for the composition of f: ``δ⁻(ε) >= δ_f(ε)``.
* **from above** (Proposition 2 for n = 2): ``f⁺ >= f`` with the least area; its composition is an
  attack bound: ``δ⁺(ε) <= δ_f(ε)``.

Since ``f⁻ <= f <= f⁺`` the regions nest the other way: ``R_k(f⁺) ⊆ R(f^{⊗k}) ⊆ R_k(f⁻)``.

How the points are chosen (proven optimality conditions, solved numerically):

* From below the lines are tangents of f. In the normal rotation (Sec. IV) the area of ``f⁻`` is
  ``∫ E(u) du`` with ``E`` the upper envelope of the tangents ``v = g(u_j) + g'(u_j)(u - u_j)`` *and of the
  boundary line* ``v = -u`` (the edge ``bI = 0``). Its derivative in ``u_j`` is
  ``g''(u_j) ∫_{I_j} (u - u_j) du`` over the interval ``I_j`` where tangent j is on top, so at the optimum
  each tangent touches at the midpoint of its interval. For n = 2 this is Proposition 1's equation with
  one correction: the first interval starts where tangent 1 meets ``v = -u``, not at ``z``. The spec's
  literal equation (midpoint of ``[z, t*]``) gives (1.31983, 0.07743), (0.37496, 0.27215) for ``G_1``
  and a smaller area; the midpoint rule above gives the spec's values (1.10806, 0.10831),
  (0.32916, 0.28499), which a dense search over all four parameters confirms (tests).
* From above the lines are chords of f through ``(0, f(0))``, interior points ``t_1 < ... < t_{n-1}``
  and ``(c, c)``. The area under the chords is a sum of trapezoids whose derivative in ``t_i`` vanishes
  iff ``f'(t_i)`` equals the slope of the chord joining the neighbours; for n = 2 this is Proposition 2's
  ``f'(t*) = (c - f(0))/c``.

The conditions are solved by L-BFGS-B on the exact area with its exact gradient.

**Lattice (n >= 3).** With ``step=Δ`` every ε_j is a multiple of Δ, so the k-fold composition is a 1-D
convolution power on integers (:func:`lpdp.compose.multi`), exact in log space. Rounding keeps each side
valid: from below an ε_j moves to the nearest lattice point and its δ_j is recomputed as the tight
``δ_f(ε_j)``, so the line is again a tangent of f (any ε is allowed; only the area changes, by second order
in Δ). From above the chords are rebuilt from ``(0, f(0))`` with lattice slopes (each new chord starts where
the previous one meets f again, and a final ε = 0 chord is used if the chain stops short of c), so every line
stays a chord of f and ``f⁺ >= f`` holds exactly. Each δ is rounded by a relative ``SAFETY`` toward the
valid side (up from below, down from above).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, get_args

import numpy as np
from scipy.optimize import minimize

from lpdp._search import bisect
from lpdp._validate import check_int, check_positive, check_probability
from lpdp.accountant import Accountant
from lpdp.compose.multi import STEP_TOL
from lpdp.errors import ParameterError, SolverError
from lpdp.mechanisms import DPMechanism, RegionMechanism
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction

__all__ = ["Approximation", "Bracket", "below", "above", "bracket", "bracket_mixed", "DEFAULT_STEP",
           "Family"]

#: Relative rounding of every δ toward the valid side of its approximation.
SAFETY = 1e-12
#: Lattice step used for n >= 3 constraints when none is given.
DEFAULT_STEP = 0.01
#: Where the n constraints go: largest area (Propositions 1-2), or evenly up to a small δ (``delta_min``).
Layout = Literal["area", "tail"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
#: Largest number of constraints accepted (the lattice handles more, but the optimiser gets slow).
MAX_CONSTRAINTS = 64
_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True)
class Approximation:
    """An n-constraint approximation of a trade-off function from one side.

    ``side`` is ``"below"`` (``f⁻ <= f``: a valid privacy guarantee) or ``"above"`` (``f⁺ >= f``: an attack
    bound). ``constraints`` are the ``(ε_j, δ_j)`` pairs, largest ε first; ``step`` is their lattice step
    (``None`` when they are not rounded).
    """

    side: str
    constraints: tuple[tuple[float, float], ...]
    step: float | None = None

    @cached_property
    def region(self) -> PrivacyRegion:
        """``∩_j R(ε_j, δ_j)``: the region of the approximation."""
        return PrivacyRegion.from_constraints(self.constraints)

    def compose(self, k: int) -> PrivacyRegion:
        """Exact k-fold composition of a mechanism meeting every constraint (:class:`lpdp.Accountant`:
        Kairouz for n = 1, Theorems 2–3 for n = 2, the n-constraint lattice otherwise or with a step)."""
        k = check_int(k, "k", 1)
        return Accountant(step=self.step).compose(DPMechanism(self.constraints), k).guarantee().region


@dataclass(frozen=True)
class Bracket:
    """``R_k(f⁺) ⊆ R(f^{⊗k}) ⊆ R_k(f⁻)`` with the approximations, and the exact region's f if known.

    For :func:`bracket_mixed` ``below`` and ``above`` are those of the first trade-off function. The
    guarantee is ``from_below.delta`` / ``.epsilon`` (certified from above); the attack bound is
    ``from_above.lower.delta`` / ``.epsilon`` (certified from below: ``from_above.delta`` is that region's
    own guarantee side, which may lie an ulp above the truth where the two regions touch, e.g. at ε = 0).
    """

    below: Approximation
    above: Approximation
    from_below: PrivacyRegion
    from_above: PrivacyRegion
    exact: TradeoffFunction | None
    k: int

    def gap(self, epsilon: float | np.ndarray) -> np.ndarray | float:
        """``δ⁻(ε) - δ⁺(ε) >= 0``: how far apart the two sides are at ε."""
        return self.from_below.delta(epsilon) - self.from_above.delta_lower(epsilon)

    def max_gap(self) -> float:
        """``max_ε (δ⁻(ε) - δ⁺(ε))`` over the edge losses of both regions and a fine grid."""
        top = float(max(self.from_below.losses.max(initial=1.0), self.from_above.losses.max(initial=1.0)))
        eps = np.unique(np.concatenate([np.linspace(0.0, top, 2001), np.abs(self.from_below.losses),
                                        np.abs(self.from_above.losses)]))
        return float(np.max(self.gap(eps)))

    def area_between(self) -> float:
        """Area between the two boundaries: ``area(R_k(f⁻)) - area(R_k(f⁺))``."""
        return self.from_below.area() - self.from_above.area()


#: Families of approximations from below: any n constraints, or DP-TV (one of them has ε = 0).
Family = Literal["dp", "dp_tv"]


def below(f: TradeoffFunction, n: int = 2, *, step: float | None = None,
          delta_min: float | None = None, layout: Layout = "area", family: Family = "dp") -> Approximation:
    """The best n-constraint approximation of f from below (Proposition 1 for n = 2; module docstring).

    Every line is a tangent of f, so ``f⁻ <= f``: any f-DP mechanism satisfies each returned
    ``(ε_j, δ_j)``.

    ``delta_min`` fixes one tangent where ``δ_f(ε*) = delta_min`` (on a lattice: the next lattice point
    up, so its δ stays at most ``delta_min``). The area-optimal tangents stop at a moderate ε, so their
    composition has ``δ(∞) = 1 - (1 - δ_min)^k``: set ``delta_min`` well below ``target / k`` to read ε at
    a small target δ. ``layout="area"`` places the other n - 1 tangents for the largest area;
    ``layout="tail"`` puts all n at ``ε_j = j ε*/n`` (better when the question is ε at a small δ).
    ``family="dp_tv"`` keeps one constraint at ε = 0 (a total-variation bound: the DP-TV family of
    Ghazi and Issa): its tangent touches f at the fixed point, δ = δ_f(0); the other n - 1 are placed
    for the largest area. For ``G_1`` and n = 2 the area under it (0.228866) is below the free pair's
    (0.232975): the best approximation from below is not DP-TV (Figure 3's caption).

    Examples
    --------
    >>> from lpdp.fdp import below
    >>> from lpdp.tradeoff import gaussian
    >>> [(round(e, 5), round(d, 5)) for e, d in below(gaussian(1.0)).constraints]
    [(1.10806, 0.10831), (0.32916, 0.28499)]
    >>> below(gaussian(1.0), 3, delta_min=1e-9).constraints[0][1] <= 1e-9
    True
    >>> [(round(e, 5), round(d, 5)) for e, d in below(gaussian(1.0), family="dp_tv").constraints][1]
    (0.0, 0.38292)
    """
    n, step = _check(f, n, step)
    if family not in get_args(Family):
        raise ParameterError(f"family={family!r}: must be one of {get_args(Family)}")
    if family == "dp_tv" and (layout != "area" or n < 2):
        raise ParameterError(f"family='dp_tv' with n={n}, layout={layout!r}: needs n >= 2 and layout 'area'")
    top = _top_epsilon(f, delta_min, step, layout)
    if layout == "tail":
        eps = _tail_grid(top, n, step)
    else:
        eps = np.empty(0) if top is None else np.array([top])
        if family == "dp_tv":
            eps = np.concatenate([eps, [0.0]])
        if n > eps.size:
            x_fix = np.asarray(f.tangent_point(eps))
            u = _tangent_points(f, n - eps.size, (x_fix - np.asarray(f(x_fix))) / _SQRT2)
            free = np.log(-np.asarray(f.derivative(np.asarray(f.x_of_u(u)))))
            eps = np.concatenate([eps, free if step is None else np.rint(free / step) * step])
    eps = np.unique(np.maximum(eps, 0.0))[::-1]  # affine parts of f can give one tangent twice
    dl = np.minimum(np.asarray(f.delta(eps)) * (1 + SAFETY), 1.0)
    return Approximation("below", tuple((float(e), float(d)) for e, d in zip(eps, dl, strict=True)), step)


def above(f: TradeoffFunction, n: int = 2, *, step: float | None = None,
          delta_min: float | None = None, layout: Layout = "area") -> Approximation:
    """The best n-constraint approximation of f from above (Proposition 2 for n = 2; module docstring).

    Every line is a chord of f, so ``f⁺ >= f``: the composition of ``f⁺`` bounds the true composition
    from the attacker's side. ``layout="tail"`` (with ``delta_min``, as in :func:`below`) chains chords
    of slopes ``-e^{ε_j}``, ``ε_j = j ε*/n``, from ``(0, f(0))`` instead of minimising the area.

    Examples
    --------
    >>> from lpdp.fdp import above
    >>> from lpdp.tradeoff import gaussian
    >>> [(round(e, 5), round(d, 5)) for e, d in above(gaussian(1.0)).constraints]
    [(1.37838, 0.0), (0.38215, 0.23932)]
    """
    n, step = _check(f, n, step)
    top = _top_epsilon(f, delta_min, step, layout)
    if layout == "tail":
        return Approximation("above", _chain(f, _tail_grid(top, n, step)[::-1]), step)
    t = np.concatenate(([0.0], _chord_points(f, n), [f.fixed_point]))
    if step is None:
        return Approximation("above", _chords(f, t), None)
    slopes = np.diff(np.asarray(f(t))) / np.diff(t)
    eps = np.log(-slopes)
    options = [_chain(f, np.unique(r(eps / step))[::-1] * step) for r in (np.floor, np.rint)]
    best = max(options, key=lambda cons: PrivacyRegion.from_constraints(cons).area())
    return Approximation("above", best, step)


def bracket(f: TradeoffFunction, k: int, n: int = 2, *, step: float | None = None,
            delta_min: float | None = None, layout: Layout = "area") -> Bracket:
    """Bracket the k-fold composition of f between compositions of its n-constraint approximations.

    Parameters
    ----------
    f : TradeoffFunction
        A symmetric trade-off function (:mod:`lpdp.tradeoff`).
    k : int
        Number of composed f-DP mechanisms, >= 1.
    n : int
        n >= 1 constraints per approximation. n <= 2 is exact (Propositions 1–2 composed by Kairouz or
        Theorems 2–3, no lattice); n >= 3 uses the lattice ``step`` (default :data:`DEFAULT_STEP`).
    step : float, optional
        Lattice step for the ε_j (any n).
    delta_min : float, optional
        Fix one tangent of the approximation from below at ``δ_f(ε) = delta_min`` (see :func:`below`):
        needed to read ε at a small δ from the guarantee side.
    layout : {"area", "tail"}
        ``"area"``: the largest-area approximations (Propositions 1–2). ``"tail"``: ε_j evenly spaced up
        to ``δ_f(ε*) = delta_min`` on both sides, for questions about ε at a small δ.

    Returns
    -------
    Bracket
        ``from_below`` (``δ⁻ >= δ_true``, the privacy guarantee), ``from_above`` (``δ⁺ <= δ_true``) and
        ``exact`` (``G_{μ√k}`` for the Gaussian, else ``None``).

    Examples
    --------
    >>> from lpdp.fdp import bracket
    >>> from lpdp.tradeoff import gaussian
    >>> b = bracket(gaussian(1.0), 3)
    >>> lo, hi = float(b.from_above.lower.delta(1.0)), float(b.from_below.delta(1.0))
    >>> lo <= float(b.exact.delta(1.0)) <= hi
    True
    """
    k = check_int(k, "k", 1)
    n = check_int(n, "n", 1, MAX_CONSTRAINTS)
    if step is None and n >= 3:
        step = DEFAULT_STEP
    lo = below(f, n, step=step, delta_min=delta_min, layout=layout)
    hi = above(f, n, step=step, delta_min=delta_min, layout=layout)
    return Bracket(lo, hi, lo.compose(k), hi.compose(k), f.composed(k), k)


def bracket_mixed(parts: Sequence[tuple[TradeoffFunction, int]], n: int = 2, *,
                  step: float | None = None, delta_min: float | None = None, layout: Layout = "area",
                  regions: Sequence[tuple[PrivacyRegion, int]] = ()) -> Bracket:
    """Bracket the composition of mechanisms with *different* trade-off functions (heterogeneous f-DP).

    Each ``f`` is approximated from both sides with n constraints and the regions are composed together
    by the exact lattice engine through :class:`lpdp.Accountant` (docs/fdp.md). With ``step=None``
    the lattice is exact in every distinct level (cost grows like ``k^levels``); pass a ``step`` to put
    all ε_j on one lattice (1-D, fast). ``exact`` is ``None``.

    ``delta_min`` and ``layout`` place the constraints as in :func:`below` and :func:`above`.
    ``regions`` are exact finite parts ``(symmetric region, count)`` composed with the others; with a
    ``step`` each region's profile ε_j is rounded up to the lattice on the guarantee side (a weaker
    constraint: the region grows) and down on the attack side (the region shrinks), keeping both sides
    valid.

    Examples
    --------
    >>> from lpdp.fdp import bracket_mixed
    >>> from lpdp.tradeoff import gaussian
    >>> b = bracket_mixed([(gaussian(1.0), 2), (gaussian(0.5), 3)], 2, step=0.01)
    >>> b.k, bool(b.from_above.lower.delta(1.0) <= b.from_below.delta(1.0))
    (5, True)
    """
    items = list(parts)
    if not items:
        raise ParameterError("parts=[]: at least one (trade-off function, count) pair is needed")
    n = check_int(n, "n", 1, MAX_CONSTRAINTS)
    counts = [check_int(c, f"parts[{i}].count", 0) for i, (_, c) in enumerate(items)]
    lows = [below(f, n, step=step, delta_min=delta_min, layout=layout) for f, _ in items]
    highs = [above(f, n, step=step, delta_min=delta_min, layout=layout) for f, _ in items]
    exact = [(r, check_int(c, f"regions[{i}].count", 0)) for i, (r, c) in enumerate(regions)]
    from_below = _composed([(a.region, c) for a, c in zip(lows, counts, strict=True)]
                           + [(_on_lattice(r, step, outward=True), c) for r, c in exact], step)
    from_above = _composed([(a.region, c) for a, c in zip(highs, counts, strict=True)]
                           + [(_on_lattice(r, step, outward=False), c) for r, c in exact], step)
    return Bracket(lows[0], highs[0], from_below, from_above, None, sum(counts) + sum(c for _, c in exact))


def _composed(parts: list[tuple[PrivacyRegion, int]], step: float | None) -> PrivacyRegion:
    """The exact composition of symmetric regions, by :class:`lpdp.Accountant` (one router)."""
    acc = Accountant(step=step)
    for region, count in parts:
        acc.compose(RegionMechanism(region), count)
    return acc.guarantee().region


def _on_lattice(region: PrivacyRegion, step: float | None, *, outward: bool) -> PrivacyRegion:
    """A symmetric region with every edge loss a multiple of ``step``: the region itself when it already
    is one, else its profile ε_j rounded up (``outward``: a region containing it) or down (one inside it)."""
    if step is None:
        return region
    ratio = np.abs(region.losses) / step
    if np.all(np.abs(ratio - np.rint(ratio)) <= STEP_TOL * np.maximum(1.0, np.rint(ratio))):
        return region
    cons = []
    for e, d in region.profile():
        j = math.ceil(e / step) if outward else math.floor(e / step)
        while (j * step < e) if outward else (j * step > e):      # the float product must not cross e
            j += 1 if outward else -1
        cons.append((j * step, min(d * (1 + SAFETY), 1.0) if outward else d * (1 - SAFETY)))
    return PrivacyRegion.from_constraints(cons)


# ---------------------------------------------------------------------- helpers
def _check(f: object, n: object, step: object) -> tuple[int, float | None]:
    if not isinstance(f, TradeoffFunction):
        raise ParameterError(f"f={f!r}: must be a TradeoffFunction (lpdp.tradeoff.gaussian, laplace, "
                             f"from_callable)")
    n = check_int(n, "n", 1, MAX_CONSTRAINTS)
    return n, None if step is None else check_positive(step, "step")


def _envelope(a: np.ndarray, c: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Integral over ``[-1/√2, 0]`` of ``max(-u, a_j u + c_j)``, and each line's active interval.

    Lines are tangents of the rotated graph (slopes ``a_j`` in (-1, 0]); ``v = -u`` is the edge
    ``bI = 0``. Returns the integral and the interval ends ``lo_j <= hi_j`` (equal when inactive).
    """
    order = np.argsort(a, kind="stable")
    slopes = np.concatenate(([-1.0], a[order]))
    icpt = np.concatenate(([0.0], c[order]))
    left = -1.0 / _SQRT2
    stack: list[int] = []
    starts: list[float] = []
    for j in range(slopes.size):
        start = left
        while stack:
            i = stack[-1]
            if slopes[j] == slopes[i]:
                start = math.inf if icpt[j] <= icpt[i] else starts[-1]
            else:
                start = (icpt[i] - icpt[j]) / (slopes[j] - slopes[i])
            if start <= starts[-1]:
                stack.pop()
                starts.pop()
                start = left
            else:
                break
        if start < 0.0:
            stack.append(j)
            starts.append(start)
    ends = starts[1:] + [0.0]
    lo = np.zeros(slopes.size)
    hi = np.zeros(slopes.size)
    lo[stack], hi[stack] = starts, ends
    hi = np.maximum(lo, np.minimum(hi, 0.0))
    total = float(np.sum(slopes * (hi ** 2 - lo ** 2) / 2 + icpt * (hi - lo)))
    out_lo, out_hi = np.empty(a.size), np.empty(a.size)
    out_lo[order], out_hi[order] = lo[1:], hi[1:]
    return total, out_lo, out_hi


def _top_epsilon(f: TradeoffFunction, delta_min: float | None, step: float | None, layout: str
                 ) -> float | None:
    """``ε*`` with ``δ_f(ε*) <= delta_min`` (lattice point above it), or ``None`` without ``delta_min``."""
    if layout not in LAYOUTS:
        raise ParameterError(f"layout={layout!r}: must be one of {LAYOUTS}")
    if delta_min is None:
        if layout == "tail":
            raise ParameterError("layout='tail' needs delta_min (the tangent that ends the tail)")
        return None
    delta_min = check_probability(delta_min, "delta_min", open_left=True, open_right=True)
    target = delta_min / (1 + 2 * SAFETY)          # δ stays <= delta_min after rounding up by SAFETY
    hi = float(f.epsilon(target))      # the smallest ε with δ_f(ε) <= target (the Gaussian's closed form)
    return hi if step is None else math.ceil(hi / step - 1e-9) * step


def _tail_grid(top: float, n: int, step: float | None) -> np.ndarray:
    """``ε_j = j ε*/n``, j = 1..n (largest exact; the others rounded to the lattice when there is one)."""
    eps = top * np.arange(1, n + 1) / n
    if step is not None:
        eps[:-1] = np.rint(eps[:-1] / step) * step
    return np.unique(eps)


def _tangent_points(f: TradeoffFunction, n: int, fixed: np.ndarray) -> np.ndarray:
    """Rotated points of n free tangents maximising the area of ``f⁻`` next to the ``fixed`` ones.

    The midpoint condition of the module docstring, solved by L-BFGS-B with the exact gradient.
    """
    z = f.z
    margin = 1e-9 * -z
    g_fix, a_fix, _ = (np.asarray(v) for v in f.rotation(fixed))
    c_fix = g_fix - a_fix * fixed

    def neg_area(u: np.ndarray) -> tuple[float, np.ndarray]:
        g, a, g2 = (np.asarray(v) for v in f.rotation(u))
        c = g - a * u
        total, lo, hi = _envelope(np.concatenate([a, a_fix]), np.concatenate([c, c_fix]))
        lo, hi = lo[:n], hi[:n]
        grad = g2 * (hi - lo) * ((hi + lo) / 2 - u)
        return -total, -grad

    u0 = z * (np.arange(n, 0, -1) - 0.5) / (n + 0.5)
    res = minimize(neg_area, u0, jac=True, method="L-BFGS-B", bounds=[(z + margin, 0.0)] * n,
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 2000})
    if not np.all(np.isfinite(res.x)):
        raise SolverError(f"the tangent points of {f.name} did not converge: {res.message}")
    return np.sort(res.x)


def _chord_points(f: TradeoffFunction, n: int) -> np.ndarray:
    """Interior chord points ``t_1 < ... < t_{n-1}`` in (0, c) minimising the area of ``f⁺``."""
    c = f.fixed_point
    if n == 1:
        return np.empty(0)

    def area(t: np.ndarray) -> tuple[float, np.ndarray]:
        order = np.argsort(t)
        pts = np.concatenate(([0.0], t[order], [c]))
        val = np.asarray(f(pts))
        total = float(np.sum(np.diff(pts) * (val[1:] + val[:-1]) / 2))
        d = np.asarray(f.derivative(pts[1:-1]))
        g = (d * (pts[2:] - pts[:-2]) - (val[2:] - val[:-2])) / 2
        grad = np.empty_like(t)
        grad[order] = g
        return total, grad

    t0 = c * np.arange(1, n) / n
    res = minimize(area, t0, jac=True, method="L-BFGS-B", bounds=[(1e-12 * c, c * (1 - 1e-12))] * (n - 1),
                   options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 2000})
    if not np.all(np.isfinite(res.x)):
        raise SolverError(f"the chord points of {f.name} did not converge: {res.message}")
    return np.sort(res.x)


def _chords(f: TradeoffFunction, t: np.ndarray) -> tuple[tuple[float, float], ...]:
    """``(ε, δ)`` of the chords through consecutive points ``t`` on f (δ rounded down by ``SAFETY``)."""
    val = np.asarray(f(t))
    slopes = np.diff(val) / np.diff(t)
    eps = np.log(-slopes)
    dl = (1.0 - val[:-1] + slopes * t[:-1]) * (1 - SAFETY)
    return tuple((float(e), float(max(d, 0.0))) for e, d in zip(eps, dl, strict=True))


def _chain(f: TradeoffFunction, eps: np.ndarray) -> tuple[tuple[float, float], ...]:
    """Chords of f with the given slopes ``-e^{ε_j}`` (largest ε first), chained from ``(0, f(0))``.

    Each chord starts where the previous one meets f again; a slope whose line is not above f just to the
    right of that point is skipped (by convexity it would stay under f). If the chain ends before c, the
    last chord is replaced by the ε = 0 chord from its start, which always reaches past c.
    """
    c = f.fixed_point
    x, pts, used = 0.0, [0.0], []
    for e in eps:
        s = -math.exp(e)
        fx = float(f(x))
        h = 1e-9 * (c - x)
        if float(f(x + h)) >= fx + s * h:       # the line does not start above f: it would cut under it
            continue
        if float(f(c)) <= fx + s * (c - x):   # the line is still above f at c: the chain covers [0, c]
            used.append(e)
            break
        lo, _ = bisect(lambda t: float(f(t)) < fx + s * (t - x), x, c, iterations=200)  # noqa: B023
        used.append(e)
        x = lo
        pts.append(x)
    else:
        used = used[:-1] if len(pts) > len(used) else used
        pts = pts[:len(used) + 1]
        used.append(0.0)
    out = []
    for start, e in zip(pts, used, strict=False):
        s = -math.exp(e)
        dl = (1.0 - float(f(start)) + s * start) * (1 - SAFETY)
        out.append((float(e), max(dl, 0.0)))
    return tuple(out)
