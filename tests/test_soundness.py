"""Soundness suite: every public δ/ε route against the suite's own reference, with no tolerance.

Every route is run on seeded random cases and each value is compared with :mod:`tests._reference`
(60-digit mpmath; finite pairs with integer loss keys, binomial closed forms, ``G_μ``, Laplace by
quadrature), which shares no code with lpdp. A value is *unsafe* when it is on the wrong side of the
truth at all, as a float:

* a guarantee (``upper``, a region's ``delta``, a printed or JSON δ) below the true δ;
* a guarantee ε whose true δ is above the asked δ;
* an attack bound (``lower``) above the true δ, or an attack ε above the true ε(δ);

the only slack is the reference's own error (1e-30 relative, far below one ulp) and, for δ values,
differences below 1e-300 (underflow). The counts (cases, points, unsafe) are printed in the terminal
summary (tests/conftest.py) and must be 0. The fast profile runs by default; the deep profile
(``pytest --deep`` or ``LPDP_DEEP=1``) runs 10x as many other seeds.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import os
import re

import numpy as np
import pytest

from lpdp import Accountant, PrivacyRegion, mix
from lpdp.compose import double_dp, heterogeneous, homogeneous, multi
from lpdp.errors import LpdpError, ParameterError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    pure,
    randomized_response,
    subsampled,
)
from tests import _reference as R
from tests.oracles import count

PROFILES = [pytest.param("fast", id="fast"), pytest.param("deep", id="deep", marks=pytest.mark.deep)]


def _seeds(profile: str, fast: int) -> range:
    """Case seeds: the deep profile runs 10x as many, other than the fast ones."""
    return range(fast) if profile == "fast" else range(10_000, 10_000 + 10 * fast)


# -- recording ---------------------------------------------------------------------------------------
class Case:
    """The points of one seeded case of one route; unsafe ones become reproducer lines."""

    def __init__(self, route: str, call: str) -> None:
        self.route, self.call, self.points, self.bad = route, call, 0, []

    def _add(self, unsafe: bool, what: str, value, ref) -> None:
        self.points += 1
        if unsafe:
            self.bad.append(f"{self.route}: {self.call}{what} = {float(value)!r}, reference "
                            f"{float(ref)!r}")

    def upper(self, what: str, value, ref) -> None:
        self._add(R.unsafe_upper(value, ref), what, value, ref)

    def lower(self, what: str, value, ref) -> None:
        self._add(R.unsafe_lower(value, ref), what, value, ref)

    def deltas(self, what: str, eps, values, profile, *, side: str = "upper") -> None:
        for e, v in zip(eps, np.atleast_1d(values), strict=True):
            ref = profile.delta(e)
            (self.upper if side == "upper" else self.lower)(f"{what}({e!r})", v, ref)

    def eps_upper(self, what: str, target: float, value, profile) -> None:
        bad, d = R.unsafe_epsilon_upper(profile, value, target)
        self.points += 1
        if bad:
            self.bad.append(f"{self.route}: {self.call}{what}({target!r}) = {float(value)!r}, true δ "
                            f"there {d!r} > {target!r}")

    def eps_lower(self, what: str, target: float, value, profile) -> None:
        bad, d = R.unsafe_epsilon_lower(profile, value, target)
        self.points += 1
        if bad:
            kind = "true ε(0)" if target == 0 else "true δ there"
            self.bad.append(f"{self.route}: {self.call}{what}({target!r}) = {float(value)!r} (attack), "
                            f"{kind} {d!r}")


class Run:
    """All cases of one test: counted in the tally, unsafe points asserted at the end."""

    def __init__(self) -> None:
        self.bad: list[str] = []

    @contextlib.contextmanager
    def case(self, route: str, call: str):
        c = Case(route, call)
        try:
            yield c
        except LpdpError as exc:        # a valid input refused: as bad as a wrong answer
            c.points += 1
            c.bad.append(f"{route}: {call} raised {type(exc).__name__}: {exc}")
        count(route, c.points, len(c.bad))
        self.bad += c.bad

    def check(self) -> None:
        log = os.environ.get("LPDP_SOUNDNESS_LOG")      # every unsafe value, for reproducer lists
        if log and self.bad:
            with open(log, "a", encoding="utf-8") as fh:
                fh.writelines(line + "\n" for line in self.bad)
        assert not self.bad, f"{len(self.bad)} unsafe values:\n" + "\n".join(self.bad[:40])


def _built(run: Run, route: str, call: str, build):
    """``build()``, or None when it refuses a valid input (counted as unsafe, with the call, so the other
    cases still run)."""
    try:
        return build()
    except LpdpError as exc:
        with run.case(route, call):
            raise exc
        return None


# -- random parameters -------------------------------------------------------------------------------
TARGETS = (1e-3, 1e-6, 1e-10, 1e-20, 1e-50, 1e-100, 1e-300)


def _targets(rng: np.random.Generator, n: int = 3) -> list[float]:
    """δ targets: a few fixed ones and random ones down to 1e-300."""
    fixed = list(rng.choice(TARGETS, size=min(n, len(TARGETS)), replace=False))
    return [float(x) for x in fixed] + [float(10.0 ** -rng.uniform(1, 300))]


def _eps_points(rng: np.random.Generator, losses, n_random: int = 3) -> list[float]:
    """0, random ε up to 1.05 x the largest loss, two atom losses and the float just below each, the
    largest loss, 1e-6 (relative) and one ulp below it: where rounding of composed losses bites."""
    pos = sorted({float(x) for x in losses if 0 < float(x) < math.inf})
    top = pos[-1] if pos else 1.0
    pts = [0.0, *(float(x) for x in rng.uniform(0.0, 1.05 * top, n_random))]
    if len(pos) > 1:
        for x in rng.choice(pos[:-1], size=min(2, len(pos) - 1), replace=False):
            pts += [float(x), math.nextafter(float(x), 0.0)]
    if pos:
        pts += [top, top * (1 - 1e-6), math.nextafter(top, 0.0)]
    return pts


def _pair_losses(pair: R.Pair) -> list[float]:
    return [float(x) for x in pair._sorted[0]]


def _rr_params(rng: np.random.Generator) -> tuple[int, float]:
    """K from 2 to 10, ε0 up to 50 (a third above 3, a sixth above 20)."""
    k = int(rng.integers(2, 11))
    u = rng.random()
    e = float(rng.uniform(0.01, 3.0) if u < 0.65 else rng.uniform(3.0, 20.0) if u < 0.85
              else rng.uniform(20.0, 50.0))
    return k, e


def _dp_pair(rng: np.random.Generator) -> tuple[float, float]:
    eps = float(rng.uniform(0.01, 3.0))
    delta = 0.0 if rng.random() < 0.3 else float(10.0 ** rng.uniform(-12, -0.5))
    return eps, delta


def _constraints(rng: np.random.Generator, n: int) -> list[tuple[float, float]]:
    """n constraints with ε decreasing and δ increasing (each one can be active)."""
    eps = np.sort(rng.uniform(0.02, 2.5, n))[::-1]
    log_d = np.sort(rng.uniform(-12, -0.5, n))
    out = [(float(e), float(10.0 ** d)) for e, d in zip(eps, log_d, strict=True)]
    if rng.random() < 0.3:
        out[0] = (out[0][0], 0.0)
    return out


def _row(rng: np.random.Generator, m: int, zeros: int = 0) -> list[float]:
    """m masses that are multiples of 2^-52 summing to exactly 1 (so the floats are the distribution),
    spread over 12 orders of magnitude; ``zeros`` of them 0."""
    w = 10.0 ** rng.uniform(-12, 0, m)
    w[rng.choice(m, size=zeros, replace=False)] = 0.0
    n = np.floor(w / w.sum() * 2.0 ** 52)
    n[np.argmax(n)] += 2.0 ** 52 - n.sum()
    out = [float(x) / 2.0 ** 52 for x in n]
    assert R.fractions_sum_to_one(out)
    return out


def _table(rng: np.random.Generator, m: int) -> tuple[list[float], list[float]]:
    """Two rows of m outputs; now and then an output impossible under one of them."""
    zp = int(rng.random() < 0.2)
    zq = int(rng.random() < 0.2)
    while True:
        p, q = _row(rng, m, zp), _row(rng, m, zq)
        if all(a > 0 or b > 0 for a, b in zip(p, q, strict=True)):
            return p, q


def _profile(run: Run, rng: np.random.Generator, region, ref, call: str, points: int = 12) -> None:
    """``region.profile()`` (certified pairs at the edge losses) at its first and last pairs, where the
    tail and the top loss are, and a few random ones: each δ a guarantee at its ε."""
    if region is None:          # the route refused the case (counted there)
        return
    with run.case("PrivacyRegion.profile", call + ".profile()") as c:
        prof = region.profile()
        n = len(prof)
        pick = sorted({*range(min(3, n)), *range(max(n - 3, 0), n),
                       *(int(i) for i in rng.integers(0, n, size=min(points - 6, n)))})
        c.deltas(".profile", [prof[i][0] for i in pick], [prof[i][1] for i in pick], ref)


# -- cached references -------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _binomial(eps0: float, delta0: float, k: int) -> R.Binomial:
    return R.Binomial(eps0, delta0, k)


@functools.lru_cache(maxsize=256)
def _constraints_power(cons: tuple, k: int) -> R.Pair:
    return R.constraints(cons) ** k


# -- lpdp.compose ------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_compose_homogeneous(profile):
    """Kairouz's composition, k up to 10^6 (closed form over the binomial window), δ down to 1e-300."""
    run = Run()
    for seed in _seeds(profile, 250):
        rng = np.random.default_rng([1, seed])
        e0, d0 = _dp_pair(rng)
        if seed % 50 == 7:
            k = int(10 ** rng.uniform(4, 6))
        else:
            k = int(10 ** rng.uniform(0, 3.3))
        ref = _binomial(e0, d0, k)
        # losses (2a - k) ε0 in the window that carries mass, nearest the tail first
        counts = [a for a in ref.counts if 2 * a > k]
        picks = counts[-6:] + (list(rng.choice(counts, size=min(3, len(counts)), replace=False))
                               if counts else [])
        losses = [float((2 * a - k) * R.mpf(e0)) for a in picks]
        eps = _eps_points(rng, losses)
        r = None
        with run.case("compose.homogeneous", f"homogeneous({e0!r}, {d0!r}, {k})") as c:
            r = homogeneous(e0, d0, k)
            c.deltas(".delta", eps, r.delta(eps), ref)
            for t in _targets(rng):
                c.eps_upper(".epsilon", t, r.epsilon(t), ref)
        if seed % 5 == 0:
            _profile(run, rng, r, ref, f"homogeneous({e0!r}, {d0!r}, {k})")
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_compose_heterogeneous(profile):
    run = Run()
    for seed in _seeds(profile, 150):
        rng = np.random.default_rng([2, seed])
        m = int(rng.integers(2, 5))
        eps_levels = [float(x) for x in rng.uniform(0.01, 3.0, m)]
        if rng.random() < 0.3:
            eps_levels = [round(x, 2) or 0.01 for x in eps_levels]
        counts = [int(rng.integers(1, 12 if m == 2 else 7 if m == 3 else 5)) for _ in range(m)]
        levels = {}
        for e, k in zip(eps_levels, counts, strict=True):
            levels[e] = levels.get(e, 0) + k
        ref = R.identity()
        for e, k in levels.items():
            ref = ref * R.rr(2, e) ** k
        eps = _eps_points(rng, _pair_losses(ref))
        r = None
        with run.case("compose.heterogeneous", f"heterogeneous({levels})") as c:
            r = heterogeneous(levels)
            c.deltas(".delta", eps, r.delta(eps), ref)
            for t in _targets(rng):
                c.eps_upper(".epsilon", t, r.epsilon(t), ref)
        if seed % 3 == 0:
            _profile(run, rng, r, ref, f"heterogeneous({levels})")
    run.check()


