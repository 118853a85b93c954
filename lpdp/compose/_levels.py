"""Privacy-loss levels of lattice atoms, turned into exact regions.

Every composition of randomised responses (Theorems 1–3) is a lattice: an outcome is summarised
by integer counts ``n_j`` (agreeing minus disagreeing coordinates of level ``j``) and has loss
``L = Σ_j ε_j n_j``. :func:`lattice_loss` computes that sum exactly and rounds it away from zero (losses
are those of the given doubles, never understated), so the same key always gives the same float and every
route (mixture, closed form, lattice) sees identical losses. Different keys whose
losses are mathematically equal (``ε1/ε2`` rational, e.g. Figure 2's ``ε1 = 2 ε2``) can still differ in the
last bits; :func:`region_from_atoms` merges them onto the largest of their computed losses, which can only
increase δ(ε) (by at most ``mass * tolerance``), either by integer level (:func:`commensurate_units`, no
sort) or by merging losses closer than :func:`merge_tolerance`; the level of 0 becomes exactly 0 (losses are
only ever moved up, so the upper side needs no widening for it; the lower side's bound records the move).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from lpdp._numerics import EXACT, UNIT_ROUNDOFF, ErrorBound, round_up
from lpdp.region import PrivacyRegion, merge_error

#: Losses closer than this many ulps of the largest possible |loss| are the same level.
MERGE_ULPS = 64


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a + b = s + e`` exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a: float, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a b = p + e`` exactly (Dekker's product; ``b`` holds integers below 2^26, exact in one half)."""
    p = a * b
    a_hi = (_SPLIT * a) - ((_SPLIT * a) - a)
    a_lo = a - a_hi
    b_hi = (_SPLIT * b) - ((_SPLIT * b) - b)
    b_lo = b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


#: Dekker's splitting constant ``2^27 + 1``.
_SPLIT = 134217729.0


def lattice_loss(epsilons: Sequence[float], counts: Sequence[np.ndarray]) -> np.ndarray:
    """``Σ_j ε_j n_j`` (broadcast over the count arrays), rounded *away from zero*.

    The convention: the loss of a lattice point is the exact real ``Σ_j ε_j n_j`` of the given doubles
    ``ε_j``, rounded outwards to a double, so ``|L|`` is never below the truth and ``δ(ε)`` at a computed
    top loss never falls to 0 by rounding (rounding ``|L|`` up with ``p`` kept only increases the hockey-stick
    divergence in both directions). Products and sums are carried error-free (Dekker, TwoSum) to about
    2^-106 relative; the result does not depend on the order of the terms, and ``L(-n) = -L(n)`` exactly.
    """
    hi = lo = None
    for e, n in zip(epsilons, counts, strict=True):
        p, err = _two_prod(float(e), np.asarray(n, dtype=float))
        if hi is None:
            hi, lo = p, err
        else:
            hi, t = _two_sum(hi, p)
            lo = lo + t + err
    assert hi is not None and lo is not None
    total, rest = _two_sum(hi, lo)
    with np.errstate(invalid="ignore"):
        outward = (rest != 0) & (np.sign(rest) == np.sign(total)) | ((total == 0) & (rest != 0))
    if not np.any(outward):
        return total
    return np.where(outward, np.nextafter(total, np.where(rest > 0, np.inf, -np.inf)), total)


def level_loss_error(err: ErrorBound, slack: Fraction) -> ErrorBound:
    """``err`` widened for :func:`level_losses`: the result is ``ℓ Δ + sign(ℓ) slack`` rounded outward
    (twice), so the exact loss of a key is never farther from 0 than it (no upward move for the upper
    side) and at most ``2 slack`` plus the roundings (``4 u |L̂|``) closer to 0."""
    return err.widened(loss_down=round_up(float(2 * slack) * (1 + 4 * UNIT_ROUNDOFF)) if slack else 0.0,
                       loss_rel=4 * UNIT_ROUNDOFF)


def level_losses(step: float, levels: np.ndarray, slack: Fraction) -> np.ndarray:
    """Losses of integer levels ``ℓ`` on a step: ``ℓ Δ`` plus ``sign(ℓ) slack``, rounded away from zero.

    ``slack`` (exact) bounds how far the exact loss of any lattice key of level ℓ can lie from ``ℓ Δ`` when
    the ε_j are only approximately ``u_j Δ`` in floating point; 0 when they are exact multiples.
    """
    loss = lattice_loss([step], [levels])
    if slack:
        pad = float(slack)
        pad = pad if Fraction(pad) >= slack else float(np.nextafter(pad, np.inf))
        loss = lattice_loss([1.0, pad], [loss, np.sign(levels)])
    return loss


def merge_tolerance(max_abs_loss: float) -> float:
    """Width below which two computed losses are rounding variants of one level."""
    return MERGE_ULPS * float(np.finfo(float).eps) * max(max_abs_loss, 1.0)


