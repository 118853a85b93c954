"""Curves of a guarantee (lpdp.curves): closed forms, brute-force Neyman-Pearson frontiers, mpmath."""

import itertools
import json
import math

import numpy as np
import pytest

from lpdp import Accountant, ParameterError
from lpdp.cli import main
from lpdp.curves import budget, profile, profile_range, tpr, tradeoff
from lpdp.mechanisms import FiniteMechanism, GaussianMechanism, LaplaceMechanism, pure, randomized_response
from tests.oracles import gaussian_delta_mp, kairouz_delta_mp

ALPHA = np.concatenate([[0.0, 1e-12, 1e-6, 1e-4], np.linspace(0.001, 1.0, 60)])


def _gauss_beta_mp(mu, alpha):
    """β(α) = Φ(Φ⁻¹(1 − α) − μ) of G_μ, in mpmath (Φ⁻¹(1 − α) = −√2 erfinv(2α − 1))."""
    import mpmath as mp

    with mp.workdps(50):
        out = []
        for a in alpha:
            if a == 0:
                out.append(mp.mpf(1))
            elif a == 1:
                out.append(mp.mpf(0))
            else:
                z = -mp.sqrt(2) * mp.erfinv(2 * mp.mpf(float(a)) - 1)
                out.append(mp.ncdf(z - mu))
        return out


def _np_frontier(p, q, k, alpha):
    """Neyman-Pearson by brute force: the k-fold product of (p, q), outcomes sorted by likelihood ratio
    q/p (reject H0 where it is largest), β(α) read off the randomised frontier; then symmetrised by
    the mirror pair (q, p), as the privacy region is."""
    def frontier(p, q):
        probs = [(math.prod(p[i] for i in o), math.prod(q[i] for i in o))
                 for o in itertools.product(range(len(p)), repeat=k)]
        probs.sort(key=lambda pq: -(pq[1] / pq[0]) if pq[0] > 0 else -math.inf)
        a = np.concatenate([[0.0], np.cumsum([x for x, _ in probs])])
        b = 1.0 - np.concatenate([[0.0], np.cumsum([y for _, y in probs])])
        return np.interp(alpha, a, b)
    return np.maximum(frontier(p, q), frontier(q, p))


def test_gaussian_tradeoff_is_the_closed_form_on_both_sides():
    g = Accountant().compose(GaussianMechanism(2.0), 4).guarantee()          # G_1
    c = tradeoff(g, ALPHA)
    ref = np.array([float(x) for x in _gauss_beta_mp(1.0, ALPHA)])
    assert c.exact and np.all(c.lower <= ref) and np.all(ref <= c.upper)
    assert c.width < 1e-11


def _rr_pair(categories, epsilon):
    keep = 1 / (1 + (categories - 1) * math.exp(-epsilon))
    other = (1 - keep) / (categories - 1)
    return [keep, other] + [other] * (categories - 2), [other, keep] + [other] * (categories - 2)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("case", ["rr", "asymmetric"])
def test_exact_finite_tradeoff_is_the_neyman_pearson_frontier(k, case):
    """Randomized response (the riskcal#2 case) and an asymmetric finite pair, composed k times: the
    exact route's β is the brute-force frontier of the product, to 1e-14, on the right side."""
    if case == "rr":
        mech, (p, q) = randomized_response(3, 1.0), _rr_pair(3, 1.0)
    else:
        p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
        mech = FiniteMechanism.from_pair(p, q)
    c = tradeoff(Accountant().compose(mech, k).guarantee(), ALPHA)
    ref = _np_frontier(p, q, k, ALPHA)
    assert c.exact
    assert np.all(c.lower <= ref + 1e-14) and np.all(ref <= c.upper + 1e-14)
    assert c.width < 1e-12        # the exact route's two certified sides


def test_randomized_response_tpr_closed_form():
    """Binary RR with ε: TPR(α) = e^ε α up to α = 1/(1 + e^ε), then 1 − e^{-ε}(1 − α)."""
    fpr = np.array([1e-4, 1e-3, 1e-2, 0.2, 0.5, 0.9])
    c = tpr(Accountant().compose(randomized_response(2, 1.0)).guarantee(), fpr)
    ref = np.where(fpr <= 1 / (1 + math.e), math.e * fpr, 1 - math.exp(-1) * (1 - fpr))
    assert np.all(c.lower <= ref * (1 + 1e-14)) and np.all(ref <= c.upper * (1 + 1e-14))
    assert np.max(c.upper - c.lower) < 1e-14


def test_certified_tradeoff_brackets_the_gaussian():
    """A Gaussian next to an uninformative finite part goes through the certified engine; its β
    bracket must hold G_μ (mpmath) and be within 1e-3."""
    g = Accountant().compose(GaussianMechanism(1.0)).compose(pure(0.0)).guarantee()
    assert not g.exact
    fpr = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.5])
    c = tpr(g, fpr)
    ref = 1 - np.array([float(x) for x in _gauss_beta_mp(1.0, fpr)])
    assert np.all(c.lower <= ref) and np.all(ref <= c.upper)
    assert c.width < 1e-3


