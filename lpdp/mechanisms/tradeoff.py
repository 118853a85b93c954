"""Mechanisms known by a symmetric trade-off function (f-DP)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lpdp.errors import ParameterError
from lpdp.mechanisms.base import PairOnly
from lpdp.pld import LossLaw
from lpdp.tradeoff import TradeoffFunction

__all__ = ["TradeoffMechanism"]


class TradeoffMechanism(PairOnly):
    """A mechanism known by a symmetric trade-off function ``f`` (f-DP; Dong, Roth and Su, 2022).

    Its dominating pair is ``Q = U[0, 1]`` and the P with ``T(P, Q) = f``. The accountant brackets its
    compositions; filters cannot run it (no sampler): use a Gaussian, Laplace or finite mechanism there.

    Examples
    --------
    >>> from lpdp.tradeoff import gaussian
    >>> m = TradeoffMechanism(gaussian(1.0))
    >>> round(float(m.tradeoff().delta(1.0)), 6)
    0.126937
    """

    no_filter_face = ("a trade-off mechanism has no sampler or densities; a privacy filter needs the "
                      "mechanism's own output law")

    def __init__(self, f: TradeoffFunction) -> None:
        if not isinstance(f, TradeoffFunction):
            raise ParameterError(f"f={f!r}: must be a TradeoffFunction (lpdp.tradeoff.gaussian, laplace, "
                                 "from_callable)")
        self.f = f

    def __repr__(self) -> str:
        return f"TradeoffMechanism({self.f.name})"

    def tradeoff(self) -> TradeoffFunction:
        return self.f

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """``P(L > c) = f(0) - f(t_c)`` and ``P(L <= c) = f(t_c)`` with ``f'(t_c) = -e^c`` (the tangent
        point), plus the atom ``+inf`` of mass ``1 - f(0)``; the same in both orders (f is symmetric).
        Numerical (bisection on ``f'``): exact loss atoms of a piecewise-linear f are spread over the
        tangent points of its kinks.

        Examples
        --------
        >>> from lpdp.tradeoff import gaussian
        >>> law = TradeoffMechanism(gaussian(1.0)).loss_law()
        >>> round(float(np.exp(law.log_sf(np.array([0.5])))[0]), 6)   # P(N(1/2, 1) > 1/2)
        0.5
        """
        f = self.f
        f0 = f.f0

        def tangent(c: np.ndarray) -> np.ndarray:
            return np.asarray(f.tangent_point(np.asarray(c, dtype=float)), dtype=float)

        def log_sf(c: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore"):
                return np.log(np.maximum(f0 - np.asarray(f(tangent(c))), 0.0))

        def log_cdf(c: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore"):
                return np.log(np.asarray(f(tangent(c))))

        log_p_inf = math.log(1.0 - f0) if f0 < 1.0 else -math.inf
        return LossLaw(log_p_inf=log_p_inf, log_sf=log_sf, log_cdf=log_cdf)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "tradeoff", "name": self.f.name}
