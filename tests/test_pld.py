"""The certified lattice engine (lpdp.pld.compose) against closed forms and high-precision references."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import optimize

from lpdp import PrivacyRegion
from lpdp._limits import budget
from lpdp.compose.kairouz import homogeneous
from lpdp.compose.multi import compose_regions
from lpdp.errors import ParameterError
from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism, randomized_response
from lpdp.pld import LossLaw, compose
from lpdp.tradeoff import gaussian


def gaussian_law(mu: float) -> LossLaw:
    return GaussianMechanism(1.0 / mu).loss_law()


def laplace_law(r: float) -> LossLaw:
    return LaplaceMechanism(1.0 / r).loss_law()


def rr_law(eps: float) -> LossLaw:
    return randomized_response(2, eps).loss_law()


def gaussian_eps(mu: float, delta: float) -> float:
    """ε with δ_μ(ε) = δ, by root finding on the log of the closed form (to 1e-14)."""
    f = gaussian(mu)
    top = mu * mu / 2 + 12.0 * mu + 1.0
    return optimize.brentq(lambda e: math.log(float(f.delta(e))) - math.log(delta), 0.0, top, xtol=1e-14)


SIGMAS = [(1.0, 2), (2.0, 3), (3.0, 1), (5.0, 4)]
MU_TOT = math.sqrt(sum(k / s**2 for s, k in SIGMAS))


@pytest.fixture(scope="module")
def hetero():
    return compose([(gaussian_law(1.0 / s), k) for s, k in SIGMAS], tolerance=0.01)


def test_heterogeneous_gaussians_contain_closed_form_on_eps_grid(hetero):
    eps = np.linspace(0.0, 8.0, 33)
    lo, hi = hetero.delta(eps)
    exact = np.asarray(gaussian(MU_TOT).delta(eps))
    assert np.all(lo <= exact) and np.all(exact <= hi)
    assert np.all(hi - lo <= 0.05 * exact + 1e-14)


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9, 1e-12])
def test_heterogeneous_gaussians_contain_closed_form_eps(hetero, delta):
    lo, hi = hetero.epsilon([delta])
    exact = gaussian_eps(MU_TOT, delta)
    assert lo[0] <= exact <= hi[0]
    assert hi[0] - lo[0] < 0.1           # non-trivial, also in the deep tail


def _laplace2_reference(r: float, eps: float) -> float:
    """δ(ε) of two Laplace losses, by exact integration of the loss density in 40-digit arithmetic."""
    mpmath.mp.dps = 40
    r, eps = mpmath.mpf(r), mpmath.mpf(eps)
    atoms = [(r, mpmath.mpf(1) / 2), (-r, mpmath.exp(-r) / 2)]

    def dens(x):
        return mpmath.exp((x - r) / 2) / 4

    def tail_cont(c, shift):
        """∫_{l > c} f(l) (1 - e^{eps - shift - l}) dl over (-r, r)."""
        c = max(min(c, r), -r)
        m = (1 - mpmath.exp((c - r) / 2)) / 2
        w = mpmath.exp(eps - shift) * mpmath.exp(-r / 2) / 2 * (mpmath.exp(-c / 2) - mpmath.exp(-r / 2))
        return m - w

    total = mpmath.mpf(0)
    for a, pa in atoms:
        for b, pb in atoms:
            total += pa * pb * max(0, 1 - mpmath.exp(eps - a - b))
        total += 2 * pa * tail_cont(eps - a, a)
    total += mpmath.quad(lambda l1: dens(l1) * tail_cont(eps - l1, l1), [-r, min(max(eps, -r), r), r])
    return float(total)


@pytest.mark.parametrize("r", [0.5, 1.0])
def test_laplace_two_fold_contains_high_precision_reference(r):
    b = compose([(laplace_law(r), 2)], tolerance=2e-4)
    eps = np.array([0.0, 0.3, 0.7, 1.2, 1.9])
    lo, hi = b.delta(eps)
    ref = np.array([_laplace2_reference(r, e) for e in eps])
    assert np.all(lo <= ref) and np.all(ref <= hi)
    assert np.all(hi - lo <= 3e-3 * ref + 1e-12)


def test_finite_on_grid_equals_exact_composition():
    # randomised response with ε = 0.5 and a double-DP region on the lattice 0.25: no rounding at all
    region = PrivacyRegion.from_constraints([(1.0, 0.0), (0.25, 0.05)])
    L = np.array(region.losses)      # masses of negative losses from the mirror edges (full precision)
    law = LossLaw(L, np.where(L >= 0, region.log_p, region.log_q[::-1]), region.log_p_inf)
    b = compose([(rr_law(0.5), 6), (law, 4)], step=0.25)
    exact = compose_regions([(PrivacyRegion.from_dp(0.5, 0.0), 6), (region, 4)], step=0.25)
    eps = np.linspace(0.0, 5.0, 21)
    lo, hi = b.delta(eps)
    ref = np.asarray(exact.delta(eps))
    np.testing.assert_allclose(lo, ref, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(hi, ref, rtol=1e-9, atol=1e-15)


def test_finite_off_grid_is_bracketed():
    b = compose([(rr_law(0.37), 40)], step=0.01)
    ref = homogeneous(0.37, 0.0, 40)
    eps = np.array([0.5, 1.5, 3.0])
    lo, hi = b.delta(eps)
    exact = np.asarray(ref.delta(eps))
    assert np.all(lo <= exact) and np.all(exact <= hi)


def test_fft_error_bound_survives_allowed_and_catches_forbidden_perturbations(monkeypatch):
    """The certified FFT error term is neither violated nor vacuous: a perturbation of every transform
    within the assumed accuracy keeps the reference inside the bracket; one far beyond it does not."""
    import scipy.fft

    import lpdp.pld as pld

    law, k, h = rr_law(0.5), 60, 0.5
    exact = np.asarray(homogeneous(0.5, 0.0, k).delta(np.linspace(0.0, 12.0, 25)))
    eps = np.linspace(0.0, 12.0, 25)
    real_rfft = scipy.fft.rfft
    rng = np.random.default_rng(1)

    def perturbed(size):
        def rfft(x, *a, **kw):
            out = real_rfft(x, *a, **kw)
            bound = size * pld.FFT_RADIX_ERROR * pld._U * pld._radix_sum(len(x)) * float(np.sum(np.abs(x)))
            phase = np.exp(2j * np.pi * rng.random(out.shape))
            return out + bound * phase
        return rfft

    monkeypatch.setattr(scipy.fft, "rfft", perturbed(0.9))
    lo, hi = compose([(law, k)], step=h).delta(eps)
    assert np.all(lo <= exact) and np.all(exact <= hi)
    monkeypatch.setattr(scipy.fft, "rfft", perturbed(1e7))
    lo, hi = compose([(law, k)], step=h).delta(eps)
    assert not (np.all(lo <= exact) and np.all(exact <= hi))


def test_long_double_forward_error_survives_allowed_and_catches_forbidden_perturbations(monkeypatch):
    """The same for a narrow law composed LONG_DOUBLE_COUNT times or more, whose forward transform is taken
    in long double: a perturbation within the long-double error constant is covered, one far beyond it is
    not (1e10 times it: the other error terms, the multiplications' ~6ku and the rounding to double, are
    far larger). The law: a Gaussian of μ = 1e-3 (narrow at the default step), 150 times, against
    G_{μ√150}."""
    import scipy.fft

    import lpdp.pld as pld

    if not pld._U_LONG < pld._U:
        pytest.skip("numpy's long double is a double here")
    k = pld.LONG_DOUBLE_COUNT + 50
    law = gaussian_law(1e-3)
    eps = np.linspace(0.0, 0.04, 9)
    mpmath.mp.dps = 30
    mu = mpmath.sqrt(k) / 1000
    exact = np.array([float(mpmath.ncdf(-e / mu + mu / 2) - mpmath.e ** e * mpmath.ncdf(-e / mu - mu / 2))
                      for e in map(mpmath.mpf, eps)])
    real_rfft = scipy.fft.rfft
    rng = np.random.default_rng(2)
    seen = []

    def perturbed(size):
        def rfft(x, *a, **kw):
            out = real_rfft(x, *a, **kw)
            if np.asarray(x).dtype == np.longdouble:
                seen.append(len(x))
                bound = (size * pld.FFT_RADIX_ERROR * pld._U_LONG * pld._radix_sum(len(x))
                         * float(np.sum(np.abs(x))))
                out = out + bound * np.exp(2j * np.pi * rng.random(out.shape))
            return out
        return rfft

    monkeypatch.setattr(scipy.fft, "rfft", perturbed(0.9))
    lo, hi = compose([(law, k)]).delta(eps)
    assert seen and np.all(lo <= exact) and np.all(exact <= hi)
    monkeypatch.setattr(scipy.fft, "rfft", perturbed(1e10))
    lo, hi = compose([(law, k)]).delta(eps)
    assert not (np.all(lo <= exact) and np.all(exact <= hi))


def test_bad_parts_and_memory_refusal():
    with pytest.raises(ParameterError, match="parts"):
        compose([])
    with pytest.raises(ParameterError, match=r"parts\[0\]"):
        compose([(1.0, 2)])
    with pytest.raises(ParameterError, match="count"):
        compose([(gaussian_law(1.0), -1)])
    with pytest.raises(ParameterError, match="step"):
        compose([(gaussian_law(1.0), 1)], step=-1.0)
    with budget(memory_gb=0.001), pytest.raises(ParameterError, match="memory"):
        compose([(gaussian_law(1.0), 10)], step=1e-5)


@pytest.mark.deep
@pytest.mark.parametrize("sigma,k", [(2.0, 1000), (1.0, 10000)])
def test_large_self_composition_contains_closed_form(sigma, k):
    b = compose([(gaussian_law(1.0 / sigma), k)])
    mu = math.sqrt(k) / sigma
    for d in (1e-5, 1e-9, 1e-12):
        lo, hi = b.epsilon([d])
        assert lo[0] <= gaussian_eps(mu, d) <= hi[0]


def test_deep_tail_of_a_laplace_and_rr_workload_answers_within_dp_accounting():
    """ε at δ = 1e-12 of 5 Laplace + 20 four-ary RR once overflowed (a far tilt's noise above e^709)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    from lpdp.accountant import Accountant
    from lpdp.mechanisms import LaplaceMechanism, randomized_response
    from tests.oracles import pld_from_region

    rr = randomized_response(4, 0.7)
    g = Accountant().compose(LaplaceMechanism(1.0), 5).compose(rr, 20).guarantee()
    (lo,), (hi,) = g.epsilon([1e-12])
    assert math.isfinite(hi) and lo <= hi
    ref = {}
    for pess in (True, False):
        lap = pld_lib.from_laplace_mechanism(1.0, value_discretization_interval=1e-4,
                                             pessimistic_estimate=pess).self_compose(5)
        rr_pld = pld_from_region(rr.region(), pessimistic=pess).self_compose(20)
        ref[pess] = lap.compose(rr_pld).get_epsilon_for_delta(1e-12)
    # the PLD's optimistic ε is at most the truth, hence at most our guarantee; its pessimistic ε is at
    # least our attack bound (up to its own deep-tail rounding, allowed 1e-3 relative)
    assert ref[False] <= hi
    assert lo <= ref[True] * (1 + 1e-3)
