"""The mechanism protocol: the :class:`Mechanism` base class (every face a mechanism can have), filter
requests and the shared helpers."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._validate import check_probability
from lpdp.errors import NotApplicableError, ParameterError
from lpdp.pld import LossLaw
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction

__all__ = ["Mechanism", "PairOnly", "AdditiveNoise", "Request", "Step", "request_input", "step_to_dict",
           "pair_increments", "check_distance", "check_level", "hashable", "round_up_ulps"]

#: Neighbouring input pairs, as the filters' requests map them: ``[(value, other), ...]``.
Inputs = Sequence[tuple[Any, Any]]


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


def round_up_ulps(x: float, ulps: int = 4) -> float:
    """``x`` moved ``ulps`` floats up (the outward rounding of a per-round parameter)."""
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


class Mechanism(ABC):
    """A mechanism, with every face the library uses: a new mechanism is one subclass in one module.

    Each face below is either a required method (abstract) or a declared capability with a default that
    says "not available" (``False``, ``None``, or :class:`~lpdp.errors.NotApplicableError` naming the
    mechanism); nothing outside :mod:`lpdp.mechanisms` looks at a mechanism's class.

    **Accountant face** (:class:`lpdp.Accountant`, :func:`lpdp.accountant.route`), the dominating pair
    ``(P, Q)`` in one of three forms:

    * a finite pair: :attr:`is_finite` and :meth:`region` (exact log masses);
    * a privacy-loss law: :meth:`loss_law` (``reverse=True``: of ``(Q, P)``; :attr:`is_symmetric` says
      both orders agree), composed by the certified engine :func:`lpdp.pld.compose`;
    * a closed form: :meth:`tradeoff` (f-DP), :meth:`gaussian_mu` (the pair is ``N(μ, 1), N(0, 1)``, so
      compositions are ``G_{sqrt(Σ k μ²)}``), :meth:`dp_constraints` (the pair of ``∩_j R(ε_j, δ_j)``,
      composed by Kairouz, Theorem 1, the double-DP and n-constraint lattices);
    * :attr:`relation` and :attr:`scheme`: the neighbouring relation and sampling scheme a subsampled
      mechanism's pair is stated for (``None`` for the others); :meth:`attained`: the mechanism whose
      pairs are attained, when the mechanism's own pair is a bound only (the lower side's source), and
      :attr:`attained_by_rounding`: whether the two differ by the rounding of a parameter only.

    **Filter face** (:mod:`lpdp.filters`), for inputs ``value, other`` of a neighbouring pair:
    :meth:`sample`, :meth:`log_density`, :meth:`loss_tail`, :meth:`loss_quantile` (required),
    :meth:`sample_losses`; declared: :attr:`finite_outputs` (a table per input: ``probabilities``,
    ``outputs``, ``loss_pmf``, for exact audits), :meth:`loss_atoms` (the loss law of a pair when it is
    discrete), :meth:`loss_family` (a closed-form loss law for the quadrature audit),
    :attr:`finite_losses` (no output has an infinite loss), :meth:`default_pairs`, :attr:`pair` (the
    inputs of its worst-case neighbouring pair, to run a workload's rounds).

    **Mechanism level** (the filter paper's baselines, :mod:`lpdp.filters.baselines`), worst cases over
    ``inputs`` (the neighbouring pairs; default :meth:`default_pairs`): :meth:`round_delta` and
    :meth:`round_epsilon` (the per-round (ε, δ) choices, the exact profile of one round), :meth:`renyi`
    (Rényi divergence ``D_α``), :meth:`zcdp_rho` (ρ-zCDP), and :meth:`pair_mechanism` (what the accountant
    composes for one pair, for the optimal classical composition).

    **Calibration face** (:mod:`lpdp.calibrate`), declared: :meth:`noise_scaled` (the mechanism with its
    noise scale multiplied) and :meth:`additive_budget` (its budget in a unit composition adds).

    **Data face**: :meth:`to_dict` (plain data; :func:`lpdp.mechanisms.mechanism_from_dict` inverts it),
    :attr:`label` (a short name for messages).
    """

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
        """Plain data from which :func:`mechanism_from_dict` rebuilds the mechanism: a ``[[mechanism]]``
        table of :mod:`lpdp.mechanisms.registry` (``{"kind": ..., its keys}``, without ``times``)."""

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

    @property
    def relation(self) -> str | None:
        """The neighbouring relation the dominating pair is stated for when the mechanism fixes one
        (``"add_remove"`` for a Poisson-subsampled mechanism); ``None``: whichever relation its
        sensitivity is stated for. A composition may not mix two relations."""
        return None

    @property
    def scheme(self) -> str | None:
        """The sampling scheme of a subsampled mechanism (``"poisson"``), else ``None``."""
        return None

    def attained(self) -> Mechanism | None:
        """A mechanism whose dominating pairs are attained by this one when this one's own pair is an
        upper bound only (a fixed-size subsampled mechanism: its Poisson counterpart, whose removal and
        addition pairs one fixed pair of datasets attains); the accountant reads the lower side of a
        guarantee from it. ``None`` (the default): the mechanism's own pair is attained."""
        return None

    @property
    def attained_by_rounding(self) -> bool:
        """Whether :meth:`attained` differs from the mechanism by the rounding of a parameter only (a
        guarantee composed of exact routes then stays exact: its sides differ by floating-point error)."""
        return False

    def gaussian_mu(self) -> float | None:
        """``μ`` when the dominating pair is exactly ``(N(μ, 1), N(0, 1))`` (composition: ``μ√Σ k``),
        else ``None``."""
        return None

    def dp_constraints(self) -> tuple[tuple[float, float], ...] | None:
        """The ``(ε_j, δ_j)`` when the dominating pair is that of ``∩_j R(ε_j, δ_j)``, else ``None``."""
        return None

    # ------------------------------------------------------------------ filter face (declared)
    @property
    def finite_outputs(self) -> bool:
        """Whether the outputs are a finite table (``probabilities(value)``, ``outputs``, ``loss_pmf``)."""
        return False

    @property
    def finite_losses(self) -> bool:
        """Whether every output has a finite loss under every pair (no ``±inf`` or undefined increment)."""
        return False

    def loss_atoms(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """The distinct losses (ascending) and their probabilities under ``value`` when the pair's loss
        law is discrete, else ``None``."""
        return None

    def loss_family(self, value: Any, other: Any) -> tuple[str, float] | None:
        """The pair's loss law as a closed family: ``("gaussian", μ)`` for ``N(μ²/2, μ²)``,
        ``("laplace", r)`` for the Laplace loss of parameter ``r``; ``None`` otherwise."""
        return None

    def default_pairs(self) -> tuple[tuple[Hashable, Hashable], ...]:
        """The neighbouring input pairs a filter checks by default: the count pair ``(1, 0)``."""
        return ((1, 0),)

    @property
    def pair(self) -> tuple[Hashable, Hashable]:
        """The inputs ``(value, other)`` of its worst-case neighbouring pair (the one its dominating pair
        is of), which a workload's rounds run in a filter (:func:`lpdp.filters.workload_steps`)."""
        raise self._not_applicable("a worst-case neighbouring pair of inputs")

    # ------------------------------------------------------------------ mechanism level
    def _not_applicable(self, what: str) -> NotApplicableError:
        return NotApplicableError(f"{what} is not defined for {self.label}")

    def round_delta(self, epsilon: float, inputs: Inputs | None = None) -> float:
        """The exact ``δ(ε)`` of one round, the largest over ordered ``inputs`` pairs."""
        raise self._not_applicable("an exact privacy profile δ(ε)")

    def round_epsilon(self, delta: float, inputs: Inputs | None = None) -> float:
        """The smallest ``ε >= 0`` with ``round_delta(ε) <= delta`` (rounded up; ``inf`` if none)."""
        raise self._not_applicable("an exact privacy profile δ(ε)")

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``D_α`` of one round (``α > 1``), the largest over ordered pairs, rounded up."""
        raise self._not_applicable("a Rényi divergence")

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``ρ`` with which one round is ρ-zCDP (Bun and Steinke 2016), rounded up."""
        raise self._not_applicable("zCDP")

    def pair_mechanism(self, value: Any, other: Any) -> Mechanism | None:
        """The mechanism the accountant composes for the neighbouring inputs ``(value, other)``
        (``None``: the accountant cannot compose it)."""
        return None

    # ------------------------------------------------------------------ calibration face (declared)
    def noise_scaled(self, factor: float) -> Mechanism | None:
        """The mechanism with its noise scale multiplied by ``factor`` (:func:`lpdp.calibrate.noise_factor`);
        ``None``: it has no noise scale."""
        return None

    def additive_budget(self) -> tuple[str, Callable[[float], Mechanism]] | None:
        """The mechanism's budget in a unit that composition adds, and how to rebuild the mechanism from
        a budget ``b`` (:func:`lpdp.calibrate.split`): ``("epsilon0", ...)`` for pure ε-DP, ``("mu^2", ...)``
        for a Gaussian; ``None``: it has none."""
        return None

    # ------------------------------------------------------------------ data face
    @property
    def label(self) -> str:
        """A short name for messages (never a whole probability table); each family says its own, this
        default names the kind (and the ``name`` of a named one)."""
        d = self.to_dict()
        return f"the {d.get('kind')} mechanism {d.get('name', '')!r}".replace(" ''", "")


class PairOnly(Mechanism):
    """A mechanism known only through its dominating pair (a trade-off function, a pair bracketed between
    two mechanisms): it declares that it has no filter face, so :meth:`sample`, :meth:`log_density`,
    :meth:`loss_tail` and :meth:`loss_quantile` raise :class:`~lpdp.errors.NotApplicableError` naming it
    and :attr:`no_filter_face` (why)."""

    #: Why there is no filter face (the end of the message).
    no_filter_face = "known only through its dominating pair; a privacy filter needs its own output law"

    def _refused(self) -> NotApplicableError:
        return NotApplicableError(f"{self.label}: {self.no_filter_face}")

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        raise self._refused()

    def log_density(self, y: Any, value: Any) -> Any:
        raise self._refused()

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        raise self._refused()

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        raise self._refused()


class AdditiveNoise(Mechanism):
    """``Y = value + noise`` with a ``sensitivity`` bounding ``|value - other|``, whose trade-off function
    (:meth:`tradeoff`) is its worst case over every pair of inputs within the sensitivity: the pair
    ``(sensitivity, 0)`` dominates, and one round's exact (ε, δ) choices are that function's (Gaussian:
    Balle and Wang 2018, Theorem 8; Laplace: ``1 - e^{(ε - r)/2}`` for ``ε < r``)."""

    sensitivity: float

    @property
    def pair(self) -> tuple[float, float]:
        """The inputs ``(sensitivity, 0)`` of a worst-case neighbouring pair (its dominating pair)."""
        return (self.sensitivity, 0.0)

    def round_delta(self, epsilon: float, inputs: Inputs | None = None) -> float:
        """``δ(ε)`` of :meth:`tradeoff` (the worst case over the sensitivity ball)."""
        return float(self.tradeoff().delta(epsilon))

    def round_epsilon(self, delta: float, inputs: Inputs | None = None) -> float:
        return float(self.tradeoff().epsilon(delta))


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


def step_to_dict(step: Step) -> dict[str, Any]:
    """Plain data of a step ``(mechanism, request)``: ``{"mechanism": its table, "request": ...}``
    (:func:`lpdp.mechanisms.step_from_dict` inverts it).

    Examples
    --------
    >>> from lpdp.mechanisms import pure
    >>> step_to_dict((pure(1.0), None))
    {'mechanism': {'kind': 'dp', 'constraints': [[1.0, 0.0]]}, 'request': None}
    """
    mech, request = step
    return {"mechanism": mech.to_dict(), "request": None if request is None else request.to_dict()}


def request_input(request: Request | None, database: Any) -> Any:
    """The mechanism input of ``database`` under ``request`` (the database itself when ``None``).

    Examples
    --------
    >>> request_input(Request("is-a", {"a": 1.0, "b": 0.0}), "b"), request_input(None, 3)
    (0.0, 3)
    """
    return database if request is None else request(database)
