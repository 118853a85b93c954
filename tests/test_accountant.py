"""The accountant and its router.

Oracles: brute-force enumeration of the product of dominating pairs (small k), an independent
convolution of plain masses over integer loss keys (larger k), the Gaussian closed form written out here
(``μ = sqrt(Σ 1/σ_i²)``, Balle–Wang profile), and dp_accounting's PLD (pessimistic and optimistic) on
seeded mixed workloads.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from scipy import stats

from lpdp import Accountant, PrivacyRegion
from lpdp.accountant import _certified, route
from lpdp.compose.multi import compose_regions, directed_product
from lpdp.errors import ParameterError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RegionMechanism,
    TradeoffMechanism,
    binary_erasure,
    pure,
    randomized_response,
)
from lpdp.tradeoff import gaussian
from tests.oracles import brute_force_delta, pld_from_region

EPS = np.array([0.0, 0.3, 0.7, 1.0, 1.6, 2.5, 4.0])

#: A symmetric finite pair with losses ±0.6 and 0 (on the 0.1 grid).
_Z = 0.2
FINITE_GRID = FiniteMechanism.from_pair([_Z * math.exp(0.6), 1 - _Z - _Z * math.exp(0.6), _Z],
                                        [_Z, 1 - _Z - _Z * math.exp(0.6), _Z * math.exp(0.6)])


def assert_certified_pair(lo, hi):
    """An exact route's two certified sides: lower <= upper, and they agree to about 1e-12."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    assert np.all(lo <= hi)
    assert np.allclose(lo, hi, rtol=1e-11, atol=1e-300)


def rows(mech):
    """The dominating pair's masses (P, Q) of a finite mechanism."""
    a, b = mech.pair
    return mech.probabilities(a), mech.probabilities(b)


def product_delta(parts, eps):
    """Brute force: enumerate every output sequence of the product of the parts' pairs."""
    pk, qk = np.ones(1), np.ones(1)
    for mech, k in parts:
        p, q = rows(mech)
        for _ in range(k):
            pk, qk = np.multiply.outer(pk, p).ravel(), np.multiply.outer(qk, q).ravel()
    return np.array([np.sum(np.maximum(0.0, pk - math.exp(e) * qk)) for e in eps])


def grid_convolution_delta(parts, eps, unit=0.1):
    """Independent route: plain masses on integer keys round(L/unit), convolved with numpy."""
    dist = {0: 1.0}
    p_inf_rest = 1.0
    for mech, k in parts:
        p, q = rows(mech)
        one: dict[int, float] = {}
        for pi, qi in zip(p, q, strict=True):
            if pi == 0:
                continue
            if qi == 0:
                continue
            key = int(round(math.log(pi / qi) / unit))
            assert abs(key * unit - math.log(pi / qi)) < 1e-9
            one[key] = one.get(key, 0.0) + pi
        p_inf_rest *= (1.0 - sum(pi for pi, qi in zip(p, q, strict=True) if qi == 0 and pi > 0)) ** k
        for _ in range(k):
            new: dict[int, float] = {}
            for a, ma in dist.items():
                for b, mb in one.items():
                    new[a + b] = new.get(a + b, 0.0) + ma * mb
            dist = new
    keys = np.array(sorted(dist))
    mass = np.array([dist[x] for x in keys])
    loss = keys * unit
    return np.array([(1 - p_inf_rest) + np.sum(mass[loss > e] * -np.expm1(e - loss[loss > e])) for e in eps])


WORKLOAD_FINITE = [(DPMechanism([(1.0, 0.0), (0.5, 0.1)]), 2), (randomized_response(4, 0.7), 2),
                   (FINITE_GRID, 2)]


