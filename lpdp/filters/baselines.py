"""Mechanism-level privacy filters (the baselines of the filter paper, Section II-A) for every mechanism,
and their best parameters for i.i.d. rounds.

Each filter charges per-round worst-case parameters taken from the mechanism, checks before charging,
and halts when the next round would pass its budget:

* additive and advanced (Rogers, Roth, Ullman, Vadhan 2016): a round is charged ``(ε_i, δ(ε_i))`` from
  the mechanism's exact privacy profile :func:`round_delta`;
* Rényi (Feldman and Zrnic 2021; Lécuyer 2021): ``D_α`` of one round, :func:`renyi_divergence`;
* concentrated (zCDP; Bun and Steinke 2016): ``ρ`` of one round, :func:`zcdp_rho`, only where the
  mechanism is zCDP.

The per-round parameters are worst cases over the filter's neighbouring pairs (Gaussian and Laplace:
over the sensitivity ball). A :class:`~lpdp.mechanisms.MixtureMechanism` (an i.i.d. round of a mix,
its step index public) is charged from its steps: ``δ(ε) = Σ_j w_j δ_j(ε)``,
``D_α = log(Σ_j w_j e^{(α-1) D_{α,j}}) / (α-1)`` and ``ρ = max_j ρ_j``; each step's parameter is its
worst case over both orders, so these are exact for symmetric steps and upper bounds otherwise.
Charges are summed exactly (as fractions of the doubles charged), so a filter grants the same number
of i.i.d. rounds as :meth:`MechanismLevelFilter.iid_stopping_time` computes in
O(log k) steps, without any cap on k.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize

from lpdp._numerics import UNIT_ROUNDOFF
from lpdp._search import largest
from lpdp._validate import check_delta, check_epsilon, check_positive
from lpdp.accountant import Accountant
from lpdp.errors import NotApplicableError, ParameterError
from lpdp.filters.realisation import Filter, Step, StoppingRule, check_steps
from lpdp.mechanisms import GaussianMechanism, Mechanism, Request
from lpdp.tradeoff import gaussian, gaussian_delta

__all__ = [
    "gaussian_delta",
    "gaussian_epsilon",
    "round_delta",
    "round_epsilon",
    "renyi_divergence",
    "zcdp_rho",
    "default_pairs",
    "describe",
    "NotApplicableError",
    "MechanismLevelFilter",
    "AdditiveFilter",
    "AdvancedFilter",
    "ConcentratedFilter",
    "RenyiFilter",
    "Baseline",
    "baselines",
    "cycle_baselines",
    "classical_cycle",
    "best_additive",
    "best_advanced",
    "best_concentrated",
    "best_renyi",
    "classical_rounds",
    "zcdp_budget",
]

#: Largest number of rounds any i.i.d. search goes to; an answer that reaches it is reported as
#: "at least" this (never silently capped).
ROUNDS_CAP = 2**53
#: Largest k the exact classical composition of a finite mechanism is searched to (cost ~ k² cells).
FINITE_CLASSICAL_CAP = 10_000
#: Constant of Rogers, Roth, Ullman and Vadhan (2016), Theorem 5.1.
RRUV_CONSTANT = 28.04

Pairs = Sequence[tuple[Hashable, Hashable]]


# -- per-round parameters of a mechanism ----------------------------------------------------------
def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest ``ε >= 0`` with ``gaussian_delta(ε, μ) <= δ`` (rounded up).

    Examples
    --------
    >>> e = gaussian_epsilon(1e-5, 0.5)
    >>> gaussian_delta(e, 0.5) <= 1e-5
    True
    """
    return float(gaussian(check_positive(mu, "mu")).epsilon(check_delta(delta)))


def default_pairs(mechanism: Mechanism) -> tuple[tuple[Hashable, Hashable], ...]:
    """The neighbouring pairs a filter checks by default for ``mechanism``
    (:meth:`~lpdp.mechanisms.Mechanism.default_pairs`): every pair of a finite mechanism's inputs (local
    DP: any two values are neighbours), else the count pair ``(1, 0)``.

    Examples
    --------
    >>> from lpdp.mechanisms import randomized_response
    >>> default_pairs(randomized_response(3, 1.0))
    ((0, 1), (0, 2), (1, 2))
    """
    return mechanism.default_pairs()


def describe(mechanism: Mechanism) -> str:
    """A short name of ``mechanism`` for messages (its :attr:`~lpdp.mechanisms.Mechanism.label`).

    Examples
    --------
    >>> from lpdp.mechanisms import randomized_response
    >>> describe(randomized_response(4, 0.7))
    'a finite mechanism (4 inputs, 4 outputs)'
    """
    return mechanism.label


