"""Theorem-by-theorem references for the exact double-DP composition (Theorems 2 and 3).

They check :func:`lpdp.compose.double_dp`'s lattice route by other formulas of the paper: Theorem 2 as a
mixture (:func:`lpdp.mix`) of heterogeneous compositions (Theorem 1), Theorem 3 as an intersection of
(ε_uv, δ_uv) constraints over the multinomial enumeration of ``(a, b, c, d)``. Both cost O(k^3) or more:
for k up to about 100.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from lpdp._numerics import log_softplus
from lpdp.compose import heterogeneous, homogeneous
from lpdp.compose._levels import lattice_loss, region_from_atoms
from lpdp.compose.double import _Active, _check_pair, _classify, _log_tilde, _tolerance
from lpdp.mixture import mix
from lpdp.region import PrivacyRegion


def log_binom(n, k) -> np.ndarray:
    """``log C(n, k)`` for integer arrays, via ``gammaln``."""
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _active_or_kairouz(first, second, k):
    cls = _classify(_check_pair(first, "first"), _check_pair(second, "second"))
    return cls if isinstance(cls, _Active) else homogeneous(*cls, k)


def theorem2(first, second, k: int) -> PrivacyRegion:
    """Theorem 2: ``δ~ R(0,1) + (1-δ~) Σ_i C(k,i)(1-α)^i α^(k-i) C_{i,k-i}(ε1, ε2)``."""
    p = _active_or_kairouz(first, second, k)
    if isinstance(p, PrivacyRegion):
        return p
    log_rest, _ = _log_tilde(p, k)
    i = np.arange(k + 1)
    log_w = log_binom(k, i) + i * p.log_1m_alpha + (k - i) * p.log_alpha + log_rest
    parts = [(-math.expm1(log_rest), PrivacyRegion.from_dp(0.0, 1.0))]
    parts += [(float(np.exp(lw)), heterogeneous({p.e1: int(j), p.e2: int(k - j)}))
              for j, lw in zip(i, log_w, strict=True)]
    mixed = mix(parts)
    return region_from_atoms(mixed.losses, mixed.log_p, log_p_inf=mixed.log_p_inf, tol=_tolerance(p, k))


def theorem3(first, second, k: int) -> PrivacyRegion:
    """Theorem 3: ``R(ε_uv, δ~ + (1-δ~) δ_uv)`` over every (u, v) with ``ε_uv >= 0``."""
    p = _active_or_kairouz(first, second, k)
    if isinstance(p, PrivacyRegion):
        return p
    log_rest, log_inf = _log_tilde(p, k)
    a, b, c = (x.ravel() for x in np.mgrid[0:k + 1, 0:k + 1, 0:k + 1])
    ok = a + b + c <= k
    a, b, c = a[ok], b[ok], c[ok]
    d = k - a - b - c
    log_a = p.log_1m_alpha - float(log_softplus(p.e1))      # log((1-α)/(1+e^{ε1}))
    log_b = p.log_alpha - float(log_softplus(p.e2))         # log(α/(1+e^{ε2}))
    log_multinomial = log_binom(k, a) + log_binom(k - a, b) + log_binom(k - a - b, c)
    log_p0 = log_multinomial + (a + d) * log_a + (b + c) * log_b + a * p.e1 + b * p.e2
    four_point = PrivacyRegion.from_log_masses(lattice_loss([p.e1, p.e2], [a - d, b - c]), log_p0,
                                               check_total=False)
    u, v = (x.ravel() for x in np.mgrid[0:k + 1, 0:k + 1])
    eps_uv = lattice_loss([p.e1, p.e2], [u + v - k, u - v])
    # u >= ceil((k ε1 - v(ε1-ε2)) / (ε1+ε2)) is ε_uv >= 0; decide it with a tolerance, not a float ceil.
    eps_uv = np.maximum(eps_uv[eps_uv >= -_tolerance(p, k)], 0.0)
    log_d = np.logaddexp(log_inf, log_rest + np.asarray(four_point.log_delta(eps_uv)))
    # δ_uv rounded above 1 (mass rounding in long sums) is 1: no constraint can say more.
    return PrivacyRegion.from_constraints(
        [(e, min(d, 1.0)) for e, d in zip(eps_uv.tolist(), np.exp(log_d).tolist(), strict=True)])


#: The references by name, for tests parametrised over routes.
THEOREMS = {"theorem2": theorem2, "theorem3": theorem3}