@pytest.mark.parametrize("method", ["lattice", "remark1", "remark2"])
@pytest.mark.parametrize("profile", PROFILES)
def test_compose_double_dp(profile, method):
    """Theorems 2-3 (the lattice) and the Remark 1 / Remark 2 baselines against the k-fold product of the
    two constraints' dominating pair."""
    run = Run()
    for seed in _seeds(profile, 60):
        rng = np.random.default_rng([3, seed])
        first, second = _constraints(rng, 2)
        k = int(rng.integers(1, 13))
        ref = _constraints_power((first, second), k)
        eps = _eps_points(rng, _pair_losses(ref))
        targets = _targets(rng)
        r = None
        with run.case(f"compose.double_dp[{method}]", f"double_dp({first}, {second}, {k}, "
                      f"method={method!r})") as c:
            r = double_dp(first, second, k, method=method)
            c.deltas(".delta", eps, r.delta(eps), ref)
            for t in targets:
                c.eps_upper(".epsilon", t, r.epsilon(t), ref)
        if seed % 3 == 0:
            _profile(run, rng, r, ref, f"double_dp({first}, {second}, {k}, method={method!r})")
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_compose_total_variation_eta(profile):
    """``total_variation_eta(ε, δ)`` bounds the total variation of an (ε, δ)-DP pair: never below its
    true ``δ(0)``."""
    from lpdp.compose import total_variation_eta

    run = Run()
    for seed in _seeds(profile, 100):
        rng = np.random.default_rng([16, seed])
        e, d = _dp_pair(rng)
        if seed % 5 == 0:
            e = float(10.0 ** rng.uniform(-8, -2))
        with run.case("compose.total_variation_eta", f"total_variation_eta({e!r}, {d!r})") as c:
            c.upper("", total_variation_eta(e, d), R.dp(e, d).delta(0.0))
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_compose_max_k_within(profile):
    """``max_k_within``: the true δ(ε) of the k it returns is within the budget (a k too large is a
    breach)."""
    from lpdp.compose import max_k_within

    run = Run()
    for seed in _seeds(profile, 40):
        rng = np.random.default_rng([17, seed])
        e0, d0 = _dp_pair(rng)
        e0 = e0 / 10
        d0 = d0 / 1e4
        eps = float(rng.uniform(0.5, 6.0))
        target = float(10.0 ** -rng.uniform(2, 12))
        k_max = int(rng.integers(10, 2000))
        call = f"max_k_within(lambda k: homogeneous({e0!r}, {d0!r}, k), {eps!r}, {target!r}, k_max={k_max})"
        with run.case("compose.max_k_within", call) as c:
            k = max_k_within(functools.partial(homogeneous, e0, d0), eps, target, k_max=k_max)
            if k > 0:
                truth = _binomial(e0, d0, k).delta(eps)
                c._add(bool(truth - R.mpf(target) > R.REF_RTOL * R.mpf(target)), f" = {k}: true δ", truth,
                       target)
            else:
                c.points += 1
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_compose_multi(profile):
    run = Run()
    for seed in _seeds(profile, 80):
        rng = np.random.default_rng([4, seed])
        n = int(rng.integers(3, 6))
        cons = _constraints(rng, n)
        k = int(rng.integers(1, 6 if n == 3 else 4))
        step = None
        if seed % 2:
            step = float(rng.choice([0.05, 0.1, 0.25]))
            cons = sorted({(max(1, round(e / step)) * step, d) for e, d in cons}, reverse=True)
            if len({e for e, _ in cons}) < len(cons):
                continue
        ref = _constraints_power(tuple(cons), k)
        eps = _eps_points(rng, _pair_losses(ref))
        route = "compose.multi" if step is None else "compose.multi[step]"
        r = None
        with run.case(route, f"multi({cons}, {k}" + (f", step={step})" if step else ")")) as c:
            r = multi(cons, k) if step is None else multi(cons, k, step=step)
            c.deltas(".delta", eps, r.delta(eps), ref)
            for t in _targets(rng):
                c.eps_upper(".epsilon", t, r.epsilon(t), ref)
        if seed % 3 == 0:
            _profile(run, rng, r, ref, f"multi({cons}, {k}" + (f", step={step})" if step else ")"))
    run.check()


# -- regions: from_pair, from_constraints, intersect, mix -------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_region_from_pair(profile):
    """``PrivacyRegion.from_pair`` of two tables of up to 20 outputs (floats taken as exact)."""
    _regions(profile, 0, 100)


@pytest.mark.parametrize("profile", PROFILES)
def test_region_from_constraints(profile):
    """``from_constraints`` against the constraints' geometry."""
    _regions(profile, 1, 100)


@pytest.mark.parametrize("profile", PROFILES)
def test_region_intersect(profile):
    """``intersect`` of two (ε, δ) regions against the constraints' geometry."""
    _regions(profile, 2, 50)


@pytest.mark.parametrize("profile", PROFILES)
def test_region_mix(profile):
    """``mix`` of constraint regions against ``Σ w_i δ_i`` (the weighted Minkowski sum)."""
    _regions(profile, 3, 50)


def _regions(profile, kind: int, n: int) -> None:
    run = Run()
    for seed in _seeds(profile, n):
        rng = np.random.default_rng([5, kind, seed])
        if kind == 0:
            p, q = _table(rng, int(rng.integers(2, 21)))
            ref, r, call = R.table(p, q), PrivacyRegion.from_pair(p, q), f"PrivacyRegion.from_pair({p}, {q})"
        elif kind == 1:
            cons = _constraints(rng, int(rng.integers(1, 5)))
            ref, r, call = R.constraints(cons), PrivacyRegion.from_constraints(cons), \
                f"PrivacyRegion.from_constraints({cons})"
        elif kind == 2:
            a, b = _dp_pair(rng), _dp_pair(rng)
            ref, r = R.constraints([a, b]), PrivacyRegion.from_dp(*a).intersect(PrivacyRegion.from_dp(*b))
            call = f"PrivacyRegion.from_dp{a}.intersect(PrivacyRegion.from_dp{b})"
        else:
            parts = [_constraints(rng, int(rng.integers(1, 4))) for _ in range(int(rng.integers(2, 4)))]
            w = [float(x) for x in rng.dirichlet(np.ones(len(parts)))]
            w[-1] = 1.0 - math.fsum(w[:-1])
            r = mix([(wi, PrivacyRegion.from_constraints(c)) for wi, c in zip(w, parts, strict=True)])
            pairs = [R.constraints(c) for c in parts]
            ref = _Sum([(R.mpf(wi), pr) for wi, pr in zip(w, pairs, strict=True)])
            call = f"mix({list(zip(w, parts, strict=True))})"
            eps = _eps_points(rng, [x for pr in pairs for x in _pair_losses(pr)])
        if kind != 3:
            eps = _eps_points(rng, _pair_losses(ref))
        route = ("PrivacyRegion.from_pair", "PrivacyRegion.from_constraints", "PrivacyRegion.intersect",
                 "mix")[kind]
        with run.case(route, call) as c:
            c.deltas(".delta", eps, r.delta(eps), ref)
            for t in _targets(rng):
                c.eps_upper(".epsilon", t, r.epsilon(t), ref)
        if seed % 2 == 0:
            _profile(run, rng, r, ref, call)
    run.check()


class _Sum:
    """``Σ w_i δ_i``: the support function of a weighted Minkowski sum (a mixture of regions)."""

    def __init__(self, parts) -> None:
        self.parts = parts

    def delta(self, eps):
        return R.MP.fsum(w * p.delta(eps) for w, p in self.parts)

    def top_loss(self):
        return max(p.top_loss() for _, p in self.parts)


