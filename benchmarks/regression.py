"""The benchmarks' workloads on this tree against an older commit, side by side: a ratio table.

``git archive REV`` is unpacked into a temporary folder and every workload runs in the old tree and in
this one, in separate processes (``PYTHONPATH`` points ``import lpdp`` at one tree; the same interpreter
and packages for both), alternately and in alternating order over ``--rounds`` rounds. A process runs its
workload once to warm up (imports, caches of the first call are not timed), then ``--batches`` batches of
at least ``--min-batch`` CPU seconds each, and reports the CPU time (``time.process_time``) per run of its
fastest batch; each side keeps its fastest process over the rounds (on a shared machine the minimum is
the least disturbed measurement). BLAS runs on one thread on both sides. ratio = new / old.

The workloads are those of ``bench_*.py`` that exist on both sides (lpdp's own computations; the peers'
are not lpdp code), each at the sizes of its benchmark or a smaller one where the benchmark's takes
minutes; a workload whose API the old commit lacks is marked ``new only``.

Run: ``python benchmarks/regression.py [--against 2d73c78] [--only REGEX] [--rounds 3] [--markdown]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_IMPORTS = """
import numpy as np
from lpdp import Accountant
from lpdp.compose import double_dp, heterogeneous, homogeneous, multi
from lpdp.mechanisms import DPMechanism, GaussianMechanism, LaplaceMechanism, pure, randomized_response
from lpdp.tradeoff import gaussian
EPS = np.linspace(0.0, 5.0, 10)
FIG2 = ((0.3, 0.0), (0.15, 0.02))
BENCH = ((1.0, 1e-3), (0.5, 0.05))
MULTI3 = [(0.4, 0.0), (0.2, 0.01), (0.1, 0.05)]
def acc(parts):
    a = Accountant()
    for m, k in parts:
        a.compose(m, k)
    return a.guarantee()
