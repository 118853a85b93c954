"""Route options of the Accountant (method, step) and the one BudgetError; every caller goes through it."""

from __future__ import annotations

import numpy as np
import pytest

from lpdp import Accountant, BudgetError, ParameterError
from lpdp.compose import double_dp, multi
from lpdp.mechanisms import DPMechanism, GaussianMechanism, pure

C2 = [(1.0, 0.0), (0.5, 0.1)]


@pytest.mark.parametrize("method", ["remark1", "remark2"])
def test_method_gives_the_paper_baselines(method):
    g = Accountant(method=method).compose(DPMechanism(C2), 10).guarantee()
    assert g.route == method and not g.exact
    eps = np.linspace(0, 5, 11)
    ref = double_dp(C2[0], C2[1], 10, method=method).delta(eps)      # the second home: the compose module
    assert np.allclose(g.delta(eps)[1], ref, rtol=1e-12, atol=0)
    exact = Accountant().compose(DPMechanism(C2), 10).guarantee()
    assert np.all(exact.delta(eps)[1] <= g.delta(eps)[1] * (1 + 1e-12))  # the baselines are looser


def test_method_only_for_one_mechanism_with_two_constraints():
    with pytest.raises(ParameterError, match="only for one mechanism meeting exactly two constraints"):
        Accountant(method="remark1").compose(pure(1.0), 3).guarantee()
    with pytest.raises(ParameterError, match="method='nope': must be one of"):
        Accountant(method="nope")


def test_step_gives_the_same_exact_region():
    cons = [(0.3, 0.0), (0.15, 0.02), (0.05, 0.05)]
    eps = np.linspace(0, 4, 9)
    a = Accountant(step=0.05).compose(DPMechanism(cons), 12).guarantee()
    b = multi(cons, 12)                                               # the sequential lattice
    assert a.exact and a.route == "multi"
    assert np.allclose(a.delta(eps)[1], b.delta(eps), rtol=1e-9, atol=1e-15)
    with pytest.raises(ParameterError, match="step=-1"):
        Accountant(step=-1)
    assert "step=0.05" in repr(Accountant(step=0.05))


def test_the_router_finds_a_common_step_itself():
    """Eight constraints on a 0.05 grid at k = 1000: the 1-D lattice, found from the levels."""
    cons = [(0.05 * (j + 1), 1e-6 / (j + 1)) for j in range(8)]
    g = Accountant().compose(DPMechanism(cons), 1000).guarantee()
    h = Accountant(step=0.05).compose(DPMechanism(cons), 1000).guarantee()
    assert g.exact and np.isclose(g.epsilon(1e-3)[1], h.epsilon(1e-3)[1], rtol=1e-9)


def test_a_composition_too_large_is_a_budget_error(monkeypatch):
    monkeypatch.setenv("LPDP_MAX_SECONDS", "0.001")
    cons = [(1.0, 0.0), (0.7, 0.01), (0.31, 0.05)]         # incommensurate levels: a 3-D lattice
    with pytest.raises(BudgetError, match="LPDP_MAX_SECONDS") as info:
        Accountant().compose(DPMechanism(cons), 400).guarantee()
    assert isinstance(info.value, ParameterError) and "\n" not in str(info.value)


def test_gaussians_go_through_the_one_rule():
    g = Accountant().compose(GaussianMechanism(2.0), 9).compose(GaussianMechanism(1.0, 0.5), 7).guarantee()
    from lpdp.tradeoff import gaussian_delta

    assert g.route == "gaussian"
    assert np.isclose(g.delta(1.0)[1], gaussian_delta(1.0, np.sqrt(9 / 4 + 7 / 4)), rtol=1e-12)