@pytest.mark.parametrize("profile", PROFILES)
def test_lp_queries(profile):
    """``IntersectionLP``: δ never below the truth of the intersection; for a chain of (ε, δ) regions the
    intersection is again a constraint set, so its truth is the constraints' geometry."""
    from lpdp.lp import IntersectionLP

    run = Run()
    for seed in _seeds(profile, 15):
        rng = np.random.default_rng([6, seed])
        cons = _constraints(rng, int(rng.integers(2, 5)))
        lp = IntersectionLP([PrivacyRegion.from_dp(*c) for c in cons])
        ref = R.constraints(cons)
        eps = _eps_points(rng, _pair_losses(ref))
        call = f"IntersectionLP([PrivacyRegion.from_dp(*x) for x in {cons}])"
        with run.case("lp.IntersectionLP", call) as c:
            c.deltas(".delta", eps, lp.delta(eps), ref)
    run.check()


# -- the Accountant ----------------------------------------------------------------------------------
def _finite_part(rng: np.random.Generator, budget: int, kinds=("rr", "pure", "dp", "constraints", "table"),
                 weights=(0.35, 0.15, 0.15, 0.15, 0.2), max_outputs: int = 20,
                 symmetric: bool = False):
    """One finite mechanism: ``(mechanism, reference pair, repr, binomial (ε0, δ0) or None)``."""
    w = np.asarray(weights, float)
    kind = rng.choice(list(kinds), p=w / w.sum())
    if kind == "rr":
        K, e = _rr_params(rng)
        return randomized_response(K, e), R.rr(K, e), f"randomized_response({K}, {e!r})", \
            (e, 0.0) if K == 2 else None
    if kind == "pure":
        e = float(rng.uniform(0.01, 3.0))
        return pure(e), R.rr(2, e), f"pure({e!r})", (e, 0.0)
    if kind == "dp":
        e, d = _dp_pair(rng)
        return DPMechanism([(e, d)]), R.dp(e, d), f"DPMechanism([({e!r}, {d!r})])", (e, d)
    if kind == "constraints":
        cons = _constraints(rng, int(rng.integers(2, 4)))
        return DPMechanism(cons), R.constraints(cons), f"DPMechanism({cons})", None
    m = int(rng.integers(2, max_outputs + 1))
    p, q = _table(rng, m)
    if symmetric:               # a table whose pair is its own mirror (q = p reversed)
        q = p[::-1]
    return FiniteMechanism.from_pair(p, q), R.table(p, q), f"FiniteMechanism.from_pair({p}, {q})", None


def _times(rng: np.random.Generator, size: int, budget: float) -> int:
    """A count whose k-fold product stays below ``budget`` atoms."""
    cap = 1
    while cap < 60 and math.comb(cap + 1 + size - 1, size - 1) <= budget:
        cap += 1
    return int(rng.integers(1, cap + 1))


#: Largest reference product (atoms) and number of unrelated loss levels of a random accountant mix
#: (the library's exact lattice grows with the levels; beyond ~8 it takes seconds).
MIX_ATOMS, MIX_LEVELS = 1500.0, 7


def _accountant_finite(rng: np.random.Generator):
    """A random mix of 1-3 finite mechanisms (RR up to ε0 = 50 and K = 10, pure, (ε, δ) pairs, n
    constraints, tables of up to 20 outputs) with its reference: the product of the pairs, in both
    orders of the neighbours; one mechanism with one loss level composed up to 1000 times against the
    binomial closed form."""
    n = int(rng.choice([1, 1, 2, 2, 3]))
    if n == 1:
        mech, pair, name, binom = _finite_part(rng, int(MIX_ATOMS))
        if binom is not None and rng.random() < 0.6:
            k = int(10 ** rng.uniform(1, 3))
            ref = _binomial(*binom, k)
            return [(mech, k)], ref, f"Accountant().compose({name}, {k}).guarantee()", \
                [float((k - 2 * j) * R.mpf(binom[0])) for j in range(min(k, 4))]
        k = _times(rng, max(1, len(pair.atoms)), MIX_ATOMS) if len(pair.bases) > 1 else \
            int(rng.integers(1, 40))
        fwd = pair ** k
        return [(mech, k)], R.Worst(fwd, fwd.mirror()), f"Accountant().compose({name}, {k}).guarantee()", \
            _pair_losses(fwd)
    parts, fwd, names = [], R.identity(), []
    budget = MIX_ATOMS
    for i in range(n):
        mech, pair, name, _ = _finite_part(rng, int(budget), max_outputs=6, symmetric=True)
        if len(set(fwd.bases) | set(pair.bases)) > MIX_LEVELS:
            continue
        size = max(1, len(pair.atoms))
        k = _times(rng, size, budget ** (1 / (n - i)))
        fwd = fwd * pair ** k
        budget = max(2.0, MIX_ATOMS / max(1, len(fwd.atoms)))
        parts.append((mech, k))
        names.append(f".compose({name}, {k})")
    return parts, R.Worst(fwd, fwd.mirror()), "Accountant()" + "".join(names) + ".guarantee()", \
        _pair_losses(fwd)


