"""The realisation-level filter against the set definition of Ỹ (spec filter.md §3), its i.i.d. rule,
its API contract (ask before charge, halting, transcripts), and the one-step filters."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from lpdp._version import __version__
from lpdp.errors import BudgetExhaustedError, LpdpError, ParameterError
from lpdp.filters import (
    FiniteMechanism,
    GaussianMechanism,
    NaiveBayesianFilter,
    RealisationFilter,
    Request,
    UnionBoundFilter,
    binary_erasure,
    optimal_parameters,
    randomized_response,
)

PAIRS3 = [(0, 1), (0, 2), (1, 2)]


def ordered(pairs):
    return [q for a, b in pairs for q in ((a, b), (b, a))]


def brute_force_continue(losses, current, candidates, eps, dtilde, theta, pairs):
    """Spec §3 literally: for every ordered pair, P_x(Y_i in Ỹ_i) >= 1 - θ, where Ỹ_i is the set of
    outputs whose inner probability P_x(l + L_i(y) + L_next > ε) is <= δ̃ for every candidate."""
    for x, x2 in ordered(pairs):
        p, q = current.probabilities(x), current.probabilities(x2)
        mass_in = 0.0
        for y in range(p.size):
            if p[y] == 0:
                continue
            li = math.inf if q[y] == 0 else math.log(p[y] / q[y])
            ok = True
            for nxt in candidates:
                pn, qn = nxt.probabilities(x), nxt.probabilities(x2)
                inner = sum(pn[z] for z in range(pn.size) if pn[z] > 0 and (
                    qn[z] == 0 or losses[(x, x2)] + li + math.log(pn[z] / qn[z]) > eps + 1e-9))
                ok &= inner <= dtilde
            mass_in += p[y] * ok
        if mass_in < 1 - theta:
            return False
    return True


def random_table(rng, k=3, outputs=3):
    rows = rng.dirichlet(np.ones(outputs), size=k)
    rows[rng.random(size=rows.shape) < 0.1] = 0.0  # some impossible outputs: infinite losses
    rows[:, 0] += 0.05
    return FiniteMechanism({v: (r / r.sum()).tolist() for v, r in enumerate(rows)})


@given(st.integers(0, 2**32 - 1))
def test_lookahead_equals_set_definition_with_adaptive_requests(seed):
    rng = np.random.default_rng(seed)
    mechs = [randomized_response(3, float(rng.uniform(0.2, 1.5))), random_table(rng),
             randomized_response(3, float(rng.uniform(0.2, 1.5)))]
    eps = float(rng.uniform(1.0, 6.0))
    dtilde, theta = float(rng.uniform(0.0, 0.3)), float(rng.uniform(0.0, 0.04))
    f = RealisationFilter(eps, 0.5, 5, dtilde, theta, pairs=PAIRS3)
    truth = int(rng.integers(3))
    current = mechs[0]
    if not f.ask(current, next=mechs):
        return
    for _ in range(4):
        expected = brute_force_continue(f.spent(), current, mechs, eps, dtilde, theta, PAIRS3)
        f.record(current.sample(truth, rng))
        current = mechs[int(rng.integers(3))]  # chosen after seeing y_i: the intersection rule
        assert f.ask(current, next=mechs) == expected
        if not expected:
            return


def test_lookahead_equals_set_definition_for_the_gaussian():
    """Prop. 1 (continue iff |l| <= κ) against Ỹ built on a dense output grid (σ = 2, N = 48)."""
    p = optimal_parameters(1e-3, 48)
    sigma, eps = 2.0, 6.0
    g = GaussianMechanism(sigma)
    kappa = p.kappa(g, eps)
    mu = 1 / sigma
    y = np.linspace(-12, 14, 400_001)
    for l_hist in np.linspace(-3, 3, 25):
        cont = True
        for x, sign in ((1.0, 1.0), (0.0, -1.0)):  # ordered pairs (1, 0) and (0, 1), Y ~ N(x, σ²)
            li = sign * (y - 0.5) / sigma**2
            inner = stats.norm.sf((eps - sign * l_hist - li - mu**2 / 2) / mu)
            prob_in = np.trapezoid(stats.norm.pdf(y, x, sigma) * (inner <= p.delta_tilde), y)
            cont &= prob_in >= 1 - p.theta
        if abs(abs(l_hist) - kappa) > 1e-3:
            assert cont == (abs(l_hist) <= kappa)


def test_sequential_filter_matches_its_iid_rule_and_closed_form_losses():
    p = optimal_parameters(1e-3, 48)
    sigma = 2.0
    g = GaussianMechanism(sigma)
    rng = np.random.default_rng(3)
    kappa = p.kappa(g, 6.0)
    for _ in range(30):
        f = RealisationFilter(6.0, 1e-3, 48, p.delta_tilde, p.theta)
        ys = []
        while f.ask(g):
            ys.append(float(g.sample(1.0, rng)))
            f.record(ys[-1])
        s = np.concatenate([[0.0], np.cumsum((np.array(ys) - 0.5) / sigma**2)])
        alive = np.abs(s[:47]) <= kappa
        expected_t = min(48, int(np.cumprod(alive).sum()) + 1)
        assert f.steps == expected_t
        assert f.spent()[(1, 0)] == pytest.approx(s[-1], abs=1e-9)
        assert f.spent()[(0, 1)] == pytest.approx(-s[-1], abs=1e-9)
        assert f.remaining_steps == 0 and f.halted


def test_first_release_threshold_and_small_epsilon():
    p = optimal_parameters(1e-3, 48)
    g = GaussianMechanism(2.0)
    first = 0.125 + 0.5 * stats.norm.isf(p.delta_tilde)  # ε >= μ²/2 + μ Φ^{-1}(1-δ̃)
    assert not RealisationFilter(first - 1e-6, 1e-3, 48, p.delta_tilde, p.theta).ask(g)
    assert RealisationFilter(first + 1e-6, 1e-3, 48, p.delta_tilde, p.theta).ask(g)
    f = RealisationFilter(4.0, 1e-3, 48, p.delta_tilde, p.theta)  # κ < 0: at most one release
    assert f.ask(g)
    f.record(1.0)
    assert not f.ask(g)
    assert f.steps == 1


def test_tie_continues():
    # binary RR with ε0 = ln 3; ε = 3 ln 3, δ̃ below P(L = ln 3) and θ = 0 give κ = ln 3 exactly.
    rr = randomized_response(2, math.log(3.0))
    eps = 3 * math.log(3.0)
    f = RealisationFilter(eps, 0.3, 5, 0.2, 0.0, pairs=[(0, 1)])
    assert f.ask(rr)
    f.record(0)  # l(0,1) = ln 3 = κ
    assert f.spent()[(0, 1)] == pytest.approx(math.log(3.0))
    assert f.ask(rr)  # step 2 was decided from l^(0) = 0
    f.record(0)  # l = 2 ln 3; step 3 is decided from l^(1) = ln 3 = κ: a tie, which continues
    assert f.ask(rr)
    f.record(1)  # step 4 is decided from l^(2) = 2 ln 3 > κ: halt
    assert not f.ask(rr)
    assert f.steps == 3


def test_api_contract_errors():
    g = GaussianMechanism(2.0)
    f = RealisationFilter(6.0, 1e-3, 2, 5e-4, 1e-5)
    with pytest.raises(ParameterError, match="record: no step was granted"):
        f.record(0.0)
    assert f.ask(g)
    with pytest.raises(ParameterError, match="call record"):
        f.ask(g)
    f.record(0.3)
    with pytest.raises(ParameterError, match="not among the possible next requests"):
        f.ask(GaussianMechanism(3.0))
    assert f.ask(g)
    f.record(0.1)
    assert not f.ask(g)  # N = 2 reached
    with pytest.raises(BudgetExhaustedError, match=r"halted after 2 releases: max_steps=2"):
        f.ask(g)
    with pytest.raises(BudgetExhaustedError):
        f.record(0.0)


@pytest.mark.parametrize("make, match", [
    (lambda: RealisationFilter(6.0, 1e-3, 48, 5.7e-4, 9.2e-6),
     r"delta_tilde=0\.00057, theta=9\.2e-06, max_steps=48: .* must be <= delta=0\.001"),
    (lambda: RealisationFilter(-1.0, 1e-3, 48, 5e-4, 1e-6), r"epsilon=-1\.0"),
    (lambda: RealisationFilter(1.0, 2.0, 48, 5e-4, 1e-6), r"delta=2\.0: must be in \[0, 1\]"),
    (lambda: RealisationFilter(1.0, 1e-3, 0, 5e-4, 1e-6), r"max_steps=0: must be an integer >= 1"),
    (lambda: RealisationFilter(1.0, 1e-3, 4, 5e-4, -1.0), r"theta=-1\.0"),
    (lambda: RealisationFilter(1.0, 1e-3, 4, 5e-4, 0.0, pairs=[]), r"pairs=\(\)"),
    (lambda: RealisationFilter(1.0, 1e-3, 4, 5e-4, 0.0, pairs=[(1, 1)]), r"\(1, 1\) must be two"),
    (lambda: UnionBoundFilter(1.0, 1e-3, 0), r"max_steps=0"),
    (lambda: NaiveBayesianFilter(1.0, -0.5, 10), r"level=-0\.5"),
    (lambda: UnionBoundFilter(1.0, 1e-3, 5).ask("gauss"), r"mechanism='gauss'"),
    (lambda: UnionBoundFilter(1.0, 1e-3, 5).ask(GaussianMechanism(1.0), "r"), r"request='r'"),
    (lambda: RealisationFilter(6.0, 1e-3, 4, 5e-4, 1e-6).ask(GaussianMechanism(1.0), next=[]),
     r"next=\[\]"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ParameterError, match=match):
        make()


def test_transcript_save_and_replay(tmp_path):
    p = optimal_parameters(1e-3, 20)
    loud = Request("loud", {"a": 1.0, "b": 0.0})
    quiet = Request("quiet", {"a": 0.5, "b": 0.0})
    g = GaussianMechanism(2.0)
    cands = [(g, loud), (g, quiet)]
    f = RealisationFilter(8.0, 1e-3, 20, p.delta_tilde, p.theta, pairs=[("a", "b")])
    rng = np.random.default_rng(5)
    req = loud
    while f.ask(g, req, next=cands):
        y = float(g.sample(req("a"), rng))
        f.record(y)
        req = quiet if y > 0.5 else loud
    path = f.save(tmp_path / "t.json")
    data = json.loads(path.read_text())
    assert data["lpdp_version"] == __version__
    replayed = RealisationFilter.replay(path)
    assert replayed.steps == f.steps and replayed.halted
    assert replayed.spent() == pytest.approx(f.spent())
    data["steps"][0]["output"] = 40.0  # a huge first output: the look-ahead would have halted
    with pytest.raises(LpdpError, match="refuses it on replay|granted on replay"):
        RealisationFilter.replay(data)
    with pytest.raises(LpdpError, match="not a UnionBoundFilter"):
        UnionBoundFilter.replay(path)


def test_union_filter_threshold_and_finite_outputs():
    g = GaussianMechanism(2.0)
    f = UnionBoundFilter(6.0, 1e-3, 48)
    kappa_u = 6.0 - 0.125 - 0.5 * stats.norm.isf(1e-3 / 48)
    rng = np.random.default_rng(1)
    s = 0.0
    while True:
        granted = f.ask(g)
        assert granted == (abs(s) <= kappa_u and f.steps < 48)
        if not granted:
            break
        y = float(g.sample(1.0, rng))
        f.record(y)
        s += (y - 0.5) / 4.0
    er = binary_erasure(1e-3)
    pan = NaiveBayesianFilter(1.0, 1e-3, 10, pairs=[(0, 1)])
    for _ in range(10):  # erasures only: Pan's filter never stops early
        assert pan.ask(er)
        pan.record("?")
    assert pan.spent() == {(0, 1): 0.0, (1, 0): 0.0}
    assert not pan.ask(er)


def test_impossible_outputs_give_infinite_losses():
    er = binary_erasure(0.5)
    f = NaiveBayesianFilter(1.0, 0.5, 10, pairs=[(0, 1)])
    assert f.ask(er)
    f.record(0)
    assert f.spent() == {(0, 1): math.inf, (1, 0): -math.inf}
    assert not f.ask(er)
    third = FiniteMechanism({0: [0.5, 0.5, 0.0], 1: [0.5, 0.5, 0.0], 2: [0.0, 0.0, 1.0]})
    f = UnionBoundFilter(10.0, 0.9, 5, pairs=[(0, 1)])
    assert f.ask(third)
    f.record(2)  # impossible under both databases of the pair: conservative +inf both ways
    assert f.spent() == {(0, 1): math.inf, (1, 0): math.inf}


def test_sampled_mechanism_makes_the_filter_stop_no_later():
    """Conservative Monte Carlo quantiles (upper confidence bounds) can only tighten the look-ahead:
    on the same outputs, the filter with a black-box Gaussian halts no later than with the exact one."""
    from lpdp.filters import SampledMechanism

    g = GaussianMechanism(2.0)
    p = optimal_parameters(0.05, 10)  # levels the sampler can certify with 10^6 draws
    bb = SampledMechanism(g.sample, g.log_density, name="gauss", samples=1_000_000, seed=7)
    rng = np.random.default_rng(2)
    for _ in range(10):
        exact = RealisationFilter(4.0, 0.05, 10, p.delta_tilde, p.theta)
        black = RealisationFilter(4.0, 0.05, 10, p.delta_tilde, p.theta)
        ys = [float(g.sample(1.0, rng)) for _ in range(10)]
        for f, m in ((exact, g), (black, bb)):
            for y in ys:
                if not f.ask(m):
                    break
                f.record(y)
        assert black.steps <= exact.steps
        assert black.steps >= 1  # and it is not uselessly loose
