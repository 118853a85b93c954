"""``lpdp compose``: exact composition (Kairouz, Theorem 1, Theorems 2–3) and the budget questions.

* ``--dp EPS,DELTA`` (repeatable) and ``-k K`` (once): k mechanisms that each meet every constraint at once;
  one constraint is Kairouz's composition, two the exact double-DP composition (``--method`` picks the
  route or a baseline, with Remarks 1 and 2 reported alongside), more the n-constraint lattice;
* ``--pure EPSxCOUNT`` (repeatable): heterogeneous composition of pure mechanisms (Theorem 1).

Every region comes from :class:`lpdp.Accountant` (its one router). Different mechanisms composed together
(e.g. ``--dp 0.5,1e-5`` ten times and ``--dp 1,0`` five times) are ``lpdp account``'s job: a second
``-k`` is refused.

``--at``, ``--for-delta`` and ``--max-k-within`` ask for δ at ε, the smallest ε at δ, and the largest k that
fits a budget; all numbers come from :mod:`lpdp.compose`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from lpdp._validate import check_delta, check_int
from lpdp.cli._common import Result, add_output_options, emit, parse_pair, region_summary, regions_plot
from lpdp.cli.flags import warn
from lpdp.display import format_upper
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

#: Baselines reported next to an exact double-DP answer (the paper's Remarks 1 and 2).
_BASELINES = ("remark1", "remark2")


def _parse_int(text: str, option: str, minimum: int = 1) -> int:
    try:
        value: Any = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise ParameterError(f"{option}={text!r}: must be an integer >= {minimum}") from None
    return check_int(value, option, minimum)


def _parse_pure(texts: list[str]) -> dict[float, int]:
    counts: dict[float, int] = {}
    for text in texts:
        parts = text.lower().split("x")
        if len(parts) != 2:
            raise ParameterError(f"--pure {text!r}: expected EPSxCOUNT, e.g. 0.3x10")
        try:
            eps = float(parts[0])
        except ValueError:
            raise ParameterError(f"--pure {text!r}: EPS must be a number") from None
        n = _parse_int(parts[1], f"--pure {text!r} count", 0)
        counts[eps] = counts.get(eps, 0) + n
    return counts


def _constraints(texts: list[str]) -> list[tuple[float, float]]:
    """The constraints of the one mechanism composed: ``--dp EPS,DELTA[/EPS,DELTA...]`` as in every command
    (:mod:`lpdp.cli.flags`); several ``--dp`` (the older spelling) are read as one (:func:`_note_several`)."""
    pairs = []
    for text in (part for t in texts for part in t.split("/")):
        e, d = parse_pair(text, "--dp")
        check_delta(d, f"--dp {text!r} delta", allow_one=False)
        pairs.append((e, d))
    return pairs


def _note_several(texts: list[str]) -> None:
    """The one-line note for several ``--dp`` (given once the command line is known to be valid, so that a
    refused one prints its error alone)."""
    if len(texts) > 1:
        warn(f"several --dp: read as one mechanism meeting them all, --dp {'/'.join(texts)} (write it so; in "
             "lpdp account several --dp are several mechanisms)")


def _composer(pairs: list[tuple[float, float]], method: str, step: float | None = None
              ) -> Callable[[int], PrivacyRegion]:
    """k -> the region of k mechanisms meeting every constraint (:class:`lpdp.Accountant`)."""
    from lpdp.accountant import Accountant
    from lpdp.mechanisms import DPMechanism

    mechanism = DPMechanism(pairs)
    method = method if len(pairs) == 2 else "lattice"      # "kairouz" / "multi" name the route only
    return lambda k: Accountant(method=method, step=step).compose(mechanism, k).guarantee().upper


def _epsilon_for(region: PrivacyRegion, for_delta: list[float]) -> list[list[float]]:
    return [[d, region.epsilon(d)] for d in for_delta]


def _pure(args: argparse.Namespace) -> tuple[PrivacyRegion, str, dict[str, Any], dict, list[str]]:
    """``--pure``: Theorem 1."""
    from lpdp.accountant import Accountant
    from lpdp.mechanisms import pure

    for flag, value in (("--dp", args.dp), ("-k", args.k), ("--method", args.method),
                        ("--max-k-within", args.max_k_within)):
        if value is not None:
            raise ParameterError(f"{flag}: not used with --pure (the counts say how many mechanisms)")
    counts = _parse_pure(args.pure)
    acc = Accountant()
    for e, n in counts.items():
        acc.compose(pure(e), n)
    region = acc.guarantee().upper
    label = " + ".join(f"{n}×{e:g}-DP" for e, n in counts.items())
    payload = {"method": "theorem1", "counts": [[e, n] for e, n in counts.items()]}
    return region, label, payload, {label: region}, []


def _dp(args: argparse.Namespace, at: list[float], for_delta: list[float]
        ) -> tuple[PrivacyRegion, str, dict[str, Any], dict, list[str]]:
    """``--dp`` once (Kairouz) or twice (Theorems 2-3, with the baselines alongside)."""
    from lpdp.compose import max_k_within

    if not args.dp:
        raise ParameterError("--dp: give one or more EPS,DELTA constraints (or --pure EPSxCOUNT)")
    pairs = _constraints(args.dp)
    if len(pairs) != 2 and args.method is not None:
        raise ParameterError(f"--method {args.method}: only used with exactly two --dp constraints")
    method = args.method or "lattice"
    name = {1: "kairouz", 2: method}.get(len(pairs), "multi")
    compared = [name] + (list(_BASELINES) if len(pairs) == 2 and method not in _BASELINES else [])
    payload: dict[str, Any] = {"method": name, "constraints": [list(p) for p in pairs]}
    lines = []
    if args.k is not None and len(args.k) > 1:
        raise ParameterError(f"-k given {len(args.k)} times: compose takes ONE mechanism meeting every --dp "
                             "at once, k times; for different mechanisms use `lpdp account` (e.g. "
                             "--dp 0.5,1e-5x10 --dp 1,0x5)")
    k = None if args.k is None else _parse_int(args.k[0], "-k")
    if args.max_k_within is not None:
        eps, dlt = parse_pair(args.max_k_within, "--max-k-within")
        k_max = _parse_int(args.k_max, "--k-max")
        found = {m: max_k_within(_composer(pairs, m, args.step), eps, dlt, k_max=k_max) for m in compared}
        payload["max_k_within"] = {"epsilon": eps, "delta": dlt, "k_max": k_max, "k": found}
        lines += [f"largest k within (eps={eps:g}, delta={dlt:g}) by {m}: {n}"
                  + (" (or more: raise --k-max)" if n == k_max else "") for m, n in found.items()]
        k = k if k is not None else max(found[name], 1)
    if k is None:
        raise ParameterError("-k: the number of compositions is required (or use --max-k-within)")
    if args.step is not None and len(pairs) < 3:
        raise ParameterError(f"--step {args.step}: only used with three or more --dp constraints")
    _note_several(args.dp)
    region = _composer(pairs, method, args.step)(k)
    payload["k"] = k
    label = f"{k}-fold " + " ∩ ".join(f"R({e:g}, {d:g})" for e, d in pairs) + \
        ("" if len(pairs) == 1 else f" [{method}]")
    regions = {label: region}
    baselines = {b: _composer(pairs, b)(k) for b in compared[1:]}
    if baselines:
        payload["baselines"] = {b: {"delta_at": [[e, float(r.delta(e))] for e in at],
                                    "epsilon_for": _epsilon_for(r, for_delta)} for b, r in baselines.items()}
        regions.update({f"Remark {b[-1]}": r for b, r in baselines.items()})
        lines += [f"{b}: epsilon for delta={d:g} is {format_upper(e)}"
                  for b, v in payload["baselines"].items() for d, e in v["epsilon_for"]]
    return region, label, payload, regions, lines


def _handle(args: argparse.Namespace) -> int:
    from lpdp.export import region_dict

    at, for_delta = args.at or [], args.for_delta or []
    for d in for_delta:
        check_delta(d, "--for-delta")
    region, label, payload, regions, lines = _pure(args) if args.pure else _dp(args, at, for_delta)
    payload.update(region_dict(region, at))
    payload["epsilon_for"] = _epsilon_for(region, for_delta)
    lines = [f"epsilon for delta={d:g}: {format_upper(e)}" for d, e in payload["epsilon_for"]] + lines
    return emit(args, Result(
        summary="\n".join([region_summary(region, at, title=label), *lines]),
        payload=payload,
        regions=regions,
        plot=regions_plot(regions),
    ))


def register(sub: argparse._SubParsersAction) -> None:
    from lpdp.compose import METHODS

    p = sub.add_parser(
        "compose", help="exact composition under one or more (eps, delta) constraints, or pure mechanisms",
        description="Exact k-fold composition of mechanisms satisfying one --dp constraint (Kairouz), "
                    "two at once (Theorems 2-3, with Remarks 1-2 for comparison) or more (the n-constraint "
                    "lattice), or "
                    "heterogeneous composition of pure mechanisms (--pure, Theorem 1).")
    p.add_argument("--dp", action="append", metavar="EPS,DELTA[/EPS,DELTA...]",
                   help="the composed mechanism meets every listed (eps, delta) at once (as --dp in every "
                        "command; several --dp are read as one, with a note)")
    p.add_argument("-k", "--times", dest="k", metavar="K", action="append",
                   help="number of mechanisms composed, the count (--times, as in the library's "
                        "times=; once: every mechanism meets all --dp; to compose different mechanisms "
                        "use `lpdp account`)")
    p.add_argument("--pure", action="append", metavar="EPSxCOUNT",
                   help="COUNT mechanisms that are pure EPS-DP (repeatable)")
    p.add_argument("--method", choices=METHODS,
                   help="for two constraints: lattice (default), the exact region (Theorems 2-3); remark1 or "
                        "remark2, the paper's looser baselines (Remarks 1-2)")
    p.add_argument("--at", type=float, nargs="+", metavar="EPS", help="report delta at these epsilons")
    p.add_argument("--for-delta", type=float, nargs="+", metavar="D",
                   help="report the smallest epsilon at these deltas")
    p.add_argument("--max-k-within", metavar="EPS,DELTA",
                   help="largest k whose composition is (EPS, DELTA)-DP")
    p.add_argument("--k-max", default="2000", metavar="N", help="search limit for --max-k-within")
    p.add_argument("--step", type=float, metavar="DELTA_EPS",
                   help="with 3+ --dp: a common lattice step dividing every eps (fast exact route)")
    add_output_options(p)
    p.set_defaults(func=_handle)
