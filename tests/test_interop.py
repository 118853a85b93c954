"""Interop with dp_accounting: events in, PLDs out and back.

Oracles: dp_accounting's own PLD accountant and PLD constructors (pessimistic and optimistic) on the same
events, the Gaussian closed form, and brute-force δ of explicit pairs.
"""

from __future__ import annotations

import logging

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from lpdp import PrivacyRegion
from lpdp.errors import ParameterError
from lpdp.interop import from_dp_event, from_pld, to_pld
from lpdp.mechanisms import randomized_response
from lpdp.tradeoff import gaussian

EPS = [0.0, 0.5, 1.0, 2.0, 3.0]
NeighborRel = dp_accounting.NeighboringRelation


def pld_accountant(event, relation=NeighborRel.ADD_OR_REMOVE_ONE, discretization=1e-4):
    acc = dp_accounting.pld.PLDAccountant(relation, value_discretization_interval=discretization)
    acc.compose(event)
    return acc


def test_gaussian_and_laplace_event_against_the_pld_accountant(caplog):
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 10),
        dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(3.0), 3),
        dp_accounting.NoOpDpEvent(),
    ])
    g = from_dp_event(event).guarantee()
    assert not g.exact
    with caplog.at_level(logging.ERROR):
        opt = pld.from_gaussian_mechanism(2.0, pessimistic_estimate=False).self_compose(10).compose(
            pld.from_laplace_mechanism(3.0, pessimistic_estimate=False).self_compose(3))
    theirs = pld_accountant(event)
    for e in EPS:
        lo, hi = g.delta(e)
        assert lo <= theirs.get_delta(e) * (1 + 1e-9)
        assert hi >= opt.get_delta_for_epsilon(e) * (1 - 1e-9)


def test_gaussian_event_is_exact():
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 100)
    g = from_dp_event(event).guarantee()
    assert g.exact
    theirs = pld_accountant(event, discretization=1e-3)
    for e in EPS:
        # The pessimistic PLD is above the exact value.
        assert g.delta(e)[1] <= theirs.get_delta(e) * (1 + 1e-9)
        assert g.delta(e)[1] == pytest.approx(float(gaussian(5.0).delta(e)), rel=1e-12)


@pytest.mark.parametrize("p,k", [(0.3, 4), (0.8, 2), (0.05, 10)])
def test_randomized_response_event(p, k):
    """Against dp_accounting's RR PLD self-composed (its PLDAccountant composes a self-composed RR event
    once, whatever the count, in the version installed here: the PLD is built directly instead)."""
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.RandomizedResponseDpEvent(p, k), 5)
    g = from_dp_event(event).guarantee()
    assert g.exact
    pess = pld.from_randomized_response(p, k, value_discretization_interval=1e-5).self_compose(5)
    for e in EPS:
        want = pess.get_delta_for_epsilon(e)
        assert g.delta(e)[1] <= want * (1 + 1e-9) + 1e-15
        assert g.delta(e)[1] == pytest.approx(want, rel=1e-3, abs=1e-9)
    assert from_dp_event(dp_accounting.RandomizedResponseDpEvent(0.3, 1)).guarantee().delta(0.0) == (0.0, 0.0)


def test_unsupported_events_name_themselves():
    sampled = dp_accounting.SampledWithReplacementDpEvent(100, 10, dp_accounting.GaussianDpEvent(1.0))
    event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(1.0), sampled])
    with pytest.raises(ParameterError, match=r"event=SampledWithReplacementDpEvent: not supported; .*Poiss"):
        from_dp_event(event)
    with pytest.raises(ParameterError, match=r"noise_parameter=1\.5"):
        from_dp_event(dp_accounting.RandomizedResponseDpEvent(1.5, 3))


@pytest.mark.parametrize("region", [
    PrivacyRegion.from_constraints([(1.0, 1e-3), (0.3, 0.05)]),
    randomized_response(4, 0.7).region(),
    PrivacyRegion.from_pair([0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.5, 0.1]),
])
def test_to_pld_never_below_and_round_trip(region):
    p = to_pld(region)
    back = from_pld(p)
    for e in EPS:
        ours = float(region.delta(e))
        theirs = p.get_delta_for_epsilon(e)
        # never below the exact pair (whose δ is at least the certified lower side); the certified upper
        # side sits a few ulps above the atoms dp_accounting is given
        assert theirs >= float(region.delta_lower(e))
        assert theirs <= ours + 1e-3          # pessimistic rounding of losses by at most 1e-4
        assert float(back.delta(e)) == pytest.approx(theirs, rel=1e-9, abs=1e-12)


def test_from_pld_of_continuous_plds():
    for p in (pld.from_gaussian_mechanism(1.5, value_discretization_interval=1e-3),
              pld.from_laplace_mechanism(0.7, value_discretization_interval=1e-3).self_compose(3)):
        r = from_pld(p)
        for e in EPS:
            assert float(r.delta(e)) == pytest.approx(p.get_delta_for_epsilon(e), rel=1e-9, abs=1e-12)


def test_from_pld_asymmetric_takes_the_larger_order():
    p = pld.from_two_probability_mass_functions({0: np.log(0.5), 1: np.log(0.5)},
                                                {0: np.log(0.9), 1: np.log(0.1)},
                                                symmetric=False, value_discretization_interval=1e-4)
    r = from_pld(p)
    for e in EPS:
        assert float(r.delta(e)) == pytest.approx(p.get_delta_for_epsilon(e), rel=1e-9, abs=1e-12)


def test_to_pld_of_guarantees():
    from lpdp import Accountant
    from lpdp.mechanisms import GaussianMechanism, pure

    g = Accountant().compose(GaussianMechanism(1.0), 4).guarantee()
    p = to_pld(g)
    for e in EPS:
        assert p.get_delta_for_epsilon(e) >= float(gaussian(2.0).delta(e))
    exact = Accountant().compose(pure(0.5), 3).guarantee()
    assert to_pld(exact).get_delta_for_epsilon(0.5) >= exact.delta(0.5)[1]
    with pytest.raises(ParameterError, match="region_or_guarantee"):
        to_pld("R")
    with pytest.raises(ParameterError, match="pld="):
        from_pld(3)
