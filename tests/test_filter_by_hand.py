"""(δ̃, θ) given by hand (CLI, scenarios) and the per-step cost C = Σ N(x)|R|M of the filter's check."""

import json
import math

import pytest
from scipy.stats import norm

from lpdp.cli import main
from lpdp.filters import FilterParameters, GaussianMechanism, comparison
from lpdp.filters.simulate import check_cost

PRINTED = ["--delta-tilde", "5.60e-4", "--theta", "9.17e-6"]
GAUSS = ["--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3", "--max-steps", "48"]


def test_printed_pair_kappa_is_the_closed_form(capsys):
    """κ = ε − u(δ̃) − u(θ) with the Gaussian loss quantile u(x) = μ²/2 + μ Φ⁻¹(1 − x), μ = 1/σ."""
    assert main(["filter", "params", *GAUSS, *PRINTED, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mu = 0.5
    u = [mu * mu / 2 + mu * norm.isf(x) for x in (5.60e-4, 9.17e-6)]
    assert out["delta_tilde"] == 5.60e-4 and out["theta"] == 9.17e-6  # exact: the values given, echoed
    assert math.isclose(out["kappa"], 6 - sum(u), rel_tol=1e-9)


@pytest.mark.parametrize("extra", [["--delta-tilde", "5.60e-4", "--theta", "9.2e-6"], ["--theta", "1e-6"]])
def test_a_pair_over_budget_is_refused_in_one_line(extra, capsys):
    assert main(["filter", "params", *GAUSS, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("theta" in err[0])


def test_printed_pair_releases_about_as_many_as_the_optimal_one():
    """The optimal pair maximises κ, so it releases at least as much; the paper's printed pair is within
    0.01 of it (15.792 against 15.793)."""
    m = GaussianMechanism(2.0)
    given = comparison(m, 6.0, 1e-3, 48, trajectories=0,
                       parameters=FilterParameters(1e-3, 48, 5.60e-4, 9.17e-6))
    best = comparison(m, 6.0, 1e-3, 48, trajectories=0)
    e_given, e_best = given.curves["realisation"].expected_T, best.curves["realisation"].expected_T
    assert e_given <= e_best + 1e-12 and e_best - e_given < 0.01
    assert given.parameters.theta == 9.17e-6  # exact: the value given, echoed
    # exact: one computation on both sides; only realisation changes
    assert given.curves["renyi"].expected_T == best.curves["renyi"].expected_T


def test_check_cost_counts_ordered_pairs(capsys):
    assert check_cost([(1, 0)]) == {"ordered_pairs": 2, "requests": 1, "operations_per_check": 1,
                                    "per_step": 2}                     # the paper's Gaussian: C = 2
    assert check_cost([(0, 1), (0, 2), (1, 2)], requests=3)["per_step"] == 18
    assert main(["filter", "simulate", "--rr", "3,0.7", "--epsilon", "6", "--delta", "1e-6",
                 "--max-steps", "10", "--trajectories", "0", "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["check_cost"]
    assert cost["per_step"] == cost["ordered_pairs"] == 6              # 3 categories: 3 pairs, both orders
