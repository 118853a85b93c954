"""The Gaussian mechanism ``Y = value + N(0, σ²)``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from lpdp import _special as special
from lpdp._numerics import fraction_up
from lpdp._validate import check_positive
from lpdp.mechanisms.base import AdditiveNoise, Inputs, Mechanism, check_distance, check_level
from lpdp.pld import LossLaw
from lpdp.tradeoff import TradeoffFunction, check_mu, gaussian_delta
from lpdp.tradeoff import gaussian as gaussian_tradeoff

__all__ = ["GaussianMechanism"]


def _gaussian_quantile(a: float, mu: float) -> float:
    # u(a) = μ²/2 + μ Φ^{-1}(1-a), written -ndtri(a) so tiny a keeps every digit.
    if a >= 1.0:
        return -math.inf
    if mu == 0.0:
        return 0.0
    return mu * mu / 2.0 - mu * float(special.ndtri(a))


@dataclass(frozen=True)
class GaussianMechanism(AdditiveNoise):
    """``Y = value + N(0, sigma²)``; the loss for inputs at distance ``d`` is ``N(μ²/2, μ²)``, ``μ = d/σ``.

    ``sensitivity`` bounds ``|value - other|`` over the filter's pairs (checked); it is what the
    mechanism-level baselines charge (filter paper, Sec. II-A), while the realisation-level filter uses the
    actual distance.

    Examples
    --------
    >>> m = GaussianMechanism(sigma=2.0)
    >>> round(m.loss_quantile(0.5, 1, 0), 6)   # the median of N(1/8, 1/4)
    0.125
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.sigma, "sigma")
        check_positive(self.sensitivity, "sensitivity")
        check_mu(self.sensitivity / self.sigma, f"sensitivity/sigma = {self.sensitivity!r}/{self.sigma!r}")

    @property
    def mu(self) -> float:
        """``sensitivity / sigma``: the Gaussian DP parameter of one worst-case round."""
        return self.sensitivity / self.sigma

    def _mu(self, value: Any, other: Any) -> float:
        return check_distance(value, other, self.sensitivity, "Gaussian") / self.sigma

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        return float(value) + self.sigma * rng.standard_normal(size)

    def sample_losses(self, value: Any, pairs: Sequence[tuple[Any, Any]], rng: np.random.Generator,
                      size: tuple[int, ...]) -> np.ndarray:
        # L_(a,b)(y) = ((a-b)/σ²)(y - (a+b)/2) with y = value + σ z: affine in one normal draw.
        for a, b in pairs:
            self._mu(a, b)  # sensitivity check
        d = np.array([float(a) - float(b) for a, b in pairs])
        mid = np.array([(float(a) + float(b)) / 2.0 for a, b in pairs])
        z = rng.standard_normal(size)[None, ...]
        shape = (-1,) + (1,) * len(size)
        return (z * (d / self.sigma).reshape(shape)
                + (d * (float(value) - mid) / self.sigma / self.sigma).reshape(shape))

    def log_density(self, y: Any, value: Any) -> Any:
        z = (np.asarray(y, dtype=float) - float(value)) / self.sigma
        return -0.5 * z * z - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        mu = self._mu(value, other)
        if mu == 0.0:
            return 1.0 if c < 0 else 0.0
        return float(special.ndtr((mu * mu / 2.0 - c) / mu))

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        return _gaussian_quantile(check_level(a), self._mu(value, other))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "gaussian", "sigma": self.sigma, "sensitivity": self.sensitivity}

    @property
    def label(self) -> str:
        return f"the gaussian mechanism (sigma={self.sigma:g}, sensitivity={self.sensitivity:g})"

    def noise_scaled(self, factor: float) -> GaussianMechanism:
        return replace(self, sigma=self.sigma * factor)

    def additive_budget(self) -> tuple[str, Callable[[float], Mechanism]]:
        """``μ² = (Δ/σ)²``, which composition adds."""
        return "mu^2", lambda b: GaussianMechanism(self.sensitivity / math.sqrt(b), self.sensitivity)

    def tradeoff(self) -> TradeoffFunction:
        """``G_μ`` with ``μ = sensitivity/σ`` (Dong, Roth and Su, 2022, Theorem 2.7), the quotient rounded
        up when it is not exact (a larger μ is a weaker guarantee)."""
        return gaussian_tradeoff(self._mu_up())

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        """Tight ``δ(ε)`` of one release (Balle and Wang, 2018, Theorem 8), vectorised.

        Examples
        --------
        >>> round(float(GaussianMechanism(1.0).delta(1.0)), 6)
        0.126937
        """
        return gaussian_delta(epsilon, self._mu_up())

    def _mu_up(self) -> float:
        """``μ`` at or above ``sensitivity / σ``: the quotient is rounded to nearest (a double up unless it
        is exact), and every one-round upper value (δ, ε, ``D_α``, ρ) grows with μ."""
        return fraction_up(self._mu_exact())

    def _mu_exact(self) -> Fraction:
        """``sensitivity / σ`` exactly, a rational of the given doubles."""
        return Fraction(self.sensitivity) / Fraction(self.sigma)

    def gaussian_mu(self) -> float:
        return self.mu

    @property
    def finite_losses(self) -> bool:
        return True

    def loss_family(self, value: Any, other: Any) -> tuple[str, float]:
        return ("gaussian", self._mu(value, other))

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``α μ²/2`` with ``μ = sensitivity/σ`` (Mironov 2017, Proposition 7), in exact rational arithmetic
        on the given doubles, rounded up."""
        return fraction_up(Fraction(alpha) * self._mu_exact() ** 2 / 2)

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``μ²/2`` (Bun and Steinke 2016, Proposition 1.6), exact, rounded up."""
        return fraction_up(self._mu_exact() ** 2 / 2)

    def pair_mechanism(self, value: Any, other: Any) -> GaussianMechanism:
        """Itself: the worst case over the sensitivity ball."""
        return self

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """``L ~ N(μ²/2, μ²)`` in both orders (the pair N(Δ, σ²), N(0, σ²) is symmetric).

        Examples
        --------
        >>> law = GaussianMechanism(1.0).loss_law()
        >>> round(float(np.exp(law.log_sf(np.array([0.5])))[0]), 6)   # P(N(1/2, 1) > 1/2)
        0.5
        """
        mu = self.mu
        half = mu * mu / 2.0

        def log_sf(c: np.ndarray) -> np.ndarray:
            return special.log_ndtr((half - np.asarray(c, dtype=float)) / mu)

        def log_cdf(c: np.ndarray) -> np.ndarray:
            return special.log_ndtr((np.asarray(c, dtype=float) - half) / mu)

        def log_sf_q(c: np.ndarray) -> np.ndarray:     # under Q, L ~ N(-μ²/2, μ²)
            return special.log_ndtr((-half - np.asarray(c, dtype=float)) / mu)

        def log_cdf_q(c: np.ndarray) -> np.ndarray:
            return special.log_ndtr((np.asarray(c, dtype=float) + half) / mu)

        # lpdp._special.log_ndtr: |error of the log| <= LOG_NDTR_ULPS u (1 + |log|) = 1.5e-15 (1 + |log|)
        # (tests/test_special.py; tests/test_pld_one_sided.py::test_gaussian_and_laplace_tails_meet_...)
        return LossLaw(log_sf=log_sf, log_cdf=log_cdf, log_sf_q=log_sf_q, log_cdf_q=log_cdf_q,
                       rtol=2e-15, rtol_log=2e-15)

