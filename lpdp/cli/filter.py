"""``lpdp filter``: parameters, audits and simulations of privacy filters, for any mechanism.

Handlers parse, call :mod:`lpdp.filters` and print; nothing is computed here.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from lpdp.cli._common import Result, add_output_options, emit
from lpdp.cli.flags import MECHANISM_FLAGS, add_mechanism_flags, canonical, parse_flag, warn
from lpdp.display import format_upper
from lpdp.errors import ParameterError
from lpdp.filters.registry import ROUNDS
from lpdp.mechanisms import step_to_dict

#: The realisation-level filter's old CLI name, kept as an alias.
ALIASES = {"paper": "realisation"}

MECHANISM_OPTIONS = (*MECHANISM_FLAGS, "--mechanism")

#: Old spellings of the shared mechanism flags, kept working (deprecated).
FLAG_ALIASES = {"--gaussian": ("--gaussian-sigma", "--sigma")}


def _count(text: str) -> int:
    """An integer option that also accepts scientific notation (``1e6``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value.is_integer()):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    return int(value)


def _mechanism_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the mechanism of every round (give one; several with --rounds)")
    add_mechanism_flags(g, note="xTIMES only with --rounds", aliases=FLAG_ALIASES)
    g.add_argument("--mechanism", metavar="FILE",
                   help="a mechanism file (JSON or TOML): a mechanism's data (e.g. a finite table), or a "
                        "workload (its [[mechanism]] entries; several different ones need --rounds)")
    g.add_argument("--rounds", choices=ROUNDS,
                   help="how a workload of several mechanisms runs: iid (each round one entry, drawn "
                        "with weights proportional to times; the entry drawn is public) or cyclic (the "
                        "entries in file order, each `times` times, repeated)")
    g.add_argument("--model", choices=("declared", "iid"),
                   help="with --rounds cyclic: tune the realisation-level filter's (delta_tilde, theta) "
                        "for the declared cycle itself (default) or for the i.i.d. model fitted to it "
                        "(Taylor, Vippathalla and Coon, Section VI); either way the guarantee holds")


