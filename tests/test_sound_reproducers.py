"""Every reproducer of the soundness report gets a correct bound (or a clean refusal).

Each reference is computed here with mpmath at 50 digits from the mechanism's definition (not with
lpdp), and the checks allow no tolerance on the unsafe side: ``upper >= truth`` and ``lower <= truth`` as
floats, or the true δ at a returned ε at or below the target.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from lpdp import Accountant, PrivacyRegion
from lpdp.compose import homogeneous
from lpdp.compose.multi import multi
from lpdp.mechanisms import FiniteMechanism, randomized_response

mp.mp.dps = 50


def rr_delta(k_outputs: int, eps0: float, times: int, eps: float) -> mp.mpf:
    """δ(ε) of ``times`` runs of k-ary randomized response (pair (0, 1)), summed over the counts
    (a, b) of outputs 0 and 1 (the other k-2 outputs have loss 0)."""
    e0 = mp.mpf(eps0)
    keep = 1 / (1 + (k_outputs - 1) * mp.exp(-e0))
    other = keep * mp.exp(-e0)
    rest = 1 - keep - other
    x = mp.mpf(eps)
    total = mp.mpf(0)
    for a in range(times + 1):
        for b in range(times - a + 1):
            c = times - a - b
            if c and k_outputs == 2:
                continue
            loss = (a - b) * e0
            if loss <= x:
                continue
            mass = mp.factorial(times) / (mp.factorial(a) * mp.factorial(b) * mp.factorial(c)) \
                * keep ** a * other ** b * rest ** c
            total += mass * (1 - mp.exp(x - loss))
    return total


def pair_delta(p: list[float], q: list[float], eps: float) -> mp.mpf:
    """δ(ε) = Σ max(0, p - e^ε q) of a pair, the floats taken as exact."""
    x = mp.exp(mp.mpf(eps))
    return sum((max(mp.mpf(a) - x * mp.mpf(b), 0) for a, b in zip(p, q, strict=True)), mp.mpf(0))


def dp_k_delta(eps0: float, delta0: float, times: int, eps: float) -> mp.mpf:
    """δ(ε) of ``times`` runs of the (ε0, δ0) randomised response (Kairouz et al.)."""
    e0, d0, x = mp.mpf(eps0), mp.mpf(delta0), mp.mpf(eps)
    s = mp.mpf(0)
    for i in range(times + 1):
        loss = (times - 2 * i) * e0
        if loss > x:
            s += mp.binomial(times, i) * mp.exp((times - i) * e0) / (1 + mp.exp(e0)) ** times \
                * (1 - mp.exp(x - loss))
    log_rest = times * mp.log1p(-d0)
    return -mp.expm1(log_rest) + mp.exp(log_rest) * s           # no 1 - (1 - δ)^k cancellation


def test_rr_at_large_epsilon_has_its_exact_loss():
    g = Accountant().compose(randomized_response(2, 20.0), 1).guarantee()
    lo, hi = g.epsilon(1e-10)
    assert rr_delta(2, 20.0, 1, hi) <= mp.mpf(1e-10)          # was 19.999999964: true δ 3.6e-8
    assert rr_delta(2, 20.0, 1, lo) >= mp.mpf(1e-10)
    assert randomized_response(2, 36.5).region().losses.tolist() == [36.5, -36.5]   # exact: no rounding


def test_rr_21_fold_at_757():
    """``lpdp account --rr 2,36.14x21 --at 757``: δ(757) was reported 0, the truth is 0.856."""
    g = Accountant().compose(randomized_response(2, 36.14), 21).guarantee()
    lo, hi = g.delta(757.0)
    truth = rr_delta(2, 36.14, 21, 757.0)
    assert truth > 0.8
    assert lo <= truth <= hi
    e_lo, e_hi = g.epsilon(1e-20)
    assert rr_delta(2, 36.14, 21, e_hi) <= mp.mpf(1e-20)


@pytest.mark.parametrize("k_outputs, eps0", [(2, 15.0), (2, 25.0), (2, 36.5), (3, 50.0), (10, 7.0),
                                              (2, 700.0)])
def test_rr_large_epsilon_sweep(k_outputs, eps0):
    g = Accountant().compose(randomized_response(k_outputs, eps0), 1).guarantee()
    for target in (1e-6, 1e-20, 1e-100, 1e-300):
        lo, hi = g.epsilon(target)
        assert rr_delta(k_outputs, eps0, 1, hi) <= mp.mpf(target)
        assert lo <= hi


def test_rr_composed_33_times():
    g = Accountant().compose(randomized_response(2, 0.314), 33).guarantee()
    lo, hi = g.epsilon(1e-20)
    assert rr_delta(2, 0.314, 33, hi) <= mp.mpf(1e-20)          # was 1.0106e-20
    assert rr_delta(2, 0.314, 33, lo) >= mp.mpf(1e-20)


def test_from_pair_losses_round_outward():
    p, q = [0.75, 0.25], [0.25, 0.75]
    r = FiniteMechanism.from_pair(p, q).region()
    e = r.epsilon(1e-300)
    assert pair_delta(p, q, e) <= mp.mpf(1e-300)                 # was δ 9.85e-17
    assert pair_delta(p, q, r.epsilon_lower(1e-300)) > 0
    assert r.epsilon(0.0) >= mp.log(3)                           # no loss below the exact log 3
    for x in (0.0, 0.5, 1.0):
        assert r.delta_lower(x) <= pair_delta(p, q, x) <= r.delta(x)


def test_off_lattice_losses_are_not_rounded_down():
    cons = [(0.2, 0.00039226115418590203), (0.30000000000000004, 0.0), (0.9, 0.0)]
    r = multi(cons, 12, step=0.05)
    e = r.epsilon(1e-300)
    # the exact top loss is 12 * 0.30000000000000004 > 3.6 (δ(3.6) = 1.07e-44, not <= 1e-300)
    assert e >= 12 * mp.mpf(0.30000000000000004)


def test_dp_one_fold_at_its_delta():
    """``lpdp compose --dp 2.3899178623088484,1e-100 -k 1 --at 4.0245`` printed δ below the given 1e-100."""
    r = homogeneous(2.3899178623088484, 1e-100, 1)
    truth = dp_k_delta(2.3899178623088484, 1e-100, 1, 4.0245)
    assert r.delta_lower(4.0245) <= truth <= r.delta(4.0245)
    assert r.epsilon(1e-100) == 2.3899178623088484     # exact: δ(ε0) is the given δ


def test_kairouz_small_margins():
    for eps0, d0, k, x in [(0.25, 0.0, 40, 9.13), (0.1, 1e-7, 1000, 0.0), (1.0, 1e-6, 30, 3.0)]:
        r = homogeneous(eps0, d0, k)
        truth = dp_k_delta(eps0, d0, k, x)
        assert r.delta_lower(x) <= truth <= r.delta(x)


def gauss_delta(mu: mp.mpf, eps: float) -> mp.mpf:
    """δ(ε) of G_μ (Balle and Wang, Theorem 8) at 50 digits (μ exact, e.g. sensitivity/σ as a real)."""
    e = mp.mpf(eps)
    return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)


def test_gaussian_small_mu_deep_tail():
    from lpdp.mechanisms import GaussianMechanism

    g = Accountant().compose(GaussianMechanism(1e6)).guarantee()
    mu = 1 / mp.mpf(1e6)
    x = 5.000000499999999e-06
    lo, hi = g.delta(x)
    assert lo <= gauss_delta(mu, x) <= hi                        # was 3.2e-8 relative low
    lo, hi = g.epsilon(1e-300)
    assert gauss_delta(mu, hi) <= mp.mpf(1e-300)                 # was 1.0000049e-300
    assert gauss_delta(mu, lo) >= mp.mpf(1e-300)


def test_gaussian_composed_deep_target():
    from lpdp.mechanisms import GaussianMechanism

    g = Accountant().compose(GaussianMechanism(1e4), 10_000).guarantee()
    mu = mp.sqrt(10_000) / mp.mpf(1e4)                          # exactly 0.01
    lo, hi = g.epsilon(1e-100)
    assert gauss_delta(mu, hi) <= mp.mpf(1e-100)                 # was 1.7e-10 relative above
    assert gauss_delta(mu, lo) >= mp.mpf(1e-100)


@pytest.mark.parametrize("mu", [1e-8, 1e-4, 0.354, 1.0, 30.0, 1e4])
@pytest.mark.parametrize("target", [1e-3, 1e-12, 1e-100, 1e-300])
def test_gaussian_closed_form_sweep(mu, target):
    from lpdp.tradeoff import GaussianLower, gaussian

    m = mp.mpf(mu)
    up, lo = gaussian(mu), GaussianLower(mu)
    e_hi, e_lo = float(up.epsilon(target)), float(lo.epsilon(target))
    if math.isfinite(e_hi):
        assert gauss_delta(m, e_hi) <= mp.mpf(target)
    if e_lo > 0:
        assert gauss_delta(m, e_lo) >= mp.mpf(target)
    for x in (0.0, e_lo, 1.0):
        assert lo.delta(x) <= gauss_delta(m, x) <= up.delta(x)


def test_laplace_attack_side_at_delta_zero():
    """``compose(LaplaceMechanism(1.0), 3).guarantee().epsilon(0.0)`` gave lower 4.058; ε(0) is 3."""
    from lpdp.mechanisms import LaplaceMechanism

    g = Accountant().compose(LaplaceMechanism(1.0), 3).guarantee()
    lo, hi = g.epsilon(0.0)
    assert lo <= 3.0 <= hi
    lo, hi = g.epsilon(1e-300)
    assert lo <= 3.0 <= hi


def test_exact_routes_attack_side_at_delta_zero():
    from lpdp.mechanisms import pure

    for parts, top in ([(pure(0.5), 4)], 2.0), ([(randomized_response(3, 1.5), 2)], 3.0):
        acc = Accountant()
        for m, k in parts:
            acc.compose(m, k)
        lo, hi = acc.guarantee().epsilon(0.0)
        assert lo <= top <= hi
        lo, hi = acc.guarantee().delta(0.0)
        assert lo <= hi


def _printed_pairs(text: str) -> list[tuple[float, float]]:
    import re

    return [(float(a), float(b)) for a, b in re.findall(r"\(([-+0-9.e]+), ([-+0-9.e]+)\)", text)]


def test_region_repr_rounds_delta_up():
    """``homogeneous(0.1, 1e-7, 1000)``: δ(0) = 0.8859994368664923 was shown as 0.885999."""
    r = homogeneous(0.1, 1e-7, 1000)
    (e0, d0), *_ = _printed_pairs(repr(r))
    assert e0 == 0.0 and mp.mpf(d0) >= dp_k_delta(0.1, 1e-7, 1000, 0.0)   # exact: the printed 0
    low = _printed_pairs(repr(r.lower))
    assert mp.mpf(low[0][1]) <= dp_k_delta(0.1, 1e-7, 1000, 0.0)


def test_printed_survival_is_a_probability():
    from lpdp.filters.simulate import SurvivalCurve

    c = SurvivalCurve((1.0000000000000004, 0.5, -1e-17), "exact")
    assert c.to_dict()["survival"] == [1.0, 0.5, 0.0]             # exact: clipped values


def test_oracle_misses_of_0230():
    """Misses the soundness suite listed at 02:30 (MISSES.md): ε(δ) bisection, the top-loss attack side,
    δ at a constraint's own ε."""
    from lpdp.mechanisms import pure

    r = homogeneous(2.255257902928698, 0.0, 50)
    assert dp_k_delta(2.255257902928698, 0.0, 50, r.epsilon(1e-3)) <= mp.mpf(1e-3)     # was 5e-324
    g = Accountant().compose(pure(0.9709899088937318), 27).compose(pure(1.1210445719085662), 1).guarantee()
    lo, _ = g.delta(27.337772112039325)
    assert lo <= 1.005154874036084e-19          # the reference (enumeration) value; was 4.6e-19
    c = PrivacyRegion.from_constraints([(1.202618174238303, 1.159307653306547e-10),
                                        (1.1271865912579953, 4.751965885113138e-10)])
    assert c.delta(1.202618174238303) >= 1.159307653306547e-10


