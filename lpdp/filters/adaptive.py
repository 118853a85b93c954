"""Filters on heterogeneous and adaptive sequences: parameters for a declared sequence, and the
local-DP telemetry simulation that compares every filter on one adaptive policy.

Parameters (Taylor, Vippathalla and Coon, Section VI). Any ``(δ̃, θ)`` with ``δ̃ + θ (1 - δ̃) N <= δ``
keeps Theorem 1's guarantee for *every* sequence of requests, adaptive or not, as long as each step's
look-ahead covers the requests that can actually come next (``next=`` of :meth:`Filter.ask`). The choice
only changes how long the filter runs. For i.i.d. rounds the optimum is Proposition 1's
(:func:`~lpdp.filters.optimal_parameters`); for other sequences the paper suggests fitting an i.i.d.
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
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import optimize

from lpdp._validate import check_delta, check_int
from lpdp.errors import ParameterError
from lpdp.filters.baselines import NotApplicableError, classical_cycle
from lpdp.filters.params import FilterParameters, theta_for
from lpdp.filters.realisation import Filter, RealisationFilter
from lpdp.filters.registry import build_filter, filter_kinds
from lpdp.mechanisms import (
    GaussianMechanism,
    MixtureMechanism,
    Request,
    Step,
    randomized_response,
)

__all__ = ["sequence_parameters", "Telemetry", "telemetry"]


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
    >>> from lpdp.filters import optimal_parameters
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


@dataclass(frozen=True)
class Telemetry:
    """Every filter on the local-DP telemetry policy of :func:`telemetry`.

    ``stops[name]`` are the devices' stopping times (reports released); ``paths`` the largest realised
    loss over ordered pairs after each report (the realisation-level filter); ``parameters`` the
    realisation-level filter's (δ̃, θ); ``notes`` why a filter could not run; ``classical`` the largest
    k whose declared sequence (k reports, composed by :class:`lpdp.Accountant`, upper side) meets the
    budget, capped at N: the reference a non-adaptive analyst would use.
    """

    epsilon: float
    delta: float
    max_steps: int
    parameters: FilterParameters
    stops: dict[str, list[int]]
    paths: list[list[float]]
    truths: list[str]
    transcript: dict[str, Any] = field(repr=False)
    notes: dict[str, str] = field(default_factory=dict)
    classical: int | None = None

    def mean_reports(self) -> dict[str, float]:
        """Mean number of reports per device, per filter."""
        return {k: float(np.mean(v)) for k, v in self.stops.items()}


def telemetry(categories: Sequence[str], epsilon: float, delta: float, max_steps: int, *,
              rr_epsilon: float = 0.5, gaussian_sigma: float = 2.0, devices: int = 200,
              seed: int = 1, model: Literal["declared", "iid"] = "declared",
              progress: Callable[[int, int], None] | None = None) -> Telemetry:
    """Devices holding one categorical value answer adaptive local-DP queries, under every registered
    filter: first a randomized-response report of the value; then Gaussian reports of the indicator of
    the category reported most often so far, switching back to a randomized-response report after a
    low indicator report. Every pair of categories is a neighbouring pair; every possible next request
    is declared, so the realisation-level look-ahead uses the intersection rule.

    The realisation-level filter's (δ̃, θ) come from :func:`sequence_parameters` for the declared
    sequence (one randomized-response report, then indicator reports); the mechanism-level filters
    are tuned for i.i.d. indicator reports (the declared sequence's dominant round) and charge each
    round what it actually is. Each filter sees the same devices and noise (one seed per device).

    Examples
    --------
    >>> t = telemetry(["a", "b", "c"], 6.0, 1e-4, 10, devices=3)
    >>> "combined" in t.stops, len(t.stops["realisation"])
    (True, 3)
    """
    cats = list(categories)
    k, n_max = len(cats), check_int(max_steps, "max_steps")
    rr = randomized_response(k, rr_epsilon)
    g = GaussianMechanism(gaussian_sigma)
    report = Request("category", {c: i for i, c in enumerate(cats)})
    indicator = {c: Request(f"is-{c}", {d: float(d == c) for d in cats}) for c in cats}
    candidates = [(rr, report)] + [(g, r) for r in indicator.values()]
    pairs = [(a, b) for i, a in enumerate(cats) for b in cats[i + 1:]]
    declared = [(rr, report)] + [(g, indicator[cats[0]])] * (n_max - 1)
    p = sequence_parameters(delta, n_max, declared, pairs, model=model)
    truths = [cats[int(i)] for i in np.random.default_rng(seed).integers(k, size=devices)]
    filters: dict[str, Callable[[], Filter]] = {}
    notes: dict[str, str] = {}
    for kind in filter_kinds():
        if kind.name == "realisation":
            filters[kind.name] = lambda: RealisationFilter(epsilon, delta, n_max, p.delta_tilde,
                                                           p.theta, pairs)
            continue
        try:
            proto = build_filter(kind.name, g, epsilon, delta, n_max, [(1.0, 0.0)])  # tuned on g

            def make(f: Filter = proto) -> Filter:
                return type(f)(**f.config(), pairs=pairs)

            make().ask(rr, report)  # can it charge every round of the policy?
        except NotApplicableError as exc:
            notes[kind.name] = f"not applicable: {exc}"
            continue
        filters[kind.name] = make
    stops: dict[str, list[int]] = {name: [] for name in filters}
    paths: list[list[float]] = []
    transcript: dict[str, Any] = {}
    total = devices * len(filters)
    for j, (name, make) in enumerate(filters.items()):
        for device, truth in enumerate(truths):
            rng = np.random.default_rng([seed, device])
            f = make()
            counts = np.zeros(k)
            step: tuple[Any, Request] = (rr, report)
            path = [0.0]
            while f.ask(*step, next=candidates):
                mech, req = step
                y = mech.sample(req(truth), rng)
                f.record(y)
                if name == "realisation":
                    path.append(max(f.spent().values()))
                if mech is rr:
                    counts[int(y)] += 1
                    step = (g, indicator[cats[int(np.argmax(counts))]])
                elif y < 0.5:
                    step = (rr, report)
            stops[name].append(f.steps)
            if name == "realisation":
                paths.append(path)
                if device == 0:
                    transcript = f.transcript()
            if progress is not None:
                progress(j * devices + device + 1, total)
    return Telemetry(epsilon, delta, n_max, p, stops, paths, truths, transcript, notes,
                     classical_cycle(declared, epsilon, delta, pairs, cap=n_max).rounds)