def round_delta(mechanism: Mechanism, epsilon: float,
                inputs: Sequence[tuple[Any, Any]] | None = None) -> float:
    """The exact δ(ε) of one round: ``max over ordered input pairs of E_P[(1 - e^{ε - L})_+]``
    (:meth:`~lpdp.mechanisms.Mechanism.round_delta`).

    Gaussian and Laplace: the closed forms of their trade-off functions (Balle–Wang; Laplace
    ``1 - e^{(ε - r)/2}`` for ``ε < r = sensitivity/scale``); finite: the exact region of each ordered
    pair (outcomes impossible under the neighbour count in full). ``inputs`` are the mechanism inputs of
    the neighbouring pairs (finite mechanisms; default :func:`default_pairs`).

    Examples
    --------
    >>> from lpdp.mechanisms import randomized_response
    >>> round(round_delta(randomized_response(2, math.log(3.0)), 0.0), 6)   # 0.75 - 0.25
    0.5
    """
    return mechanism.round_delta(check_epsilon(epsilon), inputs)


def round_epsilon(mechanism: Mechanism, delta: float,
                  inputs: Sequence[tuple[Any, Any]] | None = None) -> float:
    """The smallest ``ε >= 0`` with ``round_delta(mechanism, ε) <= δ`` (rounded up; ``inf`` if none).

    Examples
    --------
    >>> from lpdp.mechanisms import LaplaceMechanism
    >>> e = round_epsilon(LaplaceMechanism(1.0), 0.25)     # 1 - e^{(ε - 1)/2} = 1/4
    >>> abs(e - (1 + 2 * math.log(0.75))) < 1e-12
    True
    """
    return mechanism.round_epsilon(check_delta(delta), inputs)


def renyi_divergence(mechanism: Mechanism, alpha: float,
                     inputs: Sequence[tuple[Any, Any]] | None = None) -> float:
    """``D_α`` of one round, the largest over ordered input pairs (``inf`` when an outcome possible
    under one input is impossible under the other), rounded up by a few ulps
    (:meth:`~lpdp.mechanisms.Mechanism.renyi`).

    Gaussian: ``α μ²/2``; Laplace (Mironov 2017, ``r = sensitivity/scale``):
    ``log(α/(2α-1) e^{(α-1) r} + (α-1)/(2α-1) e^{-α r}) / (α-1)``; finite:
    ``log Σ_y p_y^α q_y^{1-α} / (α-1)``, summed in log space.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> renyi_divergence(GaussianMechanism(2.0), 4.0)   # 4 × 0.25 / 2
    0.5
    """
    a = float(alpha)
    if not (a > 1 and math.isfinite(a)):
        raise ParameterError(f"alpha={alpha!r}: must be finite and > 1")
    return mechanism.renyi(a, inputs)


def zcdp_rho(mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]] | None = None) -> float:
    """``ρ`` with which one round is ρ-zCDP (Bun and Steinke 2016): Gaussian ``μ²/2`` (exact); a
    mechanism that is pure ε-DP (Laplace ``ε = r``; finite with every loss finite, ``ε`` the largest
    ``|loss|``) gives ``ε²/2`` (their Proposition 3.3). Raises :class:`NotApplicableError` otherwise
    (:meth:`~lpdp.mechanisms.Mechanism.zcdp_rho`).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> zcdp_rho(GaussianMechanism(2.0))
    0.125
    """
    return mechanism.zcdp_rho(inputs)


# -- the filters ----------------------------------------------------------------------------------
#: ``max_steps`` of a mechanism-level filter without a cap on the number of rounds.
UNLIMITED = ROUNDS_CAP


