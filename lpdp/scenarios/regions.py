"""Scenario kind ``mixture``: regions of (ε, δ) constraints and their weighted Minkowski sum (Figure 1)."""

from __future__ import annotations

from typing import Any

from lpdp._validate import check_delta, check_epsilon, check_weights
from lpdp.display import format_upper
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, register


def _pairs(value: list[list[float]]) -> list[tuple[float, float]]:
    return [(check_epsilon(e, f"[{i}] epsilon"), check_delta(d, f"[{i}] delta"))
            for i, (e, d) in enumerate(value)]


def _eps_list(value: list[float]) -> list[float]:
    return [check_epsilon(e, f"[{i}]") for i, e in enumerate(value)]


COMPONENT = {
    "weight": Field("float", "mixture weight of this component (weights sum to 1)", required=True),
    "constraints": Field("list[pair]", "[epsilon, delta] constraints the component satisfies at once",
                         required=True, check=_pairs),
    "label": Field("str", "legend label (default: the constraints)", default=""),
}

SCHEMA = {
    "components": Field("list[table]", "the mixed regions", required=True, schema=COMPONENT),
    "at": Field("list[float]", "epsilons at which to report delta", default=[0.0, 0.5, 1.0],
                check=_eps_list),
}


def run(params: dict[str, Any]) -> ScenarioOutput:
    """Build each component region, their mixture, and compare the mixture with their union."""
    from shapely import union_all

    from lpdp.export import region_dict
    from lpdp.mixture import mix
    from lpdp.region import PrivacyRegion

    comps = params["components"]
    check_weights([c["weight"] for c in comps], "components[].weight")
    parts: dict[str, PrivacyRegion] = {}
    for c in comps:
        label = c["label"] or " ∩ ".join(f"R({e:g}, {d:g})" for e, d in c["constraints"])
        parts[label] = PrivacyRegion.from_constraints(c["constraints"])
    mixture = mix([(r, c["weight"]) for c, r in zip(comps, parts.values(), strict=True)])
    union = union_all([r.polygon for r in parts.values()])
    mpoly = mixture.polygon
    outside_union = mpoly.difference(union).area
    union_outside = union.difference(mpoly).area
    at = params["at"]
    summary = [f"mixture area {mixture.area():.4f}; area of mixture outside the union {outside_union:.4f}, "
               f"of union outside the mixture {union_outside:.4f}"]
    summary += [f"delta({e:g}) = {format_upper(float(mixture.delta(e)))}" for e in at]

    def draw(ax: Any) -> None:
        from lpdp.plot import regions

        regions([*parts.values(), mixture], labels=[*parts, "mixture"], ax=ax,
                styles=[{"ls": "--"}] * len(parts) + [{"lw": 2.2, "color": "k"}])

    return ScenarioOutput(
        payload={
            "components": {k: region_dict(r, at) for k, r in parts.items()},
            "mixture": region_dict(mixture, at),
            "area_mixture_outside_union": outside_union,
            "area_union_outside_mixture": union_outside,
        },
        summary=summary,
        plot=draw,
    )


register(ScenarioKind("mixture", "weighted Minkowski sum of (eps, delta) regions (Lemma 1, Figure 1)",
                      SCHEMA, run))