def _check_guarantee(c: Case, g, ref, eps, targets) -> None:
    lo, hi = g.delta(eps)
    c.deltas(".delta[upper]", eps, hi, ref)
    c.deltas(".delta[lower]", eps, lo, ref, side="lower")
    for t in targets:
        e_lo, e_hi = g.epsilon(t)
        c.eps_upper(".epsilon[upper]", t, e_hi, ref)
        c.eps_lower(".epsilon[lower]", t, e_lo, ref)


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_finite(profile):
    run = Run()
    for seed in _seeds(profile, 250):
        rng = np.random.default_rng([7, seed])
        parts, ref, call, losses = _accountant_finite(rng)
        acc = Accountant()
        for m, k in parts:
            acc.compose(m, k)
        try:
            g = acc.guarantee()
        except ParameterError as exc:          # a documented size limit (the exact lattice's memory)
            if "needs ~" not in str(exc):
                with run.case("Accountant", call):
                    raise
            continue
        eps = _eps_points(rng, losses)
        targets = [*_targets(rng), 0.0]
        if not g.exact:                 # the certified engine: seconds a case, so fewer points
            eps, targets = eps[:1] + eps[-3:], targets[1:2] + targets[-2:]
        with run.case(f"Accountant[{g.route}]", call) as c:
            _check_guarantee(c, g, ref, eps, targets)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_randomized_response(profile):
    """One K-ary randomized response (K up to 10, ε0 up to 50) composed k times: binary against the
    binomial closed form (k up to 10^5), K > 2 against the mixture of binomials."""
    run = Run()
    for seed in _seeds(profile, 100):
        rng = np.random.default_rng([8, seed])
        K, e0 = _rr_params(rng)
        if K == 2:
            k = int(10 ** rng.uniform(0, 5 if seed % 10 == 3 else 3))
            ref = _binomial(e0, 0.0, k)
        else:
            k = int(rng.integers(1, 30))
            ref = R.RRPower(K, e0, k)
        call = f"Accountant().compose(randomized_response({K}, {e0!r}), {k}).guarantee()"
        g = _built(run, "Accountant[rr]", call,
                   lambda K=K, e0=e0, k=k: Accountant().compose(randomized_response(K, e0), k).guarantee())
        if g is None:
            continue
        top = k * e0
        losses = [float(top - 2 * j * R.mpf(e0)) for j in range(min(k, 4))]
        eps = _eps_points(rng, losses)
        with run.case(f"Accountant[rr, {g.route}]", call) as c:
            _check_guarantee(c, g, ref, eps, [*_targets(rng), 0.0])
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_gaussian(profile):
    """Gaussians only (the closed form ``G_μ``), μ from 1e-8 to 1e4, δ down to 1e-300."""
    run = Run()
    for seed in _seeds(profile, 45):
        rng = np.random.default_rng([9, seed])
        n = int(rng.integers(1, 3))
        sig = [float(10 ** rng.uniform(-3.5, 8)) for _ in range(n)]
        ks = [int(10 ** rng.uniform(0, 4)) for _ in range(n)]
        mu_ref = R.MP.sqrt(R.MP.fsum(k / R.mpf(s) ** 2 for s, k in zip(sig, ks, strict=True)))
        if not 1e-8 <= mu_ref <= 1e4:
            continue
        acc = Accountant()
        for s, k in zip(sig, ks, strict=True):
            acc.compose(GaussianMechanism(s), k)
        call = "Accountant()" + "".join(f".compose(GaussianMechanism({s!r}), {k})"
                                        for s, k in zip(sig, ks, strict=True)) + ".guarantee()"
        g = _built(run, "Accountant[gaussian]", call, acc.guarantee)
        if g is None:
            continue
        ref = R.Mixed(R.identity(), mu=mu_ref)
        mu = float(mu_ref)
        eps = [0.0, *(float(x) for x in rng.uniform(0, mu * mu / 2 + 6 * mu, 3))]
        with run.case(f"Accountant[gaussian, {g.route}]", call) as c:
            _check_guarantee(c, g, ref, eps, _targets(rng, 1))     # ε(δ) costs ~0.1 s a target
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_certified(profile):
    """Gaussian or Laplace (1-2 runs) with finite parts: the certified bracket against
    ``Σ_a P_a g(ε - L_a)`` (both orders of the neighbours)."""
    run = Run()
    for seed in _seeds(profile, 10):
        rng = np.random.default_rng([10, seed])
        mech, pair, name, _ = _finite_part(rng, 60, max_outputs=5)
        k = _times(rng, max(1, len(pair.atoms)), 30)
        fwd = pair ** k
        acc = Accountant().compose(mech, k)
        if seed % 2 == 0:
            s, kg = float(rng.uniform(0.5, 5.0)), int(rng.integers(1, 20))
            acc.compose(GaussianMechanism(s), kg)
            mu_ref = R.MP.sqrt(kg) / R.mpf(s)
            mu = float(mu_ref)
            ref = R.Worst(R.Mixed(fwd, mu=mu_ref), R.Mixed(fwd.mirror(), mu=mu_ref))
            extra, top = f".compose(GaussianMechanism({s!r}), {kg})", mu * mu / 2 + 6 * mu
        else:
            b, kl = float(rng.uniform(0.5, 4.0)), int(1 + (seed % 8 == 1))
            acc.compose(LaplaceMechanism(b), kl)
            a = 1 / R.mpf(b)
            ref = R.Worst(R.Mixed(fwd, lap_a=a, n_lap=kl), R.Mixed(fwd.mirror(), lap_a=a, n_lap=kl))
            extra, top = f".compose(LaplaceMechanism({b!r}), {kl})", float(ref.top_loss())
        losses = [x for x in _pair_losses(fwd) if x > 0]
        eps = [0.0, *(float(x) for x in rng.uniform(0, min(top, 40.0), 2)), *losses[-1:]]
        call = f"Accountant().compose({name}, {k}){extra}.guarantee()"
        with run.case("Accountant[certified]", call) as c:
            g = acc.guarantee()
            _check_guarantee(c, g, ref, eps, [1e-3, float(10 ** -rng.uniform(4, 12)), 0.0])
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_subsampled(profile):
    """``subsampled(randomized_response(K, ε0) or pure(ε0), q)`` composed k times (K up to 10, ε0 up to
    50, q from 1e-4 to 1): Poisson subsampling against the exact multinomial over the removal pair
    ``(qP + (1-q)Q, Q)`` and the addition pair (its mirror), the larger δ; fixed-size batches at one step
    against Balle, Barthe and Gaboardi's tight profile, and for k > 1 bracketing the attained composition
    (the removal/addition pairs composed)."""
    from lpdp.mechanisms.subsampled import subsampled

    class _FixedSizeStep:
        """One fixed-size subsampled step at rate q (Balle, Barthe and Gaboardi 2018, Theorem 10; tight):
        ``δ'(ε') = q δ(ε)`` with ``e^ε = 1 + (e^ε' - 1)/q``, for ``ε' >= 0`` (the only ε the checks ask)."""

        def __init__(self, base: R.Pair, rate: float) -> None:
            self.base, self.q = base, R.mpf(rate)

        def delta(self, eps):
            e = R.mpf(eps)
            assert e >= 0
            return self.q * self.base.delta(R.MP.log1p(R.MP.expm1(e) / self.q))

        def top_loss(self):
            return R.MP.log1p(self.q * R.MP.expm1(self.base.top_loss()))

    run = Run()
    for seed in _seeds(profile, 40):
        rng = np.random.default_rng([22, seed])
        K, e0 = _rr_params(rng)
        q = 1.0 if seed % 10 == 9 else float(10.0 ** rng.uniform(-4, 0))
        fixed = seed % 4 == 1
        k = int(10 ** rng.uniform(0, 2.7 if K == 2 else 1.6))
        if fixed and seed % 8 == 1:
            k = 1
        mech, name = (pure(e0), f"pure({e0!r})") if K == 2 and seed % 3 == 0 else \
            (randomized_response(K, e0), f"randomized_response({K}, {e0!r})")
        step = R.subsampled_rr(K, e0, q)
        fwd = R.power_by_counts(step, k)
        attained = R.Worst(fwd, fwd.mirror())
        scheme = "fixed_size" if fixed else "poisson"
        eps = [x for x in _eps_points(rng, _pair_losses(fwd)) if x >= 0]
        targets = [*_targets(rng), 0.0]
        call = f"Accountant().compose(subsampled({name}, {q!r}, {scheme!r}), {k}).guarantee()"
        with run.case(f"Accountant[subsampled {scheme}]", call) as c:
            g = Accountant().compose(subsampled(mech, q, scheme), k).guarantee()
            if not fixed or k == 1:
                ref = attained if not fixed else _FixedSizeStep(R.rr(K, e0), q)
                _check_guarantee(c, g, ref, eps, targets)
            else:                        # the truth lies between the attained composition and the upper
                lo, hi = g.delta(eps)
                c.deltas(".delta[upper]", eps, hi, attained)
                c.deltas(".delta[lower]", eps, lo, attained, side="lower")
                for t in targets[:-1]:
                    c.eps_upper(".epsilon[upper]", t, g.epsilon(t)[1], attained)
                    c.eps_lower(".epsilon[lower]", t, g.epsilon(t)[0], attained)
        if k == 1 and not fixed:
            with run.case("SubsampledMechanism.region", f"subsampled({name}, {q!r}).region()") as c:
                c.deltas(".delta", eps, subsampled(mech, q).region().delta(eps), fwd)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_dpsgd_one_step(profile):
    """``lpdp.dpsgd(σ, q, 1)``: one Poisson-subsampled Gaussian step (the certified engine) against the
    closed form of the removal and addition pairs (:class:`tests._reference.SubsampledGaussian`), the
    larger δ; σ from 0.5 to 10, q from 1e-3 to 1."""
    import lpdp

    run = Run()
    for seed in _seeds(profile, 6):
        rng = np.random.default_rng([23, seed])
        sigma = float(10.0 ** rng.uniform(-0.3, 1.0))
        q = 1.0 if seed % 6 == 5 else float(10.0 ** rng.uniform(-3, 0))
        ref = R.Worst(R.SubsampledGaussian(sigma, q), R.SubsampledGaussian(sigma, q, addition=True))
        call = f"lpdp.dpsgd({sigma!r}, {q!r}, 1).guarantee()"
        with run.case("dpsgd", call) as c:
            g = lpdp.dpsgd(sigma, q, 1).guarantee()
            targets = [1e-3, float(10.0 ** -rng.uniform(4, 12))]
            eps = [0.0, *(float(x) for x in rng.uniform(0, float(g.epsilon(targets[1])[1]), 2))]
            _check_guarantee(c, g, ref, eps, targets)
    run.check()


# -- f-DP bracket, the certified engine, interop -----------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_fdp_bracket(profile):
    """``R_k(f⁺) ⊆ R(G_μ^{⊗k}) ⊆ R_k(f⁻)``: ``from_below`` never below ``G_{μ√k}``, ``from_above`` never
    above it."""
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    run = Run()
    for seed in _seeds(profile, 15):
        rng = np.random.default_rng([11, seed])
        mu = float(rng.uniform(0.1, 3.0))
        k = int(rng.integers(1, 8))
        n = int(rng.integers(1, 3))
        b = bracket(gaussian(mu), k, n)
        ref = R.Mixed(R.identity(), mu=R.mpf(mu) * R.MP.sqrt(k))
        eps = _eps_points(rng, list(b.from_below.losses), n_random=2)[:8]
        with run.case("fdp.bracket", f"bracket(gaussian({mu!r}), {k}, {n})") as c:
            c.deltas(".from_below.delta", eps, b.from_below.delta(eps), ref)
            c.deltas(".from_above.lower.delta", eps, b.from_above.lower.delta(eps), ref, side="lower")
            for t in (1e-3, 1e-6):
                c.eps_upper(".from_below.epsilon", t, b.from_below.epsilon(t), ref)
                c.eps_lower(".from_above.lower.epsilon", t, b.from_above.lower.epsilon(t), ref)
    run.check()


def _loss_law_part(rng: np.random.Generator, seed: int):
    """A loss law with its reference contribution: ('pair', Pair) or ('gauss', μ²) or ('lap', a)."""
    u = seed % 3
    if u == 0:
        s, k = float(rng.uniform(0.5, 4.0)), int(rng.integers(1, 12))
        return (GaussianMechanism(s).loss_law(), k), ("gauss", k / R.mpf(s) ** 2), \
            f"(GaussianMechanism({s!r}).loss_law(), {k})"
    if u == 1:
        b = float(rng.uniform(0.5, 4.0))
        return (LaplaceMechanism(b).loss_law(), 1), ("lap", 1 / R.mpf(b)), \
            f"(LaplaceMechanism({b!r}).loss_law(), 1)"
    return None


def _check_engine_bracket(c, br, eps, targets, ref) -> None:
    """Both sides of a certified-engine bracket against the reference: δ at ``eps``, ε at ``targets``."""
    lo, hi = br.delta(eps)
    c.deltas(".delta[upper]", eps, hi, ref)
    c.deltas(".delta[lower]", eps, lo, ref, side="lower")
    for t in targets:
        e_lo, e_hi = br.epsilon(t)
        c.eps_upper(".epsilon[upper]", t, float(np.ravel(e_hi)[0]), ref)
        c.eps_lower(".epsilon[lower]", t, float(np.ravel(e_lo)[0]), ref)


