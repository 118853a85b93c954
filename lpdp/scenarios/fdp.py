"""Scenario kinds for f-DP composition brackets (Sec. IV): ``fdp_bracket`` and ``fdp_tightening``.

``fdp_bracket`` approximates the trade-off function of the scenario's ``[mechanism]`` table (Gaussian,
Laplace, ...) from below and above by n DP constraints (Propositions 1–2 for n = 2) and composes both,
for each k listed, next to the exact ``G_{μ√k}`` where it exists. ``fdp_tightening`` shows how the
bracket narrows as n grows: for each n the largest δ gap, the area between the two boundaries and ε at
δ = 1e-5 (the time taken per n goes under the JSON's ``execution``, never into its ``result``).
"""

from __future__ import annotations

import time
from typing import Any

from lpdp._validate import check_epsilon, check_int, check_positive, check_probability
from lpdp.display import format_lower, format_upper
from lpdp.errors import ParameterError
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, register

_STYLES = {"from below": {"color": "tab:red", "ls": "--"}, "from above": {"color": "tab:blue", "ls": "-."},
           "exact": {"color": "k", "lw": 2.0}}


def _mechanism(table: dict[str, Any]) -> Any:
    """The mechanism of a ``[mechanism]`` table (the workload's form, ``kind = ...``), run once, that has a
    trade-off function (a declared face: Gaussian, Laplace, ...)."""
    from lpdp.mechanisms import mechanism_from_entry

    mech, times = mechanism_from_entry(table, source="scenario", where="mechanism")
    if times != 1:
        raise ParameterError(f"mechanism.times={times}: the number of compositions is k (or ks)")
    mech.tradeoff()          # NotApplicableError (naming the mechanism) when it has no trade-off function
    return mech


def _old_form(value: float) -> float:
    raise ParameterError(f"{value!r}: 'mechanism = \"gaussian\"' with 'parameter = mu' (or \"laplace\" with "
                         "b) is the old form, no longer read (mu and sigma are easily confused); write a "
                         f"[mechanism] table: kind = \"gaussian\", sigma = {1 / value if value else 0!r} "
                         f"(G_mu with mu = 1/sigma), or kind = \"laplace\", scale = {value!r}")


def _layout(value: str) -> str:
    from lpdp.fdp import LAYOUTS

    if value not in LAYOUTS:
        raise ParameterError(f"{value!r}: must be one of {LAYOUTS}")
    return value


def _ints(value: list[int]) -> list[int]:
    if not value:
        raise ParameterError("[]: give at least one value")
    return [check_int(v, f"[{i}]", 1) for i, v in enumerate(value)]


COMMON = {
    # the old form first, so that its message (saying the new form) comes before the table's type error
    "parameter": Field("float", "old form (refused): write a [mechanism] table", check=_old_form),
    "mechanism": Field("table", "the mechanism whose trade-off function is bracketed, a [mechanism] table "
                       "of a workload: kind = \"gaussian\", sigma = S (G_mu with mu = sensitivity / S), or "
                       "kind = \"laplace\", scale = B (any kind with a trade-off function)", required=True,
                       check=lambda v: (_mechanism(v), v)[1]),      # checked; kept as data
    "step": Field("float", "lattice step of the eps_j (default: none for n <= 2, 0.01 otherwise)",
                  check=lambda v: check_positive(v, "step")),
    "delta_min": Field("float", "fix one tangent from below where delta_f = delta_min (lpdp.fdp.below)",
                       check=lambda v: check_probability(v, "delta_min", open_left=True, open_right=True)),
    "layout": Field("str", "'area' (Propositions 1-2) or 'tail' (eps_j evenly up to delta_min)",
                    default="area", check=_layout),
}

BRACKET_SCHEMA = {
    **COMMON,
    "ks": Field("list[int]", "numbers of compositions, one panel each", required=True, check=_ints),
    "n": Field("int", "number of (epsilon, delta) constraints per approximation (n >= 1)", default=2,
               check=lambda v: check_int(v, "n", 1)),
    "at": Field("list[float]", "epsilons at which to report delta", default=[0.5, 1.0, 2.0],
                check=lambda v: [check_epsilon(e, f"[{i}]") for i, e in enumerate(v)]),
}

TIGHTENING_SCHEMA = {
    **COMMON,
    "k": Field("int", "number of compositions", required=True, check=lambda v: check_int(v, "k", 1)),
    "ns": Field("list[int]", "numbers of constraints to compare", default=[2, 4, 8, 16], check=_ints),
}


def _tradeoff(params: dict[str, Any]) -> Any:
    return _mechanism(params["mechanism"]).tradeoff()


