"""Privacy filters on a declared cyclic sequence of rounds: several mechanisms in a fixed order, repeated.

A *cycle* is one period ``steps = [s_1, ..., s_m]`` of ``(mechanism, request or None)`` steps; round i
runs ``steps[(i - 1) % m]``. Every filter's exact stopping rule on the cycle is its
:meth:`~lpdp.filters.Filter.sequence_rule` (per-step thresholds: Algorithm 1 of Taylor, Vippathalla and
Coon with each look-ahead declaring the next step of the cycle; the one-step filters' per-step level;
a deterministic count for the mechanism-level filters). This module audits such a rule by seeded
Monte Carlo (the one simulator of :mod:`lpdp.filters.audit`, of which i.i.d. rounds are the one-step
cycle) and compares every registered filter on a cycle.

Guarantee. Theorem 1 of the filter paper holds for whatever sequence actually runs, as long as each
step's look-ahead covers the request that comes next (``next=`` of :meth:`~lpdp.filters.Filter.ask`);
the parameters tuned for the declared cycle only change how long a filter runs. Mechanism-level
filters charge every round its own cost, so they too stay valid off the declared cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

from lpdp._validate import check_delta, check_epsilon, check_int, check_probability
from lpdp.errors import ParameterError
from lpdp.filters.audit import AuditResult, audit_result, check_simulation, monte_carlo_audit
from lpdp.filters.baselines import CYCLE_BEST, NotApplicableError, cycle_baselines
from lpdp.filters.combined import combined_for_cycle
from lpdp.filters.curves import SurvivalCurve, deterministic_curve, monte_carlo_curve, step_curve
from lpdp.filters.params import FilterParameters, sequence_parameters
from lpdp.filters.realisation import Filter, RealisationFilter, Step, UnionBoundFilter, check_steps
from lpdp.filters.registry import capped, filter_kinds, register_cycle_builder
from lpdp.filters.simulate import Comparison

__all__ = ["sequence_audit", "sequence_survival", "sequence_comparison", "cycle_filter"]


def sequence_audit(filt: Filter, steps: Sequence[Step], *, trajectories: int = 100_000, seed: int = 0,
                   confidence: float = 0.95) -> AuditResult:
    """Audit a filter on a declared cycle by seeded Monte Carlo (filter paper, Sec. II and Alg. 1).

    Round i runs ``steps[(i - 1) % m]``; the filter's :meth:`~lpdp.filters.Filter.sequence_rule` decides
    when it stops. Every ordered pair ``(x, x')`` is simulated under ``P_x``; the result has the fields
    of :func:`lpdp.filters.audit` (method ``"monte-carlo"``, one-sided upper bounds at ``confidence``).

    Parameters
    ----------
    filt : Filter
        The configured filter (only its configuration is used).
    steps : sequence of (Mechanism, Request or None)
        One period of the cycle.
    trajectories, seed : int
        Monte Carlo sample size and seed.
    confidence : float
        Level of the one-sided upper bounds.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism, UnionBoundFilter
    >>> f = UnionBoundFilter(6.0, 1e-3, 40)
    >>> r = sequence_audit(f, [GaussianMechanism(2.0), LaplaceMechanism(2.0)], trajectories=2000)
    >>> r.method, r.tail <= r.bound
    ('monte-carlo', True)
    """
    steps = check_steps(steps)
    confidence = check_probability(confidence, "confidence", open_left=True, open_right=True)
    trajectories = check_int(trajectories, "trajectories", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    rule = filt.sequence_rule(steps)
    check_simulation(rule, trajectories)
    return audit_result(filt, "monte-carlo", monte_carlo_audit(rule, steps, trajectories, seed), trajectories,
                   confidence)


def sequence_survival(filt: Filter, steps: Sequence[Step], *, horizon: int | None = None,
                      trajectories: int = 100_000, seed: int = 0) -> SurvivalCurve:
    """The survival curve ``P(T >= t)`` of ``filt`` on a declared cycle, under the first database of
    its first neighbouring pair: deterministic for a mechanism-level filter, seeded Monte Carlo (with
    standard errors) for the others.

    Parameters
    ----------
    filt : Filter
        The configured filter.
    steps : sequence of (Mechanism, Request or None)
        One period of the cycle.
    horizon : int, optional
        Number of ``t`` values (default: the filter's ``max_steps``; required for mechanism-level
        filters, whose default cap is huge).
    trajectories, seed : int
        Monte Carlo sample size and seed.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism, RenyiFilter
    >>> steps = [GaussianMechanism(2.0), LaplaceMechanism(2.0)]
    >>> sequence_survival(RenyiFilter(6.0, 1e-3, alpha=4.0), steps, horizon=10).expected_T
    8.0
    """
    steps = check_steps(steps)
    fixed = deterministic_curve(filt, steps, horizon)
    if fixed is not None:
        return fixed
    return monte_carlo_curve(filt.sequence_rule(steps), steps, trajectories, seed)


def cycle_filter(name: str, steps: Sequence[Step], epsilon: float, delta: float, max_steps: int,
                 pairs: Sequence[tuple[Hashable, Hashable]], *,
                 model: Literal["declared", "iid"] = "declared",
                 parameters: FilterParameters | None = None) -> Filter:
    """The registered filter ``name`` tuned for a declared cycle (what :func:`sequence_comparison`
    runs; ``lpdp filter --filter NAME`` on a cyclic workload).

    * ``realisation``: ``(δ̃, θ)`` from :func:`lpdp.filters.params.sequence_parameters` (``model``),
      or ``parameters`` when given;
    * ``union``: as it is (its level ``δ/N`` needs no tuning);
    * ``combined``: :func:`lpdp.filters.combined.combined_for_cycle`;
    * a mechanism-level filter: its parameters from :func:`lpdp.filters.cycle_baselines`, with
      ``max_steps`` as the cap;
    * any other registered filter: its ``build_cycle`` (:func:`lpdp.filters.register_cycle_builder`);
      one registered for i.i.d. rounds only is refused, never tuned for a step of the cycle.

    Each is its registry entry's ``build_cycle`` (registered below). Raises
    :class:`~lpdp.filters.NotApplicableError` when a mechanism-level filter cannot charge a step or the
    filter has no cycle builder.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism
    >>> f = cycle_filter("renyi", [GaussianMechanism(2.0), LaplaceMechanism(2.0)], 6.0, 1e-3, 40,
    ...                  [(1, 0)])
    >>> f.sequence_stopping_time([GaussianMechanism(2.0), LaplaceMechanism(2.0)])
    8
    """
    steps = check_steps(steps)
    kinds = {k.name: k for k in filter_kinds()}
    if name not in kinds:
        raise ParameterError(f"filter={name!r}: must be one of {sorted(kinds)}")
    pairs = _check_pairs(pairs)
    n = check_int(max_steps, "max_steps")
    build = kinds[name].build_cycle
    if build is None:
        raise NotApplicableError(f"filter={name!r}: registered for i.i.d. rounds only (no build_cycle; "
                                 "lpdp.filters.register_cycle_builder adds one)")
    return build(steps, epsilon, delta, n, pairs, model, parameters)


def _realisation_cycle(steps: Sequence[Step], epsilon: float, delta: float, n: int,
                       pairs: Sequence[tuple[Hashable, Hashable]], model: Literal["declared", "iid"],
                       parameters: FilterParameters | None) -> Filter:
    p = parameters or sequence_parameters(delta, n, steps, pairs, model=model)
    return RealisationFilter(epsilon, delta, n, p.delta_tilde, p.theta, pairs)


def _mechanism_level_cycle(name: str) -> Callable[..., Filter]:
    def build(steps: Sequence[Step], epsilon: float, delta: float, n: int,
              pairs: Sequence[tuple[Hashable, Hashable]], model: Literal["declared", "iid"],
              parameters: FilterParameters | None) -> Filter:
        f = CYCLE_BEST[name](steps, check_epsilon(epsilon), check_delta(delta), pairs).filter
        if f is None:
            raise NotApplicableError(f"filter={name!r}: no parameters for this cycle")
        return capped(f, n, pairs)

    return build


register_cycle_builder("realisation", _realisation_cycle)
register_cycle_builder("union", lambda steps, e, d, n, pairs, model, parameters:
                       UnionBoundFilter(e, d, n, pairs))
register_cycle_builder("combined", lambda steps, e, d, n, pairs, model, parameters: combined_for_cycle(
    steps, e, d, n, pairs, model=model))
for _kind in filter_kinds("mechanism"):
    if _kind.name in CYCLE_BEST:
        register_cycle_builder(_kind.name, _mechanism_level_cycle(_kind.name))


def _check_pairs(pairs: Any) -> tuple[tuple[Hashable, Hashable], ...]:
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise ParameterError(f"pairs={pairs!r}: must be a list of (database, database) pairs")
    try:
        return tuple((a, b) for a, b in pairs)
    except (TypeError, ValueError):
        raise ParameterError(f"pairs={pairs!r}: must be a list of (database, database) pairs") from None


def sequence_comparison(steps: Sequence[Step], epsilon: float, delta: float, max_steps: int, *,
                        pairs: Sequence[tuple[Hashable, Hashable]], trajectories: int = 100_000,
                        seed: int = 0, model: Literal["declared", "iid"] = "declared") -> Comparison:
    """Survival curves of every registered filter on a declared cycle of steps.

    * the realisation-level filter with the ``(δ̃, θ)`` of
      :func:`lpdp.filters.params.sequence_parameters` for the cycle (``model``: the cycle itself or
      the i.i.d. model fitted to it);
    * the union-bound filter as it is (its level ``δ/N`` needs no tuning);
    * the realisation-level + Rényi filter of :func:`lpdp.filters.combined.combined_for_cycle`;
    * each mechanism-level filter tuned for the cycle by :func:`lpdp.filters.cycle_baselines`, charged
      each round's own cost (a filter registered without a cycle builder gets a note, never a tuning for
      one step of the cycle);
    * ``classical``: the largest k whose first k rounds, composed by :class:`lpdp.Accountant` (upper
      side), meet (ε, δ) (a reference, not a filter).

    Realisation-level curves are seeded Monte Carlo (``method="monte-carlo"``, with standard errors; one
    seed per filter, ``seed + i``), the others deterministic. ``baselines`` holds each mechanism-level
    filter's rounds of the cycle without the cap N (``at_least`` when a search cap was reached). A filter
    that does not apply has no curve and a note. The result's ``mechanism`` is ``None`` and ``steps``
    the cycle.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism
    >>> c = sequence_comparison([GaussianMechanism(2.0), LaplaceMechanism(2.0)], 6.0, 1e-3, 40,
    ...                         pairs=[(1, 0)], trajectories=2000)
    >>> c.curves["realisation"].method, c.curves["renyi"].method
    ('monte-carlo', 'deterministic')
    """
    steps = check_steps(steps)
    n = check_int(max_steps, "max_steps")
    trajectories = check_int(trajectories, "trajectories", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    pairs = _check_pairs(pairs)
    params = sequence_parameters(delta, n, steps, pairs, model=model)
    base = cycle_baselines(steps, epsilon, delta, pairs=pairs)
    notes = {k: b.note for k, b in base.items() if b.rounds is None}
    curves: dict[str, SurvivalCurve] = {}
    for i, kind in enumerate(filter_kinds()):
        if kind.name in notes:
            continue
        tuned = base.get(kind.name)      # each optimisation once: the mechanism-level tunings of base
        try:
            f = (capped(tuned.filter, n, pairs) if kind.level == "mechanism" and tuned is not None
                 and tuned.filter is not None else
                 cycle_filter(kind.name, steps, epsilon, delta, n, pairs, model=model, parameters=params))
            curves[kind.name] = sequence_survival(f, steps, horizon=n if kind.level == "mechanism"
                                                  else None, trajectories=trajectories, seed=seed + i)
        except NotApplicableError as exc:     # includes a filter registered without a cycle builder
            notes[kind.name] = f"not applicable: {exc}"
    classical = base["classical"]
    if classical.rounds is not None:
        curves["classical"] = step_curve(classical.rounds, n)
    return Comparison(None, epsilon, delta, n, params, curves, {}, base, notes, steps)