@pytest.mark.parametrize("profile", PROFILES)
def test_pld_compose(profile):
    """``lpdp.pld.compose`` of loss laws (Gaussian or Laplace with randomized response or a table):
    lower <= truth <= upper, ε on both sides."""
    from lpdp.pld import compose

    run = Run()
    for seed in _seeds(profile, 8):
        rng = np.random.default_rng([12, seed])
        cont = _loss_law_part(rng, seed)
        if rng.random() < 0.6:
            K, e = int(rng.integers(2, 5)), float(rng.uniform(0.05, 2.0))
            mech, pair, name = randomized_response(K, e), R.rr(K, e), f"randomized_response({K}, {e!r})"
        else:
            p, q = _table(rng, int(rng.integers(2, 6)))
            mech, pair, name = FiniteMechanism.from_pair(p, q), R.table(p, q), \
                f"FiniteMechanism.from_pair({p}, {q})"
        k = _times(rng, len(pair.atoms), 40)
        parts = [(mech.loss_law(), k)]
        call = f"compose([({name}.loss_law(), {k})"
        fwd = pair ** k
        if cont is None:
            ref = fwd
        else:
            law, (kind, v), text = cont
            parts.append(law)
            call += ", " + text
            ref = R.Mixed(fwd, mu=R.MP.sqrt(v)) if kind == "gauss" else R.Mixed(fwd, lap_a=v, n_lap=1)
        call += "])"
        br = compose(parts)
        losses = [x for x in _pair_losses(fwd) if x > 0]
        eps = [0.0, *(float(x) for x in rng.uniform(0, 6.0, 2)), *losses[-2:]]
        with run.case("pld.compose", call) as c:
            _check_engine_bracket(c, br, eps, (1e-3, float(10 ** -rng.uniform(4, 10))), ref)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_interop_to_pld(profile):
    """``interop.to_pld``: dp_accounting's δ(ε) of the exported PLD is never below the truth, and its
    ε(δ) holds."""
    from lpdp.interop import to_pld

    run = Run()
    for seed in _seeds(profile, 10):
        rng = np.random.default_rng([13, seed])
        kind = seed % 3
        if kind == 0:
            e0, d0 = _dp_pair(rng)
            k = int(rng.integers(1, 40))
            obj, ref = homogeneous(e0, d0, k), _binomial(e0, d0, k)
            call = f"to_pld(homogeneous({e0!r}, {d0!r}, {k}))"
            losses = [float((k - 2 * j) * R.mpf(e0)) for j in range(min(k, 3))]
        elif kind == 1:
            p, q = _table(rng, int(rng.integers(2, 10)))
            obj, ref = PrivacyRegion.from_pair(p, q), R.table(p, q)
            call, losses = f"to_pld(PrivacyRegion.from_pair({p}, {q}))", _pair_losses(ref)
        else:
            s, k = float(rng.uniform(0.5, 5.0)), int(rng.integers(1, 30))
            obj = Accountant().compose(GaussianMechanism(s), k).guarantee()
            ref = R.Mixed(R.identity(), mu=R.MP.sqrt(k) / R.mpf(s))
            call, losses = f"to_pld(Accountant().compose(GaussianMechanism({s!r}), {k}).guarantee())", [3.0]
        pld = to_pld(obj)
        eps = [e for e in _eps_points(rng, losses, n_random=2) if e < 50][:7]
        with run.case("interop.to_pld", call) as c:
            c.deltas(".get_delta_for_epsilon", eps, [pld.get_delta_for_epsilon(e) for e in eps], ref)
            for t in (1e-3, 1e-6):
                c.eps_upper(".get_epsilon_for_delta", t, pld.get_epsilon_for_delta(t), ref)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_pld_compose_closed_forms(profile):
    """``lpdp.pld.compose`` of continuous laws alone, against closed forms: k Gaussian laws (``G_μ√k``,
    δ down to 1e-12) and one or two Laplace laws; lower <= truth <= upper, ε on both sides."""
    from lpdp.pld import compose

    run = Run()
    for seed in _seeds(profile, 4):
        rng = np.random.default_rng([24, seed])
        if seed % 2 == 0:
            s, k = float(rng.uniform(0.5, 4.0)), int(rng.integers(1, 12))
            parts = [(GaussianMechanism(s).loss_law(), k)]
            ref = R.Mixed(R.identity(), mu=R.MP.sqrt(k) / R.mpf(s))
            call = f"compose([(GaussianMechanism({s!r}).loss_law(), {k})])"
            top = k / (2 * s * s) + 6 * k**0.5 / s
        else:
            b, k = float(rng.uniform(0.3, 4.0)), int(rng.integers(1, 3))
            parts = [(LaplaceMechanism(b).loss_law(), k)]
            ref = R.Mixed(R.identity(), lap_a=1 / R.mpf(b), n_lap=k)
            call, top = f"compose([(LaplaceMechanism({b!r}).loss_law(), {k})])", k / b
        eps = [0.0, *(float(x) for x in rng.uniform(0, top, 3))]
        with run.case("pld.compose[closed form]", call) as c:
            _check_engine_bracket(c, compose(parts), eps, (1e-3, float(10 ** -rng.uniform(4, 12))), ref)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_interop_from_dp_event(profile):
    """``interop.from_dp_event`` of dp_accounting events against the events' own definitions: randomized
    response by its noise probability, discrete Laplace (k-fold products of its pair), Gaussians
    (``G_μ``), one or two Laplace runs and a Poisson-sampled Gaussian step (closed forms)."""
    from dp_accounting import dp_event as E

    from lpdp.interop import from_dp_event

    run = Run()
    for seed in _seeds(profile, 20):
        rng = np.random.default_rng([25, seed])
        kind = seed % 5
        if kind == 0:
            p, K, k = float(10.0 ** rng.uniform(-6, -0.05)), int(rng.integers(2, 11)), int(rng.integers(1, 8))
            pair = R.power_by_counts(R.rr_by_noise(p, K), k)
            ev = E.SelfComposedDpEvent(E.RandomizedResponseDpEvent(p, K), k)
            ref = R.Worst(pair, pair.mirror())
            call = f"SelfComposedDpEvent(RandomizedResponseDpEvent({p!r}, {K}), {k})"
            losses = _pair_losses(pair)
        elif kind == 1:
            a, d, k = float(rng.uniform(0.05, 2.0)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
            pair = R.discrete_laplace(a, d) ** k
            ev = E.SelfComposedDpEvent(E.DiscreteLaplaceDpEvent(a, d), k)
            ref = R.Worst(pair, pair.mirror())
            call, losses = f"SelfComposedDpEvent(DiscreteLaplaceDpEvent({a!r}, {d}), {k})", _pair_losses(pair)
        elif kind == 2:
            sig = [float(rng.uniform(0.5, 5.0)) for _ in range(int(rng.integers(1, 3)))]
            ev = E.ComposedDpEvent([E.GaussianDpEvent(s) for s in sig])
            mu = R.MP.sqrt(R.MP.fsum(1 / R.mpf(s) ** 2 for s in sig))
            ref, call = R.Mixed(R.identity(), mu=mu), f"ComposedDpEvent([GaussianDpEvent(s) for s in {sig}])"
            losses = [float(mu * mu / 2 + 3 * mu)]
        elif kind == 3:
            b, k = float(rng.uniform(0.3, 3.0)), int(rng.integers(1, 3))
            ev = E.SelfComposedDpEvent(E.LaplaceDpEvent(b), k)
            ref, call = R.Mixed(R.identity(), lap_a=1 / R.mpf(b), n_lap=k), \
                f"SelfComposedDpEvent(LaplaceDpEvent({b!r}), {k})"
            losses = [k / b]
        else:
            q, s = float(10.0 ** rng.uniform(-3, 0)), float(10.0 ** rng.uniform(-0.3, 1.0))
            ev = E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s))
            ref = R.Worst(R.SubsampledGaussian(s, q), R.SubsampledGaussian(s, q, addition=True))
            call, losses = f"PoissonSampledDpEvent({q!r}, GaussianDpEvent({s!r}))", [float(q / s)]
        eps = [x for x in _eps_points(rng, losses, n_random=2) if x >= 0][:6]
        with run.case("interop.from_dp_event", f"from_dp_event({call}).guarantee()") as c:
            g = from_dp_event(ev).guarantee()
            _check_guarantee(c, g, ref, eps, [1e-3, float(10.0 ** -rng.uniform(4, 12))] if not g.exact
                             else [*_targets(rng), 0.0])
    run.check()


# -- the CLI: JSON and the printed summaries ---------------------------------------------------------
def _cli(words: list[str]) -> str:
    from lpdp.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(words)
    assert code == 0, f"lpdp {' '.join(words)} exited {code}"
    return out.getvalue()


_NUM = r"([-+0-9.eEinfa]+)"


def _printed_pairs(text: str, label: str) -> list[tuple[float, float | None]]:
    """``(upper, lower)`` of each ``label=X: ...`` line of ``lpdp account``'s summary (lower None when the
    line shows one number: an exact result, printed as a guarantee)."""
    out = []
    for line in text.splitlines():
        if not line.startswith(label):
            continue
        rest = line.split(":", 1)[1]
        m = re.search(r"at most " + _NUM + r" \(guarantee\); an attack reaches " + _NUM, rest)
        if m:
            out.append((float(m.group(1)), float(m.group(2))))
        else:
            v = float(rest.strip())
            out.append((v, None))        # an exact result: one number, a guarantee (rounded up)
    return out


def _account_case(rng: np.random.Generator, seed: int):
    """An inline ``lpdp account`` workload with its reference."""
    words, pair = [], R.identity()
    for _ in range(int(rng.integers(1, 3))):
        u = rng.random()
        if u < 0.4:
            K, e = _rr_params(rng)
            e = float(f"{e:.6g}")
            k = int(rng.integers(1, 6))
            words += ["--rr", f"{K},{e!r}x{k}"]
            pair = pair * R.rr(K, e) ** k
        elif u < 0.7:
            e, d = _dp_pair(rng)
            k = int(rng.integers(1, 8))
            words += ["--dp", f"{e!r},{d!r}x{k}"]
            pair = pair * R.dp(e, d) ** k
        else:
            e = float(rng.uniform(0.01, 3.0))
            k = int(rng.integers(1, 6))
            words += ["--pure", f"{e!r}x{k}"]
            pair = pair * R.rr(2, e) ** k
    ref: object = pair
    if seed % 10 == 0:
        s, k = float(f"{rng.uniform(0.5, 5.0):.4g}"), int(rng.integers(1, 10))
        words += ["--gaussian", f"{s!r}x{k}"]
        mu = R.MP.sqrt(k) / R.mpf(s)
        ref = R.Worst(R.Mixed(pair, mu=mu), R.Mixed(pair.mirror(), mu=mu))
    else:
        ref = R.Worst(pair, pair.mirror())
    return words, ref, _pair_losses(pair)


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_account(profile):
    """``lpdp account`` (in process): every δ and ε in the JSON and in the printed summary, both sides."""
    _cli_cases(profile, "account")


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_compose_printed(profile):
    """``lpdp compose --dp`` (in process): δ and ε in the printed summary, and its tight profile as
    printed (each line a guarantee at the printed ε)."""
    _cli_cases(profile, "compose", ("printed",))


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_compose_json(profile):
    """``lpdp compose --dp ... --json``: δ, the tight profile and ε."""
    _cli_cases(profile, "compose", ("json",))


