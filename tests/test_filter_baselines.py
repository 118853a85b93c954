"""Mechanism-level baselines (spec filter.md §2) against hand-derived stopping times, dp_accounting and
quadrature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from lpdp.errors import BudgetExhaustedError, ParameterError
from lpdp.filters import GaussianMechanism, binary_erasure
from lpdp.filters.baselines import (
    AdditiveFilter,
    AdvancedFilter,
    ConcentratedFilter,
    RenyiFilter,
    baselines,
    classical_rounds,
    gaussian_delta,
    gaussian_epsilon,
)

CASES = [(2.0, 6.0, 1e-3), (2.0, 10.0, 1e-3), (1.0, 3.0, 1e-5), (4.0, 2.0, 1e-2), (2.0, 12.0, 1e-3)]


def delta_by_quadrature(eps, mu):
    """E[(1 - e^{ε - L})_+] with L ~ N(μ²/2, μ²), integrated numerically."""
    f = lambda x: (1 - math.exp(eps - x)) * stats.norm.pdf(x, mu * mu / 2, mu)  # noqa: E731
    return integrate.quad(f, eps, eps + 40 * mu, epsabs=1e-15, epsrel=1e-11)[0]


@pytest.mark.parametrize("eps, mu", [(0.0, 0.5), (1.0, 1.0), (2.0, 0.5), (6.0, 0.5 * math.sqrt(11))])
def test_balle_wang_against_quadrature(eps, mu):
    assert gaussian_delta(eps, mu) == pytest.approx(delta_by_quadrature(eps, mu), rel=1e-8)
    e = gaussian_epsilon(gaussian_delta(eps, mu), mu)
    assert e == pytest.approx(eps, abs=1e-8)


@pytest.mark.parametrize("sigma, eps, delta", CASES)
def test_renyi_closed_form(sigma, eps, delta):
    mu2 = 1 / sigma**2
    big_l = math.log(1 / delta)
    closed = math.floor((math.sqrt(big_l + eps) - math.sqrt(big_l)) ** 2 / (mu2 / 2))
    assert baselines(GaussianMechanism(sigma), eps, delta)["renyi"].rounds == closed
    # brute force over the order: max over α of ⌊(ε - L/(α-1)) / (α μ²/2)⌋
    alphas = 1 + np.geomspace(1e-3, 1e3, 200_001)
    brute = np.max(np.floor((eps - big_l / (alphas - 1)) / (alphas * mu2 / 2)))
    assert closed == max(0, int(brute))


@pytest.mark.parametrize("sigma, eps, delta", CASES)
def test_additive_and_advanced_by_hand(sigma, eps, delta):
    mu = 1 / sigma
    b = baselines(GaussianMechanism(sigma), eps, delta)
    k = b["additive"].rounds
    assert k == 0 or k * delta_by_quadrature(eps / k, mu) <= delta * (1 + 1e-9)
    assert (k + 1) * delta_by_quadrature(eps / (k + 1), mu) > delta

    def rruv_ok(k):  # Theorem 5.1 transcribed from the spec, with e_i the least for k δ_G <= δ/2
        e = gaussian_epsilon(delta / (2 * k), mu)
        c = 28.04 * math.log(1 / delta)
        big_k = k * e * (math.exp(e) - 1) / 2 + math.sqrt(
            (k * e * e + eps**2 / c) * (2 + math.log(c * k * e * e / eps**2 + 1)) * math.log(2 / delta))
        return big_k <= eps

    k = b["advanced"].rounds
    assert (k == 0 or rruv_ok(k)) and not rruv_ok(k + 1)


def test_classical_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld

    acc = pld.from_gaussian_mechanism(standard_deviation=2.0, sensitivity=1.0,
                                      value_discretization_interval=1e-4)
    k = classical_rounds(0.5, 6.0, 1e-3)
    assert acc.self_compose(k).get_delta_for_epsilon(6.0) <= 1e-3
    assert acc.self_compose(k + 1).get_delta_for_epsilon(6.0) > 1e-3


def test_spec_statements_at_epsilon_6():
    b = baselines(GaussianMechanism(2.0), 6.0, 1e-3)
    assert b["advanced"].rounds == 0  # "the advanced filter releases nothing"
    assert b["additive"].rounds < b["renyi"].rounds < b["classical"].rounds


@pytest.mark.parametrize("sigma, eps, delta", CASES)
def test_each_baseline_filter_grants_exactly_its_rounds(sigma, eps, delta):
    g = GaussianMechanism(sigma)
    rng = np.random.default_rng(0)
    for name, b in baselines(GaussianMechanism(sigma), eps, delta).items():
        if b.filter is None:
            assert name == "classical" or b.rounds == 0
            continue
        f = type(b.filter)(**b.filter.config())
        while f.ask(g):
            f.record(float(g.sample(1.0, rng)))
        assert f.steps == b.rounds, name
        with pytest.raises(BudgetExhaustedError, match="would pass the budget"):
            f.ask(g)


def test_charged_reports_the_sums():
    f = RenyiFilter(6.0, 1e-3, alpha=4.0)
    g = GaussianMechanism(2.0)
    for _ in range(3):
        assert f.ask(g)
        f.record(0.0)
    assert f.spent() == {"rdp": pytest.approx(3 * 4.0 * 0.25 / 2)}
    a = AdditiveFilter(6.0, 1e-3, round_epsilon=2.0)
    assert a.ask(g)
    assert a.spent() == {"epsilon": 2.0, "delta": pytest.approx(delta_by_quadrature(2.0, 0.5))}
    assert not AdditiveFilter(6.0, 1e-3, round_epsilon=1.0).ask(g)  # δ_G(1) = 6.9e-3 > δ


@pytest.mark.parametrize("make, match", [
    (lambda: RenyiFilter(6.0, 1e-3, alpha=1.0), r"alpha=1\.0: must be finite and > 1"),
    (lambda: RenyiFilter(6.0, 0.0, alpha=2.0), r"delta=0\.0"),
    (lambda: ConcentratedFilter(6.0, 0.0), r"delta=0\.0"),
    (lambda: AdvancedFilter(0.0, 1e-3, 1.0), r"epsilon=0\.0"),
    (lambda: AdditiveFilter(6.0, 1e-3, round_epsilon=-1.0), r"round_epsilon=-1\.0"),
    (lambda: ConcentratedFilter(6.0, 1e-3).ask(binary_erasure(0.1)), r"is not zCDP"),
    (lambda: baselines(GaussianMechanism(2.0), 0.0, 1e-3), r"epsilon=0\.0"),
    (lambda: baselines(GaussianMechanism(2.0), 6.0, 0.0), r"delta=0\.0"),
    (lambda: gaussian_delta(-1.0, 1.0), r"epsilon=-1\.0"),
    (lambda: gaussian_epsilon(1e-3, 0.0), r"mu=0\.0"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ParameterError, match=match):
        make()


@pytest.mark.parametrize("p, delta", [(0.01, 0.1), (0.002, 1e-2)])
def test_classical_rounds_of_binary_erasure(p, delta):
    """Losses 0 and ±inf only: δ(ε) of k rounds is the chance of a clear release, 1 - (1 - p)^k."""
    b = baselines(binary_erasure(p), 1.0, delta)["classical"]
    k = 0
    while 1.0 - (1.0 - p) ** (k + 1) <= delta:
        k += 1
    assert (b.rounds, b.at_least) == (k, False)
