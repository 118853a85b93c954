"""Interoperability with Google's dp_accounting (the optional extra ``lpdp[interop]``).

* :func:`from_dp_event`: an :class:`~lpdp.Accountant` for a ``DpEvent`` built from
  ``GaussianDpEvent``, ``LaplaceDpEvent``, ``DiscreteLaplaceDpEvent``, ``RandomizedResponseDpEvent``,
  ``MixtureOfGaussiansDpEvent`` (of sensitivities 0 and one other value), ``EpsilonDeltaDpEvent`` (where
  the installed dp_accounting has it), ``PoissonSampledDpEvent`` and ``SampledWithoutReplacementDpEvent``
  (of any one of those), ``SelfComposedDpEvent``, ``ComposedDpEvent`` and ``NoOpDpEvent``; so a
  dp_accounting user gets exact or certified answers; any other event is refused by name;
* :func:`to_pld`: a dp_accounting ``PrivacyLossDistribution`` of a region or a guarantee (pessimistic:
  its δ(ε) is never below lpdp's upper side), to hand back to a dp_accounting pipeline;
* :func:`from_pld`: the :class:`~lpdp.PrivacyRegion` of a PLD's pair (its δ(ε) equals the PLD's).

dp_accounting's ``from_two_probability_mass_functions`` takes *log* masses, lower (Q) then upper (P);
:func:`_pld_from_log_masses` is the one place that calls it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lpdp import _special as special
from lpdp._numerics import UNIT_ROUNDOFF
from lpdp._validate import check_int, check_positive, check_probability
from lpdp.accountant import Accountant, Guarantee
from lpdp.errors import LpdpError, ParameterError
from lpdp.mechanisms import (
    BracketedMechanism,
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    randomized_response,
    subsampled,
)
from lpdp.region import PrivacyRegion
from lpdp.sides import Larger
from lpdp.tradeoff import TradeoffFunction

__all__ = ["from_dp_event", "to_pld", "from_pld"]

#: The dp_accounting events :func:`from_dp_event` understands (``EpsilonDeltaDpEvent`` where the installed
#: dp_accounting defines it).
SUPPORTED_EVENTS = ("GaussianDpEvent", "LaplaceDpEvent", "DiscreteLaplaceDpEvent",
                    "RandomizedResponseDpEvent", "MixtureOfGaussiansDpEvent", "EpsilonDeltaDpEvent",
                    "PoissonSampledDpEvent",
                    "SampledWithoutReplacementDpEvent", "SelfComposedDpEvent", "ComposedDpEvent",
                    "NoOpDpEvent")


def _dp_accounting() -> Any:
    try:
        import dp_accounting
    except ImportError:   # pragma: no cover - the extra is installed in the test environment
        raise LpdpError("dp_accounting is not installed: pip install 'lpdp[interop]'") from None
    return dp_accounting


def from_dp_event(event: Any) -> Accountant:
    """An accountant holding the mechanisms of a dp_accounting ``DpEvent``.

    ``GaussianDpEvent(m)`` is a Gaussian mechanism with σ = m and sensitivity 1, ``LaplaceDpEvent(m)`` a
    Laplace mechanism with scale m, ``RandomizedResponseDpEvent(p, k)`` k-ary randomized response with
    ``ε = log(1 + k(1 - p)/p)`` (keep the input with probability ``1 - p + p/k``; neighbours replace one
    input, dp_accounting's ``REPLACE_ONE``); a noise parameter of 0 (no noise) is the mechanism that
    reveals its input, ``(0, 1)``-DP. ``DiscreteLaplaceDpEvent(a, Δ)`` is the finite pair of the discrete
    Laplace noise ``∝ e^{-a|x|}`` on inputs ``Δ`` and 0 (its loss takes the ``Δ + 1`` values
    ``a(2x - Δ)``, ``x = 0 .. Δ``). ``MixtureOfGaussiansDpEvent(σ, (0, c), (1 - q, q))`` is the pair
    ``(q N(c, σ²) + (1 - q) N(0, σ²), N(0, σ²))`` in both orders: the Gaussian of sensitivity ``|c|`` on a
    Poisson subsample at rate ``q`` (other sensitivity sets are refused). ``EpsilonDeltaDpEvent(ε, δ)``
    is a mechanism meeting (ε, δ). ``SampledWithoutReplacementDpEvent(n, m, e)`` is the mechanism of ``e``
    on a fixed-size batch at rate ``m / n`` (replace-one neighbours, as dp_accounting's, whose noise
    multipliers are over the replace-one sensitivity). Every composition is adaptive, as in dp_accounting.

    Examples
    --------
    >>> import dp_accounting
    >>> from lpdp.interop import from_dp_event
    >>> event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 100)
    >>> g = from_dp_event(event).guarantee()
    >>> g.exact, round(g.epsilon(1e-5)[1], 4)     # G_5: μ = sqrt(100) / 2
    (True, 33.1037)
    """
    dpa = _dp_accounting()
    events = dpa.dp_event
    acc = Accountant()
    stack: list[tuple[Any, int]] = [(event, 1)]
    while stack:
        ev, times = stack.pop()
        if isinstance(ev, dpa.NoOpDpEvent):
            continue
        if isinstance(ev, dpa.SelfComposedDpEvent):
            stack.append((ev.event, times * int(ev.count)))
        elif isinstance(ev, dpa.ComposedDpEvent):
            stack.extend((e, times) for e in reversed(ev.events))
        elif isinstance(ev, dpa.GaussianDpEvent):
            acc.compose(_revealing() if ev.noise_multiplier == 0 else GaussianMechanism(ev.noise_multiplier),
                        times)
        elif isinstance(ev, dpa.LaplaceDpEvent):
            acc.compose(_revealing() if ev.noise_multiplier == 0 else LaplaceMechanism(ev.noise_multiplier),
                        times)
        elif isinstance(ev, dpa.RandomizedResponseDpEvent):
            rr = _rr(float(ev.noise_parameter), int(ev.num_buckets))
            if rr is not None:          # one bucket: the output says nothing
                acc.compose(rr, times)
        elif isinstance(ev, (events.DiscreteLaplaceDpEvent, events.MixtureOfGaussiansDpEvent)):
            m = _discrete_laplace(float(ev.noise_parameter), int(ev.sensitivity)) \
                if isinstance(ev, events.DiscreteLaplaceDpEvent) else _gaussian_mixture(ev)
            if m is not None:           # sensitivity 0: the output says nothing
                acc.compose(m, times)
        elif type(ev).__name__ == "EpsilonDeltaDpEvent":
            acc.compose(DPMechanism([(float(ev.epsilon), float(ev.delta))]), times)
        elif isinstance(ev, (dpa.PoissonSampledDpEvent, dpa.SampledWithoutReplacementDpEvent)):
            inner = from_dp_event(ev.event).parts
            if not inner:
                continue
            name = type(ev).__name__
            if len(inner) != 1 or inner[0][1] != 1:
                raise ParameterError(f"event={name} of {type(ev.event).__name__}: one Poisson sample (or "
                                     "batch) must feed one mechanism run (sample each event of a composition "
                                     "instead)")
            if isinstance(ev, dpa.PoissonSampledDpEvent):
                acc.compose(subsampled(inner[0][0], float(ev.sampling_probability)), times)
            else:
                acc.compose(subsampled(inner[0][0], _batch_rate(ev), "fixed_size"), times)
        else:
            raise ParameterError(f"event={type(ev).__name__}: not supported; from_dp_event takes "
                                 f"{', '.join(SUPPORTED_EVENTS)}")
    return acc


def _batch_rate(ev: Any) -> float:
    n = check_int(ev.source_dataset_size, "source_dataset_size", 1)
    m = check_int(ev.sample_size, "sample_size", 1)
    if m > n:
        raise ParameterError(f"sample_size={m}: must be at most source_dataset_size={n}")
    return m / n


def _discrete_laplace(a: float, sensitivity: int) -> Any:
    """The pair of ``Δ + Z`` and ``Z``, ``Z ~ DLap(a)`` (``P(Z = z) = tanh(a/2) e^{-a|z|}``), on its loss
    classes ``X <= 0``, ``X = 1 .. Δ-1`` and ``X >= Δ``."""
    a = check_positive(a, "noise_parameter")
    d = check_int(sensitivity, "sensitivity", 0)
    if d == 0:
        return None
    t = math.tanh(a / 2)
    x = np.arange(1, d)
    top = 1.0 / (1.0 + math.exp(-a))                   # P(Z >= 0)
    low = math.exp(-a * d) * top                       # P(Z <= -Δ)
    p = np.concatenate([[low], t * np.exp(-a * (d - x)), [top]])
    return FiniteMechanism.from_pair(p.tolist(), p[::-1].tolist())


def _gaussian_mixture(ev: Any) -> Any:
    """``q N(c, σ²) + (1 - q) N(0, σ²)`` against ``N(0, σ²)``: the Poisson-subsampled Gaussian of
    sensitivity ``|c|`` (``None`` when no sensitivity is positive: the output says nothing)."""
    sigma = check_positive(ev.standard_deviation, "standard_deviation")
    mass: dict[float, float] = {}
    for c, w in zip(ev.sensitivities, ev.sampling_probs, strict=True):
        if float(w) > 0 and float(c) != 0.0:
            mass[float(c)] = mass.get(float(c), 0.0) + float(w)
    if len(mass) > 1:
        raise ParameterError(f"event=MixtureOfGaussiansDpEvent(sensitivities={list(ev.sensitivities)!r}): "
                             "only sensitivities 0 and one other value (a subsampled Gaussian) are supported")
    if not mass:
        return None
    (c, w), = mass.items()
    return subsampled(GaussianMechanism(sigma, abs(c)), check_probability(min(w, 1.0), "sampling_probs",
                                                                          open_left=True))


def _revealing() -> DPMechanism:
    return DPMechanism([(0.0, 1.0)])


def _rr(p: float, k: int) -> Any:
    """k-ary randomized response of noise ``p``: ``ε = log1p(k (1 - p) / p)`` is evaluated within
    ``4u (ε + 1)`` (three roundings of the quotient, one of ``log1p``), so the mechanism of ``ε`` rounded
    up dominates the event's (the upper side) and the one of ``ε`` rounded down is attained by it (the
    lower side, :meth:`~lpdp.mechanisms.Mechanism.attained`)."""
    if not 0.0 <= p <= 1.0:
        raise ParameterError(f"noise_parameter={p!r}: must be in [0, 1]")
    if k == 1:
        return None
    if p == 0.0:
        return _revealing()
    eps = math.log1p(k * (1.0 - p) / p)
    slack = 8 * 2.0 ** -53 * (eps + 1)
    return BracketedMechanism(randomized_response(k, eps + slack),
                              randomized_response(k, max(eps - slack, 0.0)))


def _pld_from_log_masses(log_p: dict[Any, float], log_q: dict[Any, float], discretization: float,
                         *, symmetric: bool) -> Any:
    """dp_accounting's pessimistic PLD of the pair (P, Q) given as ``{outcome: log mass}``."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_two_probability_mass_functions(
        log_probability_mass_function_lower=log_q, log_probability_mass_function_upper=log_p,
        pessimistic_estimate=True, value_discretization_interval=discretization, symmetric=symmetric)


