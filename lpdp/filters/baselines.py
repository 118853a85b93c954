"""Mechanism-level privacy filters (the baselines of spec filter.md §2) and their best i.i.d. parameters.

Each filter charges per-round worst-case parameters taken from the mechanism (Gaussian: the exact
Balle–Wang profile ``δ_G(e) = Φ(-e/μ + μ/2) - e^e Φ(-e/μ - μ/2)`` for ``(ε_i, δ_i)``, and
``ρ(α) = α μ²/2`` for Rényi, ``μ = sensitivity/σ``), checks before charging, and halts when the next
round would pass its budget. They share the protocol of :mod:`lpdp.filters.realisation`
(``ask``/``record``/``spent``/transcripts); ``charged()`` reports the accumulated parameters.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_epsilon, check_positive
from lpdp.errors import ParameterError
from lpdp.filters.realisation import Step, StoppingRule, _Filter
from lpdp.mechanisms import GaussianMechanism, Mechanism, Request
from lpdp.tradeoff import gaussian, gaussian_delta

__all__ = [
    "gaussian_delta",
    "gaussian_epsilon",
    "AdditiveFilter",
    "AdvancedFilter",
    "ConcentratedFilter",
    "RenyiFilter",
    "Baseline",
    "gaussian_baselines",
    "classical_rounds",
]

#: Largest number of rounds the i.i.d. helpers search (and the default cap of the filters).
MAX_ROUNDS = 10**6
#: Constant of Rogers, Roth, Ullman and Vadhan (2016), Theorem 5.1.
RRUV_CONSTANT = 28.04


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest ``ε >= 0`` with ``gaussian_delta(ε, μ) <= δ`` (rounded up).

    Examples
    --------
    >>> e = gaussian_epsilon(1e-5, 0.5)
    >>> gaussian_delta(e, 0.5) <= 1e-5
    True
    """
    return float(gaussian(check_positive(mu, "mu")).epsilon(check_delta(delta)))


def _mu(mechanism: Mechanism) -> float:
    if not isinstance(mechanism, GaussianMechanism):
        raise ParameterError(f"mechanism={mechanism!r}: the mechanism-level baselines need a "
                             "GaussianMechanism (their per-round parameters are closed forms)")
    return mechanism.mu