class MechanismLevelFilter(Filter):
    """A filter that charges per-round parameters (exact sums) and halts before its budget would pass.

    Subclasses give the charged parameters' names (``names``), the per-round :meth:`cost` and the budget
    test :meth:`fits`. :meth:`spent` reports the sums; :meth:`remaining` what each budget has left.
    """

    names: tuple[str, ...] = ()

    def __init__(self, epsilon: float, delta: float, max_steps: int | None,
                 pairs: Sequence[tuple[Hashable, Hashable]]) -> None:
        super().__init__(epsilon, UNLIMITED if max_steps is None else max_steps, pairs)
        self.delta = self.claimed_delta = check_delta(delta)
        self._totals: tuple[Fraction, ...] = (Fraction(0),) * len(self.names)
        self._costs: dict[Step, tuple[float, ...]] = {}

    @abstractmethod
    def round_cost(self, mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]]) -> tuple[float, ...]:
        """The per-round parameters charged for ``mechanism`` on these input pairs (one per name)."""

    @abstractmethod
    def fits(self, totals: tuple[Fraction, ...]) -> bool:
        """Whether accumulated parameters ``totals`` (exact sums) are within the budget."""

    def cost(self, mechanism: Mechanism, request: Request | None = None) -> tuple[float, ...]:
        """The parameters charged for one round of ``(mechanism, request)`` (cached)."""
        key = (mechanism, request)
        out = self._costs.get(key)
        if out is None:
            inputs = [self._inputs(request, a, b) for a, b in self.pairs]
            out = self._costs[key] = tuple(float(c) for c in self.round_cost(mechanism, inputs))
        return out

    def _after(self, totals: tuple[Fraction, ...], cost: tuple[float, ...],
               times: int = 1) -> tuple[Fraction, ...] | None:
        if not all(math.isfinite(c) for c in cost):
            return None
        return tuple(t + times * Fraction(c) for t, c in zip(totals, cost, strict=True))

    def decide(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        if step > self.max_steps:
            return f"max_steps={self.max_steps} reached"
        new = self._after(self._totals, self.cost(*current))
        if new is None or not self.fits(new):
            shown = ", ".join(f"{n} = {float(v):.6g}" for n, v in
                              zip(self.names, new or self.cost(*current), strict=True))
            return f"step {step} would pass the budget ({shown})"
        self._totals = new
        return None

    def spent(self) -> dict[str, float]:
        """The odometer: the sum of each charged parameter so far."""
        return {n: float(t) for n, t in zip(self.names, self._totals, strict=True)}

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        """On i.i.d. rounds the stopping time is deterministic, ``T = k`` (:meth:`iid_stopping_time`):
        a rule with no loss threshold and ``max_steps = k`` (``k = 0``: no first release)."""
        return self.sequence_rule([(mechanism, request)])

    def sequence_rule(self, steps: Sequence[Step]) -> StoppingRule:
        """On a declared cycle the stopping time is deterministic, ``T = k``
        (:meth:`sequence_stopping_time`): a rule with no loss threshold and ``max_steps = k``.

        Examples
        --------
        >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
        >>> RenyiFilter(6.0, 1e-3, alpha=4.0).sequence_rule([GaussianMechanism(2.0),
        ...                                                   LaplaceMechanism(2.0)]).max_steps
        8
        """
        k = self.sequence_stopping_time(steps)
        return StoppingRule(self.epsilon, max(k, 1), self.ordered_pairs, first_release=k >= 1,
                            thresholds=(math.inf,) * len(self.ordered_pairs), lag=0)

    def iid_stopping_time(self, mechanism: Mechanism, request: Request | None = None) -> int:
        """Rounds a fresh copy of this filter grants when every round is ``(mechanism, request)``:
        the largest ``k <= max_steps`` whose k-fold charge fits (exponential search and bisection on
        exact sums, so O(log k) budget tests)."""
        return self.sequence_stopping_time([(mechanism, request)])

    def sequence_stopping_time(self, steps: Sequence[Step]) -> int:
        """Rounds a fresh copy of this filter grants when round i is ``steps[(i - 1) % m]``, charged in
        order with exact sums as :meth:`decide` does: whole periods all cost the same, so exponential
        search and bisection on the number of whole periods, then at most m - 1 further steps
        (O(log k + m) budget tests, whatever ``max_steps``).

        Examples
        --------
        >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
        >>> f = RenyiFilter(6.0, 1e-3, alpha=4.0)
        >>> f.sequence_stopping_time([(GaussianMechanism(2.0), None), (LaplaceMechanism(2.0), None)])
        8
        """
        steps = check_steps(steps)
        m = len(steps)
        prefix: list[tuple[Fraction, ...] | None] = [(Fraction(0),) * len(self.names)]
        for step in steps:  # exact charge of the first r steps of a period (None: an infinite cost)
            last = prefix[-1]
            prefix.append(None if last is None else self._after(last, self.cost(*step)))
        period = prefix[m]

        def ok(q: int, r: int) -> bool:
            """Whether q whole periods and then r steps fit."""
            head = prefix[r]
            if head is None or (q and period is None):
                return False
            return self.fits(head if not q else tuple(q * a + b for a, b in zip(period, head,
                                                                             strict=True)))

        whole = self.max_steps // m
        q = largest(lambda q: ok(q, 0), whole)[0] if whole else 0
        r = 0
        while r + 1 < m and q * m + r + 1 <= self.max_steps and ok(q, r + 1):
            r += 1
        return q * m + r


class AdditiveFilter(MechanismLevelFilter):
    """Additive filter (Rogers et al. 2016): continue while ``Σ ε_i <= ε`` and ``Σ δ_i <= δ``; a round
    is charged ``(round_epsilon, δ(round_epsilon))`` from its exact profile (:func:`round_delta`).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> f = AdditiveFilter(6.0, 1e-3, round_epsilon=1.5)   # δ_G(1.5) = 3.95e-4 per round
    >>> f.iid_stopping_time(GaussianMechanism(2.0))
    2
    """

    names = ("epsilon", "delta")

    def __init__(self, epsilon: float, delta: float, round_epsilon: float, *,
                 max_steps: int | None = None,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        self.round_epsilon = check_epsilon(round_epsilon, "round_epsilon")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "round_epsilon": self.round_epsilon,
                "max_steps": self.max_steps}

    def round_cost(self, mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]]) -> tuple[float, ...]:
        return self.round_epsilon, round_delta(mechanism, self.round_epsilon, inputs)

    def fits(self, totals: tuple[Fraction, ...]) -> bool:
        return totals[0] <= Fraction(self.epsilon) and totals[1] <= Fraction(self.delta)

    def remaining(self) -> dict[str, float]:
        return {**super().remaining(),
                "epsilon": float(Fraction(self.epsilon) - self._totals[0]),
                "delta": float(Fraction(self.delta) - self._totals[1])}