def _region_log_masses(region: PrivacyRegion, shift: float = 0.0
                       ) -> tuple[dict[Any, float], dict[Any, float]]:
    """``{outcome: log mass}`` of the region's pair; ``shift`` raises every finite loss (Q-masses lowered).

    The P-masses are raised by the region's own bound (:attr:`PrivacyRegion.error`) and by
    ``u (2 n + 16)`` for dp_accounting's ``exp`` of each and its sums of n positive terms (its
    ``δ(ε) = p_inf + Σ p (1 - e^{ε - L})``; raising a loss by ``shift`` adds nothing where ε is far below
    it or above every finite loss: ``homogeneous(0.508, 4.54e-7, 36)``'s PLD gave δ(18.46), the +inf mass
    alone, one ulp low); mass the region left out goes to the infinite loss."""
    err = region.error
    slack = UNIT_ROUNDOFF * (2 * region.log_p.size + 16)
    raised = region.log_p + np.asarray(err.log_mass(np.abs(region.log_p)), dtype=float) + slack
    log_p = {i: float(v) for i, v in enumerate(raised)}
    log_q = {i: float(v) - shift for i, v in enumerate(region.log_q)}
    log_inf = region.log_p_inf
    if log_inf > -math.inf:
        log_inf = log_inf + err.log_inf(abs(log_inf)) + slack
    if err.dropped > -math.inf:
        log_inf = float(np.logaddexp(log_inf, err.dropped))
    if log_inf > -math.inf:
        log_p["+inf"] = log_inf
    if region.log_q_ninf > -math.inf:
        log_q["-inf"] = region.log_q_ninf
    return log_p, log_q