def six_point_delta(first: tuple[float, float], second: tuple[float, float], times: int,
                    eps: float) -> mp.mpf:
    """δ(ε) of ``times`` runs of the 6-point dominating pair of two active constraints (δ1 < δ2, ε1 > ε2;
    Kairouz et al.'s construction in Theorems 2-3), by enumerating every outcome of the product."""
    import itertools

    (e1, d1), (e2, d2) = sorted([first, second], key=lambda c: c[1])
    e1, d1, e2, d2 = (mp.mpf(v) for v in (e1, d1, e2, d2))
    a_big = (1 + mp.exp(e1)) / (mp.exp(e1) - mp.exp(e2))
    b_big = (1 + mp.exp(e2)) / (mp.exp(e1) - mp.exp(e2))
    alpha = (1 - d2 * a_big + d1 * b_big) / (1 - d1)
    assert 0 < alpha < 1
    s1, s2 = mp.exp(e1) / (1 + mp.exp(e1)), mp.exp(e2) / (1 + mp.exp(e2))
    rest = 1 - d1
    atoms = [(mp.inf, d1)] + [(loss, rest * w * s) for loss, w, s in (
        (e1, 1 - alpha, s1), (-e1, 1 - alpha, 1 - s1), (e2, alpha, s2), (-e2, alpha, 1 - s2))]
    x = mp.mpf(eps)
    total = mp.mpf(0)
    for combo in itertools.product(atoms, repeat=times):
        loss = sum(a[0] for a in combo)
        mass = mp.fprod(a[1] for a in combo)
        if loss > x:
            total += mass if loss == mp.inf else mass * (1 - mp.exp(x - loss))
    return total