def _cli_cases(profile, command, outputs=("json", "printed")):
    run = Run()
    for seed in _seeds(profile, 30):
        if (seed % 2 == 0) != (command == "account"):
            continue
        rng = np.random.default_rng([14, seed])
        if seed % 2 == 0:
            words, ref, losses = _account_case(rng, seed)
            words = ["account", *words]
        else:
            e0, d0 = _dp_pair(rng)
            k = int(10 ** rng.uniform(0, 2.5))
            words = ["compose", "--dp", f"{e0!r},{d0!r}", "-k", str(k)]
            ref = _binomial(e0, d0, k)
            losses = [float((k - 2 * j) * R.mpf(e0)) for j in range(min(k, 3))]
        at = [e for e in _eps_points(rng, losses, n_random=1) if e > 0][:5]
        targets = [1e-3, float(f"{10 ** -rng.uniform(4, 100):.3g}")]
        words += ["--at", *map(repr, at), "--for-delta", *map(repr, targets)]
        call = "lpdp " + " ".join(words)
        if "json" in outputs:
            js = json.loads(_cli([*words, "--json"]))
            with run.case(f"cli {words[0]} --json", call + " --json") as c:
                if words[0] == "account":
                    for item in js["delta_at"]:
                        truth = ref.delta(item["epsilon"])
                        c.upper(f" delta_at[{item['epsilon']!r}].upper", item["upper"], truth)
                        c.lower(f" delta_at[{item['epsilon']!r}].lower", item["lower"], truth)
                    for item in js["epsilon_for"]:
                        c.eps_upper(" epsilon_for.upper", item["delta"], item["upper"], ref)
                        c.eps_lower(" epsilon_for.lower", item["delta"], item["lower"], ref)
                else:
                    for e, d in js["delta_at"]:
                        c.upper(f" delta_at[{e!r}]", d, ref.delta(e))
                    for e, d in js["profile"]:
                        c.upper(f" profile[{e!r}]", d, ref.delta(e))
                    for d, e in js["epsilon_for"]:
                        c.eps_upper(" epsilon_for", d, e, ref)
        if "printed" in outputs:
            text = _cli(words)
            with run.case(f"cli {words[0]} (printed)", call) as c:
                if words[0] == "account":
                    for e, (hi, lo) in zip(at, _printed_pairs(text, "delta at eps="), strict=True):
                        c.upper(f" 'delta at eps={e:g}' guarantee", hi, ref.delta(e))
                        if lo is not None:
                            c.lower(f" 'delta at eps={e:g}' attack", lo, ref.delta(e))
                    for t, (hi, lo) in zip(targets, _printed_pairs(text, "eps for delta="), strict=True):
                        c.eps_upper(" 'eps for delta' guarantee", t, hi, ref)
                        if lo is not None:
                            c.eps_lower(" 'eps for delta' attack", t, lo, ref)
                else:
                    shown = re.findall(r"^delta\(([^)]*)\) = " + _NUM + "$", text, re.M)
                    for e, (label, v) in zip(at, shown, strict=True):
                        assert label == f"{e:g}", (label, e)
                        c.upper(f" 'delta({e:g})' [--at {e!r}]", float(v), ref.delta(e))
                    got = re.findall(r"^epsilon for delta=([^:]*): " + _NUM + "$", text, re.M)
                    for t, (_, v) in zip(targets, got, strict=True):
                        c.eps_upper(" 'epsilon for delta'", t, float(v), ref)
                    for e, d in _PROFILE_LINE.findall(text):
                        c.upper(f" 'eps = {e}  delta = {d}'", float(d), ref.delta(float(e)))
    run.check()


_PROFILE_LINE = re.compile(r"^  eps = " + _NUM + r" +delta = " + _NUM + "$", re.M)
_DELTA_LINE = re.compile(r"^delta\(([^)]*)\) = " + _NUM + "$", re.M)


def _check_region_summary(c: Case, text: str, ref, at: list[float], what: str = "") -> None:
    """A printed region summary as a person reads it: each ``eps = E  delta = D`` line of the tight
    profile a valid guarantee at the printed E (δ(E) <= D), each ``delta(e) = D`` a δ at the asked e."""
    for e, d in _PROFILE_LINE.findall(text):
        c.upper(f"{what} 'eps = {e}  delta = {d}'", float(d), ref.delta(float(e)))
    shown = _DELTA_LINE.findall(text)
    assert len(shown) == len(at), (shown, at)
    for e, (label, v) in zip(at, shown, strict=True):
        assert label == f"{e:g}", (label, e)
        c.upper(f"{what} 'delta({label}) = {v}' [--at {e!r}]", float(v), ref.delta(e))


def _check_region_json(c: Case, js: dict, ref, what: str = "") -> None:
    for e, d in js["delta_at"]:
        c.upper(f"{what} delta_at[{e!r}]", d, ref.delta(e))
    for e, d in js["profile"]:
        c.upper(f"{what} profile[{e!r}]", d, ref.delta(e))


def _region_cli_case(rng: np.random.Generator, command: str):
    """Words of an ``lpdp region`` (constraints) or ``lpdp mix`` (weighted (ε, δ) regions) call, its
    reference and its ``--at`` points."""
    if command == "region":
        cons = _constraints(rng, int(rng.integers(1, 5)))
        ref = R.constraints(cons)
        words = ["region", *(w for e, d in cons for w in ("--dp", f"{e!r},{d!r}"))]
        losses = _pair_losses(ref)
    else:
        parts = [_dp_pair(rng) for _ in range(int(rng.integers(2, 4)))]
        w = [float(f"{x:.3g}") for x in rng.dirichlet(np.ones(len(parts)))]
        w[-1] = float(f"{1.0 - math.fsum(w[:-1]):.3g}")
        if abs(math.fsum(w) - 1.0) > 1e-12 or min(w) <= 0:
            return None
        ref = _Sum([(R.mpf(wi), R.dp(*p)) for wi, p in zip(w, parts, strict=True)])
        words = ["mix", *(x for wi, (e, d) in zip(w, parts, strict=True)
                          for x in ("--weight", repr(wi), "--dp", f"{e!r},{d!r}"))]
        losses = [e for e, _ in parts]
    at = [e for e in _eps_points(rng, losses, n_random=1) if e > 0][:4]
    return [*words, "--at", *map(repr, at)], ref, at


def _region_cli(profile: str, command: str, output: str) -> None:
    run = Run()
    for seed in _seeds(profile, 25):
        case = _region_cli_case(np.random.default_rng([18, seed]), command)
        if case is None:
            continue
        words, ref, at = case
        call = "lpdp " + " ".join(words)
        if output == "json":
            js = json.loads(_cli([*words, "--json"]))
            with run.case(f"cli {command} --json", call + " --json") as c:
                _check_region_json(c, js, ref)
        else:
            text = _cli(words)
            with run.case(f"cli {command} (printed)", call) as c:
                _check_region_summary(c, text, ref, at)
    run.check()


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_region_printed(profile):
    """``lpdp region --dp ...`` (in process): the printed profile and δ, as a person reads them."""
    _region_cli(profile, "region", "printed")


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_region_json(profile):
    """``lpdp region --dp ... --json``: the profile and δ."""
    _region_cli(profile, "region", "json")


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_mix_printed(profile):
    """``lpdp mix --weight W --dp E,D ...`` against ``Σ w_i δ_i``: the printed summary."""
    _region_cli(profile, "mix", "printed")


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_mix_json(profile):
    """``lpdp mix ... --json`` against ``Σ w_i δ_i``."""
    _region_cli(profile, "mix", "json")


_BRACKET_LINE = re.compile(r"^delta\(([^)]*)\): " + _NUM + " <= truth <= " + _NUM + "$", re.M)
_EPS_BRACKET_LINE = re.compile(r"^eps at delta=([^:]*): " + _NUM + " <= truth <= " + _NUM + "$", re.M)