def to_pld(region_or_guarantee: PrivacyRegion | Guarantee, value_discretization_interval: float = 1e-4
           ) -> Any:
    """A dp_accounting ``PrivacyLossDistribution`` whose δ(ε) is never below lpdp's (upper side).

    Regions (and guarantees whose upper side is a region) become the pessimistic PLD of their dominating
    pair (every loss raised by half the discretization, then rounded up to it by dp_accounting); a
    Gaussian guarantee ``G_μ`` becomes dp_accounting's pessimistic Gaussian PLD with σ = 1/μ; any other
    guarantee (a bracketed one) the PLD of the region of its upper side's profile on a grid of
    :data:`PROFILE_POINTS` ε values (``∩_j R(ε_j, δ_up(ε_j))``, which holds wherever the upper side does).

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.interop import to_pld
    >>> r = PrivacyRegion.from_constraints([(1.0, 1e-3), (0.3, 0.05)])
    >>> bool(to_pld(r).get_delta_for_epsilon(0.5) >= r.delta(0.5))
    True
    """
    _dp_accounting()
    step = check_positive(value_discretization_interval, "value_discretization_interval")
    side = region_or_guarantee.upper if isinstance(region_or_guarantee, Guarantee) else region_or_guarantee
    if isinstance(side, PrivacyRegion):
        # Every loss is moved up by half a step before dp_accounting rounds it up to its grid, so each
        # rounded loss exceeds the true one by at least step/2: a margin far above the float error of
        # dp_accounting's sums (a loss exactly on the grid would otherwise keep no margin at all).
        log_p, log_q = _region_log_masses(side, shift=step / 2)
        return _pld_from_log_masses(log_p, log_q, step, symmetric=True)   # δ = H(P || Q), as the region
    if isinstance(side, TradeoffFunction) and side.name.startswith("G_"):
        mu = _gaussian_mu(side) * (1 + 1e-12)          # rounded up: the PLD must not undercut G_μ
        return _gaussian_pld(mu, step)
    if (isinstance(side, Larger) and isinstance(side.first, PrivacyRegion)
            and isinstance(side.second, PrivacyRegion)):        # a pair composed in both orders
        from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

        remove = _pld_from_log_masses(*_region_log_masses(side.first, step / 2), step, symmetric=True)
        add = _pld_from_log_masses(*_region_log_masses(side.second, step / 2), step, symmetric=True)
        return PrivacyLossDistribution(remove._pmf_remove, add._pmf_remove)
    if isinstance(region_or_guarantee, Guarantee) or isinstance(side, TradeoffFunction):
        # any other upper side (a certified bracket's) or trade-off function: the region of its profile
        # on a grid of ε, which contains the true region (each line is met), as a pessimistic PLD
        return to_pld(_profile_region(side), step)
    raise ParameterError(f"region_or_guarantee: a {type(region_or_guarantee).__name__} is neither a "
                         "PrivacyRegion nor a Guarantee")


