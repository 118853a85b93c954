"""``lpdp filter``: parameters, audits and simulations of realisation-level privacy filters.

Handlers call :mod:`lpdp.filters` only; nothing is computed here.
"""

from __future__ import annotations

import argparse
from typing import Any

from lpdp.cli._common import Result, add_output_options, emit
from lpdp.errors import ParameterError


def _common(p: argparse.ArgumentParser, *, sigma_required: bool) -> None:
    p.add_argument("--delta", type=float, required=True, help="target δ of the filter")
    p.add_argument("--max-steps", type=int, required=True, help="N, the largest number of releases")
    p.add_argument("--gaussian-sigma", type=float, required=sigma_required, metavar="S",
                   help="i.i.d. Gaussian rounds with noise σ on a sensitivity-1 count")
    p.add_argument("--epsilon", type=float, required=sigma_required, help="target ε")


def _filter(args: argparse.Namespace, which: str) -> Any:
    from lpdp.filters import RealisationFilter, UnionBoundFilter, optimal_parameters

    if which == "union":
        return UnionBoundFilter(args.epsilon, args.delta, args.max_steps)
    p = optimal_parameters(args.delta, args.max_steps)
    return RealisationFilter(args.epsilon, args.delta, args.max_steps, p.delta_tilde, p.theta)


def _params(args: argparse.Namespace) -> int:
    from lpdp.filters import GaussianMechanism, optimal_parameters

    p = optimal_parameters(args.delta, args.max_steps)
    payload: dict[str, Any] = {"delta": p.delta, "max_steps": p.max_steps,
                               "delta_tilde": p.delta_tilde, "theta": p.theta}
    lines = [f"delta_tilde = {p.delta_tilde:.6g}, theta = {p.theta:.6g} "
             f"(delta = {p.delta:g}, N = {p.max_steps})"]
    if (args.gaussian_sigma is None) != (args.epsilon is None):
        raise ParameterError("--gaussian-sigma and --epsilon: give both (for kappa) or neither")
    if args.gaussian_sigma is not None:
        g = GaussianMechanism(args.gaussian_sigma)
        payload.update(epsilon=args.epsilon, sigma=args.gaussian_sigma,
                       kappa=p.kappa(g, args.epsilon), first_release_ok=p.first_release_ok(
                           g, args.epsilon))
        lines.append(f"kappa = {payload['kappa']:.6g}, first release "
                     f"{'allowed' if payload['first_release_ok'] else 'refused'} "
                     f"(epsilon = {args.epsilon:g}, sigma = {args.gaussian_sigma:g})")
    return emit(args, Result("\n".join(lines), payload))


def _audit(args: argparse.Namespace) -> int:
    from lpdp.filters import GaussianMechanism, audit

    filt = _filter(args, args.filter)
    r = audit(filt, GaussianMechanism(args.gaussian_sigma))
    payload = {"filter": args.filter, "epsilon": args.epsilon, "sigma": args.gaussian_sigma,
               "max_steps": args.max_steps, **r.to_dict()}
    summary = (f"{args.filter} filter: P(l^(T) > eps) = {r.tail:.4g}, hockey-stick delta = "
               f"{r.hockey_stick_delta:.4g}, own bound {r.guarantee:.4g}, claimed delta = "
               f"{r.bound:g}, E[T] = {r.expected_T:.4g} ({r.method})")
    table = [{"pair": f"{p.pair[0]}->{p.pair[1]}", "tail": p.tail,
              "hockey_stick_delta": p.hockey_stick_delta, "expected_T": p.expected_T}
             for p in r.pairs]
    return emit(args, Result(summary, payload, table=table))


def _simulate(args: argparse.Namespace) -> int:
    from lpdp.filters.simulate import gaussian_comparison, plot_comparison

    c = gaussian_comparison(args.gaussian_sigma, args.epsilon, args.delta, args.max_steps,
                            trajectories=args.trajectories, seed=args.seed)
    name = "realisation" if args.filter == "paper" else "union"
    curve, mc = c.curves[name], c.monte_carlo.get(name)
    payload = {"filter": args.filter, "sigma": args.gaussian_sigma, "epsilon": args.epsilon,
               "delta": args.delta, "max_steps": args.max_steps,
               "delta_tilde": c.parameters.delta_tilde, "theta": c.parameters.theta,
               "survival": list(curve.survival), "expected_T": curve.expected_T,
               "method": curve.method, "monte_carlo": None if mc is None else mc.to_dict(),
               "baselines": {k: b.rounds for k, b in c.baselines.items()},
               "expected_releases": c.expected_releases()}
    lines = [f"{args.filter} filter: E[T] = {curve.expected_T:.3f} ({curve.method})"
             + ("" if mc is None else f"; Monte Carlo {mc.expected_T:.3f} ± "
                f"{mc.expected_T_stderr:.3f} ({mc.trajectories} trajectories, seed {mc.seed})")]
    lines += [f"  {k:<13} E[T] = {v:.3f}" for k, v in c.expected_releases().items()]
    table = [{"t": t, **{k: cv.survival[t - 1] for k, cv in c.curves.items()}}
             for t in range(1, args.max_steps + 1)]
    return emit(args, Result("\n".join(lines), payload, table=table,
                             plot=lambda ax: plot_comparison(c, ax)))


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``lpdp filter params|audit|simulate``."""
    p = sub.add_parser("filter", help="realisation-level privacy filters",
                       description="Parameters, audits and simulations of privacy filters.")
    fsub = p.add_subparsers(dest="filter_command", required=True, parser_class=type(p))

    q = fsub.add_parser("params", help="optimal (delta_tilde, theta) for i.i.d. rounds",
                        description="The (δ̃, θ) maximising κ for N i.i.d. rounds (spec filter.md §3).")
    _common(q, sigma_required=False)
    add_output_options(q)
    q.set_defaults(func=_params)

    a = fsub.add_parser("audit", help="exact P(l^(T) > eps) and hockey-stick delta of a filter",
                        description="Exact audit of a filter on i.i.d. Gaussian rounds.")
    _common(a, sigma_required=True)
    a.add_argument("--filter", choices=("paper", "union"), default="paper",
                   help="the paper's filter (default) or lpdp's union-bound filter")
    add_output_options(a)
    a.set_defaults(func=_audit)

    s = fsub.add_parser("simulate", help="survival curves P(T >= t) of every filter",
                        description="Survival curves of the realisation-level, union-bound and "
                                    "mechanism-level filters on i.i.d. Gaussian rounds (Figure 2).")
    _common(s, sigma_required=True)
    s.add_argument("--filter", choices=("paper", "union"), default="paper",
                   help="whose curve goes in 'survival' (default: the paper's filter)")
    s.add_argument("--trajectories", type=int, default=100_000,
                   help="Monte Carlo trajectories of the independent check (0: none)")
    s.add_argument("--seed", type=int, default=0, help="Monte Carlo seed")
    add_output_options(s)
    s.set_defaults(func=_simulate)
