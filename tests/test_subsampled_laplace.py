"""Poisson-subsampled (and fixed-size) Laplace: the certified engine with a loss error (the subsampled law's
atoms and cuts ``log(q e^x + 1 - q)`` are floats) against an independent reference in mpmath (k = 1, 2, 3,
each direction on its own), dp_accounting's PLD at a fine grid for large k (both sides), and the
dp_accounting events round trip."""

from __future__ import annotations

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

import lpdp
from lpdp import pld
from lpdp.errors import ParameterError
from lpdp.interop import from_dp_event, to_pld
from lpdp.mechanisms import LaplaceMechanism, subsampled


class _Reference:
    """The removal pair ``(q Lap(1, b) + (1 - q) Lap(0, b), Lap(0, b))`` (or the addition pair, its
    mirror) in mpmath, from the densities: outside ``(0, 1)`` the loss is constant (two atoms), inside it is
    ``log(q e^{(2y - 1)/b} + 1 - q)``; ``δ_1`` in closed form (integrals of exponentials), ``δ_k`` by
    nested quadrature over ``y``, split at every kink."""

    def __init__(self, scale: float, rate: float, add: bool) -> None:
        mpmath.mp.dps = 30
        self.b, self.q, self.add = mpmath.mpf(scale), mpmath.mpf(rate), add
        b, q = self.b, self.q
        r = 1 / b
        e = mpmath.e
        top, bottom = mpmath.log(q * e ** r + 1 - q), mpmath.log(q * e ** -r + 1 - q)
        # P'- and Q-masses of y >= 1 (loss top) and y <= 0 (loss bottom)
        p_top, q_top = q / 2 + (1 - q) * e ** -r / 2, e ** -r / 2
        p_bot, q_bot = q * e ** -r / 2 + (1 - q) / 2, mpmath.mpf(1) / 2
        if add:        # the pair (Q, P'): losses negated, the first measure is Q
            self.atoms = [(-top, q_top), (-bottom, q_bot)]
        else:
            self.atoms = [(top, p_top), (bottom, p_bot)]

    def _f0(self, y):            # Lap(0, b) density
        return mpmath.e ** (-y / self.b) / (2 * self.b)

    def _f1(self, y):            # Lap(1, b) density on (0, 1)
        return mpmath.e ** (-(1 - y) / self.b) / (2 * self.b)

    def first(self, y):
        """Density of the first measure of the pair on (0, 1)."""
        mix = self.q * self._f1(y) + (1 - self.q) * self._f0(y)
        return self._f0(y) if self.add else mix

    def loss(self, y):
        g = mpmath.log(self.q * mpmath.e ** ((2 * y - 1) / self.b) + 1 - self.q)
        return -g if self.add else g

    def _cut(self, t):
        """The y in [0, 1] where the loss crosses t (the loss is increasing in y for the removal pair,
        decreasing for the addition pair)."""
        c = -t if self.add else t
        inside = (mpmath.e ** c - 1 + self.q) / self.q
        if inside <= 0:
            return mpmath.mpf(0)
        y = (1 + self.b * mpmath.log(inside)) / 2
        return min(max(y, mpmath.mpf(0)), mpmath.mpf(1))

    def _int0(self, a, c):       # ∫_a^c f0
        return (mpmath.e ** (-a / self.b) - mpmath.e ** (-c / self.b)) / 2

    def _int1(self, a, c):       # ∫_a^c f1
        return (mpmath.e ** (-(1 - c) / self.b) - mpmath.e ** (-(1 - a) / self.b)) / 2

    def delta1(self, t):
        """``E[(1 - e^{t - L})_+]`` for one draw: atoms plus ``∫_{L > t} (first - e^t second)``."""
        total = sum(m * max(mpmath.mpf(0), 1 - mpmath.e ** (t - a)) for a, m in self.atoms)
        y = self._cut(t)
        q, et = self.q, mpmath.e ** t
        if self.add:            # L > t on (0, y): first f0, second q f1 + (1 - q) f0
            part = self._int0(0, y) - et * (q * self._int1(0, y) + (1 - q) * self._int0(0, y))
        else:                   # L > t on (y, 1)
            part = q * self._int1(y, 1) + (1 - q) * self._int0(y, 1) - et * self._int0(y, 1)
        return total + max(part, mpmath.mpf(0))

    def tail(self, c):
        """``P(L > c)`` under the pair's first measure: atoms above c plus the continuous part beyond the
        cut (closed form)."""
        total = sum(m for a, m in self.atoms if a > c)
        y, q = self._cut(c), self.q
        if self.add:
            return total + self._int0(0, y)
        return total + q * self._int1(y, 1) + (1 - q) * self._int0(y, 1)

    def delta(self, t, k: int):
        if k == 1:
            return self.delta1(t)
        sums = {mpmath.mpf(0)}
        for _ in range(k - 1):
            sums = {s + a for s in sums for a, _ in self.atoms} | sums
        cuts = sorted({mpmath.mpf(0), mpmath.mpf(1)} | {self._cut(t - s) for s in sums})
        atoms = sum(m * self.delta(t - a, k - 1) for a, m in self.atoms)
        return atoms + mpmath.quad(lambda y: self.first(y) * self.delta(t - self.loss(y), k - 1), cuts)


