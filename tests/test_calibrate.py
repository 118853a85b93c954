"""lpdp.calibrate against independent references: the Gaussian closed form and brute-force sums in mpmath.

Every answer is checked on both sides: the certificate at ``value`` meets the target (no tolerance), and
the reference says the target is missed just past ``value`` (a count at ``value + 1``, a continuous value
one tolerance further), so the answer is the optimum and not merely safe.
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from lpdp.calibrate import calibrate, how_many_more, noise_factor, search, split
from lpdp.cli import main
from lpdp.compose import double_dp, max_k_within
from lpdp.errors import LpdpError, ParameterError
from lpdp.mechanisms import DPMechanism, GaussianMechanism, LaplaceMechanism, pure

mp.mp.dps = 40


# ------------------------------------------------------------------------------------- references
def gaussian_delta_mp(eps, mu):
    """δ(ε) of G_μ (Balle and Wang, 2018, Theorem 8) in 40 digits."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def gaussian_sigma_mp(k, eps, delta):
    """The exact smallest σ with k releases (2k/σ² = μ²) meeting (ε, δ): bisection on μ in 40 digits."""
    lo, hi = mp.mpf("1e-6"), mp.mpf(100)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta_mp(eps, mid) <= delta else (lo, mid)
    return mp.sqrt(k) / lo


def kairouz_delta_mp(e0, d0, k, eps):
    """Brute force δ(ε) of k runs of an (ε0, δ0) mechanism: the reveal mass plus the binary RR product."""
    e0, eps = mp.mpf(e0), mp.mpf(eps)
    p, q = mp.exp(e0) / (1 + mp.exp(e0)), 1 / (1 + mp.exp(e0))
    rr = mp.fsum(max(mp.mpf(0), mp.binomial(k, i) * (p ** (k - i) * q ** i - mp.exp(eps) * p ** i
                                                     * q ** (k - i))) for i in range(k + 1))
    keep = (1 - mp.mpf(d0)) ** k
    return 1 - keep + keep * rr


def pure_delta_mp(counts, eps):
    """Brute force δ(ε) of pure mechanisms {ε_a: n_a} (two groups): binary RR pairs, every flip count."""
    rows = []
    for e, n in counts.items():
        p, q = mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))
        rows.append([(mp.binomial(n, i) * p ** (n - i) * q ** i, mp.binomial(n, i) * q ** (n - i) * p ** i)
                     for i in range(n + 1)])
    (first, second), w = rows, mp.exp(eps)
    return mp.fsum(max(mp.mpf(0), a * b - w * c * d) for a, c in first for b, d in second)


def rr_delta_mp(categories, e0, k, eps):
    """Brute force δ(ε) of k runs of K-ary randomized response: (correct, swapped, neutral) counts."""
    e0, eps = mp.mpf(e0), mp.mpf(eps)
    z = mp.exp(e0) + categories - 1
    hi, lo, mid = mp.exp(e0) / z, 1 / z, (categories - 2) / z
    total = mp.mpf(0)
    for a in range(k + 1):
        for b in range(k + 1 - a):
            c = k - a - b
            m = mp.factorial(k) / (mp.factorial(a) * mp.factorial(b) * mp.factorial(c)) * mid ** c
            total += max(mp.mpf(0), m * (hi ** a * lo ** b - mp.exp(eps) * lo ** a * hi ** b))
    return total


def assert_certified(c):
    """The certificate at the value meets the target on both readings (no tolerance)."""
    eps, delta = c.target
    assert c.meets_target
    assert c.epsilon <= eps
    assert c.guarantee.delta(eps)[1] <= delta
    assert c.optimum[0] <= c.optimum[1]
    assert c.value in c.optimum


# ------------------------------------------------------------------------------------- Gaussian σ
@pytest.mark.parametrize("k, eps, delta", [(1000, 2.0, 1e-6), (1, 0.01, 1e-5), (100, 0.01, 1e-5),
                                           (10, 1.0, 1e-3), (50, 8.0, 1e-10)])
def test_gaussian_sigma_is_the_closed_form(k, eps, delta):
    c = calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?", "times": k}]}, eps, delta)
    assert_certified(c)
    ref = gaussian_sigma_mp(k, eps, delta)
    # Sound: the exact δ at the value meets the target; the bracket holds the exact optimum.
    assert gaussian_delta_mp(eps, mp.sqrt(k) / mp.mpf(c.value)) <= delta
    assert c.optimum[0] <= ref <= c.optimum[1]
    # Tight: within 1e-9 relative (the closed-form face solves to about 1e-12).
    assert c.value <= ref * (1 + 1e-9)
    assert c.optimum[1] / c.optimum[0] - 1 < 1e-9


