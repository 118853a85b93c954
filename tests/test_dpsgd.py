"""DP-SGD: the subsampled Gaussian against mpmath integration (k = 1, 2) and dp_accounting's PLD at a fine
grid (large k), the front door (lpdp.dpsgd, the workload kinds, --dpsgd), dp_accounting events."""

from __future__ import annotations

import json
import math

import dp_accounting
import mpmath
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

import lpdp
import lpdp.pld
from lpdp.cli import main
from lpdp.errors import LpdpError, ParameterError
from lpdp.interop import from_dp_event, to_pld
from lpdp.mechanisms import GaussianMechanism, randomized_response, subsampled
from lpdp.workload import parse


def _densities(sigma: float, rate: float):
    """Densities of the removal pair (q N(1, σ²) + (1 - q) N(0, σ²), N(0, σ²)) in mpmath."""
    s, q = mpmath.mpf(sigma), mpmath.mpf(rate)

    def n(y, m):
        return mpmath.npdf(y, m, s)

    return (lambda y: q * n(y, 1) + (1 - q) * n(y, 0)), (lambda y: n(y, 0))


def _reference(sigma: float, rate: float, k: int, eps: float, add: bool) -> float:
    """δ(ε) of the k-fold removal (or addition) pair, k = 1 or 2, by mpmath quadrature:
    ``E_P[(1 - e^{ε - L_1 - ... - L_k})_+]`` with ``L = log p/q`` (nested for k = 2)."""
    mpmath.mp.dps = 20
    p, q = _densities(sigma, rate)
    if add:
        p, q = q, p

    def loss(y):
        return mpmath.log(p(y) / q(y))

    base = [-30 * sigma, -5 * sigma, 0, 0.5, 1, 5 * sigma, 30 * sigma]
    s, r = mpmath.mpf(sigma), mpmath.mpf(rate)

    def kink(t):
        """The y where the removal loss log(q e^{(2y-1)/2σ²} + 1 - q) equals t (-t for the addition)."""
        c = -t if add else t
        inside = (mpmath.e ** c - 1 + r) / r
        return [s * s * mpmath.log(inside) + mpmath.mpf(1) / 2] if inside > 0 else []

    def one(t):
        cuts = sorted(base + kink(t))
        return mpmath.quad(lambda y: p(y) * max(mpmath.mpf(0), 1 - mpmath.e ** (t - loss(y))), cuts)

    if k == 1:
        return float(one(mpmath.mpf(eps)))
    return float(mpmath.quad(lambda y: p(y) * one(eps - loss(y)), base))


@pytest.mark.parametrize(("sigma", "rate", "k"), [(1.0, 0.3, 1), (0.8, 0.1, 1),
                                                  pytest.param(1.0, 0.3, 2, marks=pytest.mark.deep)])
def test_subsampled_gaussian_against_mpmath_integration(sigma, rate, k):
    g = lpdp.Accountant().compose(subsampled(GaussianMechanism(sigma), rate), k).guarantee()
    assert g.route == "certified" and g.relation == "add_remove"
    for eps in (0.2, 1.0):
        truth = max(_reference(sigma, rate, k, eps, add) for add in (False, True))
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi
        assert hi - lo <= 0.05 * truth


@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize(("sigma", "rate", "k"), [(1.0, 0.3, 1), (0.8, 0.1, 1),
                                                  pytest.param(1.0, 0.3, 2, marks=pytest.mark.deep)])
def test_each_direction_against_mpmath_integration(sigma, rate, k, add):
    """The removal and the addition pair each on its own (the guarantee above keeps the larger)."""
    law = subsampled(GaussianMechanism(sigma), rate).loss_law(reverse=add)
    bracket = lpdp.pld.compose([(law, k)])
    for eps in (0.0, 0.2, 1.0):
        truth = _reference(sigma, rate, k, eps, add)
        lo, hi = bracket.delta([eps])
        assert lo[0] <= truth <= hi[0]


@pytest.mark.deep
@pytest.mark.parametrize("add", [False, True])
def test_subsampled_gaussian_three_fold_against_mpmath_integration(add):
    sigma, rate = 1.0, 0.3
    p, q = _densities(sigma, rate)
    if add:
        p, q = q, p
    mpmath.mp.dps = 15
    bracket = lpdp.pld.compose([(subsampled(GaussianMechanism(sigma), rate).loss_law(reverse=add), 3)])
    cuts = [-20, -3, 0, 1, 4, 20]

    def loss(y):
        return mpmath.log(p(y) / q(y))

    def nested(t, depth):
        if depth == 0:
            return max(mpmath.mpf(0), 1 - mpmath.e ** t)
        return mpmath.quad(lambda y: p(y) * nested(t - loss(y), depth - 1), cuts)

    truth = float(nested(mpmath.mpf(1.0), 3))
    lo, hi = bracket.delta([1.0])
    assert lo[0] <= truth <= hi[0]


