"""``lpdp account``: the privacy of a workload (any mix of mechanisms), exact or certified.

The workload comes from a file (TOML or JSON, :mod:`lpdp.workload`) or inline options, or both (the inline
mechanisms are added to the file's). Every answer is a ``(lower, upper)`` pair: ``upper`` is a valid
guarantee, ``lower`` an attack bound; they are equal when the composition is exact.
"""

from __future__ import annotations

import argparse
from typing import Any

from lpdp.cli._common import Result, add_output_options, emit, regions_plot
from lpdp.cli.flags import add_mechanism_flags, flag_entries
from lpdp.errors import ParameterError


def _handle(args: argparse.Namespace) -> int:
    from lpdp import workload

    entries, parts = [], []
    if args.workload:
        data = workload.read(args.workload)
        parts = workload.parse(data, source=args.workload)
        entries = list(data["mechanism"])
    inline = flag_entries(args)
    if not entries and not inline:
        raise ParameterError("no mechanisms: give a WORKLOAD file or inline options (--dp, --pure, "
                             "--gaussian, --laplace, --rr)")
    if any(v == "?" for e in entries + inline for v in e.values()):
        raise ParameterError("'?' marks a free value: lpdp account needs every value; find it with lpdp "
                             "calibrate (the same workload and options, with --epsilon E --delta D)")
    if inline:
        parts += workload.parse({"mechanism": inline}, source="command line")
        entries += inline
    at, for_delta = args.at or [], args.for_delta or []
    guarantee = workload.accountant(parts).guarantee()
    payload = workload.report(guarantee, at, for_delta)
    payload["workload"] = entries
    regions = workload.regions(guarantee)
    table = [{"query": "delta_at", "epsilon": r["epsilon"], "delta": "", "lower": r["lower"],
              "upper": r["upper"]} for r in payload["delta_at"]]
    table += [{"query": "epsilon_for", "epsilon": "", "delta": r["delta"], "lower": r["lower"],
               "upper": r["upper"]} for r in payload["epsilon_for"]]
    kind = args.curve or ("profile" if not table or not regions else None)
    curve = None
    if kind and (args.plot or args.export or args.curve):
        from lpdp.curves import of

        curve = of(kind, guarantee, parts, epsilon_range=tuple(args.range) if args.range else None,
                   fpr=args.fpr, delta=(for_delta or [1e-6])[0], times=args.times)
        payload["curve"] = curve.to_dict()
    return emit(args, Result(
        summary="\n".join(workload.summary(payload)),
        payload=payload,
        regions=regions if curve is None else {},
        plot=_curve_plot(curve) if curve is not None else regions_plot(regions),
        table=curve.rows() if curve is not None and (args.curve or not table) else table,
    ))


def _curve_plot(curve: Any) -> Any:
    def draw(ax: Any) -> None:
        from lpdp.plot import curve as draw_curve

        draw_curve(curve, ax)

    return draw


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "account", help="privacy of a workload: any mix of mechanisms, each run some number of times",
        description="Compose a workload (a TOML/JSON file of [[mechanism]] tables, inline options, or "
                    "both) and report delta at --at epsilons and epsilon for --for-delta deltas, each as "
                    "a (lower, upper) pair: upper is a valid guarantee, lower an attack bound; exact "
                    "compositions have lower == upper. Inline form: each option adds one mechanism, "
                    "with an optional xTIMES suffix (default 1), e.g. `lpdp account --dp 1,0/0.5,0.1x10 "
                    "--gaussian 3x50 --laplace 1x5 --rr 4,0.7x20 --pure 0.3x4 --for-delta 1e-6`.",
        epilog="File kinds: dp (constraints), pure (epsilon), gaussian (sigma, sensitivity), laplace "
               "(scale, sensitivity), randomized_response (categories, epsilon), finite (p, q), region "
               "(vertices or constraints); every table may set times.")
    p.add_argument("workload", nargs="?", metavar="WORKLOAD", help="a workload file (.toml or .json)")
    add_mechanism_flags(p)
    p.add_argument("--at", type=float, nargs="+", metavar="EPS", help="report delta at these epsilons")
    p.add_argument("--for-delta", type=float, nargs="+", metavar="D",
                   help="report the smallest epsilon at these deltas")
    p.add_argument("--curve", choices=("profile", "tradeoff", "tpr", "budget"),
                   help="what --plot draws and --export writes: the privacy profile delta(eps) (default "
                        "without --at/--for-delta, or when the composition has no exact region), the "
                        "trade-off curve beta(alpha), the TPR of a membership test at each FPR, or eps at "
                        "the first --for-delta against the number of times the workload runs")
    p.add_argument("--range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                   help="eps range of --curve profile (default: from where delta leaves 1 to delta = 1e-12)")
    p.add_argument("--fpr", type=float, nargs="+", metavar="A",
                   help="false-positive rates of --curve tpr (default: 26 from 1e-5 to 1)")
    p.add_argument("--times", "--count", dest="times", type=int, default=100, metavar="N",
                   help="largest number of runs of the whole workload in --curve budget (default 100; "
                        "--count is its old spelling)")
    add_output_options(p)
    p.set_defaults(func=_handle)
