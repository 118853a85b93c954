"""The mechanism protocol: the :class:`Mechanism` base class, filter requests and the shared helpers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._validate import check_probability
from lpdp.errors import ParameterError
from lpdp.pld import LossLaw
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction

__all__ = ["Mechanism", "Request", "Step", "request_input", "pair_increments", "check_distance",
           "check_level", "hashable"]


def pair_increments(logp: Mapping[Any, np.ndarray], pairs: Sequence[tuple[Any, Any]]) -> np.ndarray:
    """``logp[a] - logp[b]`` for each pair (first axis); an output impossible under both gives
    ``+inf`` (the filters' conservative convention)."""
    cols = []
    with np.errstate(invalid="ignore"):
        for a, b in pairs:
            d = logp[a] - logp[b]
            cols.append(np.where(np.isnan(d), np.inf, d))
    return np.stack(cols)


def check_distance(value: Any, other: Any, sensitivity: float, name: str) -> float:
    """``|value - other|``, refused above the mechanism's sensitivity (1e-12 relative slack)."""
    d = abs(float(value) - float(other))
    if d > sensitivity * (1 + 1e-12):
        raise ParameterError(f"inputs {value!r} and {other!r} are {d} apart: the {name} mechanism's "
                             f"sensitivity={sensitivity} allows at most that")
    return d


def check_level(a: float) -> float:
    return check_probability(a, "a")


class Mechanism(ABC):
    """A mechanism seen through its output law and its one-step privacy-loss law."""

    @abstractmethod
    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """One output (``size=None``) or an array of ``size`` outputs for input ``value``."""

    @abstractmethod
    def log_density(self, y: Any, value: Any) -> Any:
        """``log P_value(y)`` (``-inf`` where ``y`` is impossible); vectorised over array ``y``."""

    @abstractmethod
    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        """``P(L > c)`` for ``L = log P_value(Y) / P_other(Y)``, ``Y ~ P_value``."""

    @abstractmethod
    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        """``u(a) = inf{c : P(L > c) <= a}`` (``+inf`` if no finite ``c`` works, ``-inf`` if all do)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Plain data from which :func:`mechanism_from_dict` rebuilds the mechanism."""

    # ------------------------------------------------------------------ accountant face
    @property
    def is_finite(self) -> bool:
        """Whether the mechanism has a finite dominating pair (:meth:`region` works)."""
        return False

    @property
    def is_symmetric(self) -> bool:
        """Whether its dominating pair (P, Q) is its own mirror, so both orders have one loss law."""
        return True

    def region(self) -> PrivacyRegion:
        """The exact region of the mechanism's finite dominating pair (P, Q) (``δ(ε) = H_{e^ε}(P||Q)``)."""
        raise ParameterError(f"{self!r}: has no finite dominating pair (use tradeoff() or loss_law())")

    def tradeoff(self) -> TradeoffFunction:
        """The symmetric trade-off function of the mechanism (f-DP, Dong, Roth and Su, 2022)."""
        raise ParameterError(f"{self!r}: has no closed-form trade-off function (use region())")

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """Law of the privacy loss of the dominating pair: of (P, Q), or of (Q, P) when ``reverse``."""
        raise ParameterError(f"{self!r}: its privacy-loss law is not known in closed form")

    def sample_losses(self, value: Any, pairs: Sequence[tuple[Any, Any]], rng: np.random.Generator,
                      size: tuple[int, ...]) -> np.ndarray:
        """Draw ``Y ~ P_value`` and return the loss ``log P_a(Y)/P_b(Y)`` of each input pair ``(a, b)``
        (first axis: shape ``(len(pairs), *size)``), with :func:`pair_increments`' conventions."""
        y = self.sample(value, rng, size=size)
        inputs = dict.fromkeys(v for pair in pairs for v in pair)
        logp = {v: np.asarray(self.log_density(y, v), float) for v in inputs}
        return pair_increments(logp, pairs)


@dataclass(frozen=True)
class Request:
    """A request: the mechanism input for each database of the filter's domain.

    Parameters
    ----------
    name : str
        A label (kept in transcripts).
    values : mapping
        ``database -> mechanism input``; every database of the filter's pairs must be a key.

    Examples
    --------
    >>> r = Request("is-chrome", {"chrome": 1.0, "firefox": 0.0})
    >>> r("chrome")
    1.0
    """

    name: str
    values: tuple[tuple[Hashable, Any], ...] = field(hash=True)
    _lookup: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False,
                                         hash=False)

    def __init__(self, name: str, values: Mapping[Hashable, Any]) -> None:
        if not isinstance(name, str):
            raise ParameterError(f"name={name!r}: must be a string")
        items = tuple(values.items())
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", items)
        object.__setattr__(self, "_lookup", dict(items))

    def __call__(self, database: Hashable) -> Any:
        try:
            return self._lookup[database]
        except KeyError:
            raise ParameterError(f"request {self.name!r}: no input for database {database!r} "
                                 f"(known: {sorted(map(repr, self._lookup))})") from None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``{"name", "values": [[database, input], ...]}``)."""
        return {"name": self.name, "values": [list(kv) for kv in self.values]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Request:
        """Inverse of :meth:`to_dict`."""
        return cls(data["name"], {hashable(k): v for k, v in data["values"]})


def hashable(x: Any) -> Hashable:
    return tuple(hashable(v) for v in x) if isinstance(x, list) else x


#: One step of a filter's rounds: a mechanism and the request giving its input (``None``: the database
#: itself is the input).
Step = tuple[Mechanism, Request | None]


def request_input(request: Request | None, database: Any) -> Any:
    """The mechanism input of ``database`` under ``request`` (the database itself when ``None``).

    Examples
    --------
    >>> request_input(Request("is-a", {"a": 1.0, "b": 0.0}), "b"), request_input(None, 3)
    (0.0, 3)
    """
    return database if request is None else request(database)