@pytest.mark.parametrize("first, second, times, at", [
    ((1.928973555398885, 8.616440195476546e-10), (0.8565985262450914, 0.0006583178304654697), 2, 0.0),
    ((1.928973555398885, 8.616440195476546e-10), (0.8565985262450914, 0.0006583178304654697), 1, 0.0),
    ((2.285132882422352, 0.0), (2.009974629363723, 6.664869996084809e-08), 1, 1.024496818736688),
    ((2.032840904809925, 8.182299046181057e-11), (1.5964727506102414, 0.03849954936702128), 3,
     1.5964727506102414),
])
def test_double_dp_lattice_brackets_the_six_point_pair(first, second, times, at):
    """The lattice's powers of two were applied as ``exp(x + 500 log 2)``, rounding the sum to an ulp of
    346 (6e-14 nats): δ(0) of two runs was 2.3e-14 relative low (oracle, 03:00)."""
    from lpdp.compose import double_dp

    r = double_dp(first, second, times)
    truth = six_point_delta(first, second, times, at)
    assert mp.mpf(r.delta_lower(at)) <= truth <= mp.mpf(r.delta(at))


@pytest.mark.parametrize("eps0, delta0, times", [(0.7914493687357504, 7.161032553299856e-12, 3),
                                                 (1.2472482532280098, 1.6379515142982235e-07, 60)])
