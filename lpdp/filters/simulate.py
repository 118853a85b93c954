"""Survival curves ``P(T >= t)`` of every filter on i.i.d. rounds, and the comparison of the paper's
Figure 2 (filter paper, Sec. II-A and Alg. 1).

Realisation-level filters have random stopping times: their curve is computed exactly where an exact
method exists (quadrature of the absorbed Gaussian or Laplace walk, dynamic programming for finite
outputs) and by seeded Monte Carlo with standard errors for anything (the two agree within 5 standard
errors in the tests). Mechanism-level filters stop at a deterministic time on i.i.d. rounds. One filter's
curve is :func:`survival` (defined in :mod:`lpdp.filters.curves`, re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.filters.baselines import Baseline, NotApplicableError, baselines, default_pairs
from lpdp.filters.curves import SurvivalCurve, step_curve, survival
from lpdp.filters.params import FilterParameters, optimal_parameters
from lpdp.filters.realisation import RealisationFilter, Step
from lpdp.filters.registry import build_filter, capped, filter_kinds, filter_label
from lpdp.mechanisms import Mechanism, step_to_dict

__all__ = ["SurvivalCurve", "survival", "Comparison", "comparison", "check_cost"]


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

    @staticmethod
    def label(name: str) -> str:
        """What figures call the filter ``name`` (:func:`lpdp.filters.registry.filter_label`)."""
        return filter_label(name)

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
