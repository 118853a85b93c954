"""Scenario kinds for double-DP composition (Thms 2-3): ``double_dp`` (Figure 2), ``double_dp_budget`` and
``double_dp_epsilon``.

``double_dp`` composes mechanisms that meet two (ε, δ) constraints at once, k times for each k listed, and
compares the exact region (Theorems 2–3) with Remarks 1 and 2: for each k the summary gives the largest δ
gap and the area between the exact boundary and each baseline. ``double_dp_budget`` answers how many
releases fit in an (ε, δ) budget, exactly and by each baseline. ``double_dp_epsilon`` gives ε at one δ
for one k, exactly and by each baseline; sweep it over k for the curves of ε against k.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_epsilon, check_int
from lpdp.errors import ParameterError
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, SweepPlot, register

#: Region labels in plots and JSON: the exact answer, then the baselines.
LABELS = {"lattice": "exact (Theorems 2-3)", "remark1": "Remark 1", "remark2": "Remark 2"}
_STYLES = {"lattice": {"lw": 2.2, "color": "k"}, "remark1": {"ls": "--", "color": "tab:red"},
           "remark2": {"ls": "-.", "color": "tab:blue"}}


def _two_constraints(value: list[list[float]]) -> list[tuple[float, float]]:
    if len(value) != 2:
        raise ParameterError(f"{value!r}: give exactly two [epsilon, delta] constraints")
    return [(check_epsilon(e, f"[{i}] epsilon"), check_delta(d, f"[{i}] delta", allow_one=False))
            for i, (e, d) in enumerate(value)]


def _ks(value: list[int]) -> list[int]:
    if not value:
        raise ParameterError("[]: give at least one k")
    return [check_int(k, f"[{i}]", 1) for i, k in enumerate(value)]


def _eps_list(value: list[float]) -> list[float]:
    return [check_epsilon(e, f"[{i}]") for i, e in enumerate(value)]


def _budget(value: list[float]) -> tuple[float, float]:
    if len(value) != 2:
        raise ParameterError(f"{value!r}: give [epsilon, delta]")
    return check_epsilon(value[0], "epsilon"), check_delta(value[1], "delta")


CONSTRAINTS = Field("list[pair]", "the two [epsilon, delta] constraints every mechanism meets", required=True,
                    check=_two_constraints)

SCHEMA = {
    "constraints": CONSTRAINTS,
    "ks": Field("list[int]", "numbers of compositions, one panel each", required=True, check=_ks),
    "at": Field("list[float]", "epsilons at which to report delta", default=[0.0, 0.5, 1.0], check=_eps_list),
}

BUDGET_SCHEMA = {
    "constraints": CONSTRAINTS,
    "budget": Field("list[float]", "the total [epsilon, delta] budget", required=True, check=_budget),
    "k_max": Field("int", "search limit for k", default=2000, check=lambda v: check_int(v, "k_max", 1)),
}


EPSILON_SCHEMA = {
    "constraints": CONSTRAINTS,
    "k": Field("int", "number of compositions", required=True, check=lambda v: check_int(v, "k", 1)),
    "delta": Field("float", "the delta at which epsilon is reported", default=1e-6,
                   check=lambda v: check_delta(v, "delta", allow_one=False)),
}


def _compose(constraints: list[tuple[float, float]], k: int, method: str = "lattice") -> Any:
    """Region of k mechanisms meeting every constraint, by :class:`lpdp.Accountant`."""
    from lpdp.accountant import Accountant
    from lpdp.mechanisms import DPMechanism

    return Accountant(method=method).compose(DPMechanism(constraints), k).guarantee().upper


def run(params: dict[str, Any]) -> ScenarioOutput:
    """Exact double-DP composition vs Remarks 1 and 2 for each k (Figure 2)."""
    from lpdp.export import region_dict
    from lpdp.region import largest_delta_gap

    c1, c2 = params["constraints"]
    at = params["at"]
    panels: dict[int, dict[str, Any]] = {}
    payload: dict[str, Any] = {}
    summary = []
    for k in params["ks"]:
        regions = {m: _compose([c1, c2], k, m) for m in LABELS}
        panels[k] = regions
        exact = regions["lattice"]
        row: dict[str, Any] = {LABELS[m]: region_dict(r, at) for m, r in regions.items()}
        for m in ("remark1", "remark2"):
            gap, where = largest_delta_gap(exact, regions[m])
            between = regions[m].area() - exact.area()
            row[f"{m}_largest_delta_gap"] = {"gap": gap, "epsilon": where}
            row[f"{m}_area_between"] = between
            summary.append(f"k={k}: {LABELS[m]} is looser by up to {gap:.4g} in delta (at eps={where:.4g}); "
                           f"area between boundaries {between:.4g}")
        payload[f"k={k}"] = row

    def draw(ax: Any) -> None:
        from lpdp.plot import region_panels

        region_panels(panels, ax, labels=lambda k, m: f"{LABELS[m]}, k={k}", styles=_STYLES)

    return ScenarioOutput(payload=payload, summary=summary, plot=draw, figsize=(6.0 * len(panels), 6.0))


def run_budget(params: dict[str, Any]) -> ScenarioOutput:
    """Largest number of releases within a budget: exact vs Remarks 1 and 2 (and each constraint alone)."""
    from lpdp.compose import max_k_within

    c1, c2 = params["constraints"]
    eps, dlt = params["budget"]
    k_max = params["k_max"]
    composers = {m: (lambda k, m=m: _compose([c1, c2], k, m)) for m in LABELS}
    composers.update({f"({e:g}, {d:g}) alone": (lambda k, c=c: _compose([c], k))
                      for c in (c1, c2) for e, d in [c]})
    found = {name: max_k_within(f, eps, dlt, k_max=k_max) for name, f in composers.items()}
    summary = [f"releases within (eps={eps:g}, delta={dlt:g}): "
               + ", ".join(f"{LABELS.get(n, n)} {v}{'+' if v == k_max else ''}" for n, v in found.items())]
    top = max(found.values()) + 2
    ks = np.arange(1, top + 1)
    curves = {m: [float(composers[m](int(k)).delta(eps)) for k in ks] for m in LABELS}

    def draw(ax: Any) -> None:
        for m, ys in curves.items():
            ax.semilogy(ks, ys, marker="o", ms=3, label=LABELS[m], **_STYLES[m])
        ax.axhline(dlt, color="0.5", lw=0.8, ls=":", label=f"budget delta = {dlt:g}")
        ax.set_xlabel("number of releases k")
        ax.set_ylabel(f"delta at eps = {eps:g}")
        ax.legend(fontsize="small")
        ax.grid(True, lw=0.3, alpha=0.5)

    return ScenarioOutput(
        payload={"max_k": {LABELS.get(n, n): v for n, v in found.items()}, "k_max": k_max,
                 "delta_at_budget_epsilon": {LABELS[m]: [[int(k), y] for k, y in zip(ks, ys, strict=True)]
                                             for m, ys in curves.items()}},
        summary=summary, plot=draw, figsize=(7.0, 5.0))


def run_epsilon(params: dict[str, Any]) -> ScenarioOutput:
    """ε at δ of the k-fold double-DP composition: exact (Theorems 2-3) and Remarks 1 and 2.

    Every ε is a valid guarantee (the smallest ε with δ(ε) <= delta, rounded up), and the summary rounds
    it up again for reading.
    """
    from lpdp.accountant import Accountant
    from lpdp.display import format_upper
    from lpdp.mechanisms import DPMechanism

    c1, c2 = params["constraints"]
    k, dlt = params["k"], params["delta"]
    eps = {m: Accountant(method=m).compose(DPMechanism([c1, c2]), k).guarantee().epsilon(dlt)[1]
           for m in LABELS}
    summary = [f"k={k}: epsilon at delta={dlt:g}: "
               + ", ".join(f"{LABELS[m]} {format_upper(e, 5)}" for m, e in eps.items())]
    return ScenarioOutput(payload={"epsilon": eps}, summary=summary)


register(ScenarioKind("double_dp", "k-fold composition under two (eps, delta) constraints: exact vs "
                      "Remarks 1-2 (Theorems 2-3, Figure 2)", SCHEMA, run))
register(ScenarioKind("double_dp_budget", "largest number of double-DP releases within an (eps, delta) "
                      "budget, exact vs Remarks 1-2", BUDGET_SCHEMA, run_budget))
register(ScenarioKind("double_dp_epsilon", "epsilon at one delta of the k-fold double-DP composition, "
                      "exact vs Remarks 1-2; sweep it over k", EPSILON_SCHEMA, run_epsilon,
                      sweep_plot=SweepPlot(x="k", y="epsilon", ylabel="epsilon at delta (a guarantee)",
                                           labels=LABELS, styles=_STYLES)))
