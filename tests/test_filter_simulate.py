"""Survival curves: quadrature against Monte Carlo, and the statements of the paper's Figure 2
(spec filter.md §3)."""

from __future__ import annotations

import pytest

from lpdp.errors import ParameterError
from lpdp.filters import (
    GaussianMechanism,
    RealisationFilter,
    UnionBoundFilter,
    optimal_parameters,
    randomized_response,
)
from lpdp.filters.baselines import RenyiFilter
from lpdp.filters.simulate import comparison, survival


@pytest.fixture(scope="module")
def fig6():
    return comparison(GaussianMechanism(2.0), 6.0, 1e-3, 48, trajectories=60_000, seed=4)


def assert_curves_agree(exact, mc):
    assert len(exact.survival) == len(mc.survival)
    for s, m, se in zip(exact.survival, mc.survival, mc.stderr, strict=True):
        assert abs(s - m) <= 5 * max(se, 1e-3)
    assert abs(exact.expected_T - mc.expected_T) <= 5 * mc.expected_T_stderr


@pytest.mark.parametrize("name", ["realisation", "union"])
def test_quadrature_and_monte_carlo_agree(fig6, name):
    exact, mc = fig6.curves[name], fig6.monte_carlo[name]
    assert exact.method == "quadrature" and mc.method == "monte-carlo"
    assert 1 < exact.expected_T < 47  # a curve that actually varies
    assert_curves_agree(exact, mc)


def test_agreement_at_epsilon_10():
    p = optimal_parameters(1e-3, 48)
    f = RealisationFilter(10.0, 1e-3, 48, p.delta_tilde, p.theta)
    g = GaussianMechanism(2.0)
    assert_curves_agree(survival(f, g), survival(f, g, method="monte-carlo", trajectories=40_000))


def test_exact_dp_survival_against_monte_carlo():
    rr = randomized_response(2, 0.8)
    f = UnionBoundFilter(3.0, 0.2, 12, pairs=[(0, 1)])
    exact = survival(f, rr)
    assert exact.method == "exact" and 2 < exact.expected_T < 11
    assert_curves_agree(exact, survival(f, rr, method="monte-carlo", trajectories=40_000, seed=3))


def test_figure_2_statements(fig6):
    """Spec §3: the realisation-level curve dips below Rényi's only for t = 4..7; the advanced filter
    releases nothing; E[T] ≈ 15.8 (paper's filter) and 28.6 (union bound)."""
    real, renyi = fig6.curves["realisation"].survival, fig6.curves["renyi"].survival
    below = [t for t in range(1, 49) if real[t - 1] < renyi[t - 1] - 1e-3]
    assert below == [4, 5, 6, 7]
    assert fig6.curves["advanced"].expected_T == 0
    e = fig6.expected_releases()
    assert round(e["realisation"], 1) == 15.8 and round(e["union"], 1) == 28.6
    assert e["realisation"] > e["renyi"] > e["additive"]


def test_n48_maximises_expected_releases_at_epsilon_6():
    g = GaussianMechanism(2.0)
    e = {n: comparison(g, 6.0, 1e-3, n, trajectories=0).expected_releases()["realisation"]
         for n in (24, 48, 96)}
    assert e[48] > e[24] and e[48] > e[96]


def test_at_small_epsilon_at_most_one_release():
    c = comparison(GaussianMechanism(2.0), 4.0, 1e-3, 48, trajectories=0)
    assert c.curves["realisation"].expected_T <= 1.0


def test_mechanism_level_survival_is_a_step():
    s = survival(RenyiFilter(6.0, 1e-3, alpha=4.0), GaussianMechanism(2.0), horizon=10)
    assert s.survival == (1.0,) * 7 + (0.0,) * 3 and s.method == "deterministic"
    with pytest.raises(ParameterError, match="horizon=None"):
        survival(RenyiFilter(6.0, 1e-3, alpha=4.0), GaussianMechanism(2.0))
    with pytest.raises(ParameterError, match="horizon=5: must equal"):
        survival(UnionBoundFilter(6.0, 1e-3, 48), GaussianMechanism(2.0), horizon=5)
    with pytest.raises(ParameterError, match="trajectories=1"):
        survival(UnionBoundFilter(6.0, 1e-3, 48), GaussianMechanism(2.0), method="monte-carlo",
                 trajectories=1)
