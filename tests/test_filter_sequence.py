"""Filters on a declared cyclic sequence of rounds (lpdp.filters.sequence): each filter's sequence rule
against its own ask/record decisions, the vectorised Monte Carlo against brute-force enumeration and
against runs of the filter objects, mechanism-level counts against plain loops, the classical count
against the accountant, and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lpdp import Accountant
from lpdp.errors import LpdpError, ParameterError
from lpdp.filters import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    MechanismLevelFilter,
    NaiveBayesianFilter,
    RealisationFilter,
    RenyiFilter,
    Request,
    UnionBoundFilter,
    binary_erasure,
    build_filter,
    classical_cycle,
    cycle_baselines,
    cycle_filter,
    filter_kinds,
    randomized_response,
    sequence_audit,
    sequence_comparison,
    sequence_survival,
)
from lpdp.filters.audit import rule_audit, simulate_trajectories
from lpdp.filters.baselines import UNLIMITED, baselines

G = GaussianMechanism(2.0)
L = LaplaceMechanism(2.0)
RR = randomized_response(2, 0.7)
BIT = Request("bit", {1: 1, 0: 0})
CYCLE = [(G, None), (RR, BIT), (L, None)]
PAIRS = [(1, 0)]


def run_filter(f, steps, outputs):
    """Feed ``outputs[i]`` (the output of round i + 1) to the filter object while it grants rounds,
    each look-ahead declaring the next step of the cycle; returns T."""
    m = len(steps)
    for i, y in enumerate(outputs):
        if not f.ask(*steps[i % m], next=[steps[(i + 1) % m]]):
            break
        f.record(y)
    return f.steps


def rule_stop(rule, losses):
    """T by the documented semantics of a StoppingRule: ``T >= t`` iff ``first_release`` and
    ``S_j`` within row ``j % period`` for ``j = 0 .. t-1-lag``, or ``t <= min_steps``; ``losses[j]`` is
    ``S_j`` of every ordered pair (``S_0 = 0``)."""
    t_rule = 0
    if rule.first_release:
        t_rule = rule.max_steps
        for t in range(1, rule.max_steps + 1):
            j = t - 1 - rule.lag
            if j >= 0 and not rule.alive(losses[j], j):
                t_rule = t - 1
                break
    return max(t_rule, min(rule.min_steps, rule.max_steps))


def loss_path(steps, outputs, ordered):
    """``S_0 .. S_n`` of every ordered pair from the outputs (log densities, independently of the
    filters)."""
    m = len(steps)
    s = [np.zeros(len(ordered))]
    for i, y in enumerate(outputs):
        mech, req = steps[i % m]
        inc = [float(mech.log_density(y, a if req is None else req(a))
                     - mech.log_density(y, b if req is None else req(b))) for a, b in ordered]
        s.append(s[-1] + np.array(inc))
    return s


def cycle_filters(steps, eps, delta, n, pairs):
    return {k.name: cycle_filter(k.name, steps, eps, delta, n, pairs) for k in filter_kinds()}


# -- (1) a one-step cycle is the i.i.d. rule ------------------------------------------------------
@pytest.mark.parametrize("mech,req,pairs", [
    (G, None, [(1, 0)]),
    (L, None, [(1, 0)]),
    (randomized_response(3, 0.9), None, [(0, 1), (0, 2), (1, 2)]),
    (RR, BIT, [(1, 0)]),
], ids=["gaussian", "laplace", "rr3", "rr-request"])
def test_one_step_cycle_is_the_iid_rule(mech, req, pairs):
    for kind in filter_kinds():
        f = build_filter(kind.name, mech, 6.0, 1e-3, 40, pairs)
        assert f.sequence_rule([(mech, req)]) == f.iid_rule(mech, req), kind.name
        # a cycle of two equal steps has both rows equal to the i.i.d. thresholds
        double = f.sequence_rule([(mech, req), (mech, req)])
        assert set(double.rows()) == {f.iid_rule(mech, req).thresholds}, kind.name


# -- (2) the rule and the vectorised Monte Carlo against the filter objects ----------------------
def test_sequence_rule_is_the_filters_decisions_trajectory_by_trajectory():
    filters = cycle_filters(CYCLE, 6.0, 1e-3, 40, PAIRS)
    filters["naive"] = NaiveBayesianFilter(6.0, 0.02, 40, PAIRS)
    rng = np.random.default_rng(11)
    m = len(CYCLE)
    outputs = [[CYCLE[i % m][0].sample(1 if CYCLE[i % m][1] is None else CYCLE[i % m][1](1), rng)
                for i in range(40)] for _ in range(150)]
    spread = set()
    for name, proto in filters.items():
        rule = proto.sequence_rule(CYCLE)
        for ys in outputs:
            f = type(proto)(**proto.config(), pairs=PAIRS)
            t = run_filter(f, CYCLE, ys)
            assert t == rule_stop(rule, loss_path(CYCLE, ys, f.ordered_pairs)), name
            spread.add((name, t))
    assert len({t for name, t in spread if name == "realisation"}) > 3  # stops at many different times


def test_monte_carlo_matches_runs_of_the_filter_objects():
    filters = cycle_filters(CYCLE, 6.0, 1e-3, 40, PAIRS)
    rng = np.random.default_rng(5)
    m = len(CYCLE)
    for name in ("realisation", "union", "combined"):
        proto = filters[name]
        times = []
        for _ in range(400):
            f = type(proto)(**proto.config(), pairs=PAIRS)
            i = 0
            while f.ask(*CYCLE[i % m], next=[CYCLE[(i + 1) % m]]):
                mech, req = CYCLE[i % m]
                f.record(mech.sample(1 if req is None else req(1), rng))
                i += 1
            times.append(f.steps)
        times = np.array(times)
        mc = sequence_survival(proto, CYCLE, trajectories=20_000, seed=3)
        se = math.hypot(times.std(ddof=1) / math.sqrt(times.size), mc.expected_T_stderr)
        assert abs(times.mean() - mc.expected_T) <= 4 * se, name
        for t in (5, 15, 25, 35):
            p = mc.survival[t - 1]
            emp = (times >= t).mean()
            se_t = math.sqrt(max(p * (1 - p), 1e-4) / times.size) + mc.stderr[t - 1]
            assert abs(emp - p) <= 4 * se_t, (name, t)


# -- (3) exact enumeration of a finite cycle -----------------------------------------------------
A = randomized_response(2, 0.5)
B = FiniteMechanism.from_pair([0.7, 0.3], [0.5, 0.5])
SMALL = [(A, None), (B, None)]
N_SMALL = 6


def enumerate_exact(make, x, eps):
    """Every output sequence of N_SMALL rounds under P_x, run through a fresh filter object: the exact
    survival curve, and tail and hockey stick of every ordered pair (x, x')."""
    surv = np.zeros(N_SMALL)
    tail, hockey = {}, {}
    for ys in itertools.product([0, 1], repeat=N_SMALL):
        prob = math.prod(SMALL[i % 2][0].probabilities(x)[y] for i, y in enumerate(ys))
        f = make()
        t = run_filter(f, SMALL, ys)
        surv[:t] += prob
        for pair, loss in f.spent().items():
            if pair[0] == x:
                tail[pair] = tail.get(pair, 0.0) + prob * (loss > eps + 1e-9)
                hockey[pair] = hockey.get(pair, 0.0) + prob * max(0.0, -math.expm1(eps - loss))
    return surv, tail, hockey


@pytest.mark.parametrize("name", ["realisation", "union", "combined", "naive"])
def test_monte_carlo_within_3_se_of_brute_force_enumeration(name):
    eps, delta, n = 1.5, 0.3, 20_000
    if name == "naive":  # an unsafe filter with a non-zero tail
        eps = 1.0

        def make():
            return NaiveBayesianFilter(eps, 0.6, N_SMALL, [(0, 1)])
    else:
        proto = cycle_filter(name, SMALL, eps, delta, N_SMALL, [(0, 1)])

        def make():
            return type(proto)(**proto.config(), pairs=[(0, 1)])
    res = sequence_audit(make(), SMALL, trajectories=n, seed=7)
    tails = []
    for pa in res.pairs:
        surv, tail, hockey = enumerate_exact(make, pa.pair[0], eps)
        assert 0 < surv[2] < 1  # the filter stops at a random time
        se_t = [math.sqrt(p * (1 - p) / n) for p in surv]
        for t in range(N_SMALL):
            assert abs(pa.survival[t] - surv[t]) <= 3 * se_t[t] + 1e-12, (name, pa.pair, t)
        se_tail = math.sqrt(tail[pa.pair] * (1 - tail[pa.pair]) / n)
        assert abs(pa.tail - tail[pa.pair]) <= 3 * se_tail + 1e-12
        assert abs(pa.hockey_stick_delta - hockey[pa.pair]) <= 3 * pa.hockey_stick_stderr + 1e-12
        tails.append(tail[pa.pair])
    assert (max(tails) > 0.1) == (name == "naive")


# -- (4) every filter within its budget on a mixed cycle ---------------------------------------
def test_every_filter_within_delta_on_a_mixed_cycle():
    for name, f in cycle_filters(CYCLE, 6.0, 1e-3, 40, PAIRS).items():
        r = sequence_audit(f, CYCLE, trajectories=20_000, seed=1)
        assert r.tail <= r.bound and r.hockey_stick_upper <= r.bound, name
        if r.guarantee is not None:
            assert r.tail <= r.guarantee + 3 * max(p.tail_stderr for p in r.pairs) + 1e-12, name


@pytest.mark.deep
def test_every_filter_tail_upper_bound_within_delta_on_a_mixed_cycle():
    for delta in (1e-3, 1e-4):
        for name, f in cycle_filters(CYCLE, 6.0, delta, 40, PAIRS).items():
            r = sequence_audit(f, CYCLE, trajectories=400_000, seed=2)
            assert r.tail_upper <= r.bound and r.hockey_stick_upper <= r.bound, (name, delta)


# -- (5) mechanism-level counts against a plain loop ---------------------------------------------
def plain_loop(f, steps):
    rng = np.random.default_rng(0)
    m = len(steps)
    while f.ask(*steps[f.steps % m]):
        mech, req = steps[f.steps % m]
        f.record(mech.sample(1 if req is None else req(1), rng))
    return f.steps


@pytest.mark.parametrize("cap", [None, 5, 9])
def test_mechanism_level_count_is_a_plain_loop(cap):
    for name, b in cycle_baselines(CYCLE, 6.0, 1e-3, pairs=PAIRS).items():
        if b.filter is None:
            continue
        proto = b.filter
        f = type(proto)(**{**proto.config(), "max_steps": cap or UNLIMITED}, pairs=PAIRS)
        k = f.sequence_stopping_time(CYCLE)
        assert k == plain_loop(type(f)(**f.config(), pairs=PAIRS), CYCLE), (name, cap)
        if cap is None:
            assert k == b.rounds
        assert f.sequence_rule(CYCLE).max_steps == max(k, 1)


def test_mechanism_level_count_on_a_long_cycle_and_an_infinite_step():
    # σ = 200: D_4 = 4 / (2 × 200²) per Gaussian round, thousands of rounds
    steps = [(GaussianMechanism(200.0), None), (GaussianMechanism(150.0), None),
             (LaplaceMechanism(300.0), None)]
    f = RenyiFilter(6.0, 1e-3, alpha=4.0, pairs=PAIRS)
    k = f.sequence_stopping_time(steps)
    assert k > 3000
    assert k == plain_loop(RenyiFilter(6.0, 1e-3, alpha=4.0, pairs=PAIRS), steps)
    # an outcome impossible under a neighbour: infinite divergence at the second step
    erasure = [(G, None), (binary_erasure(0.1), Request("x", {1: 1, 0: 0}))]
    assert RenyiFilter(6.0, 1e-3, alpha=4.0, pairs=PAIRS).sequence_stopping_time(erasure) == 1


def test_one_step_cycle_baselines_are_the_iid_baselines():
    for mech, pairs in ((G, [(1, 0)]), (randomized_response(3, 0.9), [(0, 1), (0, 2), (1, 2)])):
        iid = baselines(mech, 6.0, 1e-3, pairs=pairs)
        cyc = cycle_baselines([mech], 6.0, 1e-3, pairs=pairs)
        assert {k: (b.rounds, b.parameters) for k, b in iid.items()} == \
            {k: (b.rounds, b.parameters) for k, b in cyc.items()}


# -- (6) classical composition of a cycle against the accountant ---------------------------------
def upper_delta(counts, eps):
    acc = Accountant()
    for mech, c in zip((G, RR, L), counts, strict=True):
        acc.compose(mech, c)
    return acc.guarantee().delta(eps)[1]


def test_classical_count_of_a_cycle_against_the_accountant():
    b = classical_cycle(CYCLE, 6.0, 1e-3, PAIRS)
    k = b.rounds
    assert not b.at_least and k >= 3

    def counts(k):
        return [k // 3 + (j < k % 3) for j in range(3)]

    assert upper_delta(counts(k), 6.0) <= 1e-3 < upper_delta(counts(k + 1), 6.0)
    # Gaussian-only cycle: the closed form of composed Gaussians, against the accountant's
    gs = [(GaussianMechanism(2.0), None), (GaussianMechanism(3.0), None)]
    kg = classical_cycle(gs, 6.0, 1e-3, PAIRS).rounds

    def gauss(k):
        acc = Accountant()
        for (mech, _), c in zip(gs, [k // 2 + (j < k % 2) for j in range(2)], strict=True):
            acc.compose(mech, c)
        return acc.guarantee().delta(6.0)[1]

    assert gauss(kg) <= 1e-3 < gauss(kg + 1)


# -- comparison ----------------------------------------------------------------------------------
def test_sequence_comparison_has_every_filter():
    c = sequence_comparison(CYCLE, 6.0, 1e-3, 40, pairs=PAIRS, trajectories=2000)
    names = {k.name for k in filter_kinds()}
    assert names <= set(c.curves) | set(c.notes)
    assert c.curves["realisation"].method == "monte-carlo"
    assert c.curves["realisation"].expected_T_stderr > 0
    assert c.curves["renyi"].method == "deterministic"
    for k in ("renyi", "concentrated", "additive"):
        # deterministic stopping times: E[T] sums 40 survival terms; 40 roundings of u = 2^-53 at most
        assert c.curves[k].expected_T == pytest.approx(min(c.baselines[k].rounds, 40), rel=40 * 2.0**-52)
    assert c.curves["classical"].expected_T == pytest.approx(min(c.baselines["classical"].rounds, 40),
                                                            rel=40 * 2.0**-52)
    d = c.to_dict()
    assert d["mechanism"] is None and len(d["steps"]) == 3
    assert d["steps"][1]["request"] == BIT.to_dict()
    # the realisation-level filter outlasts the mechanism-level filters on this cycle
    assert c.expected_releases()["realisation"] > c.expected_releases()["classical"]


def test_simulator_keeps_the_iid_path():
    # the i.i.d. audit is the one-step cycle of the same simulator (same seeded numbers)
    f = UnionBoundFilter(6.0, 1e-3, 30)
    rule = f.iid_rule(L)
    _, pairs = rule_audit(rule, L, method="monte-carlo", trajectories=3000, seed=4)
    assert sequence_audit(f, [L], trajectories=3000, seed=4).pairs == pairs


# -- (7) bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("steps,match", [
    ([], r"steps=\[\]"),
    (G, "steps="),
    ("gaussian", "steps="),
    ([("gaussian", None)], r"steps\[0\]"),
    ([(G, None), (G, "bit")], r"steps\[1\]"),
    ([(G, None, None)], r"steps\[0\]"),
])
def test_bad_steps_name_the_parameter(steps, match):
    f = UnionBoundFilter(6.0, 1e-3, 30)
    for call in (lambda: sequence_audit(f, steps), lambda: sequence_survival(f, steps),
                 lambda: f.sequence_rule(steps), lambda: sequence_comparison(steps, 6.0, 1e-3, 30,
                                                                            pairs=PAIRS),
                 lambda: RenyiFilter(6.0, 1e-3, 4.0).sequence_stopping_time(steps)):
        with pytest.raises(ParameterError, match=match):
            call()


def test_other_bad_input():
    f = RealisationFilter(6.0, 1e-3, 30, 5e-4, 1e-5)
    rule = f.sequence_rule([G, L])
    with pytest.raises(ParameterError, match="per-step thresholds"):
        rule_audit(rule, G, method="exact")
    with pytest.raises(ParameterError, match="per-step thresholds"):
        rule_audit(rule, G)
    with pytest.raises(ParameterError, match="cycle of 3 steps"):
        simulate_trajectories(rule, CYCLE, 1, 10, np.random.default_rng(0))
    with pytest.raises(ParameterError, match="pairs="):
        sequence_comparison(CYCLE, 6.0, 1e-3, 30, pairs="10")
    with pytest.raises(ParameterError, match="filter='nope'"):
        cycle_filter("nope", CYCLE, 6.0, 1e-3, 30, PAIRS)
    with pytest.raises(ParameterError, match="trajectories"):
        sequence_audit(f, CYCLE, trajectories=1)
    with pytest.raises(ParameterError, match="horizon"):
        sequence_survival(RenyiFilter(6.0, 1e-3, 4.0), CYCLE)
    with pytest.raises(LpdpError, match="request 'bit': no input for database 5"):
        sequence_audit(UnionBoundFilter(6.0, 1e-3, 30, [(5, 0)]), [(RR, BIT), G], trajectories=10)
    with pytest.raises(ParameterError, match="model="):
        sequence_comparison(CYCLE, 6.0, 1e-3, 30, pairs=PAIRS, model="mixture")
    with pytest.raises(ParameterError, match="trajectories="):
        with __import__("lpdp._limits", fromlist=["budget"]).budget(memory_gb=0.001):
            sequence_audit(f, CYCLE, trajectories=10**6)
    assert isinstance(cycle_filter("renyi", CYCLE, 6.0, 1e-3, 30, PAIRS), MechanismLevelFilter)
