"""``lpdp fdp``: bracket the k-fold composition of a Gaussian or Laplace mechanism (spec §6–§7).

``from_below`` is the composition of the approximation from below (its δ is >= the truth: a valid privacy
guarantee), ``from_above`` that of the approximation from above (its δ is <= the truth), each in the
compose JSON format; ``exact`` is ``G_{μ√k}`` for the Gaussian (sampled profile and boundary, exact
``delta_at``) and ``null`` for the Laplace mechanism (no closed form). All numbers come from
:mod:`lpdp.fdp`.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from lpdp.cli._common import Result, add_output_options, emit, region_summary, regions_plot
from lpdp.display import format_lower, format_upper
from lpdp.errors import ParameterError


def _number(text: str, option: str) -> float | int:
    """``text`` as an int when it is one (so messages show ``3``, not ``3.0``), else as a float."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise ParameterError(f"{option} {text!r}: must be a number")


def _exact_dict(f: Any, at: list[float], top: float) -> dict[str, Any]:
    eps = np.linspace(0.0, top, 201)
    t = np.unique(np.concatenate([np.geomspace(1e-9, 1e-2, 60), np.linspace(0.0, 1.0, 401)]))
    return {
        "tradeoff": f.name,
        "profile": [[float(e), float(d)] for e, d in zip(eps, f.delta(eps), strict=True)],
        "delta_at": [[e, float(f.delta(e))] for e in at],
        "vertices": [[float(x), float(y)] for x, y in zip(t, f(t), strict=True)],
        "sampled": True,
    }


def _handle(args: argparse.Namespace) -> int:
    from lpdp.export import region_dict
    from lpdp.fdp import bracket
    from lpdp.region import PrivacyRegion
    from lpdp.tradeoff import gaussian, laplace

    if args.gaussian is not None:
        f, mech = gaussian(_number(args.gaussian, "--gaussian")), {"gaussian": float(args.gaussian)}
    else:
        f, mech = laplace(_number(args.laplace, "--laplace")), {"laplace": float(args.laplace)}
    k = _number(args.k, "-k")
    n = _number(args.constraints, "--constraints")
    step = None if args.step is None else _number(args.step, "--step")
    at = list(args.at or [])
    delta_min = None if args.delta_min is None else _number(args.delta_min, "--delta-min")
    b = bracket(f, k, n, step=step, delta_min=delta_min, layout=args.layout)
    payload: dict[str, Any] = {**mech, "k": b.k, "constraints": int(n), "step": b.below.step,
                               "layout": args.layout, "delta_min": delta_min}
    for key, side, region in (("from_below", b.below, b.from_below), ("from_above", b.above, b.from_above)):
        payload[key] = {**region_dict(region, at), "approximation": [list(c) for c in side.constraints]}
    top = float(max(b.from_below.losses.max(), 1.0))
    payload["exact"] = None if b.exact is None else _exact_dict(b.exact, at, top)
    payload["epsilon_for"] = [[d, b.from_above.epsilon(d), b.from_below.epsilon(d)]
                              for d in args.for_delta or []]
    payload["gap"] = {"max_delta_gap": b.max_gap(), "area_between": b.area_between()}
    regions = {"from below (valid guarantee)": b.from_below, "from above (attack bound)": b.from_above}
    if b.exact is not None:
        regions[f"exact {b.exact.name}"] = PrivacyRegion.from_vertices(payload["exact"]["vertices"])
    title = f"{b.k}-fold {f.name}, {int(n)} constraints" + (
        "" if b.below.step is None else f", lattice step {b.below.step:g}")
    lines = [title,
             "from below: " + ", ".join(f"({format_upper(e)}, {format_upper(d)})"
                                        for e, d in b.below.constraints),
             "from above: " + ", ".join(f"({format_lower(e)}, {format_lower(d)})"
                                        for e, d in b.above.constraints)]
    for e in at:
        exact = "" if b.exact is None else f"  exact {format_upper(float(b.exact.delta(e)))}"
        lines.append(f"delta({e:g}): from above {format_lower(float(b.from_above.delta(e)))} <= truth <= "
                     f"from below {format_upper(float(b.from_below.delta(e)))}{exact}")
    for d in args.for_delta or []:
        lines.append(f"eps at delta={d:g}: from above {format_lower(b.from_above.epsilon(d))} <= truth <= "
                     f"from below {format_upper(b.from_below.epsilon(d))}")
    lines.append(f"max delta gap {payload['gap']['max_delta_gap']:.6g}, area between "
                 f"{payload['gap']['area_between']:.6g}")
    lines.append(region_summary(b.from_below, title="composition of the approximation from below:"))
    return emit(args, Result(summary="\n".join(lines), payload=payload, regions=regions,
                             plot=regions_plot(regions)))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fdp", help="bracket the composition of a Gaussian or Laplace mechanism by n DP constraints",
        description="Approximate the mechanism's trade-off function from below and above by n (eps, delta) "
                    "constraints (Propositions 1-2 for n = 2) and compose both exactly: the from-below "
                    "composition is a valid privacy guarantee, the from-above one an attack bound.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--gaussian", metavar="MU", help="Gaussian mechanism, G_MU-DP (mu > 0)")
    which.add_argument("--laplace", metavar="B", help="Laplace mechanism of scale B, sensitivity 1")
    p.add_argument("-k", required=True, metavar="K", help="number of mechanisms composed")
    p.add_argument("--constraints", default="2", metavar="N",
                   help="constraints per approximation (default 2)")
    p.add_argument("--step", metavar="DELTA_EPS",
                   help="lattice step of the eps_j (default: none for N <= 2, 0.01 otherwise)")
    p.add_argument("--delta-min", metavar="D",
                   help="fix a from-below tangent where delta_f = D (needed for eps at a small delta)")
    p.add_argument("--layout", choices=("area", "tail"), default="area",
                   help="area: Propositions 1-2 (default); tail: eps_j evenly up to --delta-min")
    p.add_argument("--for-delta", type=float, nargs="+", metavar="D",
                   help="report the eps bracket at these deltas")
    p.add_argument("--at", type=float, nargs="+", metavar="EPS", help="report delta at these epsilons")
    add_output_options(p)
    p.set_defaults(func=_handle)