def _rruv_k(eps: float, delta: float, sum_e2: float, sum_term: float) -> float:
    """K of Rogers, Roth, Ullman and Vadhan (2016), Theorem 5.1."""
    c = RRUV_CONSTANT * math.log(1.0 / delta)
    return sum_term + math.sqrt((sum_e2 + eps * eps / c) * (2.0 + math.log(c * sum_e2 / eps**2 + 1.0))
                                * math.log(2.0 / delta))


class AdvancedFilter(MechanismLevelFilter):
    """Advanced-composition filter (Rogers, Roth, Ullman, Vadhan 2016, Thm 5.1): halt if
    ``Σ δ_i > δ/2`` or ``K > ε`` with ``K = Σ ε_i (e^{ε_i} - 1)/2 + sqrt((Σ ε_i² + ε²/(28.04 ln(1/δ)))
    (2 + ln(28.04 ln(1/δ) Σ ε_i²/ε² + 1)) ln(2/δ))``.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> AdvancedFilter(6.0, 1e-3, round_epsilon=0.5).iid_stopping_time(GaussianMechanism(2.0))
    0
    """

    names = ("sum_epsilon_term", "sum_epsilon_squared", "delta")

    def __init__(self, epsilon: float, delta: float, round_epsilon: float, *,
                 max_steps: int | None = None,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        if not 0 < self.delta < 1 or self.epsilon == 0:
            raise ParameterError(f"epsilon={epsilon!r}, delta={delta!r}: the advanced filter needs "
                                 "epsilon > 0 and delta in (0, 1)")
        self.round_epsilon = check_epsilon(round_epsilon, "round_epsilon")

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "round_epsilon": self.round_epsilon,
                "max_steps": self.max_steps}

    def round_cost(self, mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]]) -> tuple[float, ...]:
        e = self.round_epsilon
        return e * math.expm1(e) / 2.0, e * e, round_delta(mechanism, e, inputs)

    def fits(self, totals: tuple[Fraction, ...]) -> bool:
        term, e2, d = totals
        return (d <= Fraction(self.delta) / 2
                and _rruv_k(self.epsilon, self.delta, float(e2), float(term)) <= self.epsilon)


def zcdp_budget(epsilon: float, delta: float) -> float:
    """The largest ``ρ`` with ``ρ + 2 sqrt(ρ ln(1/δ)) <= ε`` (Bun and Steinke 2016, Prop. 1.3), i.e.
    ``(sqrt(ln(1/δ) + ε) - sqrt(ln(1/δ)))² = ε² / (sqrt(ln(1/δ) + ε) + sqrt(ln(1/δ)))²`` (no
    cancellation), certified from below: ``ln(1/δ)`` taken a few ulps up (ρ falls as it grows), then a
    quotient of positive terms, each within a few ulps, lowered by ``16u`` and a double.

    Examples
    --------
    >>> r = zcdp_budget(6.0, 1e-3)
    >>> r + 2 * math.sqrt(r * math.log(1e3)) <= 6.0
    True
    """
    u = UNIT_ROUNDOFF
    big_l = -math.log(delta) * (1 + 4 * u)
    root = math.sqrt(big_l + epsilon) + math.sqrt(big_l)
    return max(math.nextafter(epsilon * epsilon / (root * root) * (1 - 16 * u), 0.0), 0.0)


class ConcentratedFilter(MechanismLevelFilter):
    """zCDP filter: continue while ``Σ ρ_i <= ρ*``, the largest ``ρ*`` with
    ``ρ* + 2 sqrt(ρ* ln(1/δ)) <= ε`` (:func:`zcdp_budget`). A round is charged its :func:`zcdp_rho`;
    a mechanism that is not zCDP raises :class:`NotApplicableError`.

    Valid for adaptively chosen rounds: it is the Rényi filter of Feldman and Zrnic (2021) at the fixed
    order ``α* = 1 + sqrt(ln(1/δ)/ρ*)``, since a ρ-zCDP round has ``D_α* <= α* ρ`` and
    ``α* ρ* + ln(1/δ)/(α* - 1) = ρ* + 2 sqrt(ρ* ln(1/δ)) <= ε``.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> ConcentratedFilter(6.0, 1e-3).iid_stopping_time(GaussianMechanism(2.0))   # ⌊0.930 / 0.125⌋
    7
    """

    names = ("rho",)

    def __init__(self, epsilon: float, delta: float, *, max_steps: int | None = None,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        if not 0 < self.delta < 1:
            raise ParameterError(f"delta={delta!r}: the concentrated filter needs delta in (0, 1)")
        self.rho_budget = zcdp_budget(self.epsilon, self.delta)

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "max_steps": self.max_steps}

    def round_cost(self, mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]]) -> tuple[float, ...]:
        return (zcdp_rho(mechanism, inputs),)

    def fits(self, totals: tuple[Fraction, ...]) -> bool:
        return totals[0] <= Fraction(self.rho_budget)

    def remaining(self) -> dict[str, float]:
        return {**super().remaining(), "rho": float(Fraction(self.rho_budget) - self._totals[0])}