def test_mixed_workload_tpr_within_target():
    """The mixed workload of the README: TPR at FPR 1e-4, 1e-3, 1e-2, both sides within 1e-3, and
    every side consistent with the exact part it contains (dropping mechanisms can only weaken an
    attack: the Gaussian part alone, G_μ, is at most the guarantee's TPR)."""
    parts = [(GaussianMechanism(3.0), 50), (LaplaceMechanism(1.0), 5), (randomized_response(4, 0.7), 20)]
    acc = Accountant()
    for m, k in parts:
        acc.compose(m, k)
    c = tpr(acc.guarantee())
    assert c.width < 1e-3 and np.all(c.lower <= c.upper)
    alone = 1 - np.array([float(x) for x in _gauss_beta_mp(math.sqrt(50) / 3, c.x)])
    assert np.all(alone <= c.upper)


def test_profile_range_spans_from_one_to_1e_12():
    g = Accountant().compose(pure(1.0), 300).guarantee()      # δ(0) is 1 to 1e-9 and more
    lo, hi = profile_range(g)
    assert lo > 0 and float(g.delta(lo)[1]) >= 1 - 1e-6
    assert float(g.delta(hi)[1]) <= 1e-12 and float(g.delta(0.99 * hi)[1]) > 1e-12
    c = profile(g, points=20)
    assert c.x[0] == lo and c.x[-1] == hi and np.all(np.diff(c.upper) <= 0)


def test_profile_matches_mpmath_gaussian():
    g = Accountant().compose(GaussianMechanism(1.0)).guarantee()
    c = profile(g, points=30)
    ref = np.array([float(x) for x in gaussian_delta_mp(1.0, c.x)])
    np.testing.assert_allclose(c.upper, ref, rtol=1e-9, atol=1e-300)
    assert c.x[-1] < 15 and c.upper[-1] <= 1e-12


@pytest.mark.parametrize("count", [
    1, 8, 50])
def test_budget_brackets_the_gaussian_root(count):
    """ε at δ = 1e-6 of G_{μ√c}: the upper side has mpmath δ <= 1e-6, the lower side δ >= 1e-6."""
    c = budget([(GaussianMechanism(4.0), 2)], 1e-6, [count])
    mu = math.sqrt(math.fsum([2 * count * 0.25 ** 2]))
    d_hi, d_lo = (float(x) for x in gaussian_delta_mp(mu, [c.upper[0], c.lower[0] * (1 - 1e-9)]))
    assert d_hi <= 1e-6 <= d_lo


@pytest.mark.parametrize("count", [
    1, 3, 10])
def test_pure_budget_brackets_kairouz(count):
    """ε at δ = 1e-9 of (0.25-DP)^(4c): the mpmath Kairouz δ is <= 1e-9 at the upper side, >= below."""
    c = budget([(pure(0.25), 4)], 1e-9, [count])
    assert kairouz_delta_mp(0.25, 0.0, 4 * count, [c.upper[0]])[0] <= 1e-9
    assert kairouz_delta_mp(0.25, 0.0, 4 * count, [c.lower[0] * (1 - 1e-9)])[0] >= 1e-9


def test_bad_input_names_the_parameter():
    g = Accountant().compose(pure(1.0)).guarantee()
    with pytest.raises(ParameterError, match="alpha"):
        tradeoff(g, [1.5])
    with pytest.raises(ParameterError, match="fpr"):
        tpr(g, [-0.1])
    with pytest.raises(ParameterError, match=r"times\[0\]=0"):
        budget([(pure(1.0), 1)], 1e-6, [0])


def test_cli_export_without_at_writes_the_curve(tmp_path):
    csv, js, png = tmp_path / "p.csv", tmp_path / "t.json", tmp_path / "t.png"
    assert main(["account", "--gaussian", "2x10", "--export", str(csv)]) == 0
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("epsilon,delta_lower,delta_upper") and len(lines) == 201
    assert main(["account", "--pure", "1x3", "--curve", "tpr", "--fpr", "1e-3", "0.01", "--export", str(js),
                 "--plot", str(png)]) == 0
    data = json.loads(js.read_text())
    assert data["curve"]["kind"] == "tpr" and data["curve"]["fpr"] == [1e-3, 0.01]
    assert png.stat().st_size > 0
    assert main(["account", "--gaussian", "2", "--range", "0", "3", "--export", str(csv)]) == 0
    assert csv.read_text().splitlines()[-1].startswith("3.0,")


def test_cli_budget_curve(tmp_path, capsys):
    assert main(["account", "--dp", "0.1,1e-7", "--curve", "budget", "--times", "30", "--for-delta", "1e-5",
                 "--json"]) == 0
    curve = json.loads(capsys.readouterr().out)["curve"]
    assert curve["count"][0] == 1 and curve["count"][-1] == 30
    assert curve["upper"] == sorted(curve["upper"])
