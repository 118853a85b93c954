"""Parameters (δ̃, θ) of the realisation-level filter, and their optimal choice for i.i.d. mechanisms.

filter paper, Alg. 1: any ``δ̃ + θ (1 - δ̃) N <= δ`` is valid; for i.i.d. mechanisms the filter continues
while ``l^{(i-1)} <= κ = ε - u(δ̃) - u(θ)`` (Prop. 1), so the best choice minimises ``u(δ̃) + u(θ)``
under the budget constraint, whatever ε.

Parameters (Taylor, Vippathalla and Coon, Section VI). Any ``(δ̃, θ)`` with ``δ̃ + θ (1 - δ̃) N <= δ``
keeps Theorem 1's guarantee for *every* sequence of requests, adaptive or not, as long as each step's
look-ahead covers the requests that can actually come next (``next=`` of :meth:`Filter.ask`). The choice
only changes how long the filter runs. For i.i.d. rounds the optimum is Proposition 1's
(:func:`optimal_parameters`); for other sequences the paper suggests fitting an i.i.d.
model. :func:`sequence_parameters` offers both routes:

* ``model="declared"``: the analyst declares the sequence ``s_1, s_2, ..., s_N`` they expect; the rule
  at step i is ``l^{(i-1)} <= ε - u_i(θ) - u_{i+1}(δ̃)``, so the parameters minimise the largest
  ``u_i(θ) + u_{i+1}(δ̃)`` over the steps and ordered pairs (for an i.i.d. sequence this is Prop. 1's
  objective);
* ``model="iid"``: the i.i.d. model fitted to the declared sequence, whose one-step loss law is the
  equal-weight mixture of the steps' laws (``P(L > c) = mean_i P(L_i > c)``, a
  :class:`~lpdp.mechanisms.MixtureMechanism`), optimised as in Prop. 1.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import optimize

from lpdp._validate import check_delta, check_epsilon, check_int, check_probability
from lpdp.errors import ParameterError
from lpdp.mechanisms import GaussianMechanism, Mechanism, MixtureMechanism, Step

__all__ = ["FilterParameters", "optimal_parameters", "sequence_parameters", "check_budget"]

#: Points of the log-spaced grid a continuous optimum is searched on (then refined by Brent's method).
GRID_POINTS = 4001
#: The grid is searched coarse to fine: every ``GRID_STRIDE``-th point first, then the fine points within
#: two coarse steps of the best coarse one. For a unimodal objective (the Gaussian's is convex) the best
#: fine point, hence the answer, is the full grid's; a loss quantile costing milliseconds (a subsampled
#: mechanism's) then costs 12 times fewer evaluations.
GRID_STRIDE = 16


def check_budget(delta: float, max_steps: int, delta_tilde: float, theta: float) -> None:
    """Raise :class:`ParameterError` unless ``δ̃ + θ (1 - δ̃) N <= δ`` (filter paper, Alg. 1)."""
    used = delta_tilde + theta * (1.0 - delta_tilde) * max_steps
    if used > delta:
        raise ParameterError(
            f"delta_tilde={delta_tilde!r}, theta={theta!r}, max_steps={max_steps}: "
            f"delta_tilde + theta*(1-delta_tilde)*max_steps = {used!r} must be <= delta={delta!r}")


def theta_for(delta: float, n: int, delta_tilde: float) -> float:
    """The largest float θ with ``δ̃ + θ (1 - δ̃) N <= δ``."""
    theta = max(0.0, (delta - delta_tilde) / ((1.0 - delta_tilde) * n))
    while theta > 0 and delta_tilde + theta * (1.0 - delta_tilde) * n > delta:
        theta = math.nextafter(theta, 0.0)
    return theta


def _delta_tilde_for(delta: float, n: int, theta: float) -> float:
    """The largest float δ̃ with ``δ̃ + θ (1 - δ̃) N <= δ`` (needs ``θ N <= δ``)."""
    d = max(0.0, (delta - theta * n) / (1.0 - theta * n))
    while d > 0 and d + theta * (1.0 - d) * n > delta:
        d = math.nextafter(d, 0.0)
    return d


@dataclass(frozen=True)
class FilterParameters:
    """A valid parameter set ``(δ, N, δ̃, θ)`` of the realisation-level filter.

    Examples
    --------
    >>> p = FilterParameters(delta=1e-3, max_steps=48, delta_tilde=5e-4, theta=1e-5)
    >>> round(p.kappa(GaussianMechanism(sigma=2.0), 6.0), 4)
    1.9723
    """

    delta: float
    max_steps: int
    delta_tilde: float
    theta: float

    def __post_init__(self) -> None:
        check_delta(self.delta)
        check_int(self.max_steps, "max_steps")
        check_probability(self.delta_tilde, "delta_tilde")
        check_probability(self.theta, "theta")
        check_budget(self.delta, self.max_steps, self.delta_tilde, self.theta)

    def offset(self, mechanism: Mechanism, value: Any = 1.0, other: Any = 0.0) -> float:
        """``u(δ̃) + u(θ)`` for the ordered input pair ``(value, other)``."""
        ud = mechanism.loss_quantile(self.delta_tilde, value, other)
        ut = mechanism.loss_quantile(self.theta, value, other)
        return math.inf if math.inf in (ud, ut) else ud + ut

    def kappa(self, mechanism: Mechanism, epsilon: float, value: Any = 1.0,
              other: Any = 0.0) -> float:
        """``κ = ε - u(δ̃) - u(θ)`` (filter paper, Alg. 1, Prop. 1); ``-inf`` when a quantile is ``+inf``."""
        return check_epsilon(epsilon) - self.offset(mechanism, value, other)

    def first_release_ok(self, mechanism: Mechanism, epsilon: float, value: Any = 1.0,
                         other: Any = 0.0) -> bool:
        """Whether ``P(L_1 > ε) <= δ̃``, i.e. ``ε >= u(δ̃)`` (filter paper, Alg. 1, first release)."""
        return check_epsilon(epsilon) >= mechanism.loss_quantile(self.delta_tilde, value, other)


def _objective(mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]], d: float,
               t: float) -> tuple[float, float]:
    """``(max u(δ̃) + u(θ), max u(δ̃))`` over ordered pairs: -κ, then the first-release threshold."""
    worst, first = -math.inf, -math.inf
    for a, b in inputs:
        for v, w in ((a, b), (b, a)):
            ud = mechanism.loss_quantile(d, v, w)
            ut = mechanism.loss_quantile(t, v, w)
            worst = max(worst, math.inf if math.inf in (ud, ut) else ud + ut)
            first = max(first, ud)
    return worst, first


def optimal_parameters(delta: float, max_steps: int, mechanism: Mechanism | None = None, *,
                       inputs: Sequence[tuple[Any, Any]] = ((1.0, 0.0),)) -> FilterParameters:
    """The (δ̃, θ) that maximise κ for i.i.d. rounds of ``mechanism`` (filter paper, Alg. 1, Parameters).

    The budget constraint binds at the optimum (``u`` is non-increasing), so
    ``θ(δ̃) = (δ - δ̃) / ((1 - δ̃) N)`` and the problem is the 1-D minimisation of
    ``J(δ̃) = max over ordered input pairs of u(δ̃) + u(θ(δ̃))``.

    * Gaussian (the default mechanism): ``u(a) = μ²/2 - μ Φ^{-1}(a)``, so ``J`` is convex on ``(0, δ)``
      (``-Φ^{-1}`` is convex and decreasing on ``(0, 1/2)``, and ``θ(δ̃)`` is concave:
      ``θ'' = 2(δ - 1)/(N (1 - δ̃)³) < 0``), and does not depend on σ. It is minimised by bounded
      Brent search on ``log δ̃`` around the best point of a log-spaced grid (searched coarse to fine,
      :data:`GRID_STRIDE`: for a convex ``J`` the same point as the whole grid), and the answer is
      checked to be no worse than every grid point evaluated.
    * Finite outputs: ``u`` is a step function whose jumps sit at the tail masses ``P(L > ℓ_j)``; on
      each step the best point is a left end, so the exact optimum is among ``δ̃ = P(L > ℓ_j)`` and
      ``θ = P(L > ℓ_j)`` (the other parameter as large as the budget allows); all are enumerated.
    * Other mechanisms: grid plus local refinement, as for the Gaussian.

    Ties in κ (e.g. every choice gives ``κ = -inf`` because the loss has an atom at ``+inf``) are broken
    by the smaller first-release threshold ``u(δ̃)``, so at least one release stays possible when it can.

    Parameters
    ----------
    delta : float
        Target δ in (0, 1).
    max_steps : int
        N, the largest stopping time.
    mechanism : Mechanism, optional
        The i.i.d. round (default: a Gaussian, whose optimum is the same for every σ).
    inputs : sequence of (input, input)
        Mechanism inputs of the neighbouring pairs (both orderings are used).

    Examples
    --------
    >>> p = optimal_parameters(1e-3, 48)
    >>> f"{p.delta_tilde:.4e} {p.theta:.4e}"
    '5.6079e-04 9.1553e-06'
    """
    delta = check_delta(delta, allow_one=False)
    if delta == 0.0:
        raise ParameterError("delta=0.0: must be in (0, 1) for the realisation-level filter")
    n = check_int(max_steps, "max_steps")
    mechanism = GaussianMechanism(1.0) if mechanism is None else mechanism
    inputs = tuple(inputs)
    if not inputs:
        raise ParameterError("inputs=(): at least one pair of mechanism inputs is needed")

    def candidate(d: float) -> tuple[tuple[float, float], float, float]:
        t = theta_for(delta, n, d)
        return _objective(mechanism, inputs, d, t), d, t

    cands: list[tuple[tuple[float, float], float, float]] = []
    if mechanism.finite_outputs:
        for a, b in inputs:
            for v, w in ((a, b), (b, a)):
                values, probs = mechanism.loss_pmf(v, w)
                tails = np.cumsum(probs[::-1])[:-1]  # P(L > ℓ_j), from the top atom down
                for g in map(float, np.unique(np.append(tails, 0.0))):
                    if g < delta:
                        cands.append(candidate(g))
                    if g * n <= delta:   # else no δ̃ >= 0 fits the budget with θ = g
                        d = _delta_tilde_for(delta, n, g)
                        cands.append((_objective(mechanism, inputs, d, g), d, g))
    else:
        grid = np.geomspace(delta * 1e-9, delta * (1 - 1e-9), GRID_POINTS)
        scores = {i: candidate(float(grid[i])) for i in range(0, grid.size, GRID_STRIDE)}
        best = min(sorted(scores), key=scores.__getitem__)
        for i in range(max(best - 2 * GRID_STRIDE, 0), min(best + 2 * GRID_STRIDE + 1, grid.size)):
            if i not in scores:
                scores[i] = candidate(float(grid[i]))
        cands = list(scores.values())
        k = min(sorted(scores), key=scores.__getitem__)
        lo, hi = math.log(grid[max(k - 1, 0)]), math.log(grid[min(k + 1, grid.size - 1)])
        res = optimize.minimize_scalar(lambda s: candidate(math.exp(s))[0][0], bounds=(lo, hi),
                                       method="bounded", options={"xatol": 1e-12})
        cands.append(candidate(math.exp(float(res.x))))
    _, d, t = min(cands)
    return FilterParameters(delta, n, d, t)


def _quantiles(step: Step, level: float, pairs: Sequence[tuple[Hashable, Hashable]]) -> list[float]:
    mech, req = step
    out = []
    for a, b in pairs:
        for v, w in ((a, b), (b, a)):
            x, y = (v, w) if req is None else (req(v), req(w))
            out.append(mech.loss_quantile(level, x, y))
    return out


def sequence_parameters(delta: float, max_steps: int, steps: Sequence[Step],
                        pairs: Sequence[tuple[Hashable, Hashable]], *,
                        model: Literal["declared", "iid"] = "declared") -> FilterParameters:
    """``(δ̃, θ)`` of the realisation-level filter for a declared, possibly heterogeneous sequence.

    Parameters
    ----------
    delta, max_steps : float, int
        The budget's δ and N.
    steps : sequence of (mechanism, request or None)
        The declared sequence (repeated cyclically up to N steps when shorter).
    pairs : sequence of (database, database)
        The neighbouring pairs (both orders are used).
    model : {"declared", "iid"}
        Optimise for the declared sequence itself, or for the i.i.d. model fitted to it (module
        docstring). Either way the guarantee holds whatever sequence actually runs.

    Examples
    --------
    >>> g = GaussianMechanism(2.0)
    >>> a = sequence_parameters(1e-3, 48, [(g, None)], [(1, 0)])
    >>> b = optimal_parameters(1e-3, 48)
    >>> abs(a.delta_tilde / b.delta_tilde - 1) < 1e-3
    True
    """
    delta = check_delta(delta, allow_one=False)
    if delta == 0.0:
        raise ParameterError("delta=0.0: must be in (0, 1) for the realisation-level filter")
    n = check_int(max_steps, "max_steps")
    steps = [(m, r) for m, r in steps]
    distinct = list(dict.fromkeys(steps))
    if not steps:
        raise ParameterError("steps=[]: declare at least one (mechanism, request) step")
    if model not in ("declared", "iid"):
        raise ParameterError(f"model={model!r}: must be 'declared' or 'iid'")
    ordered = [q for a, b in pairs for q in ((a, b), (b, a))]
    cyc = [steps[i % len(steps)] for i in range(min(n, len(steps) + 1))]
    seq = list(dict.fromkeys((cyc[i], cyc[min(i + 1, len(cyc) - 1)])  # distinct consecutive steps
                             for i in range(max(len(cyc) - 1, 1))))

    fitted = MixtureMechanism(distinct, [steps.count(s) for s in distinct])

    def objective(d: float) -> tuple[float, float]:
        t = theta_for(delta, n, d)
        if model == "iid":
            ud = [fitted.loss_quantile(d, *p) for p in ordered]
            ut = [fitted.loss_quantile(t, *p) for p in ordered]
            worst = max(x + y for x, y in zip(ud, ut, strict=True))
            return worst, max(ud)
        worst = max(max(x + y for x, y in zip(_quantiles(s, t, pairs), _quantiles(nxt, d, pairs),
                                               strict=True))
                    for s, nxt in seq)
        return worst, max(_quantiles(steps[0], d, pairs))

    grid = np.geomspace(delta * 1e-9, delta * (1 - 1e-9), 241 if model == "declared" else 61)
    cands = [(objective(float(d)), float(d)) for d in grid]
    k = min(range(len(cands)), key=lambda i: cands[i][0])
    lo, hi = math.log(grid[max(k - 1, 0)]), math.log(grid[min(k + 1, grid.size - 1)])
    res = optimize.minimize_scalar(lambda s: objective(math.exp(s))[0], bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-10})
    d = math.exp(float(res.x))
    cands.append((objective(d), d))
    _, d = min(cands)
    return FilterParameters(delta, n, d, theta_for(delta, n, d))