def test_gaussian_issue_question():
    """'What σ makes 1000 releases (2, 1e-6)-DP?': 70.533853 to 1e-6 relative."""
    c = calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?", "times": 1000}]}, 2.0, 1e-6)
    assert abs(c.value / 70.533853 - 1) < 1e-6
    assert c.guarantee.route == "gaussian" and c.monotone


def test_gaussian_times_and_sensitivity():
    """A free count of Gaussians, and a sensitivity: σ scales with it (μ = Δ/σ)."""
    c = calibrate({"mechanism": [{"kind": "gaussian", "sigma": 70.0, "times": "?"}]}, 2.0, 1e-6)
    assert c.value == 984 and c.optimum == (984, 984)     # 1000·(70/70.5338...)² = 984.9
    ref = gaussian_sigma_mp(1, 2.0, 1e-6)
    assert gaussian_delta_mp(2.0, mp.sqrt(984) / 70) <= 1e-6 < gaussian_delta_mp(2.0, mp.sqrt(985) / 70)
    d = calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?", "sensitivity": 3.0}]}, 2.0, 1e-6)
    assert 3 * ref / (1 + 1e-9) <= d.value <= 3 * ref * (1 + 1e-9)


# ------------------------------------------------------------------------------------------ counts
@pytest.mark.parametrize("e0, d0, eps, delta", [(0.1, 1e-7, 1.0, 1e-4), (0.5, 0.0, 3.0, 1e-6),
                                                (0.2, 1e-6, 2.0, 1e-3)])
def test_kairouz_count_is_exact(e0, d0, eps, delta):
    c = calibrate({"mechanism": [{"kind": "dp", "constraints": [[e0, d0]], "times": "?"}]}, eps, delta)
    assert_certified(c)
    k = c.value
    assert c.optimum == (k, k) and c.guarantee.route == "kairouz"
    assert kairouz_delta_mp(e0, d0, k, eps) <= delta < kairouz_delta_mp(e0, d0, k + 1, eps)


def test_heterogeneous_pure_count_is_exact():
    w = {"mechanism": [{"kind": "pure", "epsilon": 0.3, "times": 4},
                       {"kind": "pure", "epsilon": 0.1, "times": "?"}]}
    c = calibrate(w, 2.0, 1e-6)
    assert_certified(c)
    k = c.value
    assert c.guarantee.route == "theorem1" and c.optimum == (k, k)
    assert pure_delta_mp({0.3: 4, 0.1: k}, 2.0) <= 1e-6 < pure_delta_mp({0.3: 4, 0.1: k + 1}, 2.0)


def test_double_dp_count_agrees_with_max_k_within():
    c = calibrate({"mechanism": [{"kind": "dp", "constraints": [[1.0, 1e-6], [0.3, 1e-3]], "times": "?"}]},
                  8.0, 1e-5)
    assert_certified(c)
    assert c.value == max_k_within(lambda k: double_dp((1.0, 1e-6), (0.3, 1e-3), k), 8.0, 1e-5)
    assert double_dp((1.0, 1e-6), (0.3, 1e-3), c.value + 1).delta(8.0) > 1e-5


def test_zero_more_fit_is_an_answer():
    """The issue's second question: 40 at 0.3 and 400 at 0.02 already exceed δ(5) <= 1e-6."""
    c = how_many_more([(pure(0.3), 40), (pure(0.02), 400)], pure(0.02), 5.0, 1e-6)
    assert c.value == 0 and not c.meets_target
    assert pure_delta_mp({0.3: 40, 0.02: 400}, 5.0) > 1e-6
    assert "0 more fit" in c.notes[0]


def test_how_many_more_fits_next_to_a_fixed_part():
    c = how_many_more([(pure(0.3), 4)], pure(0.1), 2.0, 1e-6)
    assert_certified(c)
    assert pure_delta_mp({0.3: 4, 0.1: c.value}, 2.0) <= 1e-6 < pure_delta_mp({0.3: 4, 0.1: c.value + 1}, 2.0)


