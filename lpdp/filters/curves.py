"""Survival curves ``P(T >= t)`` of one filter: on i.i.d. rounds of a mechanism (:func:`survival`), exact
where an exact method exists (quadrature of the absorbed Gaussian or Laplace walk, dynamic programming for
finite outputs, :func:`lpdp.filters.audit.rule_audit`) and by seeded Monte Carlo with standard errors for
anything; deterministic for mechanism-level filters. :mod:`lpdp.filters.simulate` compares every
registered filter with them; the combined filter chooses its budget split with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.filters.audit import check_simulation, rule_audit, simulate_trajectories
from lpdp.filters.baselines import MechanismLevelFilter
from lpdp.filters.realisation import Step, StoppingRule
from lpdp.mechanisms import Mechanism, Request

__all__ = ["SurvivalCurve", "survival"]


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
