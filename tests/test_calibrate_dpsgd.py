"""Calibrating DP-SGD (noise multiplier, sampling rate, steps) against dp_accounting's PLD.

dp_accounting's pessimistic PLD is an upper bound on the true ε and its optimistic PLD a lower bound (up to
its own floating point), so where lpdp says the target is met (``value``) the optimistic ε must be at most
the target, and where lpdp says it is certainly missed (the attack end of ``optimum``) the pessimistic ε
must be above it. Integer answers are checked at ``value`` and ``value + 1`` on the accountant as well.
"""

from __future__ import annotations

import pytest

import lpdp
from lpdp.calibrate import calibrate
from lpdp.errors import ParameterError

dp_accounting = pytest.importorskip("dp_accounting")

DELTA = 1e-5


def _pld_epsilon(sigma: float, rate: float, steps: int, pessimistic: bool, grid: float = 1e-4) -> float:
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        rate, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=grid)
    acc._pessimistic_estimate = pessimistic
    return acc.compose(event).get_epsilon(DELTA)


def _workload(**entry):
    return {"mechanism": [{"kind": "dpsgd", **entry}]}


def test_noise_multiplier_brackets_the_pld_optimum():
    rate, steps, target = 0.05, 30, 2.0
    c = calibrate(_workload(noise_multiplier="?", sampling_rate=rate, steps=steps), target, DELTA, rtol=1e-3)
    assert c.parameter == "mechanism[0].noise_multiplier" and c.meets_target
    low, high = c.optimum
    assert low < high == c.value and c.epsilon <= target
    assert high / low - 1 <= 5e-3                        # the certified engine's width, in σ
    assert _pld_epsilon(c.value, rate, steps, pessimistic=False) <= target
    assert _pld_epsilon(low, rate, steps, pessimistic=True) > target


@pytest.mark.deep       # about 20 s each: a dozen certified compositions
def test_sampling_rate_brackets_the_pld_optimum():
    sigma, steps, target = 1.0, 100, 2.0
    c = calibrate(_workload(noise_multiplier=sigma, sampling_rate="?", steps=steps), target, DELTA)
    low, high = c.optimum
    assert low == c.value < high and c.epsilon <= target   # a smaller rate is more private
    assert _pld_epsilon(sigma, c.value, steps, pessimistic=False) <= target
    assert _pld_epsilon(sigma, high, steps, pessimistic=True) > target


@pytest.mark.deep
def test_steps_are_the_largest_count_that_fits():
    sigma, rate, target = 1.0, 0.02, 1.5
    c = calibrate(_workload(noise_multiplier=sigma, sampling_rate=rate, steps="?"), target, DELTA)
    k = c.value
    assert isinstance(k, int) and k >= 1
    assert lpdp.dpsgd(sigma, rate, k).guarantee().epsilon(DELTA)[1] <= target
    assert lpdp.dpsgd(sigma, rate, k + 1).guarantee().delta(target)[1] > DELTA * (1 - 1e-9)
    assert _pld_epsilon(sigma, rate, k, pessimistic=False) <= target


def test_a_free_parameter_the_kind_does_not_have_is_refused_by_name():
    with pytest.raises(ParameterError, match="no free parameter named 'sigma'"):
        calibrate(_workload(noise_multiplier=1.0, sampling_rate=0.01, steps=10, sigma="?"), 1.0, DELTA)


@pytest.mark.deep       # Opacus's golden workload: about 10 s for lpdp, a minute for the PLD at 1e-5
def test_the_golden_workload_within_a_tenth_of_a_percent():
    rate, steps, target = 0.04, 2250, 8.0
    c = calibrate(_workload(noise_multiplier="?", sampling_rate=rate, steps=steps), target, DELTA)
    low, high = c.optimum
    assert c.epsilon <= target and high / low - 1 <= 1e-3
    assert _pld_epsilon(c.value, rate, steps, pessimistic=False, grid=1e-5) <= target
    assert _pld_epsilon(low, rate, steps, pessimistic=True, grid=1e-5) > target