# ------------------------------------------------------------------------- the certificate, on a grid
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-7])
def test_certificate_never_above_target(eps, delta):
    rr = calibrate({"mechanism": [{"kind": "randomized_response", "categories": 3, "epsilon": "?",
                                   "times": 12}]}, eps, delta)
    assert_certified(rr)
    assert rr_delta_mp(3, rr.value, 12, eps) <= delta
    assert rr_delta_mp(3, rr.value * (1 + 2 * 1e-4), 12, eps) > delta      # within rtol of the optimum
    kai = calibrate({"mechanism": [{"kind": "pure", "epsilon": 0.05, "times": "?"}]}, eps, delta)
    assert_certified(kai)
    assert kairouz_delta_mp(0.05, 0, kai.value, eps) <= delta < kairouz_delta_mp(0.05, 0, kai.value + 1, eps)
    g = calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?", "times": 20}]}, eps, delta)
    assert_certified(g)
    assert gaussian_delta_mp(eps, mp.sqrt(20) / mp.mpf(g.value)) <= delta


def test_rtol_is_settable():
    w = {"mechanism": [{"kind": "pure", "epsilon": "?", "times": 10}]}
    coarse, fine = calibrate(w, 1.0, 1e-5, rtol=1e-2), calibrate(w, 1.0, 1e-5, rtol=1e-6)
    for c, tol in ((coarse, 1e-2), (fine, 1e-6)):
        assert_certified(c)
        assert c.optimum[1] / c.optimum[0] - 1 <= tol
    assert coarse.value <= fine.value and coarse.evaluations < fine.evaluations


def test_laplace_scale_is_bracketed():
    """A certified (non-exact) route: the value is certified and the bracket holds the exact optimum,
    whose Laplace profile is known in closed form for one release: δ(ε) = 1 - exp((ε - ε0)/2)."""
    c = calibrate({"mechanism": [{"kind": "laplace", "scale": "?"}]}, 0.5, 1e-2, rtol=1e-2)
    assert_certified(c)
    ref = 1 / (0.5 - 2 * math.log1p(-1e-2))      # ε0 = ε - 2 log(1 - δ), scale = 1/ε0
    assert c.optimum[0] <= ref <= c.optimum[1]
    assert c.value <= ref * 1.05


# -------------------------------------------------------------------------- several parameters at once
def test_noise_factor_and_split():
    c = noise_factor([(GaussianMechanism(1.0), 500), (GaussianMechanism(2.0), 2000)], 2.0, 1e-6)
    assert_certified(c)
    ref = gaussian_sigma_mp(1000, 2.0, 1e-6)          # 500/c² + 2000/(2c)² = 1000/c²
    assert c.optimum[0] <= ref <= c.optimum[1]
    s = split([(pure(1.0), 10), (pure(1.0), 30)], 0, 1, 0.25, 4.0, 0.0)
    assert_certified(s)
    (a, _), (b, _) = s.workload
    # 10 x + 30 y <= 4 with x = b/4, y = 3b/4 is the exact pure-composition budget at δ = 0.
    assert 10 * a.constraints[0][0] + 30 * b.constraints[0][0] <= 4.0
    assert s.value > 0.16 * (1 - 2e-4)
    with pytest.raises(ParameterError, match="no noise scale"):
        noise_factor([(pure(1.0), 3)], 2.0, 1e-6)
    with pytest.raises(ParameterError, match="no budget to split"):
        split([(DPMechanism([(1.0, 1e-3)]), 1), (pure(1.0), 1)], 0, 1, 0.5, 2.0, 1e-3)


def test_split_of_two_gaussians_in_mu_squared():
    """Two Gaussians split in μ² (what composes): weight 1/2 between equal counts gives equal σ."""
    s = split([(GaussianMechanism(1.0), 10), (LaplaceMechanism(1.0), 0), (GaussianMechanism(5.0), 10)],
              0, 2, 0.5, 1.0, 1e-6)
    (g1, _), _, (g2, _) = s.workload
    assert g1.sigma == pytest.approx(g2.sigma, rel=1e-12)
    assert gaussian_delta_mp(1.0, mp.sqrt(10 / mp.mpf(g1.sigma) ** 2 + 10 / mp.mpf(g2.sigma) ** 2)) <= 1e-6


# -------------------------------------------------------------------------------------- monotonicity
def test_non_monotone_certificate_is_reported():
    """A bracketed route whose upper side fits at 10 but not at 9 (as a lattice engine may): said, and
    still certified. Remark 1's intersection bound is the bracketed route here (its lower side is 0)."""
    def build(k):
        return [(DPMechanism([(0.1, 0.0), (0.05, 0.01)] if k != 9 else [(5.0, 0.0), (1.0, 0.01)]), k)]

    c = search(build, 1.01, 0.0, parameter="k", safer="smaller", integer=True, low=1, high=60,
               method="remark1")
    assert c.value in (8, 10) and not c.monotone and c.optimum == (c.value, math.inf)   # 8 if 9 was probed
    assert any("not monotone" in n for n in c.notes)
    assert_certified(c)


