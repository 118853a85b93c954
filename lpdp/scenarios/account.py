"""Scenario kind ``account``: a workload (``[[mechanism]]`` tables, as in :mod:`lpdp.workload`) composed by
the accountant, with δ at ``at`` and ε for ``for_delta`` as ``(lower, upper)`` pairs."""

from __future__ import annotations

from typing import Any

from lpdp._validate import check_delta, check_epsilon
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, register


def _entries(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from lpdp.workload import parse

    parse({"mechanism": value}, source="workload")      # validate now: a typo fails before anything runs
    return value


SCHEMA = {
    "mechanism": Field("list[table]", "the workload's mechanisms: kind, its keys and times (see "
                       "`lpdp account --help`)", required=True, check=_entries),
    "at": Field("list[float]", "epsilons at which to report delta", default=[1.0],
                check=lambda v: [check_epsilon(e, f"[{i}]") for i, e in enumerate(v)]),
    "for_delta": Field("list[float]", "deltas at which to report the smallest epsilon", default=[1e-6],
                       check=lambda v: [check_delta(d, f"[{i}]") for i, d in enumerate(v)]),
}


def run(params: dict[str, Any]) -> ScenarioOutput:
    """Compose the workload and report both sides of the guarantee; the figure is the exact region, or
    the privacy profile over its automatic range (:func:`lpdp.curves.profile`) when there is none."""
    from lpdp.curves import profile
    from lpdp.workload import accountant, parse, regions, report, summary

    guarantee = accountant(parse({"mechanism": params["mechanism"]})).guarantee()
    payload = report(guarantee, params["at"], params["for_delta"])
    shown = regions(guarantee)
    curve = None if shown else profile(guarantee)

    def draw(ax: Any) -> None:
        from lpdp.plot import privacy_profile
        from lpdp.plot import regions as draw_regions

        if curve is None:
            draw_regions(list(shown.values()), labels=list(shown), ax=ax)
        else:
            privacy_profile(curve, ax)

    return ScenarioOutput(payload=payload, summary=summary(payload), plot=draw)


register(ScenarioKind("account", "the privacy of a workload: any mix of mechanisms, each run some number "
                      "of times (exact or certified (lower, upper) answers)", SCHEMA, run))
