"""``lpdp calibrate``: the noise, count or ε0 that meets a target (ε, δ), certified at the answer.

The workload is a file or the inline options of ``lpdp account`` (or both), with the free value written
as ``?`` (``sigma = "?"`` in a file, ``--gaussian '?x1000'`` inline), or no ``?`` and one of
``--noise-factor`` (one factor on every noise scale) and ``--split I J --weight W`` (a budget shared by
two mechanisms). The library does the work (:mod:`lpdp.calibrate`); this module parses, calls, prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from lpdp.cli._common import Result, add_output_options, emit
from lpdp.cli.flags import add_mechanism_flags, flag_entries


def _handle(args: argparse.Namespace) -> int:
    from lpdp import calibrate, workload
    from lpdp.errors import ParameterError

    entries: list[dict[str, Any]] = []
    if args.workload:
        data = workload.read(args.workload)
        if not isinstance(data.get("mechanism"), list):
            workload.parse(data, source=args.workload)       # the parser's own one-line error
        entries = list(data["mechanism"])
    entries += flag_entries(args)
    if not entries:
        raise ParameterError("no mechanisms: give a WORKLOAD file or inline options (--dp, --pure, "
                             "--gaussian, --laplace, --rr), with '?' as the free value")
    source = args.workload or "command line"
    if args.weight is not None and args.split is None:
        raise ParameterError("--weight: only with --split I J")
    if args.noise_factor or args.split is not None:
        if args.noise_factor and args.split is not None:
            raise ParameterError("--noise-factor and --split: choose one")
        parts = workload.parse({"mechanism": entries}, source=source)     # a '?' here is refused
        if args.noise_factor:
            found = calibrate.noise_factor(parts, args.epsilon, args.delta, rtol=args.rtol)
        else:
            if args.weight is None:
                raise ParameterError("--split I J: give --weight W (the first mechanism's share, in (0, 1))")
            found = calibrate.split(parts, args.split[0], args.split[1], args.weight, args.epsilon,
                                    args.delta, rtol=args.rtol)
    else:
        found = calibrate.calibrate({"mechanism": entries}, args.epsilon, args.delta, rtol=args.rtol,
                                    source=source)
    return emit(args, Result(summary="\n".join(found.summary()), payload=found.to_dict()))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate", help="the noise, count or epsilon0 that meets a target (epsilon, delta), certified",
        description="Find the best value of one free parameter (written '?') whose certified guarantee "
                    "meets --epsilon E at --delta D: the smallest sigma or scale, the largest epsilon0 or "
                    "count. Prints the value, the certificate (the guarantee at the value) and a bracket on "
                    "the exact optimum. Counts are exact; continuous values to --rtol. Examples: `lpdp "
                    "calibrate --gaussian '?x1000' --epsilon 2 --delta 1e-6`, `lpdp calibrate --pure "
                    "0.3x40 --pure 0.02x400 --pure '0.02x?' --epsilon 5 --delta 1e-6`.",
        epilog="Free parameters: sigma (gaussian), scale (laplace), epsilon (pure, randomized_response), "
               "times (every kind). In a file the table with the '?' may set min and max (the search "
               "range).")
    p.add_argument("workload", nargs="?", metavar="WORKLOAD", help="a workload file (.toml or .json)")
    add_mechanism_flags(p, note="'?' marks the free value")
    p.add_argument("--epsilon", type=float, required=True, metavar="E", help="the target epsilon")
    p.add_argument("--delta", type=float, required=True, metavar="D", help="the target delta")
    p.add_argument("--rtol", type=float, default=1e-4, metavar="R",
                   help="relative tolerance of a continuous answer (default 1e-4)")
    p.add_argument("--noise-factor", action="store_true",
                   help="the free value is one factor on every noise scale (no '?' in the workload)")
    p.add_argument("--split", type=int, nargs=2, metavar=("I", "J"),
                   help="the free value is a budget shared by mechanisms I and J (0-based), --weight to I")
    p.add_argument("--weight", type=float, metavar="W", help="with --split: the first mechanism's share")
    add_output_options(p, plot=False, export=(".json",))
    p.set_defaults(func=_handle)
