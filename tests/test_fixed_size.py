"""Fixed-size batches (sampling without replacement, replace-one neighbours): the one-step profile
against the bound of Balle, Barthe and Gaboardi (2018, Theorem 10) in mpmath, k-fold compositions against
an independent mpmath product of the symmetrised pair (upper side) and of the two fixed-dataset pairs
(lower side), q = 1, and bad input."""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest

import lpdp
from lpdp.errors import LpdpError, ParameterError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    mechanism_from_dict,
    pure,
    randomized_response,
    subsampled,
)

mpmath.mp.dps = 40


def _rows(categories: int, eps: float) -> tuple[list, list]:
    e = mpmath.e ** mpmath.mpf(eps)
    keep, other = e / (e + categories - 1), 1 / (e + categories - 1)
    return ([keep, other] + [other] * (categories - 2), [other, keep] + [other] * (categories - 2))


def _hockey(p: list, q: list, eps: float) -> mpmath.mpf:
    e = mpmath.e ** mpmath.mpf(eps)
    return mpmath.fsum(max(mpmath.mpf(0), a - e * b) for a, b in zip(p, q, strict=True))


def _power_delta(p: list, q: list, k: int, eps: float) -> mpmath.mpf:
    """δ(ε) of the k-fold product of the pair (p, q), summed over count vectors (multinomial)."""
    e = mpmath.e ** mpmath.mpf(eps)
    total = mpmath.mpf(0)
    for n in itertools.product(range(k + 1), repeat=len(p) - 1):
        last = k - sum(n)
        if last < 0:
            continue
        counts = [*n, last]
        coef = mpmath.factorial(k) / mpmath.fprod(mpmath.factorial(c) for c in counts)
        pm = coef * mpmath.fprod(a ** c for a, c in zip(p, counts, strict=True))
        qm = coef * mpmath.fprod(b ** c for b, c in zip(q, counts, strict=True))
        total += max(mpmath.mpf(0), pm - e * qm)
    return total


def _symmetrised(p: list, q: list, rate: float) -> tuple[list, list]:
    """The symmetric pair with the removal pair's profile at ε >= 0, built from its definition: the
    removal pair (r p + (1 - r) q, q) on its outcomes of positive loss, their mirror images, and one
    outcome of loss 0 holding the rest."""
    r = mpmath.mpf(rate)
    mix = [r * a + (1 - r) * b for a, b in zip(p, q, strict=True)]
    up = [(a, b) for a, b in zip(mix, q, strict=True) if a > b]
    rest = 1 - mpmath.fsum(a + b for a, b in up)
    first = [a for a, _ in up] + [rest] + [b for _, b in up]
    return first, first[::-1]


CASES = [(2, 1.0), (3, 0.5), (4, 2.0)]


@pytest.mark.parametrize("rate", [0.01, 0.2, 0.7])
@pytest.mark.parametrize(("categories", "eps0"), CASES)
def test_one_step_is_the_balle_barthe_gaboardi_profile(categories, eps0, rate):
    """δ'(ε') = q δ(ε) with e^ε' = 1 + q (e^ε - 1), at every ε' >= 0, on both sides (one step: the
    bound is attained by a fixed pair of datasets)."""
    g = lpdp.Accountant().compose(subsampled(randomized_response(categories, eps0), rate, "fixed_size"), 1
                                  ).guarantee()
    assert g.relation == "replace_one" and g.scheme == "fixed_size"
    p, q = _rows(categories, eps0)
    r = mpmath.mpf(rate)
    for eps1 in [0.0, 0.3 * rate, rate, 0.5, 1.5]:
        eps = mpmath.log((mpmath.e ** mpmath.mpf(eps1) - 1 + r) / r)
        truth = r * _hockey(p, q, float(eps))
        lo, hi = g.delta(eps1)
        assert lo <= truth * (1 + mpmath.mpf(1e-12)) + mpmath.mpf(1e-300)
        assert hi >= truth
        assert hi <= truth * (1 + mpmath.mpf(1e-9)) + mpmath.mpf(1e-15)


