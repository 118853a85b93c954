"""Optimal (δ̃, θ): the spec's numbers (filter.md §3), dense-grid verification, finite-output enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from lpdp.errors import ParameterError
from lpdp.filters import (
    FilterParameters,
    GaussianMechanism,
    LaplaceMechanism,
    optimal_parameters,
    randomized_response,
)


def gaussian_offset(d, t):
    """Φ^{-1}(1-δ̃) + Φ^{-1}(1-θ) from scipy's normal (κ = ε - μ² - μ × this, spec §3 Prop. 1)."""
    return stats.norm.isf(d) + stats.norm.isf(t)


def test_spec_numbers_for_n48():
    p = optimal_parameters(1e-3, 48)
    assert p.delta_tilde == pytest.approx(5.6079e-4, rel=1e-4)
    assert p.theta == pytest.approx(9.1553e-6, rel=1e-4)
    assert p.delta_tilde + p.theta * (1 - p.delta_tilde) * 48 <= 1e-3
    g = GaussianMechanism(2.0)
    # κ = ε - μ² - μ (Φ^{-1}(1-θ) + Φ^{-1}(1-δ̃)), μ = 1/2
    assert p.kappa(g, 6.0) == pytest.approx(6.0 - 0.25 - 0.5 * gaussian_offset(p.delta_tilde, p.theta),
                                            abs=1e-12)
    # the paper's rounded choice is 2.2e-5 below the optimum in κ (σ = 2)
    paper = FilterParameters(1e-3, 48, 5.60e-4, 9.17e-6)
    assert p.kappa(g, 6.0) - paper.kappa(g, 6.0) == pytest.approx(2.2e-5, abs=1e-6)


@pytest.mark.parametrize("n, delta", [(48, 1e-3), (24, 1e-3), (96, 1e-5), (1, 0.1), (500, 1e-2)])
def test_gaussian_optimum_beats_a_dense_grid(n, delta):
    p = optimal_parameters(delta, n)
    grid = np.geomspace(delta * 1e-8, delta * (1 - 1e-8), 100_000)
    theta = (delta - grid) / ((1 - grid) * n)
    best_grid = np.min(gaussian_offset(grid, theta))
    assert gaussian_offset(p.delta_tilde, p.theta) <= best_grid + 1e-9


def test_optimum_does_not_depend_on_sigma():
    a = optimal_parameters(1e-3, 48, GaussianMechanism(0.5))
    b = optimal_parameters(1e-3, 48, GaussianMechanism(5.0))
    assert a.delta_tilde == pytest.approx(b.delta_tilde, rel=1e-6)


def brute_offset(mech, d, t, inputs):
    worst = -math.inf
    for a, b in inputs:
        for v, w in ((a, b), (b, a)):
            ud, ut = mech.loss_quantile(d, v, w), mech.loss_quantile(t, v, w)
            worst = max(worst, ud + ut)
    return worst


@pytest.mark.parametrize("mech, inputs, n, delta", [
    (randomized_response(2, 1.0), [(0, 1)], 10, 0.05),
    (randomized_response(3, 0.7), [(0, 1), (0, 2), (1, 2)], 20, 0.1),
    (LaplaceMechanism(1.0), [(1.0, 0.0)], 10, 1e-3),
])
def test_general_iid_optimum_beats_a_dense_grid(mech, inputs, n, delta):
    p = optimal_parameters(delta, n, mech, inputs=inputs)
    grid = np.geomspace(delta * 1e-9, delta * (1 - 1e-9), 5_000)
    theta = (delta - grid) / ((1 - grid) * n)
    feasible = grid + theta * (1 - grid) * n <= delta
    best_grid = min(brute_offset(mech, d, t, inputs)
                    for d, t in zip(grid[feasible], theta[feasible], strict=True))
    assert brute_offset(mech, p.delta_tilde, p.theta, inputs) <= best_grid + 1e-12
    assert p.delta_tilde + p.theta * (1 - p.delta_tilde) * n <= delta


@pytest.mark.deep
def test_subsampled_gaussian_optimum_beats_a_grid():
    """The coarse-to-fine search on a mechanism whose quantiles are bisections (DP-SGD's step)."""
    from lpdp.filters import default_pairs
    from lpdp.mechanisms import subsampled

    mech, n, delta = subsampled(GaussianMechanism(1.0), 0.05), 30, 1e-4
    inputs = default_pairs(mech)
    p = optimal_parameters(delta, n, mech, inputs=inputs)
    grid = np.geomspace(delta * 1e-9, delta * (1 - 1e-9), 300)
    theta = (delta - grid) / ((1 - grid) * n)
    best_grid = min(brute_offset(mech, d, t, inputs) for d, t in zip(grid, theta, strict=True))
    assert brute_offset(mech, p.delta_tilde, p.theta, inputs) <= best_grid + 1e-12


def test_first_release_and_kappa_helpers():
    p = optimal_parameters(1e-3, 48)
    g = GaussianMechanism(2.0)
    threshold = 0.125 + 0.5 * stats.norm.isf(p.delta_tilde)
    assert p.first_release_ok(g, threshold + 1e-9)
    assert not p.first_release_ok(g, threshold - 1e-9)
    assert p.kappa(g, 4.0) < 0  # spec §3: at ε <= 4 at most one release


@pytest.mark.parametrize("make, match", [
    (lambda: optimal_parameters(0.0, 48), r"delta=0\.0: must be in \(0, 1\)"),
    (lambda: optimal_parameters(1.0, 48), r"delta=1\.0: must be in \[0, 1\)"),
    (lambda: optimal_parameters(1e-3, 0), r"max_steps=0"),
    (lambda: optimal_parameters(1e-3, 4, inputs=[]), r"inputs=\(\)"),
    (lambda: FilterParameters(1e-3, 48, 1e-3, 1e-5), r"must be <= delta=0\.001"),
    (lambda: FilterParameters(1e-3, 48, 1e-4, 1e-5).kappa(GaussianMechanism(1.0), -1.0),
     r"epsilon=-1\.0"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