def test_rate_one_is_the_gaussian_mechanism():
    """q = 1: DP-SGD's steps are Gaussian mechanisms, whose composition is G_μ, μ = √k / σ (closed form)."""
    g = lpdp.dpsgd(2.0, 1.0, 30).guarantee()
    mpmath.mp.dps = 30
    mu = mpmath.sqrt(30) / 2
    for eps in (0.5, 2.0):
        e = mpmath.mpf(eps)
        truth = mpmath.ncdf(-e / mu + mu / 2) - mpmath.e ** e * mpmath.ncdf(-e / mu - mu / 2)
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi
        assert hi - lo <= 1e-4 * truth


@pytest.mark.deep       # dp_accounting's PLD at 1e-5 takes ~50 s here
def test_large_k_is_consistent_with_the_pld_at_a_fine_grid():
    """dp_accounting's PLD of the Poisson-subsampled Gaussian (both directions, as its PLDAccountant builds
    it) at 1e-5: its pessimistic side (connect the dots) is at or above the truth and its optimistic side
    (privacy buckets) at or below it, so lpdp's lower ε must be at or below the pessimistic ε and its upper
    ε at or above the optimistic one; the upper side is as close as the pessimistic PLD at 1e-5."""
    sigma, rate, k, delta = 1.5, 0.04, 300, 1e-5
    g = lpdp.dpsgd(sigma, rate, k).guarantee()
    lo, hi = g.epsilon(delta)
    eps = {}
    for pessimistic in (True, False):
        p = pld.from_gaussian_mechanism(sigma, pessimistic_estimate=pessimistic, sampling_prob=rate,
                                        value_discretization_interval=1e-5, use_connect_dots=pessimistic)
        eps[pessimistic] = p.self_compose(k).get_epsilon_for_delta(delta)
    assert eps[False] <= eps[True]
    assert lo <= eps[True] and eps[False] <= hi       # each side consistent with the PLD's
    assert hi - eps[True] <= 1e-3 * eps[True]