def commensurate_units(epsilons: Sequence[float], max_denominator: int = 1000) -> list[int] | None:
    """Integers ``u_j`` with ``ε_j = u_j Δ`` for one step Δ, or None when the ε are not commensurate.

    The ratios ``ε_j / max ε`` must be fractions with denominators up to ``max_denominator`` (to 1e-12
    relative); Figure 2's ``(0.3, 0.15)`` gives ``[2, 1]``. Then the loss of a lattice key ``n`` is
    ``Δ Σ_j u_j n_j``, and keys with the same integer ``Σ_j u_j n_j`` are one level.
    """
    top = max(epsilons)
    if top <= 0:
        return None
    fractions = [Fraction(e / top).limit_denominator(max_denominator) for e in epsilons]
    if any(abs(float(f) * top - e) > 1e-12 * top for f, e in zip(fractions, epsilons, strict=True)):
        return None
    common = math.lcm(*(f.denominator for f in fractions))
    return [f.numerator * (common // f.denominator) for f in fractions]


def region_from_atoms(loss: np.ndarray, log_p: np.ndarray, *, log_p_inf: float = -math.inf,
                      log_q_ninf: float | None = None, tol: float = 0.0, level: np.ndarray | None = None,
                      error: ErrorBound | None = None) -> PrivacyRegion:
    """Region of a lattice given the losses and log P-masses of its atoms (any shape).

    ``log_q = log_p - loss`` (the Q-mass of an atom is ``e^{-L}`` times its P-mass), and the ``-inf`` mass
    under Q is ``log_q_ninf``, by default the ``+inf`` mass under P (a symmetric pair, its own mirror).
    Atoms with the same integer ``level`` (from :func:`commensurate_units`) are one level: binned without
    sorting, at the largest of their computed losses (exactly 0 for level 0). Without ``level``, losses
    within ``tol`` of each other are moved onto the largest of them before the exact-equality merge of
    :meth:`PrivacyRegion.from_log_masses`.

    ``error`` bounds the given atoms' errors (:class:`~lpdp._numerics.ErrorBound`); moving a loss onto the
    largest of its group widens the loss bound by ``tol`` (the true loss may lie that far below), and
    binning widens the mass bound by :func:`~lpdp.region.merge_error`.
    """
    err = EXACT if error is None else error
    L = np.asarray(loss, dtype=float).ravel()
    lp = np.asarray(log_p, dtype=float).ravel()
    keep = np.isfinite(lp)
    L, lp = L[keep], lp[keep]
    if level is not None and L.size:
        idx = np.asarray(level).ravel()[keep]
        low = int(idx.min())
        idx = idx - low
        size = int(idx.max()) + 1
        top = np.full(size, -np.inf)
        np.maximum.at(top, idx, lp)
        total = np.bincount(idx, weights=np.exp(lp - top[idx]), minlength=size)
        err = merge_error(err, int(np.max(np.bincount(idx, minlength=size))))
        rep = np.full(size, -np.inf)
        np.maximum.at(rep, idx, L)
        used = np.isfinite(top)
        moved = rep.copy()
        moved[low + np.arange(size) == 0] = 0.0
        err = _shifted(err, L, moved[idx])
        L, lp = moved[used], np.log(total[used]) + top[used]
    elif tol > 0 and L.size > 1:
        order = np.argsort(-L)
        L, lp = L[order], lp[order]
        new_group = np.concatenate(([True], (L[:-1] - L[1:]) > tol))
        moved = L[new_group][np.cumsum(new_group) - 1]
        moved[(moved <= 0) & (moved >= -tol)] = 0.0      # up onto 0 (a tiny positive level stays)
        err = _shifted(err, L, moved)
        L = moved
    return PrivacyRegion.from_log_masses(L, lp, log_p_inf=log_p_inf,
                                         log_q_ninf=log_p_inf if log_q_ninf is None else log_q_ninf,
                                         check_total=False, error=err)


def _shifted(err: ErrorBound, before: np.ndarray, after: np.ndarray) -> ErrorBound:
    """The bound after losses are moved from ``before`` to ``after``: up moves may overstate a loss
    (``loss_down``), down moves understate it (``loss``)."""
    up = float(np.max(after - before, initial=0.0))
    down = float(np.max(before - after, initial=0.0))
    if up:
        err = err.widened(loss_down=round_up(up * (1 + 4 * UNIT_ROUNDOFF)))
    if down:
        err = err.widened(loss=round_up(down * (1 + 4 * UNIT_ROUNDOFF)))
    return err


def identity_region() -> PrivacyRegion:
    """``R(0, 0)``: one outcome class of loss 0, nothing leaks (the composition of no mechanism)."""
    return PrivacyRegion.from_log_masses([0.0], [0.0], [0.0])
