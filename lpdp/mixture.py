"""Mixtures of tests: weighted Minkowski sums of regions (Lemma 1, Corollary 1).

If a test is chosen at random (index observed, independent of the hypothesis), the region of the mixture is
``Σ_i α_i F_i``. In edge form this is the union of the weighted edge multisets, merged by slope: the
classic linear-time Minkowski sum of convex polygons, exact in log space (:func:`mix`).

The second route is the paper's Appendix H: for piecewise-affine trade-off functions the mixture's is
``f_m = (Σ_i α_i f_i^*)^*``, with ``f_i^*(s) = max_j (t_ij s − f_i(t_ij))`` over each boundary's vertices
(:func:`conjugate_tradeoff`, :func:`mix_conjugate`). It works on vertices in linear space, so it is an
independent check of :func:`mix` (the tests compare the two, and both with Shapely's hull of vertex sums).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numpy as np

from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound, round_up
from lpdp._validate import check_weights
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["mix", "mixture_error", "conjugate_tradeoff", "mix_conjugate"]


#: A mixture's components: ``(region, weight)`` pairs (the library's pair order, the object then its number,
#: as ``(mechanism, times)``); the ``(weight, region)`` order of the sum ``Σ α_i R_i`` is read the same.
Components = Iterable[tuple[PrivacyRegion, float] | tuple[float, PrivacyRegion]]


def _checked(components: Components) -> tuple[list[PrivacyRegion], np.ndarray]:
    items = list(components)
    if not items:
        raise ParameterError("components=[]: at least one (region, weight) pair is needed")
    pairs = []
    for i, item in enumerate(items):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], PrivacyRegion) \
                and not isinstance(item[0], PrivacyRegion):
            item = (item[1], item[0])
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], PrivacyRegion)):
            raise ParameterError(f"components[{i}]={item!r}: must be a (PrivacyRegion, weight) pair")
        pairs.append(item)
    return [r for r, _ in pairs], check_weights([w for _, w in pairs], "weights")


def _pieces(regions: Sequence[PrivacyRegion]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each boundary's vertices (from ``(0, f(0))``) and the sorted union of their finite slopes."""
    pieces = []
    for r in regions:
        b = np.asarray(r.boundary(), float)
        if len(b) > 1 and b[1, 0] == 0.0:
            b = b[1:]                        # f(0) is the bottom of the vertical edge at bI = 0
        pieces.append(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.concatenate([np.diff(b[:, 1]) / np.diff(b[:, 0]) for b in pieces])
    return pieces, np.unique(slopes[np.isfinite(slopes)])


def conjugate_tradeoff(components: Components,
                       t: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """The mixture's trade-off function at ``t`` by Appendix H: ``f_m = (Σ_i α_i f_i^*)^*``.

    ``g = Σ α_i f_i^*`` is convex and piecewise linear with breakpoints at the slopes of the ``f_i``, so
    its conjugate is attained at one of them: ``f_m(t) = max_s (s t − g(s))`` over those slopes.

    Examples
    --------
    >>> import lpdp
    >>> a, b = lpdp.PrivacyRegion.from_dp(1.3, 0.0), lpdp.PrivacyRegion.from_dp(0.5, 0.2)
    >>> t = [0.0, 0.1, 0.4]
    >>> [round(float(x), 12) for x in conjugate_tradeoff([(0.5, a), (0.5, b)], t)] == [
    ...     round(float(x), 12) for x in lpdp.mix([(a, 0.5), (b, 0.5)]).tradeoff(t)]
    True
    """
    regions, weights = _checked(components)
    tt = np.atleast_1d(np.asarray(t, dtype=float))
    if np.any(~np.isfinite(tt)) or np.any(tt < 0) or np.any(tt > 1):
        raise ParameterError(f"t={t!r}: must be in [0, 1]")
    pieces, slopes = _pieces(regions)
    if slopes.size == 0:                      # every f_i is 1 - t: the mixture is too
        return 1.0 - tt
    g = sum(w * np.max(b[None, :, 0] * slopes[:, None] - b[None, :, 1], axis=1)
            for w, b in zip(weights, pieces, strict=True))
    return np.max(slopes[None, :] * tt[:, None] - g[None, :], axis=1)


def mix_conjugate(components: Components) -> PrivacyRegion:
    """The mixture's region by Appendix H: its vertices are ``Σ_i α_i v_i(s)``, where ``v_i(s)`` is the
    vertex of ``F_i`` supporting slope ``s``, for one ``s`` strictly between each pair of consecutive
    slopes of the ``f_i`` (and one beyond each end). Compare :func:`mix`.

    Examples
    --------
    >>> import lpdp
    >>> a, b = lpdp.PrivacyRegion.from_dp(1.3, 0.0), lpdp.PrivacyRegion.from_dp(0.5, 0.2)
    >>> m = mix_conjugate([(a, 0.5), (b, 0.5)])
    >>> abs(m.area() - lpdp.mix([(a, 0.5), (b, 0.5)]).area()) < 1e-12
    True
    """
    regions, weights = _checked(components)
    pieces, slopes = _pieces(regions)
    ends = np.array([-1.0, 0.0]) if slopes.size == 0 else np.array([slopes[0] - 1.0, slopes[-1] + 1.0])
    probes = np.concatenate([ends, 0.5 * (slopes[:-1] + slopes[1:])])
    points = np.zeros((probes.size, 2))
    for w, b in zip(weights, pieces, strict=True):
        j = np.argmax(b[None, :, 0] * probes[:, None] - b[None, :, 1], axis=1)
        points += w * b[j]
    return PrivacyRegion.from_vertices(np.clip(points, 0.0, 1.0))


def mix(components: Components) -> PrivacyRegion:
    """Weighted Minkowski sum ``Σ α_i R_i`` of privacy regions (Lemma 1, Corollary 1).

    Parameters
    ----------
    components : iterable of (PrivacyRegion, weight)
        Weights must be non-negative and sum to one (``(weight, region)`` pairs, the order of
        ``Σ α_i R_i``, are read the same).

    Returns
    -------
    PrivacyRegion
        The region of the mixture; its δ(ε) is ``Σ α_i δ_i(ε)`` (support functions add).

    Examples
    --------
    >>> import lpdp
    >>> a = lpdp.PrivacyRegion.from_dp(1.3, 0.0)
    >>> b = lpdp.PrivacyRegion.from_dp(0.5, 0.2)
    >>> m = lpdp.mix([(a, 0.5), (b, 0.5)])
    >>> round(float(m.delta(0.5)), 6) == round(0.5 * float(a.delta(0.5)) + 0.5 * 0.2, 6)
    True
    """
    regions, weights = _checked(components)
    losses, lps, lqs, p_inf, q_ninf = [], [], [], [], []
    used = []
    for w, region in zip(weights, regions, strict=True):
        if w == 0:
            continue
        lw = math.log(w)
        losses.append(region.losses)
        lps.append(region.log_p + lw)
        lqs.append(region.log_q + lw)
        p_inf.append(region.log_p_inf + lw)
        q_ninf.append(region.log_q_ninf + lw)
        used.append((lw, region))
    log_p_inf = float(np.logaddexp.reduce(p_inf))
    return PrivacyRegion.from_log_masses(
        np.concatenate(losses), np.concatenate(lps), np.concatenate(lqs),
        log_p_inf=log_p_inf, log_q_ninf=float(np.logaddexp.reduce(q_ninf)),
        check_total=False, error=mixture_error(used, log_p_inf),
    )


def mixture_error(parts: Sequence[tuple[float, PrivacyRegion]], log_p_inf: float) -> ErrorBound:
    """The floating-point bound of :func:`mix`'s atoms, from the components' own bounds
    (docs/reliability.md, "Mixtures").

    An atom of component ``i`` keeps its loss (so its loss error) and gets the log mass ``ℓ + log w_i``:
    ``log w_i`` is within an ulp (``u |log w_i|``), the sum rounds once (``u |ℓ + log w_i|``), and both are
    at most ``|ℓ̂|`` of the mixture's atom, which is also at least the component's ``|ℓ|``: the component's
    bound carries over with 3 u more per nat. Atoms on equal losses are merged afterwards
    (:func:`~lpdp.region.merge_error`). The ``+inf`` mass is a ``logaddexp`` of the weighted ones, a sum of
    positive terms: the largest of their relative errors plus a few ulps per term and of the result.
    Mass left out of a component is left out of the mixture with its weight.
    """
    u = UNIT_ROUNDOFF
    if len(parts) == 1 and parts[0][0] == 0.0:
        return parts[0][1].error                  # weight 1: the component itself
    errs = [r.error for _, r in parts]
    # every atom meets its component's bound, hence the field-wise largest one (all terms grow with each)
    out = ErrorBound(loss=max(e.loss for e in errs), mass=max(e.mass for e in errs),
                     per_nat=round_up(max(e.per_nat for e in errs) + 3 * u),
                     per_sqrt_nat=max(e.per_sqrt_nat for e in errs),
                     loss_rel=max(e.loss_rel for e in errs), loss_down=max(e.loss_down for e in errs))
    if log_p_inf > -math.inf:
        worst = max(e.log_inf(abs(r.log_p_inf)) + 3 * u * (abs(r.log_p_inf) + abs(lw) + 1)
                    for (lw, r), e in zip(parts, errs, strict=True) if r.log_p_inf > -math.inf)
        out = dataclasses.replace(out, inf_mass=round_up(worst + u * (8 * len(parts) + 4 * abs(log_p_inf)
                                                                      + 4)))
    for (lw, _), e in zip(parts, errs, strict=True):
        if e.dropped > -math.inf:
            out = out.with_dropped(e.dropped + lw + 4 * u * (abs(e.dropped) + abs(lw) + 1), e.dropped_top)
    return out
