"""Soundness suite: every public δ/ε route against an independent high-precision reference.

Each route is run on seeded random cases; every value is compared with a reference that shares no code
with lpdp's composition, intersection or LP routines (tests/oracles.py: closed forms and enumerations of
small products in 50-digit mpmath, the geometry of the constraints, and the filters' own public API):

* an *exact* route or a *guarantee* side (``upper``) understates when ``value < ref (1 - rtol)``;
* an *attack* side (``lower``) is unsound when ``value > ref (1 + rtol)``;

with ``rtol = 1e-12`` for exact routes (the numerical contract), 0 for certified bounds, and differences
below 1e-300 ignored. The counts are printed in the terminal summary (tests/conftest.py) and must be 0.
The fast profile runs by default; the deep profile (``pytest --deep`` or ``LPDP_DEEP=1``) runs other seeds,
larger k and more levels (over 500 cases).
"""

from __future__ import annotations

import copy
import functools
import math

import numpy as np
import pytest

from lpdp import PrivacyRegion, mix
from lpdp.compose import double_dp, heterogeneous, homogeneous, multi
from tests.oracles import (
    atoms_delta_mp,
    dp_pair_mp,
    gaussian_delta_mp,
    intersection_delta_mp,
    intersection_tradeoff_mp,
    kairouz_delta_mp,
    laplace_delta_mp,
    pair_power_atoms_mp,
    pair_power_delta_mp,
    product_atoms_mp,
    rr_levels_delta_mp,
    rr_pair_mp,
    tally,
)
from tests.theorems import THEOREMS

EXACT_RTOL = 1e-12
PROFILES = [pytest.param("fast", id="fast"), pytest.param("deep", id="deep", marks=pytest.mark.deep)]


def _seeds(profile: str, fast: int, deep: int) -> range:
    """Case seeds: the deep profile runs other cases than the fast one (and more of them)."""
    return range(fast) if profile == "fast" else range(1000, 1000 + deep)


def _eps_grid(rng: np.random.Generator, region: PrivacyRegion, n_random: int = 3) -> list[float]:
    """0, random points up to the largest loss, two other edge losses, the largest loss and a point
    1e-6 (relative) below it: composed losses are rounded sums such as ``fl(k ε)``, and δ at and near
    them must still not fall below the exact value."""
    pos = np.asarray(region.losses)[np.asarray(region.losses) > 0]
    top = float(pos.max()) if pos.size else 1.0
    grid = [0.0, *(float(x) for x in rng.uniform(0.0, 1.05 * top, n_random))]
    inner = pos[pos < top]
    if inner.size:
        grid += [float(x) for x in rng.choice(inner, size=min(2, inner.size), replace=False)]
    if pos.size:
        grid += [top, top * (1.0 - 1e-6)]
    return grid


def _dp_pair(rng: np.random.Generator) -> tuple[float, float]:
    eps = float(rng.uniform(0.02, 2.0))
    delta = 0.0 if rng.random() < 0.3 else float(10.0 ** rng.uniform(-9, -0.5))
    return eps, delta


def _constraints(rng: np.random.Generator, n: int) -> list[tuple[float, float]]:
    """n constraints with ε decreasing and δ increasing (each one can be active)."""
    eps = np.sort(rng.uniform(0.02, 2.5, n))[::-1]
    log_d = np.sort(rng.uniform(-9, -0.5, n))
    out = [(float(e), float(10.0 ** d)) for e, d in zip(eps, log_d, strict=True)]
    if rng.random() < 0.3:
        out[0] = (out[0][0], 0.0)
    return out


def _check(route: str, values, refs, case: str, failures: list[str], *, side: str = "exact",
           rtol: float = EXACT_RTOL) -> None:
    for i, v, r in tally(route, values, refs, side=side, rtol=rtol):
        failures.append(f"{route} {case} [point {i}]: {v!r} vs reference {r!r}")


def _assert_none(failures: list[str]) -> None:
    assert not failures, f"{len(failures)} unsafe values:\n" + "\n".join(failures[:20])


# -- composition ----------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_kairouz(profile):
    failures: list[str] = []
    for seed in _seeds(profile, 12, 90):
        rng = np.random.default_rng([1, seed])
        e0, d0 = _dp_pair(rng)
        k = int(rng.integers(1, 60 if profile == "fast" else 400))
        r = homogeneous(e0, d0, k)
        eps = _eps_grid(rng, r)
        _check("kairouz", r.delta(eps), kairouz_delta_mp(e0, d0, k, eps),
               f"homogeneous({e0!r}, {d0!r}, {k}) at {eps}", failures)
    _assert_none(failures)


