"""dp_accounting events beyond the basic ones: discrete Laplace against an mpmath sum over the integers and
dp_accounting's PLD, mixtures of Gaussians as the subsampled Gaussian, sampling without replacement, (ε, δ)
events, refusals by name, and to_pld of each never below lpdp's upper side."""

from __future__ import annotations

import attr
import mpmath
import pytest

dp_accounting = pytest.importorskip("dp_accounting")

import lpdp  # noqa: E402
from lpdp.errors import ParameterError  # noqa: E402
from lpdp.interop import from_dp_event, to_pld  # noqa: E402
from lpdp.mechanisms import GaussianMechanism, subsampled  # noqa: E402

E = dp_accounting.dp_event
mpmath.mp.dps = 30


def _dlap_delta(a: float, d: int, eps: float) -> mpmath.mpf:
    """δ(ε) of (Δ + Z, Z), Z ~ DLap(a), summed over the integers in mpmath (tails beyond ±400/a dropped,
    below 1e-150 of the result)."""
    a, e = mpmath.mpf(a), mpmath.e ** mpmath.mpf(eps)
    t = mpmath.tanh(a / 2)
    span = int(400 / a) + d
    return mpmath.fsum(max(mpmath.mpf(0), t * (mpmath.e ** (-a * abs(x - d)) - e * mpmath.e ** (-a * abs(x))))
                       for x in range(-span, span + 1))


@pytest.mark.parametrize(("a", "d"), [(0.5, 1), (0.5, 3), (2.0, 4)])
def test_discrete_laplace_is_its_exact_pair(a, d):
    g = from_dp_event(E.DiscreteLaplaceDpEvent(a, d)).guarantee()
    for eps in [0.0, 0.3, 0.9 * a * d]:
        truth = _dlap_delta(a, d, eps)
        lo, hi = g.delta(eps)
        assert lo <= truth * (1 + mpmath.mpf(1e-12)) and hi >= truth * (1 - mpmath.mpf(1e-12))
        assert hi <= truth * (1 + mpmath.mpf(1e-9)) + mpmath.mpf(1e-15)


def test_discrete_laplace_composition_within_dp_accountings_pld():
    event = E.SelfComposedDpEvent(E.DiscreteLaplaceDpEvent(0.3, 2), 20)
    g = from_dp_event(event).guarantee()
    acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
                                          value_discretization_interval=1e-5)
    acc.compose(event)
    lo, hi = g.epsilon(1e-6)
    assert lo <= acc.get_epsilon(1e-6) * (1 + 1e-9) and hi <= acc.get_epsilon(1e-6) + 1e-4


def test_a_mixture_of_gaussians_at_zero_and_c_is_the_subsampled_gaussian():
    acc = from_dp_event(E.MixtureOfGaussiansDpEvent(1.5, [0.0, 2.0], [0.9, 0.1]))
    assert acc.parts == [(subsampled(GaussianMechanism(1.5, 2.0), 0.1), 1)]
    assert from_dp_event(E.MixtureOfGaussiansDpEvent(1.5, [0.0, -2.0], [0.9, 0.1])).parts == acc.parts
    assert not from_dp_event(E.MixtureOfGaussiansDpEvent(1.5, [0.0], [1.0])).parts


def test_a_mixture_of_gaussians_within_dp_accountings_pld():
    event = E.SelfComposedDpEvent(E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.9, 0.1]), 10)
    g = lpdp.Accountant(tolerance=0.02).compose(*from_dp_event(event).parts[0]).guarantee()
    acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
                                          value_discretization_interval=1e-4)
    acc.compose(event)
    lo, hi = g.epsilon(1e-5)
    assert lo <= acc.get_epsilon(1e-5) <= hi + 0.02


def test_sampling_without_replacement_is_a_fixed_size_batch():
    inner = E.RandomizedResponseDpEvent(0.5, 3)
    event = E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(1000, 50, inner), 7)
    (m, k), = from_dp_event(event).parts
    assert k == 7 and m.scheme == "fixed_size" and m.relation == "replace_one"
    assert m == subsampled(from_dp_event(inner).parts[0][0], 50 / 1000, "fixed_size")
    with pytest.raises(ParameterError, match="sample_size=2000: must be at most source_dataset_size=1000"):
        from_dp_event(E.SampledWithoutReplacementDpEvent(1000, 2000, inner))


def test_an_epsilon_delta_event_where_dp_accounting_has_one():
    @attr.s(frozen=True, slots=True, auto_attribs=True)
    class EpsilonDeltaDpEvent(E.DpEvent):
        epsilon: float
        delta: float

    event = getattr(E, "EpsilonDeltaDpEvent", EpsilonDeltaDpEvent)(1.0, 1e-6)
    g = from_dp_event(E.SelfComposedDpEvent(event, 5)).guarantee()
    ref = lpdp.Accountant().compose(lpdp.mechanisms.DPMechanism([(1.0, 1e-6)]), 5).guarantee()
    assert g.route == "kairouz" and abs(g.epsilon(1e-4)[1] - ref.epsilon(1e-4)[1]) <= 1e-12


@pytest.mark.parametrize("event", [
    E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)),
    E.ZCDpEvent(0.5),
    E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0, 2.0], [0.8, 0.1, 0.1]),
])
def test_other_events_are_refused_by_name(event):
    with pytest.raises(ParameterError, match=f"event={type(event).__name__}"):
        from_dp_event(E.ComposedDpEvent([E.GaussianDpEvent(1.0), event]))


@pytest.mark.parametrize("event", [
    E.SelfComposedDpEvent(E.DiscreteLaplaceDpEvent(0.5, 2), 4),
    E.SelfComposedDpEvent(E.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.8, 0.2]), 3),
    E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(100, 10, E.RandomizedResponseDpEvent(0.3, 2)),
                          6),
    E.PoissonSampledDpEvent(0.1, E.DiscreteLaplaceDpEvent(1.0, 1)),
    E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0)), 5),
    E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(100, 10, E.LaplaceDpEvent(2.0)), 5),
    E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), 5),
    E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.05, E.RandomizedResponseDpEvent(0.3, 3)), 8),
])
def test_to_pld_of_each_new_event_is_never_below_the_upper_side(event):
    g = lpdp.Accountant(tolerance=0.05).compose(*from_dp_event(event).parts[0]).guarantee()
    pld = to_pld(g, 1e-4)
    for eps in [0.0, 0.2, 1.0, 3.0]:
        assert pld.get_delta_for_epsilon(eps) >= g.delta(eps)[1]
