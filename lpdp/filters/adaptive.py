"""Filters on heterogeneous and adaptive sequences: parameters for a declared sequence, and the
local-DP telemetry simulation that compares every filter on one adaptive policy.

The parameters for a declared sequence are :func:`lpdp.filters.params.sequence_parameters` (re-exported
here; the routes are described there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.filters.baselines import NotApplicableError, classical_cycle
from lpdp.filters.params import FilterParameters, sequence_parameters
from lpdp.filters.realisation import Filter, RealisationFilter
from lpdp.filters.registry import build_filter, filter_kinds, filter_label
from lpdp.mechanisms import (
    GaussianMechanism,
    Mechanism,
    Request,
    randomized_response,
)

__all__ = ["sequence_parameters", "Telemetry", "telemetry"]


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

    @staticmethod
    def label(name: str) -> str:
        """What figures call the filter ``name`` (:func:`lpdp.filters.registry.filter_label`)."""
        return filter_label(name)


def telemetry(categories: Sequence[str], epsilon: float, delta: float, max_steps: int, *,
              rr_epsilon: float = 0.5, gaussian_sigma: float = 2.0, devices: int = 200,
              seed: int = 1, model: Literal["declared", "iid"] = "declared",
              progress: Callable[[int, int], None] | None = None, report: Mechanism | None = None,
              indicator: Mechanism | None = None) -> Telemetry:
    """Devices holding one categorical value answer adaptive local-DP queries, under every registered
    filter: first a randomized-response report of the value; then Gaussian reports of the indicator of
    the category reported most often so far, switching back to a randomized-response report after a
    low indicator report. Every pair of categories is a neighbouring pair; every possible next request
    is declared, so the realisation-level look-ahead uses the intersection rule.

    ``report`` is the mechanism of a category report (default: k-ary randomized response of
    ``rr_epsilon``; any mechanism with finite outputs ``0 .. k-1`` on inputs ``0 .. k-1``), ``indicator``
    that of an indicator report (default: the Gaussian mechanism of ``gaussian_sigma``; any mechanism on
    the inputs 0 and 1).

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
    rr = randomized_response(k, rr_epsilon) if report is None else report
    if not (rr.finite_outputs and list(rr.outputs) == list(range(k))):  # type: ignore[attr-defined]
        raise ParameterError(f"report={rr.label}: must have the outputs 0 .. {k - 1}, one per category "
                             f"(k-ary randomized response, categories = {k})")
    g = GaussianMechanism(gaussian_sigma) if indicator is None else indicator
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