def run_bracket(params: dict[str, Any]) -> ScenarioOutput:
    """The bracket for each k, against the exact composition where known (Figure 3)."""
    from lpdp.export import region_dict
    from lpdp.fdp import bracket

    f, n, at = _tradeoff(params), params["n"], params["at"]
    panels, payload, summary = {}, {}, []
    for k in params["ks"]:
        b = bracket(f, k, n, step=params["step"], delta_min=params["delta_min"], layout=params["layout"])
        regions = {"from below": b.from_below, "from above": b.from_above}
        row: dict[str, Any] = {
            "from_below": {**region_dict(b.from_below, at), "approximation": list(b.below.constraints)},
            "from_above": {**region_dict(b.from_above, at, attack=True),
                           "approximation": list(b.above.constraints)},
            "max_delta_gap": b.max_gap(), "area_between": b.area_between(), "step": b.below.step,
        }
        if b.exact is not None:
            regions["exact"] = b.exact.inscribed_region()
            row["exact"] = {"tradeoff": b.exact.name, "delta_at": [[e, float(b.exact.delta(e))] for e in at]}
        panels[k] = regions
        payload[f"k={k}"] = row
        ranges = "".join(f"; delta({e:g}) in [{format_lower(float(b.from_above.delta_lower(e)), 4)}, "
                         f"{format_upper(float(b.from_below.delta(e)), 4)}]" for e in at[:2])
        summary.append(f"k={k}: max delta gap {row['max_delta_gap']:.4g}, area between "
                       f"{row['area_between']:.4g}{ranges}")
    first = bracket(f, 1, n, step=params["step"], delta_min=params["delta_min"], layout=params["layout"])
    payload["from_below_constraints"] = list(first.below.constraints)
    payload["from_above_constraints"] = list(first.above.constraints)
    summary.insert(0, f"{f.name}, n={n}: from below " + ", ".join(
        f"({e:.5g}, {d:.5g})" for e, d in first.below.constraints) + "; from above " + ", ".join(
        f"({e:.5g}, {d:.5g})" for e, d in first.above.constraints))

    def draw(ax: Any) -> None:
        from lpdp.plot import region_panels

        region_panels(panels, ax, labels=lambda k, name: f"{name}, k={k}", styles=_STYLES)

    return ScenarioOutput(payload=payload, summary=summary, plot=draw, figsize=(6.0 * len(panels), 6.0))


def run_tightening(params: dict[str, Any]) -> ScenarioOutput:
    """Gap, area between and ε(1e-5) of the bracket for each n (e.g. μ = 1, k = 10, n in {2, 4, 8, 16})."""
    from lpdp.fdp import bracket

    f, k = _tradeoff(params), params["k"]
    rows, seconds = [], {}
    for n in params["ns"]:
        t0 = time.perf_counter()
        b = bracket(f, k, n, step=params["step"], delta_min=params["delta_min"], layout=params["layout"])
        seconds[f"n={n}"] = time.perf_counter() - t0
        rows.append({"n": n, "max_delta_gap": b.max_gap(), "area_between": b.area_between(),
                     "step": b.below.step,
                     "epsilon_at_1e-5": [b.from_above.epsilon_lower(1e-5), b.from_below.epsilon(1e-5)]})
    summary = [f"n={r['n']:>2}: max delta gap {r['max_delta_gap']:.4g}, "
               f"area between {r['area_between']:.4g}, "
               f"eps(1e-5) in [{format_lower(r['epsilon_at_1e-5'][0], 4)}, "
               f"{format_upper(r['epsilon_at_1e-5'][1], 4)}]" for r in rows]

    def draw(ax: Any) -> None:
        from lpdp.plot import fdp_tightening

        fdp_tightening(rows, f.name, k, ax)

    return ScenarioOutput(payload={"tradeoff": f.name, "k": k, "rows": rows}, summary=summary, plot=draw,
                          figsize=(12.0, 4.8), timings={"bracket_seconds": seconds})


FAMILIES_SCHEMA = {k: COMMON[k] for k in ("parameter", "mechanism")}

#: The approximations from below that Figure 3's caption compares: label -> (n, family).
_FAMILIES = {"one constraint": (1, "dp"), "DP-TV (second constraint at eps = 0)": (2, "dp_tv"),
             "two constraints (Proposition 1)": (2, "dp")}


def run_families(params: dict[str, Any]) -> ScenarioOutput:
    """The best approximations of f from below by one constraint, by a DP-TV pair and by any two
    constraints, with the area under each (larger is tighter): Figure 3's caption."""
    from lpdp.fdp import below

    f = _tradeoff(params)
    shown, rows = {}, {}
    for label, (n, family) in _FAMILIES.items():
        approx = below(f, n, family=family)
        shown[label] = approx.region
        rows[label] = {"constraints": [list(c) for c in approx.constraints],
                       "area_under": 0.5 - approx.region.area()}
    exact_area = 0.5 - f.inscribed_region().area()
    areas = [r["area_under"] for r in rows.values()]
    summary = [f"{f.name}: area under the best approximation from below: "
               + ", ".join(f"{label} {r['area_under']:.6f}" for label, r in rows.items()),
               f"DP-TV is {'not ' if areas[1] < areas[2] else ''}the best pair: "
               f"{areas[1]:.6f} {'<' if areas[1] < areas[2] else '>='} {areas[2]:.6f}"]

    def draw(ax: Any) -> None:
        from lpdp.plot import regions

        styles = [{"color": "tab:green", "ls": ":"}, {"color": "tab:orange", "ls": "-."},
                  {"color": "tab:red", "ls": "--"}, {"color": "k", "lw": 2.0}]
        regions([*shown.values(), f.inscribed_region()],
                labels=[f"{k}: area under {r['area_under']:.6f}" for k, r in rows.items()] + [f.name],
                ax=ax, styles=styles)

    return ScenarioOutput(payload={"tradeoff": f.name, "families": rows, "area_under_exact": exact_area},
                          summary=summary, plot=draw)


register(ScenarioKind("fdp_families", "the best approximations of f from below by one constraint, a DP-TV "
                      "pair and any two constraints, and the area under each (Figure 3's caption)",
                      FAMILIES_SCHEMA, run_families))
register(ScenarioKind("fdp_bracket", "bracket the composition of a Gaussian or Laplace mechanism by n DP "
                      "constraints (Propositions 1-2, Figure 3)", BRACKET_SCHEMA, run_bracket))
register(ScenarioKind("fdp_tightening", "how the f-DP composition bracket narrows as the number of "
                      "constraints grows (docs/fdp.md)", TIGHTENING_SCHEMA, run_tightening))