class RenyiFilter(MechanismLevelFilter):
    """Rényi filter of fixed order α (Feldman and Zrnic 2021; Lécuyer 2021): continue while
    ``Σ D_α(round i) <= ε - ln(1/δ)/(α - 1)``; a round is charged :func:`renyi_divergence`.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> RenyiFilter(6.0, 1e-3, alpha=4.0).iid_stopping_time(GaussianMechanism(2.0))  # 7 × 0.5 <= 3.70
    7
    """

    names = ("rdp",)

    def __init__(self, epsilon: float, delta: float, alpha: float, *, max_steps: int | None = None,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, delta, max_steps, pairs)
        self.alpha = float(alpha)
        if not self.alpha > 1 or not math.isfinite(self.alpha):
            raise ParameterError(f"alpha={alpha!r}: must be finite and > 1")
        if not 0 < self.delta < 1:
            raise ParameterError(f"delta={delta!r}: the Rényi filter needs delta in (0, 1)")
        # ε - ln(1/δ)/(α-1), certified from below: the quotient (a log, a difference and a division, each
        # within a few ulps) taken 8u up, and the difference lowered by 4u of its terms
        u = UNIT_ROUNDOFF
        charge = -math.log(self.delta) / (self.alpha - 1.0) * (1 + 8 * u)
        self.rdp_budget = math.nextafter(self.epsilon - charge - 4 * u * (self.epsilon + charge), -math.inf)

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "alpha": self.alpha,
                "max_steps": self.max_steps}

    def round_cost(self, mechanism: Mechanism, inputs: Sequence[tuple[Any, Any]]) -> tuple[float, ...]:
        return (renyi_divergence(mechanism, self.alpha, inputs),)

    def fits(self, totals: tuple[Fraction, ...]) -> bool:
        return self.rdp_budget >= 0 and totals[0] <= Fraction(self.rdp_budget)

    def remaining(self) -> dict[str, float]:
        return {**super().remaining(), "rdp": float(Fraction(self.rdp_budget) - self._totals[0])}


# -- best parameters for i.i.d. rounds ------------------------------------------------------------
@dataclass(frozen=True)
class Baseline:
    """A mechanism-level filter (or the classical reference) with the parameters that maximise its
    number of i.i.d. rounds.

    ``rounds`` is ``None`` when the baseline does not apply (``note`` says why); ``at_least`` marks a
    count that reached the search cap (the true count is at least ``rounds``).
    """

    name: str
    rounds: int | None
    filter: MechanismLevelFilter | None = field(default=None, repr=False)
    parameters: dict[str, float] = field(default_factory=dict)
    at_least: bool = False
    note: str = ""

    def describe(self) -> str:
        """``"7"``, ``"at least 1048576"`` or ``"not applicable: ..."``."""
        if self.rounds is None:
            return self.note
        return f"at least {self.rounds}" if self.at_least else str(self.rounds)


def classical_rounds(mu: float, epsilon: float, delta: float) -> int:
    """Optimal classical composition of Gaussian rounds: the largest k with ``δ_G(ε; μ√k) <= δ``
    (exact for every k: the closed form costs O(1) per k, so the search has no cap below 2^53).

    Examples
    --------
    >>> classical_rounds(0.5, 6.0, 1e-3)
    11
    """
    mu, epsilon, delta = check_positive(mu, "mu"), check_epsilon(epsilon), check_delta(delta)
    k, at_least = _gaussian_classical(mu, epsilon, delta)
    if at_least:
        raise ParameterError(f"mu={mu!r}: more than {ROUNDS_CAP} rounds fit the budget")
    return k


def _gaussian_classical(mu: float, epsilon: float, delta: float) -> tuple[int, bool]:
    """The largest k <= ROUNDS_CAP whose k-fold composition (:class:`lpdp.Accountant`: ``G_{μ√k}``) has
    ``δ(ε) <= δ``, and whether it is the cap."""
    mech = GaussianMechanism(1.0, mu)      # sensitivity/σ = μ exactly
    return largest(lambda k: _fits([mech], [k], epsilon, delta), ROUNDS_CAP)


