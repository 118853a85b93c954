"""One filter registry for i.i.d. rounds and declared cycles; each optimisation once per comparison."""

from __future__ import annotations

import pytest

import lpdp.filters.params as params_module
import lpdp.filters.simulate as simulate_module
from lpdp.filters import (
    GaussianMechanism,
    LaplaceMechanism,
    NotApplicableError,
    UnionBoundFilter,
    comparison,
    cycle_filter,
    filter_kinds,
    sequence_comparison,
)
from lpdp.filters.registry import FilterKind, register_cycle_builder, register_filter, unregister_filter

CYCLE = [GaussianMechanism(2.0), LaplaceMechanism(2.0)]


def test_every_built_in_filter_has_a_cycle_builder():
    assert all(k.build_cycle is not None for k in filter_kinds())


@pytest.fixture
def iid_only():
    register_filter(FilterKind("union_iid", "union bound, i.i.d. only", "realisation",
                               lambda m, e, d, n, p: UnionBoundFilter(e, d, n, p)))
    yield "union_iid"
    unregister_filter("union_iid")


def test_a_filter_without_a_cycle_builder_is_refused_on_a_cycle_not_tuned_for_a_step(iid_only):
    with pytest.raises(NotApplicableError, match="i.i.d. rounds only"):
        cycle_filter(iid_only, CYCLE, 6.0, 1e-3, 20, [(1, 0)])
    c = sequence_comparison(CYCLE, 6.0, 1e-3, 20, pairs=[(1, 0)], trajectories=200, seed=1)
    assert iid_only not in c.curves and "i.i.d. rounds only" in c.notes[iid_only]
    register_cycle_builder(iid_only, lambda steps, e, d, n, pairs, model, parameters:
                           UnionBoundFilter(e, d, n, pairs))
    f = cycle_filter(iid_only, CYCLE, 6.0, 1e-3, 20, [(1, 0)])
    g = cycle_filter("union", CYCLE, 6.0, 1e-3, 20, [(1, 0)])
    assert f.config() == g.config()


def test_one_comparison_optimises_each_filter_once(monkeypatch):
    calls = []
    real = params_module.optimal_parameters

    def counted(*args, **kwargs):
        calls.append((args[:2], kwargs.get("inputs")))
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate_module, "optimal_parameters", counted)
    import lpdp.filters.registry as registry_module

    monkeypatch.setattr(registry_module, "optimal_parameters", counted)
    comparison(GaussianMechanism(2.0), 6.0, 1e-3, 24, trajectories=0)
    assert len(calls) == len(set(map(repr, calls))) == 1        # the realisation filter's (δ̃, θ), once
