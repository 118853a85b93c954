"""Poisson-subsampled mechanisms: exact finite routes against an independent multinomial reference in
mpmath, both neighbouring directions, the limits q = 1 and q -> 0, and bad input."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import lpdp
from lpdp.errors import LpdpError, ParameterError
from lpdp.mechanisms import (
    DPMechanism,
    SubsampledMechanism,
    mechanism_from_dict,
    pure,
    randomized_response,
    subsampled,
)

mpmath.mp.dps = 50


def _rr_rows(categories: int, eps: float) -> tuple[list, list]:
    """Rows of k-ary randomized response for inputs 0 and 1, in mpmath (from the parameters)."""
    e = mpmath.e ** mpmath.mpf(eps)
    keep = e / (e + categories - 1)
    other = 1 / (e + categories - 1)
    p = [keep, other] + [other] * (categories - 2)
    q = [other, keep] + [other] * (categories - 2)
    return p, q


def _reference_delta(p: list, q: list, rate: float, k: int, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """δ(ε) of the k-fold product of the removal pair (rate p + (1 - rate) q, q) and of the addition pair
    (q, rate p + (1 - rate) q), summed over count vectors of the outputs (multinomial), in mpmath."""
    r = mpmath.mpf(rate)
    mix = [r * a + (1 - r) * b for a, b in zip(p, q, strict=True)]
    e = mpmath.e ** mpmath.mpf(eps)
    out = []
    for first, second in ((mix, q), (q, mix)):
        total = mpmath.mpf(0)
        for n in itertools.product(range(k + 1), repeat=len(p) - 1):
            last = k - sum(n)
            if last < 0:
                continue
            counts = [*n, last]
            coef = mpmath.factorial(k) / mpmath.fprod(mpmath.factorial(c) for c in counts)
            pm = coef * mpmath.fprod(a ** c for a, c in zip(first, counts, strict=True))
            qm = coef * mpmath.fprod(b ** c for b, c in zip(second, counts, strict=True))
            total += max(mpmath.mpf(0), pm - e * qm)
        out.append(total)
    return out[0], out[1]


@pytest.mark.parametrize(("eps0", "rate", "k"), [(1.0, 0.01, 200), (0.5, 0.2, 60), (2.0, 0.05, 400)])
def test_subsampled_pure_matches_the_binomial_reference(eps0, rate, k):
    p, q = _rr_rows(2, eps0)
    g = lpdp.Accountant().compose(subsampled(pure(eps0), rate), k).guarantee()
    assert g.exact and g.route == "multinomial"
    assert g.relation == "add_remove" and g.scheme == "poisson"
    for eps in (0.0, 0.1, 0.5, 1.0):
        rem, add = _reference_delta(p, q, rate, k, eps)
        truth = float(max(rem, add))
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi
        assert hi - lo <= 1e-11 * max(truth, 1e-300)
    for delta in (1e-3, 1e-6):
        lo, hi = g.epsilon(delta)
        assert lo <= hi <= lo + 1e-9
        assert float(max(_reference_delta(p, q, rate, k, hi))) <= delta
        assert float(max(_reference_delta(p, q, rate, k, lo))) >= delta


@pytest.mark.parametrize(("categories", "eps0", "rate", "k"), [(3, 1.0, 0.1, 12), (4, 2.0, 0.3, 8)])
def test_subsampled_randomized_response_matches_the_multinomial_reference(categories, eps0, rate, k):
    p, q = _rr_rows(categories, eps0)
    g = lpdp.Accountant().compose(subsampled(randomized_response(categories, eps0), rate), k).guarantee()
    assert g.exact
    for eps in (0.0, 0.3, 1.0, 2.5):
        truth = float(max(_reference_delta(p, q, rate, k, eps)))
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi
        assert hi - lo <= 1e-11 * max(truth, 1e-300)


def test_both_directions_are_composed_and_the_larger_is_kept():
    """Each direction's δ is the larger one somewhere on [0, 6] here: both must show."""
    eps0, rate, k = 2.0, 0.6, 5
    p, q = _rr_rows(2, eps0)
    g = lpdp.Accountant().compose(subsampled(pure(eps0), rate), k).guarantee()
    winners = set()
    for eps in np.linspace(0.0, 6.0, 25):
        rem, add = _reference_delta(p, q, rate, k, float(eps))
        if rem != add:
            winners.add("remove" if rem > add else "add")
        lo, hi = g.delta(float(eps))
        truth = float(max(rem, add))
        assert lo <= truth <= hi
        # composing one direction only would miss the other
        assert hi >= float(rem) and hi >= float(add)
    assert winners == {"remove", "add"}


def test_rate_one_is_the_mechanism_itself():
    for m in (pure(0.7), randomized_response(3, 1.2), DPMechanism([(1.0, 1e-4)])):
        a = lpdp.Accountant().compose(subsampled(m, 1.0), 7).guarantee()
        b = lpdp.Accountant().compose(m, 7).guarantee()
        for eps in (0.0, 0.5, 2.0):
            (alo, ahi), (blo, bhi) = a.delta(eps), b.delta(eps)
            assert alo <= bhi * (1 + 1e-12) + 1e-300 and blo <= ahi * (1 + 1e-12) + 1e-300
            assert abs(ahi - bhi) <= 1e-11 * max(bhi, 1e-300)