@pytest.mark.parametrize(("rate", "k"), [(0.05, 3), (0.3, 4), (0.9, 2)])
@pytest.mark.parametrize(("categories", "eps0"), CASES[:2])
def test_compositions_against_the_mpmath_products(categories, eps0, rate, k):
    """Upper side: the k-fold product of the symmetrised pair; lower side: the larger of the k-fold
    removal and addition pairs (one fixed pair of datasets); lower <= upper."""
    g = lpdp.Accountant().compose(subsampled(randomized_response(categories, eps0), rate, "fixed_size"), k
                                  ).guarantee()
    assert not g.exact
    p, q = _rows(categories, eps0)
    a, b = _symmetrised(p, q, rate)
    mix = [mpmath.mpf(rate) * x + (1 - mpmath.mpf(rate)) * y for x, y in zip(p, q, strict=True)]
    for eps in [0.0, 0.1, 0.5, 1.0]:
        upper = _power_delta(a, b, k, eps)
        lower = max(_power_delta(mix, q, k, eps), _power_delta(q, mix, k, eps))
        lo, hi = g.delta(eps)
        assert hi >= upper and hi <= upper * (1 + mpmath.mpf(1e-9)) + mpmath.mpf(1e-14)
        assert lo <= lower and lo >= lower * (1 - mpmath.mpf(1e-9)) - mpmath.mpf(1e-14)
        assert lo <= hi


def test_the_bracket_holds_the_poisson_lower_side_and_a_wider_upper_side():
    k = 200
    fixed = lpdp.Accountant().compose(subsampled(pure(1.0), 0.01, "fixed_size"), k).guarantee()
    poisson = lpdp.Accountant().compose(subsampled(pure(1.0), 0.01), k).guarantee()
    lo_f, hi_f = fixed.epsilon(1e-6)
    lo_p, hi_p = poisson.epsilon(1e-6)
    assert lo_f <= lo_p * (1 + 1e-12) and hi_f >= hi_p and lo_f <= hi_f


@pytest.mark.parametrize("m", [pure(1.0), randomized_response(3, 0.7),
                               DPMechanism([(1.0, 1e-3), (0.4, 0.05)])])
def test_rate_one_is_the_mechanism_itself(m):
    a = lpdp.Accountant().compose(subsampled(m, 1.0, "fixed_size"), 5).guarantee()
    b = lpdp.Accountant().compose(m, 5).guarantee()
    for eps in [0.0, 0.5, 2.0]:
        lo_a, hi_a = a.delta(eps)
        lo_b, hi_b = b.delta(eps)
        assert abs(hi_a - hi_b) <= 1e-9 * hi_b + 1e-15 and lo_a <= hi_b


def test_a_small_rate_tends_to_no_loss():
    gs = [lpdp.Accountant().compose(subsampled(pure(1.0), q, "fixed_size"), 50).guarantee().epsilon(1e-6)[1]
          for q in (1e-2, 1e-3, 1e-4)]
    assert gs[0] > gs[1] > gs[2] and gs[2] < 0.01


def test_the_plain_data_round_trips():
    m = subsampled(randomized_response(3, 1.0), 0.25, "fixed_size")
    again = mechanism_from_dict(m.to_dict())
    assert again == m and again.scheme == "fixed_size" and again.relation == "replace_one"


