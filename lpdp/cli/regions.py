"""``lpdp region`` and ``lpdp mix``: regions of DP constraints and mixtures of tests."""

from __future__ import annotations

import argparse

from lpdp.cli._common import Result, add_output_options, emit, parse_pair, region_summary, regions_plot
from lpdp.cli.flags import warn
from lpdp.display import format_upper
from lpdp.errors import ParameterError


def _constraints(values: list[str] | None) -> list[tuple[float, float]]:
    if not values:
        raise ParameterError("--dp: at least one EPS,DELTA constraint is needed")
    return [parse_pair(v, "--dp") for v in values]


def _one_mechanism(values: list[str] | None) -> list[tuple[float, float]]:
    """The constraints of ``lpdp region``'s one mechanism: ``--dp EPS,DELTA[/EPS,DELTA...]`` as in every
    command (:mod:`lpdp.cli.flags`); several ``--dp`` (the older spelling) are read as one, with a note."""
    pairs = _constraints([part for v in values or [] for part in v.split("/")])
    if values and len(values) > 1:      # after the values are checked: a refused one prints its error alone
        warn(f"several --dp: read as one mechanism meeting them all, --dp {'/'.join(values)} (write it so; "
             "in lpdp account and lpdp mix several --dp are several mechanisms)")
    return pairs


def _label(pairs: list[tuple[float, float]]) -> str:
    return " ∩ ".join(f"R({e:g}, {d:g})" for e, d in pairs)


def _region(args: argparse.Namespace) -> int:
    from lpdp.export import region_dict
    from lpdp.region import PrivacyRegion

    pairs = _one_mechanism(args.dp)
    region = PrivacyRegion.from_constraints(pairs)
    label = _label(pairs)
    payload = {"constraints": [list(p) for p in pairs], **region_dict(region, args.at)}
    summary = region_summary(region, args.at, title=label)
    if args.lp and args.at:
        from lpdp.lp import IntersectionLP

        lp_delta = IntersectionLP([PrivacyRegion.from_dp(*p) for p in pairs]).delta(args.at)
        payload["lp_delta_at"] = [[e, float(d)] for e, d in zip(args.at, lp_delta, strict=True)]
        summary += "\nHiGHS LP cross-check: " + ", ".join(
            f"delta({e:g}) = {format_upper(d)}" for e, d in payload["lp_delta_at"])
    return emit(args, Result(
        summary=summary,
        payload=payload,
        regions={label: region},
        plot=regions_plot({**{_label([p]): PrivacyRegion.from_dp(*p) for p in pairs}, label: region}
                          if len(pairs) > 1 else {label: region}),
    ))


def _mix(args: argparse.Namespace) -> int:
    from lpdp.export import region_dict
    from lpdp.mixture import mix
    from lpdp.region import PrivacyRegion

    pairs = _constraints(args.dp)
    weights = args.weight or []
    if len(weights) != len(pairs):
        raise ParameterError(f"--weight: give one weight per --dp (got {len(weights)} weights for "
                             f"{len(pairs)} constraints)")
    names = [f"{_label([p])} #{i + 1}" if [*pairs].count(p) > 1 else _label([p])
             for i, p in enumerate(pairs)]
    parts = {name: PrivacyRegion.from_dp(*p) for name, p in zip(names, pairs, strict=True)}
    region = mix(list(zip(parts.values(), weights, strict=True)))
    label = " + ".join(f"{w:g}·{name}" for w, name in zip(weights, parts, strict=True))
    return emit(args, Result(
        summary=region_summary(region, args.at, title=f"mixture {label}"),
        payload={"weights": weights, "constraints": [list(p) for p in pairs],
                 **region_dict(region, args.at)},
        regions={label: region},
        plot=regions_plot({**parts, "mixture": region}),
    ))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("region", help="the privacy region of one or more (eps, delta) constraints",
                       description="Exact region of a mechanism that satisfies every --dp constraint.")
    p.add_argument("--dp", action="append", metavar="EPS,DELTA[/EPS,DELTA...]",
                   help="the mechanism meets every listed (eps, delta) at once (as --dp in every command; "
                        "several --dp are read as one, with a note)")
    p.add_argument("--at", type=float, nargs="+", metavar="EPS", help="print delta at these epsilons")
    p.add_argument("--lp", action="store_true",
                   help="also solve the --at queries as HiGHS LPs over the intersection (a cross-check)")
    add_output_options(p)
    p.set_defaults(func=_region)

    m = sub.add_parser("mix", help="weighted Minkowski sum (mixture of tests, Lemma 1)",
                       description="Mixture of (eps, delta) regions: --weight W --dp EPS,DELTA pairs.")
    m.add_argument("--weight", action="append", type=float, metavar="W", help="weight of the next --dp")
    m.add_argument("--dp", action="append", metavar="EPS,DELTA", help="a component region")
    m.add_argument("--at", type=float, nargs="+", metavar="EPS", help="print delta at these epsilons")
    add_output_options(m)
    m.set_defaults(func=_mix)
