"""Mixtures of tests: weighted Minkowski sums of regions (Lemma 1, Lemma 1, Cor. 1).

If a test is chosen at random (index observed, independent of the hypothesis), the region of the mixture is
``Σ_i α_i F_i``. In edge form this is the union of the weighted edge multisets, merged by slope: the
classic linear-time Minkowski sum of convex polygons, exact in log space.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from lpdp._validate import check_weights
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["mix"]


def mix(components: Iterable[tuple[float, PrivacyRegion]]) -> PrivacyRegion:
    """Weighted Minkowski sum ``Σ α_i R_i`` of privacy regions (Lemma 1, Corollary 1).

    Parameters
    ----------
    components : iterable of (weight, PrivacyRegion)
        Weights must be non-negative and sum to one.

    Returns
    -------
    PrivacyRegion
        The region of the mixture; its δ(ε) is ``Σ α_i δ_i(ε)`` (support functions add).

    Examples
    --------
    >>> import lpdp
    >>> a = lpdp.PrivacyRegion.from_dp(1.3, 0.0)
    >>> b = lpdp.PrivacyRegion.from_dp(0.5, 0.2)
    >>> m = lpdp.mix([(0.5, a), (0.5, b)])
    >>> round(float(m.delta(0.5)), 6) == round(0.5 * float(a.delta(0.5)) + 0.5 * 0.2, 6)
    True
    """
    items = list(components)
    if not items:
        raise ParameterError("components=[]: at least one (weight, region) pair is needed")
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], PrivacyRegion)):
            raise ParameterError(f"components[{i}]={item!r}: must be a (weight, PrivacyRegion) pair")
    weights = check_weights([w for w, _ in items], "weights")
    losses, lps, lqs, p_inf, q_ninf = [], [], [], [], []
    for w, (_, region) in zip(weights, items, strict=True):
        if w == 0:
            continue
        lw = math.log(w)
        losses.append(region.losses)
        lps.append(region.log_p + lw)
        lqs.append(region.log_q + lw)
        p_inf.append(region.log_p_inf + lw)
        q_ninf.append(region.log_q_ninf + lw)
    return PrivacyRegion.from_log_masses(
        np.concatenate(losses), np.concatenate(lps), np.concatenate(lqs),
        log_p_inf=float(np.logaddexp.reduce(p_inf)), log_q_ninf=float(np.logaddexp.reduce(q_ninf)),
        check_total=False,
    )