def test_finite_workload_is_exact_and_matches_brute_force():
    acc = Accountant()
    for m, k in WORKLOAD_FINITE:
        acc.compose(m, k)
    g = acc.guarantee()
    lo, hi = g.delta(EPS)
    assert g.exact and g.route == "product"
    assert_certified_pair(lo, hi)
    assert np.allclose(hi, product_delta(WORKLOAD_FINITE, EPS), rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("parts", [
    [(binary_erasure(0.1), 3)],
    [(binary_erasure(0.1), 2), (randomized_response(2, 0.7), 2)],
    [(binary_erasure(0.0), 2)],
    [(binary_erasure(1.0), 1), (randomized_response(3, 0.4), 2)],
])
def test_parts_without_a_nonzero_finite_loss_are_exact(parts):
    """Binary erasure has losses +inf, -inf and 0 only: its product is exact, through the accountant and
    through compose_regions (brute force over every output sequence)."""
    acc = Accountant()
    for m, k in parts:
        acc.compose(m, times=k)
    lo, hi = acc.guarantee().delta(EPS)
    ref = product_delta(parts, EPS)
    assert_certified_pair(lo, hi)
    assert np.allclose(hi, ref, rtol=1e-12, atol=1e-15)
    direct = compose_regions([(m.region(), k) for m, k in parts]).delta(EPS)
    assert np.allclose(direct, ref, rtol=1e-12, atol=1e-15)


def test_finite_workload_larger_k_matches_integer_key_convolution():
    parts = [(DPMechanism([(1.0, 0.0), (0.5, 0.1)]), 10), (randomized_response(4, 0.7), 20), (FINITE_GRID, 8)]
    g = route(parts)
    lo, hi = g.delta(EPS)
    assert g.exact
    assert_certified_pair(lo, hi)
    assert np.allclose(hi, grid_convolution_delta(parts, EPS), rtol=1e-9, atol=1e-15)
    # ε(δ) is exact as well, and consistent with δ(ε).
    e_lo, e_hi = g.epsilon([1e-3, 1e-6])
    assert_certified_pair(e_lo, e_hi)
    assert np.all(np.asarray(g.delta(e_hi)[1]) <= np.array([1e-3, 1e-6]) * (1 + 1e-12))


def test_asymmetric_pairs_take_the_worse_order():
    p, q = [0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.5, 0.1]
    parts = [(FiniteMechanism.from_pair(p, q), 3), (randomized_response(3, 0.4), 2)]
    g = route(parts)
    rr_p, rr_q = rows(randomized_response(3, 0.4))
    fwd = product_delta([(FiniteMechanism.from_pair(p, q), 3), (randomized_response(3, 0.4), 2)], EPS)
    bwd = product_delta([(FiniteMechanism.from_pair(q, p), 3),
                         (FiniteMechanism.from_pair(rr_q, rr_p), 2)], EPS)
    lo, hi = g.delta(EPS)
    assert g.exact
    assert np.allclose(hi, np.maximum(fwd, bwd), rtol=1e-9, atol=1e-15)
    assert_certified_pair(lo, hi)


@pytest.mark.parametrize("parts,name", [
    ([(DPMechanism([(0.3, 1e-4)]), 30)], "kairouz"),
    ([(pure(0.3), 10), (pure(0.15), 20)], "theorem1"),
    ([(DPMechanism([(0.3, 0.0), (0.15, 0.02)]), 20)], "lattice"),
    ([(DPMechanism([(1.0, 0.0), (0.5, 0.01), (0.2, 0.05)]), 5)], "multi"),
    ([(DPMechanism([(0.3, 1e-4)]), 3), (randomized_response(2, 0.3), 2)], "product"),
])
def test_routes_agree_with_the_general_product(parts, name):
    """Each specialised route equals the exact product of the same dominating pairs (brute force for small
    counts, compose_regions otherwise)."""
    g = route(parts)
    assert g.route == name and g.exact
    small = [(m, min(k, 3)) for m, k in parts]
    assert np.allclose(route(small).delta(EPS)[1], product_delta(small, EPS), rtol=1e-9, atol=1e-14)


def test_remark_baselines_contain_the_exact_region():
    m = DPMechanism([(0.3, 0.0), (0.15, 0.02)])
    exact, loose = route([(m, 20)]), route([(m, 20)], method="remark1")
    assert not loose.exact and loose.upper.contains(exact.region)
    assert loose.delta(1.0)[0] == 0.0


def balle_wang(eps, mu):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


SIGMAS = [(1.5, 2), (3.0, 5), (6.0, 3)]


def test_heterogeneous_gaussians_exact_and_certified():
    mu = math.sqrt(sum(k / s**2 for s, k in SIGMAS))
    acc = Accountant()
    for s, k in SIGMAS:
        acc.compose(GaussianMechanism(s), k)
    g = acc.guarantee()
    assert g.exact and g.route == "gaussian"
    for e in EPS:
        assert g.delta(float(e))[1] == pytest.approx(balle_wang(e, mu), rel=1e-9, abs=1e-15)
    # The certified bracket (the route for continuous parts mixed with others) contains the closed form.
    lower, upper = _certified([(GaussianMechanism(s), k) for s, k in SIGMAS], [])
    exact = np.array([balle_wang(e, mu) for e in EPS])
    assert np.all(np.asarray(lower.delta(EPS)) <= exact * (1 + 1e-12))
    assert np.all(np.asarray(upper.delta(EPS)) >= exact * (1 - 1e-12))
    for d in (1e-3, 1e-6, 1e-9):
        e_exact = gaussian(mu).epsilon(d)
        assert lower.epsilon(d) <= e_exact <= upper.epsilon(d)
        assert upper.epsilon(d) <= 1.05 * e_exact


def _pld_bracket(parts, discretization=1e-4):
    from dp_accounting.pld import privacy_loss_distribution as pld

    out = []
    for pess in (True, False):
        total = None
        for m, k in parts:
            if isinstance(m, GaussianMechanism):
                one = pld.from_gaussian_mechanism(m.sigma, sensitivity=m.sensitivity,
                                                  pessimistic_estimate=pess,
                                                  value_discretization_interval=discretization)
            elif isinstance(m, LaplaceMechanism):
                one = pld.from_laplace_mechanism(m.scale, sensitivity=m.sensitivity,
                                                 pessimistic_estimate=pess,
                                                 value_discretization_interval=discretization)
            else:
                one = pld_from_region(m.region(), pessimistic=pess, discretization=discretization)
            one = one.self_compose(k)
            total = one if total is None else total.compose(one)
        out.append(total)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_mixed_workloads_consistent_with_dp_accounting(seed, caplog):
    rng = np.random.default_rng(seed)
    parts = [(GaussianMechanism(float(rng.uniform(1.5, 4))), int(rng.integers(2, 12))),
             (LaplaceMechanism(float(rng.uniform(1, 4))), int(rng.integers(1, 5))),
             (randomized_response(3, float(np.round(rng.uniform(0.2, 1), 1))), int(rng.integers(1, 8))),
             (DPMechanism([(0.5, 0.0), (0.2, 0.01)]), int(rng.integers(1, 4)))]
    g = route(parts)
    assert g.route == "certified" and not g.exact
    with caplog.at_level(logging.ERROR):
        pess, opt = _pld_bracket(parts)
    for e in (0.5, 1.0, 2.0, 3.0):
        lo, hi = g.delta(e)
        assert lo <= pess.get_delta_for_epsilon(e) * (1 + 1e-6)
        assert hi >= opt.get_delta_for_epsilon(e) * (1 - 1e-6)
        assert 0 <= hi - lo <= 0.05 * hi


def test_tradeoff_mechanism_composes_with_finite_parts():
    g = route([(TradeoffMechanism(gaussian(0.5)), 4), (pure(0.2), 2)])
    lo, hi = g.delta(EPS)
    assert not g.exact and np.all(lo <= hi)
    # Dropping the pure part can only lower δ: the bracket of G_1 alone (exact) sits below the upper side.
    assert np.all(np.asarray(gaussian(1.0).delta(EPS)) <= hi * (1 + 1e-12))


def test_region_mechanism_and_identity():
    r = PrivacyRegion.from_constraints([(1.0, 1e-3), (0.2, 0.1)])
    g = route([(RegionMechanism(r), 3)])
    assert g.exact
    assert np.allclose(g.delta(EPS)[1], route([(DPMechanism([(1.0, 1e-3), (0.2, 0.1)]), 3)]).delta(EPS)[1],
                       rtol=1e-9)
    empty = Accountant().guarantee()
    assert empty.exact and empty.delta(0.0) == (0.0, 0.0)


@pytest.mark.parametrize("call,match", [
    (lambda: Accountant().compose("gauss"), r"mechanism='gauss'"),
    (lambda: Accountant().compose(pure(1.0), -1), r"times=-1"),
    (lambda: route([(pure(1.0), 2)], method="remark1"), r"method='remark1': only for one mechanism"),
    (lambda: route([(pure(1.0), 2)], method="best"), r"method='best': must be one of"),
    (lambda: route([pure(1.0)]), r"parts\[0\]="),
    (lambda: Accountant().compose(pure(1.0)).guarantee().delta(-1.0), r"epsilon=-1\.0"),
    (lambda: Accountant().compose(pure(1.0)).guarantee().epsilon(2.0), r"delta=2\.0"),
    (lambda: Accountant().compose(GaussianMechanism(1.0)).guarantee().region, r"route='gaussian'"),
])
def test_errors(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_brute_force_oracle_agrees_with_kairouz_pair():
    """Sanity of the oracle: the (ε, δ) randomized response composed by the shared brute force."""
    m = DPMechanism([(0.5, 0.01)])
    p, q = rows(m)
    assert np.allclose(brute_force_delta(p, q, 3, EPS), product_delta([(m, 3)], EPS), rtol=1e-12)


def test_cli_compose_refuses_a_second_k(capsys):
    from lpdp.cli import main

    assert main(["compose", "--dp", "0.5,1e-5", "-k", "10", "--dp", "1,0", "-k", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "-k given 2 times" in err and "lpdp account" in err


@pytest.mark.parametrize("pairs", [
    [(([0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.5, 0.1]), 3)],
    [(([0.3, 0.7, 0.0], [0.0, 0.6, 0.4]), 2), (([0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.5, 0.1]), 2)],
    [(([0.3, 0.7, 0.0], [0.0, 0.6, 0.4]), 1), (([1.0, 0.0], [0.0, 1.0]), 1)],
])
def test_directed_product_matches_brute_force(pairs):
    """The ordered product of asymmetric pairs (also with atoms of loss ±inf, and a pair that always leaks)
    on the shared lattice of compose_regions, against enumeration of every output sequence."""
    mechs = [(FiniteMechanism.from_pair(p, q), k) for (p, q), k in pairs]
    got = directed_product([(m.region(), k) for m, k in mechs]).delta(EPS)
    assert np.allclose(got, product_delta(mechs, EPS), rtol=1e-12, atol=1e-15)