@pytest.mark.deep
@pytest.mark.parametrize("k", [1000, 4096, 20000])
def test_kairouz_large_k(k):
    """Large k and deep tails (δ down to ~1e-250) against the O(k) closed form."""
    failures: list[str] = []
    rng = np.random.default_rng([2, k])
    for e0 in (0.01, 0.1, 0.5):
        r = homogeneous(e0, 1e-9, k)
        eps = [0.0, *np.sort(rng.uniform(0.0, 0.3 * k * e0, 4))]
        _check("kairouz (large k)", r.delta(eps), kairouz_delta_mp(e0, 1e-9, k, eps),
               f"homogeneous({e0}, 1e-9, {k}) at {eps}", failures)
    _assert_none(failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_heterogeneous(profile):
    failures: list[str] = []
    budget = 1500 if profile == "fast" else 12000
    for seed in _seeds(profile, 10, 90):
        rng = np.random.default_rng([3, seed])
        m = int(rng.integers(2, 5))
        eps_levels = np.round(rng.uniform(0.02, 1.5, m), 6)
        counts: list[int] = []
        for _ in range(m):
            room = budget // math.prod(c + 1 for c in counts) if counts else budget
            counts.append(int(rng.integers(1, max(2, min(40, room ** (1 / (m - len(counts)))) ))))
        levels = dict(zip(map(float, eps_levels), counts, strict=True))
        if len(levels) < m:
            continue
        r = heterogeneous(levels)
        eps = _eps_grid(rng, r)
        _check("heterogeneous", r.delta(eps),
               rr_levels_delta_mp([(e, 0.0, k) for e, k in levels.items()], eps),
               f"heterogeneous({levels}) at {eps}", failures)
    _assert_none(failures)


DOUBLE_EXACT = {"lattice": double_dp, **THEOREMS}


@pytest.mark.parametrize("profile", PROFILES)
def test_double_dp_routes(profile):
    failures: list[str] = []
    for seed in _seeds(profile, 6, 60):
        rng = np.random.default_rng([4, seed])
        first, second = _constraints(rng, 2)
        k = int(rng.integers(1, 9 if profile == "fast" else 17))
        atoms, p_inf = dp_pair_mp([first, second])
        grid_region = double_dp(first, second, k)
        eps = _eps_grid(rng, grid_region)
        ref = pair_power_delta_mp(atoms, p_inf, k, eps)
        case = f"double_dp({first}, {second}, {k}) at {eps}"
        for method, compose in DOUBLE_EXACT.items():
            _check(f"double_dp[{method}]", compose(first, second, k).delta(eps), ref,
                   case, failures)
        for method in ("remark1", "remark2"):
            _check(f"double_dp[{method}] (upper)", double_dp(first, second, k, method=method).delta(eps),
                   ref, case, failures, side="upper")
    _assert_none(failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_multi(profile):
    failures: list[str] = []
    for seed in _seeds(profile, 6, 60):
        rng = np.random.default_rng([5, seed])
        n = int(rng.integers(3, 5))
        cons = _constraints(rng, n)
        k = int(rng.integers(1, 5 if profile == "fast" else 8))
        r = multi(cons, k)
        eps = _eps_grid(rng, r)
        atoms, p_inf = dp_pair_mp(cons)
        ref = pair_power_delta_mp(atoms, p_inf, k, eps)
        _check("multi", r.delta(eps), ref, f"multi({cons}, {k}) at {eps}", failures)
        step = 0.05                     # the common-lattice route, with every ε a multiple of the step
        lattice = [(round(e / step) * step or step, d) for e, d in cons]
        if len({e for e, _ in lattice}) == n:
            atoms, p_inf = dp_pair_mp(lattice)
            _check("multi[step]", multi(lattice, k, step=step).delta(eps),
                   pair_power_delta_mp(atoms, p_inf, k, eps),
                   f"multi({lattice}, {k}, step={step}) at {eps}", failures)
    _assert_none(failures)


# -- mixtures, intersections, LP queries ------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_mixtures(profile):
    """The support function of a weighted Minkowski sum is the weighted sum of the supports."""
    failures: list[str] = []
    for seed in _seeds(profile, 8, 60):
        rng = np.random.default_rng([6, seed])
        parts = [_constraints(rng, int(rng.integers(1, 4))) for _ in range(int(rng.integers(2, 4)))]
        w = rng.dirichlet(np.ones(len(parts)))
        w[-1] = 1.0 - float(np.sum(w[:-1]))
        r = mix([(float(wi), PrivacyRegion.from_constraints(c)) for wi, c in zip(w, parts, strict=True)])
        eps = _eps_grid(rng, r)
        refs = [sum(float(wi) * pair_power_delta_mp(*dp_pair_mp(c), 1, [e])[0]
                    for wi, c in zip(w, parts, strict=True)) for e in eps]
        _check("mix", r.delta(eps), refs, f"mix({list(zip(w.tolist(), parts, strict=True))}) at {eps}",
               failures)
    _assert_none(failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_intersections(profile):
    failures: list[str] = []
    for seed in _seeds(profile, 10, 80):
        rng = np.random.default_rng([7, seed])
        cons = _constraints(rng, int(rng.integers(2, 5)))
        atoms, p_inf = dp_pair_mp(cons)
        r = PrivacyRegion.from_constraints(cons)
        eps = _eps_grid(rng, r)
        ref = pair_power_delta_mp(atoms, p_inf, 1, eps)
        _check("from_constraints", r.delta(eps), ref, f"from_constraints({cons}) at {eps}", failures)
        a, b = PrivacyRegion.from_dp(*cons[0]), PrivacyRegion.from_dp(*cons[1])
        ref2 = pair_power_delta_mp(*dp_pair_mp(cons[:2]), 1, eps)
        _check("intersect", a.intersect(b).delta(eps), ref2, f"R{cons[0]}.intersect(R{cons[1]}) at {eps}",
               failures)
    _assert_none(failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_lp_queries(profile):
    """LP answers are certified: δ never below, the trade-off never above the 50-digit value (rtol 0)."""
    from lpdp.lp import IntersectionLP

    failures: list[str] = []
    for seed in _seeds(profile, 6, 60):
        rng = np.random.default_rng([8, seed])
        cons = _constraints(rng, int(rng.integers(2, 5)))
        regions = [PrivacyRegion.from_dp(*c) for c in cons]
        if rng.random() < 0.3:
            regions.append(homogeneous(*_dp_pair(rng), int(rng.integers(2, 12))))
        lp = IntersectionLP(regions)
        eps = _eps_grid(rng, PrivacyRegion.from_constraints(cons))
        _check("lp.delta (upper)", lp.delta(eps), [intersection_delta_mp(regions, e) for e in eps],
               f"IntersectionLP({cons}) at {eps}", failures, side="upper", rtol=0.0)
        ts = [0.0, *rng.uniform(0, 1, 2)]
        _check("lp.tradeoff (lower)", [lp.tradeoff(t) for t in ts],
               [intersection_tradeoff_mp(regions, t) for t in ts], f"IntersectionLP({cons}) at t={ts}",
               failures, side="lower", rtol=0.0)
    _assert_none(failures)


# -- f-DP bracket -----------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_fdp_bracket_sides(profile):
    """``R_k(f⁺) ⊆ R(G_μ^{⊗k}) ⊆ R_k(f⁻)``: δ⁺ <= δ_{G_{μ√k}} <= δ⁻ at every ε (rtol 0: each side claims
    it)."""
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    failures: list[str] = []
    for seed in _seeds(profile, 4, 50):
        rng = np.random.default_rng([9, seed])
        mu = float(rng.uniform(0.3, 2.0))
        k = int(rng.integers(1, 6 if profile == "fast" else 12))
        n = int(rng.integers(1, 3))
        b = bracket(gaussian(mu), k, n)
        eps = _eps_grid(rng, b.from_below)
        ref = gaussian_delta_mp(mu * math.sqrt(k), eps)
        case = f"bracket(gaussian({mu!r}), {k}, {n}) at {eps}"
        _check("fdp.bracket below (upper)", b.from_below.delta(eps), ref, case, failures, side="upper",
               rtol=0.0)
        _check("fdp.bracket above (lower)", b.from_above.delta(eps), ref, case, failures, side="lower",
               rtol=0.0)
    _assert_none(failures)


# -- filters' audits --------------------------------------------------------------------------------
def _brute_force_audit(filt, mech, x, other, epsilon):
    """Tail and hockey-stick δ of the stopped transcript under ``P_x``, by running the filter itself
    (ask/record) on every output sequence; losses and masses in mpmath from the mechanism's table."""
    import mpmath as mp

    tail, hockey = mp.mpf(0), mp.mpf(0)
    outs = mech.outputs
    px = {y: mp.mpf(float(p)) for y, p in zip(outs, mech.probabilities(x), strict=True)}
    pq = {y: mp.mpf(float(p)) for y, p in zip(outs, mech.probabilities(other), strict=True)}
    stack = [(copy.deepcopy(filt), mp.mpf(1), mp.mpf(0))]
    while stack:
        f, mass, loss = stack.pop()
        if f.remaining_steps == 0 or not f.ask(mech):
            if loss > epsilon * (1 + 1e-10) + 1e-10:     # ties continue (realisation.LOSS_TIE_TOL)
                tail += mass
            hockey += mass * max(mp.mpf(0), -mp.expm1(mp.mpf(epsilon) - loss))
            continue
        for y in outs:
            if px[y] == 0:
                continue
            g = copy.deepcopy(f)
            g.record(y)
            stack.append((g, mass * px[y], loss + (mp.log(px[y] / pq[y]) if pq[y] > 0 else mp.inf)))
    return tail, hockey


@pytest.mark.parametrize("profile", PROFILES)
def test_filter_audits(profile):
    from lpdp.filters import (
        RealisationFilter,
        UnionBoundFilter,
        audit,
        binary_erasure,
        optimal_parameters,
        randomized_response,
    )

    failures: list[str] = []
    for seed in _seeds(profile, 4, 50):
        rng = np.random.default_rng([10, seed])
        n_steps = int(rng.integers(2, 6 if profile == "fast" else 9))
        if rng.random() < 0.7:
            mech = randomized_response(int(rng.integers(2, 4)), float(rng.uniform(0.1, 1.2)))
        else:
            mech = binary_erasure(float(10.0 ** rng.uniform(-4, -1)))
        eps = float(rng.uniform(0.5, 4.0))
        delta = float(10.0 ** rng.uniform(-3, -1))
        if rng.random() < 0.5:
            p = optimal_parameters(delta, n_steps, mech, inputs=[(0, 1)])
            filt = RealisationFilter(eps, delta, n_steps, p.delta_tilde, p.theta, pairs=[(0, 1)])
        else:
            filt = UnionBoundFilter(eps, delta, n_steps, pairs=[(0, 1)])
        res = audit(filt, mech, method="exact")
        case = f"audit({filt.config()} {type(filt).__name__}, {mech.to_dict()})"
        for pa in res.pairs:
            tail, hockey = _brute_force_audit(filt, mech, pa.pair[0], pa.pair[1], eps)
            _check("filters.audit hockey δ", [pa.hockey_stick_delta], [hockey], case, failures)
            _check("filters.audit tail", [pa.tail], [tail], case, failures)
    _assert_none(failures)


# -- regressions: δ at and just below the largest loss of a composition -------------------------
# The stored loss fl(k ε) used to round below the exact k ε: δ there fell to 0 (truth 6.5e-29, 4.6e-18,
# 7.1e-19, 5.2e-27 for these cases) and lost ~1e-10 relative just below it.
_TOP_CASES = [
    ("kairouz", lambda: homogeneous(0.047855904778393035, 0.0, 43),
     lambda e: kairouz_delta_mp(0.047855904778393035, 0.0, 43, e)),
    ("kairouz-21", lambda: homogeneous(1.5959440043503783, 0.0, 21),
     lambda e: kairouz_delta_mp(1.5959440043503783, 0.0, 21, e)),
    ("heterogeneous", lambda: heterogeneous({0.6: 3, 0.3: 1, 0.2: 6}),
     lambda e: rr_levels_delta_mp([(0.6, 0.0, 3), (0.3, 0.0, 1), (0.2, 0.0, 6)], e)),
    ("double_dp", lambda: double_dp((0.7, 0.0), (0.3, 0.01), 7),
     lambda e: pair_power_delta_mp(*dp_pair_mp([(0.7, 0.0), (0.3, 0.01)]), 7, e)),
    ("multi", lambda: multi([(0.7, 0.0), (0.3, 0.01), (0.1, 0.1)], 5),
     lambda e: pair_power_delta_mp(*dp_pair_mp([(0.7, 0.0), (0.3, 0.01), (0.1, 0.1)]), 5, e)),
]


@pytest.mark.parametrize("name, build, reference, where", [
    pytest.param(name, build, ref, where, id=f"{name}-{where}")
    for name, build, ref in _TOP_CASES for where in ("at", "near")])
def test_delta_near_the_top_loss(name, build, reference, where):
    """δ at the largest loss L and at L (1 - 1e-6): never below the exact value (1e-12 relative)."""
    r = build()
    top = float(r.losses.max())
    eps = [top] if where == "at" else [top * (1.0 - 1e-6)]
    failures: list[str] = []
    _check(f"top loss [{name}]", r.delta(eps), reference(eps), f"{name} {where} {eps}", failures)
    _assert_none(failures)


def test_optimal_parameters_fit_their_own_budget_regression():
    """Finite mechanisms: a candidate θ = P(L > ℓ) with θ N > δ used to be returned with δ̃ = 0, and the
    result failed its own budget check (``δ̃ + θ (1 - δ̃) N <= δ``) with a ParameterError."""
    from lpdp.filters import optimal_parameters, randomized_response

    for delta in (1e-3, 1e-2):
        p = optimal_parameters(delta, 2, randomized_response(3, 0.17898283542314275), inputs=[(0, 1)])
        assert p.delta_tilde + p.theta * (1 - p.delta_tilde) * p.max_steps <= delta


# -- the accountant's Guarantee and the certified engine -------------------------------------------
def _accountant_case(rng: np.random.Generator, kind: str):
    """``(parts, reference δ(ε) function, exact?)`` of one seeded accountant case."""
    from lpdp.mechanisms import DPMechanism, GaussianMechanism, LaplaceMechanism, pure, randomized_response

    if kind == "kairouz":
        e0, d0 = _dp_pair(rng)
        k = int(rng.integers(1, 80))
        return [(DPMechanism([(e0, d0)]), k)], functools.partial(kairouz_delta_mp, e0, d0, k), True
    if kind == "theorem1":
        levels = [(float(e), int(c)) for e, c in zip(np.round(rng.uniform(0.05, 1.5, 3), 6),
                                                      rng.integers(1, 9, 3), strict=True)]
        return ([(pure(e), c) for e, c in levels],
                functools.partial(rr_levels_delta_mp, [(e, 0.0, c) for e, c in levels]), True)
    if kind in ("double", "multi"):
        cons = _constraints(rng, 2 if kind == "double" else 3)
        k = int(rng.integers(1, 7 if kind == "double" else 4))
        return [(DPMechanism(cons), k)], functools.partial(pair_power_delta_mp, *dp_pair_mp(cons), k), True
    if kind == "product":
        m, e_rr = int(rng.integers(2, 4)), float(rng.uniform(0.1, 1.5))
        cons = [_dp_pair(rng)]
        k1, k2 = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        prods = product_atoms_mp(pair_power_atoms_mp(rr_pair_mp(m, e_rr), 0, k1),
                                 pair_power_atoms_mp(*dp_pair_mp(cons), k2))
        return ([(randomized_response(m, e_rr), k1), (DPMechanism(cons), k2)],
                functools.partial(atoms_delta_mp, prods), True)
    if kind == "gaussian":
        s1, s2 = (float(x) for x in rng.uniform(0.5, 4.0, 2))
        k1, k2 = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        mu = math.sqrt(k1 / s1 ** 2 + k2 / s2 ** 2)
        return ([(GaussianMechanism(s1), k1), (GaussianMechanism(s2), k2)],
                functools.partial(gaussian_delta_mp, mu), True)
    if kind == "gaussian+rr":
        s, e_rr = float(rng.uniform(0.7, 3.0)), float(rng.uniform(0.1, 1.0))
        k1, k2 = int(rng.integers(1, 10)), int(rng.integers(1, 4))
        prods = pair_power_atoms_mp(rr_pair_mp(2, e_rr), 0, k2)
        return ([(GaussianMechanism(s), k1), (randomized_response(2, e_rr), k2)],
                functools.partial(atoms_delta_mp, prods, mu=math.sqrt(k1) / s), False)
    b = float(rng.uniform(0.3, 3.0))       # "laplace": one run, closed form
    return [(LaplaceMechanism(b), 1)], functools.partial(laplace_delta_mp, b), False


ACCOUNTANT_KINDS = ("kairouz", "theorem1", "double", "multi", "product", "gaussian", "gaussian+rr",
                    "laplace")


@pytest.mark.parametrize("profile", PROFILES)
def test_accountant_guarantee(profile):
    """``Guarantee.delta``: lower <= reference <= upper (rtol 1e-12 on exact routes, 0 on certified
    brackets); ``Guarantee.epsilon``: the reference δ at the upper ε is within the asked δ."""
    from lpdp.accountant import route

    failures: list[str] = []
    for seed in _seeds(profile, 8, 96):
        rng = np.random.default_rng([12, seed])
        kind = ACCOUNTANT_KINDS[seed % len(ACCOUNTANT_KINDS)]
        parts, reference, exact = _accountant_case(rng, kind)
        g = route(parts)
        top = float(rng.uniform(1.0, 6.0))
        eps = [0.0, *(float(x) for x in rng.uniform(0.0, top, 4))]
        lo, hi = g.delta(eps)
        ref = reference(eps)
        rtol = EXACT_RTOL if exact else 0.0
        case = f"route({parts}) [{g.route}] at {eps}"
        _check(f"accountant[{kind}] upper", hi, ref, case, failures, side="upper", rtol=rtol)
        _check(f"accountant[{kind}] lower", lo, ref, case, failures, side="lower", rtol=rtol)
        targets = [1e-3, 1e-6]
        eps_hi = [float(g.epsilon(d)[1]) for d in targets]
        finite = [(d, e) for d, e in zip(targets, eps_hi, strict=True) if math.isfinite(e)]
        if finite:
            _check(f"accountant[{kind}] epsilon", [d for d, _ in finite], reference([e for _, e in finite]),
                   f"{case}: epsilon at {finite}", failures, side="upper", rtol=rtol)
    _assert_none(failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_pld_engine_bracket(profile):
    """``lpdp.pld.compose`` of loss laws: lower <= reference <= upper at every ε (rtol 0)."""
    from lpdp.mechanisms import GaussianMechanism, randomized_response
    from lpdp.pld import compose

    failures: list[str] = []
    for seed in _seeds(profile, 4, 40):
        rng = np.random.default_rng([13, seed])
        s, e_rr = float(rng.uniform(0.7, 3.0)), float(rng.uniform(0.1, 1.2))
        k1 = int(rng.integers(0, 12))
        k2 = int(rng.integers(0 if k1 else 1, 5))
        m = int(rng.integers(2, 4))
        parts = [(GaussianMechanism(s).loss_law(), k1), (randomized_response(m, e_rr).loss_law(), k2)]
        bracket = compose([p for p in parts if p[1] > 0])
        prods = pair_power_atoms_mp(rr_pair_mp(m, e_rr), 0, k2)
        eps = [0.0, *(float(x) for x in rng.uniform(0.0, 5.0, 4))]
        ref = atoms_delta_mp(prods, eps, mu=math.sqrt(k1) / s)
        lo, hi = bracket.delta(eps)
        case = f"pld.compose(gaussian({s!r}) x {k1}, rr({m}, {e_rr!r}) x {k2}) at {eps}"
        _check("pld.compose upper", hi, ref, case, failures, side="upper", rtol=0.0)
        _check("pld.compose lower", lo, ref, case, failures, side="lower", rtol=0.0)
    _assert_none(failures)


@pytest.mark.parametrize("parts", [
    pytest.param([(1.152223, 4), (1.333044, 4), (0.393907, 2)], id="theorem1"),
    pytest.param([(0.525539, 4), (1.147328, 3), (1.482396, 1)], id="theorem1-b"),
])
def test_accountant_epsilon_near_the_top_loss_regression(parts):
    """``epsilon(1e-6)`` lands just below the largest loss; while composed losses were rounded to nearest,
    δ at the returned ε exceeded 1e-6 by ~1e-11 (found by the deep profile)."""
    from lpdp.accountant import route
    from lpdp.mechanisms import pure

    g = route([(pure(e), k) for e, k in parts])
    eps_hi = float(g.epsilon(1e-6)[1])
    ref = rr_levels_delta_mp([(e, 0.0, k) for e, k in parts], [eps_hi])[0]
    failures: list[str] = []
    _check("accountant epsilon near top", [1e-6], [ref], f"route({parts}).epsilon(1e-6) = {eps_hi!r}",
           failures, side="upper")
    _assert_none(failures)