@pytest.mark.parametrize("profile", PROFILES)
def test_cli_fdp(profile):
    """``lpdp fdp``: the Gaussian (exact, ``G_μ√k``) and Laplace (certified, k <= 2) brackets and the
    paper's two-constraint bracket of a Gaussian (``--constraints 2``: from below a guarantee, from above
    an attack), JSON and printed, both sides; the two constraints of each approximation of one run too."""
    run = Run()
    for seed in _seeds(profile, 9):
        rng = np.random.default_rng([20, seed])
        kind = seed % 3
        if kind == 2:
            s, k = float(f"{rng.uniform(0.3, 3.0):.4g}"), int(rng.integers(1, 3))
            words = ["fdp", "--laplace", repr(s), "-k", str(k)]
            ref = R.Mixed(R.identity(), lap_a=1 / R.mpf(s), n_lap=k)
            top = k / s
        else:
            s, k = float(f"{rng.uniform(0.3, 5.0):.4g}"), int(10 ** rng.uniform(0, 2))
            words = ["fdp", "--gaussian", repr(s), "-k", str(k)]
            if kind == 1:
                words += ["--constraints", "2"]
            mu = R.MP.sqrt(k) / R.mpf(s)
            ref = R.Mixed(R.identity(), mu=mu)
            top = float(mu * mu / 2 + 4 * mu)
        at = [float(f"{x:.4g}") for x in rng.uniform(0.01, top, 2)]
        targets = [1e-3, float(f"{10 ** -rng.uniform(4, 12):.3g}")]
        words += ["--at", *map(repr, at), "--for-delta", *map(repr, targets)]
        call = "lpdp " + " ".join(words)
        js, text = json.loads(_cli([*words, "--json"])), _cli(words)
        with run.case("cli fdp --json", call + " --json") as c:
            if kind == 1:
                _check_region_json(c, js["from_below"], ref, " from_below")
                for e, d in js["from_above"]["delta_at"]:
                    c.lower(f" from_above.delta_at[{e!r}]", d, ref.delta(e))
                for t, lo, hi in js["epsilon_for"]:
                    c.eps_upper(" epsilon_for[from_below]", t, float(hi), ref)
                    c.eps_lower(" epsilon_for[from_above]", t, float(lo), ref)
                one = R.Mixed(R.identity(), mu=1 / R.mpf(s))         # the approximations of one run
                for e, d in js["from_below"]["approximation"]:
                    c.upper(f" from_below.approximation[{e!r}]", d, one.delta(e))
                for e, d in js["from_above"]["approximation"]:
                    c.lower(f" from_above.approximation[{e!r}]", d, one.delta(e))
            else:
                for item in js["delta_at"]:
                    truth = ref.delta(item["epsilon"])
                    c.upper(f" delta_at[{item['epsilon']!r}].upper", item["upper"], truth)
                    c.lower(f" delta_at[{item['epsilon']!r}].lower", item["lower"], truth)
                for item in js["epsilon_for"]:
                    c.eps_upper(" epsilon_for.upper", item["delta"], item["upper"], ref)
                    c.eps_lower(" epsilon_for.lower", item["delta"], item["lower"], ref)
        with run.case("cli fdp (printed)", call) as c:
            if kind == 1:
                lines = re.findall(r"^delta\(([^)]*)\): from above " + _NUM + " <= truth <= from below "
                                   + _NUM, text, re.M)
                eps_lines = re.findall(r"^eps at delta=([^:]*): from above " + _NUM
                                       + " <= truth <= from below " + _NUM, text, re.M)
            else:
                lines, eps_lines = _BRACKET_LINE.findall(text), _EPS_BRACKET_LINE.findall(text)
            assert len(lines) == len(at) and len(eps_lines) == len(targets), text
            for e, (_, lo, hi) in zip(at, lines, strict=True):
                c.upper(f" 'delta({e:g})' guarantee", float(hi), ref.delta(e))
                c.lower(f" 'delta({e:g})' attack", float(lo), ref.delta(e))
            for t, (_, lo, hi) in zip(targets, eps_lines, strict=True):
                c.eps_upper(" 'eps at delta' guarantee", t, float(hi), ref)
                c.eps_lower(" 'eps at delta' attack", t, float(lo), ref)
            if kind == 1:
                below = text[text.index("composition of the approximation from below"):]
                for e, d in _PROFILE_LINE.findall(below):
                    c.upper(f" from below 'eps = {e}  delta = {d}'", float(d), ref.delta(float(e)))
    run.check()


def test_cli_subprocesses():
    """Two summaries through the installed entry point (``python -m lpdp``), as a person runs them: the
    other CLI cases call ``main()`` in process."""
    import subprocess
    import sys

    run = Run()
    cons = [(1.2, 1e-9), (0.4, 1e-4)]
    ref = R.constraints(cons)
    words = ["region", "--dp", "1.2,1e-9", "--dp", "0.4,1e-4", "--at", "0.3", "1.1"]
    out = subprocess.run([sys.executable, "-m", "lpdp", *words], capture_output=True, text=True, check=True)
    with run.case("cli region (printed, subprocess)", "lpdp " + " ".join(words)) as c:
        _check_region_summary(c, out.stdout, ref, [0.3, 1.1])
    pair = R.rr(4, 2.5) ** 3 * R.dp(0.7, 1e-8) ** 2
    ref2 = R.Worst(pair, pair.mirror())
    words = ["account", "--rr", "4,2.5x3", "--dp", "0.7,1e-08x2", "--at", "1.5", "7.0", "--for-delta", "1e-6",
             "--json"]
    out = subprocess.run([sys.executable, "-m", "lpdp", *words], capture_output=True, text=True, check=True)
    js = json.loads(out.stdout)
    with run.case("cli account --json (subprocess)", "lpdp " + " ".join(words)) as c:
        for item in js["delta_at"]:
            c.upper(f" delta_at[{item['epsilon']!r}].upper", item["upper"], ref2.delta(item["epsilon"]))
            c.lower(f" delta_at[{item['epsilon']!r}].lower", item["lower"], ref2.delta(item["epsilon"]))
        for item in js["epsilon_for"]:
            c.eps_upper(" epsilon_for.upper", item["delta"], item["upper"], ref2)
            c.eps_lower(" epsilon_for.lower", item["delta"], item["lower"], ref2)
    run.check()


# -- the reproducers of the audit that found the holes (each must hold) --------------------------------
def _guarantee(*parts):
    acc = Accountant()
    for m, k in parts:
        acc.compose(m, k)
    return acc.guarantee()


REPRODUCERS = [
    pytest.param(lambda c: c.eps_upper(".epsilon[upper]", 1e-10,
                                       _guarantee((randomized_response(2, 20.0), 1)).epsilon(1e-10)[1],
                                       R.rr(2, 20.0)),
                 id="rr-eps0-20"),
    pytest.param(lambda c: c.upper(".delta[upper](757)", _guarantee((randomized_response(2, 36.14), 21))
                                   .delta(757.0)[1], R.Binomial(36.14, 0.0, 21).delta(757.0)),
                 id="rr-eps0-36.14x21"),
    pytest.param(lambda c: c.eps_upper(".epsilon", 1e-300, PrivacyRegion.from_pair([0.75, 0.25], [0.25, 0.75])
                                       .epsilon(1e-300), R.table([0.75, 0.25], [0.25, 0.75])),
                 id="from-pair-3-1"),
    pytest.param(lambda c: c.eps_upper(".epsilon[upper]", 1e-20,
                                       _guarantee((randomized_response(2, 0.314), 33)).epsilon(1e-20)[1],
                                       R.Binomial(0.314, 0.0, 33)),
                 id="rr-0.314x33"),
    pytest.param(lambda c: c.upper(".delta[upper]", _guarantee((GaussianMechanism(1e6), 1))
                                   .delta(5.000000499999999e-06)[1],
                                   R.gaussian_delta(R.mpf(1) / R.mpf(1e6), 5.000000499999999e-06)),
                 id="gaussian-1e6-delta"),
    pytest.param(lambda c: c.eps_upper(".epsilon[upper]", 1e-300, _guarantee((GaussianMechanism(1e6), 1))
                                       .epsilon(1e-300)[1], R.Mixed(R.identity(), mu=R.mpf(1) / R.mpf(1e6))),
                 id="gaussian-1e6-eps"),
    pytest.param(lambda c: c.eps_upper(".epsilon[upper]", 1e-100,
                                       _guarantee((GaussianMechanism(1e4), 10 ** 4)).epsilon(1e-100)[1],
                                       R.Mixed(R.identity(), mu=R.MP.sqrt(10 ** 4) / R.mpf(1e4))),
                 id="gaussian-1e4x1e4-eps"),
    pytest.param(lambda c: c.eps_lower(".epsilon[lower]", 0.0, _guarantee((LaplaceMechanism(1.0), 3))
                                       .epsilon(0.0)[0], _TopLoss(3)),
                 id="laplace-x3-eps0-lower"),
    pytest.param(lambda c: c.eps_upper(".epsilon", 1e-300, multi(
        [(0.2, 0.00039226115418590203), (0.30000000000000004, 0.0), (0.9, 0.0)], 12, step=0.05)
        .epsilon(1e-300), R.constraints([(0.2, 0.00039226115418590203), (0.30000000000000004, 0.0),
                                         (0.9, 0.0)]) ** 12),
                 id="multi-off-lattice"),
    pytest.param(lambda c: c.upper("compose --dp 2.3899178623088484,1e-100 -k 1: delta(4.0245)",
                                   homogeneous(2.3899178623088484, 1e-100, 1).delta(4.0245),
                                   R.dp(2.3899178623088484, 1e-100).delta(4.0245)),
                 id="dp-1e-100"),
    # misses of the deep profile (its seeds found them; each fixed at its root, docs/reliability.md)
    pytest.param(lambda c: c.deltas(".delta", [0.0, 1.0, 5e5], homogeneous(
        2.4583548905596753, 0.020786244170936358, 201273).delta([0.0, 1.0, 5e5]),
        _binomial(2.4583548905596753, 0.020786244170936358, 201273)),
                 id="deep-kairouz-all-atoms-below-the-inf-mass"),
    pytest.param(lambda c: _check_guarantee(c, _guarantee((randomized_response(2, 48.54139790848281), 343)),
                                            _binomial(48.54139790848281, 0.0, 343), [0.0, 1.0, 16649.0],
                                            [1e-6, 1e-300, 0.0]),
                 id="deep-rr-48.54x343-refused"),
    pytest.param(lambda c: _check_guarantee(c, _guarantee((randomized_response(2, 37.38071342619229), 809)),
                                            _binomial(37.38071342619229, 0.0, 809), [0.0, 30240.0],
                                            [1e-6, 0.0]),
                 id="deep-rr-37.38x809-refused"),
    pytest.param(lambda c: _check_guarantee(
        c, _guarantee((FiniteMechanism.from_pair([1.0, 0.0], _ERASED), 38)),
        _worst(R.table([1.0, 0.0], _ERASED) ** 38), [0.0, 507.0], [1e-6, 0.0]), id="deep-table-x38-refused"),
    pytest.param(lambda c: _check_guarantee(
        c, _guarantee((subsampled(pure(44.45792132576601), 1.0, "poisson"), 155)),
        _worst(R.power_by_counts(R.subsampled_rr(2, 44.45792132576601, 1.0), 155)), [0.0, 6890.0], [1e-6]),
        id="deep-subsampled-pure-q1-refused"),
    pytest.param(lambda c: _check_guarantee(
        c, _guarantee((subsampled(pure(44.499418681610706), 0.01416875897485734, "poisson"), 202)),
        _worst(R.power_by_counts(R.subsampled_rr(2, 44.499418681610706, 0.01416875897485734), 202)),
        [0.0, 500.0], [1e-6]), id="deep-subsampled-pure-refused"),
    pytest.param(lambda c: c.lower(".from_above.lower.delta(0)",
                                   _bracket(1.0415848264510061).from_above.lower.delta(0.0),
                                   R.Mixed(R.identity(), mu=R.mpf(1.0415848264510061)).delta(0.0)),
                 id="deep-fdp-attack-eps0"),
    pytest.param(lambda c: c.upper(".get_delta_for_epsilon(18.459663822357573)", _to_pld(
        homogeneous(0.5081859080445776, 4.5422594255885414e-07, 36))
        .get_delta_for_epsilon(18.459663822357573),
        _binomial(0.5081859080445776, 4.5422594255885414e-07, 36).delta(18.459663822357573)),
                 id="deep-to-pld-inf-mass"),
    pytest.param(lambda c: _audit_case(c, 2.0994144023016528, 0.0025418800777587238, 5,
                                       0.00026962510491629793, 0.000454573559012026),
                 id="deep-audit-binary-erasure"),
]


