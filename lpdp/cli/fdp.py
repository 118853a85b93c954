"""``lpdp fdp``: the k-fold composition of a Gaussian or Laplace mechanism.

By default the accountant answers (:class:`lpdp.Accountant`: exactly ``G_{μ√k}`` for the Gaussian, the
certified lattice engine of :mod:`lpdp.pld` for the Laplace mechanism): ``delta_at`` and ``epsilon_for``
list ``lower`` (an attack bound) and ``upper`` (a valid guarantee), equal when ``exact``.

With ``--constraints N`` it is the paper's construction (Sec. IV, :mod:`lpdp.fdp`): ``from_below`` is
the composition of the approximation from below (its δ is >= the truth: a valid privacy guarantee),
``from_above`` that of the approximation from above (its δ is <= the truth), each in the compose JSON
format; ``exact`` is ``G_{μ√k}`` for the Gaussian (sampled profile and boundary, exact ``delta_at``) and
``null`` for the Laplace mechanism (no closed form).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from lpdp.cli._common import Result, add_output_options, emit, region_summary, regions_plot
from lpdp.cli.flags import add_mechanism_flags, canonical, parse_flag, warn
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
    return {
        "tradeoff": f.name,
        "profile": [[float(e), float(d)] for e, d in zip(eps, f.delta(eps), strict=True)],
        "delta_at": [[e, float(f.delta(e))] for e in at],
        "vertices": f.inscribed_region().vertices.tolist(),
        "sampled": True,
    }


def _handle(args: argparse.Namespace) -> int:
    paper = any(v is not None for v in (args.constraints, args.step, args.delta_min, args.layout))
    return _handle_constraints(args) if paper else _handle_accountant(args)


def _mechanism(args: argparse.Namespace) -> tuple[Any, dict[str, Any], str]:
    """The one mechanism flag (the shared table of :mod:`lpdp.cli.flags`): ``(mechanism, JSON key, name)``.

    ``--gaussian`` is σ as in every command (``mu=M`` for ``G_M``); it was ``μ`` here, so a bare value
    other than 1 (where both read the same) gets a one-line note.
    """
    from lpdp import workload
    from lpdp._validate import check_positive
    from lpdp.tradeoff import check_laplace, check_mu

    given = list(args.inline or [])
    if len(given) != 1:
        raise ParameterError("one of the arguments --gaussian --laplace is required" if not given else
                             f"{given[1][0]}: not allowed with argument {given[0][0]} (give one mechanism)")
    flag, spec = canonical(given[0][0]), given[0][1]
    if flag not in ("--gaussian", "--laplace"):
        raise ParameterError(f"{flag}: lpdp fdp composes a Gaussian or Laplace mechanism")
    entry = parse_flag(flag, spec)
    if "times" in entry:
        raise ParameterError(f"{flag} {spec!r}: the number of mechanisms composed is -k, not xTIMES")
    if flag == "--gaussian":
        if "=" not in spec:
            check_positive(_number(spec.split(",")[0], "--gaussian"), "--gaussian")
            if entry["sigma"] != 1.0:
                warn(f"--gaussian {spec} is sigma = {spec} (as in lpdp account; G_mu with mu = "
                     f"{1 / entry['sigma']:.6g}); write --gaussian mu={spec} for G_{spec}")
        mech, _ = workload.mechanism_from_entry(entry, source=flag)
        mu = mech.gaussian_mu()
        check_mu(mu, "--gaussian")
        return mech, {"gaussian": mu}, f"G_{mu:g}"
    check_laplace(_number(spec.split(",")[0], "--laplace") if "=" not in spec else entry["scale"],
                  entry.get("sensitivity", 1.0), name="--laplace")
    mech, _ = workload.mechanism_from_entry(entry, source=flag)
    b = entry["scale"] / entry.get("sensitivity", 1.0)
    return mech, {"laplace": b}, f"Laplace(b={b:g})"


def _handle_accountant(args: argparse.Namespace) -> int:
    from lpdp._validate import check_int
    from lpdp.accountant import Accountant

    mech, desc, name = _mechanism(args)
    k = check_int(_number(args.k, "-k"), "k", 1)
    at = list(args.at or [])
    for_delta = list(args.for_delta or ([] if at else [1e-5]))
    g = Accountant().compose(mech, k).guarantee()
    lo_d, hi_d = g.delta(at) if at else ([], [])
    lo_e, hi_e = g.epsilon(for_delta) if for_delta else ([], [])
    payload: dict[str, Any] = {
        **desc, "k": k, "route": g.route, "exact": g.exact,
        "delta_at": [{"epsilon": e, "lower": float(lo), "upper": float(hi)}
                     for e, lo, hi in zip(at, lo_d, hi_d, strict=True)],
        "epsilon_for": [{"delta": d, "lower": float(lo), "upper": float(hi)}
                        for d, lo, hi in zip(for_delta, lo_e, hi_e, strict=True)]}
    lines = [f"{k}-fold {name}: {'exact' if g.exact else 'certified bracket'} (route {g.route})"]
    lines += [f"delta({row['epsilon']:g}): {format_lower(row['lower'])} <= truth <= "
              f"{format_upper(row['upper'])}" for row in payload["delta_at"]]
    lines += [f"eps at delta={row['delta']:g}: {format_lower(row['lower'])} <= truth <= "
              f"{format_upper(row['upper'])}" for row in payload["epsilon_for"]]
    return emit(args, Result(summary="\n".join(lines), payload=payload))


def _handle_constraints(args: argparse.Namespace) -> int:
    from lpdp._validate import check_int
    from lpdp.export import region_dict
    from lpdp.fdp import MAX_CONSTRAINTS, bracket
    from lpdp.region import PrivacyRegion

    m, mech, _ = _mechanism(args)
    f = m.tradeoff()
    k = _number(args.k, "-k")
    n = check_int(_number(args.constraints or "2", "--constraints"), "--constraints", 1, MAX_CONSTRAINTS)
    step = None if args.step is None else _number(args.step, "--step")
    at = list(args.at or [])
    delta_min = None if args.delta_min is None else _number(args.delta_min, "--delta-min")
    layout = args.layout or "area"
    b = bracket(f, k, n, step=step, delta_min=delta_min, layout=layout)
    payload: dict[str, Any] = {**mech, "k": b.k, "n": n, "step": b.below.step,
                               "layout": layout, "delta_min": delta_min}
    for key, side, region in (("from_below", b.below, b.from_below), ("from_above", b.above, b.from_above)):
        payload[key] = {**region_dict(region, at, attack=side is b.above),
                        "approximation": [list(c) for c in side.constraints]}
    top = float(b.from_below.losses.max(initial=1.0))   # no edges: the trivial region (δ = 1)
    payload["exact"] = None if b.exact is None else _exact_dict(b.exact, at, top)
    payload["epsilon_for"] = [[d, b.from_above.epsilon_lower(d), b.from_below.epsilon(d)]
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
        attack = format_lower(float(b.from_above.delta_lower(e)))
        lines.append(f"delta({e:g}): from above {attack} <= truth <= "
                     f"from below {format_upper(float(b.from_below.delta(e)))}{exact}")
    for d in args.for_delta or []:
        attack = format_lower(b.from_above.epsilon_lower(d))
        lines.append(f"eps at delta={d:g}: from above {attack} <= truth <= "
                     f"from below {format_upper(b.from_below.epsilon(d))}")
    lines.append(f"max delta gap {payload['gap']['max_delta_gap']:.6g}, area between "
                 f"{payload['gap']['area_between']:.6g}")
    lines.append(region_summary(b.from_below, title="composition of the approximation from below:"))
    return emit(args, Result(summary="\n".join(lines), payload=payload, regions=regions,
                             plot=regions_plot(regions)))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fdp", help="compose a Gaussian or Laplace mechanism k times (exact or certified bracket)",
        description="By default the accountant answers: exactly G_(mu sqrt k) for the Gaussian, a certified "
                    "bracket from the lattice engine for the Laplace mechanism (lower: attack bound, upper: "
                    "valid guarantee). With --constraints N: the paper's construction, the trade-off "
                    "function approximated from below and above by N (eps, delta) constraints "
                    "(Propositions 1-2 for N = 2) and both composed exactly: the from-below composition is "
                    "a valid privacy guarantee, the from-above one an attack bound.")
    add_mechanism_flags(p, flags=("--gaussian", "--laplace"), note="give one; the count is -k")
    p.add_argument("-k", "--times", dest="k", required=True, metavar="K",
                   help="number of mechanisms composed, the count (--times, as in the library's times=)")
    p.add_argument("--constraints", metavar="N",
                   help="use the paper's N-constraint bracket (Propositions 1-2 for N = 2) instead of the "
                        "accountant; --step, --delta-min and --layout imply it with N = 2")
    p.add_argument("--step", metavar="DELTA_EPS",
                   help="N-constraint bracket: lattice step of the eps_j (default: none for N <= 2, 0.01 "
                        "otherwise)")
    p.add_argument("--delta-min", metavar="D",
                   help="N-constraint bracket: fix a from-below tangent where delta_f = D (needed for eps at "
                        "a small delta)")
    p.add_argument("--layout", choices=("area", "tail"),
                   help="N-constraint bracket: area: Propositions 1-2 (default); tail: eps_j evenly up to "
                        "--delta-min")
    p.add_argument("--for-delta", type=float, nargs="+", metavar="D",
                   help="report the eps bracket at these deltas (default 1e-5 when no --at is given)")
    p.add_argument("--at", type=float, nargs="+", metavar="EPS", help="report delta at these epsilons")
    add_output_options(p)
    p.set_defaults(func=_handle)
