"""Privacy-loss laws: the one description of a mechanism that the certified lattice engine composes.

For an ordered neighbouring pair (P, Q) the privacy loss is ``L = log(dP/dQ)(Y)`` with ``Y ~ P``, and
``δ(ε) = E_P[(1 - e^{ε - L})_+]`` (an atom ``L = +inf`` counts in full). Composition adds independent
losses, so the law of L under P is all that the composition of the pair needs. A :class:`LossLaw` holds it
as an exact discrete part (atoms with log masses) and, for continuous mechanisms, log-tail functions of the
continuous part, so that masses of loss intervals are computed without cancellation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["LossLaw"]

_NEG_INF = float("-inf")


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

    The masses of the discrete part, of the continuous part and ``e^log_p_inf`` sum to one.
    """

    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_p: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_p_inf: float = _NEG_INF
    log_sf: Callable[[np.ndarray], np.ndarray] | None = None
    log_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    support: tuple[float, float] = (-np.inf, np.inf)

    @property
    def is_discrete(self) -> bool:
        """True when the law has no continuous part (it is then exact and finite)."""
        return self.log_sf is None
