"""Scenario kinds for privacy filters.

* ``filter_telemetry``: devices holding one categorical value answer adaptive local-DP queries
  (randomized response of the value, Gaussian reports of category indicators) under every filter.
* ``filter_survival``: the filter paper's Figure 2, survival curves ``P(T >= t)`` of every filter on
  i.i.d. Gaussian rounds, one panel per ε.
* ``filter_comparison``: every filter at one (ε, N); its sweeps over ε and N give the expected releases
  of every filter on a grid (``scenarios/filter_sweep_gaussian.toml``).
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_epsilon, check_int, check_positive, check_probability
from lpdp.errors import ParameterError
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, SweepPlot, register


def _categories(value: list[str]) -> list[str]:
    from lpdp.errors import ParameterError

    if len(value) < 2 or len(set(value)) != len(value):
        raise ParameterError(f"categories={value!r}: need at least two distinct names")
    return value


def _route(value: str) -> str:
    from lpdp.errors import ParameterError

    if value not in ("declared", "iid"):
        raise ParameterError(f"parameters={value!r}: must be 'declared' or 'iid'")
    return value


TELEMETRY = {
    "categories": Field("list[str]", "the values a device can hold (its local-DP input alphabet)",
                        required=True, check=_categories),
    "epsilon": Field("float", "per-device budget epsilon", required=True, check=check_epsilon),
    "delta": Field("float", "per-device budget delta", required=True,
                   check=lambda v: check_delta(v, allow_one=False)),
    "max_steps": Field("int", "N: at most this many reports per device", default=40,
                       check=lambda v: check_int(v, "max_steps")),
    "report": Field("table", "the mechanism of a category report, a [report] table of a workload "
                    "(kind = ...; default: kind = \"randomized_response\", categories = the number of "
                    "categories, epsilon = 0.5)", check=lambda v: (_one_round(v, "report"), v)[1]),
    "indicator": Field("table", "the mechanism of an indicator report, an [indicator] table (default: "
                       "kind = \"gaussian\", sigma = 2.0)",
                       check=lambda v: (_one_round(v, "indicator"), v)[1]),
    "rr_epsilon": Field("float", "old form of [report] epsilon (read with a note)",
                        check=lambda v: _old_key("rr_epsilon", v, "[report] kind = \"randomized_response\", "
                                                 f"categories = K, epsilon = {v!r}")),
    "gaussian_sigma": Field("float", "old form of [indicator] sigma (read with a note)",
                            check=lambda v: _old_key("gaussian_sigma", v,
                                                     f"[indicator] kind = \"gaussian\", sigma = {v!r}")),
    "devices": Field("int", "simulated devices", default=200,
                     check=lambda v: check_int(v, "devices")),
    "seed": Field("int", "random seed", default=1, check=lambda v: check_int(v, "seed", minimum=0)),
    "parameters": Field("str", "(delta_tilde, theta) route: 'declared' (for the declared sequence) or "
                        "'iid' (an i.i.d. model fitted to it)", default="declared", check=_route),
}


def _old_key(key: str, value: float, table: str) -> float:
    """A key of the form before mechanism tables: read as before, with a one-line note saying the new
    form."""
    warnings.warn(f"scenario key {key!r} is the old form; write {table}", FutureWarning, stacklevel=2)
    return check_positive(value, key)


def _one_round(table: dict[str, Any], where: str) -> Any:
    """The mechanism of a ``[mechanism]``-form table (the workload's form, ``kind = ...``) run once."""
    from lpdp.mechanisms import mechanism_from_entry

    mech, times = mechanism_from_entry(table, source="scenario", where=where)
    if times != 1:
        raise ParameterError(f"{where}.times={times}: each round runs the mechanism once")
    return mech


def _telemetry_mechanisms(params: dict[str, Any]) -> dict[str, Any]:
    """``rr_epsilon``, ``gaussian_sigma``, ``report`` and ``indicator`` of :func:`telemetry` from the tables
    (or the old keys)."""
    out: dict[str, Any] = {}
    for table, old, arg in (("report", "rr_epsilon", "rr_epsilon"), ("indicator", "gaussian_sigma",
                                                                      "gaussian_sigma")):
        if params[table] is not None and params[old] is not None:
            raise ParameterError(f"{old} and [{table}]: give the [{table}] table only")
        if params[table] is not None:
            out[table] = _one_round(params[table], table)
        elif params[old] is not None:
            out[arg] = params[old]
    return out


def _telemetry(params: dict[str, Any]) -> ScenarioOutput:
    """Every registered filter on the adaptive local-DP policy of :func:`lpdp.filters.adaptive.telemetry`
    (the same devices and noise for each filter)."""
    from lpdp.filters.adaptive import telemetry
    from lpdp.filters.registry import filter_label
    from lpdp.plot import filter_telemetry

    r = telemetry(params["categories"], params["epsilon"], params["delta"], params["max_steps"],
                  **_telemetry_mechanisms(params), devices=params["devices"], seed=params["seed"],
                  model=params["parameters"])
    n_max = params["max_steps"]
    summary = [f"{params['devices']} devices, budget ({params['epsilon']:g}, {params['delta']:g}), "
               f"N = {n_max}; mean reports per device under each filter:"]
    for name, stops in r.stops.items():
        s = np.asarray(stops)
        summary.append(f"  {filter_label(name):<28} mean {s.mean():6.2f} (min {s.min()}, max {s.max()},"
                       f" {np.mean(s == n_max):.0%} reached N)")
    summary += [f"  {filter_label(k):<28} {v}" for k, v in r.notes.items()]
    summary.append(f"  classical composition of the declared sequence (reference): {r.classical} reports")
    summary.append(f"realisation-level parameters ({params['parameters']} route): delta_tilde = "
                   f"{r.parameters.delta_tilde:.4g}, theta = {r.parameters.theta:.4g}")
    return ScenarioOutput(
        payload={"delta_tilde": r.parameters.delta_tilde, "theta": r.parameters.theta,
                 "stopping_times": r.stops["realisation"], "stopping_times_by_filter": r.stops,
                 "mean_reports": r.mean_reports(), "notes": r.notes, "true_values": r.truths,
                 "classical_reports": r.classical,
                 "max_loss_paths": r.paths,
                 "mean_stopping_time": r.mean_reports()["realisation"]},
        summary=summary, plot=lambda ax: filter_telemetry(r, ax), figsize=(12.0, 5.0),
        extra_files={"ldp_telemetry_filter_device0_transcript.json":
                     json.dumps(r.transcript, indent=1) + "\n"})


register(ScenarioKind("filter_telemetry", "devices answering adaptive local-DP queries until a "
                      "filter stops them, every filter compared", TELEMETRY, _telemetry))


def _positive_list(name: str):
    def check(value: list[float]) -> list[float]:
        return [check_positive(v, f"{name}[{i}]") for i, v in enumerate(value)]

    return check


#: The mechanism of each round when the scenario names none.
DEFAULT_ROUND = {"kind": "gaussian", "sigma": 2.0}


def _round_mechanism(params: dict[str, Any]) -> Any:
    """The mechanism of each round: the ``[mechanism]`` table (or the old key ``sigma``, a Gaussian)."""
    if params["mechanism"] is not None and params["sigma"] is not None:
        raise ParameterError("sigma and [mechanism]: give the [mechanism] table only")
    table = params["mechanism"] or (DEFAULT_ROUND if params["sigma"] is None else
                                    {"kind": "gaussian", "sigma": params["sigma"]})
    return _one_round(table, "mechanism")


GAUSSIAN = {
    "mechanism": Field("table", "the mechanism of each round as a [mechanism] table of a workload "
                       "(kind = ..., e.g. kind = \"laplace\", scale = 1.0; default: kind = \"gaussian\", "
                       "sigma = 2.0)", check=lambda v: (_one_round(v, "mechanism"), v)[1]),  # kept as data
    "sigma": Field("float", "old form of [mechanism] kind = \"gaussian\", sigma (read with a note)",
                   check=lambda v: _old_key("sigma", v, f"[mechanism] kind = \"gaussian\", sigma = {v!r}")),
    "delta": Field("float", "target delta", default=1e-3,
                   check=lambda v: check_delta(v, allow_one=False)),
}

SURVIVAL = {
    **GAUSSIAN,
    "max_steps": Field("int", "N of the realisation-level filter", default=48,
                       check=lambda v: check_int(v, "max_steps")),
    "epsilons": Field("list[float]", "one panel per epsilon", default=[6.0, 10.0],
                      check=_positive_list("epsilons")),
    "trajectories": Field("int", "Monte Carlo trajectories of the independent check (0: none)",
                          default=100_000, check=lambda v: check_int(v, "trajectories", minimum=0)),
    "seed": Field("int", "Monte Carlo seed", default=0,
                  check=lambda v: check_int(v, "seed", minimum=0)),
}


def _expected_table(comparisons: list[Any]) -> list[str]:
    names = list(comparisons[0].curves)
    head = f"{'filter':<13}" + "".join(f"  eps={c.epsilon:<6g}" for c in comparisons)
    rows = [f"{n:<13}" + "".join(f"  {c.curves[n].expected_T:>10.3f}" for c in comparisons)
            for n in names]
    return [f"expected releases E[min(T, N)], N = {comparisons[0].max_steps}:", head, *rows]


def _survival(params: dict[str, Any]) -> ScenarioOutput:
    """Every filter's survival curve (exact for the realisation-level and union-bound filters, with a
    Monte Carlo check), the mechanism-level baselines with their best parameters, and the classical
    reference; one panel per ε."""
    from lpdp.filters import comparison
    from lpdp.plot import filter_survival

    comps = [comparison(_round_mechanism(params), e, params["delta"], params["max_steps"],
                        trajectories=params["trajectories"], seed=params["seed"])
             for e in params["epsilons"]]
    summary = _expected_table(comps)
    for c in comps:
        for name, mc in c.monte_carlo.items():
            exact = c.curves[name]
            z = abs(exact.expected_T - mc.expected_T) / max(mc.expected_T_stderr, 1e-12)
            summary.append(f"eps={c.epsilon:g} {name}: Monte Carlo E[T] = {mc.expected_T:.3f} ± "
                           f"{mc.expected_T_stderr:.3f} ({z:.1f} standard errors from quadrature)")

    def draw(ax: Any) -> None:
        fig = ax.figure
        fig.clf()
        axes = np.atleast_1d(fig.subplots(1, len(comps), sharey=True))
        for a, c in zip(axes, comps, strict=True):
            filter_survival(c, a)

    csv = ["epsilon,t," + ",".join(comps[0].curves)]
    csv += [f"{c.epsilon:g},{t}," + ",".join(f"{cv.survival[t - 1]:.10g}" for cv in c.curves.values())
            for c in comps for t in range(1, c.max_steps + 1)]
    return ScenarioOutput(payload={"comparisons": [c.to_dict() for c in comps]}, summary=summary,
                          plot=draw, figsize=(6.0 * len(comps), 8.0),
                          extra_files={"figure_filter_gaussian_survival.csv": "\n".join(csv) + "\n"})


COMPARISON = {
    **GAUSSIAN,
    "epsilon": Field("float", "the budget epsilon", default=6.0, check=check_epsilon),
    "max_steps": Field("int", "N of the realisation-level filter", default=48,
                       check=lambda v: check_int(v, "max_steps")),
    "trajectories": Field("int", "Monte Carlo trajectories of the independent check (0: none)",
                          default=0, check=lambda v: check_int(v, "trajectories", minimum=0)),
    "seed": Field("int", "Monte Carlo seed", default=0,
                  check=lambda v: check_int(v, "seed", minimum=0)),
    "delta_tilde": Field("float", "the realisation-level filter's delta-tilde by hand (with theta; "
                         "delta_tilde + theta (1 - delta_tilde) N <= delta; default: optimal)",
                         check=lambda v: check_probability(v, "delta_tilde")),
    "theta": Field("float", "its theta by hand (with delta_tilde)",
                   check=lambda v: check_probability(v, "theta")),
}


def _given(params: dict[str, Any]) -> Any:
    """The scenario's (δ̃, θ) as validated FilterParameters, or None (the optimal pair)."""
    from lpdp.filters import FilterParameters

    if (params["delta_tilde"] is None) != (params["theta"] is None):
        raise ParameterError("delta_tilde and theta: give both or neither")
    if params["delta_tilde"] is None:
        return None
    return FilterParameters(params["delta"], params["max_steps"], params["delta_tilde"], params["theta"])


def _comparison(params: dict[str, Any]) -> ScenarioOutput:
    """Every filter at one (σ, ε, δ, N): exact expected releases E[min(T, N)] and survival curves.
    Sweep it over ``epsilon`` and ``max_steps`` for the expected releases of every filter on a grid."""
    from lpdp.filters import comparison
    from lpdp.plot import filter_survival

    c = comparison(_round_mechanism(params), params["epsilon"], params["delta"],
                   params["max_steps"], trajectories=params["trajectories"], seed=params["seed"],
                   parameters=_given(params))
    return ScenarioOutput(payload=c.to_dict(), summary=_expected_table([c]),
                          plot=lambda ax: filter_survival(c, ax), figsize=(6.5, 5.0))


def _comparison_labels() -> dict[str, str]:
    from lpdp.filters.registry import filter_label
    from lpdp.plot import FILTER_STYLES

    return {k: filter_label(k) for k in FILTER_STYLES}


def _comparison_plot() -> SweepPlot:
    from lpdp.plot import FILTER_STYLES

    return SweepPlot(x="epsilon", y="expected_releases", ylabel="expected releases E[min(T, N)]",
                     labels=_comparison_labels, styles=FILTER_STYLES)


register(ScenarioKind("filter_survival", "survival curves P(T >= t) of every filter on i.i.d. "
                      "Gaussian rounds (the filter paper's Figure 2)", SURVIVAL, _survival))
register(ScenarioKind("filter_comparison", "every filter on i.i.d. Gaussian rounds at one (epsilon, N): "
                      "expected releases and survival; sweep it over epsilon and max_steps", COMPARISON,
                      _comparison, sweep_plot=_comparison_plot()))
