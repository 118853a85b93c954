"""Scenario kinds for privacy filters.

* ``filter_telemetry``: a device holding one categorical value answers adaptive local-DP queries
  (randomised response of the value, Gaussian reports of category indicators); a realisation-level
  filter per device decides when it stops reporting (issue 5).
* ``filter_survival``: the paper's Figure 2, survival curves ``P(T >= t)`` of every filter on i.i.d.
  Gaussian rounds, one panel per ε (issue 6).
* ``filter_sweep``: expected releases of every filter over a grid of ε and N (issue 6).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_epsilon, check_int, check_positive
from lpdp.scenarios import Field, ScenarioKind, ScenarioOutput, register


def _categories(value: list[str]) -> list[str]:
    from lpdp.errors import ParameterError

    if len(value) < 2 or len(set(value)) != len(value):
        raise ParameterError(f"categories={value!r}: need at least two distinct names")
    return value


TELEMETRY = {
    "categories": Field("list[str]", "the values a device can hold (its local-DP input alphabet)",
                        required=True, check=_categories),
    "epsilon": Field("float", "per-device budget epsilon", required=True, check=check_epsilon),
    "delta": Field("float", "per-device budget delta", required=True,
                   check=lambda v: check_delta(v, allow_one=False)),
    "max_steps": Field("int", "N: at most this many reports per device", default=40,
                       check=lambda v: check_int(v, "max_steps")),
    "rr_epsilon": Field("float", "epsilon of one randomized-response report", default=0.5,
                        check=lambda v: check_positive(v, "rr_epsilon")),
    "gaussian_sigma": Field("float", "noise of one Gaussian indicator report", default=2.0,
                            check=lambda v: check_positive(v, "gaussian_sigma")),
    "devices": Field("int", "simulated devices", default=200,
                     check=lambda v: check_int(v, "devices")),
    "seed": Field("int", "random seed", default=1, check=lambda v: check_int(v, "seed", minimum=0)),
}


def _telemetry(params: dict[str, Any]) -> ScenarioOutput:
    """Each device: first a randomised-response report; then, adaptively, a Gaussian report of the
    indicator of the category reported most often so far (or another RR report when the last
    indicator report was low). Every possible next request is declared, so the look-ahead uses the
    intersection rule (spec filter.md §3)."""
    from lpdp.filters import (
        GaussianMechanism,
        RealisationFilter,
        Request,
        optimal_parameters,
        randomized_response,
    )

    cats = params["categories"]
    k, n_max = len(cats), params["max_steps"]
    rr = randomized_response(k, params["rr_epsilon"])
    g = GaussianMechanism(params["gaussian_sigma"])
    report = Request("category", {c: i for i, c in enumerate(cats)})
    indicator = {c: Request(f"is-{c}", {d: float(d == c) for d in cats}) for c in cats}
    candidates = [(rr, report)] + [(g, r) for r in indicator.values()]
    pairs = [(a, b) for i, a in enumerate(cats) for b in cats[i + 1:]]
    p = optimal_parameters(params["delta"], n_max)
    rng = np.random.default_rng(params["seed"])
    paths, stops, truths, transcript = [], [], [], None
    for device in range(params["devices"]):
        truth = cats[int(rng.integers(k))]
        f = RealisationFilter(params["epsilon"], params["delta"], n_max, p.delta_tilde, p.theta,
                              pairs=pairs)
        counts = np.zeros(k)
        step = (rr, report)
        path = [0.0]
        while f.ask(*step, next=candidates):
            mech, req = step
            y = mech.sample(req(truth), rng)
            f.record(y)
            path.append(max(f.spent().values()))
            if mech is rr:
                counts[int(y)] += 1
                step = (g, indicator[cats[int(np.argmax(counts))]])
            else:
                step = (rr, report) if y < 0.5 else step
        paths.append(path)
        stops.append(f.steps)
        truths.append(truth)
        if device == 0:
            transcript = f.transcript()
    stops_arr = np.array(stops)
    summary = [
        f"{len(stops)} devices, budget ({params['epsilon']:g}, {params['delta']:g}), N = {n_max}: "
        f"mean {stops_arr.mean():.2f} reports (min {stops_arr.min()}, max {stops_arr.max()})",
        f"delta_tilde = {p.delta_tilde:.4g}, theta = {p.theta:.4g}; "
        f"{np.mean(stops_arr == n_max):.1%} of devices reached N",
    ]

    def draw(ax: Any) -> None:
        fig = ax.figure
        fig.clf()
        left, right = fig.subplots(1, 2)
        for path in paths[:60]:
            left.plot(range(len(path)), path, color="C0", alpha=0.25, lw=0.8)
            left.plot(len(path) - 1, path[-1], "o", color="C3", ms=2.5)
        left.axhline(params["epsilon"], color="k", ls="--", lw=1, label="epsilon")
        left.set_xlabel("reports released")
        left.set_ylabel("largest realised loss over ordered pairs")
        left.legend(loc="upper left", fontsize="small")
        right.hist(stops_arr, bins=np.arange(0.5, n_max + 1.5), color="C1")
        right.set_xlabel("stopping time T")
        right.set_ylabel("devices")

    return ScenarioOutput(
        payload={"delta_tilde": p.delta_tilde, "theta": p.theta, "stopping_times": stops,
                 "true_values": truths, "max_loss_paths": paths,
                 "mean_stopping_time": float(stops_arr.mean())},
        summary=summary, plot=draw, figsize=(11.0, 4.5),
        extra_files={"ldp_telemetry_filter_device0_transcript.json":
                     json.dumps(transcript, indent=1) + "\n"})


register(ScenarioKind("filter_telemetry", "a device answering adaptive local-DP queries until a "
                      "realisation-level filter stops it (issue 5)", TELEMETRY, _telemetry))


def _positive_list(name: str):
    def check(value: list[float]) -> list[float]:
        return [check_positive(v, f"{name}[{i}]") for i, v in enumerate(value)]

    return check


def _steps_list(value: list[int]) -> list[int]:
    return [check_int(v, f"max_steps[{i}]") for i, v in enumerate(value)]


GAUSSIAN = {
    "sigma": Field("float", "noise of each Gaussian round (sensitivity-1 count)", default=2.0,
                   check=lambda v: check_positive(v, "sigma")),
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
    from lpdp.filters import GaussianMechanism, comparison
    from lpdp.plot import filter_survival

    comps = [comparison(GaussianMechanism(params["sigma"]), e, params["delta"], params["max_steps"],
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
                          plot=draw, figsize=(6.0 * len(comps), 5.0),
                          extra_files={"figure_filter_gaussian_survival.csv": "\n".join(csv) + "\n"})


SWEEP = {
    **GAUSSIAN,
    "epsilons": Field("list[float]", "the epsilon grid", default=[2.0, 4.0, 6.0, 8.0, 10.0, 12.0],
                      check=_positive_list("epsilons")),
    "max_steps": Field("list[int]", "one panel per N", default=[24, 48, 96], check=_steps_list),
}


def _progress(done: int, total: int, label: str) -> None:
    width = 30
    bar = "#" * (width * done // total) + "." * (width - width * done // total)
    end = "\n" if done == total else ""
    print(f"\r[{bar}] {done}/{total} {label:<24}", end=end, file=sys.stderr, flush=True)


def _sweep(params: dict[str, Any]) -> ScenarioOutput:
    """Exact expected releases E[min(T, N)] of every filter over the (ε, N) grid (no Monte Carlo)."""
    from lpdp.filters import GaussianMechanism, comparison
    from lpdp.plot import FILTER_STYLES, filter_label

    eps, ns = params["epsilons"], params["max_steps"]
    table: dict[int, dict[str, list[float]]] = {}
    total, done = len(eps) * len(ns), 0
    for n in ns:
        table[n] = {}
        for e in eps:
            c = comparison(GaussianMechanism(params["sigma"]), e, params["delta"], n, trajectories=0)
            for name, v in c.expected_releases().items():
                table[n].setdefault(name, []).append(v)
            done += 1
            _progress(done, total, f"epsilon={e:g}, N={n}")
    summary = []
    for n in ns:
        best = {name: max(v) for name, v in table[n].items()}
        summary.append(f"N={n}: largest E[T] over the grid: " + ", ".join(
            f"{k} {v:.1f}" for k, v in best.items()))
        zero = [e for e, v in zip(eps, table[n]["realisation"], strict=True) if v < 1e-9]
        if zero:
            summary.append(f"N={n}: the realisation-level filter releases nothing at eps in {zero}")

    def draw(ax: Any) -> None:
        fig = ax.figure
        fig.clf()
        axes = np.atleast_1d(fig.subplots(1, len(ns), sharey=True))
        for a, n in zip(axes, ns, strict=True):
            for name, values in table[n].items():
                a.plot(eps, values, marker=".", label=filter_label(name), **FILTER_STYLES[name])
            a.set_title(f"N = {n}", fontsize="medium")
            a.set_xlabel("epsilon")
            a.grid(True, lw=0.3, alpha=0.5)
        axes[0].set_ylabel("expected releases E[min(T, N)]")
        axes[0].legend(fontsize="x-small", loc="upper left")

    return ScenarioOutput(payload={"epsilons": eps, "expected_releases": {
        str(n): v for n, v in table.items()}}, summary=summary, plot=draw,
        figsize=(5.0 * len(ns), 4.5))


register(ScenarioKind("filter_survival", "survival curves P(T >= t) of every filter on i.i.d. "
                      "Gaussian rounds (the paper's Figure 2, issue 6)", SURVIVAL, _survival))
register(ScenarioKind("filter_sweep", "expected releases of every filter over a grid of epsilon "
                      "and N (issue 6)", SWEEP, _sweep))
