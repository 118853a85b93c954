"""Subsampled mechanisms in privacy filters: the loss quantile against the subsampled Gaussian's tail in
mpmath and against the atoms of a finite pair, both directions; every `lpdp filter` command on a DP-SGD
step at small sizes."""

from __future__ import annotations

import mpmath
import pytest

from lpdp.mechanisms import randomized_response, subsampled
from lpdp.sgd import dpsgd_mechanism

mpmath.mp.dps = 40


def _tail(c: float, sigma: float, q: float, removal: bool) -> mpmath.mpf:
    """P(L > c) of the removal pair (q N(1, σ²) + (1 - q) N(0, σ²), N(0, σ²)) under its first law, or of
    the addition pair (its mirror), from the definition in mpmath."""
    mu, q, c = 1 / mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(c)

    def sf(x: mpmath.mpf, shift: mpmath.mpf) -> mpmath.mpf:     # P(N(shift μ²/2, μ²) > x)
        return mpmath.ncdf(-(x - shift * mu ** 2 / 2) / mu)

    def inverse(c: mpmath.mpf) -> mpmath.mpf:                 # x with log(q e^x + 1 - q) = c
        return mpmath.log((mpmath.e ** c - 1 + q) / q)

    if removal:
        if c < mpmath.log(1 - q):
            return mpmath.mpf(1)
        x = inverse(c)
        return q * sf(x, 1) + (1 - q) * sf(x, -1)
    if -c < mpmath.log(1 - q):                                 # under Q, L = -L'; L' > log(1-q) always
        return mpmath.mpf(0)
    return 1 - sf(inverse(-c), -1)


@pytest.mark.parametrize("removal", [True, False])
@pytest.mark.parametrize(("sigma", "q"), [(1.0, 0.01), (0.8, 0.2)])
def test_the_gaussian_quantile_is_the_generalised_inverse_of_the_tail(sigma, q, removal):
    m = dpsgd_mechanism(sigma, q)
    (a, b), = m.default_pairs()
    pair = (a, b) if removal else (b, a)
    for a in [1e-9, 1e-6, 1e-3, 0.2, 0.7]:
        u = m.loss_quantile(a, *pair)
        assert _tail(u, sigma, q, removal) <= a * (1 + mpmath.mpf(1e-9))       # at u: at or below a
        below = u - 1e-9 * max(1.0, abs(u))
        assert _tail(below, sigma, q, removal) > a                            # just below: above a
        assert abs(m.loss_tail(u, *pair) - float(_tail(u, sigma, q, removal))) <= 1e-12 + 1e-9 * a


def test_a_finite_quantile_is_an_atom():
    m = subsampled(randomized_response(3, 1.0), 0.1)
    (a, b), = m.default_pairs()
    for pair in ((a, b), (b, a)):
        values, probs = m.loss_atoms(*pair)
        for a in [0.01, 0.05, 0.3, 0.9]:
            u = m.loss_quantile(a, *pair)
            # an atom, rounded up by the law's loss error (the atoms' float error, a few 1e-17 here)
            (atom,) = [v for v in values.tolist() if v <= u <= v + 1e-15]
            tail = sum(p for v, p in zip(values, probs, strict=True) if v > atom)
            assert tail <= a + 1e-15
            assert sum(p for v, p in zip(values, probs, strict=True) if v >= atom) > a


@pytest.mark.parametrize("command", [
    ["params"],
    ["audit"],
    ["simulate", "--trajectories", "20", "--filter", "realisation"],
])
def test_every_filter_command_runs_a_dpsgd_step(command, capsys):
    from lpdp.cli import main

    code = main(["filter", *command, "--dpsgd", "noise_multiplier=1.0,sampling_rate=0.1,steps=4",
                 "--epsilon", "2", "--delta", "1e-3", "--max-steps", "4"])
    out = capsys.readouterr().out
    assert code == 0 and ("kappa" in out or "realisation" in out)