class _MechanismLevelFilter(_Filter):
    """Charge per-round parameters (a tuple of sums) and halt before the budget would be passed."""

    _names: tuple[str, ...] = ()

    def __init__(self, epsilon: float, delta: float, max_steps: int,
                 pairs: Sequence[tuple[Hashable, Hashable]]) -> None:
        super().__init__(epsilon, max_steps, pairs)
        self.delta = self.claimed_delta = check_delta(delta)
        self._totals = (0.0,) * len(self._names)

    @abstractmethod
    def _cost(self, mechanism: Mechanism) -> tuple[float, ...]:
        """The per-round parameters charged for ``mechanism`` (one per name in ``_names``)."""

    @abstractmethod
    def _fits(self, totals: tuple[float, ...]) -> bool:
        """Whether accumulated parameters ``totals`` are within the budget."""

    def _grant(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        if step > self.max_steps:
            return f"max_steps={self.max_steps} reached"
        new = tuple(t + c for t, c in zip(self._totals, self._cost(current[0]), strict=True))
        if not self._fits(new):
            shown = ", ".join(f"{n} = {v:.6g}" for n, v in zip(self._names, new, strict=True))
            return f"step {step} would pass the budget ({shown})"
        self._totals = new
        return None

    def charged(self) -> dict[str, float]:
        """The accumulated per-round parameters."""
        return dict(zip(self._names, self._totals, strict=True))

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        raise ParameterError(f"{type(self).__name__}: a mechanism-level filter has a deterministic "
                             "stopping time on i.i.d. rounds; use iid_stopping_time()")

    def iid_stopping_time(self, mechanism: Mechanism) -> int:
        """Rounds a fresh copy of this filter grants when every round is ``mechanism``."""
        cost = self._cost(mechanism)
        totals = (0.0,) * len(cost)
        k = 0
        while k < self.max_steps:
            new = tuple(t + c for t, c in zip(totals, cost, strict=True))
            if not self._fits(new):
                break
            totals, k = new, k + 1
        return k


class AdditiveFilter(_MechanismLevelFilter):
    """Additive filter (Rogers et al. 2016; spec filter.md §2): continue while ``Σ ε_i <= ε`` and
    ``Σ δ_i <= δ``; a Gaussian round is charged ``(round_epsilon, δ_G(round_epsilon))``.

    Examples
    --------
    >>> f = AdditiveFilter(6.0, 1e-3, round_epsilon=1.5)   # δ_G(1.5) = 3.95e-4 per round
    >>> f.iid_stopping_time(GaussianMechanism(2.0))
    2
    """

    _names = ("epsilon", "delta")

    def __init__(self, epsilon: float, delta: float, round_epsilon: float, *,
                 max_steps: int = MAX_ROUNDS,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        self.round_epsilon = check_epsilon(round_epsilon, "round_epsilon")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "round_epsilon": self.round_epsilon,
                "max_steps": self.max_steps}

    def _cost(self, mechanism: Mechanism) -> tuple[float, ...]:
        return self.round_epsilon, gaussian_delta(self.round_epsilon, _mu(mechanism))

    def _fits(self, totals: tuple[float, ...]) -> bool:
        return totals[0] <= self.epsilon and totals[1] <= self.delta


def _rruv_k(eps: float, delta: float, sum_e2: float, sum_term: float) -> float:
    """K of Rogers, Roth, Ullman and Vadhan (2016), Theorem 5.1."""
    c = RRUV_CONSTANT * math.log(1.0 / delta)
    return sum_term + math.sqrt((sum_e2 + eps * eps / c) * (2.0 + math.log(c * sum_e2 / eps**2 + 1.0))
                                * math.log(2.0 / delta))


class AdvancedFilter(_MechanismLevelFilter):
    """Advanced-composition filter (Rogers, Roth, Ullman, Vadhan 2016, Thm 5.1; spec filter.md §2):
    halt if ``Σ δ_i > δ/2`` or ``K > ε`` with
    ``K = Σ ε_i (e^{ε_i} - 1)/2 + sqrt((Σ ε_i² + ε²/(28.04 ln(1/δ))) (2 + ln(28.04 ln(1/δ) Σ ε_i²/ε²
    + 1)) ln(2/δ))``.

    Examples
    --------
    >>> AdvancedFilter(6.0, 1e-3, round_epsilon=0.5).iid_stopping_time(GaussianMechanism(2.0))
    0
    """

    _names = ("sum_epsilon_term", "sum_epsilon_squared", "delta")

    def __init__(self, epsilon: float, delta: float, round_epsilon: float, *,
                 max_steps: int = MAX_ROUNDS,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        if not 0 < self.delta < 1 or self.epsilon == 0:
            raise ParameterError(f"epsilon={epsilon!r}, delta={delta!r}: the advanced filter needs "
                                 "epsilon > 0 and delta in (0, 1)")
        self.round_epsilon = check_epsilon(round_epsilon, "round_epsilon")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "round_epsilon": self.round_epsilon,
                "max_steps": self.max_steps}

    def _cost(self, mechanism: Mechanism) -> tuple[float, ...]:
        e = self.round_epsilon
        return e * math.expm1(e) / 2.0, e * e, gaussian_delta(e, _mu(mechanism))

    def _fits(self, totals: tuple[float, ...]) -> bool:
        term, e2, d = totals
        return d <= self.delta / 2 and _rruv_k(self.epsilon, self.delta, e2, term) <= self.epsilon


class ConcentratedFilter(_MechanismLevelFilter):
    """zCDP-based filter (Whitehouse, Ramdas, Rogers, Wu 2023; spec filter.md §2): continue while
    ``sqrt(2 ln(1/δ') Σ ε_i²) + Σ ε_i²/2 <= ε`` and ``Σ δ_i <= δ''``, with ``δ' + δ'' = δ``.

    Examples
    --------
    >>> f = ConcentratedFilter(12.0, 1e-3, round_epsilon=2.0, delta_prime=5e-4)
    >>> f.iid_stopping_time(GaussianMechanism(2.0))   # k = 2 gives 11.03 + 4 > 12
    1
    """

    _names = ("sum_epsilon_squared", "delta")

    def __init__(self, epsilon: float, delta: float, round_epsilon: float, delta_prime: float, *,
                 max_steps: int = MAX_ROUNDS,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        self.round_epsilon = check_epsilon(round_epsilon, "round_epsilon")
        self.delta_prime = check_delta(delta_prime, "delta_prime")
        if not 0 < self.delta_prime < self.delta:
            raise ParameterError(f"delta_prime={delta_prime!r}: must be in (0, delta={delta!r})")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "round_epsilon": self.round_epsilon,
                "delta_prime": self.delta_prime, "max_steps": self.max_steps}

    def _cost(self, mechanism: Mechanism) -> tuple[float, ...]:
        e = self.round_epsilon
        return e * e, gaussian_delta(e, _mu(mechanism))

    def _fits(self, totals: tuple[float, ...]) -> bool:
        e2, d = totals
        lhs = math.sqrt(2.0 * math.log(1.0 / self.delta_prime) * e2) + e2 / 2.0
        return lhs <= self.epsilon and d <= self.delta - self.delta_prime


class RenyiFilter(_MechanismLevelFilter):
    """Rényi filter of fixed order α (Feldman and Zrnic 2021; Lécuyer 2021; spec filter.md §2): continue
    while ``Σ ρ_i(α) <= ε - ln(1/δ)/(α - 1)``; a Gaussian round costs ``ρ(α) = α μ²/2``.

    Examples
    --------
    >>> RenyiFilter(6.0, 1e-3, alpha=4.0).iid_stopping_time(GaussianMechanism(2.0))  # 7 × 0.5 <= 3.70
    7
    """

    _names = ("rdp",)

    def __init__(self, epsilon: float, delta: float, alpha: float, *, max_steps: int = MAX_ROUNDS,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        self.alpha = float(alpha)
        if not self.alpha > 1 or not math.isfinite(self.alpha):
            raise ParameterError(f"alpha={alpha!r}: must be finite and > 1")
        if not 0 < self.delta < 1:
            raise ParameterError(f"delta={delta!r}: the Rényi filter needs delta in (0, 1)")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "alpha": self.alpha,
                "max_steps": self.max_steps}

    def _cost(self, mechanism: Mechanism) -> tuple[float, ...]:
        return (self.alpha * _mu(mechanism) ** 2 / 2.0,)

    def _fits(self, totals: tuple[float, ...]) -> bool:
        return totals[0] <= self.epsilon - math.log(1.0 / self.delta) / (self.alpha - 1.0)


@dataclass(frozen=True)
class Baseline:
    """A mechanism-level filter with the per-round parameters that maximise its i.i.d. rounds."""

    name: str
    rounds: int
    filter: _MechanismLevelFilter | None
    parameters: dict[str, float]


def classical_rounds(mu: float, epsilon: float, delta: float) -> int:
    """Optimal classical composition (spec filter.md §2): the largest k with ``δ_G(ε; μ√k) <= δ``.

    Examples
    --------
    >>> classical_rounds(0.5, 6.0, 1e-3)
    11
    """
    mu, epsilon, delta = check_positive(mu, "mu"), check_epsilon(epsilon), check_delta(delta)
    lo, hi = 0, 1
    while hi <= MAX_ROUNDS and gaussian_delta(epsilon, mu * math.sqrt(hi)) <= delta:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # δ_G(ε; μ√k) increases with k
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if gaussian_delta(epsilon, mu * math.sqrt(mid)) <= delta else (lo, mid)
    return lo


def _largest(feasible: Any) -> int:
    """The largest k in [0, MAX_ROUNDS] with ``feasible(k)`` (feasibility is monotone in k)."""
    lo, hi = 0, 1
    while hi <= MAX_ROUNDS and feasible(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
    return lo


def gaussian_baselines(sigma: float, epsilon: float, delta: float, *,
                       sensitivity: float = 1.0) -> dict[str, Baseline]:
    """Each mechanism-level filter with the per-round parameters (and Rényi order) that maximise its
    number of i.i.d. Gaussian rounds, plus the optimal classical composition (spec filter.md §2).

    * additive: equal split ``ε_i = ε/k`` (optimal for i.i.d. rounds), largest k with
      ``k δ_G(ε/k) <= δ``;
    * advanced: the smallest ``ε_i`` with ``k δ_G(ε_i) <= δ/2``, largest k with ``K <= ε``;
    * concentrated: as advanced with ``δ'' = δ - δ'``, the split δ' chosen on a log grid;
    * Rényi: ``α = 1 + (L + sqrt(L (L + ε)))/ε`` with ``L = ln(1/δ)``, which gives the closed form
      ``k = ⌊(sqrt(L + ε) - sqrt(L))² / (μ²/2)⌋``.

    Every returned filter, run on i.i.d. rounds, grants exactly ``rounds`` rounds (tested).

    Examples
    --------
    >>> b = gaussian_baselines(2.0, 6.0, 1e-3)
    >>> {k: v.rounds for k, v in b.items()}
    {'additive': 3, 'advanced': 0, 'concentrated': 0, 'renyi': 7, 'classical': 11}
    """
    sigma, epsilon = check_positive(sigma, "sigma"), check_epsilon(epsilon)
    delta = check_delta(delta)
    if not 0 < delta < 1 or epsilon == 0:
        raise ParameterError(f"epsilon={epsilon!r}, delta={delta!r}: need epsilon > 0 and delta in "
                             "(0, 1)")
    g = GaussianMechanism(sigma, sensitivity)
    mu = g.mu
    out: dict[str, Baseline] = {}

    def split(k: int) -> float:
        """The largest ε_i whose k-fold float sum (as the filter adds) stays <= ε."""
        e = epsilon / k
        while sum([e] * k) > epsilon:
            e = math.nextafter(e, 0.0)
        return e

    k = _largest(lambda k: k * gaussian_delta(split(k), mu) <= delta)
    add = AdditiveFilter(epsilon, delta, split(k)) if k else None
    out["additive"] = Baseline("additive", k, add, {"round_epsilon": split(k) if k else 0.0})

    def adv_e(k: int) -> float:
        return gaussian_epsilon(delta / (2 * k), mu)

    k = _largest(lambda k: AdvancedFilter(epsilon, delta, adv_e(k), max_steps=k)
                 .iid_stopping_time(g) >= k)
    out["advanced"] = Baseline("advanced", k, AdvancedFilter(epsilon, delta, adv_e(k)) if k else None,
                               {"round_epsilon": adv_e(k) if k else 0.0})

    best = (0, None, {"round_epsilon": 0.0, "delta_prime": 0.0})
    for dp in np.geomspace(delta * 1e-4, delta * (1 - 1e-3), 60):
        dp = float(dp)

        def conc(k: int, dp: float = dp) -> ConcentratedFilter:
            return ConcentratedFilter(epsilon, delta, gaussian_epsilon((delta - dp) / k, mu), dp,
                                      max_steps=k)

        k = _largest(lambda k, conc=conc: conc(k).iid_stopping_time(g) >= k)
        if k > best[0]:
            f = conc(k)
            f.max_steps = MAX_ROUNDS
            best = (k, f, {"round_epsilon": f.round_epsilon, "delta_prime": dp})
    out["concentrated"] = Baseline("concentrated", best[0], best[1], best[2])

    big_l = math.log(1.0 / delta)
    alpha = 1.0 + (big_l + math.sqrt(big_l * (big_l + epsilon))) / epsilon
    ren = RenyiFilter(epsilon, delta, alpha)
    out["renyi"] = Baseline("renyi", ren.iid_stopping_time(g), ren, {"alpha": alpha})
    out["classical"] = Baseline("classical", classical_rounds(mu, epsilon, delta), None, {})
    return out
