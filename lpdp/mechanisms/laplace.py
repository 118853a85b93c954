"""The Laplace mechanism ``Y = value + Laplace(scale)``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from lpdp._numerics import UNIT_ROUNDOFF, fraction_up, log1mexp
from lpdp.mechanisms.base import AdditiveNoise, Inputs, Mechanism, check_distance, check_level, round_up_ulps
from lpdp.pld import LossLaw
from lpdp.tradeoff import TradeoffFunction, check_laplace
from lpdp.tradeoff import laplace as laplace_tradeoff

__all__ = ["LaplaceMechanism"]


@dataclass(frozen=True)
class LaplaceMechanism(AdditiveNoise):
    """``Y = value + Laplace(scale)``; for inputs at distance ``d`` and ``r = d/scale`` the loss has atoms
    ``P(L = r) = 1/2``, ``P(L = -r) = e^{-r}/2`` and, between, ``P(L > c) = 1 - e^{(c-r)/2}/2``.

    Examples
    --------
    >>> m = LaplaceMechanism(scale=1.0)
    >>> m.loss_quantile(0.25, 1, 0)   # the atom at r = 1 carries mass 1/2 > 0.25
    1.0
    """

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_laplace(self.scale, self.sensitivity)

    def _r(self, value: Any, other: Any) -> float:
        return check_distance(value, other, self.sensitivity, "Laplace") / self.scale

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        return float(value) + rng.laplace(0.0, self.scale, size)

    def log_density(self, y: Any, value: Any) -> Any:
        return -np.abs(np.asarray(y, dtype=float) - float(value)) / self.scale - math.log(2 * self.scale)

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        r = self._r(value, other)
        if c >= r:
            return 0.0
        if c < -r:
            return 1.0
        return 1.0 - 0.5 * math.exp((c - r) / 2.0)

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        a = check_level(a)
        r = self._r(value, other)
        if a >= 1.0:
            return -math.inf
        if r == 0.0:
            return 0.0
        if a >= 1.0 - 0.5 * math.exp(-r):
            return -r
        if a <= 0.5:
            return r
        return r + 2.0 * math.log(2.0 * (1.0 - a))

    def noise_scaled(self, factor: float) -> LaplaceMechanism:
        return replace(self, scale=self.scale * factor)

    def additive_budget(self) -> tuple[str, Callable[[float], Mechanism]]:
        """ε0 = Δ/scale, which composition adds."""
        return "epsilon0", lambda b: LaplaceMechanism(self.sensitivity / b, self.sensitivity)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "laplace", "scale": self.scale, "sensitivity": self.sensitivity}

    @property
    def label(self) -> str:
        return f"the laplace mechanism (scale={self.scale:g}, sensitivity={self.sensitivity:g})"

    def tradeoff(self) -> TradeoffFunction:
        """The exact Laplace trade-off function with ``ε = sensitivity/scale`` (Dong, Roth and Su)."""
        return laplace_tradeoff(self.scale, sensitivity=self.sensitivity)

    @property
    def finite_losses(self) -> bool:
        return True

    def loss_family(self, value: Any, other: Any) -> tuple[str, float]:
        return ("laplace", self._r(value, other))

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``log(α/(2α-1) e^{(α-1) r} + (α-1)/(2α-1) e^{-α r}) / (α-1)`` (Mironov 2017), certified from
        above: ``r`` rounded up (``D_α`` grows with it), and the log of the sum, which cancels near 1 for a
        small ``r`` or α near 1, widened by ``8u`` of its terms' size (each a log, a product and a sum:
        a few ulps of its magnitude) before the division."""
        a, r = alpha, math.nextafter(self.sensitivity / self.scale, math.inf)
        t1 = math.log(a / (2 * a - 1)) + (a - 1) * r
        t2 = math.log((a - 1) / (2 * a - 1)) - a * r
        total = float(np.logaddexp(t1, t2)) + 8 * UNIT_ROUNDOFF * (abs(t1) + abs(t2) + 2)
        return max(round_up_ulps(total / (a - 1)), 0.0)

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``ε²/2`` with ``ε = r`` (pure ε-DP; Bun and Steinke 2016, Proposition 3.3), in exact rational
        arithmetic on the given doubles, rounded up."""
        return fraction_up((Fraction(self.sensitivity) / Fraction(self.scale)) ** 2 / 2)

    def pair_mechanism(self, value: Any, other: Any) -> LaplaceMechanism:
        """Itself: the worst case over the sensitivity ball."""
        return self

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """Atoms ``r`` (mass 1/2) and ``-r`` (mass ``e^{-r}/2``), ``r = sensitivity/scale``, and between
        them a continuous part with ``P(L > c) = (1 - e^{(c - r)/2})/2``; the same in both orders.

        Examples
        --------
        >>> law = LaplaceMechanism(1.0).loss_law()
        >>> law.losses.tolist(), np.exp(law.log_p).round(6).tolist()
        ([1.0, -1.0], [0.5, 0.18394])
        >>> round(float(np.exp(law.log_sf(np.array([-1.0])))[0] * 2), 6)   # 1 - e^{-1}
        0.632121
        """
        r = self.sensitivity / self.scale
        log_half = -math.log(2.0)

        def log_sf(c: np.ndarray) -> np.ndarray:
            c = np.clip(np.asarray(c, dtype=float), -r, r)
            return log_half + log1mexp((c - r) / 2.0)

        def log_cdf(c: np.ndarray) -> np.ndarray:
            # log(e^x - 1) = x + log(1 - e^-x), x = (c + r)/2: no overflow for large r
            x = (np.clip(np.asarray(c, dtype=float), -r, r) + r) / 2.0
            return log_half - r + x + log1mexp(-x)

        def log_sf_q(c: np.ndarray) -> np.ndarray:     # the pair is its own mirror: Q(L > c) = P(L < -c)
            return log_cdf(-np.asarray(c, dtype=float))

        def log_cdf_q(c: np.ndarray) -> np.ndarray:
            return log_sf(-np.asarray(c, dtype=float))

        return LossLaw(np.array([r, -r]), np.array([log_half, log_half - r]), log_sf=log_sf,
                       log_cdf=log_cdf, support=(-r, r), log_sf_q=log_sf_q, log_cdf_q=log_cdf_q,
                       rtol=1e-14 * (1.0 + r), rtol_log=4e-15)   # measured: 1.1e-16 (1 + r) (1 + |log|)