CASES = [(1.0, 0.3), (0.5, 0.1), (2.0, 0.02)]


@pytest.mark.parametrize(("scale", "rate"), CASES)
@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("k", [1, 2])
def test_each_direction_brackets_the_mpmath_reference(scale, rate, add, k):
    ref = _Reference(scale, rate, add)
    law = subsampled(LaplaceMechanism(scale), rate).loss_law(reverse=add)
    assert law.loss_error > 0 and law.losses.size == 2
    bracket = pld.compose([(law, k)])
    for eps in (0.0, 0.05, 0.2, 0.6):
        truth = ref.delta(mpmath.mpf(eps), k)
        lo, hi = bracket.delta([eps])
        assert lo[0] <= truth <= hi[0]
        assert hi[0] - lo[0] <= 2e-3 * truth + 1e-10


@pytest.mark.deep       # nested quadrature: ~1 min
@pytest.mark.parametrize("add", [False, True])
def test_three_fold_brackets_the_mpmath_reference(add):
    scale, rate = 1.0, 0.3
    ref = _Reference(scale, rate, add)
    bracket = pld.compose([(subsampled(LaplaceMechanism(scale), rate).loss_law(reverse=add), 3)])
    for eps in (0.1, 0.5):
        truth = ref.delta(mpmath.mpf(eps), 3)
        lo, hi = bracket.delta([eps])
        assert lo[0] <= truth <= hi[0]


def test_the_guarantee_is_the_larger_direction():
    scale, rate, k = 1.0, 0.3, 2
    g = lpdp.Accountant().compose(subsampled(LaplaceMechanism(scale), rate), k).guarantee()
    assert g.route == "certified" and g.relation == "add_remove" and g.scheme == "poisson"
    for eps in (0.1, 0.5):
        truth = max(_Reference(scale, rate, add).delta(mpmath.mpf(eps), k) for add in (False, True))
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi


@pytest.mark.parametrize(("scale", "rate", "k"), [(1.0, 0.01, 1000), (0.5, 0.05, 300)])
def test_large_k_within_dp_accountings_pld_at_a_fine_grid(scale, rate, k):
    """dp_accounting's PLD at 1e-5: its pessimistic side is at or above the truth, its optimistic side at
    or below it, so lpdp's lower side must be at or below the pessimistic ε and its upper side at or above
    the optimistic ε (each direction on its own: the PLD's add/remove pair is the larger of the two)."""
    delta = 1e-5
    eps = {}
    for pessimistic in (True, False):
        p = dpa_pld.from_laplace_mechanism(scale, pessimistic_estimate=pessimistic, sampling_prob=rate,
                                           value_discretization_interval=1e-5, use_connect_dots=pessimistic)
        eps[pessimistic] = p.self_compose(k).get_epsilon_for_delta(delta)
    acc = lpdp.Accountant().compose(subsampled(LaplaceMechanism(scale), rate), k)
    lo, hi = acc.guarantee().epsilon(delta)
    assert eps[False] <= eps[True]
    assert lo <= eps[True] and eps[False] <= hi
    assert hi - eps[True] <= 1e-3 * eps[True]          # as close as the PLD at 1e-5 on the upper side
    assert hi - lo <= 2e-3 * hi