def _inline_entries(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The entries of the mechanism flags. Several bare ``--dp E,D`` (the old spelling of one mechanism
    meeting them all) are read as that one mechanism, with a note."""
    given = list(args.inline or [])
    if len(given) > 1 and args.rounds is None and all(
            canonical(f) == "--dp" and "/" not in v and "x" not in v.lower() for f, v in given):
        joined = "/".join(v for _, v in given)
        warn(f"several --dp: read as one mechanism meeting them all, --dp {joined} (write it so; "
             "several mechanism flags are a workload and need --rounds)")
        given = [("--dp", joined)]
    return [parse_flag(f, v) for f, v in given]


def _parts(args: argparse.Namespace) -> tuple[list[tuple[Any, int]], str] | None:
    """The inline workload: ``(parts, source)``, or ``None`` without mechanism flags."""
    from lpdp import workload

    entries = _inline_entries(args)
    if not entries:
        return None
    if args.mechanism is not None:
        raise ParameterError(f"--mechanism and {args.inline[0][0]}: give one mechanism, not several")
    if args.rounds is None and any("times" in e for e in entries):
        raise ParameterError(f"{args.inline[0][0]}: xTIMES is how often a mechanism runs in a workload of "
                             "several; only with --rounds (the filter runs up to --max-steps rounds)")
    return workload.parse({"mechanism": entries}, source="command line"), "command line"


def _mechanism_given(args: argparse.Namespace) -> bool:
    """Whether a mechanism is given (``--rounds`` only with a workload)."""
    if not args.inline and args.rounds is not None and args.mechanism is None:
        raise ParameterError(f"--rounds {args.rounds}: only for a workload (--mechanism FILE or several "
                             "mechanism flags)")
    return bool(args.inline) or args.mechanism is not None


def _mechanism(args: argparse.Namespace, *, required: bool) -> Any:
    """The one mechanism the options name (``None`` if none and not required)."""
    from lpdp.filters import load_mechanism, workload_mechanism

    if not _mechanism_given(args):
        if required:
            raise ParameterError(f"no mechanism: give one of {', '.join(MECHANISM_OPTIONS)}")
        return None
    inline = _parts(args)
    if inline is not None:
        return workload_mechanism(inline[0], rounds=args.rounds, source=inline[1])
    return load_mechanism(args.mechanism, rounds=args.rounds)


def _sigma(mech: Any) -> dict[str, float]:
    """``{"sigma": σ}`` when the mechanism's table has one (a Gaussian; the JSON output has named it since
    before the ``mechanism`` table), else nothing."""
    sigma = mech.to_dict().get("sigma")
    return {} if sigma is None else {"sigma": sigma}


#: The neighbouring pair of the databases a workload's steps map to (lpdp.filters.workload_steps).
CYCLE_PAIRS = [(1, 0)]


def _cycle(args: argparse.Namespace) -> list[Any] | None:
    """The declared cycle of ``--mechanism FILE --rounds cyclic`` when it has several different
    mechanisms (``None`` otherwise: one mechanism is i.i.d. rounds of it)."""
    _mechanism_given(args)
    if args.model is not None and args.rounds != "cyclic":
        raise ParameterError(f"--model {args.model}: only with --rounds cyclic")
    if args.rounds != "cyclic" or not _mechanism_given(args):
        return None
    from lpdp.filters import load_cycle, workload_cycle

    inline = _parts(args)
    steps = load_cycle(args.mechanism) if inline is None else workload_cycle(inline[0], source=inline[1])
    return steps if len({m for m, _ in steps}) > 1 else None


def _steps_data(steps: list[Any]) -> dict[str, Any]:
    return {"rounds": "cyclic", "steps": [step_to_dict(s) for s in steps]}


def _common(p: argparse.ArgumentParser, *, epsilon_required: bool) -> None:
    p.add_argument("--epsilon", type=float, required=epsilon_required, help="target ε")
    p.add_argument("--delta", type=float, required=True, help="target δ of the filter")
    p.add_argument("--max-steps", type=_count, required=True, metavar="N",
                   help="N, the largest number of releases")
    p.add_argument("--delta-tilde", type=float, metavar="D",
                   help="the realisation-level filter's delta-tilde, given by hand (with --theta; checked "
                        "against delta-tilde + theta (1 - delta-tilde) N <= delta; default: optimal)")
    p.add_argument("--theta", type=float, metavar="T", help="its theta, given by hand (with --delta-tilde)")
    _mechanism_options(p)


def _given(args: argparse.Namespace) -> Any:
    """The (δ̃, θ) of --delta-tilde/--theta as validated FilterParameters, or None."""
    if (args.delta_tilde is None) != (args.theta is None):
        raise ParameterError("--delta-tilde and --theta: give both or neither")
    if args.delta_tilde is None:
        return None
    if args.rounds == "cyclic":
        raise ParameterError("--delta-tilde/--theta: for i.i.d. rounds only (not --rounds cyclic)")
    from lpdp.filters import FilterParameters

    return FilterParameters(args.delta, args.max_steps, args.delta_tilde, args.theta)


def _run_options(p: argparse.ArgumentParser, filter_help: str, trajectories_help: str) -> None:
    """The options of ``audit`` and ``simulate``: the common ones, ``--filter``, Monte Carlo size and seed."""
    from lpdp.filters import filter_kinds

    _common(p, epsilon_required=True)
    names = [k.name for k in filter_kinds()]
    p.add_argument("--filter", choices=names + list(ALIASES), default="realisation",
                   help=f"{filter_help} (default: realisation, the paper's filter; 'paper' is an alias)")
    p.add_argument("--trajectories", type=_count, default=100_000, help=trajectories_help)
    p.add_argument("--seed", type=int, default=0, help="Monte Carlo seed")


def _params(args: argparse.Namespace) -> int:
    from lpdp.filters import default_pairs, optimal_parameters

    steps = _cycle(args)
    if steps is not None:
        return _params_cycle(args, steps)
    mech = _mechanism(args, required=args.epsilon is not None)
    pairs = None if mech is None else default_pairs(mech)
    p = _given(args) or (optimal_parameters(args.delta, args.max_steps) if mech is None else
                         optimal_parameters(args.delta, args.max_steps, mech, inputs=pairs))
    payload: dict[str, Any] = {"delta": p.delta, "max_steps": p.max_steps,
                               "delta_tilde": p.delta_tilde, "theta": p.theta}
    lines = [f"delta_tilde = {p.delta_tilde:.6g}, theta = {p.theta:.6g} "
             f"(delta = {p.delta:g}, N = {p.max_steps})"]
    if mech is not None and args.epsilon is None:
        raise ParameterError("--epsilon: needed with a mechanism (for kappa)")
    if mech is not None:
        ordered = [q for a, b in pairs for q in ((a, b), (b, a))]
        kappa = min(p.kappa(mech, args.epsilon, a, b) for a, b in ordered)
        first = all(p.first_release_ok(mech, args.epsilon, a, b) for a, b in ordered)
        payload.update(epsilon=args.epsilon, mechanism=mech.to_dict(), kappa=kappa,
                       first_release_ok=first)
        payload.update(_sigma(mech))
        lines.append(f"kappa = {kappa:.6g} (smallest over ordered pairs), first release "
                     f"{'allowed' if first else 'refused'} (epsilon = {args.epsilon:g})")
    return emit(args, Result("\n".join(lines), payload))


def _params_cycle(args: argparse.Namespace, steps: list[Any]) -> int:
    from lpdp.filters import cycle_filter
    from lpdp.filters.adaptive import sequence_parameters

    if args.epsilon is None:
        raise ParameterError("--epsilon: needed with a mechanism (for kappa)")
    p = sequence_parameters(args.delta, args.max_steps, steps, CYCLE_PAIRS, model=args.model or "declared")
    rule = cycle_filter("realisation", steps, args.epsilon, args.delta, args.max_steps, CYCLE_PAIRS,
                        parameters=p).sequence_rule(steps)
    kappa = min(min(row) for row in rule.rows())
    payload = {"delta": p.delta, "max_steps": p.max_steps, "delta_tilde": p.delta_tilde,
               "theta": p.theta, "epsilon": args.epsilon, "mechanism": _steps_data(steps),
               "kappa": kappa, "first_release_ok": rule.first_release}
    lines = [f"delta_tilde = {p.delta_tilde:.6g}, theta = {p.theta:.6g} (delta = {p.delta:g}, "
             f"N = {p.max_steps}; for the {args.model or 'declared'} model of the cycle of {len(steps)} "
             "steps)",
             f"kappa = {kappa:.6g} (smallest over the cycle's steps and ordered pairs), first release "
             f"{'allowed' if rule.first_release else 'refused'} (epsilon = {args.epsilon:g})"]
    return emit(args, Result("\n".join(lines), payload))


def _audit(args: argparse.Namespace) -> int:
    from lpdp.filters import audit, build_filter, default_pairs

    name = ALIASES.get(args.filter, args.filter)
    given = _given(args)
    if given is not None and name != "realisation":
        raise ParameterError(f"--delta-tilde/--theta: only for --filter realisation, not {args.filter}")
    steps = _cycle(args)
    if steps is not None:
        from lpdp.filters import cycle_filter, sequence_audit

        filt = cycle_filter(name, steps, args.epsilon, args.delta, args.max_steps, CYCLE_PAIRS,
                            model=args.model or "declared")
        r = sequence_audit(filt, steps, trajectories=args.trajectories, seed=args.seed)
        described: dict[str, Any] = _steps_data(steps)
    else:
        mech = _mechanism(args, required=True)
        if given is None:
            filt = build_filter(name, mech, args.epsilon, args.delta, args.max_steps, default_pairs(mech))
        else:
            from lpdp.filters import RealisationFilter

            filt = RealisationFilter(args.epsilon, args.delta, args.max_steps, given.delta_tilde, given.theta,
                                     default_pairs(mech))
        r = audit(filt, mech, trajectories=args.trajectories, seed=args.seed)
        described = mech.to_dict()
    payload = {"filter": name, "epsilon": args.epsilon, "mechanism": described,
               "max_steps": args.max_steps, **r.to_dict()}
    if steps is None:
        payload.update(_sigma(mech))
    own = "none" if r.guarantee is None else format_upper(r.guarantee, 4)
    summary = (f"{name} filter: P(l^(T) > eps) = {format_upper(r.tail_upper, 4)}, hockey-stick delta = "
               f"{format_upper(r.hockey_stick_upper, 4)}, own bound {own}, claimed delta = {r.bound:g}, "
               f"E[T] = {r.expected_T:.4g} ({r.method})")
    table = [{"pair": f"{p.pair[0]}->{p.pair[1]}", "tail": p.tail,
              "hockey_stick_delta": p.hockey_stick_delta, "expected_T": p.expected_T}
             for p in r.pairs]
    return emit(args, Result(summary, payload, table=table))


def _simulate(args: argparse.Namespace) -> int:
    from lpdp.filters import comparison, default_pairs
    from lpdp.filters.registry import filter_label
    from lpdp.filters.simulate import check_cost
    from lpdp.plot import filter_survival

    name = ALIASES.get(args.filter, args.filter)
    given = _given(args)
    steps = _cycle(args)
    if steps is not None:
        from lpdp.filters import sequence_comparison

        if args.trajectories < 2:
            raise ParameterError(f"--trajectories {args.trajectories}: the curves of a cyclic sequence "
                                 "are Monte Carlo; give at least 2")
        c = sequence_comparison(steps, args.epsilon, args.delta, args.max_steps, pairs=CYCLE_PAIRS,
                                trajectories=args.trajectories, seed=args.seed,
                                model=args.model or "declared")
        described: dict[str, Any] = _steps_data(steps)
    else:
        mech = _mechanism(args, required=True)
        c = comparison(mech, args.epsilon, args.delta, args.max_steps, pairs=default_pairs(mech),
                       trajectories=args.trajectories, seed=args.seed, parameters=given)
        described = mech.to_dict()
    pairs = CYCLE_PAIRS if steps is not None else default_pairs(mech)
    if name not in c.curves:
        raise ParameterError(f"--filter {args.filter}: {c.notes.get(name, 'not available')}")
    curve = c.curves[name]
    # the Monte Carlo check; a cycle's realisation-level curves are Monte Carlo themselves
    mc = c.monte_carlo.get(name) or (curve if curve.method == "monte-carlo" else None)
    payload = {"filter": name, "mechanism": described, "epsilon": args.epsilon,
               "delta": args.delta, "max_steps": args.max_steps,
               "delta_tilde": c.parameters.delta_tilde, "theta": c.parameters.theta,
               "survival": list(curve.survival), "expected_T": curve.expected_T,
               "method": curve.method, "monte_carlo": None if mc is None else mc.to_dict(),
               "baselines": {k: b.rounds for k, b in c.baselines.items()},
               "baseline_notes": {k: b.describe() for k, b in c.baselines.items()
                                  if b.rounds is None or b.at_least},
               "expected_releases": c.expected_releases(), "notes": c.notes,
               "check_cost": check_cost(pairs)}
    if steps is None:
        payload.update(_sigma(mech))
    if mc is curve:
        head = (f" ± {mc.expected_T_stderr:.3f} (Monte Carlo, {mc.trajectories} trajectories, "
                f"seed {mc.seed})")
    else:
        head = f" ({curve.method})" + ("" if mc is None else (
            f"; Monte Carlo {mc.expected_T:.3f} ± {mc.expected_T_stderr:.3f} ({mc.trajectories} "
            f"trajectories, seed {mc.seed})"))
    lines = [f"{name} filter: E[min(T, N)] = {curve.expected_T:.3f}{head}"]
    lines.append(f"expected releases E[min(T, N)], N = {args.max_steps}:")
    lines += [f"  {filter_label(k):<36} {v:.3f}" for k, v in c.expected_releases().items()]
    lines += [f"  {filter_label(k):<36} {note}" for k, note in c.notes.items()]
    lines.append(f"rounds on {'the cycle' if steps is not None else 'i.i.d. rounds'} without the cap N "
                 "(mechanism-level filters, classical):")
    lines += [f"  {filter_label(k):<36} {b.describe()}" for k, b in c.baselines.items()]
    table = [{"t": t, **{k: cv.survival[t - 1] for k, cv in c.curves.items()}}
             for t in range(1, args.max_steps + 1)]
    return emit(args, Result("\n".join(lines), payload, table=table,
                             plot=lambda ax: filter_survival(c, ax)))


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``lpdp filter params|audit|simulate``."""
    p = sub.add_parser("filter", help="realisation-level and mechanism-level privacy filters",
                       description="Parameters, audits and simulations of privacy filters on i.i.d. "
                                   "rounds of one mechanism.")
    fsub = p.add_subparsers(dest="filter_command", required=True, parser_class=type(p))

    q = fsub.add_parser("params", help="optimal (delta_tilde, theta) for i.i.d. rounds",
                        description="The (δ̃, θ) maximising κ for N i.i.d. rounds (Taylor, Vippathalla "
                                    "and Coon, Proposition 1); with a mechanism and --epsilon, also κ.")
    _common(q, epsilon_required=False)
    add_output_options(q, plot=False, export=(".json",))
    q.set_defaults(func=_params)

    a = fsub.add_parser("audit", help="exact P(l^(T) > eps) and hockey-stick delta of a filter",
                        description="Exact audit of a filter on i.i.d. rounds (quadrature for a "
                                    "Gaussian or Laplace pair, dynamic programming for finite outputs, "
                                    "Monte Carlo otherwise).")
    _run_options(a, "the filter to audit", "Monte Carlo trajectories where no exact method exists")
    add_output_options(a, plot=False, export=(".json", ".csv"))
    a.set_defaults(func=_audit)

    s = fsub.add_parser("simulate", help="survival curves P(T >= t) of every filter",
                        description="Survival curves of every registered filter on i.i.d. rounds "
                                    "(the filter paper's Figure 2), with the mechanism-level filters' "
                                    "rounds and the optimal classical composition.")
    _run_options(s, "whose curve goes in 'survival'",
                 "Monte Carlo trajectories of the independent check (0: none)")
    add_output_options(s, export=(".json", ".csv"))
    s.set_defaults(func=_simulate)
