"""The one-sided certified discretisation of lpdp.pld.compose: Gaussian + finite workloads against their exact
truth (a Gaussian shifted by each exact atom of the finite part's composition, in 40-digit arithmetic), and
the accuracy the Gaussian and Laplace loss laws state for their tails."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from lpdp.mechanisms import DPMechanism, GaussianMechanism, LaplaceMechanism, randomized_response
from lpdp.pld import LossLaw, compose

mpmath.mp.dps = 40


def _finite_composition(parts: list[tuple[LossLaw, int]]) -> tuple[list[tuple[mpmath.mpf, mpmath.mpf]],
                                                                   mpmath.mpf]:
    """Exact atoms (loss, P-mass) of the composition of discrete laws, and its P-mass at +inf."""
    atoms: dict[float, tuple[mpmath.mpf, mpmath.mpf]] = {0.0: (mpmath.mpf(0), mpmath.mpf(1))}
    finite = mpmath.mpf(1)
    for law, k in parts:
        one = [(mpmath.mpf(float(loss)), mpmath.exp(mpmath.mpf(float(lp))))
               for loss, lp in zip(law.losses, law.log_p, strict=True)]
        if law.log_p_inf > -math.inf:
            finite *= (1 - mpmath.exp(mpmath.mpf(law.log_p_inf))) ** k
        for _ in range(k):
            nxt: dict[float, tuple[mpmath.mpf, mpmath.mpf]] = {}
            for (a, pa), (b, pb) in itertools.product(atoms.values(), one):
                key = round(float(a + b), 9)      # groups equal sums; the loss itself stays exact
                nxt[key] = (a + b, nxt.get(key, (0, mpmath.mpf(0)))[1] + pa * pb)
            atoms = nxt
    return list(atoms.values()), 1 - finite


def _gauss_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _truth(mu: float, atoms, p_inf) -> callable:
    m = mpmath.mpf(mu)

    def delta(eps: float) -> mpmath.mpf:
        e = mpmath.mpf(eps)
        return p_inf + sum(p * _gauss_delta(m, e - loss) for loss, p in atoms)

    return delta


def _truth_epsilon(delta_fn, target: float, top: float) -> float:
    lo, hi = mpmath.mpf(-5), mpmath.mpf(top)
    for _ in range(70):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_fn(mid) > target else (lo, mid)
    return float(hi)


WORKLOADS = {
    "3 Gaussians s=2 + 2 RR(1) + 3 four-ary RR(0.7)": (
        [(GaussianMechanism(2.0), 3)], [(randomized_response(2, 1.0), 2), (randomized_response(4, 0.7), 3)]),
    "5 Gaussians s=3 + 2 (1,0)^(0.5,0.1)": (
        [(GaussianMechanism(3.0), 5)], [(DPMechanism([(1.0, 0.0), (0.5, 0.1)]), 2)]),
}


@pytest.fixture(scope="module", params=list(WORKLOADS))
def case(request):
    gauss, finite = WORKLOADS[request.param]
    mu = math.sqrt(sum(k * m.mu ** 2 for m, k in gauss))
    laws = [(m.loss_law(), k) for m, k in gauss + finite]
    atoms, p_inf = _finite_composition([(m.loss_law(), k) for m, k in finite])
    bracket = compose(laws, tolerance=5e-4)
    return bracket, _truth(mu, atoms, p_inf), mu


def test_gaussian_plus_finite_contains_exact_truth_on_eps_grid(case):
    bracket, truth, _ = case
    assert bracket.one_sided
    eps = np.linspace(-1.0, 7.0, 17)
    lo, hi = bracket.delta(eps)
    ref = np.array([float(truth(e)) for e in eps])
    assert np.all(lo <= ref) and np.all(ref <= hi)
    assert np.all(hi - lo <= 1e-2 * ref + 1e-13)        # informative, not only contained


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9, 1e-12])
def test_gaussian_plus_finite_contains_exact_truth_eps(case, delta):
    """lower <= ε(δ) <= upper, checked exactly through the truth's monotone δ(ε) at both answers."""
    bracket, truth, _ = case
    (lo,), (hi,) = bracket.epsilon([delta])
    assert truth(hi) <= delta <= truth(lo)
    assert hi - lo < 5e-3


