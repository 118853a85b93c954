"""Exact k-fold composition of one (ε, δ)-DP mechanism (Kairouz, Oh, Viswanath).

The k-fold product of the (ε, δ) randomised response is a binomial lattice: ``i`` of the ``k`` finite
outcomes disagree, the loss is ``(k - 2i) ε`` and the P-mass is ``(1-δ)^k C(k,i) e^{(k-i)ε} / (1+e^ε)^k``;
every sequence that contains the δ outcome has loss ``+inf``, total mass ``1 - (1-δ)^k``. All masses are
computed in log space by Loader's binomial form (:func:`lpdp._numerics.log_binom_pmf`, no ``gammaln``
differences), so k up to 10^6 and beyond neither overflows nor loses relative precision (δ to ~1e-12
relative).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import (
    UNIT_ROUNDOFF,
    BinomialCorrection,
    ErrorBound,
    binomial_correction,
    log_binom_pmf,
    log_softplus,
)
from lpdp._validate import check_delta, check_epsilon, check_int
from lpdp.compose._levels import lattice_loss
from lpdp.region import PrivacyRegion, check_normalised

__all__ = ["homogeneous"]

#: Peak bytes and vectorised operations per lattice atom of :func:`homogeneous` (measured ~150 bytes and
#: ~1 s per 10^6 atoms on one shared core; rounded up so that an accepted k stays within the budget).
_BYTES_PER_ATOM = 256.0
_OPS_PER_ATOM = 100.0


@functools.lru_cache(maxsize=256)
def rr_binomial_error(eps: float, k: int, lp: float, lq: float) -> tuple[BinomialCorrection, ErrorBound]:
    """The correction of the k-fold ε randomised response's binomial to the exact ``1 / (1 + e^ε)``
    (:func:`~lpdp._numerics.binomial_correction`) and the bound of its atoms (docs/reliability.md,
    "Kairouz"): the corrected binomial's, the losses ``(k - 2i) ε`` exact and rounded outward
    (``2 u |L|``), and ``(1 - δ)^k`` in log space (4 u per nat). Memoised: a pure function of its
    numbers whose 40-digit logs cost ~0.2 ms, a fifth of a small route (sweeps over k, repeated
    accountant queries and the filters' baselines ask for the same ones again)."""
    import mpmath

    with mpmath.workdps(40):
        p_exact = 1 / (1 + mpmath.exp(mpmath.mpf(eps)))
        q_exact = 1 / (1 + mpmath.exp(-mpmath.mpf(eps)))
    corr, err = binomial_correction(k, lp, lq, p_exact, q_exact)
    return corr, err.widened(loss_rel=2 * UNIT_ROUNDOFF, per_nat=4 * UNIT_ROUNDOFF)


def homogeneous(epsilon: float, delta: float, k: int) -> PrivacyRegion:
    """Exact region ``R_k(ε, δ)`` of the k-fold (adaptive) composition of an (ε, δ)-DP mechanism.

    Parameters
    ----------
    epsilon : float
        ε >= 0 of each mechanism.
    delta : float
        δ in [0, 1] of each mechanism.
    k : int
        Number of mechanisms, >= 1.

    Examples
    --------
    >>> from lpdp.compose import homogeneous
    >>> r = homogeneous(0.1, 1e-7, 100)
    >>> round(r.epsilon(1e-4), 4)
    3.7757
    """
    eps = check_epsilon(epsilon, "epsilon")
    dlt = check_delta(delta, "delta")
    k = check_int(k, "k", 1)
    if k == 1:
        return PrivacyRegion.from_dp(eps, dlt)       # the pair itself: its masses from (ε, δ) directly
    if dlt == 1.0 or eps == 0.0:
        # One outcome class: either everything is revealed or every finite outcome has loss 0.
        if dlt == 1.0:
            return PrivacyRegion.from_dp(0.0, 1.0)
        log_rest = k * math.log1p(-dlt)
        log_inf = math.log(-math.expm1(log_rest)) if dlt > 0 else -math.inf
        return PrivacyRegion.from_log_masses([0.0], [log_rest], [log_rest], log_p_inf=log_inf,
                                             log_q_ninf=log_inf)
    # k + 1 atoms; ~256 bytes each at the peak (binomial terms, losses, the region and its prefix sums)
    atoms = k + 1.0
    check_budget(f"k={k}", memory_bytes=_BYTES_PER_ATOM * atoms, seconds=seconds_for(_OPS_PER_ATOM * atoms))
    i = np.arange(k + 1)
    # i disagreeing coordinates: a Binomial(k, 1/(1+e^ε)) count under P, Binomial(k, e^ε/(1+e^ε)) under Q.
    log_rest = k * math.log1p(-dlt)
    lp, lq = -float(log_softplus(eps)), -float(log_softplus(-eps))
    corr, err = rr_binomial_error(eps, k, lp, lq)
    log_p = log_rest + corr.apply(k, i, log_binom_pmf(k, i, lp, lq))
    loss = lattice_loss([eps], [k - 2 * i])     # the exact (k - 2i) ε, rounded away from zero
    log_inf = math.log(-math.expm1(log_rest)) if dlt > 0 else -math.inf
    region = PrivacyRegion.from_log_masses(loss, log_p, log_p[::-1], log_p_inf=log_inf, log_q_ninf=log_inf,
                                           check_total=False, error=err)
    check_normalised(region, f"homogeneous({eps!r}, {dlt!r}, {k})")
    return region