def _fits(mechanisms: Sequence[Mechanism], counts: Sequence[int], epsilon: float, delta: float,
          side: int = 1) -> bool:
    """Whether the composition (:class:`lpdp.Accountant`) of ``counts[i]`` runs of ``mechanisms[i]`` has
    ``δ(ε) <= δ`` on its guarantee side (``side=1``) or its attack side (``side=0``)."""
    acc = Accountant()
    for mech, c in zip(mechanisms, counts, strict=True):
        acc.compose(mech, c)
    return bool(acc.guarantee().delta(epsilon)[side] <= delta)


def _classical(mechanism: Mechanism, epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """Optimal classical composition of i.i.d. rounds: :func:`classical_cycle` of the one-step cycle."""
    return classical_cycle([(mechanism, None)], epsilon, delta, pairs)


def _pair_mechanism(step: Step, a: Hashable, b: Hashable) -> Mechanism | None:
    """The mechanism the accountant composes for ``step`` on the neighbouring pair ``(a, b)``
    (:meth:`~lpdp.mechanisms.Mechanism.pair_mechanism`; ``None`` when the accountant cannot compose it)."""
    mech, req = step
    return mech.pair_mechanism(*Filter._inputs(req, a, b))


def classical_cycle(steps: Sequence[Step], epsilon: float, delta: float, pairs: Pairs, *,
                    cap: int | None = None) -> Baseline:
    """Optimal classical composition of a declared cycle: the largest ``k <= cap`` whose first k
    rounds (round i runs ``steps[(i - 1) % m]``), composed by :class:`lpdp.Accountant` on every
    neighbouring pair, have a guaranteed (upper) ``δ(ε) <= δ``.

    Gaussian steps only: the accountant's ``G_μ`` route, ``μ = sqrt(Σ_i k_i μ_i²)``, the same on every
    pair (no cap below 2^53 for one step). Otherwise the accountant (exact for finite tables, a certified
    bracket with Gaussian or Laplace steps) on each pair, with the finite steps restricted to that pair's
    two rows and Gaussian/Laplace steps at their worst case; ``cap`` defaults to
    :data:`FINITE_CLASSICAL_CAP`. ``at_least`` marks a count that reached the cap, or whose bracket's
    attack side still fits one more round.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism, Request, randomized_response
    >>> rr, g = randomized_response(2, 0.7), GaussianMechanism(2.0)
    >>> classical_cycle([(g, None), (rr, Request("bit", {1: 1, 0: 0}))], 6.0, 1e-3, [(1, 0)]).rounds
    9
    """
    steps = check_steps(steps)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    m = len(steps)

    def counts(k: int) -> list[int]:
        return [k // m + (j < k % m) for j in range(m)]

    if all(mech.gaussian_mu() is not None for mech, _ in steps):   # the same worst case on every pair
        mechs = [mech for mech, _ in steps]
        k, capped = largest(lambda k: _fits(mechs, counts(k), epsilon, delta),
                            ROUNDS_CAP if cap is None or m == 1 else cap)
        return Baseline("classical", k, at_least=capped)
    cap = FINITE_CLASSICAL_CAP if cap is None else cap
    seen: set[tuple[Mechanism, ...]] = set()
    worst, unsure = cap, False
    for a, b in pairs:
        parts = tuple(_pair_mechanism(s, a, b) for s in steps)
        if None in parts:
            return Baseline("classical", None, note="not available for this mechanism")
        if parts in seen:
            continue
        seen.add(parts)

        def fits(k: int, side: int = 1, parts: tuple[Mechanism, ...] = parts) -> bool:
            return _fits(parts, counts(k), epsilon, delta, side)

        k, capped = largest(fits, cap)
        if k < worst:
            worst, unsure = k, capped or (k < cap and fits(k + 1, 0))
    return Baseline("classical", worst, at_least=unsure or worst == cap)


def _step_inputs(step: Step, pairs: Pairs) -> list[tuple[Any, Any]]:
    return [Filter._inputs(step[1], a, b) for a, b in pairs]


def _best_alpha(steps: Sequence[Step], epsilon: float, delta: float, pairs: Pairs) -> float:
    """The Rényi order maximising the rounds ``(ε - ln(1/δ)/(α-1)) / D̄_α`` of a cycle, ``D̄_α`` the mean
    divergence of its steps (a one-step cycle: the i.i.d. rounds). Closed form when every step is
    Gaussian (``D̄_α`` is linear in α); a log grid plus bounded refinement otherwise. Any order gives a
    valid filter: the order only decides how long it runs."""
    big_l = math.log(1.0 / delta)
    if all(mech.gaussian_mu() is not None for mech, _ in steps):
        return 1.0 + (big_l + math.sqrt(big_l * (big_l + epsilon))) / epsilon
    inputs = [_step_inputs(s, pairs) for s in steps]

    def rounds(s: float) -> float:
        a = 1.0 + math.exp(s)
        d = math.fsum(renyi_divergence(mech, a, x)
                      for (mech, _), x in zip(steps, inputs, strict=True)) / len(steps)
        room = epsilon - big_l / (a - 1.0)
        if d == 0:
            return -math.inf if room >= 0 else 0.0
        return -room / d

    grid = np.linspace(math.log(1e-3), math.log(1e4), 121)
    vals = [rounds(float(s)) for s in grid]
    i = int(np.argmin(vals))
    res = optimize.minimize_scalar(rounds, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 120)]),
                                   method="bounded", options={"xatol": 1e-10})
    best = float(res.x) if res.fun <= vals[i] else float(grid[i])
    return 1.0 + math.exp(best)