_ERASED = [1.57663449806833e-06, 0.9999984233655019]


def _worst(fwd):
    return R.Worst(fwd, fwd.mirror())


def _bracket(mu: float):
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    return bracket(gaussian(mu), 1, 1)


def _to_pld(region):
    from lpdp.interop import to_pld

    return to_pld(region)


def _audit_case(c, eps, delta, steps, delta_tilde, theta) -> None:
    from lpdp.filters import RealisationFilter, audit, binary_erasure

    mech = binary_erasure(delta_tilde)
    filt = RealisationFilter(eps, delta, steps, delta_tilde, theta, pairs=[(0, 1)])
    for pa in audit(filt, mech, method="exact").pairs:
        tail, hockey = _brute_force_audit(filt, mech, pa.pair[0], pa.pair[1], eps)
        c.upper(f" pair {pa.pair} hockey_stick_delta", pa.hockey_stick_delta, hockey)
        c.upper(f" pair {pa.pair} tail", pa.tail, tail)


class _TopLoss:
    """Only the largest loss (ε at δ = 0) of k Laplace(1) runs: k."""

    def __init__(self, k: int) -> None:
        self.k = k

    def top_loss(self):
        return R.mpf(self.k)


@pytest.mark.parametrize("check", REPRODUCERS)
def test_reproducers(check):
    run = Run()
    with run.case("reproducers", "") as c:
        check(c)
    run.check()


# -- filters' exact audits ---------------------------------------------------------------------------
def _brute_force_audit(filt, mech, x, other, epsilon):
    """Tail and hockey-stick δ of the stopped transcript under ``P_x``, by running the filter itself
    (ask/record) on every output sequence; losses and masses in 60 digits from the mechanism's table."""
    import copy

    mp = R.MP
    tail, hockey = R.ZERO, R.ZERO
    outs = mech.outputs
    px = {y: R.mpf(float(p)) for y, p in zip(outs, mech.probabilities(x), strict=True)}
    pq = {y: R.mpf(float(p)) for y, p in zip(outs, mech.probabilities(other), strict=True)}
    stack = [(copy.deepcopy(filt), R.ONE, R.ZERO)]
    while stack:
        f, mass, loss = stack.pop()
        if f.remaining_steps == 0 or not f.ask(mech):
            if loss > epsilon * (1 + 1e-10) + 1e-10:     # ties continue (realisation.LOSS_TIE_TOL)
                tail += mass
            hockey += mass * max(R.ZERO, -mp.expm1(R.mpf(epsilon) - loss))
            continue
        for y in outs:
            if px[y] <= 0:
                continue
            g = copy.deepcopy(f)
            g.record(y)
            stack.append((g, mass * px[y], loss + (mp.log(px[y] / pq[y]) if pq[y] > 0 else mp.inf)))
    return tail, hockey


@pytest.mark.parametrize("profile", PROFILES)
def test_filter_audits(profile):
    """``filters.audit(..., method="exact")``: the stopped transcript's hockey-stick δ and loss tail
    never below the brute force over every output sequence."""
    from lpdp.filters import (
        RealisationFilter,
        UnionBoundFilter,
        audit,
        binary_erasure,
        optimal_parameters,
    )
    from lpdp.filters import randomized_response as filter_rr

    run = Run()
    for seed in _seeds(profile, 6):
        rng = np.random.default_rng([15, seed])
        n_steps = int(rng.integers(2, 6))
        if rng.random() < 0.7:
            mech = filter_rr(int(rng.integers(2, 4)), float(rng.uniform(0.1, 1.2)))
        else:
            mech = binary_erasure(float(10.0 ** rng.uniform(-4, -1)))
        eps = float(rng.uniform(0.5, 4.0))
        delta = float(10.0 ** rng.uniform(-3, -1))
        if rng.random() < 0.5:
            p = optimal_parameters(delta, n_steps, mech, inputs=[(0, 1)])
            filt = RealisationFilter(eps, delta, n_steps, p.delta_tilde, p.theta, pairs=[(0, 1)])
        else:
            filt = UnionBoundFilter(eps, delta, n_steps, pairs=[(0, 1)])
        call = f"audit({type(filt).__name__}({filt.config()}), {mech.to_dict()})"
        with run.case("filters.audit", call) as c:
            res = audit(filt, mech, method="exact")
            for pa in res.pairs:
                tail, hockey = _brute_force_audit(filt, mech, pa.pair[0], pa.pair[1], eps)
                c.upper(f" pair {pa.pair} hockey_stick_delta", pa.hockey_stick_delta, hockey)
                c.upper(f" pair {pa.pair} tail", pa.tail, tail)
    run.check()


# -- regressions: δ at and just below the largest loss of a composition ------------------------------
# The stored loss fl(k ε) used to round below the exact k ε: δ there fell to 0 (truth 6.5e-29, 4.6e-18,
# 7.1e-19, 5.2e-27 for these cases) and lost ~1e-10 relative just below it.
_TOP_CASES = [
    ("kairouz", lambda: homogeneous(0.047855904778393035, 0.0, 43),
     lambda: R.Binomial(0.047855904778393035, 0.0, 43)),
    ("kairouz-21", lambda: homogeneous(1.5959440043503783, 0.0, 21),
     lambda: R.Binomial(1.5959440043503783, 0.0, 21)),
    ("heterogeneous", lambda: heterogeneous({0.6: 3, 0.3: 1, 0.2: 6}),
     lambda: R.rr(2, 0.6) ** 3 * R.rr(2, 0.3) * R.rr(2, 0.2) ** 6),
    ("double_dp", lambda: double_dp((0.7, 0.0), (0.3, 0.01), 7),
     lambda: R.constraints([(0.7, 0.0), (0.3, 0.01)]) ** 7),
    ("multi", lambda: multi([(0.7, 0.0), (0.3, 0.01), (0.1, 0.1)], 5),
     lambda: R.constraints([(0.7, 0.0), (0.3, 0.01), (0.1, 0.1)]) ** 5),
]


@pytest.mark.parametrize("name, build, reference", [pytest.param(*c, id=c[0]) for c in _TOP_CASES])
def test_delta_near_the_top_loss(name, build, reference):
    """δ at the largest loss L, one ulp below and 1e-6 (relative) below it: never below the truth."""
    r, ref = build(), reference()
    top = float(r.losses.max())
    eps = [top, math.nextafter(top, 0.0), top * (1.0 - 1e-6)]
    run = Run()
    with run.case("top loss", f"{name}") as c:
        c.deltas(".delta", eps, r.delta(eps), ref)
    run.check()


@pytest.mark.parametrize("parts", [
    pytest.param([(1.152223, 4), (1.333044, 4), (0.393907, 2)], id="theorem1"),
    pytest.param([(0.525539, 4), (1.147328, 3), (1.482396, 1)], id="theorem1-b"),
])
def test_accountant_epsilon_near_the_top_loss_regression(parts):
    """``epsilon(1e-6)`` lands just below the largest loss; while composed losses were rounded to nearest,
    δ at the returned ε exceeded 1e-6 by ~1e-11."""
    ref = R.identity()
    for e, k in parts:
        ref = ref * R.rr(2, e) ** k
    run = Run()
    with run.case("top loss", f"Accountant of pure {parts}") as c:
        c.eps_upper(".epsilon[upper]", 1e-6, _guarantee(*[(pure(e), k) for e, k in parts]).epsilon(1e-6)[1],
                    ref)
    run.check()


def test_optimal_parameters_fit_their_own_budget_regression():
    """Finite mechanisms: a candidate θ = P(L > ℓ) with θ N > δ used to be returned with δ̃ = 0, and the
    result failed its own budget check (``δ̃ + θ (1 - δ̃) N <= δ``) with a ParameterError."""
    from lpdp.filters import optimal_parameters
    from lpdp.filters import randomized_response as filter_rr

    for delta in (1e-3, 1e-2):
        p = optimal_parameters(delta, 2, filter_rr(3, 0.17898283542314275), inputs=[(0, 1)])
        assert p.delta_tilde + p.theta * (1 - p.delta_tilde) * p.max_steps <= delta
