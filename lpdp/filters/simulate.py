"""Survival curves ``P(T >= t)`` of every filter on i.i.d. rounds, and the comparison of the paper's
Figure 2 (filter paper, Sec. II-A and Alg. 1).

Realisation-level filters have random stopping times: their curve is computed exactly where an exact
method exists (quadrature of the absorbed Gaussian or Laplace walk, dynamic programming for finite
outputs) and by seeded Monte Carlo with standard errors for anything (the two agree within 5 standard
errors in the tests). Mechanism-level filters stop at a deterministic time on i.i.d. rounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.filters.audit import check_simulation, rule_audit, simulate_trajectories
from lpdp.filters.baselines import (
    Baseline,
    MechanismLevelFilter,
    NotApplicableError,
    baselines,
    default_pairs,
)
from lpdp.filters.params import FilterParameters, optimal_parameters
from lpdp.filters.realisation import RealisationFilter, Step, StoppingRule
from lpdp.filters.registry import build_filter, capped, filter_kinds
from lpdp.mechanisms import Mechanism, Request, step_to_dict

__all__ = ["SurvivalCurve", "survival", "Comparison", "comparison", "check_cost"]

@dataclass(frozen=True)
class SurvivalCurve:
    """``P(T >= t)`` for ``t = 1 .. N``; Monte Carlo curves carry standard errors."""

    survival: tuple[float, ...]
    method: str
    stderr: tuple[float, ...] | None = None
    expected_T_stderr: float = 0.0
    trajectories: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        # probabilities: sums of rounded masses may stray a few ulps outside [0, 1] (1.0000000000000004)
        object.__setattr__(self, "survival", tuple(min(1.0, max(0.0, float(p))) for p in self.survival))

    @property
    def expected_T(self) -> float:
        """``E[min(T, N)] = Σ_t P(T >= t)``."""
        return math.fsum(self.survival)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"survival": list(self.survival), "method": self.method,
                "expected_T": self.expected_T, "stderr": None if self.stderr is None else list(
                    self.stderr), "expected_T_stderr": self.expected_T_stderr,
                "trajectories": self.trajectories, "seed": self.seed}


def survival(filt: Any, mechanism: Mechanism, request: Request | None = None, *,
             horizon: int | None = None, method: str = "auto", trajectories: int = 100_000,
             seed: int = 0, nodes: int = 24) -> SurvivalCurve:
    """The survival curve of ``filt`` on i.i.d. rounds of ``(mechanism, request)``, under the first
    database of its first neighbouring pair.

    Parameters
    ----------
    filt : a filter of :mod:`lpdp.filters`
        Realisation-level and one-step filters give random stopping times; mechanism-level ones
        (:mod:`lpdp.filters.baselines`) deterministic ones.
    horizon : int, optional
        Number of ``t`` values (default: the filter's ``max_steps``; required for mechanism-level
        filters, whose default cap is huge).
    method : {"auto", "quadrature", "exact", "monte-carlo"}
        ``auto`` is exact where possible (see :func:`lpdp.filters.audit`).
    trajectories, seed : int
        Monte Carlo sample size and seed.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, UnionBoundFilter
    >>> s = survival(UnionBoundFilter(6.0, 1e-3, 48), GaussianMechanism(2.0))
    >>> s.method, round(s.expected_T, 1)
    ('quadrature', 28.6)
    """
    fixed = deterministic_curve(filt, [(mechanism, request)], horizon)
    if fixed is not None:
        return fixed
    rule = filt.iid_rule(mechanism, request)
    if method != "monte-carlo":
        used, pairs = rule_audit(rule, mechanism, request, method=method, nodes=nodes)
        if used != "monte-carlo":
            return SurvivalCurve(pairs[0].survival, used)
    return monte_carlo_curve(rule, [(mechanism, request)], trajectories, seed)


def deterministic_curve(filt: Any, steps: Sequence[Step], horizon: int | None) -> SurvivalCurve | None:
    """The curve of a mechanism-level filter (deterministic ``T`` on i.i.d. rounds and on a cycle) up to
    ``horizon`` (required); ``None`` for other filters, whose ``horizon`` must be their ``max_steps``."""
    if isinstance(filt, MechanismLevelFilter):
        if horizon is None:
            raise ParameterError("horizon=None: give the number of steps to report for a "
                                 "mechanism-level filter")
        horizon = check_int(horizon, "horizon")
        check_budget(f"max_steps={horizon}", memory_bytes=64.0 * horizon, seconds=seconds_for(horizon))
        return step_curve(filt.sequence_stopping_time(steps), horizon)
    if horizon is not None and check_int(horizon, "horizon") != filt.max_steps:
        raise ParameterError(f"horizon={horizon}: must equal the filter's max_steps={filt.max_steps}")
    return None


def step_curve(k: int, horizon: int) -> SurvivalCurve:
    """The deterministic curve of ``T = k``: ``P(T >= t) = [t <= k]``, t = 1 .. horizon."""
    return SurvivalCurve(tuple(float(t <= k) for t in range(1, horizon + 1)), "deterministic")


def monte_carlo_curve(rule: StoppingRule, steps: Sequence[Step], trajectories: int,
                      seed: int) -> SurvivalCurve:
    """The survival curve of ``rule`` by seeded trajectories of the cycle ``steps`` (i.i.d. rounds: one
    step), under the first database of its first pair, with standard errors."""
    trajectories = check_int(trajectories, "trajectories", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    check_simulation(rule, trajectories)
    t, _ = simulate_trajectories(rule, steps, rule.pairs[0][0], trajectories, np.random.default_rng(seed))
    surv = np.bincount(t, minlength=rule.max_steps + 1)[::-1].cumsum()[::-1][1:] / t.size
    return SurvivalCurve(tuple(surv.tolist()), "monte-carlo",
                         tuple(np.sqrt(surv * (1 - surv) / t.size).tolist()),
                         float(t.std(ddof=1) / math.sqrt(t.size)), trajectories, seed)


@dataclass(frozen=True)
class Comparison:
    """Every registered filter on i.i.d. rounds of one mechanism (the paper's Figure 2 for a Gaussian),
    or on a declared cycle of steps (:func:`lpdp.filters.sequence_comparison`: ``mechanism`` is
    ``None`` and ``steps`` the cycle), with the optimal classical composition as a reference curve."""

    mechanism: Mechanism | None
    epsilon: float
    delta: float
    max_steps: int
    parameters: FilterParameters
    curves: dict[str, SurvivalCurve]
    monte_carlo: dict[str, SurvivalCurve]
    baselines: dict[str, Baseline] = field(repr=False)
    notes: dict[str, str] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()

    def expected_releases(self) -> dict[str, float]:
        """``E[min(T, N)]`` per filter (the classical reference included)."""
        return {k: c.expected_T for k, c in self.curves.items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        cycle = {"steps": [step_to_dict(s) for s in self.steps]} if self.steps else {}
        return {"mechanism": None if self.mechanism is None else self.mechanism.to_dict(), **cycle,
                "epsilon": self.epsilon, "delta": self.delta,
                "max_steps": self.max_steps, "delta_tilde": self.parameters.delta_tilde,
                "theta": self.parameters.theta,
                "curves": {k: c.to_dict() for k, c in self.curves.items()},
                "monte_carlo": {k: c.to_dict() for k, c in self.monte_carlo.items()},
                "baselines": {k: {"rounds": b.rounds, "at_least": b.at_least, "note": b.note,
                                  **b.parameters} for k, b in self.baselines.items()},
                "expected_releases": self.expected_releases(), "notes": self.notes}


def check_cost(pairs: Sequence[tuple[Any, Any]], requests: int = 1, operations: int = 1) -> dict[str, Any]:
    """Basic operations of one step's check of the realisation-level filter, ``C = Σ_x N(x) |R| M``
    (Taylor, Vippathalla and Coon, Sec. VI): ``Σ_x N(x)`` ordered neighbouring pairs (each declared
    pair in both orders), ``|R|`` requests the step may receive, ``M`` operations per (pair, request)
    (1 here: the loss is compared with a precomputed threshold).

    Examples
    --------
    >>> check_cost([(1, 0)])["per_step"]      # the paper's i.i.d. Gaussian example: C = 2
    2
    """
    ordered = 2 * len(pairs)
    return {"ordered_pairs": ordered, "requests": requests, "operations_per_check": operations,
            "per_step": ordered * requests * operations}


def comparison(mechanism: Mechanism, epsilon: float, delta: float, max_steps: int, *,
               pairs: Any = None, trajectories: int = 100_000, seed: int = 0,
               parameters: FilterParameters | None = None) -> Comparison:
    """Survival curves of every registered filter on i.i.d. rounds of ``mechanism``.

    Realisation-level filters (the paper's with the optimal (δ̃, θ) for ``max_steps``, and lpdp's
    union-bound filter) have exact curves (quadrature for a Gaussian or Laplace pair, dynamic
    programming for finite outputs, Monte Carlo otherwise), each with an independent Monte Carlo curve
    (``trajectories = 0`` skips it); mechanism-level filters use the per-round parameters that maximise
    their rounds; ``classical`` is the optimal classical composition (a reference, not a filter).
    A filter that does not apply to the mechanism has no curve and a note. ``parameters`` gives the
    realisation-level filter's (δ̃, θ) by hand (any valid :class:`FilterParameters` for ``delta`` and
    ``max_steps``, e.g. the paper's printed (5.60e-4, 9.17e-6)); the other filters keep their own.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> c = comparison(GaussianMechanism(2.0), 6.0, 1e-3, 48, trajectories=0)
    >>> round(c.expected_releases()["realisation"], 1)
    15.8
    """
    pairs = tuple(default_pairs(mechanism) if pairs is None else pairs)
    trajectories = check_int(trajectories, "trajectories", minimum=0)
    if parameters is not None and (parameters.delta, parameters.max_steps) != (delta, max_steps):
        raise ParameterError(f"parameters={parameters!r}: made for delta={parameters.delta!r}, "
                             f"max_steps={parameters.max_steps}, not {delta!r}, {max_steps}")
    p = parameters or optimal_parameters(delta, max_steps, mechanism, inputs=pairs)
    base = baselines(mechanism, epsilon, delta, pairs=pairs)
    curves: dict[str, SurvivalCurve] = {}
    mc: dict[str, SurvivalCurve] = {}
    notes = {k: b.note for k, b in base.items() if b.rounds is None}
    for i, kind in enumerate(filter_kinds()):
        if kind.name in notes:
            continue
        try:   # each optimisation once: the (δ̃, θ) above, the mechanism-level tunings of ``base``
            tuned = base.get(kind.name)
            f = (RealisationFilter(epsilon, delta, max_steps, p.delta_tilde, p.theta, pairs)
                 if kind.name == "realisation" else
                 capped(tuned.filter, max_steps, pairs) if kind.level == "mechanism" and tuned is not None
                 and tuned.filter is not None else
                 build_filter(kind.name, mechanism, epsilon, delta, max_steps, pairs))
        except NotApplicableError as exc:
            notes[kind.name] = f"not applicable: {exc}"
            continue
        curves[kind.name] = survival(f, mechanism, horizon=max_steps)
        if trajectories and kind.level == "realisation":
            mc[kind.name] = survival(f, mechanism, method="monte-carlo", trajectories=trajectories,
                                     seed=seed + i)
    classical = base["classical"]
    if classical.rounds is not None:
        curves["classical"] = step_curve(classical.rounds, max_steps)
    return Comparison(mechanism, epsilon, delta, max_steps, p, curves, mc, base, notes)