def best_additive(mechanism: Mechanism, epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The additive filter with the equal split ``ε_i = ε/k`` (optimal for i.i.d. rounds) and the
    largest k with ``k δ(ε/k) <= δ``."""
    return _cycle_additive([(mechanism, None)], epsilon, delta, pairs)


def _cycle_additive(steps: Sequence[Step], epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The additive filter's one per-round ``ε_i`` maximising the rounds of the cycle: ``ε/k`` for the
    largest k whose first k rounds (each charged its own ``δ_s(ε/k)``) fit."""
    def split(k: int) -> float:
        """The largest ε_i with k ε_i <= ε exactly (as the filter sums)."""
        e = epsilon / k
        while k * Fraction(e) > Fraction(epsilon):
            e = math.nextafter(e, 0.0)
        return e

    def filt(k: int, cap: int | None = None) -> AdditiveFilter:
        return AdditiveFilter(epsilon, delta, split(k), max_steps=cap or k, pairs=pairs)

    k, capped = largest(lambda k: filt(k).sequence_stopping_time(steps) >= k, ROUNDS_CAP)
    f = filt(max(k, 1), UNLIMITED)
    return Baseline("additive", k, f, {"round_epsilon": f.round_epsilon}, capped)


def best_advanced(mechanism: Mechanism, epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The advanced filter with the smallest ``ε_i`` such that ``k δ(ε_i) <= δ/2``, largest k with
    ``K <= ε``."""
    return _cycle_advanced([(mechanism, None)], epsilon, delta, pairs)


def _cycle_advanced(steps: Sequence[Step], epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The advanced filter's per-round ``ε_i`` for k rounds of the cycle: the smallest with
    ``δ_s(ε_i) <= δ/(2k)`` for every step s; the largest k whose rounds fit."""
    inputs = [_step_inputs(s, pairs) for s in steps]

    def filt(k: int, cap: int | None = None) -> AdvancedFilter | None:
        e = max(round_epsilon(mech, delta / (2 * k), x)
                for (mech, _), x in zip(steps, inputs, strict=True))
        return (AdvancedFilter(epsilon, delta, e, max_steps=cap or k, pairs=pairs)
                if math.isfinite(e) else None)

    def ok(k: int) -> bool:
        f = filt(k)
        return f is not None and f.sequence_stopping_time(steps) >= k

    k, capped = largest(ok, ROUNDS_CAP)
    f = filt(max(k, 1), UNLIMITED)
    if f is None:
        raise NotApplicableError(f"{describe(steps[0][0]) if len(steps) == 1 else 'a step'}: no finite "
                                 f"per-round epsilon has delta(epsilon) <= delta/2 = {delta / 2:g}")
    return Baseline("advanced", k, f, {"round_epsilon": f.round_epsilon}, capped)


def best_concentrated(mechanism: Mechanism, epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The zCDP filter (its only parameter is the budget)."""
    return _cycle_concentrated([(mechanism, None)], epsilon, delta, pairs)


def _cycle_concentrated(steps: Sequence[Step], epsilon: float, delta: float,
                        pairs: Pairs) -> Baseline:
    """The zCDP filter on the cycle (``rho`` in the parameters: the mean charge per round)."""
    f = ConcentratedFilter(epsilon, delta, pairs=pairs)
    k = f.sequence_stopping_time(steps)
    rho = math.fsum(f.cost(*s)[0] for s in steps) / len(steps)
    return Baseline("concentrated", k, f, {"rho": rho, "rho_budget": f.rho_budget}, k == UNLIMITED)


def best_renyi(mechanism: Mechanism, epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The Rényi filter at the order that maximises the i.i.d. rounds."""
    return _cycle_renyi([(mechanism, None)], epsilon, delta, pairs)


def _cycle_renyi(steps: Sequence[Step], epsilon: float, delta: float, pairs: Pairs) -> Baseline:
    """The Rényi filter at the order maximising the rounds of the cycle (:func:`_best_alpha`)."""
    alpha = _best_alpha(steps, epsilon, delta, pairs)
    f = RenyiFilter(epsilon, delta, alpha, pairs=pairs)
    k = f.sequence_stopping_time(steps)
    note = ("" if all(math.isfinite(f.cost(*s)[0]) for s in steps) else
            "infinite Rényi divergence: an outcome is impossible under a neighbour")
    return Baseline("renyi", k, f, {"alpha": alpha}, k == UNLIMITED, note)


#: The best i.i.d. parameters of each mechanism-level filter, and the classical reference.
BEST: dict[str, Callable[[Mechanism, float, float, Pairs], Baseline]] = {
    "additive": best_additive,
    "advanced": best_advanced,
    "concentrated": best_concentrated,
    "renyi": best_renyi,
    "classical": _classical,
}

#: The same, tuned for a declared cycle of steps (:func:`cycle_baselines`).
CYCLE_BEST: dict[str, Callable[[Sequence[Step], float, float, Pairs], Baseline]] = {
    "additive": _cycle_additive,
    "advanced": _cycle_advanced,
    "concentrated": _cycle_concentrated,
    "renyi": _cycle_renyi,
    "classical": classical_cycle,
}


def baselines(mechanism: Mechanism, epsilon: float, delta: float, *,
              pairs: Sequence[tuple[Hashable, Hashable]] | None = None) -> dict[str, Baseline]:
    """Each mechanism-level filter with the per-round parameters (and Rényi order) that maximise its
    number of i.i.d. rounds of ``mechanism``, plus the optimal classical composition (a reference).

    * additive: equal split ``ε_i = ε/k`` (optimal for i.i.d. rounds), largest k with
      ``k δ(ε/k) <= δ``;
    * advanced: the smallest ``ε_i`` with ``k δ(ε_i) <= δ/2``, largest k with ``K <= ε``;
    * concentrated: ``Σ ρ_i <= ρ*`` (not applicable unless the mechanism is zCDP);
    * Rényi: the order maximising the rounds (Gaussian: ``α = 1 + (L + sqrt(L (L + ε)))/ε`` with
      ``L = ln(1/δ)``, which gives ``k = ⌊(sqrt(L + ε) - sqrt(L))² / (μ²/2)⌋``);
    * classical: the largest k whose k-fold composition has ``δ(ε) <= δ`` (Gaussian closed form; finite
      mechanisms by exact composition of each ordered pair, up to ``FINITE_CLASSICAL_CAP``).

    Every returned filter, run on i.i.d. rounds, grants exactly ``rounds`` rounds (tested). Counts are
    never capped silently: ``at_least`` marks a count that reached a search cap.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> b = baselines(GaussianMechanism(2.0), 6.0, 1e-3)
    >>> {k: v.rounds for k, v in b.items()}
    {'additive': 3, 'advanced': 0, 'concentrated': 7, 'renyi': 7, 'classical': 11}
    """
    pairs = tuple(default_pairs(mechanism) if pairs is None else pairs)
    return _tuned(BEST, mechanism, epsilon, delta, pairs)


def cycle_baselines(steps: Sequence[Step], epsilon: float, delta: float, *,
                    pairs: Sequence[tuple[Hashable, Hashable]]) -> dict[str, Baseline]:
    """Each mechanism-level filter tuned for a declared cycle (round i runs ``steps[(i - 1) % m]``),
    plus the optimal classical composition of the cycle (a reference), without any cap N.

    Each filter keeps its own parametrisation, tuned on the cycle and charging every round its own cost:

    * additive: one per-round ``ε_i = ε/k`` for the largest k whose first k rounds fit (each round
      charged its step's exact ``δ_s(ε_i)``);
    * advanced: for k rounds, the smallest ``ε_i`` with ``δ_s(ε_i) <= δ/(2k)`` for every step s, the
      largest k that fits;
    * concentrated: ``Σ ρ_i <= ρ*`` (no parameter to tune);
    * Rényi: the order maximising ``(ε - ln(1/δ)/(α-1)) / D̄_α``, ``D̄_α`` the mean divergence of the
      cycle's steps (closed form when every step is Gaussian);
    * classical: :func:`classical_cycle`.

    A one-step cycle gives exactly :func:`baselines` (tested).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
    >>> steps = [(GaussianMechanism(2.0), None), (LaplaceMechanism(2.0), None)]
    >>> b = cycle_baselines(steps, 6.0, 1e-3, pairs=[(1, 0)])
    >>> b["renyi"].rounds >= b["concentrated"].rounds
    True
    """
    return _tuned(CYCLE_BEST, check_steps(steps), epsilon, delta, tuple(pairs))


def _tuned(table: dict[str, Callable[[Any, float, float, Pairs], Baseline]], rounds: Any,
           epsilon: float, delta: float, pairs: Pairs) -> dict[str, Baseline]:
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if not 0 < delta < 1 or epsilon == 0:
        raise ParameterError(f"epsilon={epsilon!r}, delta={delta!r}: need epsilon > 0 and delta in "
                             "(0, 1)")
    out: dict[str, Baseline] = {}
    for name, best in table.items():
        try:
            out[name] = best(rounds, epsilon, delta, pairs)
        except NotApplicableError as exc:
            out[name] = Baseline(name, None, note=f"not applicable: {exc}")
    return out