def test_one_sided_upper_is_closer_than_the_coupling_bound():
    """The upper side of the one-sided route is within a few 1e-6 of the closed form where the coupling
    bound of the same laws without their Q tails spends its width around the truth."""
    g = GaussianMechanism(2.0).loss_law()
    plain = LossLaw(log_sf=g.log_sf, log_cdf=g.log_cdf)          # no Q tails: the coupling route
    mu = math.sqrt(20) / 2.0
    truth = _truth(mu, [(mpmath.mpf(0), mpmath.mpf(1))], mpmath.mpf(0))
    exact = _truth_epsilon(truth, 1e-6, mu * mu / 2 + 12 * mu + 10)
    one, two = compose([(g, 20)], tolerance=2e-3), compose([(plain, 20)], tolerance=2e-3)
    assert one.one_sided and not two.one_sided
    up1, up2 = one.upper.epsilon(1e-6), two.upper.epsilon(1e-6)
    assert exact <= up1 < exact + 3e-4 and exact <= up2
    assert up1 - exact < (up2 - exact) / 3


def _log_tail_ref(kind: str, c: float, scale: float) -> mpmath.mpf:
    c = mpmath.mpf(c)
    if kind == "gauss_sf":        # L ~ N(mu²/2, mu²), mu = 1 / scale
        mu = 1 / mpmath.mpf(scale)
        return mpmath.log(mpmath.ncdf((mu * mu / 2 - c) / mu))
    if kind == "gauss_cdf_q":     # under Q: N(-mu²/2, mu²)
        mu = 1 / mpmath.mpf(scale)
        return mpmath.log(mpmath.ncdf((c + mu * mu / 2) / mu))
    r = 1 / mpmath.mpf(scale)
    if kind == "lap_sf":
        return mpmath.log((1 - mpmath.exp((c - r) / 2)) / 2)
    return mpmath.log((mpmath.exp((c + r) / 2) - 1) / 2) - r          # lap_cdf


@pytest.mark.parametrize("kind,scale", [("gauss_sf", 1.0), ("gauss_sf", 0.3), ("gauss_cdf_q", 2.0),
                                        ("lap_sf", 1.0), ("lap_cdf", 0.05), ("lap_cdf", 2.0)])