def test_rate_one_is_the_laplace_mechanism():
    g = lpdp.Accountant().compose(subsampled(LaplaceMechanism(0.5), 1.0), 20).guarantee()
    ref = lpdp.Accountant().compose(LaplaceMechanism(0.5), 20).guarantee()
    for eps in (1.0, 5.0):
        a, b = g.delta(eps), ref.delta(eps)
        assert abs(a[0] - b[0]) <= 1e-12 and abs(a[1] - b[1]) <= 1e-12


def test_a_small_rate_tends_to_no_loss():
    previous = math.inf
    for rate in (0.1, 0.01, 0.001, 1e-4):
        acc = lpdp.Accountant().compose(subsampled(LaplaceMechanism(1.0), rate), 100)
        hi = acc.guarantee().epsilon(1e-6)[1]
        assert hi < previous
        previous = hi
    assert previous <= 0.005


def test_fixed_size_batches_bracket_the_poisson_result_and_agree_at_one_step():
    """One step of a fixed-size batch is tight (Balle, Barthe and Gaboardi 2018, Theorem 10): both sides
    equal the removal pair's profile at ε >= 0; a composition's lower side is the Poisson result."""
    m = subsampled(LaplaceMechanism(1.0), 0.1, "fixed_size")
    one = lpdp.Accountant().compose(m, 1).guarantee()
    ref = _Reference(1.0, 0.1, False)
    for eps in (0.0, 0.05, 0.1):
        truth = ref.delta1(mpmath.mpf(eps))
        lo, hi = one.delta(eps)
        assert lo <= truth <= hi
    many = lpdp.Accountant().compose(m, 50).guarantee()
    poisson = lpdp.Accountant().compose(subsampled(LaplaceMechanism(1.0), 0.1), 50).guarantee()
    assert many.relation == "replace_one" and not many.exact
    assert many.epsilon(1e-6)[1] >= poisson.epsilon(1e-6)[0]
    assert many.epsilon(1e-6)[0] <= poisson.epsilon(1e-6)[1]


def test_dp_accounting_events_round_trip():
    for event, scheme in ((dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.LaplaceDpEvent(1.0)),
                           "poisson"),
                          (dp_accounting.SampledWithoutReplacementDpEvent(1000, 20,
                                                                         dp_accounting.LaplaceDpEvent(1.0)),
                           "fixed_size")):
        acc = from_dp_event(dp_accounting.SelfComposedDpEvent(event, 200))
        (m, k), = acc.parts
        assert k == 200 and m.scheme == scheme and m.rate == 0.02   # exact: the echoed inputs
        g = acc.guarantee()
        p = to_pld(g)             # the upper side as a pessimistic PLD: never below it
        for eps in (0.0, 0.5, 1.0):
            assert p.get_delta_for_epsilon(eps) >= g.delta(eps)[1]
        assert p.get_epsilon_for_delta(1e-6) >= g.epsilon(1e-6)[1]
    # the Poisson event's guarantee agrees with dp_accounting's own pessimistic PLD at a fine grid
    g = from_dp_event(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.LaplaceDpEvent(1.0)), 200)).guarantee()
    ref = dpa_pld.from_laplace_mechanism(1.0, sampling_prob=0.02, value_discretization_interval=1e-5)
    assert g.epsilon(1e-6)[0] <= ref.self_compose(200).get_epsilon_for_delta(1e-6)


