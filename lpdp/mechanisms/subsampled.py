"""Subsampled mechanisms: a mechanism run on a random subsample of the data (DP-SGD's batches).

``subsampled(mechanism, rate)`` is the mechanism run on a Poisson subsample (each record kept
independently with probability ``rate``), under add/remove neighbours. If (P, Q) is a dominating pair of
the mechanism (P: the record present, Q: absent), the subsampled mechanism is dominated by

* removal: ``(q P + (1 - q) Q, Q)`` and
* addition: ``(Q, q P + (1 - q) Q)``

(Zhu, Dong and Wang, "Optimal accounting of differential privacy via characteristic function", AISTATS
2022, Section 5 and Appendix; the same pairs as dp_accounting's PLD for Poisson sampling). The two
directions are different pairs; a composition keeps one direction throughout, so the accountant composes
each direction and keeps the larger δ (:attr:`SubsampledMechanism.is_symmetric` is false).

The subsampled pair's privacy loss is a monotone function of the mechanism's own loss ``L``:
``L' = log(q e^L + 1 - q)``, and its law under ``qP + (1-q)Q`` is the mixture of the laws of ``L`` under P
and under Q pushed through that map. So

* a finite pair stays finite (:meth:`~SubsampledMechanism.region`): the accountant composes it exactly
  (a multinomial over its atoms, :mod:`lpdp.compose.multinomial`, when affordable);
* a privacy-loss law with its tails under P and Q (the Gaussian's) gives the subsampled law with the same
  four tails (:meth:`~SubsampledMechanism.loss_law`), composed by the certified engine
  (:func:`lpdp.pld.compose`) one-sidedly.

Fixed-size batches (``scheme="fixed_size"``: a batch of ``q n`` records drawn without replacement from
``n``, replace-one neighbours). If (P, Q) dominates the mechanism under replace-one neighbours (a pair that
is its own mirror), one step meets ``δ'(ε') = q δ(ε)`` with ``e^ε' = 1 + q (e^ε - 1)`` at every
``ε' >= 0`` (Balle, Barthe and Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018,
Theorem 10; the trade-off function ``C_q(f) = min{f_q, f_q^{-1}}**``, ``f_q = q f + (1 - q) Id``, of
Dong, Roth and Su, "Gaussian differential privacy", JRSS-B 2022, Theorem 4.2). That profile is the one of
the removal pair above at ``ε' >= 0``; its pair, symmetrised (:func:`_symmetrised`), dominates every
adaptive composition: the upper side. The lower side is the composition of the removal pair or of the
addition pair, the larger (:meth:`SubsampledMechanism.attained`): one fixed pair of datasets attains it
when the mechanism adds noise to a sum (the other records of the dataset equal to the replaced record's
neighbour value), as in DP-SGD. A composition's truth lies between (an adaptive analyst may switch the
direction at each step; Lebeda, Regehr, Kamath and Steinke, "Avoiding pitfalls for privacy accounting of
subsampled mechanisms under composition", 2024), so fixed-size results are brackets even for finite
mechanisms; one step is tight.

Shuffling is refused by name (``docs/subsampling.md``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

import numpy as np

from lpdp._numerics import log1mexp
from lpdp._validate import check_probability
from lpdp.errors import NotApplicableError, ParameterError
from lpdp.mechanisms.base import Inputs, Mechanism, check_level, round_up_ulps
from lpdp.mechanisms.finite import region_largest_loss, region_renyi
from lpdp.pld import DEFAULT_RTOL, LossLaw
from lpdp.region import PrivacyRegion

__all__ = ["SubsampledMechanism", "subsampled", "check_scheme", "SCHEMES", "RELATIONS"]

_U = float(np.finfo(float).eps) / 2.0
#: Sampling schemes (``poisson``: each record independently with probability ``rate``; ``fixed_size``:
#: a batch of ``rate * dataset size`` records drawn without replacement).
SCHEMES = ("poisson", "fixed_size")
#: Neighbouring relations (``add_remove``: one record added or removed; ``replace_one``: one record
#: replaced, the dataset size public).
RELATIONS = ("add_remove", "replace_one")
#: The relation each scheme is analysed under.
FITS = {"poisson": "add_remove", "fixed_size": "replace_one"}
_SHUFFLING = ("shuffling has no tight privacy analysis for general mechanisms (amplification by shuffling "
              "bounds are loose and apply to local randomizers only)")
#: Names refused with an explanation (no tight analysis in lpdp, or none known).
_REFUSED = {
    "shuffle": _SHUFFLING,
    "shuffling": _SHUFFLING,
    "without_replacement": "sampling without replacement is scheme='fixed_size'",
}


@functools.lru_cache(maxsize=256)
def _log_one_minus(q: float) -> tuple[float, float]:
    """``log(1 - q)`` as an unevaluated sum ``hi + lo`` of two floats (about 32 correct digits)."""
    if q == 1.0:
        return -math.inf, 0.0
    with localcontext() as ctx:
        ctx.prec = 40
        exact = (Decimal(1) - Decimal(q)).ln()
        hi = float(exact)
        return hi, float(exact - Decimal(hi))


@dataclass(frozen=True)
class _Map:
    """The loss map of Poisson sampling at rate q: ``g(x) = log(q e^x + 1 - q)`` and its inverse."""

    q: float

    @property
    def log_q(self) -> float:
        return math.log(self.q)

    @property
    def floor(self) -> float:
        """``g(-inf) = log(1 - q)`` (the smallest loss of the removal pair)."""
        return _log_one_minus(self.q)[0]

    def forward(self, x: np.ndarray) -> np.ndarray:
        """``g(x)``: ``log1p(q expm1(x))`` below 1 (relative accuracy), ``logaddexp`` above (no overflow)."""
        x = np.asarray(x, dtype=float)
        q = self.q
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            small = np.log1p(q * np.expm1(np.minimum(x, 1.0)))
            big = np.logaddexp(self.log_q + x, math.log1p(-q) if q < 1 else -np.inf)
        return np.where(x <= 1.0, small, big)

    def inverse(self, c: np.ndarray) -> np.ndarray:
        """``g^{-1}(c) = log((e^c - 1 + q) / q)`` (``-inf`` at and below ``log(1 - q)``), from
        ``t = c - log(1 - q)`` with ``log(1 - q)`` in double-double: ``log(1-q) + log(e^t - 1) - log q``.
        Absolute error at most ``8 u (|x| + |log q| + 2)``."""
        c = np.asarray(c, dtype=float)
        q = self.q
        if q == 1.0:
            return c.copy()
        hi, lo = _log_one_minus(q)
        t = (c - hi) - lo
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tp = np.where(t > 0, t, 1.0)
            log_expm1 = tp + log1mexp(-tp)
            x = log_expm1 + (hi - self.log_q)
        # g(0) = 0 exactly: the cut at loss 0 is exact (the symmetrised pair splits there)
        return np.where(c == 0, 0.0, np.where(t > 0, x, -np.inf))

    def cut_error(self, reach: float) -> float:
        """A bound on ``|g(x̂) - c|`` for ``x̂`` the computed :meth:`inverse` of ``c`` where
        ``|g^{-1}(c)| <= reach``: ``g`` is 1-Lipschitz, so the inverse's ``8u (|x| + |log q| + 2)`` carries
        over (rounded up)."""
        return 8 * _U * (reach + abs(self.log_q) + 2) * (1 + 1e-9)

    def forward_error(self, x: np.ndarray, fx: np.ndarray) -> np.ndarray:
        """A bound on the error of ``fx``, the computed :meth:`forward` at ``x``: below ``x = 1``,
        ``y = q expm1(x)`` to ``3u`` relative, then ``log1p``: ``3u |y| / (1 + y) + 2u |g|``, charged
        ``6u (|g| + |y| / (1 + y))``; above, ``logaddexp(log q + x, log(1 - q))`` moves by at most each
        argument's error (weights <= 1) plus two roundings of its result: charged twice
        ``u (|log q| + |x + log q| + |log(1 - q)| + 2 |g|)``."""
        x = np.asarray(x, dtype=float)
        y = self.q * np.expm1(np.minimum(x, 1.0))
        return np.where(x <= 1.0, 6 * _U * (np.abs(fx) + np.abs(y) / (1 + y)),
                        2 * _U * (abs(self.log_q) + np.abs(x + self.log_q) + abs(self.floor)
                                  + 2 * np.abs(fx)))


def _shifted(fn: Any, g: _Map) -> Any:
    def out(c: np.ndarray) -> np.ndarray:
        return np.asarray(fn(g.inverse(c)), dtype=float)

    return out


def _mixed(fn_p: Any, fn_q: Any, g: _Map) -> Any:
    """``c -> log(q T_P(x) + (1 - q) T_Q(x))`` at ``x = g^{-1}(c)``."""
    log_q, log_1q = g.log_q, (math.log1p(-g.q) if g.q < 1 else -math.inf)

    def out(c: np.ndarray) -> np.ndarray:
        x = g.inverse(c)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return np.logaddexp(log_q + np.asarray(fn_p(x), dtype=float),
                                log_1q + np.asarray(fn_q(x), dtype=float))

    return out


def _negated(fn: Any) -> Any:
    def out(c: np.ndarray) -> np.ndarray:
        return np.asarray(fn(-np.asarray(c, dtype=float)), dtype=float)

    return out


#: Grid points of the tail table :meth:`SubsampledMechanism.loss_quantile` brackets a level in.
TABLE_POINTS = 16385
#: Offsets (in bracket widths) around the interpolated quantile evaluated with the midpoint in each step
#: of :meth:`SubsampledMechanism.loss_quantile`.
_AROUND = (-1e-3, -1e-6, -1e-9, 1e-9, 1e-6, 1e-3)


def _symmetrised(removal: LossLaw, log_tie: float) -> LossLaw:
    """The symmetric pair (A, B) whose privacy profile at every ``ε >= 0`` is that of the removal pair
    (P', Q) with loss ``L'``: A is P' on ``L' > 0``, the mirror image of Q on ``L' > 0`` (at ``-L'``), and
    loss 0 for the rest (the removal pair's atoms at 0 and ``log_tie``); B is A mirrored. Its trade-off
    function is the symmetrisation ``min{f, f^{-1}}**`` of the removal pair's (Dong, Roth and Su 2022,
    Theorem 4.2): ``δ_{A||B}(ε) = δ_{P'||Q}(ε)`` at ``ε >= 0``, both orders alike.

    Accuracy: the tails beyond 0 are the removal law's; between, ``A(L > c) = S - Q(L' > -c)`` for
    ``c < 0`` and ``A(L <= c) = S - P'(L' > c)`` for ``c >= 0``, ``S = P'(L' > 0) + Q(L' > 0)`` (the
    continuous parts), are at least ``t0 = Q(L' > 0)``, and each term's absolute error is at most
    ``rtol S + rtol_log / e`` (``x |log x| <= 1/e``): their relative error is that over ``t0``.
    """
    pos, zero = removal.losses > 0, removal.losses == 0
    losses = np.concatenate([removal.losses[pos], removal.losses[zero], [0.0], -removal.losses[pos]])
    log_p = np.concatenate([removal.log_p[pos], removal.log_p[zero], [log_tie],
                            removal.log_p[pos] - removal.losses[pos]])
    keep = np.isfinite(log_p)
    losses, log_p = losses[keep], log_p[keep]
    if removal.log_sf is None:
        return LossLaw(losses, log_p, removal.log_p_inf, loss_error=removal.loss_error)
    assert removal.log_sf_q is not None
    sf, sf_q = removal.log_sf, removal.log_sf_q
    zero_c = np.zeros(1)
    s0, t0 = float(np.exp(sf(zero_c))[0]), float(np.exp(sf_q(zero_c))[0])
    total = s0 + t0

    def between(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(total - np.exp(x), 0.0))

    def log_sf(c: np.ndarray) -> np.ndarray:
        c = np.asarray(c, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.where(c >= 0, sf(np.maximum(c, 0.0)), between(sf_q(np.maximum(-c, 0.0))))

    def log_cdf(c: np.ndarray) -> np.ndarray:
        c = np.asarray(c, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.where(c < 0, sf_q(np.maximum(-c, 0.0)), between(sf(np.maximum(c, 0.0))))

    mid = (2 * removal.rtol * total + 3 * removal.rtol_log / math.e + 4 * _U * total) / t0 + 4 * _U
    top = removal.support[1]
    return LossLaw(losses, log_p, removal.log_p_inf, log_sf=log_sf, log_cdf=log_cdf,
                   log_sf_q=_negated(log_cdf), log_cdf_q=_negated(log_sf), support=(-top, top),
                   rtol=max(removal.rtol, mid), rtol_log=removal.rtol_log, loss_error=removal.loss_error)


def check_scheme(scheme: Any, relation: Any = None) -> tuple[str, str]:
    """``(scheme, relation)`` checked: a scheme of :data:`SCHEMES` (shuffling is refused with the reason)
    and the relation that fits it (the default).

    Examples
    --------
    >>> check_scheme("fixed_size")
    ('fixed_size', 'replace_one')
    """
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        why = _REFUSED.get(scheme) if isinstance(scheme, str) else None
        raise ParameterError(f"scheme={scheme!r}: " + (f"{why}; " if why else "")
                             + f"supported schemes: {', '.join(SCHEMES)}")
    fit = FITS[scheme]
    if relation is None:
        relation = fit
    if relation != fit:
        raise ParameterError(f"relation={relation!r}: does not fit scheme={scheme!r} (analysed under "
                             f"{fit} neighbours; " + ", ".join(f"{s}: {r}" for s, r in FITS.items()) + ")")
    return scheme, relation


class SubsampledMechanism(Mechanism):
    """A mechanism run on a random subsample of the data: Poisson (add/remove neighbours) or a fixed-size
    batch drawn without replacement (replace-one neighbours).

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on each subsample; its dominating pair (P, Q) has P for the record present and
        Q for it absent (Poisson), or P and Q for the batch holding the record and its replacement
        (fixed size; then the pair must be its own mirror, as replace-one neighbours are symmetric).
    rate : float
        Probability that each record is in the subsample, in (0, 1]: for fixed-size batches the batch
        size over the dataset size.
    scheme : {"poisson", "fixed_size"}
        The sampling scheme. Shuffling is refused by name.
    relation : {"add_remove", "replace_one"}, optional
        The neighbouring relation; the one that fits the scheme (the default) is the only one accepted.

    Notes
    -----
    Poisson: the removal pair is ``(qP + (1-q)Q, Q)``, the addition pair ``(Q, qP + (1-q)Q)``:
    :meth:`region` and :meth:`loss_law` give the removal pair, ``loss_law(reverse=True)`` the addition
    pair (module docstring). Fixed size: :meth:`region` and :meth:`loss_law` give the symmetrised pair
    whose privacy profile is ``δ'(ε') = q δ(ε)``, ``e^ε' = 1 + q (e^ε - 1)`` at every ``ε' >= 0``
    (Balle, Barthe and Gaboardi 2018, Theorem 10; the trade-off function ``C_q(f)`` of Dong, Roth and
    Su 2022, Theorem 4.2): a bound for every mechanism, and :meth:`attained` the fixed pair of datasets
    whose composition is the attack side (``docs/subsampling.md``).

    Examples
    --------
    >>> from lpdp.mechanisms import pure
    >>> m = SubsampledMechanism(pure(1.0), 0.01)
    >>> m.region().losses.round(6).tolist()           # log(1 + q(e - 1)), log(1 - q(1 - 1/e))
    [0.017037, -0.006341]
    >>> m.is_symmetric, m.relation, m.scheme
    (False, 'add_remove', 'poisson')
    >>> f = SubsampledMechanism(pure(1.0), 0.01, scheme="fixed_size")
    >>> f.region().losses.round(6).tolist(), f.is_symmetric, f.relation
    ([0.017037, 0.0, -0.017037], True, 'replace_one')
    """

    def __init__(self, mechanism: Mechanism, rate: float, scheme: str = "poisson",
                 relation: str | None = None) -> None:
        if not isinstance(mechanism, Mechanism):
            raise ParameterError(f"mechanism={mechanism!r}: must be an lpdp.mechanisms.Mechanism")
        q = check_probability(rate, "rate", open_left=True)
        scheme, relation = check_scheme(scheme, relation)
        if mechanism.relation is not None:
            raise ParameterError(f"mechanism={mechanism.label}: is already subsampled; subsample the "
                                 "mechanism once, at the product of the rates")
        if scheme == "fixed_size" and not mechanism.is_symmetric:
            raise ParameterError(f"mechanism={mechanism.label}: its dominating pair is not its own mirror; "
                                 "scheme='fixed_size' (replace-one neighbours, a symmetric relation) needs "
                                 "a mechanism whose pair is")
        self.mechanism = mechanism
        self.rate = q
        self._scheme = scheme
        self._relation = relation
        self._map = _Map(q)
        self._laws: dict[bool, LossLaw] = {}      # the filter face's loss laws, built once
        self._tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # their tail tables
        self._quantiles: dict[tuple[int, float], float] = {}           # and quantiles asked for
        self._round: tuple[Any, Any] | None = None     # one round's certified profiles, both directions

    # ------------------------------------------------------------------ identity
    def _key(self) -> tuple[Any, ...]:
        return (self.mechanism, self.rate, self._scheme, self._relation)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubsampledMechanism) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("subsampled", *self._key()))

    def __repr__(self) -> str:
        return f"subsampled({self.mechanism!r}, rate={self.rate!r}, scheme={self._scheme!r})"

    @property
    def relation(self) -> str:
        return self._relation

    @property
    def scheme(self) -> str:
        return self._scheme

    @property
    def label(self) -> str:
        on = "a Poisson subsample" if self._scheme == "poisson" else "a fixed-size batch"
        return f"{self.mechanism.label} on {on} (rate={self.rate:g})"

    # ------------------------------------------------------------------ accountant face
    @property
    def is_finite(self) -> bool:
        return self.mechanism.is_finite

    @property
    def is_symmetric(self) -> bool:
        """Poisson: false (the removal and addition pairs differ) unless ``rate == 1``; fixed size: true
        (the symmetrised pair)."""
        return self._scheme == "fixed_size" or (self.rate == 1.0 and self.mechanism.is_symmetric)

    def attained(self) -> Mechanism | None:
        """Fixed size: the Poisson-subsampled mechanism at the same rate, whose removal and addition pairs
        are attained by one fixed pair of neighbouring datasets (module docstring); Poisson: ``None``."""
        return None if self._scheme == "poisson" else SubsampledMechanism(self.mechanism, self.rate)

    def region(self) -> PrivacyRegion:
        """Poisson: the exact removal pair (below); fixed size: the symmetrised pair of the removal pair
        (:meth:`loss_law`), exact for a finite mechanism.

        The exact removal pair ``(qP + (1-q)Q, Q)`` of the mechanism's finite pair (P, Q).

        Each atom ``(L, p, q_L)`` keeps its Q-mass and gets loss ``g(L) = log(q e^L + 1 - q)``; the P-only
        outcomes (loss ``+inf``) keep that loss with P-mass ``q p_inf``, and the Q-only outcomes (loss
        ``-inf``) get the finite loss ``log(1 - q)``. Losses and log masses are computed in log space;
        their float error is bounded in the region's :class:`~lpdp._numerics.ErrorBound`, which every
        certified query and exact route widens by. At ``rate = 1`` the mechanism's own region.
        """
        if self.rate == 1.0:
            return self.mechanism.region()             # the pair itself (q = 1), with its own error bound
        if self._scheme == "fixed_size":
            removal = SubsampledMechanism(self.mechanism, self.rate).region()
            pos, zero = removal.losses > 0, removal.losses == 0
            tie = self._log_tie()
            losses = np.concatenate([removal.losses[pos], removal.losses[zero], [0.0], -removal.losses[pos]])
            log_p = np.concatenate([removal.log_p[pos], removal.log_p[zero], [tie], removal.log_q[pos]])
            log_q = np.concatenate([removal.log_q[pos], removal.log_p[zero], [tie], removal.log_p[pos]])
            # the tie mass is rounded up by at most 1e-13 + 8u(1 + |log tv|) in its log (_log_tie)
            error = removal.error.widened(mass=2e-13 + 16 * _U * (1 + abs(tie)) if tie > -math.inf else 0.0)
            return PrivacyRegion.from_log_masses(losses, log_p, log_q, log_p_inf=removal.log_p_inf,
                                                 log_q_ninf=removal.log_p_inf, check_total=False, error=error)
        inner = self.mechanism.region()
        g, q = self._map, self.rate
        loss = g.forward(inner.losses)
        log_q = np.array(inner.log_q, dtype=float)
        log_p = np.minimum(log_q + loss, 0.0)
        log_p_inf = inner.log_p_inf + math.log(q) if inner.log_p_inf > -math.inf else -math.inf
        log_q_ninf = inner.log_q_ninf
        if q < 1.0 and log_q_ninf > -math.inf:
            loss = np.append(loss, g.floor)
            log_p = np.append(log_p, math.log1p(-q) + log_q_ninf)
            log_q = np.append(log_q, log_q_ninf)
            log_q_ninf = -math.inf
        # g is 1-Lipschitz, so the mechanism's loss errors carry over; its evaluation errs by at most
        # _Map.forward_error, log(1 - q) alone by u |log(1 - q)|.
        # Each P-mass is its Q-mass times e^loss: its log errs by the loss error and the sum's rounding.
        x = np.asarray(inner.losses, dtype=float)
        per_atom = g.forward_error(x, loss[:x.size])
        eta = max(float(np.max(per_atom, initial=0.0)), 2 * _U * abs(g.floor))
        top = float(np.max(np.abs(x), initial=0.0))
        error = inner.error.absolute(top).widened(
            loss=eta, mass=eta + 2 * _U * (abs(g.log_q) + abs(g.floor) + 1), per_nat=2 * _U)
        return PrivacyRegion.from_log_masses(loss, log_p, log_q, log_p_inf=log_p_inf, log_q_ninf=log_q_ninf,
                                             check_total=False, error=error)

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """The loss law of the removal pair (``reverse=False``) or of the addition pair (``True``).

        Finite mechanisms: the exact atoms of :meth:`region` (or of its mirror). A mechanism whose loss law
        is Gaussian (``N(μ²/2, μ²)`` under P): the continuous law with tails
        ``P'(L' > c) = q P(L > x) + (1 - q) Q(L > x)``, ``x = g^{-1}(c)``, and likewise under Q and for
        the cdf; the addition pair's tails are those of the removal pair mirrored (``L -> -L``, P' and Q
        swapped).

        Accuracy (the ``rtol``/``rtol_log`` the engine certifies with): ``x`` is computed to
        ``Δx <= 8u (|x| + |log q| + 2)`` absolute (:meth:`_Map.inverse`); a Gaussian tail
        ``T = Φ̄(z)`` (or ``Φ(-z)``), ``z = ±(x ∓ μ²/2)/μ``, moves by at most ``(max(z, 0) + 1)/μ`` in log
        per unit of ``x`` (Mills' ratio), and ``z <= sqrt(2 |log T|)`` where ``z > 0``. With
        ``|x| <= μ(|z| + 1) + μ²/2`` the relative error is at most ``8u (4 t + 2 + (μ/2 + (|log q| + 2)/μ)
        (t + 1.5))``, ``t = |log T|``: linear in ``t``; doubled for the mixture's sum and the tails' own
        error.

        Fixed size: the symmetrised removal pair (:func:`_symmetrised`), the same in both orders.
        """
        if self.rate == 1.0:
            return self.mechanism.loss_law(reverse=reverse)
        if self._scheme == "fixed_size":
            return _symmetrised(SubsampledMechanism(self.mechanism, self.rate).loss_law(), self._log_tie())
        if self.mechanism.is_finite:
            r = self.region() if not reverse else self.region().mirrored()
            # the region's float error: its losses' as the law's loss error, its log masses' (at most
            # `bound` nats, a relative expm1(bound)) within the law's rtol
            top = float(np.max(np.abs(r.losses), initial=0.0))
            err = r.error.absolute(top)
            bound = float(np.max(np.asarray(err.log_mass(np.abs(r.log_p))), initial=0.0))
            return LossLaw(np.array(r.losses), np.array(r.log_p), r.log_p_inf, loss_error=err.loss,
                           rtol=max(DEFAULT_RTOL, math.expm1(bound) * (1 + 1e-9)))
        family = self.mechanism.loss_family(*self._pair())
        if family is None or family[0] not in ("gaussian", "laplace"):
            raise NotApplicableError(f"{self.label}: Poisson subsampling is composed exactly for finite "
                                     "mechanisms and through the certified engine for Gaussian and Laplace "
                                     f"ones; {self.mechanism.label} is none of them")
        inner = self.mechanism.loss_law()
        assert inner.log_sf_q is not None and inner.log_cdf_q is not None and inner.log_cdf is not None
        g = self._map
        sf = _mixed(inner.log_sf, inner.log_sf_q, g)
        cdf = _mixed(inner.log_cdf, inner.log_cdf_q, g)
        sf_q, cdf_q = _shifted(inner.log_sf_q, g), _shifted(inner.log_cdf_q, g)
        if family[0] == "gaussian":
            mu = float(family[1])
            c = mu / 2 + (abs(g.log_q) + 2) / mu
            rtol_log = 2 * 8 * _U * (4 + c) + inner.rtol_log
            rtol = 2 * 8 * _U * (2 + 1.5 * c) + inner.rtol + 16 * _U
            atoms, log_p, log_q = np.zeros(0), np.zeros(0), np.zeros(0)
            support, loss_error = (g.floor, math.inf), 0.0
        else:
            atoms, log_p, log_q, support, rtol, rtol_log, loss_error = self._laplace_parts(
                inner, float(family[1]))
        if not reverse:
            return LossLaw(atoms, log_p, log_sf=sf, log_cdf=cdf, log_sf_q=sf_q, log_cdf_q=cdf_q,
                           support=support, rtol=rtol, rtol_log=rtol_log, loss_error=loss_error)
        # addition pair (Q, P'): its loss is -L' with L' the removal loss; under Q, P(-L' > c) = Q(L' < -c)
        return LossLaw(-atoms, log_q, log_sf=_negated(cdf_q), log_cdf=_negated(sf_q), log_sf_q=_negated(cdf),
                       log_cdf_q=_negated(sf), support=(-support[1], -support[0]), rtol=rtol,
                       rtol_log=rtol_log, loss_error=loss_error)

    def _laplace_parts(self, inner: LossLaw, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                 tuple[float, float], float, float, float]:
        """The removal pair of a Laplace loss law (atoms ``±r``, a continuous part between, both tails under
        P and Q): atoms ``g(±r)`` with P'-masses ``q p + (1 - q) p e^{-a}`` and Q-masses ``p e^{-a}``
        (``p`` the atom's P-mass), the support ``[g(-r), g(r)]``, and the error model.

        Accuracy. The float positions ``g(±r)`` and the cuts ``g(x̂)`` of the continuous part (``x̂`` the
        computed ``g^{-1}(c)``) are off by a few ulps; near an atom or an end of the support no relative
        mass error carries that (the tail there vanishes), so it is the law's ``loss_error``: the largest
        of :meth:`_Map.cut_error` at ``|x| <= r`` and :meth:`_Map.forward_error` at the atoms. The masses:
        ``q T_P + (1 - q) T_Q`` at one cut, each tail within ``rtol + rtol_log |log T|`` of the truth, and
        ``e^{-r} <= T_P / T_Q <= e^r`` (the Laplace loss is at most ``r`` in size), so ``|log T| <=
        |log(mix)| + r``: ``rtol + r rtol_log`` plus the weights' and the sum's roundings, which also
        cover the atoms' masses."""
        g = self._map
        x = np.asarray(inner.losses, dtype=float)
        fx = g.forward(x)
        lp = np.asarray(inner.log_p, dtype=float)
        log_1q = math.log1p(-g.q)
        log_q = lp - x                                   # the mechanism's Q-mass of each atom
        log_p = np.logaddexp(g.log_q + lp, log_1q + log_q)
        loss_error = max(g.cut_error(r), float(np.max(g.forward_error(x, fx), initial=0.0)))
        rounding = 8 * _U * (abs(g.log_q) + abs(log_1q) + float(np.max(np.abs(lp) + np.abs(x), initial=0.0))
                             + 4)
        rtol = inner.rtol + inner.rtol_log * r + rounding
        lo, hi = float(np.min(fx)) - 2 * loss_error, float(np.max(fx)) + 2 * loss_error
        return fx, log_p, log_q, (lo, hi), rtol, inner.rtol_log, loss_error

    def _log_tie(self) -> float:
        """``log((1 - q) TV)``, TV the mechanism's total variation ``δ(0)``, rounded up: the mass the
        symmetrised fixed-size pair puts at loss 0 beyond the removal pair's own atoms there."""
        if self.rate == 1.0:
            return -math.inf
        if self.mechanism.is_finite:
            tv = float(self.mechanism.region().delta(0.0))          # certified upper
        else:
            family = self.mechanism.loss_family(*self._pair())
            if family is None or family[0] not in ("gaussian", "laplace"):
                raise NotApplicableError(f"{self.label}: fixed-size batches are composed for finite, "
                                         f"Gaussian and Laplace mechanisms; {self.mechanism.label} is none "
                                         "of them")
            x = float(family[1])
            # Gaussian: Φ(μ/2) - Φ(-μ/2) = erf(μ / (2√2)); Laplace: 1 - e^{-r/2} (libm: a few ulps)
            tv = math.erf(x / (2 * math.sqrt(2))) if family[0] == "gaussian" \
                else -math.expm1(-x / 2)
            tv *= 1 + 1e-13
        if tv <= 0:
            return -math.inf
        return math.log(min(tv, 1.0)) + math.log1p(-self.rate) + 8 * _U * (1 + abs(math.log(tv)))

    # ------------------------------------------------------------------ mechanism level (filter baselines)
    def _round_sides(self) -> tuple[Any, Any]:
        """One round's profiles, removal and addition pair, each certified from above: a finite mechanism's
        exact regions (:meth:`region` and its mirror), else the loss laws' own one-round profile
        (:meth:`lpdp.pld.LossLaw.round_delta`: the tails at ε, no lattice)."""
        if self._round is None:
            self._filter_pair()
            if self.mechanism.is_finite:
                r = self.region()
                self._round = (r, r.mirrored())
            else:
                self._round = (_LawProfile(self.loss_law()), _LawProfile(self.loss_law(reverse=True)))
        return self._round

    def round_delta(self, epsilon: float, inputs: Inputs | None = None) -> float:
        """``δ(ε)`` of one round, the larger of the removal and the addition pair's, certified from above
        (exact for a finite mechanism; from the loss law's tails otherwise). Poisson only."""
        return max(float(side.delta(epsilon)) for side in self._round_sides())

    def round_epsilon(self, delta: float, inputs: Inputs | None = None) -> float:
        """The smallest ``ε >= 0`` with :meth:`round_delta` ``<= δ``, certified from above."""
        return max(0.0, *(float(side.epsilon(delta)) for side in self._round_sides()))

    def _largest_loss(self) -> float:
        """The largest ``|L|`` of either pair, rounded up by its loss error (``inf`` when an outcome is
        impossible under one of the pair): a finite mechanism's region, or a subsampled Laplace law's
        atoms (its losses lie between them)."""
        if self.mechanism.is_finite:
            return region_largest_loss(self.region())
        law = self.loss_law()
        if law.log_sf is not None and not law.losses.size:     # a Gaussian's: unbounded
            return math.inf
        return round_up_ulps(float(np.max(np.abs(law.losses), initial=0.0)) + law.loss_error)

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``D_α`` of one round, the larger of the removal and the addition pair's, rounded up.

        * Finite mechanism: exact, ``log Σ p_j e^{(α-1) L_j} / (α-1)`` over each pair's atoms (``inf`` with an
          outcome the neighbour cannot produce), widened by the region's float error.
        * Gaussian (DP-SGD): ``log A_α / (α-1)``, ``A_α = Σ_{k<=α} C(α,k) (1-q)^{α-k} q^k e^{(k²-k) μ²/2}`` at
          integer α (Mironov, Talwar and Zhang, "Rényi differential privacy of the sampled Gaussian
          mechanism", 2019, Section 3.3: exact for the removal pair, and ``A_α >= B_α``, the addition
          pair's); a fractional α is charged at ``ceil(α)`` (``D_α`` is non-decreasing in α; van Erven and
          Harremoës 2014, Theorem 3).
        * Laplace: the subsampled pair is ε'-DP with ε' its largest ``|loss|``, so it is a post-processing
          of randomized response with ε' (Kairouz, Oh and Viswanath 2015, Theorem 2.1), whose ``D_α``
          bounds it by the data-processing inequality (van Erven and Harremoës 2014, Theorem 9):
          ``log(p e^{(α-1) ε'} + (1 - p) e^{-(α-1) ε'}) / (α-1)``, ``p = e^ε' / (1 + e^ε')``.

        Examples
        --------
        >>> from lpdp.mechanisms import GaussianMechanism
        >>> m = SubsampledMechanism(GaussianMechanism(1.0), 0.01)
        >>> round(m.renyi(2.0), 8)         # log(1 + q² (e - 1))
        0.00017181
        """
        a = float(alpha)
        self._filter_pair()
        if self.mechanism.is_finite:
            return max(region_renyi(r, a) for r in self._round_sides())
        family = self.mechanism.loss_family(*self._pair())
        if family is not None and family[0] == "gaussian":
            return _sampled_gaussian_renyi(self.rate, float(family[1]), math.ceil(a))
        return _rr_renyi(self._largest_loss(), a)

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``ρ`` of one round (Bun and Steinke 2016), rounded up.

        * Bounded losses (a finite mechanism without impossible outcomes; Laplace): ``ε'²/2`` with ε' the
          largest ``|loss|`` (pure ε'-DP, their Proposition 3.3): amplified by the sampling.
        * Gaussian: the mechanism's own ``μ²/2``, and no smaller ρ exists: ``ρ`` must bound ``D_α / α`` at
          every α, and the subsampled Gaussian's ``D_α / α`` tends to ``μ²/2`` as α grows (the term
          ``k = α`` of ``A_α`` above dominates); subsampling does not amplify zCDP (Bun, Dwork, Rothblum and
          Steinke 2018 introduce truncated CDP for that). Still a valid ρ: ``D_α`` of a mixture is at most
          the mechanism's (joint convexity of ``e^{(α-1) D_α}``).
        """
        self._filter_pair()
        family = None if self.mechanism.is_finite else self.mechanism.loss_family(*self._pair())
        if family is not None and family[0] == "gaussian":
            return self.mechanism.zcdp_rho()
        eps = self._largest_loss()
        if not math.isfinite(eps):
            raise NotApplicableError(f"{self.label} is not zCDP (an outcome is impossible under a neighbour)")
        return math.nextafter(eps * eps / 2.0, math.inf)

    def pair_mechanism(self, value: Any, other: Any) -> Mechanism | None:
        """Itself for its pair in either order (the accountant composes the removal and the addition pair
        and keeps the larger), ``None`` for other inputs (fixed-size batches: ``None``)."""
        if self._scheme != "poisson":
            return None
        a, b = self._pair()
        return self if (value, other) in ((a, b), (b, a)) else None

    # ------------------------------------------------------------------ filter face
    def _filter_pair(self) -> tuple[Any, Any]:
        if self._scheme != "poisson":
            raise NotApplicableError(f"{self.label}: a privacy filter needs the output law of each input; "
                                     "with fixed-size batches it depends on the other records in the batch "
                                     "(use scheme='poisson')")
        return self._pair()

    def _pair(self) -> tuple[Any, Any]:
        try:
            return tuple(self.mechanism.pair)        # a declared face (Mechanism.pair)
        except NotApplicableError:
            raise NotApplicableError(f"{self.mechanism.label}: has no neighbouring pair to subsample") \
                from None

    @property
    def null(self) -> Any:
        """The input of the mechanism when the record is absent (the second input of its pair)."""
        return self._filter_pair()[1]

    def default_pairs(self) -> tuple[tuple[Any, Any], ...]:
        """The record present and absent, ``((present, absent),)``: filters take both orders of each pair
        (removal and addition)."""
        return (self._filter_pair(),)

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """With probability ``rate`` the mechanism's output on ``value``, else on :attr:`null`."""
        null = self.null
        if size is None:
            return self.mechanism.sample(value if rng.random() < self.rate else null, rng)
        keep = rng.random(size) < self.rate
        a = np.asarray(self.mechanism.sample(value, rng, size=size))
        b = np.asarray(self.mechanism.sample(null, rng, size=size))
        return np.where(keep, a, b)

    def log_density(self, y: Any, value: Any) -> Any:
        null = self.null
        base = np.asarray(self.mechanism.log_density(y, null), dtype=float)
        if value == null:
            return base if np.ndim(base) else float(base)
        own = np.asarray(self.mechanism.log_density(y, value), dtype=float)
        with np.errstate(divide="ignore"):
            out = np.logaddexp(math.log(self.rate) + own,
                               (math.log1p(-self.rate) if self.rate < 1 else -np.inf) + base)
        return out if np.ndim(out) else float(out)

    def _law_of(self, value: Any, other: Any) -> LossLaw:
        a, b = self._filter_pair()
        for reverse, pair in ((False, (a, b)), (True, (b, a))):
            if (value, other) == pair:
                if reverse not in self._laws:
                    self._laws[reverse] = self.loss_law(reverse=reverse)
                return self._laws[reverse]
        raise NotApplicableError(f"{self.label}: the loss law is known for the pairs {(a, b)!r} and "
                                 f"{(b, a)!r} only (got {(value, other)!r})")

    def _tails(self, law: LossLaw, c: np.ndarray) -> np.ndarray:
        """``P(L > c)`` at each ``c`` (vectorised): the ``+inf`` atom, the atoms above ``c`` (suffix sums
        of the sorted atoms) and the continuous tail, capped at 1."""
        c = np.asarray(c, dtype=float)
        order = np.argsort(law.losses)
        atoms = law.losses[order]
        above = np.append(np.cumsum(np.exp(law.log_p[order])[::-1])[::-1], 0.0)
        total = math.exp(law.log_p_inf) + above[np.searchsorted(atoms, c, side="right")]
        if law.log_sf is not None:
            total = total + np.exp(law.log_sf(c))
        return np.minimum(total, 1.0)

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        """``P(L > c)`` from the loss law of the pair (removal or addition); with a loss error η (Laplace:
        :meth:`loss_law`) the tail at ``c - η``, at least the true one."""
        law = self._law_of(value, other)
        return float(self._tails(law, np.array([float(c) - law.loss_error]))[0])

    def _table(self, law: LossLaw) -> tuple[np.ndarray, np.ndarray]:
        """The tail on a grid of :data:`TABLE_POINTS` losses from below the law's support to where the
        tail is below 1e-300 (cached per law): the first bracket of :meth:`loss_quantile`."""
        key = id(law)
        if key not in self._tables:
            lo, hi = law.support
            atoms = law.losses.tolist()
            lo = min([lo, *atoms]) if math.isfinite(lo) else min([-1.0, *atoms])
            hi = max([hi, *atoms]) if math.isfinite(hi) else max([1.0, *atoms])
            lo = lo - 1e-9 * (1 + abs(lo))
            while hi < 1e6 and self._tails(law, np.array([hi]))[0] > 1e-300:
                hi = hi + 2 * (1 + abs(hi))
            cs = np.linspace(lo, hi, TABLE_POINTS)
            self._tables[key] = (cs, self._tails(law, cs))
        return self._tables[key]

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        """``inf{c : P(L > c) <= a}``: for a discrete law the atom itself; else to 1e-12 relative, rounded
        up (and by the law's loss error), from the bracket of a cached tail table (:meth:`_table`) narrowed
        by a few vectorised evaluations, each at the midpoint and around the log-linear interpolate of the
        tail (every step keeps ``P(L > lo) > a >= P(L > hi)``, as bisection does, and at least halves the
        bracket)."""
        a = check_level(a)
        if a >= 1.0:
            return -math.inf
        law = self._law_of(value, other)
        if math.exp(law.log_p_inf) > a:
            return math.inf
        key = (id(law), a)
        if key not in self._quantiles:
            if len(self._quantiles) > 100_000:
                self._quantiles.clear()
            found = self._quantile(law, a)
            if law.loss_error and math.isfinite(found):
                # the computed tail at c is the true one at a cut within η of c: the true quantile is at
                # most η above the computed one
                found = math.nextafter(found + law.loss_error * (1 + 4 * _U), math.inf)
            self._quantiles[key] = found
        return self._quantiles[key]

    def _quantile(self, law: LossLaw, a: float) -> float:
        if law.log_sf is None:                     # a step function: its quantile is an atom
            atoms = np.sort(law.losses)
            at = self._tails(law, atoms) <= a
            return float(atoms[int(np.argmax(at))]) if at.any() else math.inf
        cs, tails = self._table(law)
        if not tails[0] > a:                       # every loss of the table is above the quantile
            lo = float(cs[0])
            while self._tails(law, np.array([lo]))[0] <= a:
                lo = lo - 2 * (1 + abs(lo))
                if lo < -1e6:
                    return -math.inf
            lo, hi = lo, float(cs[0])
            t_lo, t_hi = float(self._tails(law, np.array([lo]))[0]), float(tails[0])
        elif tails[-1] > a:
            return math.inf
        else:
            k = int(np.argmax(tails <= a))         # the first grid point at or below a
            lo, hi, t_lo, t_hi = float(cs[k - 1]), float(cs[k]), float(tails[k - 1]), float(tails[k])
        while hi - lo > 1e-12 * max(1.0, abs(0.5 * (lo + hi))):
            w = hi - lo
            guess = 0.5 * (lo + hi)
            if t_hi > 0 and a > 0:
                f = (math.log(a) - math.log(t_lo)) / (math.log(t_hi) - math.log(t_lo))
                guess = lo + min(max(f, 0.0), 1.0) * w
            points = np.array([0.5 * (lo + hi), *(guess + w * np.array(_AROUND))])
            points = np.unique(points[(points > lo) & (points < hi)])
            if not points.size:                    # lo and hi are adjacent floats
                break
            t = self._tails(law, points)
            at = t <= a
            k = int(np.argmax(at)) if at.any() else points.size
            if k > 0:
                lo, t_lo = float(points[k - 1]), float(t[k - 1])
            if k < points.size:
                hi, t_hi = float(points[k]), float(t[k])
        return hi

    def loss_atoms(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray] | None:
        law = self._law_of(value, other)
        if law.log_sf is not None:
            return None
        order = np.argsort(law.losses)
        return law.losses[order], np.exp(law.log_p[order])

    # ------------------------------------------------------------------ data face
    def to_dict(self) -> dict[str, Any]:
        out = {"kind": "subsampled", "mechanism": self.mechanism.to_dict(), "rate": self.rate,
               "scheme": self._scheme}
        if self._relation is not None:
            out["relation"] = self._relation
        return out