def test_the_front_door_spellings_agree():
    a = lpdp.dpsgd(1.0, batch_size=600, dataset_size=60000, epochs=2)
    b = lpdp.dpsgd(1.0, 0.01, 200)
    assert a.parts == b.parts
    (m, k), = parse({"mechanism": [{"kind": "dpsgd", "noise_multiplier": 1.0, "sampling_rate": 0.01,
                                    "steps": 200}]})
    assert (m, k) == b.parts[0]
    (s, t), = parse({"mechanism": [{"kind": "subsampled", "rate": 0.01, "times": 200,
                                    "mechanism": {"kind": "gaussian", "sigma": 1.0}}]})
    assert (s, t) == b.parts[0]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"sampling_rate": 0.0, "steps": 10}, "sampling_rate=0.0"),
    ({"sampling_rate": 1.01, "steps": 10}, "sampling_rate=1.01"),
    ({"batch_size": 700, "dataset_size": 600, "steps": 10}, "batch_size=700"),
    ({"sampling_rate": 0.1}, "steps"),
    ({"sampling_rate": 0.1, "steps": 10, "epochs": 1}, "steps"),
    ({"sampling_rate": 0.1, "batch_size": 10, "dataset_size": 100, "steps": 1}, "sampling_rate"),
])
def test_bad_dpsgd_input_names_the_parameter(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        lpdp.dpsgd(1.0, **kwargs)


def test_the_inline_flag(capsys):
    assert main(["account", "--dpsgd", "noise_multiplier=2.0,sampling_rate=0.01,steps=100",
                 "--for-delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["relation"] == "add_remove" and out["scheme"] == "poisson"
    (row,) = out["epsilon_for"]
    lo, hi = lpdp.dpsgd(2.0, 0.01, 100).guarantee().epsilon(1e-5)
    assert abs(row["upper"] - hi) <= 1e-9 and row["lower"] <= row["upper"]
    for bad, name in (("noise_multiplier=1,sampling_rate=2,steps=3", "sampling_rate=2"),
                      ("noise_multiplier=1,batch_size=9,dataset_size=3,steps=3", "batch_size=9"),
                      ("noise_multiplier=1,rate=0.1,steps=3", "'rate=0.1'"),
                      ("noise_multiplier=1,scheme=shuffling,batch_size=9,dataset_size=90,steps=3",
                       "scheme='shuffling': shuffling has no tight"),
                      ("noise_multiplier=1,scheme=fixed_size,sampling_rate=0.1,steps=3", "sampling_rate=0.1"),
                      ("noise_multiplier=1,scheme=fixed_size,batch_size=99,dataset_size=90,steps=3",
                       "batch_size=99"),
                      ("1,0.1,3,scheme=fixed_size", "do not mix")):
        assert main(["account", "--dpsgd", bad, "--for-delta", "1e-5"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and name in err


def test_the_inline_flag_takes_fixed_size_batches(capsys):
    spec = "noise_multiplier=1.0,scheme=fixed_size,batch_size=600,dataset_size=60000,epochs=1"
    assert main(["account", "--dpsgd", spec, "--for-delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["relation"] == "replace_one" and out["scheme"] == "fixed_size"
    (row,) = out["epsilon_for"]
    ref = lpdp.dpsgd(1.0, batch_size=600, dataset_size=60000, epochs=1, scheme="fixed_size")
    assert ref.parts[0][1] == 100 and ref.parts[0][0].relation == "replace_one"
    lo, hi = ref.guarantee().epsilon(1e-5)
    assert abs(row["upper"] - hi) <= 1e-9 and abs(row["lower"] - lo) <= 1e-9


def test_poisson_sampled_events_of_any_supported_event():
    for inner, mech in [(dp_accounting.GaussianDpEvent(1.0), GaussianMechanism(1.0)),
                        (dp_accounting.RandomizedResponseDpEvent(0.2, 3), randomized_response(3, math.log1p(
                            3 * 0.8 / 0.2)))]:
        event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(0.05, inner), 40)
        acc = from_dp_event(event)
        (m, k), = acc.parts
        assert k == 40 and m.rate == 0.05 and m.relation == "add_remove"   # exact: the echoed inputs
        g = acc.guarantee()
        ref = lpdp.Accountant().compose(subsampled(mech, 0.05), 40).guarantee()
        assert abs(g.epsilon(1e-6)[1] - ref.epsilon(1e-6)[1]) <= 1e-9
        p = to_pld(g)                       # the upper side as a pessimistic PLD, never below it
        for eps in (0.0, 0.5, 1.0):
            assert p.get_delta_for_epsilon(eps) >= g.delta(eps)[1]
    with pytest.raises(LpdpError, match="one Poisson sample"):
        from_dp_event(dp_accounting.PoissonSampledDpEvent(
            0.1, dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0), 3)))
    assert pld is not None


def test_calibrating_the_rate_of_a_subsampled_mechanism():
    from lpdp.calibrate import calibrate

    c = calibrate({"mechanism": [{"kind": "subsampled", "rate": "?", "times": 20,
                                  "mechanism": {"kind": "pure", "epsilon": 1.0}}]}, 1.0, 1e-6)
    assert c.meets_target and 0 < c.value < 1
    g = lpdp.Accountant().compose(subsampled(lpdp.mechanisms.pure(1.0), c.value), 20).guarantee()
    assert g.epsilon(1e-6)[1] <= 1.0
    lo, hi = c.optimum
    above = lpdp.Accountant().compose(subsampled(lpdp.mechanisms.pure(1.0), min(1.0, hi * 1.001)), 20)
    assert above.guarantee().epsilon(1e-6)[0] > 1.0


@pytest.mark.deep       # ~50 s: each evaluation is a certified DP-SGD composition
def test_calibrating_the_noise_multiplier_the_rate_and_the_steps():
    from lpdp.calibrate import calibrate

    target = (2.0, 1e-5)
    c = calibrate({"mechanism": [{"kind": "dpsgd", "noise_multiplier": "?", "sampling_rate": 0.05,
                                  "steps": 50}]}, *target)
    assert c.parameter == "mechanism[0].noise_multiplier" and c.meets_target
    lo, hi = c.optimum
    assert lo <= c.value <= hi * (1 + 1e-12) and hi - lo <= 2e-4 * hi
    assert lpdp.dpsgd(c.value, 0.05, 50).guarantee().epsilon(target[1])[1] <= target[0]
    # just below the bracket the attack side already misses the target
    assert lpdp.dpsgd(lo * (1 - 1e-3), 0.05, 50).guarantee().delta(target[0])[0] > target[1]
    c = calibrate({"mechanism": [{"kind": "dpsgd", "noise_multiplier": 1.0, "sampling_rate": 0.05,
                                  "steps": "?", "max": 400}]}, *target)
    k = int(c.value)
    assert lpdp.dpsgd(1.0, 0.05, k).guarantee().delta(target[0])[1] <= target[1]
    assert lpdp.dpsgd(1.0, 0.05, k + 1).guarantee().delta(target[0])[1] > target[1]
    c = calibrate({"mechanism": [{"kind": "subsampled", "rate": "?", "times": 20,
                                  "mechanism": {"kind": "pure", "epsilon": 1.0}}]}, 1.0, 1e-6)
    assert c.meets_target and 0 < c.value < 1
    g = lpdp.Accountant().compose(subsampled(lpdp.mechanisms.pure(1.0), c.value), 20).guarantee()
    assert g.epsilon(1e-6)[1] <= 1.0



def test_an_unsampled_result_states_its_relation_and_scheme(capsys):
    """Every result names its neighbouring relation and sampling scheme, an unsampled one included."""
    assert main(["account", "--gaussian", "3x5", "--for-delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["relation"], out["scheme"]) == ("any", "none")
    assert main(["account", "--gaussian", "3x5", "--for-delta", "1e-6"]) == 0
    assert "neighbouring relation: any (whichever the mechanisms' sensitivities and pairs are stated for), " \
        "sampling: none" in capsys.readouterr().out
    assert main(["account", "--dpsgd", "noise_multiplier=2.0,sampling_rate=0.01,steps=10",
                 "--for-delta", "1e-5"]) == 0
    assert "neighbouring relation: add_remove, sampling: poisson" in capsys.readouterr().out