def test_bad_input_names_the_parameter(tmp_path, capsys):
    from lpdp.cli import main

    with pytest.raises(ParameterError, match=r"relation='add_remove'.*does not fit scheme='fixed_size'"):
        subsampled(pure(1.0), 0.1, "fixed_size", "add_remove")
    with pytest.raises(ParameterError, match=r"scheme='without_replacement'.*fixed_size"):
        subsampled(pure(1.0), 0.1, "without_replacement")
    lopsided = FiniteMechanism.from_pair([0.7, 0.3, 0.0], [0.2, 0.3, 0.5])
    if not lopsided.is_symmetric:
        with pytest.raises(ParameterError, match="own mirror"):
            subsampled(lopsided, 0.1, "fixed_size")
    with pytest.raises(LpdpError, match="fixed-size batches"):
        subsampled(pure(1.0), 0.1, "fixed_size").sample(1, None)
    w = tmp_path / "w.toml"
    w.write_text('[[mechanism]]\nkind = "subsampled"\nrate = 0.1\nscheme = "fixed_size"\n'
                 'relation = "add_remove"\ntimes = 3\n[mechanism.mechanism]\nkind = "pure"\nepsilon = 1.0\n')
    assert main(["account", str(w), "--for-delta", "1e-6"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "relation=" in err


def test_a_workload_mixing_relations_is_refused():
    acc = lpdp.Accountant().compose(subsampled(pure(1.0), 0.1, "fixed_size"), 2)
    acc.compose(subsampled(pure(1.0), 0.1))
    with pytest.raises(ParameterError, match="relation: the workload mixes add_remove and replace_one"):
        acc.guarantee()
    assert math.isfinite(lpdp.Accountant().compose(subsampled(pure(1.0), 0.1, "fixed_size"), 2)
                         .compose(pure(0.1)).guarantee().epsilon(1e-6)[1])


def _gaussian_delta(mu: float, eps: mpmath.mpf) -> mpmath.mpf:
    mu = mpmath.mpf(mu)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e ** eps * mpmath.ncdf(-eps / mu - mu / 2)


def test_the_gaussian_one_step_meets_the_closed_form():
    """DP-SGD with fixed-size batches (replace-one sensitivity 2): one step's bracket holds
    q δ_{G_μ}(ε) at e^ε' = 1 + q (e^ε - 1), the attained profile, computed in mpmath."""
    sigma, rate = 1.5, 0.05
    g = lpdp.Accountant(tolerance=0.05).compose(
        subsampled(lpdp.mechanisms.GaussianMechanism(sigma, 2.0), rate, "fixed_size"), 1).guarantee()
    r = mpmath.mpf(rate)
    for eps1 in [0.01, 0.1, 0.4]:
        eps = mpmath.log((mpmath.e ** mpmath.mpf(eps1) - 1 + r) / r)
        truth = r * _gaussian_delta(2.0 / sigma, eps)
        lo, hi = g.delta(eps1)
        assert lo <= truth <= hi


@pytest.mark.deep
def test_the_gaussian_composition_sits_below_dp_accountings_rdp_bound():
    """dp_accounting's RDP accountant for SampledWithoutReplacementDpEvent (Wang, Balle and
    Kasiviswanathan 2019) is a valid upper bound: lpdp's lower side may not exceed it."""
    import dp_accounting

    n, m, sigma, k = 1000, 40, 1.0, 50
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.SampledWithoutReplacementDpEvent(
        n, m, dp_accounting.GaussianDpEvent(sigma)), k)
    rdp = dp_accounting.rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    rdp.compose(event)
    g = lpdp.Accountant().compose(subsampled(lpdp.mechanisms.GaussianMechanism(sigma), m / n, "fixed_size"), k
                                  ).guarantee()
    lo, hi = g.epsilon(1e-5)
    assert lo <= rdp.get_epsilon(1e-5) and lo <= hi


def test_dpsgd_speaks_fixed_size_batches(tmp_path, capsys):
    from lpdp.cli import main

    acc = lpdp.dpsgd(1.0, batch_size=600, dataset_size=60000, epochs=2, scheme="fixed_size")
    (m, k), = acc.parts
    assert k == 200 and m.scheme == "fixed_size"
    assert m.mechanism == lpdp.mechanisms.GaussianMechanism(1.0, 2.0)
    with pytest.raises(ParameterError, match="sampling_rate=0.01: scheme='fixed_size'"):
        lpdp.dpsgd(1.0, 0.01, 100, scheme="fixed_size")
    with pytest.raises(ParameterError, match="batch_size=700: must be at most dataset_size=600"):
        lpdp.dpsgd(1.0, batch_size=700, dataset_size=600, steps=3, scheme="fixed_size")
    with pytest.raises(ParameterError, match="scheme='shuffling'"):
        lpdp.dpsgd(1.0, batch_size=7, dataset_size=600, steps=3, scheme="shuffling")
    w = tmp_path / "w.toml"
    w.write_text('[[mechanism]]\nkind = "dpsgd"\nnoise_multiplier = 1.0\nbatch_size = 700\n'
                 'dataset_size = 600\nsteps = 3\nscheme = "fixed_size"\n')
    assert main(["account", str(w), "--for-delta", "1e-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "batch_size=700" in err
