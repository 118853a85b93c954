"""Every filter for every mechanism: the randomized-response question answered from the CLI against an
independent count-vector computation and hand closed forms, no silent caps, the (1, 0) ∧ (0.5, 0.1)
mechanism through every filter, Monte Carlo against exact audits, and one-line errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from lpdp.cli import main
from lpdp.errors import LpdpError, ParameterError
from lpdp.filters import (
    Filter,
    GaussianMechanism,
    RealisationFilter,
    audit,
    baselines,
    build_filter,
    classical_rounds,
    default_pairs,
    filter_kinds,
    optimal_parameters,
    randomized_response,
    survival,
)
from lpdp.mechanisms import DPMechanism

EPS, DELTA, N, EPS0 = 6.0, 1e-6, 40, 0.7
KEEP = math.exp(EPS0) / (math.exp(EPS0) + 3)
OTHER = 1 / (math.exp(EPS0) + 3)


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def expected_min_t(max_range: int, lag: int) -> float:
    """E[min(T, N)] for 4-ary RR under input 0 when the filter goes on while every ordered pair's
    realised loss ε0 (n_a - n_b) is at most ε0 × max_range, i.e. while max(n) - min(n) <= max_range:
    ``P(T >= t) = P(range(n_j) <= max_range for j = 0 .. t-1-lag)``, by dynamic programming over
    count vectors kept in a dict (not the library's audit)."""
    probs = (KEEP, OTHER, OTHER, OTHER)
    alive = {(0, 0, 0, 0): 1.0}
    total = 0.0
    for t in range(1, N + 1):
        j = t - 1 - lag
        if j >= 0:
            alive = {c: p for c, p in alive.items() if max(c) - min(c) <= max_range}
        total += 1.0 if j < 0 else sum(alive.values())
        if j >= 0:
            nxt: dict[tuple[int, ...], float] = {}
            for c, p in alive.items():
                for y in range(4):
                    d = list(c)
                    d[y] += 1
                    nxt[tuple(d)] = nxt.get(tuple(d), 0.0) + p * probs[y]
            alive = nxt
    return total


def rr_delta(e):
    """One round's δ(e) for the worst pair: outputs x (keep vs other), x' (other vs keep), 2 equal."""
    return max(0.0, KEEP - math.exp(e) * OTHER) + max(0.0, OTHER - math.exp(e) * KEEP)


def composed_rr_delta(k, eps):
    """δ(ε) of k rounds of the pair by the trinomial over (n+, n-): loss ε0 (n+ - n-)."""
    total = 0.0
    for a in range(k + 1):
        for b in range(k + 1 - a):
            loss = EPS0 * (a - b)
            if loss > eps:
                logp = (math.lgamma(k + 1) - math.lgamma(a + 1) - math.lgamma(b + 1)
                        - math.lgamma(k - a - b + 1) + a * math.log(KEEP) + b * math.log(OTHER)
                        + (k - a - b) * math.log(2 * OTHER))
                total += math.exp(logp) * -math.expm1(eps - loss)
    return total


def test_rr_question_from_the_cli(capsys):
    out = run_json(capsys, "filter", "simulate", "--rr", f"4,{EPS0}", "--epsilon", str(EPS),
                   "--delta", str(DELTA), "--max-steps", str(N), "--trajectories", "0")
    e = out["expected_releases"]
    # Both (δ̃, θ) are below P(L = ε0) = KEEP, so u(δ̃) = u(θ) = u(δ/N) = ε0.
    assert max(out["delta_tilde"], out["theta"]) < KEEP
    kappa, union = EPS - 2 * EPS0, EPS - EPS0
    assert e["realisation"] == pytest.approx(expected_min_t(math.floor(kappa / EPS0), 1), rel=1e-12)
    assert e["union"] == pytest.approx(expected_min_t(math.floor(union / EPS0), 0), rel=1e-12)
    assert out["expected_T"] == e["realisation"] and out["method"] == "exact"
    b = out["baselines"]
    # additive: largest k with k δ(ε/k) <= δ
    assert b["additive"] == max(k for k in range(1, 60) if k * rr_delta(EPS / k) <= DELTA)
    # concentrated: pure ε0 gives ρ = ε0²/2, budget (sqrt(L + ε) - sqrt(L))²
    big_l = math.log(1 / DELTA)
    assert b["concentrated"] == math.floor((math.sqrt(big_l + EPS) - math.sqrt(big_l)) ** 2
                                           / (EPS0**2 / 2))
    # Rényi: best order over a fine grid, D_α of the worst pair in closed form
    alphas = 1 + np.geomspace(1e-3, 1e2, 20001)
    d = np.log(KEEP**alphas * OTHER ** (1 - alphas) + OTHER**alphas * KEEP ** (1 - alphas)
               + 2 * OTHER) / (alphas - 1)
    assert b["renyi"] == int(np.max(np.floor((EPS - big_l / (alphas - 1)) / d)))
    # advanced (Rogers et al. Thm 5.1) with ε_i the least for k δ(ε_i) <= δ/2
    def rruv_ok(k):
        ei = max(0.0, math.log((KEEP - DELTA / (2 * k)) / OTHER))
        c = 28.04 * math.log(1 / DELTA)
        big_k = k * ei * math.expm1(ei) / 2 + math.sqrt(
            (k * ei * ei + EPS**2 / c) * (2 + math.log(c * k * ei * ei / EPS**2 + 1))
            * math.log(2 / DELTA))
        return big_k <= EPS
    assert b["advanced"] == max([0] + [k for k in range(1, 60) if rruv_ok(k)])
    # classical: largest k with δ_k(ε) <= δ by the trinomial
    assert b["classical"] == max(k for k in range(1, 60) if composed_rr_delta(k, EPS) <= DELTA)
    assert e["realisation"] > 2.5 * b["classical"]


def test_classical_and_renyi_are_never_capped():
    """classical_rounds(1/5000, 1, 1e-3) used to stop at 1,048,575; the Rényi count at 10^6."""
    mu, eps, delta = 1 / 5000, 1.0, 1e-3

    def delta_k(k):  # Balle–Wang by scipy, not by lpdp
        m = mu * math.sqrt(k)
        return stats.norm.cdf(-eps / m + m / 2) - math.exp(eps) * stats.norm.cdf(-eps / m - m / 2)

    k = classical_rounds(mu, eps, delta)
    assert k == 3_771_388 and delta_k(k) <= delta < delta_k(k + 1)
    b = baselines(GaussianMechanism(5000.0), eps, delta)
    big_l = math.log(1 / delta)
    assert b["renyi"].rounds == math.floor((math.sqrt(big_l + eps) - math.sqrt(big_l)) ** 2
                                           / (mu * mu / 2)) > 10**6
    assert not any(x.at_least for x in b.values())


def test_double_constraint_mechanism_through_every_filter():
    """A mechanism meeting (1, 0) and (0.5, 0.1) at once: every registered filter's exact audit stays
    within its target δ (realisation-level filters: the tail P(l^(T) > ε) too)."""
    m = DPMechanism([(1.0, 0.0), (0.5, 0.1)])
    eps, delta, n = 4.0, 0.2, 12
    pairs = default_pairs(m)
    for kind in filter_kinds():
        f = build_filter(kind.name, m, eps, delta, n, pairs)
        assert isinstance(f, Filter)
        r = audit(f, m)
        assert r.method == "exact"
        assert r.hockey_stick_delta <= delta, kind.name
        if kind.level == "realisation":
            assert r.tail <= delta and r.expected_T > 1, kind.name


def test_finite_monte_carlo_within_3_standard_errors_of_exact():
    m = randomized_response(3, 1.0)
    pairs = default_pairs(m)
    p = optimal_parameters(0.05, 15, m, inputs=pairs)
    f = RealisationFilter(5.0, 0.05, 15, p.delta_tilde, p.theta, pairs)
    exact = survival(f, m)
    mc = survival(f, m, method="monte-carlo", trajectories=20_000, seed=11)
    assert exact.method == "exact" and 2 < exact.expected_T < 14
    assert abs(exact.expected_T - mc.expected_T) <= 3 * mc.expected_T_stderr


def test_api_errors_are_lpdp_errors(tmp_path):
    g = GaussianMechanism(2.0)
    f = RealisationFilter(6.0, 1e-3, 48, 5e-4, 1e-5)
    assert f.ask(g)
    with pytest.raises(ParameterError, match="output 'x' is not an output"):
        f.record("x")
    with pytest.raises(ParameterError, match="has no density"):
        f.record(float("nan"))
    f.record(0.3)
    assert f.remaining() == {"steps": 47.0} and set(f.spent()) == {(1, 0), (0, 1)}
    with pytest.raises(LpdpError, match="does not exist"):
        f.save(tmp_path / "missing" / "t.json")
    with pytest.raises(ParameterError, match="no such transcript"):
        RealisationFilter.replay(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ParameterError, match="not valid JSON"):
        RealisationFilter.replay(tmp_path / "bad.json")
    with pytest.raises(LpdpError, match="malformed"):
        RealisationFilter.replay({"filter": "RealisationFilter", "pairs": [[1, 0]]})


@pytest.mark.parametrize("argv, match", [
    (["simulate", "--sigma", "2", "--rr", "2,1"], "2 different mechanisms; say how rounds run"),
    (["simulate"], "no mechanism"),
    (["simulate", "--sigma", "2", "--trajectories", "1e12"], "trajectories=1000000000000"),
    (["audit", "--sigma", "2", "--max-steps", "1e9"], "max_steps=1000000000"),
    (["audit", "--rr", "2.5,1"], "categories' = 2.5 must be an integer"),
    (["audit", "--mechanism", "/nonexistent/m.json"], "no such workload file"),
])
def test_cli_errors_are_one_line(capsys, argv, match):
    base = ["--epsilon", "6", "--delta", "1e-3"]
    if "--max-steps" not in argv:
        base += ["--max-steps", "10"]
    assert main(["filter", *argv, *base]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err


def test_every_mechanism_option_keeps_the_json_keys(capsys, tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps(randomized_response(2, 1.0).to_dict()))
    w = tmp_path / "w.toml"
    w.write_text('[[mechanism]]\nkind = "finite"\np = [0.5, 0.3, 0.2]\nq = [0.2, 0.3, 0.5]\ntimes = 3\n')
    mix = tmp_path / "mix.toml"
    mix.write_text(w.read_text() + '[[mechanism]]\nkind = "laplace"\nscale = 2.0\n')
    for option in (["--sigma", "2"], ["--gaussian-sigma", "2"], ["--laplace", "2"], ["--rr", "3,0.5"],
                   ["--pure", "0.5"], ["--dp", "1,0", "--dp", "0.5,0.1"], ["--mechanism", str(f)],
                   ["--mechanism", str(w)], ["--mechanism", str(mix), "--rounds", "iid"],
                   ["--mechanism", str(mix), "--rounds", "cyclic"]):
        common = [*option, "--epsilon", "4", "--delta", "0.05", "--max-steps", "8"]
        out = run_json(capsys, "filter", "simulate", *common, "--trajectories", "500")
        assert {"survival", "expected_T", "method", "baselines", "expected_releases"} <= set(out)
        assert out["monte_carlo"]["expected_T_stderr"] >= 0
        out = run_json(capsys, "filter", "audit", *common, "--trajectories", "500")
        assert {"tail", "hockey_stick_delta", "bound"} <= set(out)
        out = run_json(capsys, "filter", "params", *common)
        assert "kappa" in out


def test_sequence_parameters_routes():
    """For an i.i.d. declared sequence both routes give Proposition 1's optimum; for a heterogeneous one
    the declared route's objective is no worse than the Gaussian i.i.d. optimum's on that sequence."""
    from lpdp.filters.adaptive import sequence_parameters
    from lpdp.mechanisms import Request

    g = GaussianMechanism(2.0)
    ref = optimal_parameters(1e-3, 48)
    for model in ("declared", "iid"):
        p = sequence_parameters(1e-3, 48, [(g, None)], [(1, 0)], model=model)
        assert p.delta_tilde == pytest.approx(ref.delta_tilde, rel=1e-3)
    rr = randomized_response(3, 1.0)
    ind = Request("is-0", {0: 1.0, 1: 0.0, 2: 0.0})
    cat = Request("cat", {0: 0, 1: 1, 2: 2})
    seq = [(rr, cat)] + [(g, ind)] * 9
    pairs = [(0, 1), (0, 2), (1, 2)]
    p = sequence_parameters(1e-3, 10, seq, pairs)

    def worst(q):  # max over consecutive steps of u_i(θ) + u_{i+1}(δ̃), by hand
        out = -math.inf
        for (m1, r1), (m2, r2) in zip(seq[:-1], seq[1:], strict=True):
            for a, b in pairs:
                for v, w in ((a, b), (b, a)):
                    out = max(out, m1.loss_quantile(q.theta, r1(v), r1(w))
                              + m2.loss_quantile(q.delta_tilde, r2(v), r2(w)))
        return out

    assert worst(p) <= worst(optimal_parameters(1e-3, 10)) + 1e-9


def test_laplace_classical_against_dp_accounting():
    """Laplace b = 2: the accountant's certified count (14 at ε = 6, δ = 1e-3) against dp_accounting's
    PLD at a fine discretisation (δ_14 = 4.1e-4 fits, δ_15 = 1.05e-3 does not)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    from lpdp.mechanisms import LaplaceMechanism

    k = baselines(LaplaceMechanism(2.0), 6.0, 1e-3)["classical"].rounds
    acc = pld.from_laplace_mechanism(parameter=2.0, sensitivity=1.0,
                                     value_discretization_interval=1e-4)
    assert acc.self_compose(k).get_delta_for_epsilon(6.0) <= 1e-3
    assert acc.self_compose(k + 1).get_delta_for_epsilon(6.0) > 1e-3


def test_a_workload_of_several_mechanisms_is_refused_in_one_line(capsys, tmp_path):
    w = tmp_path / "two.toml"
    w.write_text('[[mechanism]]\nkind = "pure"\nepsilon = 0.5\n[[mechanism]]\nkind = "gaussian"\n'
                 'sigma = 2.0\n')
    assert main(["filter", "audit", "--mechanism", str(w), "--epsilon", "6", "--delta", "1e-3",
                 "--max-steps", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2 different mechanisms" in err


@pytest.mark.parametrize("k", [20, 30])
def test_laplace_monte_carlo_within_3_standard_errors_of_exact(k):
    """Laplace b = 2, k rounds (a deterministic stop, as any mechanism-level filter on i.i.d. rounds):
    the Monte Carlo hockey-stick δ against the accountant's bracket of δ_k(6) (width < 1e-4)."""
    from lpdp.accountant import Accountant
    from lpdp.filters.audit import rule_audit
    from lpdp.filters.realisation import StoppingRule
    from lpdp.mechanisms import LaplaceMechanism

    lap = LaplaceMechanism(2.0)
    rule = StoppingRule(6.0, k, ((1, 0), (0, 1)), True, (math.inf, math.inf), 0)
    _, pairs = rule_audit(rule, lap, method="monte-carlo", trajectories=100_000, seed=3)
    lo, hi = Accountant().compose(lap, k).guarantee().delta(6.0)
    assert hi - lo < 1e-4
    for p in pairs:
        assert abs(p.hockey_stick_delta - (lo + hi) / 2) <= 3 * p.hockey_stick_stderr + (hi - lo) / 2


def test_every_filter_within_its_delta_on_laplace():
    from lpdp.mechanisms import LaplaceMechanism

    lap = LaplaceMechanism(1.0)
    for kind in filter_kinds():
        f = build_filter(kind.name, lap, 4.0, 0.05, 12, [(1, 0)])
        r = audit(f, lap)  # exact: the Laplace quadrature (tests/test_filter_audit_laplace.py)
        assert r.method == "quadrature" and r.hockey_stick_delta <= 0.05, kind.name
        if kind.level == "realisation":
            assert r.tail <= 0.05, kind.name


def test_tiny_gaussian_steps_give_numbers_not_nan():
    """σ = 1e300: one round's δ(ε > 0) is 0 (it was nan), so the additive count is large, not 0, and the
    classical count reaches the search cap (reported, not silent)."""
    from lpdp.errors import ParameterError as PE
    from lpdp.tradeoff import gaussian_delta

    assert 0.0 <= gaussian_delta(6.0, 1e-300) <= 1e-300   # certified from above: 0 or a subnormal
    b = baselines(GaussianMechanism(1e300), 6.0, 1e-3)
    assert b["additive"].rounds > 10**6 and b["renyi"].at_least and b["classical"].at_least
    with pytest.raises(PE, match="more than"):
        classical_rounds(1e-300, 6.0, 1e-3)