@dataclass(frozen=True)
class _LawProfile:
    """A loss law's one-round profile with the ``delta``/``epsilon`` interface of a region."""

    law: LossLaw

    def delta(self, epsilon: float) -> float:
        return self.law.round_delta(epsilon)

    def epsilon(self, delta: float) -> float:
        return self.law.round_epsilon(delta)


def _sampled_gaussian_renyi(q: float, mu: float, alpha: int) -> float:
    """``log A_α / (α-1)`` at an integer α >= 2 (:meth:`SubsampledMechanism.renyi`), summed in log space;
    each term ``log C(α,k) + (α-k) log(1-q) + k log q + (k² - k) μ²/2`` is within ``8u`` of its size plus
    a few ulps (``lgamma``, ``log1p``), and the sum's log within ``(α + 2) u`` more: both added."""
    k = np.arange(alpha + 1, dtype=float)
    log_c = np.array([math.lgamma(alpha + 1) - math.lgamma(j + 1) - math.lgamma(alpha - j + 1)
                      for j in range(alpha + 1)])
    log_1q = math.log1p(-q) if q < 1 else -math.inf
    with np.errstate(invalid="ignore"):
        terms = log_c + np.where(k < alpha, (alpha - k) * log_1q, 0.0) + k * math.log(q) \
            + (k * k - k) * (mu * mu / 2)
    terms = terms[np.isfinite(terms)]
    total = float(np.logaddexp.reduce(terms))
    slack = 8 * _U * (float(np.max(np.abs(terms))) + alpha + 2) + 8 * _U * math.lgamma(alpha + 1)
    return max(round_up_ulps((total + slack) / (alpha - 1)), 0.0)


def _rr_renyi(eps: float, alpha: float) -> float:
    """``D_α`` of randomized response with parameter ε (either order), rounded up: an upper bound for every
    ε-DP pair (:meth:`SubsampledMechanism.renyi`)."""
    if not math.isfinite(eps):
        return math.inf
    log_p = -math.log1p(math.exp(-eps))           # log(e^ε / (1 + e^ε))
    log_1p = log_p - eps
    b = (alpha - 1) * eps
    d = float(np.logaddexp(log_p + b, log_1p - b)) / (alpha - 1)
    return max(round_up_ulps(d + 8 * _U * (abs(b) + abs(log_p) + abs(log_1p) + 2) / (alpha - 1)), 0.0)


def subsampled(mechanism: Mechanism, rate: float, scheme: str = "poisson",
               relation: str | None = None) -> SubsampledMechanism:
    """``mechanism`` run on a Poisson subsample at ``rate`` (add/remove neighbours): see
    :class:`SubsampledMechanism`.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> g = Accountant().compose(subsampled(pure(1.0), 0.01), 1000).guarantee()
    >>> g.route, round(float(g.epsilon(1e-6)[1]), 5)
    ('multinomial', 1.46014)
    """
    return SubsampledMechanism(mechanism, rate, scheme, relation)
