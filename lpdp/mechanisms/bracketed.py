"""A mechanism known only between two others: dominated by ``upper``, dominating ``lower``.

An input that lpdp cannot represent exactly (dp_accounting's randomized response of noise ``p`` has
``ε = log1p(k (1 - p) / p)``, not a double) is held between the mechanisms of its parameter rounded up
and rounded down: the accountant composes ``upper`` for the guarantee and reads the attack side from
``lower`` (:meth:`~lpdp.mechanisms.Mechanism.attained`), so the result is a certified bracket.
"""

from __future__ import annotations

from typing import Any

from lpdp.mechanisms.base import Mechanism, PairOnly
from lpdp.pld import LossLaw
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction

__all__ = ["BracketedMechanism"]


class BracketedMechanism(PairOnly):
    """Composed as ``upper`` (whose pair dominates the true mechanism's); ``lower`` (dominated by it) is
    the attack side: one mechanism with a parameter rounded up and down, so exact routes stay exact (the
    sides differ by floating-point error). The filter face is refused (the true output law is neither).

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.mechanisms import pure
    >>> g = Accountant().compose(BracketedMechanism(pure(1.0 + 1e-15), pure(1.0 - 1e-15)), 3).guarantee()
    >>> lo, hi = g.epsilon(1e-3)
    >>> g.exact, bool(lo <= hi <= lo + 1e-12)
    (True, True)
    """

    no_filter_face = ("known only between two mechanisms; a privacy filter needs the mechanism's own "
                      "output law")

    def __init__(self, upper: Mechanism, lower: Mechanism) -> None:
        self.upper, self.lower = upper, lower

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BracketedMechanism) and (self.upper, self.lower) == (other.upper,
                                                                                      other.lower)

    def __hash__(self) -> int:
        return hash(("bracketed", self.upper, self.lower))

    def __repr__(self) -> str:
        return f"BracketedMechanism({self.upper!r}, {self.lower!r})"

    @property
    def label(self) -> str:
        return f"{self.upper.label} (rounded up; attack side {self.lower.label})"

    # accountant face: the upper mechanism's
    @property
    def is_finite(self) -> bool:
        return self.upper.is_finite

    @property
    def is_symmetric(self) -> bool:
        return self.upper.is_symmetric

    def region(self) -> PrivacyRegion:
        return self.upper.region()

    def tradeoff(self) -> TradeoffFunction:
        return self.upper.tradeoff()

    def loss_law(self, reverse: bool = False) -> LossLaw:
        return self.upper.loss_law(reverse)

    def dp_constraints(self) -> tuple[tuple[float, float], ...] | None:
        return self.upper.dp_constraints()

    def gaussian_mu(self) -> float | None:
        return self.upper.gaussian_mu()

    def attained(self) -> Mechanism:
        return self.lower

    @property
    def attained_by_rounding(self) -> bool:
        """True: ``upper`` and ``lower`` are one mechanism with a parameter rounded up and down."""
        return True

    @property
    def relation(self) -> str | None:
        return self.upper.relation

    @property
    def scheme(self) -> str | None:
        return self.upper.scheme

    # filter face: refused (PairOnly)
    def to_dict(self) -> dict[str, Any]:
        """The upper mechanism's data (what the guarantee is computed from)."""
        return self.upper.to_dict()
