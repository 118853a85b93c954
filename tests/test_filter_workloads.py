"""Workloads of several mechanisms in the filters. i.i.d. rounds of a mix (the step drawn at random,
publicly): the mixture's loss law, its quantiles, the mechanism-level charges, the accountant, the
filters and the CLI, each against a route that does not go through
:class:`lpdp.mechanisms.MixtureMechanism`. A declared cycle from the CLI (``--rounds cyclic``): against
the filter objects themselves, run on every output sequence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from lpdp import Accountant
from lpdp.cli import main
from lpdp.errors import LpdpError
from lpdp.filters import (
    audit,
    baselines,
    build_filter,
    load_mechanism,
    renyi_divergence,
    round_delta,
    round_epsilon,
    workload_steps,
    zcdp_rho,
)
from lpdp.mechanisms import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    MixtureMechanism,
    mixture,
    pure,
    randomized_response,
)
from lpdp.pld import mixture as mixture_law

G, LAP, RR = GaussianMechanism(2.0), LaplaceMechanism(1.5), randomized_response(4, 0.7)


def _mix(parts, weights):
    return MixtureMechanism(workload_steps([(m, 1) for m in parts]), weights)


def _gauss_tail(c, mu):
    return float(stats.norm.sf((c - mu * mu / 2) / mu))


def _laplace_tail(c, r):
    return 0.0 if c >= r else 1.0 if c < -r else 1.0 - 0.5 * math.exp((c - r) / 2)


@pytest.mark.parametrize("c", [-2.0, -0.3, 0.0, 0.4, 0.66, 1.2, 5.0])
def test_tail_is_the_weighted_sum_of_closed_forms(c):
    m = _mix([G, LAP], [3, 1])
    want = 0.75 * _gauss_tail(c, 0.5) + 0.25 * _laplace_tail(c, 1 / 1.5)
    assert m.loss_tail(c, 1, 0) == pytest.approx(want, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("a", [1e-9, 1e-4, 0.01, 0.2, 0.5, 0.7, 0.95])
def test_quantile_is_the_generalised_inverse(a):
    """u(a) = inf{c : P(L > c) <= a}: the tail at u is <= a, just below u it is > a (closed-form tails)."""
    m = _mix([G, LAP, RR], [2, 1, 1])
    u = m.loss_quantile(a, 1, 0)

    def tail(c):
        fin = math.fsum(p for v, p in zip(*RR.loss_pmf(0, 1), strict=True) if v > c)
        return 0.5 * _gauss_tail(c, 0.5) + 0.25 * _laplace_tail(c, 1 / 1.5) + 0.25 * fin

    assert tail(u) <= a * (1 + 1e-12)
    assert tail(u - 1e-9 * max(1.0, abs(u))) > a


def test_finite_steps_agree_with_the_exact_finite_mixture():
    """An all-finite MixtureMechanism and mixture()'s FiniteMechanism (exact PMF walk) give the same
    quantiles, tails and Rényi divergences."""
    parts = [RR, pure(1.0), randomized_response(2, 0.3)]
    steps = workload_steps([(m, 1) for m in parts])
    cont, fin = MixtureMechanism(steps, [1, 2, 3]), mixture(steps, [1, 2, 3])
    assert isinstance(fin, FiniteMechanism)
    for a in (1e-6, 0.05, 0.3, 0.5, 0.9):
        assert cont.loss_quantile(a, 1, 0) == pytest.approx(fin.loss_quantile(a, 1, 0), abs=1e-12)
        assert cont.loss_quantile(a, 0, 1) == pytest.approx(fin.loss_quantile(a, 0, 1), abs=1e-12)
    for c in (-1.0, 0.0, 0.5):
        assert cont.loss_tail(c, 1, 0) == pytest.approx(fin.loss_tail(c, 1, 0), rel=1e-12)
    assert renyi_divergence(cont, 3.0, [(1, 0)]) == pytest.approx(renyi_divergence(fin, 3.0), rel=1e-12)


def test_round_delta_and_epsilon_are_weighted_profiles():
    m = _mix([G, LAP], [1, 1])
    for e in (0.0, 0.3, 1.0):
        want = 0.5 * float(G.tradeoff().delta(e)) + 0.5 * float(LAP.tradeoff().delta(e))
        assert want <= round_delta(m, e) <= want * (1 + 1e-12)
    e = round_epsilon(m, 1e-3)
    assert round_delta(m, e) <= 1e-3 < round_delta(m, e * (1 - 1e-9))


def test_renyi_by_numerical_integration():
    """D_α of the public-index mixture: log Σ_j w_j ∫ p_j^α q_j^{1-α} / (α-1), integrals by quadrature."""
    m, alpha = _mix([G, LAP], [1, 3]), 4.0

    def moment(logpdf_p, logpdf_q):
        def f(y):
            return math.exp(alpha * logpdf_p(y) + (1 - alpha) * logpdf_q(y))

        return sum(integrate.quad(f, a, b, limit=200, epsabs=0, epsrel=1e-12)[0]
                   for a, b in ((-80.0, 0.0), (0.0, 1.0), (1.0, 80.0)))

    g = moment(stats.norm(1.0, 2.0).logpdf, stats.norm(0.0, 2.0).logpdf)
    lap = moment(stats.laplace(1.0, 1.5).logpdf, stats.laplace(0.0, 1.5).logpdf)
    want = math.log(0.25 * g + 0.75 * lap) / (alpha - 1)
    got = renyi_divergence(m, alpha)
    assert want <= got <= want * (1 + 1e-9) + 1e-15


def test_zcdp_is_the_largest_rho():
    m = _mix([GaussianMechanism(1.0), GaussianMechanism(3.0)], [1, 1])
    assert zcdp_rho(m) == pytest.approx(0.5, rel=1e-15)


def test_accountant_brackets_the_exact_finite_composition():
    """k rounds of an all-finite mix: the certified engine on the mixture's loss law (MixtureMechanism)
    brackets the exact product of the finite mixture (the accountant's exact route)."""
    steps = workload_steps([(RR, 1), (pure(1.0), 1)])
    exact = Accountant().compose(mixture(steps, [1, 3]), 6).guarantee()
    bracket = Accountant().compose(MixtureMechanism(steps, [1, 3]), 6).guarantee()
    assert exact.exact and not bracket.exact
    eps = np.array([0.0, 1.0, 2.5, 4.0])
    lo, hi = bracket.delta(eps)
    truth = exact.delta(eps)[1]
    assert np.all(lo <= truth * (1 + 1e-12)) and np.all(truth <= hi * (1 + 1e-12))


def test_loss_law_mixture_masses():
    """P(L > c) of the mixed law (continuous part plus atoms above c) against the closed forms."""
    law = mixture_law([G.loss_law(), LAP.loss_law()], [0.5, 0.5])
    c = np.array([-0.5, 0.0, 0.3])
    want = 0.5 * np.array([_gauss_tail(x, 0.5) + _laplace_tail(x, 1 / 1.5) for x in c])
    atoms = np.array([np.exp(law.log_p)[law.losses > x].sum() for x in c])
    assert np.allclose(np.exp(law.log_sf(c)) + atoms, want, rtol=1e-12)
    with pytest.raises(LpdpError, match="weights"):
        mixture_law([G.loss_law()], [0.5])


def test_filters_on_a_finite_mix_agree_with_the_exact_audit():
    """The same i.i.d. mix, run as MixtureMechanism (Monte Carlo on its sampled losses) and audited as
    mixture()'s FiniteMechanism (exact dynamic programming): within 3 standard errors."""
    steps = workload_steps([(randomized_response(2, 1.0), 1), (pure(0.5), 1)])
    fin, cont = mixture(steps, [1, 1]), MixtureMechanism(steps, [1, 1])
    f = build_filter("realisation", fin, 3.0, 1e-2, 12, [(1, 0)])
    exact = audit(f, fin)
    mc = audit(f, cont, trajectories=40_000, seed=3)
    assert exact.method == "exact" and mc.method == "monte-carlo"
    for a, b in zip(exact.pairs, mc.pairs, strict=True):
        # Var T from the exact survival curve: E[T²] = Σ_t (2t - 1) P(T >= t)
        second = math.fsum((2 * t - 1) * s for t, s in enumerate(a.survival, start=1))
        se_t = math.sqrt(max(second - a.expected_T ** 2, 0.0) / 40_000)
        assert abs(a.expected_T - b.expected_T) <= 3 * se_t + 1e-12
        se_tail = math.sqrt(a.tail * (1 - a.tail) / 40_000)
        assert abs(a.tail - b.tail) <= 3 * se_tail + 1e-12
    assert exact.tail <= f.claimed_delta and exact.hockey_stick_delta <= f.claimed_delta


def test_every_filter_within_its_delta_on_a_continuous_mix():
    m = _mix([G, LAP, RR], [1, 1, 1])
    for name in ("realisation", "union", "combined"):
        f = build_filter(name, m, 4.0, 1e-2, 20, [(1, 0)])
        r = audit(f, m, trajectories=20_000, seed=1)
        assert r.tail_upper <= 1e-2 and r.hockey_stick_upper <= 1e-2, name
    b = baselines(m, 4.0, 1e-2)
    assert all(v.rounds is not None for v in b.values())


def _write(tmp_path, text):
    p = tmp_path / "w.toml"
    p.write_text(text)
    return str(p)


W = ('[[mechanism]]\nkind = "gaussian"\nsigma = 2.0\ntimes = 2\n'
     '[[mechanism]]\nkind = "randomized_response"\ncategories = 4\nepsilon = 0.7\n')


def test_load_iid_mixture_weights(tmp_path):
    m = load_mechanism(_write(tmp_path, W), rounds="iid")
    assert isinstance(m, MixtureMechanism)
    assert m.weights == pytest.approx((2 / 3, 1 / 3))
    assert [s[1](1) for s in m.steps] == [1.0, 0] and [s[1](0) for s in m.steps] == [0.0, 1]


def test_cli_simulate_a_mix(tmp_path, capsys):
    path = _write(tmp_path, W)
    rc = main(["filter", "simulate", "--mechanism", path, "--rounds", "iid", "--epsilon", "6",
               "--delta", "1e-3", "--max-steps", "10", "--trajectories", "4000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert {"survival", "expected_T", "method", "baselines", "expected_releases", "monte_carlo"} <= set(out)
    mc = out["monte_carlo"]
    assert abs(mc["expected_T"] - out["expected_T"]) <= 4 * mc["expected_T_stderr"] + 0.05
    assert out["mechanism"]["kind"] == "mixture"


@pytest.mark.parametrize("argv, match", [
    (["--rounds", "iid"], "--rounds iid: only for a workload"),
    ([], "2 different mechanisms; say how rounds run"),
])
def test_cli_mix_errors_are_one_line(tmp_path, capsys, argv, match):
    path = _write(tmp_path, W)
    base = ["filter", "params", "--epsilon", "6", "--delta", "1e-3", "--max-steps", "20"]
    extra = argv if argv else ["--mechanism", path]
    assert main(base + extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err


CYCLE = ('[[mechanism]]\nkind = "randomized_response"\ncategories = 2\nepsilon = 1.0\ntimes = 2\n'
         '[[mechanism]]\nkind = "pure"\nepsilon = 0.5\n')


def _enumerate(filt, steps, x):
    """E_x[T] and P_x(l^(T) > ε) of the filter object itself, over every output sequence (exact): a
    fresh copy is fed each prefix, asked for the next step of the cycle with the one after declared."""
    def fresh(outputs):
        f = type(filt)(**filt.config(), pairs=filt.pairs)
        for i, y in enumerate(outputs):
            assert f.ask(*steps[i % len(steps)], next=[steps[(i + 1) % len(steps)]])
            f.record(y)
        return f

    def walk(outputs, prob):
        f = fresh(outputs)
        i = len(outputs)
        step = steps[i % len(steps)]
        if not f.ask(*step, next=[steps[(i + 1) % len(steps)]]):
            return prob * i, prob * (max(f.spent().values()) > filt.epsilon + 1e-9)
        mech, req = step
        t_sum = over = 0.0
        for y, p in zip(mech.outputs, mech.probabilities(req(x)), strict=True):
            if p > 0:
                a, b = walk([*outputs, y], prob * p)
                t_sum, over = t_sum + a, over + b
        return t_sum, over

    return walk([], 1.0)


def test_cli_cycle_against_the_filter_on_every_output_sequence(tmp_path, capsys):
    """--rounds cyclic: the CLI's Monte Carlo E[min(T, N)] of the realisation-level filter, with the
    (δ̃, θ) it prints, within 3 standard errors of the exact E[T] of the RealisationFilter object run on
    every output sequence of the cycle (a route that shares nothing with the vectorised rule)."""
    from lpdp.filters import RealisationFilter, load_cycle

    path = _write(tmp_path, CYCLE)
    argv = ["filter", "simulate", "--mechanism", path, "--rounds", "cyclic", "--epsilon", "3",
            "--delta", "0.05", "--max-steps", "8", "--trajectories", "20000", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"survival", "expected_T", "method", "baselines", "expected_releases", "monte_carlo"} <= set(out)
    assert out["method"] == "monte-carlo" and out["mechanism"]["rounds"] == "cyclic"
    steps = load_cycle(path)
    filt = RealisationFilter(3.0, 0.05, 8, out["delta_tilde"], out["theta"], [(1, 0)])
    exact_t, exact_over = _enumerate(filt, steps, 1)
    se = out["monte_carlo"]["expected_T_stderr"]
    assert se > 0 and abs(out["expected_T"] - exact_t) <= 3 * se
    assert exact_over <= 0.05
    assert main(["filter", "audit", *argv[2:-3], "--trajectories", "20000", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert {"tail", "hockey_stick_delta", "bound"} <= set(a) and a["tail_upper"] <= 0.05
    assert abs(a["expected_T"] - exact_t) <= 3 * se * 1.5
    assert main(["filter", "params", *argv[2:-3], "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    assert (p["delta_tilde"], p["theta"]) == (out["delta_tilde"], out["theta"])


@pytest.mark.parametrize("extra, match", [
    (["--rounds", "cyclic", "--trajectories", "0"], "--trajectories 0"),
    (["--rounds", "iid", "--model", "iid"], "--model iid: only with --rounds cyclic"),
])
def test_cli_cycle_errors_are_one_line(tmp_path, capsys, extra, match):
    path = _write(tmp_path, CYCLE)
    rc = main(["filter", "simulate", "--mechanism", path, *extra, "--epsilon", "2", "--delta", "0.05",
               "--max-steps", "6"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and match in err


def test_cli_cycle_model_iid_is_the_fitted_mixture(tmp_path, capsys):
    """--model iid: the (δ̃, θ) of Proposition 1's objective for the i.i.d. mix fitted to the cycle
    (the equal-weight mixture of its steps), i.e. optimal_parameters on that MixtureMechanism."""
    from lpdp.filters import load_cycle, optimal_parameters

    path = _write(tmp_path, CYCLE)
    assert main(["filter", "params", "--mechanism", path, "--rounds", "cyclic", "--model", "iid",
                 "--epsilon", "3", "--delta", "0.05", "--max-steps", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    steps = load_cycle(path)
    distinct = list(dict.fromkeys(steps))
    fitted = MixtureMechanism(distinct, [steps.count(s) for s in distinct])
    want = optimal_parameters(0.05, 8, fitted, inputs=[(1, 0)])
    assert out["delta_tilde"] == pytest.approx(want.delta_tilde, rel=1e-3)
    assert out["delta_tilde"] + out["theta"] * (1 - out["delta_tilde"]) * 8 <= 0.05
