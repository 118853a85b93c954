"""Trade-off functions (spec §6): closed forms from scipy.stats, finite differences, quadrature of the
hockey-stick divergence, the normal rotation's geometry, and the bad-input contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from lpdp import ParameterError
from lpdp.tradeoff import from_callable, gaussian, laplace

T = np.concatenate([np.geomspace(1e-9, 1e-2, 15), np.linspace(0.02, 0.98, 25)])


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_closed_form_and_derivatives(mu):
    f = gaussian(mu)
    norm = stats.norm
    np.testing.assert_allclose(f(T), norm.cdf(norm.isf(T) - mu), rtol=1e-10, atol=1e-300)
    # Chain rule on scipy's quantile: f'(t) = -φ(Φ^{-1}(1-t) - μ) / φ(Φ^{-1}(1-t)), at every t.
    zq = norm.isf(T)
    np.testing.assert_allclose(f.derivative(T), -norm.pdf(zq - mu) / norm.pdf(zq), rtol=1e-9)
    # Finite differences where they are accurate (t away from 0 and 1).
    tm = T[(T > 1e-3) & (T < 0.99)]
    h = 1e-6
    fd = (norm.cdf(norm.isf(tm + h) - mu) - norm.cdf(norm.isf(tm - h) - mu)) / (2 * h)
    np.testing.assert_allclose(f.derivative(tm), fd, rtol=1e-5)
    d1 = np.asarray(f.derivative(tm + h)) - np.asarray(f.derivative(tm - h))
    np.testing.assert_allclose(f.second_derivative(tm), d1 / (2 * h), rtol=1e-4)
    assert math.isclose(f.fixed_point, norm.cdf(-mu / 2), rel_tol=1e-12)
    assert math.isclose(float(f(f.fixed_point)), f.fixed_point, rel_tol=1e-10)
    assert f.f0 == 1.0


def test_fixed_point_of_g1_matches_spec():
    assert round(gaussian(1.0).fixed_point, 6) == 0.308538


def _hockey_stick(logpdf_p, logpdf_q, eps: float, lo: float, hi: float, breaks: list[float]) -> float:
    def integrand(y: float) -> float:
        return max(0.0, math.exp(logpdf_p(y)) - math.exp(eps + logpdf_q(y)))

    return sum(integrate.quad(integrand, a, b, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
               for a, b in zip([lo, *breaks], [*breaks, hi], strict=True))


@pytest.mark.parametrize("mu, eps", [(1.0, 0.0), (1.0, 1.0), (0.5, 2.0), (3.0, 0.3), (3.0, 6.0)])
def test_gaussian_profile_is_the_hockey_stick_of_two_normals(mu, eps):
    want = _hockey_stick(lambda y: stats.norm.logpdf(y, mu), stats.norm.logpdf, eps, -40, 40,
                         [eps / mu + mu / 2])
    assert math.isclose(float(gaussian(mu).delta(eps)), want, rel_tol=1e-8, abs_tol=1e-14)


@pytest.mark.parametrize("b, eps", [(1.0, 0.0), (1.0, 0.5), (0.5, 1.9), (2.0, 0.1), (1.0, 1.2)])
def test_laplace_profile_is_the_hockey_stick_of_two_laplaces(b, eps):
    want = _hockey_stick(lambda y: stats.laplace.logpdf(y, 1.0, b), lambda y: stats.laplace.logpdf(y, 0.0, b),
                         eps, -60 * b, 60 * b, [0.0, 1.0])
    assert math.isclose(float(laplace(b).delta(eps)), want, rel_tol=1e-8, abs_tol=1e-14)


@pytest.mark.parametrize("b", [0.3, 1.0, 4.0])
def test_laplace_tradeoff_is_neyman_pearson(b):
    # Type II error of the threshold test with type I error t, from the Laplace cdfs directly: the
    # likelihood ratio is non-decreasing in y (constant outside [0, 1], where any threshold is optimal).
    f = laplace(b)
    for t in np.linspace(0.001, 0.999, 41):
        want = stats.laplace.cdf(stats.laplace.isf(t, 0.0, b), 1.0, b)
        assert math.isclose(float(f(t)), want, rel_tol=1e-9, abs_tol=1e-12), t
    assert math.isclose(f.fixed_point, float(f(f.fixed_point)), rel_tol=1e-12)


@pytest.mark.parametrize("make", [lambda: gaussian(1.0), lambda: gaussian(2.0), lambda: laplace(0.7)])
def test_normal_rotation(make):
    f = make()
    z = f.z
    u = np.linspace(z * 0.999, -z * 0.999, 41)
    g = np.asarray(f.g(u))
    np.testing.assert_allclose(g, np.asarray(f.g(-u)), rtol=1e-9, atol=1e-12)        # even
    # The rotated point lies on the graph of f: x = (u+v)/√2, y = (v-u)/√2 with y = f(x).
    x, y = (u + g) / math.sqrt(2), (g - u) / math.sqrt(2)
    np.testing.assert_allclose(np.asarray(f(np.clip(x, 0, 1))), y, atol=1e-12)
    assert math.isclose(float(f.g(0.0)), math.sqrt(2) * f.fixed_point, rel_tol=1e-10)
    assert math.isclose(float(f.g(z)), -z, rel_tol=1e-10)
    inner = u[np.abs(u) < 0.9 * -z]
    h = 1e-6
    np.testing.assert_allclose(f.g_prime(inner), (np.asarray(f.g(inner + h)) - np.asarray(f.g(inner - h)))
                               / (2 * h), atol=2e-6)


def test_g_second_matches_finite_differences_of_g_prime():
    f = gaussian(1.0)
    u = np.linspace(-0.6, 0.6, 13)
    h = 1e-5
    fd = (np.asarray(f.g_prime(u + h)) - np.asarray(f.g_prime(u - h))) / (2 * h)
    np.testing.assert_allclose(f.g_second(u), fd, rtol=1e-5)


def test_from_callable_matches_the_closed_form():
    g = gaussian(1.5)
    f = from_callable(lambda t: stats.norm.cdf(stats.norm.isf(t) - 1.5), name="gauss")
    t = np.linspace(0.01, 0.99, 23)
    np.testing.assert_allclose(f.derivative(t), g.derivative(t), rtol=1e-6)
    np.testing.assert_allclose(f.second_derivative(t), g.second_derivative(t), rtol=1e-4)
    assert math.isclose(f.fixed_point, g.fixed_point, rel_tol=1e-10)
    np.testing.assert_allclose(f.delta([0.0, 0.5, 2.0]), g.delta([0.0, 0.5, 2.0]), rtol=1e-9)
    assert f.composed(3) is None
    assert gaussian(1.5).composed(4).fixed_point == pytest.approx(stats.norm.cdf(-1.5))


@pytest.mark.parametrize("call, match", [
    (lambda: gaussian(0.0), r"mu=0.0: must be finite and > 0"),
    (lambda: gaussian(-1.0), r"mu=-1.0: must be finite and > 0"),
    (lambda: gaussian(float("nan")), r"mu=nan"),
    (lambda: laplace(0), r"b=0: must be finite and > 0"),
    (lambda: from_callable(lambda t: np.maximum(0.0, 1 - 2 * t), name="skew"), r"f=skew: must be symmetric"),
    (lambda: from_callable(lambda t: 1 - t ** 2, name="concave"), r"f=concave: must be convex"),
    (lambda: from_callable(lambda t: 0.5 + 0 * t, name="flat"), r"f=flat: must be within"),
    (lambda: from_callable(lambda t: t, name="up"), r"f=up: must be non-increasing"),
    (lambda: from_callable(lambda t: 1 / 0, name="boom"), r"f=boom: calling it on \[0, 1\] failed"),
    (lambda: gaussian(1.0)(1.5), r"t=1.5: must be in \[0, 1\]"),
    (lambda: gaussian(1.0)(float("nan")), r"t=nan: must be in \[0, 1\]"),
    (lambda: gaussian(1.0)(-0.5), r"t=-0.5: must be in \[0, 1\]"),
    (lambda: gaussian(1.0).delta(-1.0), r"epsilon=-1.0: must be finite and >= 0"),
    (lambda: gaussian(1.0).g(2.0), r"u=2.0: must be in \[z, -z\]"),
    (lambda: gaussian(1.0).composed(0), r"k=0: must be an integer >= 1"),
])
def test_bad_input(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_composed_mu_is_at_or_above_the_exact_root_and_never_underflows():
    """sqrt(Σ k μ²) against 60-digit mpmath, no tolerance on the unsafe side; μ = 1e-300 (σ = 1e300) no
    longer composes to 0."""
    import mpmath

    from lpdp.tradeoff import composed_mu

    mpmath.mp.dps = 60
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        parts = [(float(10.0 ** rng.uniform(-305, 3)), int(rng.integers(1, 10**6))) for _ in range(n)]
        exact = mpmath.sqrt(mpmath.fsum(k * mpmath.mpf(mu) ** 2 for mu, k in parts))
        got = composed_mu(parts)
        assert mpmath.mpf(got) >= exact and mpmath.mpf(got) <= exact * (1 + mpmath.mpf(2) ** -48)


def test_laplace_profile_is_certified_from_above_against_mpmath():
    """δ(ε) = 1 - e^{(ε - r)/2} of Lap(0, b) vs Lap(s, b), r = s/b, against 50-digit mpmath on the exact
    ratio of the given doubles: never below (no tolerance), within float error above; 0 from ε = r on
    when s/b is exact (b = 1, 0.5, 4), and for the mechanism's trade-off (the same ratio)."""
    import mpmath

    from lpdp.mechanisms import LaplaceMechanism

    mpmath.mp.dps = 50
    rng = np.random.default_rng(11)
    cases = [(b, 1.0) for b in (0.3, 1 / 3, 0.5, 1.0, 2.5, 4.0)]
    cases += [(float(rng.uniform(0.05, 5.0)), float(rng.uniform(0.1, 3.0))) for _ in range(12)]
    below, loose = [], []
    for b, s in cases:
        exact_r = mpmath.mpf(s) / mpmath.mpf(b)
        r = s / b
        at = [*np.linspace(0.0, r, 60)[:-1], r * (1 - 1e-13), math.nextafter(r, 0.0), r,
              math.nextafter(r, math.inf), 2 * r]
        for f in (laplace(b, sensitivity=s), LaplaceMechanism(b, sensitivity=s).tradeoff()):
            for eps in at:
                got = mpmath.mpf(float(f.delta(float(eps))))
                truth = max(mpmath.mpf(0), 1 - mpmath.exp((mpmath.mpf(eps) - exact_r) / 2))
                if got < truth:
                    below.append((b, s, eps, float(got), float(truth)))
                if got - truth > 8 * 2.0 ** -53 * (truth + r):
                    loose.append((b, s, eps, float(got), float(truth)))
    assert not below, below[:5]
    assert not loose, loose[:5]
    for b in (0.5, 1.0, 4.0):                       # 1/b exact: nothing above the true 0 at ε = r
        assert laplace(b).delta(1 / b) <= 0.0
