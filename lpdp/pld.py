"""Privacy-loss laws and the certified lattice engine that composes them.

For an ordered neighbouring pair (P, Q) the privacy loss is ``L = log(dP/dQ)(Y)`` with ``Y ~ P``, and
``δ(ε) = E_P[(1 - e^{ε - L})_+]`` (an atom ``L = +inf`` counts in full). Composition adds independent
losses, so the law of L under P is all that the composition of the pair needs. A :class:`LossLaw` holds it
as an exact discrete part (atoms with log masses) and, for continuous mechanisms, log-tail functions of the
continuous part, so that masses of loss intervals are computed without cancellation.

:func:`compose` brackets ``δ(ε)`` and ``ε(δ)`` of the composition of any number of loss laws (continuous,
discrete or both): every ``upper`` is provably >= the truth and every ``lower`` provably <= it, floating
point included. The argument is in ``docs/pld.md``; in short:

0. **One-sided lattices** (when every continuous law also has its tails under Q). The upper side composes,
   on ``hZ``, a connect-the-dots pair that *dominates* each law's pair (Doroshenko, Ghazi, Kamath, Kumar
   and Manurangsi, 2022): each cell's masses split between its two end points so that P- and Q-mass are
   kept; the upper tail goes to ``+inf``. The lower side composes the pair of the merged cells
   ``((j - 1/2) h, (j + 1/2) h]`` (a post-processing, so *dominated*), whose losses lie within ``O(h²)`` of
   the grid, with the coupling of item 1 on those tiny offsets. Both err by ``O(k h²)``; items 2-3 hold on
   each lattice.
1. **Lattice.** Every loss is rounded to the nearest point of the grid ``hZ`` (after clipping each law to a
   window whose outside mass is counted separately). The rounding errors ``D_i = round(L_i) - L_i`` are
   independent, each in an interval of width ``w_i <= h``, and the sum ``B`` of their means is bracketed by
   monotone Riemann sums of the tail functions. By Hoeffding's inequality ``|Σ D_i - B| <= t`` except with
   probability ``η = exp(-2t² / Σ w_i²)``; ``g_ε(s) = (1 - e^{ε-s})_+`` is non-decreasing with values in
   [0, 1], so ``δ'(ε + τ_L) - η <= δ(ε) <= δ'(ε - τ_U) + η`` with ``δ'`` the lattice answer. The width in
   ε grows like ``h √k`` (rounding every loss up or down grows like ``h k``).
2. **FFT with a certified error.** The lattice laws are composed by one real FFT per law, a pointwise power
   and one inverse FFT. The forward error of each transform is bounded by ``c u Σ(radices)`` times the ℓ1
   mass, the error of the product from the computed magnitudes, and the wrap-around of the circular
   convolution by Chernoff bounds of the lattice law. Deep tails use an exponentially tilted lattice (an
   exact change of measure), so the bound there is relative to the tail mass instead of to 1.
3. **Masses.** Tail functions are trusted to the relative accuracy ``LossLaw.rtol``; the errors telescope
   in the tail sums, tail-sum dominance is preserved by convolution, so the lattice answer is off by at
   most a factor ``(1 ± r)^k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import log1mexp, logsumexp
from lpdp._search import bisect
from lpdp._validate import check_delta, check_int, check_positive, each_value
from lpdp.errors import ParameterError

__all__ = ["LossLaw", "LatticeBracket", "BracketSide", "compose", "mixture", "DEFAULT_RTOL"]

_NEG_INF = float("-inf")
_U = float(np.finfo(float).eps) / 2.0          # unit roundoff
_MAX_CELL_INDEX = 2.0 ** 52                     # lattice indices stay exact integers in a double
_LOG_MAX = math.log(np.finfo(float).max)        # e^x overflows above this
#: Relative accuracy assumed of the masses given by a law's tail functions (``LossLaw.rtol``'s default).
DEFAULT_RTOL = 1e-12
#: Forward error of one FFT output per unit of radix summed over the stages, in units of ``u`` times the ℓ1
#: mass of the input (a radix-r stage is a size-r DFT with rounded twiddle factors; Higham, *Accuracy and
#: Stability of Numerical Algorithms*, Thm 24.2 gives ``log2 N (√2 γ_4 + μ)`` for radix 2 in ℓ2).
FFT_RADIX_ERROR = 4.0
#: Relative error of one complex multiplication, in units of ``u`` (Higham, Lemma 3.5: √2 γ_2).
MULT_ERROR = 3.0
#: Unit roundoff of numpy's long double (2^-64 for x87 extended precision; ``u`` where it is a double).
_U_LONG = float(np.finfo(np.longdouble).epsneg) / 2.0 if np.finfo(np.longdouble).nmant > 52 else _U
#: A narrow law (:data:`NARROW_SPREAD`) composed at least this many times has its forward transform taken in
#: long double (when that is wider than double): the forward error, raised to the count's power, is then its
#: rounding to double, ``u |X|``, not ``e_f ‖x‖₁`` (``docs/pld.md`` §3). Wide laws do not need it (their
#: answers did not move) and would pay ~3x for the transform.
LONG_DOUBLE_COUNT = 100
#: Wrapped-around and clipped mass allowed, as a fraction of the smallest δ the lattice is built for.
ALIAS_FRACTION = 1e-9
#: Smallest δ the default lattice window is sized for (deeper answers build a tilted lattice).
DELTA_FLOOR = 1e-15
#: A tilted lattice is built when the FFT error at ε exceeds this fraction of the lattice δ there (the
#: upper side's certified ε moves by about this fraction over the slope of log δ).
TILT_FRACTION = 1e-8
#: The same for the lower side of the one-sided route (its width budget is far larger than its error).
LOWER_TILT_FRACTION = 1e-5
#: An ε asked at a δ at most this small starts from a lattice tilted at a coarse estimate of the answer
#: instead of the untilted one (whose FFT error there is rarely small enough; it is built if needed).
DIRECT_TILT_DELTA = 1e-4
#: At most this many tilted lattices are kept per bracket.
MAX_TILTS = 8
#: Smallest default ε-width: below ~20 rounded mechanisms the PLD's width would need grids of millions of
#: cells (the coupling's constant dominates for small k); pass ``tolerance`` or ``step`` for tighter.
MIN_TOLERANCE = 1e-3
#: Default step of the upper side's lattice (connect-the-dots errs by ~0.15 k h² in ε).
UPPER_STEP = 5e-5
#: The default upper step is at least the lower step over this ratio (rounded down to {1, 2, 5} x 10^n):
#: the upper side's error, ~0.15 k h², then stays below 3e-4 of the lower side's, ~0.2 k h².
UPPER_RATIO = 50.0
#: Largest default composed lattice (points) before the upper step is coarsened.
MAX_CELLS = 2 ** 23
#: Composed windows up to this many points use the upper step on the lower side too.
SMALL_CELLS = 2 ** 18
#: Losses of the lower side's merged cells lie within ``OFFSET_CAP h²`` of their grid point (farther ones,
#: in far tails, are rounded down onto the grid).
OFFSET_CAP = 4.0
#: A law whose standard deviation is below this many lower steps is *narrow* (a subsampled mechanism's):
#: when the lower step had to be refined for it, the lower side takes the upper step (_one_sided_steps).
NARROW_SPREAD = 50.0
#: Hoeffding tail probabilities tried for the rounding term (each gives a valid bound; the best is kept).
_ETAS = 10.0 ** -np.arange(1.0, 40.0, 0.25)


@dataclass(frozen=True, eq=False)
class LossLaw:
    """The law of the privacy loss ``L`` under P of one ordered pair (P, Q).

    Parameters
    ----------
    losses, log_p : numpy.ndarray
        Finite atoms of the discrete part: losses and the natural logs of their P-masses.
    log_p_inf : float
        Log of the P-mass of ``L = +inf`` (outcomes impossible under Q).
    log_sf, log_cdf : callable, optional
        For a continuous part: ``c -> log P(L > c, L in the continuous part)`` and
        ``c -> log P(L <= c, L in the continuous part)``, vectorised; each accurate in its own tail.
    support : (float, float)
        Closed interval holding the continuous part (``±inf`` when unbounded).
    log_sf_q, log_cdf_q : callable, optional
        The same tails of the continuous part measured under Q: ``c -> log Q(L > c, L in the continuous
        part)`` and ``c -> log Q(L <= c, ...)``. With them :func:`compose` discretises one-sidedly (a
        dominating pair for ``upper``, a dominated one for ``lower``, ``docs/pld.md``); without them it
        falls back to nearest rounding with a two-sided coupling bound.
    rtol : float
        Relative accuracy of the masses ``exp(log_sf)`` and ``exp(log_cdf)`` (default
        :data:`DEFAULT_RTOL`); :func:`compose` certifies its bracket relative to it.
    rtol_log : float
        A further relative error per unit of ``|log tail|`` (default 0): each mass is within
        ``rtol + rtol_log |log mass|`` of the truth (the error model of a log-space closed form, whose
        absolute error in the log grows with its size).
    loss_error : float
        An absolute error of the losses' *positions* (default 0): every finite atom's true loss lies within
        ``loss_error`` of ``losses``, and at every ``c`` the four tail functions give (to ``rtol``) the
        tails of the pair's outcomes cut at one common point ``c'`` with ``|c' - c| <= loss_error`` (the
        cut of a law computed through a map of the loss, e.g. a subsampled mechanism's
        ``log(q e^x + 1 - q)``, whose float error no relative mass error can carry near an atom or an end
        of the support). :func:`compose` moves the upper side's losses up and the lower side's down by
        it (``docs/pld.md`` §0); a continuous part with a loss error needs its tails under Q.

    The masses of the discrete part, of the continuous part and ``e^log_p_inf`` sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> law = LossLaw(np.array([1.0, -1.0]), np.log([0.75, 0.25]))
    >>> law.is_discrete
    True
    """

    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_p: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_p_inf: float = _NEG_INF
    log_sf: Callable[[np.ndarray], np.ndarray] | None = None
    log_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    support: tuple[float, float] = (-np.inf, np.inf)
    rtol: float = DEFAULT_RTOL
    log_sf_q: Callable[[np.ndarray], np.ndarray] | None = None
    log_cdf_q: Callable[[np.ndarray], np.ndarray] | None = None
    rtol_log: float = 0.0
    loss_error: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.loss_error, (int, float)) and 0.0 <= self.loss_error < math.inf):
            raise ParameterError(f"loss_error={self.loss_error!r}: must be a finite number >= 0")

    @property
    def is_discrete(self) -> bool:
        """True when the law has no continuous part (it is then exact and finite)."""
        return self.log_sf is None

    def round_delta(self, epsilon: float) -> float:
        """``δ(ε)`` of the law's own pair (one round), certified from above: ``E_P[(1 - e^{ε - L})_+]`` is
        the ``+inf`` mass, the atoms' ``p (1 - e^{ε - a})_+`` and the continuous part's
        ``D(c) = P(L > c) - e^ε Q(L > c)`` at ``c = ε`` (no lattice). Each tail is raised (or, under Q,
        lowered) by its relative error; with a loss error η the atoms are moved up by η and the cut of
        ``D`` may be off by η, which costs at most ``e^η - 1`` (``D`` is largest at ``c = ε``, and the
        outcomes between the cuts weigh at most that each).

        Examples
        --------
        >>> rr = LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
        >>> round(rr.round_delta(0.0), 6)          # (e - 1) / (e + 1)
        0.462117
        """
        eps = float(epsilon)
        r = self.rtol + 16 * _U
        eta = float(self.loss_error)
        atoms = np.asarray(self.losses, dtype=float)
        with np.errstate(over="ignore"):
            weight = -np.expm1(np.minimum(eps - atoms - eta, 0.0))
        total = math.exp(self.log_p_inf) * (1 + r) + float(np.sum(np.exp(self.log_p) * weight)) * (1 + r)
        if self.log_sf is not None:
            if self.log_sf_q is None:
                raise ParameterError("LossLaw.round_delta: a continuous part needs its tails under Q")
            lp, lq = _at(self.log_sf, eps), _at(self.log_sf_q, eps)
            # a tail of mass 0 (log -inf, beyond an end of the support) is exact
            rp = self.rtol + self.rtol_log * (abs(lp) if lp > _NEG_INF else 0.0) + 8 * _U
            rq = self.rtol + self.rtol_log * (abs(lq) if lq > _NEG_INF else 0.0) + 8 * _U
            with np.errstate(over="ignore"):
                d = math.exp(lp) * (1 + rp) - _exp_or_inf(eps + lq) * (1 - rq)
            total += max(d, 0.0) * (1 + 4 * _U) + (math.expm1(eta) * (1 + 4 * _U) if eta else 0.0)
        return min(1.0, total * (1 + 8 * _U))

    def round_epsilon(self, delta: float) -> float:
        """The smallest ``ε >= 0`` (to 1e-12 relative, rounded up) whose :meth:`round_delta` is at most
        ``delta``: a valid ε, as the true ``δ(ε)`` is non-increasing; ``inf`` if none.

        Examples
        --------
        >>> rr = LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
        >>> rr.round_epsilon(0.1) <= 1.0 and rr.round_delta(rr.round_epsilon(0.1)) <= 0.1
        True
        """
        target = check_delta(delta, "delta")
        if self.round_delta(0.0) <= target:
            return 0.0
        hi = 1.0
        while self.round_delta(hi) > target:
            hi *= 2.0
            if hi > 1e6:
                return math.inf
        return bisect(lambda e: self.round_delta(e) > target, 0.0, hi, rtol=1e-12, iterations=200)[1]

    @property
    def one_sided(self) -> bool:
        """True when the law can be discretised one-sidedly: it is discrete, or its continuous part has
        its tails under Q as well (``log_sf_q`` and ``log_cdf_q``)."""
        return self.log_sf is None or (self.log_sf_q is not None and self.log_cdf_q is not None)


def mixture(laws: Sequence[LossLaw], weights: Sequence[float]) -> LossLaw:
    """The loss law of a round that uses law ``j`` with probability ``w_j``, the choice being public and
    independent of the data: ``P(L > c) = Σ_j w_j P(L_j > c)``, atoms and the ``+inf`` atom weighted
    likewise (the privacy region of such a round is the weighted Minkowski sum of the parts' regions,
    Lemma 1 and Corollary 1 of Cadir, Najib and Shkel).

    Masses are summed in log space; ``rtol`` is the largest of the parts' plus a few units of roundoff
    for the weights' logarithms; ``loss_error`` the largest of the parts' (the part a round uses is an
    outcome of its own, so each part's cells are cut within its own error).

    Examples
    --------
    >>> rr = LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
    >>> null = LossLaw(np.array([0.0]), np.array([0.0]))
    >>> m = mixture([rr, null], [0.25, 0.75])
    >>> m.losses.tolist(), np.exp(m.log_p).round(6).tolist()
    ([1.0, -1.0, 0.0], [0.182765, 0.067235, 0.75])
    """
    laws = list(laws)
    w = np.asarray(weights, dtype=float)
    if not laws or w.shape != (len(laws),) or not np.all(np.isfinite(w)) or np.any(w < 0) \
            or abs(float(w.sum()) - 1.0) > 1e-9:
        raise ParameterError(f"weights={w.tolist()!r}: need one non-negative weight per law, summing to 1")
    keep = [(law, math.log(x)) for law, x in zip(laws, w.tolist(), strict=True) if x > 0]
    cont = [(law, lw) for law, lw in keep if law.log_sf is not None]
    with_q = all(law.log_sf_q is not None and law.log_cdf_q is not None for law, _ in cont)

    def mix(name: str) -> Callable[[np.ndarray], np.ndarray] | None:
        if not cont or (name.endswith("_q") and not with_q):
            return None

        def fn(c: np.ndarray) -> np.ndarray:
            parts = np.stack([lw + np.asarray(getattr(law, name)(c), dtype=float) for law, lw in cont])
            top = np.max(parts, axis=0)
            safe = np.where(np.isfinite(top), top, 0.0)
            with np.errstate(divide="ignore"):
                return np.where(np.isfinite(top), safe + np.log(np.sum(np.exp(parts - safe), axis=0)),
                                top)

        return fn

    return LossLaw(np.concatenate([law.losses for law, _ in keep]),
                   np.concatenate([law.log_p + lw for law, lw in keep]),
                   logsumexp(np.array([law.log_p_inf + lw for law, lw in keep])),
                   log_sf=mix("log_sf"), log_cdf=mix("log_cdf"),
                   log_sf_q=mix("log_sf_q"), log_cdf_q=mix("log_cdf_q"),
                   support=(min((law.support[0] for law, _ in cont), default=-np.inf),
                            max((law.support[1] for law, _ in cont), default=np.inf)),
                   rtol=max(law.rtol for law, _ in keep) + 16 * _U,
                   rtol_log=max(law.rtol_log for law, _ in keep),
                   loss_error=max(law.loss_error for law, _ in keep))


# --------------------------------------------------------------------------------------- discretisation
@dataclass
class _Grid:
    """One law rounded to the nearest point of ``hZ``: log masses on indices ``lo .. lo + n - 1``."""

    lo: int
    log_x: np.ndarray
    log_c: float                 # log of the finite mass 1 - P(L = +inf)
    bias: tuple[float, float]    # bracket of E[D; L finite], D = round(clip L) - clip L
    d_range: tuple[float, float]  # an interval holding every value of D
    second: float                # upper bound of E[D²; L finite]
    log_clip: float              # log P(L clipped)
    rtol: float
    blocks: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # _blocks' cache
    shift: float = 0.0           # the lattice law moved up by this dominates (an upper lattice's loss error)
    offset: float = 0.0          # the law's losses lie near offset + hZ: it was moved by -offset (_moved)
    centroids: np.ndarray | None = None   # _centroids' cache
    narrow: bool = False         # a narrow law (NARROW_SPREAD): the l2 suffix bound, and long double

    @property
    def hi(self) -> int:
        return self.lo + self.log_x.size - 1


def _log_sub(big: np.ndarray, small: np.ndarray) -> np.ndarray:
    """``log(e^big - e^small)`` (``-inf`` where the difference is not positive)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = big + log1mexp(np.minimum(small - big, 0.0))
    return np.where((big > _NEG_INF) & (small < big), out, _NEG_INF)


def _tail(fn: Callable[[np.ndarray], np.ndarray], c: np.ndarray) -> np.ndarray:
    """A law's log tail at points ``c`` (overflow inside it is harmless: tails saturate at 0 or -inf)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        out = np.asarray(fn(np.asarray(c, dtype=float)), dtype=float)
    if np.any(np.isnan(out)) or np.any(out > 1e-9):
        raise ParameterError("a loss law's log_sf/log_cdf returned NaN or a log mass > 0: the law is invalid")
    return np.minimum(out, 0.0)


def _at(fn: Callable[[np.ndarray], np.ndarray], c: float) -> float:
    return float(_tail(fn, np.array([c]))[0])


def _quantile(law: LossLaw, log_eta: float, upper: bool) -> float:
    """A point ``c`` with ``log P(L > c) <= log_eta`` (``upper``) or ``log P(L <= c) <= log_eta``."""
    fn = law.log_sf if upper else law.log_cdf
    assert fn is not None and law.log_sf is not None and law.log_cdf is not None
    s_lo, s_hi = (float(v) for v in law.support)
    edge = s_hi if upper else s_lo
    sign = 1.0 if upper else -1.0
    # start near the median: the point of a doubling ladder where the two tails are closest
    ladder = np.concatenate([-(2.0 ** np.arange(-4, 24)), [0.0], 2.0 ** np.arange(-4, 24)])
    ladder = ladder[(ladder >= s_lo) & (ladder <= s_hi)]
    if ladder.size == 0:
        ladder = np.array([s_lo if math.isfinite(s_lo) else s_hi])
    gap = np.abs(_tail(law.log_sf, ladder) - _tail(law.log_cdf, ladder))
    near = float(ladder[int(np.nanargmin(np.where(np.isnan(gap), np.inf, gap)))])
    if _at(fn, near) <= log_eta:
        return near
    step, far = 1.0, near
    for _ in range(1100):
        far = near + sign * step
        if math.isfinite(edge) and sign * (far - edge) >= 0:
            far = edge
        if _at(fn, far) <= log_eta:
            break
        if far == edge:
            raise ParameterError(f"a loss law's tail at the support edge {edge!r} exceeds e^{log_eta:.4g}: "
                                 "check its log_sf/log_cdf and support")
        near, step = far, step * 2.0
    else:
        raise ParameterError(f"a loss law's tail does not fall below e^{log_eta:.4g}: check log_sf/log_cdf")
    return bisect(lambda x: _at(fn, x) > log_eta, near, far, iterations=80)[1]


def _discretise(law: LossLaw, h: float, log_eta: float, sub: int) -> _Grid:
    """Round ``law`` to ``hZ`` (nearest point), clipping tails of mass ``<= e^log_eta``; bracket the bias."""
    atoms = np.asarray(law.losses, dtype=float).ravel()
    log_pa = np.asarray(law.log_p, dtype=float).ravel()
    keep = np.isfinite(log_pa)
    atoms, log_pa = atoms[keep], log_pa[keep]
    if not np.all(np.isfinite(atoms)):
        raise ParameterError("LossLaw.losses: finite atoms need finite losses (put +inf in log_p_inf)")
    log_c = float(log1mexp(law.log_p_inf)) if law.log_p_inf > _NEG_INF else 0.0
    reach = max([float(np.max(np.abs(atoms))) if atoms.size else 0.0,
                 *(abs(x) for x in law.support if math.isfinite(x))])
    if not reach / h <= _MAX_CELL_INDEX:  # refuse before any cast or square can overflow
        raise ParameterError(f"a loss law with losses up to {reach:.3g} needs ~{2 * reach / h:.3g} lattice "
                             f"cells at step h={h:g}: more than the engine's 2^52")
    ja = np.rint(atoms / h).astype(np.int64)
    d_atoms = ja * h - atoms
    pa = np.exp(log_pa)
    # float error of each D = j h - L, and the atoms' own loss error (the true loss is within it)
    e_a = 4 * _U * (np.abs(ja * h) + np.abs(atoms)) + law.loss_error
    slack_a = float(np.sum(pa * e_a)) + 4 * _U * float(np.sum(pa * np.abs(d_atoms)))
    b_atoms = float(np.sum(pa * d_atoms))
    bias_lo, bias_hi = b_atoms - slack_a, b_atoms + slack_a
    dmin = float(np.min(d_atoms - e_a)) if atoms.size else math.inf
    dmax = float(np.max(d_atoms + e_a)) if atoms.size else -math.inf
    second_a = float(np.sum(pa * (np.abs(d_atoms) + e_a) ** 2)) * (1 + 8 * _U)
    if law.log_sf is None:
        if not atoms.size:
            raise ParameterError("a loss law with no finite atom and no continuous part cannot be composed")
        lo, hi = int(ja.min()), int(ja.max())
        log_x = np.full(hi - lo + 1, _NEG_INF)
        np.logaddexp.at(log_x, ja - lo, log_pa)
        return _Grid(lo, log_x, log_c, (bias_lo, bias_hi), (dmin, dmax), second_a, _NEG_INF, law.rtol)
    if law.log_cdf is None:
        raise ParameterError("LossLaw: a continuous part needs both log_sf and log_cdf")
    if law.loss_error > 0:
        raise ParameterError(f"LossLaw(loss_error={law.loss_error!r}): a continuous part with a loss error "
                             "is composed one-sidedly only: it needs its tails under Q (log_sf_q, "
                             "log_cdf_q), "
                             "and so does every other law of the composition")
    rtol = _eff_rtol(law, log_eta)
    c_lo, c_hi = _quantile(law, log_eta, False), _quantile(law, log_eta, True)
    lo, hi = int(math.floor(c_lo / h + 0.5)), int(math.ceil(c_hi / h - 0.5))
    if atoms.size:
        lo, hi = min(lo, int(ja.min())), max(hi, int(ja.max()))
    hi = max(hi, lo + 1)
    n = hi - lo + 1
    check_budget(f"the lattice of one loss law (step h={h:g}, {n:.3g} cells x {sub})",
                 memory_bytes=8.0 * 6 * (n * sub + 1), seconds=seconds_for(60.0 * n * sub))
    # Cells: cell j = ((lo + j - 1/2) h, (lo + j + 1/2) h]; the clipped law puts its lower tail at the left
    # end of cell 0 and its upper tail at the right end of cell n - 1. Sub-points split each cell in `sub`.
    bnd = (lo - 0.5 + np.arange(n + 1)) * h
    b_ls = _tail(law.log_sf, bnd)
    b_lc = _tail(law.log_cdf, bnd)
    split = int(np.clip(np.searchsorted(-(b_ls - b_lc), 0.0, side="right"), 1, n - 1))
    log_x = np.empty(n)
    low = b_lc[:split + 1].copy()
    low[0] = _NEG_INF
    log_x[:split] = _log_sub(low[1:], low[:-1])
    up = b_ls[split:].copy()
    up[-1] = _NEG_INF
    log_x[split:] = _log_sub(up[:-1], up[1:])
    log_clip = float(np.logaddexp(b_lc[0], b_ls[-1]))
    # Bias and second moment of nearest rounding (_cell_moments); the clipped tails add ±h/2 per unit mass.
    # Cells of mass below 1e-12 get no sub-points (their bracket is h times their mass, negligible).
    heavy = log_x > math.log(1e-12)
    below = np.arange(n) < split
    sums = [_cell_moments(law, h, lo, np.flatnonzero(cells), upper, sub if dense else 1)
            for upper, part in ((False, below), (True, ~below))
            for dense, cells in ((True, part & heavy), (False, part & ~heavy))]
    left, right, second, g_abs = (sum(v[i] for v in sums) for i in range(4))
    tails = (h / 2.0) * (math.exp(b_lc[0]) - math.exp(b_ls[-1]))
    slack = 4.0 * (rtol + 4 * _U * (sub + 2) + _U * n) * h * g_abs
    bias_lo += left + tails - slack
    bias_hi += right + tails + slack
    second += (h * h / 4.0) * (math.exp(b_lc[0]) + math.exp(b_ls[-1]))
    second = second * (1 + 1e-12) + 2 * (rtol + 8 * _U * (sub + n)) * h * h * g_abs
    second += second_a
    if atoms.size:
        np.logaddexp.at(log_x, ja - lo, log_pa)
    fp = 4 * _U * (abs(lo) + abs(hi) + 1) * h
    d_range = (min(dmin, -h / 2 - fp), max(dmax, h / 2 + fp))
    return _Grid(lo, log_x, log_c, (bias_lo, bias_hi), d_range, second, log_clip, rtol)


def _cell_moments(law: LossLaw, h: float, lo: int, cells: np.ndarray, upper: bool, sub: int
                  ) -> tuple[float, float, float, float]:
    """Bias bracket (left and right Riemann parts), second-moment bound and Σ|G| over some cells.

    On a cell [c, c + h] with centre x: ``∫(x - l) dF = ∫ G - h (G(c) + G(c+h)) / 2`` for ``G = F`` (cells
    below the split) or ``G = -sf`` (above; a constant shift cancels). G increases, so the left and right
    Riemann sums on ``sub`` sub-intervals bracket ``∫ G``. ``E[D²]`` on a cell is at most the sum over its
    sub-intervals of (mass) times (largest ``(x - l)²`` there).
    """
    if cells.size == 0:
        return 0.0, 0.0, 0.0, 0.0
    frac = np.arange(sub + 1) / sub
    pts = ((lo - 0.5 + cells[:, None] + frac[None, :]) * h).ravel()
    g = (-np.exp(_tail(law.log_sf, pts)) if upper else np.exp(_tail(law.log_cdf, pts))).reshape(cells.size,
                                                                                                 sub + 1)
    inner = g[:, 1:-1].sum(axis=1)
    trap = (h / 2.0) * (g[:, 0] + g[:, -1])
    left = float(np.sum((h / sub) * (g[:, 0] + inner) - trap))
    right = float(np.sum((h / sub) * (inner + g[:, -1]) - trap))
    dist = np.maximum(np.abs(frac[:-1] - 0.5), np.abs(frac[1:] - 0.5)) * h
    second = float(np.sum(np.maximum(np.diff(g, axis=1), 0.0) * dist[None, :] ** 2))
    return left, right, second, float(np.sum(np.abs(g)))


# ------------------------------------------------------------------------------ one-sided discretisation
def _eff_rtol(law: LossLaw, log_eta: float) -> float:
    """The relative accuracy of every tail value inside a window clipped at tails ``>= e^log_eta``."""
    return law.rtol + law.rtol_log * (1.0 + abs(log_eta))


def _cell_masses(law: LossLaw, bnd: np.ndarray, under_q: bool) -> tuple[np.ndarray, np.ndarray]:
    """Log masses of the cells ``(bnd[i], bnd[i+1]]`` under P (or Q) and a bound on each one's relative
    error: the difference of the tail that is small there (cdf below the median, sf above it), whose values
    are within ``rtol + rtol_log |log tail|`` of the truth; the difference adds a few ``u``."""
    sf, cdf = (law.log_sf_q, law.log_cdf_q) if under_q else (law.log_sf, law.log_cdf)
    assert sf is not None and cdf is not None
    # One split, so the tails telescope: cells 0..s-1 (below the median: the cdf at a cell's right end at
    # most the sf at its left end) take the cdf's difference, the others the sf's. The split is searched on
    # at most 65 probe cells a round (a few small evaluations) and each tail evaluated on its side only
    # (half the tail evaluations of both everywhere).
    a, b = 0, bnd.size - 1          # the split s lies in [a, b]
    while a < b:
        probe = np.unique(np.linspace(a, b - 1, 65).astype(np.int64)) if b - a > 65 else np.arange(a, b)
        low = _tail(cdf, bnd[probe + 1]) <= _tail(sf, bnd[probe])
        k = int(np.argmin(low)) if not low.all() else probe.size      # probe[:k] low, probe[k] not
        a, b = (int(probe[k - 1]) + 1 if k else a), (int(probe[k]) if k < probe.size else b)
    lc, ls = _tail(cdf, bnd[:a + 1]), _tail(sf, bnd[a:])
    # a tail of mass exactly 0 (log -inf, at an end of the support) is exact: it adds no |log| to the error
    fin_c, fin_s = np.where(np.isfinite(lc), np.abs(lc), 0.0), np.where(np.isfinite(ls), np.abs(ls), 0.0)
    log_m = np.concatenate([_log_sub(lc[1:], lc[:-1]), _log_sub(ls[:-1], ls[1:])])
    scale = np.concatenate([np.logaddexp(lc[1:], lc[:-1]), np.logaddexp(ls[:-1], ls[1:])])
    size = np.concatenate([np.maximum(fin_c[1:], fin_c[:-1]), np.maximum(fin_s[:-1], fin_s[1:])])
    with np.errstate(invalid="ignore", over="ignore"):   # the difference itself: a few u relative
        rel = ((law.rtol + law.rtol_log * size) * np.exp(np.minimum(scale - log_m, _LOG_MAX)) + 8 * _U)
    return log_m, np.where(log_m > _NEG_INF, rel, np.inf)


def _window_indices(law: LossLaw, h: float, clip: tuple[float, float], centred: bool) -> tuple[int, int]:
    """Grid indices ``lo <= hi`` covering the law's continuous part inside ``clip`` (quantiles with tails
    of mass ``<= e^log_eta``) and every atom (``centred``: cells are ``((j - 1/2) h, (j + 1/2) h]``, else
    ``(j h, (j + 1) h]``)."""
    c_lo, c_hi = clip
    half = 0.5 if centred else 0.0
    lo, hi = math.floor(c_lo / h + half), math.ceil(c_hi / h - half)
    atoms = np.asarray(law.losses, dtype=float)
    if atoms.size:
        lo = min(lo, math.floor(float(atoms.min()) / h) - 1)
        hi = max(hi, math.ceil(float(atoms.max()) / h) + 1)
    reach = max(abs(lo), abs(hi)) + 2
    if not reach <= _MAX_CELL_INDEX:
        raise ParameterError(f"a loss law spanning [{c_lo:.3g}, {c_hi:.3g}] needs ~{reach:.3g} lattice cells "
                             f"at step h={h:g}: more than the engine's 2^52")
    return lo, max(hi, lo + 1)


def _split_up(log_p: np.ndarray, ell_hi: np.ndarray, a: np.ndarray, b: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Connect-the-dots split of masses ``e^log_p`` whose merged loss ``log(p/q)`` is at most ``ell_hi``
    in ``[a, b]``: ``(p_a, p_b)`` with ``p_b >= p (1 - e^{a - ℓ}) / (1 - e^{a - b})`` (rounded up; more
    mass at ``b`` only moves mass up)."""
    ell = np.clip(ell_hi, a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(b > a, np.expm1(a - ell) / np.expm1(a - b), 1.0) * (1 + 8 * _U)
    p = np.exp(log_p)
    pb = np.minimum(p, p * np.minimum(np.nan_to_num(phi, nan=1.0), 1.0))
    return p - pb, pb


def _check_loss_error(law: LossLaw, h: float) -> float:
    """The law's loss error, refused unless a quarter of the step exceeds it (cuts ``h`` apart then stay
    ordered, so the computed cells partition the outcomes)."""
    eta = float(law.loss_error)
    if not 4.0 * eta < h:
        raise ParameterError(f"step h={h:g}: a loss law with loss_error={eta:g} needs a step above "
                             f"{4 * eta:g}")
    return eta


def _pad(law: LossLaw, h: float, lo: int, hi: int) -> float:
    """The law's loss error η widened so that, for losses ``x`` of the window ``[lo h, (hi + 1) h]``, the
    float results of ``x - η`` and ``x + η`` lie outside ``[x - η, x + η]`` (0 when η is)."""
    eta = _check_loss_error(law, h)
    return eta + 4 * _U * (max(abs(lo), abs(hi) + 1) * h + eta + 1) if eta > 0 else 0.0


def _dominating_grid(law: LossLaw, h: float, log_eta: float, clip: tuple[float, float]) -> _Grid:
    """The upper side's lattice law: a pair on ``hZ`` that, moved up by the law's ``loss_error`` η (the
    grid's ``shift``), dominates the law's pair (Doroshenko et al. 2022, connect the dots), its masses
    rounded so that every tail sum is at least ``1 - 4 rtol`` times the exact one; the upper tail beyond the
    window is moved to ``+inf``.

    With η > 0 a computed cell ``(x_j, x_{j+1}]`` holds the outcomes of a true cell whose losses lie in
    ``[x_j - η, x_{j+1} + η]``: its masses are split between those two ends (which dominates it) and the
    lower end then moved up to ``x_j + η`` (a higher loss at the same P-mass dominates), so the pair on
    ``x_j + η`` dominates: the lattice law shifted by η."""
    assert law.log_sf is not None and law.log_sf_q is not None
    _check_loss_error(law, h)
    lo, hi = _window_indices(law, h, clip, False)
    n = hi - lo + 1
    check_budget(f"the lattice of one loss law (step h={h:g}, {n:.3g} cells)", memory_bytes=8.0 * 14 * n,
                 seconds=seconds_for(40.0 * n))
    x = (lo + np.arange(n)) * h
    # η widened so that the float ends x - eta and x + eta lie outside [x - η, x + η]
    eta = _pad(law, h, lo, hi)
    log_p, rel_p = _cell_masses(law, x, False)
    log_q, rel_q = _cell_masses(law, x, True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # an upper bound of each cell's merged loss log(p/q) (the true one lies in [x_j, x_{j+1}])
        ell_hi = (log_p - log_q + np.log1p(np.minimum(rel_p, 1e300))
                  - np.where(rel_q < 0.5, np.log1p(-np.minimum(rel_q, 0.5)), -np.inf))
        ell_hi = ell_hi + 4 * _U * (np.abs(ell_hi) + np.abs(log_p) + np.abs(log_q))
    x_lo, x_hi = (x[:-1] - eta, x[1:] + eta) if eta else (x[:-1], x[1:])
    ell_hi = np.where(np.isnan(ell_hi) | (ell_hi > x_hi), x_hi, ell_hi)
    # p_b is bounded with the cell's largest possible mass p (1 + rel_p): the split's error moves up
    pa, pb = _split_up(log_p + np.log1p(np.minimum(rel_p, 1e300)), ell_hi, x_lo, x_hi)
    p = np.exp(log_p)
    pb = np.minimum(pb, p)
    y = np.zeros(n)
    y[:-1] += p - pb
    y[1:] += pb
    y[0] += math.exp(_at(law.log_cdf, float(x[0])))        # the lower tail, at the lowest point
    atoms = np.asarray(law.losses, dtype=float).ravel()
    log_pa = np.asarray(law.log_p, dtype=float).ravel()
    keep = np.isfinite(log_pa)
    atoms, log_pa = atoms[keep], log_pa[keep]
    if atoms.size:
        j = np.floor(atoms / h).astype(np.int64)
        j = np.where(j * h > atoms, j - 1, j)
        j = np.where((j + 1) * h < atoms, j + 1, j)
        qa, qb = _split_up(log_pa, atoms + eta, j * h - eta, (j + 1) * h + eta)
        np.add.at(y, j - lo, qa)
        np.add.at(y, j + 1 - lo, qb)
    # the +inf atom and the clipped upper tail, rounded up
    rtol = _eff_rtol(law, log_eta)
    top = math.exp(_at(law.log_sf, float(x[-1]))) * (1 + rtol)
    p_inf = min((math.exp(law.log_p_inf) + top) * (1 + 8 * _U), 1.0)
    log_c = math.log1p(-p_inf) if p_inf < 1 else _NEG_INF
    with np.errstate(divide="ignore"):
        log_x = np.log(y)
    return _Grid(lo, log_x, log_c, (0.0, 0.0), (0.0, 0.0), 0.0, _NEG_INF, rtol, shift=eta)


def _offsets(law: LossLaw, h: float, clip: tuple[float, float], offset: float = 0.0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lower side's merged cells on ``offset + hZ``: boundaries, log P-masses, merged losses rounded
    down (not yet capped) and centres; cells that hold an end of the law's support (not smooth there:
    offsets up to ``h/2``) get the mass ``-inf`` in the last array, the others their log P-mass (for
    :func:`_cap`).

    A cell's merged loss lies ``≈ (h²/12) |(log density)'|`` from its centre: within ``OFFSET_CAP h²`` for
    laws of unit scale, but far more for a narrow or steep law (a subsampled mechanism's body has spread
    ``≈ q μ``, and its density vanishes steeply at the lower end ``log(1 - q)``); rounding all of those a
    whole step down put the lower side ``~k h`` low in ε (:func:`_cap` keeps them).
    """
    _check_loss_error(law, h)
    lo, hi = _window_indices(law, h, (clip[0] - offset, clip[1] - offset), True)
    n = hi - lo + 1
    check_budget(f"the lattice of one loss law (step h={h:g}, {n:.3g} cells)", memory_bytes=8.0 * 14 * n,
                 seconds=seconds_for(40.0 * n))
    bnd = (lo - 0.5 + np.arange(n + 1)) * h
    if offset:
        bnd += offset
    log_p, rel_p = _cell_masses(law, bnd, False)
    log_q, rel_q = _cell_masses(law, bnd, True)
    with np.errstate(invalid="ignore", divide="ignore"):
        ell = (log_p - log_q + np.where(rel_p < 0.5, np.log1p(-np.minimum(rel_p, 0.5)), -np.inf)
               - np.log1p(np.minimum(rel_q, 1e300)))
        ell = ell - 4 * _U * (np.abs(ell) + np.abs(log_p) + np.abs(log_q))
    ell = np.minimum(np.where(np.isnan(ell), -np.inf, ell), bnd[1:])
    # a computed cell holds a true cell whose losses lie above its lower end less the loss error
    pad = _pad(law, h, lo, hi)
    ell = np.maximum(ell, bnd[:-1] - pad if pad else bnd[:-1])
    centre = (lo + np.arange(n)) * h
    if offset:
        centre += offset
    s_lo, s_hi = (float(v) for v in law.support)
    edge = ((bnd[:-1] <= s_lo) & (s_lo <= bnd[1:])) | ((bnd[:-1] <= s_hi) & (s_hi <= bnd[1:]))
    return bnd, log_p, ell, centre, np.where(edge, _NEG_INF, log_p)


#: Merged-cell offsets beyond the cap that leave out cells of at most this total P-mass are rounded down
#: onto the grid (each round then loses at most ``OFFSET_MASS h`` of mean loss).
OFFSET_MASS = 1e-9


def _cap(log_p: np.ndarray, offsets: np.ndarray, h: float) -> float:
    """The largest merged-cell offset kept (at least ``OFFSET_CAP h²``): offsets above it, in cells of total
    P-mass at most :data:`OFFSET_MASS` (or at an end of the support: mass ``-inf`` here), are rounded down
    onto the grid."""
    keep = log_p > _NEG_INF
    d = np.abs(offsets)[keep]
    order = np.argsort(-d)
    light = np.cumsum(np.exp(log_p[keep][order])) <= OFFSET_MASS
    top = float(d[order][~light][0]) if np.any(~light) else 0.0
    return max(OFFSET_CAP * h * h, top * (1 + 1e-9))


def _lower_width(law: LossLaw, k: int, h: float, clip: tuple[float, float]) -> float:
    """Bernstein's width ``M L / 3 + sqrt(2 V L)`` (``L = log 1e8``) of the lower side's coupling for ``k``
    rounds of the law's merged cells at step ``h``: ``M`` the cap, ``V = k E[D²]`` of the kept offsets."""
    _, log_p, ell, centre, smooth = _offsets(law, h, clip)
    d = ell - centre
    cap = _cap(smooth, d, h)
    kept = np.where(np.abs(d) <= cap, d, 0.0)
    var = k * float(np.sum(np.exp(log_p) * kept * kept))
    ln = math.log(1e8)
    return cap * ln / 3.0 + math.sqrt(2.0 * var * ln)


def _dominated_law(law: LossLaw, h: float, log_eta: float, clip: tuple[float, float],
                   offset: float = 0.0) -> LossLaw:
    """The lower side's law: the losses of each cell ``(o + (j - 1/2) h, o + (j + 1/2) h]`` (``o`` the
    ``offset``) merged into one outcome (a post-processing, so its pair is dominated by the law's), its loss
    ``log(p/q)`` rounded down by its error; the upper tail merged at the window's top, the lower tail
    dropped (a smaller measure); atoms kept, less the loss error. Its losses lie within ``O(h²)`` of the
    lattice ``o + hZ`` (atoms too, when the offset and the step align them), so nearest rounding with the
    coupling bound costs little."""
    assert law.log_sf is not None and law.log_sf_q is not None
    bnd, log_p, ell, centre, smooth = _offsets(law, h, clip, offset)
    ok = log_p > _NEG_INF
    # a loss farther than the cap from its grid point (a light cell, _cap) is rounded down onto the
    # grid: lower still, and it keeps the coupling's range |D| <= cap small
    far = np.abs(ell - centre) > _cap(smooth, ell - centre, h)
    ell = np.where(far & (ell < centre), centre - h, np.where(far, centre, ell))
    top = _at(law.log_sf, float(bnd[-1]))    # the upper tail: its loss is above bnd[-1] - η > hi h
    # atoms at their stated loss less the loss error: at or below the truth
    atoms = np.asarray(law.losses, dtype=float).ravel() - _pad(law, h, *_window_indices(
        law, h, (clip[0] - offset, clip[1] - offset), True))
    log_pa = np.asarray(law.log_p, dtype=float).ravel()
    return LossLaw(np.concatenate([ell[ok], [centre[-1]], atoms]),
                   np.concatenate([log_p[ok], [top], log_pa]), law.log_p_inf, rtol=_eff_rtol(law, log_eta))


# --------------------------------------------------------------------------------------------- lattices
_BLOCKS = 2048


def _blocks(g: _Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The law in at most ``_BLOCKS`` blocks: log block masses and each block's first and last index."""
    if g.blocks is None:
        g.blocks = _make_blocks(g)
    return g.blocks


def _make_blocks(g: _Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = g.log_x.size
    size = max(1, math.ceil(n / _BLOCKS))
    m = math.ceil(n / size)
    pad = np.full(m * size, _NEG_INF)
    pad[:n] = g.log_x
    pad = pad.reshape(m, size)
    top = np.max(pad, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        mass = np.log(np.sum(np.exp(pad - safe[:, None]), axis=1)) + safe
    first = g.lo + size * np.arange(m)
    return np.where(np.isfinite(top), mass, _NEG_INF), first, np.minimum(first + size - 1, g.hi)


def _coarsened(g: _Grid, size: int) -> _Grid:
    """The grid's masses on a grid ``size`` times coarser, each split between the two nearest coarse points
    so that its mean is kept (for :meth:`_Engine._estimate` only: no error terms)."""
    j = g.lo + np.arange(g.log_x.size)
    jc = j // size
    frac = (j - jc * size) / size
    top = float(np.max(g.log_x))
    if not math.isfinite(top):          # no finite mass: nothing to move
        return g
    w = np.exp(g.log_x - top)
    lo = int(jc[0])
    y = np.bincount(jc - lo, weights=w * (1 - frac), minlength=int(jc[-1]) - lo + 2)
    y[1:] += np.bincount(jc - lo, weights=w * frac, minlength=int(jc[-1]) - lo + 1)
    with np.errstate(divide="ignore"):
        return _Grid(lo, np.log(y) + top, g.log_c, (0.0, 0.0), (0.0, 0.0), 0.0, _NEG_INF, g.rtol)


def _log_mgf(grids: Sequence[tuple[_Grid, int]], h: float, theta: float) -> float:
    """An upper bound of ``log Σ_J y_J e^{θ J h}`` for the lattice law ``y`` of the composition (a product of
    sums): each block's mass at the block's end where ``e^{θ J h}`` is largest, rounded up by 1e-10."""
    total = 0.0
    for g, k in grids:
        mass, first, last = _blocks(g)
        total += k * float(logsumexp(mass + theta * h * (last if theta > 0 else first)))
    return total + 1e-10 * (1.0 + abs(total))


def _spread(grids: Sequence[tuple[_Grid, int]], h: float) -> float:
    """Standard deviation of the composed lattice law (sets the range of tilts tried)."""
    var = 0.0
    for g, k in grids:
        mass, first, last = _blocks(g)
        x = h * (first + last) / 2.0
        w = np.exp(mass - logsumexp(mass))
        mean = float(np.sum(w * x))
        var += k * (float(np.sum(w * (x - mean) ** 2)) + (h * (last[0] - first[0] + 1)) ** 2 / 12)
    return max(math.sqrt(var), h)


def _centroids(g: _Grid) -> np.ndarray:
    """Each block's mass-weighted mean index (:func:`_blocks`' blocks; the block's centre if empty)."""
    if g.centroids is None:
        mass, first, last = _blocks(g)
        n = g.log_x.size
        size = int(last[0] - first[0] + 1)
        m = mass.size
        pad = np.full(m * size, _NEG_INF)
        pad[:n] = g.log_x
        pad = pad.reshape(m, size)
        top = np.max(pad, axis=1)
        w = np.exp(pad - np.where(np.isfinite(top), top, 0.0)[:, None])
        tot = np.sum(w, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = first + np.sum(w * np.arange(size)[None, :], axis=1) / tot
        g.centroids = np.where(tot > 0, mean, (first + last) / 2.0)
    return g.centroids


def _tilted_mean(grids: Sequence[tuple[_Grid, int]], h: float, theta: float) -> float:
    """Mean of the θ-tilted lattice law (used to place tilts, not in any bound), from each block's mass at
    its centroid, not its centre: a narrow law in a long window (a subsampled Gaussian's body is ~40 cells
    wide, its upper tail ~10^5) has its body in one block, whose centre, times k, moved the mean by whole
    units and kept the tilt away from the answer."""
    total = 0.0
    for g, k in grids:
        mass = _blocks(g)[0]
        x = h * _centroids(g)
        w = mass + theta * x
        total += k * float(np.sum(np.exp(w - logsumexp(w)) * x))
    return total


def _radix_sum(n: int) -> int:
    """Sum of the prime factors of ``n`` with multiplicity (the radices of a mixed-radix FFT)."""
    total, p = 0, 2
    while n > 1:
        while n % p == 0:
            total += p
            n //= p
        p += 1
    return total


def _ladder(spread: float) -> np.ndarray:
    """Tilts tried in the Chernoff bounds (any tilt gives a valid bound; the best is kept): around
    ``sqrt(2 log(1/p)) / spread`` for tail masses p from 1e-1 to 1e-300."""
    return np.geomspace(0.3 / spread, 80.0 / spread, 20)


@dataclass
class _Lattice:
    """The composed lattice law on indices ``start .. start + n - 1`` (tilt ``theta``).

    ``a`` and ``b`` are suffix sums, scaled by ``e^{-scale}``: ``a_i = Σ_{j>=i} y_j`` and
    ``b_i = Σ_{j>=i} y_j e^{-(x_j - x_i)}``, so the lattice ``δ'(ε) = a_i - e^{ε - x_i} b_i`` for
    ``x_{i-1} <= ε < x_i``. Each entry's error is ``<= e^{log_e0 - θ h (J - start)}``. Untilted, also the
    error's parts for the ℓ2 bound of a suffix (``docs/pld.md`` §3): ``two`` bounds ``‖IDFT(ΔY)‖₂``,
    ``rest`` each entry's other errors, ``neg`` the suffix sums of the negative parts cut off (all
    untilted, absolute).
    """

    theta: float
    start: int
    n: int
    scale: float
    a: np.ndarray
    b: np.ndarray
    log_e0: float
    log_alias: float
    two: float = math.inf
    rest: float = math.inf
    neg: np.ndarray | None = None


def _window(grids: Sequence[tuple[_Grid, int]], h: float, theta: float, start: int | None,
            log_target: float) -> tuple[int, int, float]:
    """``(A, N, log alias bound)``: a window whose wrapped-around and missing mass is ``<= target``."""
    lo_total = sum(k * g.lo for g, k in grids)
    hi_total = sum(k * g.hi for g, k in grids)
    cache: dict[float, float] = {}

    def lm(t: float) -> float:
        if t not in cache:
            cache[t] = _log_mgf(grids, h, t)
        return cache[t]

    ladder = _ladder(_spread(grids, h))
    if start is None:   # Σ_{J<A} y_J <= M(t) e^{-t A h} for t < 0: the largest A that meets the target
        start = max([lo_total] + [math.floor((lm(-t) - log_target) / (-t * h)) for t in ladder])
        start = min(start, hi_total)
    # Σ_{J>=A+N} y_J e^{θ (J-A) h} <= M(t) e^{-(t-θ)(A+N) h - θ A h} for t > θ
    top = min([hi_total + 1] + [math.ceil((lm(theta + t) - theta * start * h - log_target) / (t * h))
                                for t in ladder])
    length = max(top - start, 16)
    if theta > 0:   # mass below the window wraps up by N and is damped by e^{-θ N h}
        length = max(length, math.ceil(-log_target / (theta * h)))
    import scipy.fft as sfft

    n = int(sfft.next_fast_len(int(length), real=True))
    up = min(lm(theta + t) - t * (start + n) * h - theta * start * h for t in ladder)
    down = min([0.0] + [lm(-t) + t * start * h for t in ladder])
    if theta > 0:
        down -= theta * n * h
    if start + n > hi_total:     # nothing above the window
        up = _NEG_INF
    if start <= lo_total:        # nothing below it
        down = _NEG_INF
    # each of the two tails is missed once and wrapped once
    both = float(np.logaddexp(up, down))
    return int(start), n, (math.log(2.0) + both) if both > _NEG_INF else _NEG_INF


def _power(z: np.ndarray, k: int) -> np.ndarray:
    """``z**k`` for ``k >= 1`` by repeated squaring, elementwise, squaring ``z`` in place (its values are
    lost; the first factor is copied, not multiplied into ones: the same roundings, fewer passes)."""
    out: np.ndarray | None = None
    base = z
    while k:
        if k & 1:
            if out is None:
                out = base.copy() if k > 1 else base
            else:
                out *= base
        k >>= 1
        if k:
            base *= base
    assert out is not None
    return out


def _discounted_suffix(y: np.ndarray, h: float) -> np.ndarray:
    """``b_i = Σ_{j >= i} y_j e^{-(j - i) h}`` for ``y >= 0``: cumulative sums of non-negative terms in
    blocks short enough that ``e^{±h (block length)}`` stays in range (relative error ``<= (n + 8) u``)."""
    n = y.size
    size = max(1, min(n, int(300.0 / h)))
    out = np.empty(n)
    carry = 0.0
    for s in range(((n - 1) // size) * size, -1, -size):
        seg = y[s:s + size]
        m = seg.size
        d = np.exp(-h * np.arange(m))
        np.divide(np.cumsum((seg * d)[::-1])[::-1], d, out=out[s:s + m])
        if carry:       # the suffix beyond the block (0 for the last one: nothing to add)
            out[s:s + m] += carry * np.exp(-h * (m - np.arange(m)))
        carry = float(out[s])
    return out


def _build(grids: Sequence[tuple[_Grid, int]], h: float, theta: float, start: int | None,
           log_target: float, window: tuple[int, int, float] | None = None) -> _Lattice:
    import scipy.fft as sfft

    start, n, log_alias = window if window is not None else _window(grids, h, theta, start, log_target)
    widest = max(g.log_x.size for g, _ in grids)
    check_budget(f"the FFT lattice (N={n}, step h={h:g}, {len(grids)} distinct laws)",
                 memory_bytes=8.0 * (10 * n + 4 * widest),
                 seconds=seconds_for(len(grids) * n * (3 * math.log2(n) + 30)))
    e_f = FFT_RADIX_ERROR * _U * _radix_sum(n)
    k_tot = sum(k for _, k in grids)
    half = n // 2 + 1
    prod: np.ndarray | None = None
    log_a: np.ndarray | None = None        # Σ_i k_i log a_i with a_i = |X̂_i| + e_f m1_i >= |X_i|, |X̂_i|
    rel: np.ndarray | None = None          # log Σ_i k_i e_f m1_i / a_i
    log_z, offset = 0.0, 0
    e_long = FFT_RADIX_ERROR * _U_LONG * _radix_sum(n)
    for g, k in grids:
        j = g.lo + np.arange(g.log_x.size)
        w = g.log_x + theta * h * j
        lz = logsumexp(w)
        x = np.exp(w - lz)
        m1 = float(np.sum(x)) * (1 + 2 * g.log_x.size * _U)
        vec = (np.bincount((j - g.lo) % n, weights=x, minlength=n) if x.size > n
               else np.pad(x, (0, n - x.size)))
        if g.narrow and k >= LONG_DOUBLE_COUNT and _U_LONG < _U:
            # the transform in long double (exact inputs), then rounded to double: |X̂ - X| is at most
            # e_long ‖x‖₁ plus the rounding, u |X̂| (1 + 4u)
            spec = sfft.rfft(vec.astype(np.longdouble)).astype(complex)
            err: float | np.ndarray = e_long * m1 + _U * np.abs(spec) * (1 + 4 * _U)
        else:
            spec = sfft.rfft(vec)
            err = e_f * m1
        with np.errstate(divide="ignore"):
            la = np.abs(spec)
            la *= 1 + 2 * _U
            la += err
            la = np.log(la, out=la)
            term = math.log(k) + np.log(err) - la
        # the first law's terms start the sums (adding them to 0, -inf and multiplying them into 1 is exact)
        rel = term if rel is None else np.logaddexp(rel, term)
        log_a = k * la if log_a is None else log_a + k * la
        prod = _power(spec, k) if prod is None else prod * _power(spec, k)     # spec is used up
        log_z += k * lz
        offset += k * g.lo
    assert prod is not None and log_a is not None and rel is not None    # grids is not empty
    mult = (1 + MULT_ERROR * _U) ** (2 * k_tot + 2 * len(grids)) - 1
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    log_b = log_a + np.logaddexp(rel, math.log(mult))      # |Ŷ_ω - Y_ω| <= e^{log_b} per frequency
    err_spec = math.exp(logsumexp(log_b + np.log(weights)))
    l1_spec = float(np.sum(weights * np.abs(prod))) * (1 + 4 * _U)
    y = sfft.irfft(prod, n)
    rest = e_f * l1_spec / n + 2 * _U * float(np.max(np.abs(y)))
    e_inf = err_spec / n + rest
    y = np.roll(y, -((start - offset) % n))      # y[i] is the index J = start + i
    l2 = theta == 0 and any(g.narrow for g, _ in grids)     # the l2 suffix bound pays for narrow laws only
    neg = np.maximum(-y, 0.0) if l2 else None
    y = np.maximum(y, 0.0, out=y)
    # untilt: y_J = ỹ_J e^{log_z - θ h J}; scale by the largest entry so nothing overflows (in place: the
    # same roundings as log(y) + log_z - θ h J, then exp of that minus the scale)
    with np.errstate(divide="ignore"):
        log_y = np.log(y, out=y)
    log_y += log_z
    if theta:
        log_y -= theta * h * np.arange(start, start + n)
    scale = float(np.max(log_y))
    if not math.isfinite(scale):
        scale = 0.0
    log_y -= scale
    ys = np.exp(log_y, out=log_y)
    a = np.cumsum(ys[::-1])[::-1]
    b = _discounted_suffix(ys, h)
    log_e0 = (math.log(e_inf) if e_inf > 0 else _NEG_INF) + log_z - theta * h * start
    if neg is None:
        return _Lattice(theta, start, n, scale, a, b, log_e0, log_alias)
    two_spec = math.exp(0.5 * logsumexp(2 * log_b + np.log(weights)))   # ‖ΔY‖₂, full spectrum
    # the ℓ2 parts (Parseval: ‖IDFT(ΔY)‖₂ = ‖ΔY‖₂ / √N), untilted; sums of non-negative terms, rounded up
    z = math.exp(log_z) * (1 + 4 * _U)
    grow = 1 + 4 * (n + 8) * _U
    return _Lattice(theta, start, n, scale, a, b, log_e0, log_alias, two=two_spec / math.sqrt(n) * z * grow,
                    rest=rest * z * grow, neg=np.cumsum(neg[::-1])[::-1] * z * grow)


def _exp_or_inf(x: float) -> float:
    """``e^x``, or ``+inf`` where it overflows (for error bounds, which stay valid as ``+inf``)."""
    return math.exp(x) if x <= _LOG_MAX else math.inf


def _lattice_delta(lat: _Lattice, h: float, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lattice ``δ'(ε)`` (computed) and a certified bound on its absolute error, untilted, per ε."""
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore"):            # ε/h = inf (ε near 1e308) clips to the last index below
        i = np.floor(eps / h) + 1               # first index J with x_J = J h > ε
    i = np.where((i - 1) * h > eps, i - 1, i)
    i = np.where(i * h <= eps, i + 1, i)
    k = i - lat.start
    if lat.scale > _LOG_MAX:   # entries above e^709 are noise of a far tilt (true masses are <= 1)
        return np.zeros(eps.shape), np.full(eps.shape, np.inf)      # uninformative: certifies nothing
    alias = _exp_or_inf(lat.log_alias)
    below = k < 0
    kc = np.clip(k, 0, lat.n - 1).astype(np.int64)
    a, b = lat.a[kc], lat.b[kc]
    c = np.exp(np.minimum(eps - (lat.start + kc) * h, 0.0))
    val = np.maximum(a - c * b, 0.0)
    # cumsum and recursion: relative errors (n + 2) u each; then the roundings of a - c b
    slack = 4 * (lat.n + 8) * _U * (a + c * b)
    # the FFT term straight in the untilted scale: e^{log_e0 - scale} may overflow where e^scale underflows
    # (a far tilt), and inf * 0 is no bound
    with np.errstate(over="ignore"):   # an error bound beyond double range is +inf (still a bound)
        if lat.theta > 0:
            q = math.exp(-lat.theta * h)
            fft = np.exp(lat.log_e0 - lat.theta * h * kc) / (1.0 - q)
        else:
            # each entry's bound summed over the suffix, or (Cauchy-Schwarz, the weights of δ' in [0, 1])
            # √m ‖IDFT(ΔY)‖₂ + m (other errors) + the negative parts cut off, m = n - kc entries
            m = lat.n - kc
            fft = _exp_or_inf(lat.log_e0) * m
            if lat.neg is not None:
                fft = np.minimum(fft, (np.sqrt(m) * lat.two + m * lat.rest + lat.neg[kc]) * (1 + 8 * _U))
    scale = math.exp(lat.scale)
    with np.errstate(over="ignore"):
        val, err = val * scale, (slack * scale + fft) * (1 + 8 * _U) + alias
    out = k >= lat.n
    val, err = np.where(out, 0.0, val), np.where(out, alias, err)
    if lat.theta > 0:   # a tilted window says nothing below its start
        val, err = np.where(below, 0.0, val), np.where(below, np.inf, err)
    return val, err


# --------------------------------------------------------------------------------------------- bracket
class _Engine:
    """One lattice (and its tilts) with the coupling bound of its rounding: certified upper and lower δ of
    the composition of its grids' laws (``docs/pld.md`` §1-4)."""

    def __init__(self, grids: list[tuple[_Grid, int]], h: float, delta_floor: float,
                 tilt_fraction: float = TILT_FRACTION) -> None:
        self.step = h
        self._tilt_fraction = tilt_fraction
        self._grids = grids
        k_tot = sum(k for _, k in grids)
        r = 4 * max(g.rtol for g, _ in grids) + 16 * _U
        self._mass_up = math.exp(-k_tot * math.log1p(-r))     # 1 / (1 - r)^K
        self._mass_dn = math.exp(-k_tot * math.log1p(r))      # 1 / (1 + r)^K
        c = [math.exp(g.log_c) * (1 - 4 * _U) for g, _ in grids]
        self._bias = (sum(k * min(g.bias[0] / ci, g.bias[0]) for (g, k), ci in zip(grids, c, strict=True)),
                      sum(k * max(g.bias[1] / ci, g.bias[1]) for (g, k), ci in zip(grids, c, strict=True)))
        # Bernstein: P(Σ (D_i - E D_i) >= t) <= exp(-t² / (2 (V + M t / 3))), V = Σ Var D_i,
        # |D_i - E D_i| <= M
        var = sum(k * g.second / ci for (g, k), ci in zip(grids, c, strict=True)) * (1 + 1e-12)
        big = max(max(g.d_range[1] - g.bias[0] / ci, g.bias[1] / ci - g.d_range[0], 0.0)
                  for (g, _), ci in zip(grids, c, strict=True))
        self._clip = min(sum(k * math.exp(g.log_clip) / ci for (g, k), ci in zip(grids, c, strict=True))
                         * (1 + 1e-9), 1.0)
        log_fin = sum(k * g.log_c for g, k in grids)            # log P(every loss finite)
        p_inf = -math.expm1(log_fin)                             # P(some loss is +inf), exact when 0
        rho = 8 * (k_tot + len(grids)) * _U
        self._inf_lo, self._inf_hi = p_inf * (1 - rho), min(p_inf * (1 + rho), 1.0)
        self._fin_hi = 1.0 - self._inf_lo
        reach = max(abs(sum(k * g.lo for g, k in grids)), abs(sum(k * g.hi for g, k in grids))) * h
        tau_fp = 8 * _U * (reach + 1.0)                         # the grid points J h as floats
        if var > 0:
            ln = np.log(1.0 / _ETAS)
            t = big * ln / 3.0 + np.sqrt((big * ln / 3.0) ** 2 + 2.0 * var * ln)
            self._eta = _ETAS
        else:
            t, self._eta = np.zeros(1), np.zeros(1)
        # an upper lattice whose laws dominate only moved up (a loss error, _dominating_grid)
        shift = sum(k * g.shift for g, k in grids) * (1 + 4 * _U * len(grids))
        # laws on offset lattices (_moved): the composed loss is the lattice's plus their sum, O
        self._offset = math.fsum(k * g.offset for g, k in grids)
        slack = 4 * _U * (len(grids) + 2) * sum(k * abs(g.offset) for g, k in grids)
        self._tau_up = t - self._bias[0] + tau_fp + shift + self._offset + slack
        self._tau_dn = t + self._bias[1] + tau_fp - self._offset + slack
        self._log_target = math.log(ALIAS_FRACTION * delta_floor)
        # the untilted window (Chernoff bounds only); the base lattice on it is built when first needed
        self._frame = _window(grids, h, 0.0, None, self._log_target)[:2]
        self._lattices: list[_Lattice] = []
        self._coarse: tuple[_Lattice, float] | None = None
        self._answers: dict[tuple[float, bool], float] = {}
        self._guesses: dict[float, float] = {}     # coarse estimates of ε at small δ (_place)
        self._guess_width = 0.0

    @property
    def size(self) -> int:
        """Length of the default (untilted) lattice."""
        return self._base().n

    def _base(self) -> _Lattice:
        """The untilted lattice, built on first use (an ε at a small δ may need only a tilted one)."""
        if not self._lattices or self._lattices[0].theta > 0:
            self._lattices.insert(0, _build(self._grids, self.step, 0.0, None, self._log_target))
        return self._lattices[0]

    def _has_base(self) -> bool:
        return bool(self._lattices) and self._lattices[0].theta == 0.0

    def _estimate(self, target: float) -> float:
        """An estimate (not a bound) of ``ε(target)``: the computed δ of a coarse copy of the lattice law
        (every cell's mass split between the two nearest points of a grid ``B`` times coarser so that its
        mean is kept, ~2^15 points), by bisection; it only places a tilted lattice."""
        if self._coarse is None:
            size = max(1, math.ceil(self._frame[1] / 2 ** 15))
            grids = [(_coarsened(g, size), k) for g, k in self._grids]
            self._coarse = (_build(grids, self.step * size, 0.0, None, self._log_target), self.step * size)
        lat, hc = self._coarse
        goal = target - self._inf_hi
        if goal <= 0:
            return math.inf

        def above(e: float) -> bool:
            return float(_lattice_delta(lat, hc, np.array([e]))[0][0]) > goal

        lo, hi = (lat.start - 1) * hc, (lat.start + lat.n + 1) * hc
        if not above(lo) or above(hi):
            return math.inf
        # to one coarse cell: the coarse δ resolves no finer, and the tilt starts 8 cells lower anyway
        return bisect(above, lo, hi, rtol=hc / max(1.0, abs(lo), abs(hi)), iterations=100)[1]

    def _sides(self, eps: float, upper: bool) -> tuple[float, float, float]:
        """Certified upper (or lower) δ at one ε: the best Hoeffding split and lattice; also the ε' used
        and the FFT error there relative to the lattice δ'."""
        if not self._lattices:
            self._base()
        shifts = -self._tau_up if upper else self._tau_dn
        pts = eps + shifts
        best_val = np.full(pts.shape, math.inf if upper else -math.inf)
        best_rel = np.full(pts.shape, math.inf)
        for lat in self._lattices:
            # δ is non-increasing: below a tilted window's start the lower side may use its start
            at = np.maximum(pts, lat.start * self.step) if lat.theta > 0 and not upper else pts
            v, e = _lattice_delta(lat, self.step, at)
            if upper:
                val = (v + e) * self._mass_up + self._fin_hi * (self._eta + self._clip)
                better = val < best_val
            else:
                val = np.maximum(v - e, 0.0) * self._mass_dn - self._fin_hi * (self._eta + self._clip)
                better = val > best_val
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(v > 0, e / v, np.inf)
            best_val = np.where(better, val, best_val)
            best_rel = np.where(better, rel, best_rel)
        i = int(np.argmin(best_val) if upper else np.argmax(best_val))
        val = float(best_val[i])
        out = min(1.0, self._inf_hi + val) if upper else max(0.0, self._inf_lo + max(val, 0.0))
        return out, float(pts[i]), float(best_rel[i])

    def _tilt(self, low: float, high: float, delta: float) -> bool:
        """Add a lattice tilted to the saddle point of the ε range [low, high] (a deep tail), whose window
        starts below ``low`` by the largest rounding shift; False if none is useful or allowed."""
        h = self.step
        frame_start, frame_n = self._frame
        margin = float(max(np.max(self._tau_up), np.max(self._tau_dn))) + 4 * h
        if len(self._lattices) > MAX_TILTS:
            return False
        if not (low - margin) / h <= sum(k * (g.lo + g.log_x.size) for g, k in self._grids):
            return False    # beyond the largest composed loss (ε up to 1e308): no mass for a tilt to find
        theta = self._saddle(0.5 * (low + high))
        start = math.floor((low - margin) / h)
        if theta <= 0 or any(abs(lat.theta - theta) <= 0.05 * theta and lat.start <= start
                             for lat in self._lattices if lat.theta > 0):
            return False
        target = math.log(max(delta, 1e-300)) + math.log(ALIAS_FRACTION)
        if -target / (theta * h) > 4 * frame_n:    # a tilt this small needs a longer window than the base
            return False
        window = _window(self._grids, h, theta, start, target)
        if window[1] > 4 * frame_n:
            return False     # a heavy upper tail, tilted, needs a far longer window (a subsampled Gaussian's)
        self._lattices.append(_build(self._grids, h, theta, start, target, window))
        return True

    def _saddle(self, eps: float) -> float:
        """The tilt θ >= 0 whose tilted lattice law has mean ε (0 if the untilted mean is above ε)."""
        if _tilted_mean(self._grids, self.step, 0.0) >= eps:
            return 0.0
        lo, hi = 0.0, 1.0
        while _tilted_mean(self._grids, self.step, hi) < eps:
            lo, hi = hi, 2 * hi
            if hi > 1e4:
                return hi
        # to 1e-6 relative: θ only places a lattice (its FFT error at the answer is checked), and a
        # relative change ρ of θ moves the tilted mean by ~ρ θ σ², a small part of the spread σ
        return bisect(lambda t: _tilted_mean(self._grids, self.step, t) < eps, lo, hi, rtol=1e-6,
                      iterations=50)[1]

    def _refined(self, eps: float, upper: bool) -> float:
        self._base()
        val, point, rel = self._sides(eps, upper)
        if rel > self._tilt_fraction and self._tilt(point, point, val):
            val = self._sides(eps, upper)[0]
        return val

    def _epsilon(self, target: float, upper: bool) -> float:
        """The certified ε at ``target`` on one side; tilts a lattice at the answer when the FFT error
        there is not small against δ, then answers again (results are kept per target)."""
        key = (target, upper)
        if key in self._answers:
            return self._answers[key]
        if not self._lattices and target <= DIRECT_TILT_DELTA:
            self._place([target])
        guess = self._guesses.get(target)
        for _ in range(3):
            e = self._invert(target, upper, guess)
            if not self._has_base() and (not math.isfinite(e) or self._clamped(e, upper)):
                self._base()        # the tilt did not reach down to the answer: the untilted lattice
                e = self._invert(target, upper)
            guess = e
            if math.isfinite(e):
                rel, low, high = self._sides(e, upper)[2], e, e
            elif upper:     # the untilted lattice cannot certify this δ at all: tilt above the other side
                other = self._invert(target, False)
                if not math.isfinite(other):
                    break
                rel, low, high = math.inf, other, other + 2 * float(np.max(self._tau_up)) + 1.0
            else:
                break
            if rel <= self._tilt_fraction or not self._tilt(low, high, target):
                break
        self._answers[key] = e
        return e

    def _place(self, targets: Sequence[float]) -> None:
        """A first lattice for ε at small δ (the base lattice would mostly need such a tilt anyway, and is
        longer): tilted at the coarse estimates of the answers, starting a margin below the lowest; for
        several δ one lattice, θ at the saddle point of the middle of their ε range and the window sized
        for the smallest δ (docs/pld.md, "Which lattices are built"). An answer it does not certify well
        enough is tilted again (:meth:`_epsilon`)."""
        found = [(est, t) for t in targets if math.isfinite(est := self._estimate(t))]
        if found:
            lat, hc = self._coarse  # type: ignore[misc]
            slack = 8 * hc + 0.01 * _spread(self._grids, self.step)
            low, high = min(e for e, _ in found) - slack, max(e for e, _ in found) - slack
            self._tilt(low, high, min(t for _, t in found))
            self._guesses.update((t, est) for est, t in found)
            self._guess_width = slack

    def _prepare(self, targets: Sequence[float]) -> None:
        """Place one lattice for the ε at the small δ among ``targets`` (:meth:`_place`) before they are
        answered one at a time, unless lattices exist already."""
        small = sorted({t for t in targets if t <= DIRECT_TILT_DELTA and (t, True) not in self._answers
                        and (t, False) not in self._answers})
        if len(small) > 1 and not self._lattices:
            self._place(small)

    def _clamped(self, e: float, upper: bool) -> bool:
        """True when an upper ε sits at the start of every tilted window (the answer may lie below it)."""
        margin = float(max(np.max(self._tau_up), np.max(self._tau_dn))) + 8 * self.step
        return upper and all(e <= lat.start * self.step + margin for lat in self._lattices)

    def _invert(self, target: float, upper: bool, guess: float | None = None) -> float:
        """The bisection of the certified side for ``target`` to 1e-10 relative; from ``± _guess_width``
        around ``guess`` (a coarse estimate, or the answer of a lattice placed since) when the side crosses
        there, else from the whole window."""
        def holds(e: float) -> bool:      # upper: side(e) <= target ; lower: side(e) > target
            # (strictly: a lower δ equal to the target, e.g. 0 at δ = 0, says nothing about ε(δ) >= e)
            val = self._sides(e, upper)[0]
            return val <= target if upper else val > target

        def below(x: float) -> bool:      # true left of the answer, false right of it (either side)
            return holds(x) != upper

        if guess is not None and math.isfinite(guess):
            a, b = guess - self._guess_width, guess + self._guess_width
            if below(a) and not below(b):
                a, b = bisect(below, a, b, rtol=1e-10, iterations=200)
                return b if upper else a
        frame_start, frame_n = self._frame
        top = (frame_start + frame_n) * self.step + float(np.max(self._tau_dn)) + abs(self._offset) + 1.0
        bottom = min(frame_start * self.step, 0.0) - float(np.max(self._tau_up)) - abs(self._offset) - 1.0
        if upper:
            if not holds(top):
                return math.inf
            if holds(bottom):
                return -math.inf
            a, b = bottom, top              # holds(b), not holds(a)
        else:
            if not holds(bottom):
                return -math.inf
            if holds(top):
                return top
            a, b = bottom, top              # holds(a), not holds(b)
        a, b = bisect(below, a, b, rtol=1e-10, iterations=200)
        return b if upper else a


class LatticeBracket:
    """Certified bracket of ``δ(ε)`` and ``ε(δ)`` for a composition of loss laws (see :func:`compose`).

    ``delta(eps)`` and ``epsilon(delta)`` return ``(lower, upper)`` arrays: ``upper`` is a valid privacy
    guarantee (provably >= the truth), ``lower`` an attack bound (provably <= it). Each side comes from its
    own lattice (one-sided discretisation) or both from one (the coupling bound), see ``docs/pld.md``.
    """

    def __init__(self, up: _Engine, down: _Engine, one_sided: bool) -> None:
        self._up, self._down = up, down
        #: True when each side has its own one-sided lattice, False for the two-sided coupling bound.
        self.one_sided = one_sided

    @property
    def step(self) -> float:
        """Grid step of the upper side's lattice."""
        return self._up.step

    @property
    def lower_step(self) -> float:
        """Grid step of the lower side's lattice."""
        return self._down.step

    @property
    def size(self) -> int:
        """Length of the upper side's default (untilted) lattice."""
        return self._up.size

    @property
    def upper(self) -> BracketSide:
        """The guarantee side: ``delta(ε)`` and ``epsilon(δ)`` that are provably >= the truth."""
        return BracketSide(self, True)

    @property
    def lower(self) -> BracketSide:
        """The attack side: ``delta(ε)`` and ``epsilon(δ)`` that are provably <= the truth."""
        return BracketSide(self, False)

    def _refined(self, eps: float, upper: bool) -> float:
        return (self._up if upper else self._down)._refined(eps, upper)

    def _epsilon_side(self, target: float, upper: bool) -> float:
        return (self._up if upper else self._down)._epsilon(target, upper)

    def delta(self, epsilon: float | Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` bounds of ``δ(ε)``, arrays shaped like ``epsilon``."""
        eps = np.asarray(epsilon, dtype=float)
        if np.any(np.isnan(eps)):
            raise ParameterError("epsilon: must not be NaN")
        lo = np.array([self._refined(float(e), False) for e in eps.ravel()]).reshape(eps.shape)
        hi = np.array([self._refined(float(e), True) for e in eps.ravel()]).reshape(eps.shape)
        return lo, hi

    def epsilon(self, delta: float | Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` bounds of ``ε(δ) = inf{ε : δ(ε) <= δ}``, arrays shaped like ``delta``.

        ``upper`` is an ε whose certified upper δ is ``<= δ``; ``lower`` one whose certified lower δ is
        still ``>= δ`` (so the true ε(δ) is at least it); both found by bisection to 1e-10 relative.
        """
        d = np.asarray(delta, dtype=float)
        targets = [check_delta(float(v), "delta") for v in d.ravel()]
        for engine in {id(e): e for e in (self._down, self._up)}.values():
            engine._prepare(targets)
        lo, hi = np.empty(d.shape), np.empty(d.shape)
        for i, t in enumerate(targets):
            lo.flat[i], hi.flat[i] = self._epsilon_side(t, False), self._epsilon_side(t, True)
        return lo, hi


@dataclass(frozen=True)
class BracketSide:
    """One side of a :class:`LatticeBracket`, with the ``delta``/``epsilon`` interface of a region.

    Examples
    --------
    >>> import numpy as np
    >>> rr = LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
    >>> b = compose([(rr, 2)], step=1.0)
    >>> b.lower.delta(2.5), b.upper.delta(2.5) < 1e-12    # no loss exceeds 2: δ(2.5) = 0
    (0.0, True)
    """

    bracket: LatticeBracket
    is_upper: bool

    def delta(self, epsilon: float | Sequence[float] | np.ndarray) -> float | np.ndarray:
        """δ at each ε (a float for a scalar ε)."""
        eps = np.asarray(epsilon, dtype=float)
        if np.any(np.isnan(eps)):
            raise ParameterError("epsilon: must not be NaN")
        out = np.array([self.bracket._refined(float(e), self.is_upper) for e in eps.ravel()])
        return float(out[0]) if eps.ndim == 0 else out.reshape(eps.shape)

    @each_value
    def epsilon(self, delta: float) -> float:
        """The certified ε at ``delta`` on this side (see :meth:`LatticeBracket.epsilon`); an array of
        deltas gives an array of its shape."""
        return self.bracket._epsilon_side(check_delta(float(delta), "delta"), self.is_upper)


def _continuous_mass(law: LossLaw) -> float:
    """Mass of the continuous part (what gets rounded)."""
    if law.log_sf is None or law.log_cdf is None:
        return 0.0
    lo, hi = (float(v) for v in law.support)
    c = min(max(0.0, lo), hi)
    return float(np.exp(np.logaddexp(_at(law.log_sf, c), _at(law.log_cdf, c))))


#: Cells of the coarse grid on which a law's variance is estimated (to size the composed window).
_VARIANCE_CELLS = 4096


def _variance(law: LossLaw, clip: tuple[float, float]) -> float:
    """An estimate of the variance of the law (its continuous part clipped to ``clip``: cell masses on a grid
    of :data:`_VARIANCE_CELLS` cells at their midpoints, plus a cell's width squared over 12, and its finite
    atoms; the +inf atom is left out). Only the
    choice of the step uses it; the window itself is bounded by Chernoff bounds (:func:`_window`). The
    clip's width is no estimate: a subsampled mechanism's upper tail reaches ~100 times its spread."""
    bnd = np.linspace(clip[0], clip[1], _VARIANCE_CELLS + 1)
    log_m, _ = _cell_masses(law, bnd, False)
    x = np.concatenate([0.5 * (bnd[1:] + bnd[:-1]), np.asarray(law.losses, dtype=float).ravel()])
    log_w = np.concatenate([log_m, np.asarray(law.log_p, dtype=float).ravel()])
    w = np.exp(log_w - logsumexp(log_w))
    mean = float(np.sum(w * x))
    return float(np.sum(w * (x - mean) ** 2)) + float(bnd[1] - bnd[0]) ** 2 / 12.0


def _default_tolerance(k_round: float) -> float:
    """dp_accounting's PLD ε-width at value discretisation 1e-4 (about ``1e-4 / 2`` per unit of rounded,
    continuous, mass), but at least :data:`MIN_TOLERANCE`."""
    return max(5e-5 * k_round, MIN_TOLERANCE)


def _subdivision(k_round: float) -> int:
    """Sub-intervals per cell of the bias bracket (its width ``k h / sub`` against Bernstein's ``h √k``)."""
    return int(min(max(math.ceil(1.5 * math.sqrt(k_round)), 2), 64))


def _nice(x: float, up: bool) -> float:
    """``x`` rounded down (or up) to ``{1, 2, 5} x 10^n``: grids whose points hit decimal losses exactly."""
    e = math.floor(math.log10(x))
    levels = [m * 10.0 ** p for p in (e - 1, e, e + 1) for m in (1.0, 2.0, 5.0)]
    return max(v for v in levels if v <= x * (1 + 1e-12)) if not up else min(v for v in levels
                                                                              if v >= x * (1 - 1e-12))


def _moved(law: LossLaw, by: float) -> LossLaw:
    """A discrete law with every loss moved by ``by`` (its P-masses kept; the engine composes the P-law
    and adds the moves back, :class:`_Engine`), the float sums' rounding added to its loss error."""
    if by == 0:
        return law
    losses = np.asarray(law.losses, dtype=float) + by
    err = 2 * _U * float(np.max(np.abs(losses), initial=0.0))
    return LossLaw(losses, law.log_p, law.log_p_inf, rtol=law.rtol, loss_error=law.loss_error + err)


#: Atoms whose gaps are integer multiples of the smallest gap to this relative accuracy are aligned.
_ALIGN_RTOL = 1e-9


def _alignment(laws: Sequence[tuple[LossLaw, int]], h: float, free: bool) -> tuple[float, list[float]]:
    """The lower step and each law's lattice offset ``o``: the heaviest atom of each law lies on
    ``o + hZ``; if ``free`` and exactly one law has several atoms whose gaps are integer multiples of the
    smallest gap ``d >= h``, the step becomes ``d / ceil(d / h)`` (in ``[h/2, h]``) so that all of them do
    (a subsampled Laplace law's two atoms ``log(q e^{±r} + 1 - q)``; the symmetrised pair's three). Atoms
    off the lattice cost the coupling ``~h √(k log(1/η))`` in ε, on it nothing."""
    atoms = []
    for law, _ in laws:
        keep = np.isfinite(np.asarray(law.log_p, dtype=float))
        atoms.append((np.asarray(law.losses, dtype=float)[keep], np.asarray(law.log_p, dtype=float)[keep]))
    several = [i for i, (x, _) in enumerate(atoms) if np.unique(x).size >= 2]
    if free and len(several) == 1:
        x = np.unique(atoms[several[0]][0])
        gaps = x - x[0]
        d = float(np.min(np.diff(x)))
        ratio = gaps / d
        # (a gap below the step leaves it: the atoms are then within d of the offset lattice, and a finer
        # step would be paid by every other law of the composition)
        if d >= h and np.all(np.abs(ratio - np.rint(ratio)) <= _ALIGN_RTOL * np.maximum(ratio, 1.0)):
            h = d / math.ceil(d / h * (1 - 1e-12))
    offsets = []
    for x, lp in atoms:
        if not x.size:
            offsets.append(0.0)
            continue
        top = float(x[int(np.argmax(lp))])
        offsets.append(top - h * round(top / h))
    return h, offsets


def _one_sided_steps(laws: Sequence[tuple[LossLaw, int]], clips: list[tuple[float, float] | None],
                     k_round: float, tolerance: float | None, step: float | None,
                     log_clip: float) -> tuple[float, float, list[float], list[bool]]:
    """Steps of the upper and the lower lattice, each law's offset on the lower lattice
    (:func:`_alignment`), and which laws are narrow (a continuous law whose standard deviation is below
    :data:`NARROW_SPREAD` upper steps: a subsampled mechanism's).

    Both sides err by about ``c k h²`` (``c ≈ 0.15`` for the upper side's connect-the-dots pair, ``0.2``
    for the lower side's merged cells, whose coupling adds ``~OFFSET_CAP h² log(1/η) / 3``). The lower
    step spends 80% of ``tolerance`` (default: half of dp_accounting's PLD width at discretisation 1e-4,
    ``2.5e-5`` per unit of continuous mass); the upper step is :data:`UPPER_STEP` by default (closer to
    the truth than the PLD's pessimistic side at 1e-4), coarser only when the composed window would need
    more than :data:`MAX_CELLS` points.
    """
    if step is not None:
        h = check_positive(step, "step")
        thin = [c is not None and _variance(law, c) < (NARROW_SPREAD * h) ** 2
                for (law, _), c in zip(laws, clips, strict=True)]
        return h, h, _alignment(laws, h, False)[1], thin
    tol = 2.5e-5 * k_round if tolerance is None else check_positive(tolerance, "tolerance")
    h_dn = _nice(math.sqrt(0.8 * tol / (0.2 * k_round + 8.0 * OFFSET_CAP)), up=False)
    # Narrow or steep laws have merged-cell offsets far above OFFSET_CAP h² (_offsets): measure the
    # coupling's width at the step tried and refine the step (twice finer in h², about) until it fits in
    # half the tolerance (at most 8 rounds).
    refined = False
    for _ in range(8):
        width = 2.0 * sum(_lower_width(law, k, h_dn, c) for (law, k), c in zip(laws, clips, strict=True)
                          if c is not None)
        if width <= 0.5 * tol or h_dn <= UPPER_STEP:
            break
        refined = True
        h_dn = _nice(h_dn * max(0.2, min(0.7, math.sqrt(0.5 * tol / width))) * (1 - 1e-9), up=False)
    variances = [_variance(law, c) for (law, _), c in zip(laws, clips, strict=True) if c is not None]
    narrow = refined and min(variances) < (NARROW_SPREAD * h_dn) ** 2
    h_up = UPPER_STEP if tolerance is None else _nice(math.sqrt(0.2 * tol / (0.15 * k_round + 2.0)), up=False)
    # the composed window: about ±sqrt(2 log(1/alias)) standard deviations of the sum
    counts = [k for (_, k), c in zip(laws, clips, strict=True) if c is not None]
    var = sum(k * v for k, v in zip(counts, variances, strict=True))
    span = 2.0 * math.sqrt(2.0 * abs(math.log(ALIAS_FRACTION * DELTA_FLOOR))) * math.sqrt(var)
    if span / h_up > MAX_CELLS:
        h_up = _nice(span / MAX_CELLS, up=True)
    if span / h_up <= SMALL_CELLS or narrow:
        # a small lattice: the lower side on the upper step costs little; a narrow law (spread below
        # NARROW_SPREAD lower steps, merged cells far from their centres, a subsampled mechanism's; a
        # Gaussian with σ = 6 is not, at a step of 5e-4): merging its cells also loses more than the
        # coupling measures (measured: 6.1729 at h = 5e-4 against 6.1870 at 1e-4 for σ = 1, q = 0.01,
        # 10^4 rounds, δ = 1e-5), so the lower side takes the upper step too
        h_dn, offsets = _alignment(laws, h_up, True)
        return h_up, h_dn, offsets, _thin(clips, variances, h_up)
    h_dn = min(max(h_dn, h_up), 0.5)
    # atoms keep their losses (nearest rounding on their law's offset lattice, the coupling bound; a
    # continuous law's atoms too): refine the lower step until their offsets cost at most 30% of the
    # tolerance, ~2 (M L / 3 + √(2 V L)) with L = log(1e8)
    ln = math.log(1e8)
    while True:
        h_dn, offsets = _alignment(laws, h_dn, True)
        off = [(np.abs(x - o - np.rint((x - o) / h_dn) * h_dn), np.exp(np.asarray(law.log_p, float)), k)
               for (law, k), o in zip(laws, offsets, strict=True)
               if (x := np.asarray(law.losses, float)).size]
        if not off or h_dn <= h_up:
            break
        big = max(float(np.max(d)) for d, _, _ in off)
        var = sum(k * float(np.sum(p * d * d)) for d, p, k in off)
        if 2 * (big * ln / 3 + math.sqrt(2 * var * ln)) <= 0.3 * tol:
            break
        h_dn = max(_nice(h_dn * (1 - 1e-9), up=False), h_up)
    if tolerance is None:
        # the upper side errs by ~0.15 k h_up², the lower by ~0.2 k h_dn²: at h_up <= h_dn / UPPER_RATIO the
        # upper side's share of the width is below 3e-4, and a finer upper step only lengthens its window
        h_up = max(h_up, _nice(h_dn / UPPER_RATIO, up=False))
    return h_up, h_dn, offsets, _thin(clips, variances, h_up)


def _thin(clips: list[tuple[float, float] | None], variances: list[float], h: float) -> list[bool]:
    """Which laws are narrow at step ``h``: the continuous ones (a clip) whose variance is below
    ``(NARROW_SPREAD h)²`` (``variances`` lists those laws' variances in order)."""
    rest = iter(variances)
    return [c is not None and next(rest) < (NARROW_SPREAD * h) ** 2 for c in clips]


def compose(parts: Sequence[tuple[LossLaw, int]], *, tolerance: float | None = None,
            step: float | None = None, delta_floor: float = DELTA_FLOOR) -> LatticeBracket:
    """Certified bracket of the composition of loss laws (module docstring; the argument: ``docs/pld.md``).

    Parameters
    ----------
    parts : sequence of (LossLaw, int)
        Each law and how many times it is composed (counts >= 0).
    tolerance : float, optional
        Target width of the ε bracket at δ = 1e-5; it sets the grid step. Default: dp_accounting's PLD
        width at value discretisation 1e-4 (``5e-5`` per unit of continuous mass), at least
        :data:`MIN_TOLERANCE`.
    step : float, optional
        The grid step ``h`` by hand (overrides ``tolerance``).
    delta_floor : float
        Smallest δ the default lattice window is sized for; smaller δ still get certified answers, from
        tilted lattices.

    Returns
    -------
    LatticeBracket
        ``delta(eps)`` and ``epsilon(delta)`` give ``(lower, upper)`` arrays.

    Examples
    --------
    Randomised response with ε = 1 composed 3 times: its losses lie on the grid, so both sides agree.

    >>> import numpy as np
    >>> rr = LossLaw(np.array([1.0, -1.0]), np.log([np.e / (1 + np.e), 1 / (1 + np.e)]))
    >>> lo, hi = compose([(rr, 3)], step=0.5).delta([1.0])
    >>> p = np.e / (1 + np.e)
    >>> exact = 3 * p**2 * (1 - p) * (1 - np.exp(-0.0)) + p**3 * (1 - np.exp(-2.0))
    >>> bool(lo[0] <= exact <= hi[0]), bool(hi[0] - lo[0] < 1e-9)
    (True, True)
    """
    items = list(parts)
    if not items:
        raise ParameterError("parts=[]: at least one (LossLaw, count) pair is needed")
    laws: list[tuple[LossLaw, int]] = []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], LossLaw)):
            raise ParameterError(f"parts[{i}]={item!r}: must be a (LossLaw, count) pair")
        k = check_int(item[1], f"parts[{i}].count", 0)
        if k:
            laws.append((item[0], k))
    if not laws:
        raise ParameterError("parts: every count is 0; at least one mechanism is needed")
    delta_floor = check_delta(delta_floor, "delta_floor")
    if not 0 < delta_floor < 1:
        raise ParameterError(f"delta_floor={delta_floor!r}: must be in (0, 1)")
    k_round = sum(k * _continuous_mass(law) for law, k in laws) or float(sum(k for _, k in laws))
    sub = _subdivision(k_round)
    k_tot = sum(k for _, k in laws)
    log_clip = math.log(ALIAS_FRACTION * delta_floor / k_tot)
    if all(law.one_sided for law, _ in laws) and not all(law.is_discrete for law, _ in laws):
        clips = [None if law.is_discrete else (_quantile(law, log_clip, False),
                                               _quantile(law, log_clip, True)) for law, _ in laws]
        h_up, h_dn, offsets, narrow = _one_sided_steps(laws, clips, k_round, tolerance, step, log_clip)
        pairs = list(zip(laws, clips, strict=True))
        up = [(_discretise(law, h_up, log_clip, sub) if c is None
               else _dominating_grid(law, h_up, log_clip, c), k) for (law, k), c in pairs]
        down = []
        for ((law, k), c), o in zip(pairs, offsets, strict=True):
            grid = _discretise(_moved(law if c is None else _dominated_law(law, h_dn, log_clip, c, o), -o),
                               h_dn, log_clip, sub)
            grid.offset = o
            down.append((grid, k))
        for (g_up, _), (g_dn, _), thin in zip(up, down, narrow, strict=True):
            g_up.narrow = g_dn.narrow = thin
        return LatticeBracket(_Engine(up, h_up, delta_floor),
                              _Engine(down, h_dn, delta_floor, LOWER_TILT_FRACTION), True)
    if step is None:
        tol = _default_tolerance(k_round) if tolerance is None else check_positive(tolerance, "tolerance")
        # ε-width / h ≈ 2 (L/6 + √(2 V L)) + k / sub + 2, V = k (1 + 3/sub) / 12, L = log(1/η), η ≈ 1e-8
        ln = math.log(1e8)
        per_h = 2.0 * (ln / 6.0 + math.sqrt(k_round * (1 + 3 / sub) * ln / 6.0)) + k_round / sub + 2
        h = tol / (1.1 * per_h)
    else:
        h = check_positive(step, "step")
    grids = [(_discretise(law, h, log_clip, sub), k) for law, k in laws]
    engine = _Engine(grids, h, delta_floor)
    return LatticeBracket(engine, engine, False)