def test_json_profile_is_certified(eps0, delta0, times):
    """``lpdp compose --json``'s profile was the nominal face: 0.25893761896202233 where the truth is
    0.2589376189620224 (oracle, 03:00); every pair is now at or above the Kairouz sum."""
    import contextlib
    import io
    import json

    from lpdp.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compose", "--dp", f"{eps0!r},{delta0!r}", "-k", str(times), "--json"]) == 0
    profile = json.loads(out.getvalue())["profile"]
    assert len(profile) == times // 2 + 1
    for e, d in profile:
        assert mp.mpf(d) >= dp_k_delta(eps0, delta0, times, e)


def lines_delta(constraints: list[tuple[float, float]], eps: float) -> mp.mpf:
    """δ(ε) of ``∩ R(ε_i, δ_i)`` by brute force over the polygon's vertices in mpmath: in the coordinates
    ``t = bI``, ``w = 1 - bII`` each constraint is ``w <= δ + e^ε t`` and ``w <= 1 - e^{-ε}(1 - δ) +
    e^{-ε} t``, with ``t >= 0``, ``w <= 1`` and ``t <= w``; δ(ε) is the largest ``w - e^ε t`` over the
    pairwise meeting points that satisfy every constraint."""
    import itertools

    rows = []                                   # a t + b w <= c
    for e, d in constraints:
        e, d = mp.mpf(e), mp.mpf(d)
        rows += [(-mp.exp(e), 1, d), (-mp.exp(-e), 1, 1 - mp.exp(-e) * (1 - d))]
    rows += [(-1, 0, 0), (0, 1, 1), (1, -1, 0)]
    sigma = mp.exp(mp.mpf(eps))
    best = mp.mpf(0)
    for (a1, b1, c1), (a2, b2, c2) in itertools.combinations(rows, 2):
        det = a1 * b2 - a2 * b1
        if det == 0:
            continue
        t, w = (c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det
        if all(a * t + b * w <= c + mp.mpf(10) ** -40 for a, b, c in rows):
            best = max(best, w - sigma * t)
    return best


@pytest.mark.parametrize("a, b, at", [
    ((1.3316109334986646, 8.342596886411472e-07), (0.5382090556059878, 2.346411742316348e-12),
     0.5382090556059878),
    ((0.5683843114672928, 3.2508786853337964e-09), (0.7438644544014963, 5.025303060384044e-10),
     0.7438644544014963),
    ((1.3316109334986646, 8.342596886411472e-07), (0.5382090556059878, 2.346411742316348e-12), 0.9),
])
def test_intersect_is_certified(a, b, at):
    """``intersect`` rounded its breakpoints and took the result as exact: δ at a constraint's own ε was
    an ulp or more below its δ (oracle, 03:00)."""
    r = PrivacyRegion.from_dp(*a).intersect(PrivacyRegion.from_dp(*b))
    truth = lines_delta([a, b], at)
    assert mp.mpf(r.delta_lower(at)) <= truth <= mp.mpf(r.delta(at))
    c = PrivacyRegion.from_constraints([a, b])
    assert mp.mpf(c.delta_lower(at)) <= truth <= mp.mpf(c.delta(at))


def test_mix_is_certified():
    """``mix`` of constraint regions: δ at 1.3537 was 2.0891424289063874e-11, below the truth
    2.089142428906392e-11 (oracle, 02:44); the mixture's δ is the weighted sum of its parts'."""
    from lpdp import mix

    w = [0.1937481382798238, 0.8062518617201762]
    parts = [[(1.353663849884786, 1.0782774211172627e-10)],
             [(0.5027013087362389, 0.0), (0.3155109857420506, 9.618681994971612e-10)]]
    m = mix([(PrivacyRegion.from_constraints(c), wi) for wi, c in zip(w, parts, strict=True)])
    for at in (0.0, 0.3155109857420506, 0.9, 1.353663849884786):
        truth = sum(mp.mpf(wi) * lines_delta(c, at) for wi, c in zip(w, parts, strict=True))
        assert mp.mpf(m.delta_lower(at)) <= truth <= mp.mpf(m.delta(at))


@pytest.mark.parametrize("method", ["remark1", "remark2"])
def test_double_dp_baselines_hold_at_the_given_delta(method):
    """The baselines are intersections (``remark1``: of two Kairouz compositions): δ at ε1 of one run was
    1.5302767438843225e-11, below the given δ1 (oracle, 03:00). They contain the exact region."""
    from lpdp.compose import double_dp

    first, second = (2.2480008506639773, 1.530276743884323e-11), (1.1503224447576885, 2.2340814586841042e-11)
    for times, at in ((1, first[0]), (3, 6.660918991012193)):
        r = double_dp(first, second, times, method=method)
        assert mp.mpf(r.delta(at)) >= six_point_delta(first, second, times, at)
    assert double_dp(first, second, 1, method=method).delta(first[0]) >= first[1]


def gaussian_delta_mp(mu: mp.mpf, eps: float) -> mp.mpf:
    """δ(ε) of ``G_μ`` (Balle and Wang, 2018, Theorem 8) at 50 digits."""
    x = mp.mpf(eps)
    return mp.ncdf(-x / mu + mu / 2) - mp.exp(x) * mp.ncdf(-x / mu - mu / 2)


def test_to_pld_of_a_gaussian_is_pessimistic():
    """``to_pld`` of 20 runs of σ = 0.7829873180726312: dp_accounting's Gaussian PLD gave ε(1e-3) =
    33.165405066009285, whose true δ is 1.0000000004950567e-3 (oracle, 02:43)."""
    pytest.importorskip("dp_accounting")
    from lpdp.interop import to_pld
    from lpdp.mechanisms import GaussianMechanism

    sigma, times = 0.7829873180726312, 20
    pld = to_pld(Accountant().compose(GaussianMechanism(sigma), times).guarantee())
    mu = mp.sqrt(times) / mp.mpf(sigma)
    for target in (1e-3, 1e-6, 1e-10):
        assert gaussian_delta_mp(mu, pld.get_epsilon_for_delta(target)) <= target
    for eps in (0.0, 1.0, 17.0, 33.0, 45.0):
        assert mp.mpf(pld.get_delta_for_epsilon(eps)) >= gaussian_delta_mp(mu, eps)


def test_multinomial_lower_side_with_a_tiny_loss():
    """A pair whose losses are about 1e-6 carries an absolute loss error of an ulp of 1 (its quotient's
    rounding), 1e-10 relative: the multinomial trusted 16 u relative, and the lower side of δ(0) of 43
    runs was 6.365577490909089e-05 against the truth 6.3655774905497e-05 (oracle, 04:55)."""
    from lpdp.mechanisms import FiniteMechanism

    p = [0.9999996653607732, 3.346392267733478e-07]
    q = [0.999998184927084, 1.8150729159671641e-06]
    times = 43
    lo, hi = Accountant().compose(FiniteMechanism.from_pair(p, q), times).guarantee().delta(0.0)
    l1, l2 = (mp.log(mp.mpf(a) / mp.mpf(b)) for a, b in zip(p, q, strict=True))
    truth = mp.mpf(0)
    for j in range(times + 1):            # j runs of the first outcome
        loss = j * l1 + (times - j) * l2
        if loss > 0:
            mass = mp.binomial(times, j) * mp.mpf(p[0]) ** j * mp.mpf(p[1]) ** (times - j)
            truth += mass * -mp.expm1(-loss)
    assert mp.mpf(lo) <= truth <= mp.mpf(hi)


@pytest.mark.parametrize("eps, delta", [(0.345531302187094, 5.6114395017769875e-09), (2.099082723404231, 0.0),
                                        (1.1259723627233452e-06, 8.016369890031808e-07), (40.0, 0.0)])
def test_total_variation_eta_is_rounded_up(eps, delta):
    """η = δ + (1 - δ) tanh(ε/2) is a δ of Remark 2's baseline: it was rounded to nearest (an ulp low in
    23 of the oracle's cases, 04:50)."""
    from lpdp.compose.double import total_variation_eta

    eta = total_variation_eta(eps, delta)
    assert mp.mpf(eta) >= mp.mpf(delta) + (1 - mp.mpf(delta)) * mp.tanh(mp.mpf(eps) / 2)
    assert eta <= 1.0