def test_the_engine_moves_losses_by_the_loss_error():
    """A loss error is charged: the same discrete law stated with a larger loss error gives a wider
    bracket that still holds the exact answer (randomized response on the grid), and a step at or below
    four times the error is refused."""
    rr = pld.LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
    moved = pld.LossLaw(rr.losses, rr.log_p, loss_error=1e-3)
    p = np.e / (1 + np.e)
    exact = 3 * p ** 2 * (1 - p) * (1 - np.exp(0.0 - 1.0)) + p ** 3 * (1 - np.exp(0.0 - 3.0))
    a = pld.compose([(rr, 3)], step=0.5).delta([0.0])
    b = pld.compose([(moved, 3)], step=0.5).delta([0.0])
    assert a[0][0] <= exact <= a[1][0] and b[0][0] <= exact <= b[1][0]
    assert b[1][0] - b[0][0] > a[1][0] - a[0][0]
    law = subsampled(LaplaceMechanism(1.0), 0.1).loss_law()
    with pytest.raises(ParameterError, match="loss_error"):
        pld.compose([(law, 2)], step=law.loss_error)
    with pytest.raises(ParameterError, match="loss_error=-1"):
        pld.LossLaw(loss_error=-1.0)


@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize(("scale", "rate"), [(1.0, 0.1), (0.5, 0.01)])
def test_the_filter_quantile_is_at_or_above_the_generalised_inverse_of_the_tail(scale, rate, add):
    """The filters' loss quantile (rounded up by the law's loss error) against the tail in mpmath: at the
    quantile the tail is at most the level, and just below a loss error plus 1e-9 it exceeds it."""
    ref = _Reference(scale, rate, add)
    m = subsampled(LaplaceMechanism(scale), rate)
    pair = (0, 1) if add else (1, 0)
    for a in [1e-9, 1e-3, 0.05, 0.3, 0.7]:
        u = m.loss_quantile(a, *pair)
        assert ref.tail(mpmath.mpf(u)) <= a
        below = u - 1e-9 * max(1.0, abs(u))
        assert ref.tail(mpmath.mpf(below)) > a
        assert m.loss_tail(u, *pair) >= ref.tail(mpmath.mpf(u))


def _laplace_renyi(scale: float, rate: float, alpha: float, add: bool) -> mpmath.mpf:
    """``D_α`` of the removal pair (or the addition pair) by quadrature over the output, 30 digits."""
    mpmath.mp.dps = 30
    b, q, a = mpmath.mpf(scale), mpmath.mpf(rate), mpmath.mpf(alpha)

    def lap(y, m):
        return mpmath.e ** (-abs(y - m) / b) / (2 * b)

    def mix(y):
        return q * lap(y, 1) + (1 - q) * lap(y, 0)

    first, second = ((lambda y: lap(y, 0)), mix) if add else (mix, (lambda y: lap(y, 0)))
    total = mpmath.quad(lambda y: first(y) ** a * second(y) ** (1 - a), [-mpmath.inf, 0, 1, mpmath.inf])
    return mpmath.log(total) / (a - 1)


@pytest.mark.parametrize(("scale", "rate"), [(1.0, 0.1), (0.5, 0.02)])
def test_the_filter_faces_bound_the_exact_values(scale, rate):
    """What the classical filters charge: D_α at least the exact divergence of both pairs (and below the
    Laplace mechanism's own: amplified), one round's δ(ε) at least the exact one and close to it, and
    ρ >= D_α / α."""
    m = subsampled(LaplaceMechanism(scale), rate)
    for alpha in (1.5, 2.0, 8.0):
        d = m.renyi(alpha)
        exact = max(_laplace_renyi(scale, rate, alpha, add) for add in (False, True))
        assert exact <= d < LaplaceMechanism(scale).renyi(alpha)
        assert d <= alpha * m.zcdp_rho()
    for eps in (0.0, 0.01, 0.05):
        truth = max(_Reference(scale, rate, add).delta1(mpmath.mpf(eps)) for add in (False, True))
        d = m.round_delta(eps)
        assert truth <= d <= truth * (1 + 1e-3) + 1e-12
    e = m.round_epsilon(1e-6)
    assert max(_Reference(scale, rate, add).delta1(mpmath.mpf(e)) for add in (False, True)) <= 1e-6