def test_a_small_rate_tends_to_no_loss():
    eps_at = []
    for rate in (1e-2, 1e-4, 1e-6):
        g = lpdp.Accountant().compose(subsampled(pure(1.0), rate), 100).guarantee()
        eps_at.append(g.epsilon(1e-6)[1])
    assert eps_at[0] > eps_at[1] > eps_at[2]
    assert eps_at[2] < 1e-3


def test_an_approximate_dp_mechanism_keeps_its_delta_mass():
    """(ε, δ) with δ > 0: the P-only outcome keeps loss +inf with mass q δ; the Q-only one gets a finite
    loss log(1 - q). Against the multinomial reference over the pair's 4 outcomes."""
    eps0, d0, rate, k = 1.0, 1e-3, 0.1, 6
    e = mpmath.e ** mpmath.mpf(eps0)
    d = mpmath.mpf(d0)
    # the pair of R(ε, δ): P = (δ, (1-δ) e/(1+e), (1-δ)/(1+e), 0), Q its mirror
    p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mpmath.mpf(0)]
    q = p[::-1]
    g = lpdp.Accountant().compose(subsampled(DPMechanism([(eps0, d0)]), rate), k).guarantee()
    for eps in (0.0, 0.5, 1.5):
        truth = float(max(_reference_delta(p, q, rate, k, eps)))
        lo, hi = g.delta(eps)
        assert lo <= truth <= hi
        assert hi - lo <= 1e-10 * truth


def test_plain_data_round_trip():
    m = subsampled(randomized_response(3, 1.0), 0.25)
    back = mechanism_from_dict(m.to_dict())
    assert back.to_dict() == m.to_dict()
    assert m.to_dict()["rate"] == 0.25   # exact: the echoed input
    same = subsampled(randomized_response(3, 1.0), 0.25)
    assert same == m and hash(same) == hash(m)


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5, math.nan, math.inf, "0.1"])
def test_a_rate_outside_the_unit_interval_is_refused(rate):
    with pytest.raises(ParameterError, match="rate"):
        subsampled(pure(1.0), rate)


def test_shuffling_and_relations_that_do_not_fit_are_refused():
    with pytest.raises(ParameterError,
                       match=r"scheme='shuffling'.*no tight.*supported schemes: poisson, fixed_size"):
        subsampled(pure(1.0), 0.1, scheme="shuffling")
    with pytest.raises(ParameterError, match=r"relation='replace_one'.*does not fit scheme='poisson'"):
        subsampled(pure(1.0), 0.1, relation="replace_one")
    with pytest.raises(LpdpError, match="already subsampled"):
        subsampled(subsampled(pure(1.0), 0.1), 0.5)
    with pytest.raises(ParameterError, match="mechanism="):
        SubsampledMechanism("gaussian", 0.1)


def test_refusals_reach_the_command_line_as_one_line(tmp_path, capsys):
    from lpdp.cli import main
    from lpdp.mechanisms.tradeoff import TradeoffMechanism
    from lpdp.tradeoff import gaussian

    with pytest.raises(LpdpError, match="no neighbouring pair to subsample"):
        lpdp.Accountant().compose(subsampled(TradeoffMechanism(gaussian(1.0)), 0.1), 3).guarantee()
    for scheme, match in (("shuffling", "no tight"), ("without_replacement", "scheme='fixed_size'")):
        w = tmp_path / f"{scheme}.toml"
        w.write_text(f'[[mechanism]]\nkind = "subsampled"\nrate = 0.1\nscheme = "{scheme}"\ntimes = 3\n'
                     '[mechanism.mechanism]\nkind = "pure"\nepsilon = 1.0\n')
        assert main(["account", str(w), "--for-delta", "1e-6"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "scheme=" in err and match in err
    inner = '[mechanism.mechanism]\nkind = "pure"\nepsilon = 1.0\n'
    for table, match in (('rate = 1.5\n', "rate=1.5"), ('rate = 0.0\n', "rate=0.0"),
                         ('rate = 0.1\nrelation = "replace_one"\n', "relation='replace_one': does not fit"),
                         ('rate = 0.1\nscheme = "fixed_size"\nrelation = "add_remove"\n',
                          "relation='add_remove': does not fit")):
        w = tmp_path / "bad.toml"
        w.write_text(f'[[mechanism]]\nkind = "subsampled"\n{table}times = 3\n{inner}')
        assert main(["account", str(w), "--for-delta", "1e-6"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and match in err, err
    w = tmp_path / "batch.toml"
    w.write_text('[[mechanism]]\nkind = "dpsgd"\nnoise_multiplier = 1.0\nscheme = "fixed_size"\n'
                 'batch_size = 700\ndataset_size = 600\nsteps = 3\n')
    assert main(["account", str(w), "--for-delta", "1e-6"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "batch_size=700: must be at most dataset_size=600" in err