#: Points of the ε grid on which the upper side of a bracketed guarantee is read for :func:`to_pld`.
PROFILE_POINTS = 96


def _profile_region(side: Any) -> PrivacyRegion:
    """``∩_j R(ε_j, δ_up(ε_j))`` over a grid of ε up to where the upper δ falls below 1e-12: a region
    containing the true one (every constraint holds), so its pair's δ is at or above the upper side's
    at every ε between the grid points."""
    top = float(side.epsilon(1e-12))
    if not math.isfinite(top):
        raise ParameterError("region_or_guarantee: its upper side never falls below delta=1e-12")
    eps = np.linspace(0.0, max(top, 1e-6) * 1.05, PROFILE_POINTS)
    deltas = np.minimum(np.asarray(side.delta(eps), dtype=float), 1.0)
    return PrivacyRegion.from_constraints([(float(e), float(d)) for e, d in zip(eps, deltas, strict=True)])


#: The Gaussian PLD's tails beyond ``±_GAUSSIAN_TAIL`` standard deviations (mass ``< e^-60`` each) are
#: moved to the end cells / the infinite loss.
_GAUSSIAN_TAIL = 11.0


def _gaussian_pld(mu: float, step: float) -> Any:
    """A pessimistic PLD of ``G_μ`` built from cell masses in log space.

    Under ``P = N(μ, 1)`` against ``Q = N(0, 1)`` the loss is ``L = μ x - μ²/2 ~ N(μ²/2, μ²)``. The P-mass
    of ``L ∈ ((j - 3/2) h, (j - 1/2) h]`` is put on the loss ``j h``: every loss is raised by at least
    ``h/2``, far above the rounding of the cells' ends (``z = (L - μ²/2)/μ``, a few ulps of ``|z| + μ``),
    so the pair dominates ``G_μ``; its δ exceeds the true one by about ``h/2`` relative. Each cell's mass is
    ``Φ(z_b) - Φ(z_a)`` formed as ``Φ(z_b) (1 - e^{log Φ(z_a) - log Φ(z_b)})`` below the mean and from the
    survival function above it, so it keeps its relative precision in both tails (dp_accounting's
    Gaussian PLD takes CDF differences near 1 there: each upper-tail cell carried an ulp of absolute error,
    and ``get_epsilon_for_delta(1e-3)`` of 20 runs of σ = 0.783 returned an ε with δ 1.0000000005e-3).
    Mass below the first cell is added to it (a loss raised further); mass above the last is the infinite
    loss, rounded up.
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    mean = mu * mu / 2
    lo = math.floor((mean - _GAUSSIAN_TAIL * mu) / step)
    hi = math.ceil((mean + _GAUSSIAN_TAIL * mu) / step)
    j = np.arange(lo, hi + 1)
    ends = ((np.arange(lo, hi + 2) - 1.5) * step - mean) / mu          # z at the cells' ends
    ends[0] = -math.inf                                                 # the lower tail joins cell lo
    below = special.log_ndtr(ends)                                      # log Φ(z)
    above = special.log_ndtr(-ends)                                     # log (1 - Φ(z))
    with np.errstate(divide="ignore", invalid="ignore"):
        left = below[1:] + np.log(-np.expm1(below[:-1] - below[1:]))   # Φ(b) - Φ(a), lower half
        right = above[:-1] + np.log(-np.expm1(above[1:] - above[:-1]))  # S(a) - S(b), upper half
    log_p = np.where(ends[1:] <= 0, left, right)
    probs = np.exp(log_p) * (1 + 64 * 2.0 ** -53)       # a few ulps per cell, rounded up
    probs[~np.isfinite(probs)] = 0.0
    infinity = min(1.0, float(math.exp(float(above[-1]))) * (1 + 1e-9))
    pmf = pld_pmf.DensePLDPmf(step, int(j[0]), probs, infinity, True)
    return PrivacyLossDistribution(pmf)


def _gaussian_mu(f: TradeoffFunction) -> float:
    """μ of ``G_μ`` from its fixed point ``Φ(-μ/2)``."""
    return float(-2.0 * special.ndtri(f.fixed_point))


def from_pld(pld: Any) -> PrivacyRegion:
    """The region of a PLD's pair: atoms at the PLD's losses with its masses, plus its infinity mass.

    Its δ(ε) equals the PLD's ``get_delta_for_epsilon`` (for a PLD that is not symmetric the region is
    the convex hull of the two orders' regions, whose δ is the larger of the two).

    Examples
    --------
    >>> from dp_accounting.pld import privacy_loss_distribution as pld
    >>> from lpdp.interop import from_pld
    >>> p = pld.from_laplace_mechanism(1.0, value_discretization_interval=1e-3)
    >>> bool(abs(float(from_pld(p).delta(0.5)) - p.get_delta_for_epsilon(0.5)) < 1e-12)
    True
    """
    _dp_accounting()
    try:
        pmfs = [pld._pmf_remove.to_dense_pmf()]
        if not pld._symmetric:
            pmfs.append(pld._pmf_add.to_dense_pmf())
    except AttributeError:
        raise ParameterError(f"pld={pld!r}: must be a dp_accounting PrivacyLossDistribution") from None
    regions = [_pmf_region(p) for p in pmfs]
    if len(regions) == 1:
        return regions[0]
    return PrivacyRegion.from_vertices(np.vstack([r.vertices for r in regions]))


def _pmf_region(pmf: Any) -> PrivacyRegion:
    probs = np.asarray(pmf._probs, dtype=float)
    loss = (np.arange(probs.size) + pmf._lower_loss) * pmf._discretization
    keep = probs > 0
    loss, probs = loss[keep], probs[keep]
    log_p = np.log(probs)
    log_q = log_p - loss
    inf_mass = float(pmf._infinity_mass)
    q_rest = 1.0 - math.fsum(np.exp(log_q))
    return PrivacyRegion.from_log_masses(
        loss, log_p, log_q, log_p_inf=math.log(inf_mass) if inf_mass > 0 else -math.inf,
        log_q_ninf=math.log(q_rest) if q_rest > 0 else -math.inf, check_total=False)