def test_gaussian_and_laplace_tails_meet_their_stated_accuracy(kind, scale):
    """Each mass is within ``rtol + rtol_log |log mass|`` of a 40-digit reference (the error model the
    certified engine relies on), over the whole range the engine evaluates."""
    if kind.startswith("gauss"):
        law = GaussianMechanism(scale).loss_law()
        mu = 1.0 / scale
        c = np.linspace(-mu * mu / 2 - 40 * mu, mu * mu / 2 + 40 * mu, 801)
    else:
        law = LaplaceMechanism(scale).loss_law()
        r = 1.0 / scale
        c = np.linspace(-r, r, 801)[1:-1]
    fn = {"gauss_sf": law.log_sf, "gauss_cdf_q": law.log_cdf_q, "lap_sf": law.log_sf,
          "lap_cdf": law.log_cdf}[kind]
    got = fn(c)
    for ci, gi in zip(c, got, strict=True):
        ref = _log_tail_ref(kind, float(ci), scale)
        if ref < -740:          # below double range: the engine treats such a tail as 0
            continue
        assert abs(float(gi - ref)) <= law.rtol + law.rtol_log * abs(float(ref)), (ci, float(gi), float(ref))


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_laplace_one_fold_contains_closed_form(scale):
    """One Laplace mechanism: ``δ(ε) = 1 - e^{(ε - r)/2}`` on ``[0, r]`` and 0 above (r = 1 / scale), in
    40 digits; both sides of the one-sided route contain it on an ε grid and at δ down to 1e-12."""
    r = mpmath.mpf(1) / mpmath.mpf(scale)
    b = compose([(LaplaceMechanism(scale).loss_law(), 1)])
    assert b.one_sided
    eps = np.linspace(0.0, 1.2 * float(r), 13)
    lo, hi = b.delta(eps)
    ref = [max(mpmath.mpf(0), 1 - mpmath.exp((mpmath.mpf(float(e)) - r) / 2)) for e in eps]
    assert all(mpmath.mpf(float(a)) <= t <= mpmath.mpf(float(c)) for a, t, c in zip(lo, ref, hi, strict=True))
    for delta in (1e-3, 1e-6, 1e-9, 1e-12):
        (e_lo,), (e_hi,) = b.epsilon([delta])
        exact = r + 2 * mpmath.log1p(-mpmath.mpf(delta))       # δ(ε) = δ solved exactly
        assert mpmath.mpf(float(e_lo)) <= exact <= mpmath.mpf(float(e_hi))
        assert e_hi - e_lo < 1e-3       # an off-grid atom (r = 1/3) costs the lower side its coupling


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_epsilon_first_from_a_placed_tilt_contains_exact_truth(name):
    """A fresh bracket asked ε at small δ first answers from lattices tilted at an estimate of the answer
    (no untilted lattice yet); both sides still contain the exact truth, and so do δ queries after them."""
    gauss, finite = WORKLOADS[name]
    mu = math.sqrt(sum(k * m.mu ** 2 for m, k in gauss))
    truth = _truth(mu, *_finite_composition([(m.loss_law(), k) for m, k in finite]))
    bracket = compose([(m.loss_law(), k) for m, k in gauss + finite], tolerance=5e-4)
    (lo, lo_deep), (hi, hi_deep) = bracket.epsilon([1e-6, 1e-11])
    assert truth(hi) <= 1e-6 <= truth(lo) and truth(hi_deep) <= 1e-11 <= truth(lo_deep)
    assert hi - lo < 5e-3 and hi_deep - lo_deep < 5e-3
    eps = np.array([0.5, lo, hi_deep])
    d_lo, d_hi = bracket.delta(eps)
    ref = [truth(e) for e in eps]
    assert all(a <= t <= b for a, t, b in zip(d_lo, ref, d_hi, strict=True))


def test_several_small_deltas_share_one_tilted_lattice_per_side():
    """ε at several small δ in one call: one lattice per side, tilted between the answers and sized for the
    smallest δ, certifies every answer as tightly as a fresh bracket asked one δ at a time (which tilts one
    lattice per δ); both sides contain the closed form."""
    from lpdp.tradeoff import gaussian_epsilon

    law, k, deltas, mu = GaussianMechanism(2.0).loss_law(), 100, [1e-5, 1e-9], 5.0
    joint = compose([(law, k)])
    lo, hi = joint.epsilon(deltas)
    assert len(joint._up._lattices) == 1 and len(joint._down._lattices) == 1
    for d, a, b in zip(deltas, lo, hi, strict=True):
        assert a <= gaussian_epsilon(d, mu, "lower") <= gaussian_epsilon(d, mu) <= b
        alone = compose([(law, k)])
        (a1,), (b1,) = alone.epsilon([d])
        assert len(alone._up._lattices) == 1
        assert abs(b - b1) < 1e-7 and abs(a - a1) < 1e-7


def test_default_upper_step_follows_a_coarse_lower_step_and_stays_closer_than_its_share():
    """Gaussian σ = 4, k = 1000: the lower step is 0.005, so the upper step is 0.005 / UPPER_RATIO = 1e-4
    (not UPPER_STEP = 5e-5); the upper side still lies within 3e-4 of the width above the closed form."""
    from lpdp.pld import UPPER_RATIO, UPPER_STEP
    from lpdp.tradeoff import gaussian_epsilon

    b = compose([(GaussianMechanism(4.0).loss_law(), 1000)])
    assert math.isclose(b.lower_step, 0.005, rel_tol=1e-12) and math.isclose(b.step, 1e-4, rel_tol=1e-12)
    assert UPPER_STEP < b.step <= b.lower_step / UPPER_RATIO
    lo, hi = b.epsilon([1e-5, 1e-9])
    mu = math.sqrt(1000) / 4
    for d, a, c in zip([1e-5, 1e-9], lo, hi, strict=True):
        assert a <= gaussian_epsilon(d, mu, "lower") <= gaussian_epsilon(d, mu) <= c
        assert c - gaussian_epsilon(d, mu, "lower") <= 1e-3 * (c - a)
