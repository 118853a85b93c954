"""A realisation-level filter combined with a Rényi filter (the future work of Taylor, Vippathalla and
Coon, Section VI): run both side by side on split budgets and continue while *either* would continue.

Guarantee. Let ``T_R`` be the stopping time of the realisation-level part (budget ``δ_1``) and ``T_α``
that of the Rényi part (budget ``δ_2``), both driven by the same analyst and the same outputs; the
combined filter stops at ``T = max(T_R, T_α)``. Up to ``T_R`` the combined run *is* a run of the
realisation-level filter (its decisions use only its own state, and every step it grants is released),
so Theorem 1 gives ``P(l^{(T_R)} > ε) <= δ̃ + (1 - δ̃) θ (E[T_R] - 1) <= δ_1``; likewise the Rényi
filter's supermartingale ``exp((α-1)(l^{(t)} - Σ_{i<=t} ρ_i))`` (Feldman and Zrnic 2021) and
``Σ ρ_i <= ε - ln(1/δ_2)/(α-1)`` at ``T_α`` give ``P(l^{(T_α)} > ε) <= δ_2``. Since ``T`` is one of the
two, ``{l^{(T)} > ε} ⊆ {l^{(T_R)} > ε} ∪ {l^{(T_α)} > ε}``, so ``P(l^{(T)} > ε) <= δ_1 + δ_2 = δ``:
the combined filter is (ε, δ)-DP. (Stopping when *either* would stop is also valid, but never releases
more than both, so lpdp does not offer it.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

from lpdp._validate import check_delta, check_probability
from lpdp.filters.baselines import CYCLE_BEST, RenyiFilter, best_renyi
from lpdp.filters.curves import survival
from lpdp.filters.params import optimal_parameters, sequence_parameters
from lpdp.filters.realisation import Filter, RealisationFilter, Step, StoppingRule, check_steps
from lpdp.mechanisms import Mechanism, Request

__all__ = ["CombinedFilter", "combined_for_iid", "combined_for_cycle"]

#: Budget splits ``δ_1 / δ`` tried by :func:`combined_for_iid` (exact survival curves only).
SPLITS = (0.5, 0.7, 0.9, 0.97, 0.99)
#: The split used where the survival curve is Monte Carlo (too noisy to choose a split from).
MC_SPLIT = 0.9


class CombinedFilter(Filter):
    """Realisation-level filter on ``δ_1 = split × δ`` and Rényi filter of order α on ``δ_2 = δ - δ_1``:
    a step runs while either part grants it (module docstring: ``P(l^{(T)} > ε) <= δ``).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> f = CombinedFilter(6.0, 1e-3, 48, 5e-4, 9e-6, alpha=4.0, split=0.99)
    >>> f.ask(GaussianMechanism(2.0))
    True
    """

    def __init__(self, epsilon: float, delta: float, max_steps: int, delta_tilde: float, theta: float,
                 alpha: float, split: float,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, max_steps, pairs)
        self.delta = self.claimed_delta = check_delta(delta)
        self.split = check_probability(split, "split", open_left=True, open_right=True)
        d1 = self.delta * self.split
        d2 = self.delta - d1
        while d1 + d2 > self.delta:
            d2 = math.nextafter(d2, 0.0)
        self.realisation = RealisationFilter(epsilon, d1, max_steps, delta_tilde, theta, pairs)
        self.renyi = RenyiFilter(epsilon, d2, alpha, max_steps=max_steps, pairs=pairs)
        self._granted: tuple[Filter, ...] = ()

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "max_steps": self.max_steps,
                "delta_tilde": self.realisation.delta_tilde, "theta": self.realisation.theta,
                "alpha": self.renyi.alpha, "split": self.split}

    def decide(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        if step > self.max_steps:
            return f"max_steps={self.max_steps} reached"
        granted = tuple(f for f in (self.realisation, self.renyi)
                        if not f.halted and f.ask(*current, next=nxt))
        if not granted:
            return "both parts halted (realisation-level and Rényi)"
        self._granted = granted
        return None

    def record(self, y: Any) -> None:
        super().record(y)
        for f in self._granted:
            f.record(y)

    def guarantee(self, expected_t: float) -> float:
        """Theorem 1's bound for the realisation-level part (at ``E[T] >= E[T_R]``) plus ``δ_2``."""
        return self.realisation.guarantee(expected_t) + self.renyi.delta

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        """The realisation-level part's rule with ``min_steps`` = the Rényi part's i.i.d. rounds."""
        rule = self.realisation.iid_rule(mechanism, request)
        k = min(self.renyi.iid_stopping_time(mechanism, request), self.max_steps)
        return dataclasses.replace(rule, min_steps=k)

    def sequence_rule(self, steps: Sequence[Step]) -> StoppingRule:
        """The realisation-level part's rule on the cycle with ``min_steps`` = the Rényi part's rounds
        of the cycle.

        Examples
        --------
        >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
        >>> f = CombinedFilter(6.0, 1e-3, 40, 5e-4, 9e-6, alpha=4.0, split=0.9)
        >>> f.sequence_rule([GaussianMechanism(2.0), LaplaceMechanism(2.0)]).min_steps
        6
        """
        rule = self.realisation.sequence_rule(steps)
        k = min(self.renyi.sequence_stopping_time(steps), self.max_steps)
        return dataclasses.replace(rule, min_steps=k)