def test_monotone_search_says_so():
    c = calibrate({"mechanism": [{"kind": "pure", "epsilon": "?", "times": 3}]}, 1.0, 1e-4)
    assert c.monotone and not c.notes


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("entries, match", [
    ([{"kind": "gaussian", "sigma": "?", "times": "?"}], "two free parameters"),
    ([{"kind": "gaussian", "sigma": "?"}, {"kind": "pure", "epsilon": "?"}], "two free parameters"),
    ([{"kind": "dp", "constraints": "?"}], "kind 'dp' has no free parameter named 'constraints'"),
    ([{"kind": "pure", "epsilon": 1.0, "sigma": "?"}], "kind 'pure' has no free parameter named 'sigma'"),
    ([{"kind": "gaussian", "sigma": 1.0}], "no free parameter"),
    ([{"kind": "gaussian", "sigma": "?", "min": 1.0, "max": 10.0, "times": 1000}],
     r"not met anywhere in the range tried \[1, 10\]"),
    ([{"kind": "pure", "epsilon": "?", "min": 2.0}], r"range tried \[2, 100\]"),
    ([{"kind": "gaussian", "sigma": "?", "min": 5.0, "max": 1.0}], "min=5 is above max=1"),
    ([{"kind": "gaussian", "sigma": 1.0}, {"kind": "pure", "epsilon": "?", "max": 3.0}, {"kind": "pure",
      "epsilon": 1.0, "min": 1}], "belongs in the table"),
])
def test_bad_input_is_one_clear_error(entries, match):
    with pytest.raises(LpdpError, match=match):
        calibrate({"mechanism": entries}, 1.0, 1e-6)


def test_unreachable_target():
    with pytest.raises(ParameterError, match="not met anywhere"):
        calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?"}]}, 1.0, 0.0)   # Gaussian is never pure
    with pytest.raises(ParameterError, match="range tried"):
        calibrate({"mechanism": [{"kind": "dp", "constraints": [[0.1, 1e-3]], "times": "?", "min": 5}]},
                  0.2, 1e-3)


# ------------------------------------------------------------------------------------------ the CLI
def test_cli_json_contract(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text('[[mechanism]]\nkind = "gaussian"\nsigma = "?"\ntimes = 1000\n')
    assert main(["calibrate", str(path), "--epsilon", "2", "--delta", "1e-6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("parameter", "value", "optimum", "epsilon", "lpdp_version"):
        assert key in doc
    assert doc["parameter"] == "mechanism[0].sigma" and doc["epsilon"] <= 2.0
    assert doc["optimum"][0] <= gaussian_sigma_mp(1000, 2.0, 1e-6) <= doc["optimum"][1] == doc["value"]


def test_cli_summary_and_errors(tmp_path, capsys):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"mechanism": [{"kind": "pure", "epsilon": 0.3, "times": 40},
                                              {"kind": "pure", "epsilon": 0.02, "times": 400},
                                              {"kind": "pure", "epsilon": 0.02, "times": "?"}]}))
    assert main(["calibrate", str(path), "--epsilon", "5", "--delta", "1e-6"]) == 0
    assert "0 more fit" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[mechanism]]\nkind = "gaussian"\nsigma = "?"\ntimes = "?"\n')
    assert main(["calibrate", str(bad), "--epsilon", "2", "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err.strip()
    assert "two free parameters" in err and "\n" not in err


def test_cli_inline_free_value(capsys):
    """The inline options of lpdp account take '?' the same way; lpdp account itself refuses it."""
    assert main(["calibrate", "--pure", "0.3x4", "--pure", "0.1x?", "--epsilon", "2", "--delta", "1e-6",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    k = doc["value"]
    assert doc["parameter"] == "mechanism[1].times" and doc["optimum"] == [k, k]
    assert pure_delta_mp({0.3: 4, 0.1: k}, 2.0) <= 1e-6 < pure_delta_mp({0.3: 4, 0.1: k + 1}, 2.0)
    assert main(["calibrate", "--rr", "3,?x12", "--epsilon", "1", "--delta", "1e-3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert rr_delta_mp(3, doc["value"], 12, 1.0) <= 1e-3 < rr_delta_mp(3, doc["value"] * (1 + 2e-4), 12, 1.0)
    assert main(["account", "--gaussian", "?x10", "--for-delta", "1e-6"]) == 2
    err = capsys.readouterr().err.strip()
    assert "lpdp calibrate" in err and "\n" not in err
