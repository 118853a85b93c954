"""Scenario kinds for privacy filters.

* ``filter_telemetry``: a device holding one categorical value answers adaptive local-DP queries
  (randomised response of the value, Gaussian reports of category indicators); a realisation-level
  filter per device decides when it stops reporting (issue 5).
"""

from __future__ import annotations

import json
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
    "rr_epsilon": Field("float", "epsilon0 of one randomised-response report", default=0.5,
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
        randomised_response,
    )

    cats = params["categories"]
    k, n_max = len(cats), params["max_steps"]
    rr = randomised_response(k, params["rr_epsilon"])
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