def combined_for_iid(mechanism: Mechanism, epsilon: float, delta: float, max_steps: int,
                     pairs: Sequence[tuple[Hashable, Hashable]]) -> CombinedFilter:
    """The combined filter tuned for i.i.d. rounds: for each budget split (:data:`SPLITS` where the
    survival curve is exact, else 0.9), the realisation-level part's optimal (δ̃, θ) and the Rényi
    part's best order; the split with the largest ``E[min(T, N)]`` wins.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> f = combined_for_iid(GaussianMechanism(2.0), 5.0, 1e-3, 48, [(1, 0)])
    >>> f.split
    0.9
    """
    exact = mechanism.gaussian_mu() is not None or mechanism.finite_outputs   # exact survival curves
    cands: list[tuple[float, CombinedFilter]] = []
    for split in SPLITS if exact else (MC_SPLIT,):
        d1 = delta * split
        p = optimal_parameters(d1, max_steps, mechanism, inputs=pairs)
        alpha = best_renyi(mechanism, epsilon, delta - d1, pairs).parameters["alpha"]
        f = CombinedFilter(epsilon, delta, max_steps, p.delta_tilde, p.theta, alpha, split, pairs)
        cands.append((survival(f, mechanism).expected_T if exact else 0.0, f))
    return max(cands, key=lambda c: c[0])[1]


def combined_for_cycle(steps: Sequence[Step], epsilon: float, delta: float, max_steps: int,
                       pairs: Sequence[tuple[Hashable, Hashable]], *,
                       model: Literal["declared", "iid"] = "declared") -> CombinedFilter:
    """The combined filter tuned for a declared cycle: the split ``δ_1 = 0.9 δ`` (what
    :func:`combined_for_iid` uses where no exact survival curve exists: a cycle's curve is Monte Carlo),
    the realisation-level part's (δ̃, θ) from :func:`lpdp.filters.params.sequence_parameters` for
    the cycle, and the Rényi order maximising the Rényi part's rounds of the cycle (its mean divergence
    per round; any order is valid, the order only decides how long the part runs).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
    >>> f = combined_for_cycle([GaussianMechanism(2.0), LaplaceMechanism(2.0)], 6.0, 1e-3, 40,
    ...                        [(1, 0)])
    >>> f.split, f.renyi.alpha > 1
    (0.9, True)
    """
    steps = check_steps(steps)
    d1 = check_delta(delta) * MC_SPLIT
    p = sequence_parameters(d1, max_steps, steps, pairs, model=model)
    alpha = CYCLE_BEST["renyi"](steps, epsilon, delta - d1, pairs).parameters["alpha"]
    return CombinedFilter(epsilon, delta, max_steps, p.delta_tilde, p.theta, alpha, MC_SPLIT, pairs)