def kgrid(k):
    top = min(k, int(6 * k ** 0.5))
    return [float(i * 0.1) for i in np.unique(np.linspace(0, top, 10).astype(int) // 2 * 2 + k % 2)]
def common(n):
    eps = np.round(np.linspace(3.0 / n, 3.0, n), 2)[::-1]
    return [(float(e), float(d)) for e, d in zip(eps, np.geomspace(1e-9, 0.2, n))]
def queries(region):
    region.epsilon(1e-5)
    for d in np.geomspace(1e-12, 1e-2, 100):
        region.epsilon(float(d))
"""

_FILTERS = """
from lpdp.filters import RealisationFilter, audit, comparison, optimal_parameters, survival, build_filter
from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
P48 = optimal_parameters(1e-3, 48)
F48 = RealisationFilter(6.0, 1e-3, 48, P48.delta_tilde, P48.theta)
G2 = GaussianMechanism(2.0)
"""


def _workloads() -> list[tuple[str, str, str, str]]:
    """``(benchmark, name, setup, statement)``; the setup runs once per process, untimed."""
    out: list[tuple[str, str, str, str]] = []

    def add(bench: str, name: str, stmt: str, setup: str = "") -> None:
        out.append((bench, name, _IMPORTS + setup, stmt))

    for k in (100, 1000, 10000):
        add("homogeneous", f"kairouz k={k}: build + 10 delta",
            f"homogeneous(0.1, 1e-8, {k}).delta(kgrid({k}))")
    for c in ("FIG2", "BENCH"):
        for k in (20, 100, 500, 1000):
            add("double_dp", f"double-DP {c.lower()} k={k}: build + 10 delta",
                f"double_dp(*{c}, {k}).delta(np.linspace(0.0, 0.5 * {k} * {c}[0][0], 10))")
    for x in (100, 1000):
        add("double_dp", f"heterogeneous x=y={x}: build + 10 delta",
            f"heterogeneous({{0.3: {x}, 0.1: {x}}}).delta(np.linspace(0.0, 0.2 * {x}, 10))")
    a = "accountant"
    for k in (100, 1000, 10000):
        add(a, f"accountant kairouz k={k}: 10 delta", f"acc([(DPMechanism([(0.1, 1e-8)]), {k})]).delta(EPS)")
    for k in (100, 500, 1000):
        add(a, f"accountant double-DP k={k}: 10 delta", f"acc([(DPMechanism(list(FIG2)), {k})]).delta(EPS)")
    for x in (100, 1000):
        add(a, f"accountant theorem1 x=y={x}: 10 delta",
            f"acc([(pure(0.3), {x}), (pure(0.15), {x})]).delta(EPS)")
    add(a, "accountant multi n=3 k=50: 10 delta", "acc([(DPMechanism(MULTI3), 50)]).delta(EPS)")
    add(a, "multi n=3 k=50 direct: 10 delta", "multi(MULTI3, 50).delta(EPS)")
    add(a, "accountant 100 Gaussians: 10 delta",
        "acc([(GaussianMechanism(float(s)), 1) for s in SIG]).delta(EPS)", "SIG = np.linspace(1, 10, 100)")
    add(a, "gaussian closed form: 10 delta", "gaussian(1.3).delta(EPS)")
    add(a, "accountant Gaussian: epsilon(1e-5)", "acc([(GaussianMechanism(1.0), 1)]).epsilon(1e-5)")
    add(a, "accountant Gaussian x50: epsilon(1e-6)", "acc([(GaussianMechanism(3.0), 50)]).epsilon(1e-6)")
    add(a, "accountant double-DP k=100: epsilon(1e-5)", "G.epsilon(1e-5)",
        "G = acc([(DPMechanism(list(FIG2)), 100)])")
    add(a, "accountant double-DP k=100: build + epsilon(1e-5)",
        "acc([(DPMechanism(list(FIG2)), 100)]).epsilon(1e-5)")
    add(a, "accountant kairouz k=1000: build + epsilon(1e-5)",
        "acc([(DPMechanism([(0.1, 1e-8)]), 1000)]).epsilon(1e-5)")
    for k in (1000, 3000, 10000):
        add("scale", f"double-DP fig2 k={k}: build + 101 epsilon", f"queries(double_dp(*FIG2, {k}))")
    for x in (1000, 3800):
        add("scale", f"heterogeneous x=y={x}: build + 101 epsilon",
            f"queries(heterogeneous({{0.3: {x}, 0.15: {x}}}))")
    for k in (100_000, 1_000_000):
        add("scale", f"kairouz eps=0.01 k={k}: build + 101 epsilon + delta",
            f"r = homogeneous(0.01, 0.0, {k}); queries(r); r.delta(100.0)")
    for n, k in ((2, 100), (8, 100), (8, 300)):
        add("scale", f"multi common step n={n} k={k}: build + 101 epsilon",
            f"queries(multi(common({n}), {k}, step=0.01))")
    fdp = "from lpdp.fdp import bracket\n"
    for k, n in ((10, 8), (10, 16), (100, 8)):
        add("fdp", f"bracket G_1 k={k} n={n} tail", f"bracket(gaussian(1.0), {k}, {n}, step=0.01, "
            f"delta_min=1e-5 / (1000 * {k}), layout='tail')", fdp)
    for n in (2, 4, 8):
        add("fdp", f"bracket G_1 k=10 n={n} area (Figure 3)", f"bracket(gaussian(1.0), 10, {n})", fdp)
    unrelated = "rng = np.random.default_rng(1)\n" + "".join(
        f"e = np.sort(rng.uniform(0.1, 1.0, {m}))[::-1] + rng.uniform(0, 1e-3, {m})\n"
        f"CONS{m} = [(float(a), float(b)) for a, b in zip(e, np.geomspace(1e-6, 0.05, {m}))]\n"
        for m in (1, 2, 3, 4))
    for n, k in ((2, 100), (3, 30), (4, 10)):
        add("fdp", f"multi unrelated n={n} k={k}", f"multi(CONS{n}, {k})", unrelated)
    for n, k in ((4, 100), (16, 100), (32, 30)):
        add("fdp", f"multi common step n={n} k={k}", f"multi(common({n}), {k}, step=0.01)")
    pld = "from lpdp.pld import compose\nD = [1e-5, 1e-9]\n"
    for s, k in ((1.0, 10), (2.0, 100), (4.0, 1000)):
        add("pld", f"engine Gaussian sigma={s:g} k={k}: 2 epsilon",
            f"compose([(GaussianMechanism({s}).loss_law(), {k})]).epsilon(D)", pld)
        add("pld", f"accountant Gaussian sigma={s:g} k={k}: 2 epsilon",
            f"acc([(GaussianMechanism({s}), {k})]).epsilon(D)", pld)
    add("pld", "accountant 100 distinct Gaussians: 2 epsilon",
        "acc([(GaussianMechanism(float(s)), 1) for s in np.linspace(2.0, 6.0, 100)]).epsilon(D)", pld)
    add("pld", "accountant Laplace b=1 k=100: 2 epsilon", "acc([(LaplaceMechanism(1.0), 100)]).epsilon(D)",
        pld)
    add("pld", "accountant 50 G + 20 double-DP + 20 RR: 2 epsilon",
        "acc([(GaussianMechanism(3.0), 50), (DPMechanism(list(FIG2)), 20), "
        "(randomized_response(4, 0.7), 20)]).epsilon(D)", pld)
    add("pld", "accountant double-DP k=1000: 2 epsilon", "acc([(DPMechanism(list(FIG2)), 1000)]).epsilon(D)",
        pld)
    f = "filter"
    add(f, "ask + record, Gaussian, 2 pairs, 10^3 steps",
        "f = RealisationFilter(1e9, 1e-3, 10_000, P.delta_tilde, P.theta, pairs=[(1, 0), (2, 1)])\n"
        "for y in YS:\n    f.ask(G2)\n    f.record(y)",
        _FILTERS + "P = optimal_parameters(1e-3, 10_000)\n"
        "YS = np.random.default_rng(0).normal(1.0, 2.0, 1000).tolist()")
    add(f, "exact audit, Gaussian, N=48", "audit(F48, G2)", _FILTERS)
    add(f, "exact audit, Laplace, N=30", "audit(FL, LAP)", _FILTERS + "LAP = LaplaceMechanism(2.0)\n"
        "FL = build_filter('realisation', LAP, 6.0, 1e-3, 30, [(1.0, 0.0)])")
    add(f, "Monte Carlo survival 10^5, Gaussian, N=48",
        "survival(F48, G2, method='monte-carlo', trajectories=10**5, seed=1)", _FILTERS)
    add(f, "quadrature survival, Gaussian, N=48", "survival(F48, G2)", _FILTERS)
    add(f, "every filter's curve (comparison, exact only)",
        "comparison(GaussianMechanism(2.0), 6.0, 1e-3, 48, trajectories=0)", _FILTERS)
    return out


_CHILD = """
import json, sys, time
tree, setup, stmt = sys.argv[1:4]
min_batch, batches = float(sys.argv[4]), int(sys.argv[5])
g = {}
exec(setup, g)
import lpdp
assert lpdp.__file__.startswith(tree), (lpdp.__file__, tree)
code = compile(stmt, "<workload>", "exec")
t0 = time.process_time()
exec(code, g)
once = time.process_time() - t0
number = max(1, int(min_batch / max(once, 1e-6)))
best = float("inf")
for _ in range(batches):
    t0 = time.process_time()
    for _ in range(number):
        exec(code, g)
    best = min(best, (time.process_time() - t0) / number)
print(json.dumps({"seconds": best, "number": number}))
"""


def _run(tree: Path, setup: str, stmt: str, min_batch: float, batches: int) -> float | str:
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    args = [sys.executable, "-c", _CHILD, str(tree), setup, stmt, str(min_batch), str(batches)]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed: {last[:80]}"
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])


def _fmt(t: float | str | None) -> str:
    if not isinstance(t, float):
        return "-"
    return f"{t * 1e3:.3g}" if t < 1 else f"{t * 1e3:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="2d73c78", help="the older commit (default: 2d73c78)")
    parser.add_argument("--new", default="", help="a commit to measure instead of the working tree")
    parser.add_argument("--only", default="", help="regular expression on 'benchmark: workload'")
    parser.add_argument("--rounds", type=int, default=3, help="processes per side and workload")
    parser.add_argument("--batches", type=int, default=3, help="batches per process")
    parser.add_argument("--min-batch", type=float, default=0.1, help="CPU seconds per batch (at least)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)
    chosen = [w for w in _workloads() if re.search(args.only, f"{w[0]}: {w[1]}")]
    if args.list:
        for bench, name, _, stmt in chosen:
            print(f"{bench}: {name}    [{stmt}]")
        return 0
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.against], check=True,
                         capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.new or "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="lpdp-regression-") as tmp:
        old, new = Path(tmp) / "old", (Path(tmp) / "new" if args.new else ROOT)
        for tree, commit in ((old, rev), (new, head)) if args.new else ((old, rev),):
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "lpdp"],
                                     check=True, capture_output=True).stdout
            tree.mkdir()
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tree, filter="data")
        load = os.getloadavg()[0]
        where = "" if args.new else " (working tree)"
        print(f"old {rev} vs new {head}{where}; CPU ms per run, min over {args.rounds} processes x "
              f"{args.batches} batches; load average {load:.1f}", flush=True)
        if args.markdown:
            print("\n| benchmark | workload | old ms | new ms | new/old |\n|---|---|---:|---:|---:|",
                  flush=True)
        else:
            print(f"{'benchmark':<12}{'workload':<54}{'old ms':>10}{'new ms':>10}{'new/old':>9}", flush=True)
        started = time.monotonic()
        for bench, name, setup, stmt in chosen:
            best: dict[str, float | str | None] = {"old": None, "new": None}
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for side in order:
                    tree = old if side == "old" else new
                    t = _run(tree, setup, stmt, args.min_batch, args.batches)
                    prev = best[side]
                    if isinstance(t, str):
                        best[side] = t if not isinstance(prev, float) else prev
                    elif not isinstance(prev, float) or t < prev:
                        best[side] = t
                if isinstance(best["old"], str) and r == 0:
                    break   # the old tree cannot run it: one try is enough
            o, n = best["old"], best["new"]
            if isinstance(o, float) and isinstance(n, float):
                ratio = f"{n / o:.2f}"
            elif isinstance(n, float):
                ratio = "new only"
            else:
                ratio = str(n)
            if args.markdown:
                print(f"| {bench} | {name} | {_fmt(o)} | {_fmt(n)} | {ratio} |", flush=True)
            else:
                print(f"{bench:<12}{name:<54}{_fmt(o):>10}{_fmt(n):>10}{ratio:>9}", flush=True)
            if not isinstance(o, float) and isinstance(o, str) and not args.markdown:
                print(f"{'':<12}  old: {o}", flush=True)
        print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
