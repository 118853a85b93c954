"""The one mechanism vocabulary: what the accountant composes and what a privacy filter runs.

Every mechanism the accountant takes (:class:`lpdp.Accountant`) says how it is dominated:

* ``region()``: the exact :class:`~lpdp.PrivacyRegion` of a finite dominating pair (finite mechanisms,
  randomized response, (ε, δ) constraints, pure ε, any region); continuous mechanisms raise;
* ``tradeoff()``: the symmetric trade-off function (Gaussian ``G_μ``, Laplace, any symmetric f);
* ``loss_law(reverse=False)``: the :class:`~lpdp.pld.LossLaw` of its dominating pair (P, Q), or of (Q, P)
  with ``reverse=True`` (equal for symmetric mechanisms: ``is_symmetric``);
* ``is_finite``: whether ``region()`` is available (the accountant composes those exactly).

Constructors: :class:`GaussianMechanism` (σ, sensitivity), :class:`LaplaceMechanism` (scale, sensitivity),
:func:`randomized_response` (categories, ε), :meth:`FiniteMechanism.from_pair` (the output distributions
on a neighbouring pair), :class:`DPMechanism` (several (ε, δ) guarantees at once), :func:`pure` (pure ε),
:class:`RegionMechanism` (any symmetric region), :class:`TradeoffMechanism` (any symmetric trade-off
function).

A privacy filter (:mod:`lpdp.filters`) sees the same objects through their one-step loss laws.

A filter needs, for an ordered neighbouring pair ``(x, x')`` and a request, the law of the output and the
law of the one-step privacy loss ``L = log P_x(Y) / P_x'(Y)`` with ``Y ~ P_x`` (filter paper, Sec. II). A
request maps each database of the filter's (finite) domain to the mechanism's *input*; the mechanism
only sees inputs. Every mechanism gives

* ``sample(value, rng, size=None)``: draw outputs for input ``value``;
* ``log_density(y, value)``: ``log P_value(y)`` (vectorised over ``y``);
* ``loss_tail(c, value, other)``: ``P(L > c)``;
* ``loss_quantile(a, value, other)``: the exact generalised inverse ``u(a) = inf{c : P(L > c) <= a}``
  (filter paper, Alg. 1, Prop. 1), never an interpolated quantile.

History dependence is carried by the (mechanism, request) the analyst submits at each step: the law of
``y_i`` given the past is the mechanism submitted for step ``i``. Finite mechanisms built from a region
(:class:`DPMechanism`, :class:`RegionMechanism`) run in a filter on their dominating pair: inputs ``0`` (P)
and ``1`` (Q), one output per edge of the region.
"""

from __future__ import annotations

import math
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from lpdp._numerics import log1mexp
from lpdp._validate import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_weights,
)
from lpdp.errors import ParameterError
from lpdp.pld import LossLaw
from lpdp.pld import mixture as mixture_law
from lpdp.region import PrivacyRegion
from lpdp.tradeoff import TradeoffFunction, check_laplace, check_mu, gaussian_delta
from lpdp.tradeoff import gaussian as gaussian_tradeoff
from lpdp.tradeoff import laplace as laplace_tradeoff

__all__ = [
    "Mechanism",
    "Request",
    "GaussianMechanism",
    "LaplaceMechanism",
    "FiniteMechanism",
    "SampledMechanism",
    "MixtureMechanism",
    "mixture",
    "DPMechanism",
    "RegionMechanism",
    "TradeoffMechanism",
    "randomized_response",
    "pure",
    "binary_erasure",
    "mechanism_from_dict",
    "pair_increments",
]


def pair_increments(logp: Mapping[Any, np.ndarray], pairs: Sequence[tuple[Any, Any]]) -> np.ndarray:
    """``logp[a] - logp[b]`` for each pair (first axis); an output impossible under both gives
    ``+inf`` (the filters' conservative convention)."""
    cols = []
    with np.errstate(invalid="ignore"):
        for a, b in pairs:
            d = logp[a] - logp[b]
            cols.append(np.where(np.isnan(d), np.inf, d))
    return np.stack(cols)


def _distance(value: Any, other: Any, sensitivity: float, name: str) -> float:
    """``|value - other|``, refused above the mechanism's sensitivity (1e-12 relative slack)."""
    d = abs(float(value) - float(other))
    if d > sensitivity * (1 + 1e-12):
        raise ParameterError(f"inputs {value!r} and {other!r} are {d} apart: the {name} mechanism's "
                             f"sensitivity={sensitivity} allows at most that")
    return d


def _check_level(a: float) -> float:
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
        return cls(data["name"], {_hashable(k): v for k, v in data["values"]})


def _hashable(x: Any) -> Hashable:
    return tuple(_hashable(v) for v in x) if isinstance(x, list) else x


def _gaussian_quantile(a: float, mu: float) -> float:
    # u(a) = μ²/2 + μ Φ^{-1}(1-a), written -ndtri(a) so tiny a keeps every digit.
    if a >= 1.0:
        return -math.inf
    if mu == 0.0:
        return 0.0
    return mu * mu / 2.0 - mu * float(special.ndtri(a))


@dataclass(frozen=True)
class GaussianMechanism(Mechanism):
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

    @property
    def pair(self) -> tuple[float, float]:
        """The inputs ``(sensitivity, 0)`` of a worst-case neighbouring pair (its dominating pair)."""
        return (self.sensitivity, 0.0)

    def _mu(self, value: Any, other: Any) -> float:
        return _distance(value, other, self.sensitivity, "Gaussian") / self.sigma

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
        return _gaussian_quantile(_check_level(a), self._mu(value, other))

    def to_dict(self) -> dict[str, Any]:
        return {"type": "gaussian", "sigma": self.sigma, "sensitivity": self.sensitivity}

    def tradeoff(self) -> TradeoffFunction:
        """``G_μ`` with ``μ = sensitivity/σ`` (Dong, Roth and Su, 2022, Theorem 2.7)."""
        return gaussian_tradeoff(self.mu)

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        """Tight ``δ(ε)`` of one release (Balle and Wang, 2018, Theorem 8), vectorised.

        Examples
        --------
        >>> round(float(GaussianMechanism(1.0).delta(1.0)), 6)
        0.126937
        """
        return gaussian_delta(epsilon, self.mu)

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

        return LossLaw(log_sf=log_sf, log_cdf=log_cdf)


@dataclass(frozen=True)
class LaplaceMechanism(Mechanism):
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

    @property
    def pair(self) -> tuple[float, float]:
        """The inputs ``(sensitivity, 0)`` of a worst-case neighbouring pair (its dominating pair)."""
        return (self.sensitivity, 0.0)

    def _r(self, value: Any, other: Any) -> float:
        return _distance(value, other, self.sensitivity, "Laplace") / self.scale

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
        a = _check_level(a)
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

    def to_dict(self) -> dict[str, Any]:
        return {"type": "laplace", "scale": self.scale, "sensitivity": self.sensitivity}

    def tradeoff(self) -> TradeoffFunction:
        """The exact Laplace trade-off function with ``ε = sensitivity/scale`` (Dong, Roth and Su)."""
        return laplace_tradeoff(self.scale / self.sensitivity)

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

        return LossLaw(np.array([r, -r]), np.array([log_half, log_half - r]), log_sf=log_sf,
                       log_cdf=log_cdf, support=(-r, r))


@dataclass(frozen=True)
class FiniteMechanism(Mechanism):
    """A mechanism with finitely many outputs, given as one probability row per input.

    Parameters
    ----------
    table : mapping
        ``input -> probabilities`` of the outputs (each row non-negative, summing to 1).
    outputs : sequence, optional
        Output labels (JSON scalars); default ``0 .. K-1``.
    pair : (input, input), optional
        The neighbouring pair the accountant composes (:meth:`region`, :meth:`loss_law`); default: the
        two inputs when the table has exactly two rows.

    The loss law of a pair is an exact PMF (:meth:`loss_pmf`); outputs impossible under ``other`` give
    the atom ``+inf``. :meth:`from_pair` builds the mechanism from the output distributions on one
    neighbouring pair.

    Examples
    --------
    >>> m = FiniteMechanism({0: [0.75, 0.25], 1: [0.25, 0.75]})
    >>> m.loss_pmf(0, 1)
    (array([-1.09861229,  1.09861229]), array([0.25, 0.75]))
    """

    table: tuple[tuple[Hashable, tuple[float, ...]], ...]
    outputs: tuple[Hashable, ...]
    _rows: dict[Hashable, np.ndarray] = field(default_factory=dict, init=False, repr=False,
                                              compare=False, hash=False)
    _index: dict[Hashable, int] = field(default_factory=dict, init=False, repr=False, compare=False,
                                        hash=False)
    _plain_labels: bool = field(default=True, init=False, repr=False, compare=False, hash=False)
    _pair: tuple[Hashable, Hashable] | None = field(default=None, init=False, repr=False, compare=False,
                                                    hash=False)

    def __init__(self, table: Mapping[Hashable, Sequence[float]],
                 outputs: Sequence[Hashable] | None = None, *,
                 pair: tuple[Hashable, Hashable] | None = None) -> None:
        if len(table) == 0:
            raise ParameterError("table={}: at least one input row is needed")
        rows = {v: check_weights(p, name=f"table[{v!r}]") for v, p in table.items()}
        sizes = {r.size for r in rows.values()}
        if len(sizes) != 1:
            raise ParameterError(f"table: rows have different lengths {sorted(sizes)}")
        k = sizes.pop()
        labels = tuple(range(k)) if outputs is None else tuple(outputs)
        if len(labels) != k or len(set(labels)) != k:
            raise ParameterError(f"outputs={labels!r}: need {k} distinct labels, one per column")
        object.__setattr__(self, "table", tuple((v, tuple(r.tolist())) for v, r in rows.items()))
        object.__setattr__(self, "outputs", labels)
        object.__setattr__(self, "_rows", rows)
        object.__setattr__(self, "_index", {y: i for i, y in enumerate(labels)})
        object.__setattr__(self, "_plain_labels", labels == tuple(range(k)))
        if pair is None and len(rows) == 2:
            pair = tuple(rows)
        if pair is not None:
            if not (isinstance(pair, tuple | list) and len(pair) == 2 and pair[0] != pair[1]):
                raise ParameterError(f"pair={pair!r}: must be two different inputs of the table")
            for v in pair:
                self._row(v)
            pair = (pair[0], pair[1])
        object.__setattr__(self, "_pair", pair)

    @classmethod
    def from_pair(cls, p: Sequence[float], q: Sequence[float]) -> FiniteMechanism:
        """The mechanism with output distribution ``p`` on one input and ``q`` on its neighbour.

        Inputs are ``0`` (``p``) and ``1`` (``q``); outputs ``0 .. K-1``.

        Examples
        --------
        >>> m = FiniteMechanism.from_pair([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
        >>> round(float(m.region().delta(0.0)), 6), m.is_symmetric
        (0.3, True)
        """
        return cls({0: p, 1: q})

    @property
    def pair(self) -> tuple[Hashable, Hashable]:
        """The neighbouring pair ``(value, other)`` the accountant composes."""
        if self._pair is None:
            raise ParameterError(f"pair=None: a table with {len(self._rows)} inputs needs the neighbouring "
                                 "pair to account for, e.g. FiniteMechanism(table, pair=(0, 1))")
        return self._pair

    @property
    def is_finite(self) -> bool:
        return True

    @property
    def is_symmetric(self) -> bool:
        return self.region().is_symmetric

    def region(self) -> PrivacyRegion:
        """The exact region of the pair ``(P, Q) = (row[value], row[other])`` of :attr:`pair`."""
        a, b = self.pair
        return PrivacyRegion.from_pair(self._rows[a], self._rows[b])

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """The exact (discrete) loss law of :attr:`pair`, or of the reversed pair.

        Examples
        --------
        >>> law = FiniteMechanism.from_pair([0.5, 0.5, 0.0], [0.25, 0.5, 0.25]).loss_law()
        >>> law.losses.tolist(), np.exp(law.log_p).tolist()
        ([0.6931471805599453, 0.0], [0.5, 0.5])
        """
        a, b = self.pair[::-1] if reverse else self.pair
        return _region_law(PrivacyRegion.from_pair(self._rows[a], self._rows[b]))

    def _row(self, value: Any) -> np.ndarray:
        try:
            return self._rows[value]
        except KeyError:
            raise ParameterError(f"input {value!r}: not in the mechanism's table "
                                 f"(inputs: {list(self._rows)})") from None

    def probabilities(self, value: Any) -> np.ndarray:
        """The output probabilities for input ``value`` (in the order of :attr:`outputs`)."""
        return self._row(value).copy()

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        cdf = np.cumsum(self._row(value))
        idx = np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right"),
                         len(self.outputs) - 1)
        if size is None:
            return self.outputs[int(idx)]
        return idx if self._plain_labels else np.asarray(self.outputs, dtype=object)[idx]

    def log_density(self, y: Any, value: Any) -> Any:
        with np.errstate(divide="ignore"):
            logp = np.log(self._row(value))
        if np.ndim(y) == 0:
            return float(logp[self._output_index(y)])
        y = np.asarray(y)
        if self._plain_labels and np.issubdtype(y.dtype, np.integer):
            if y.size and (y.min() < 0 or y.max() >= logp.size):
                raise ParameterError(f"outputs: must be in 0..{logp.size - 1}")
            return logp[y]
        return logp[np.fromiter((self._output_index(v) for v in np.ravel(y)), dtype=int)].reshape(
            np.shape(y))

    def _output_index(self, y: Any) -> int:
        try:
            return self._index[y]
        except (KeyError, TypeError):
            raise ParameterError(f"output {y!r}: not one of the mechanism's outputs "
                                 f"{list(self.outputs)}") from None

    def losses(self, value: Any, other: Any) -> np.ndarray:
        """The loss of each output (``+inf`` where impossible under ``other``, ``nan`` where impossible
        under ``value``)."""
        p, q = self._row(value), self._row(other)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(p) - np.log(q)
        out[p == 0] = np.nan
        return out

    def loss_pmf(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
        """Distinct losses (ascending) and their probabilities under ``value``; exact, atoms merged."""
        p = self._row(value)
        loss = self.losses(value, other)
        keep = p > 0
        values, inverse = np.unique(loss[keep], return_inverse=True)
        return values, np.bincount(inverse, weights=p[keep], minlength=values.size)

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        values, probs = self.loss_pmf(value, other)
        return min(1.0, math.fsum(probs[values > c]))

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        a = _check_level(a)
        if a >= 1.0:
            return -math.inf
        values, probs = self.loss_pmf(value, other)
        # Walk down from the largest atom; P(L > values[j]) is the mass strictly above it.
        above = 0.0
        best = math.inf
        for j in range(values.size - 1, -1, -1):
            if above > a:
                break
            best = float(values[j])
            above = math.fsum((above, float(probs[j])))
        return best

    def to_dict(self) -> dict[str, Any]:
        out = {"type": "finite", "table": [[v, list(p)] for v, p in self.table],
               "outputs": list(self.outputs)}
        if self._pair is not None and len(self.table) > 2:
            out["pair"] = list(self._pair)
        return out


def _region_law(region: PrivacyRegion) -> LossLaw:
    """The discrete loss law under P of a region's dominating pair."""
    return LossLaw(np.array(region.losses), np.array(region.log_p), region.log_p_inf)


def randomized_response(categories: int, epsilon: float) -> FiniteMechanism:
    """k-ary randomized response: report the input with probability ``e^ε / (e^ε + k - 1)``, else one
    of the other ``k - 1`` values uniformly (Warner, 1965; Kairouz, Oh and Viswanath, 2016). Inputs and
    outputs are ``0 .. k-1``; every pair of inputs is alike, and the accountant uses ``(0, 1)``.

    Examples
    --------
    >>> m = randomized_response(2, math.log(3.0))
    >>> m.probabilities(0)
    array([0.75, 0.25])
    >>> round(float(randomized_response(4, 0.7).region().delta(0.7)), 12)
    0.0
    """
    k = check_int(categories, "categories", minimum=2)
    epsilon = check_epsilon(epsilon, "epsilon")
    keep = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    other = (1.0 - keep) / (k - 1)
    return FiniteMechanism({v: [keep if y == v else other for y in range(k)] for v in range(k)}, pair=(0, 1))


def binary_erasure(p: float) -> FiniteMechanism:
    """Binary erasure (filter paper, Sec. II-B): ``Y = X`` with probability ``p``, else the symbol ``"?"``.

    Examples
    --------
    >>> binary_erasure(0.001).loss_quantile(0.001, 0, 1)   # P(L > 0) = p <= 0.001
    0.0
    """
    p = check_probability(p, "p")
    return FiniteMechanism({0: [p, 0.0, 1.0 - p], 1: [0.0, p, 1.0 - p]}, outputs=(0, 1, "?"))


def _log_or_none(x: float) -> float | None:
    return None if x == -math.inf else float(x)


class RegionMechanism(FiniteMechanism):
    """The mechanism of any :class:`~lpdp.PrivacyRegion`: its finite dominating pair.

    :meth:`region` returns the region itself (exact log masses). As a filter mechanism it has inputs
    ``0`` (P) and ``1`` (Q) and one output per edge (plus the outputs of loss ``±inf``), with the masses
    rounded to floats.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> m = RegionMechanism(PrivacyRegion.from_dp(1.0, 0.1))
    >>> m.probabilities(0).round(6).tolist()
    [0.1, 0.657953, 0.242047, 0.0]
    >>> round(m.region().delta(1.0), 12)
    0.1
    """

    def __init__(self, region: PrivacyRegion) -> None:
        if not isinstance(region, PrivacyRegion):
            raise ParameterError(f"region={region!r}: must be a PrivacyRegion")
        p = np.concatenate(([math.exp(region.log_p_inf)], np.exp(region.log_p), [0.0]))
        q = np.concatenate(([0.0], np.exp(region.log_q), [math.exp(region.log_q_ninf)]))
        used = (p > 0) | (q > 0)
        p, q = p[used], q[used]
        super().__init__({0: (p / p.sum()).tolist(), 1: (q / q.sum()).tolist()})
        object.__setattr__(self, "_region", region)

    def __repr__(self) -> str:
        return f"RegionMechanism({self._region!r})"

    def region(self) -> PrivacyRegion:
        return self._region

    def loss_law(self, reverse: bool = False) -> LossLaw:
        r = self._region
        if not reverse:
            return _region_law(r)
        return LossLaw(-r.losses[::-1], np.array(r.log_q[::-1]), r.log_q_ninf)

    def to_dict(self) -> dict[str, Any]:
        r = self._region
        return {"type": "region", "losses": r.losses.tolist(), "log_p": r.log_p.tolist(),
                "log_q": r.log_q.tolist(), "log_p_inf": _log_or_none(r.log_p_inf),
                "log_q_ninf": _log_or_none(r.log_q_ninf)}


class DPMechanism(RegionMechanism):
    """A mechanism meeting several (ε, δ) guarantees at once: its dominating pair is the pair of the
    region ``∩_j R(ε_j, δ_j)`` (Kairouz, Oh and Viswanath, 2017, Theorem 2.1, and its intersection form).

    Parameters
    ----------
    constraints : iterable of (float, float)
        The ``(ε_j, δ_j)`` pairs (at least one); ``[(ε, 0)]`` is pure ε-DP (:func:`pure`).

    Examples
    --------
    >>> m = DPMechanism([(1.0, 0.0), (0.5, 0.1)])
    >>> m.constraints
    ((1.0, 0.0), (0.5, 0.1))
    >>> round(float(m.region().delta(0.5)), 6)
    0.1
    """

    def __init__(self, constraints: Iterable[tuple[float, float]]) -> None:
        pairs = []
        for i, pair in enumerate(list(constraints)):
            try:
                e, d = pair
            except (TypeError, ValueError):
                raise ParameterError(f"constraints[{i}]={pair!r}: must be an (epsilon, delta) pair") from None
            pairs.append((check_epsilon(e, f"constraints[{i}].epsilon"),
                          check_delta(d, f"constraints[{i}].delta")))
        super().__init__(PrivacyRegion.from_constraints(pairs))
        object.__setattr__(self, "constraints", tuple(pairs))

    def __repr__(self) -> str:
        return f"DPMechanism({list(self.constraints)!r})"

    @property
    def is_symmetric(self) -> bool:
        return True

    @property
    def is_pure(self) -> bool:
        """Whether the mechanism is given by one pure constraint ``(ε, 0)``."""
        return len(self.constraints) == 1 and self.constraints[0][1] == 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"type": "dp", "constraints": [list(c) for c in self.constraints]}


def pure(epsilon: float) -> DPMechanism:
    """A pure ε-DP mechanism (its dominating pair is the ε binary randomized response).

    Examples
    --------
    >>> pure(0.5)
    DPMechanism([(0.5, 0.0)])
    """
    return DPMechanism([(check_epsilon(epsilon, "epsilon"), 0.0)])


class TradeoffMechanism(Mechanism):
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

    def _no_sampler(self) -> ParameterError:
        return ParameterError(f"{self!r}: a trade-off mechanism has no sampler or densities; filters need "
                              "a GaussianMechanism, LaplaceMechanism or finite mechanism")

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        raise self._no_sampler()

    def log_density(self, y: Any, value: Any) -> Any:
        raise self._no_sampler()

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        raise self._no_sampler()

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        raise self._no_sampler()

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tradeoff", "name": self.f.name}


class SampledMechanism(Mechanism):
    """A black-box mechanism known only through a sampler and a log-density.

    Tail probabilities and quantiles are Monte Carlo estimates from ``samples`` draws, each rounded to
    the conservative side at the stated ``confidence``: ``loss_tail`` is a one-sided Clopper–Pearson
    upper bound, and ``loss_quantile(a)`` is the order statistic ``L_(k)`` (k-th largest) with the
    largest ``k`` such that ``P(Bin(n, a) <= k - 1) <= 1 - confidence``, which is ``>= u(a)`` with
    probability at least ``confidence`` (because ``P(L >= u(a)) >= a``). When no such ``k`` exists the
    answer is ``+inf`` (not enough samples to certify the level). Each estimate holds at its own
    confidence level (a filter using m of them holds with probability >= 1 - m(1 - confidence)).
    Draws are seeded by ``seed`` and the pair and cached, so decisions are reproducible.

    Parameters
    ----------
    sampler : callable
        ``sampler(value, rng, size) -> array`` of outputs.
    log_density : callable
        ``log_density(y_array, value) -> array`` of ``log P_value(y)``.
    name : str
        A label (transcripts keep it; replay needs the object passed back in).
    samples : int
        Draws per pair.
    confidence : float
        Confidence level of every estimate, in (0, 1).
    seed : int
        Seed of the draws.

    Examples
    --------
    >>> g = GaussianMechanism(sigma=1.0)
    >>> m = SampledMechanism(g.sample, g.log_density, name="gauss", samples=20_000, seed=1)
    >>> m.loss_quantile(0.01, 1.0, 0.0) >= g.loss_quantile(0.01, 1.0, 0.0) - 0.2
    True
    """

    def __init__(self, sampler: Callable[..., Any], log_density: Callable[[Any, Any], Any], *,
                 name: str, samples: int = 100_000, confidence: float = 0.99, seed: int = 0) -> None:
        self.sampler = sampler
        self.log_density_fn = log_density
        self.name = name
        self.samples = check_int(samples, "samples", minimum=1)
        self.confidence = check_probability(confidence, "confidence", open_left=True, open_right=True)
        self.seed = check_int(seed, "seed", minimum=0)
        self._cache: dict[tuple[Any, Any], np.ndarray] = {}

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        if size is None:
            return np.asarray(self.sampler(value, rng, 1))[0]
        return np.asarray(self.sampler(value, rng, size))

    def log_density(self, y: Any, value: Any) -> Any:
        return self.log_density_fn(y, value)

    def _losses(self, value: Any, other: Any) -> np.ndarray:
        key = (value, other)
        if key not in self._cache:
            rng = np.random.default_rng([self.seed, zlib.crc32(repr(key).encode())])
            y = self.sample(value, rng, self.samples)
            with np.errstate(divide="ignore", invalid="ignore"):
                loss = np.asarray(self.log_density(y, value), float) - np.asarray(
                    self.log_density(y, other), float)
            self._cache[key] = np.sort(np.nan_to_num(loss, nan=math.inf))[::-1]
        return self._cache[key]

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        loss = self._losses(value, other)
        k = int(np.count_nonzero(loss > c))
        if k == loss.size:
            return 1.0
        from scipy import stats  # lazily: scipy.stats costs ~0.3 s of CLI start-up

        return float(stats.beta.ppf(self.confidence, k + 1, loss.size - k))

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        a = _check_level(a)
        if a >= 1.0:
            return -math.inf
        loss = self._losses(value, other)
        n, alpha = loss.size, 1.0 - self.confidence
        from scipy import stats

        j = int(stats.binom.ppf(alpha, n, a))
        if stats.binom.cdf(j, n, a) > alpha:
            j -= 1
        return math.inf if j < 0 else float(loss[min(j, n - 1)])

    def to_dict(self) -> dict[str, Any]:
        return {"type": "sampled", "name": self.name}


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


class MixtureMechanism(Mechanism):
    """One i.i.d. round of a mix: step ``j`` (a mechanism and the request giving its inputs) runs with
    probability ``w_j``, drawn independently of the data, and the round releases ``(j, y)``.

    The index is public, so the round's loss law is the weighted mixture of the steps' laws
    (:func:`lpdp.pld.mixture`) and its privacy region the weighted Minkowski sum of theirs (Theorem 2 of
    Cadir, Najib and Shkel). ``loss_quantile`` is the exact generalised inverse of the mixed tail,
    found by bisection on the exact tails to 1e-13 relative and rounded up (the conservative side for a
filter), or an atom of a finite step exactly.
    Use :func:`mixture` to build one: it returns a :class:`FiniteMechanism` when every step is finite.

    Parameters
    ----------
    steps : sequence of (Mechanism, Request or None)
        The steps; a request maps each input of the mixture to the step's input (``None``: the same).
    weights : sequence of float
        Positive weights (normalised to sum to one).

    Examples
    --------
    >>> g = GaussianMechanism(1.0)
    >>> m = MixtureMechanism([(g, None), (LaplaceMechanism(1.0), None)], [1, 1])
    >>> t = m.loss_tail(0.0, 1.0, 0.0)
    >>> abs(t - (g.loss_tail(0.0, 1.0, 0.0) + 1 - 0.5 * math.exp(-0.5)) / 2) < 1e-15
    True
    """

    def __init__(self, steps: Sequence[tuple[Mechanism, Request | None]],
                 weights: Sequence[float]) -> None:
        steps = [tuple(s) for s in steps]
        if not steps:
            raise ParameterError("steps=[]: a mixture needs at least one (mechanism, request) step")
        for i, s in enumerate(steps):
            if len(s) != 2 or not isinstance(s[0], Mechanism) or not (
                    s[1] is None or isinstance(s[1], Request)):
                raise ParameterError(f"steps[{i}]={s!r}: must be a (Mechanism, Request or None) pair")
        w = np.array([check_positive(x, f"weights[{i}]") for i, x in enumerate(weights)], dtype=float)
        if w.size != len(steps):
            raise ParameterError(f"weights: {w.size} weights for {len(steps)} steps")
        self.steps: tuple[Step, ...] = tuple((m, r) for m, r in steps)
        self.weights: tuple[float, ...] = tuple((w / w.sum()).tolist())
        self._tails: dict[tuple[Any, Any], tuple[Callable[[float], float], np.ndarray]] = {}

    def __repr__(self) -> str:
        return f"MixtureMechanism({list(self.steps)!r}, {list(self.weights)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MixtureMechanism) and (self.steps, self.weights) == (
            other.steps, other.weights)

    def __hash__(self) -> int:
        return hash((self.steps, self.weights))

    @property
    def is_symmetric(self) -> bool:
        return all(m.is_symmetric for m, _ in self.steps)

    def loss_law(self, reverse: bool = False) -> LossLaw:
        """The weighted mixture of the steps' loss laws (:func:`lpdp.pld.mixture`)."""
        return mixture_law([m.loss_law(reverse) for m, _ in self.steps], self.weights)

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        """``(j, y)`` (``size=None``), else a list of ``size`` such pairs."""
        j = rng.choice(len(self.steps), p=self.weights, size=size)
        if size is None:
            m, r = self.steps[int(j)]
            return (int(j), m.sample(request_input(r, value), rng))
        out: list[Any] = [None] * int(np.size(j))
        for i, (m, r) in enumerate(self.steps):
            idx = np.flatnonzero(j == i)
            for k, y in zip(idx, np.asarray(m.sample(request_input(r, value), rng, idx.size)), strict=True):
                out[k] = (i, y.item() if isinstance(y, np.generic) else y)
        return out

    def sample_losses(self, value: Any, pairs: Sequence[tuple[Any, Any]], rng: np.random.Generator,
                      size: tuple[int, ...]) -> np.ndarray:
        j = rng.choice(len(self.steps), p=self.weights, size=size)
        out = np.empty((len(pairs), *j.shape))
        for i, (m, r) in enumerate(self.steps):
            hit = j == i
            n = int(np.count_nonzero(hit))
            if n:
                inputs = [(request_input(r, a), request_input(r, b)) for a, b in pairs]
                out[:, hit] = m.sample_losses(request_input(r, value), inputs, rng, (n,))
        return out

    def log_density(self, y: Any, value: Any) -> Any:
        """``log w_j + log P_j(y_j)`` for an output ``(j, y_j)`` (a list of outputs gives an array)."""
        if isinstance(y, (tuple, list)) and len(y) == 2 and not isinstance(y[0], (tuple, list)):
            j, yj = y
            if not (isinstance(j, (int, np.integer)) and 0 <= j < len(self.steps)):
                raise ParameterError(f"output {y!r}: the step index must be in 0..{len(self.steps) - 1}")
            m, r = self.steps[int(j)]
            with np.errstate(divide="ignore"):
                return math.log(self.weights[int(j)]) + float(m.log_density(yj, request_input(r, value)))
        return np.array([self.log_density(tuple(v), value) for v in y], dtype=float)

    def _tail_fn(self, value: Any, other: Any) -> tuple[Callable[[float], float], np.ndarray]:
        """``c -> P(L > c)`` of the pair, and the finite steps' loss atoms (ascending); cached."""
        key = (value, other)
        if key not in self._tails:
            atoms, masses, rest = [], [], []
            for (m, r), w in zip(self.steps, self.weights, strict=True):
                x, y = request_input(r, value), request_input(r, other)
                if isinstance(m, FiniteMechanism):
                    v, p = m.loss_pmf(x, y)
                    atoms.append(v)
                    masses.append(w * p)
                else:
                    rest.append((w, m, x, y))
            v = np.concatenate(atoms) if atoms else np.zeros(0)
            order = np.argsort(v, kind="stable")
            v = v[order]
            p = (np.concatenate(masses) if masses else np.zeros(0))[order]
            above = [math.fsum(p[i:]) for i in range(v.size)] + [0.0]  # mass strictly above v[i-1]

            def tail(c: float) -> float:
                parts = [w * m.loss_tail(c, x, y) for w, m, x, y in rest]
                return min(1.0, math.fsum([above[int(np.searchsorted(v, c, side="right"))], *parts]))

            self._tails[key] = (tail, v)
        return self._tails[key]

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        return self._tail_fn(value, other)[0](c)

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        a = _check_level(a)
        if a >= 1.0:
            return -math.inf
        tail, atoms = self._tail_fn(value, other)
        hi = max(m.loss_quantile(a, request_input(r, value), request_input(r, other))
                 for m, r in self.steps)  # every step's tail is <= a there, so the mixed tail is too
        if not math.isfinite(hi):
            return hi
        while tail(hi) > a:  # rounding in the parts: step up to a certified point
            hi += max(1.0, abs(hi)) * 1e-13
        gap, lo = 1.0, hi - 1.0
        while tail(lo) <= a:  # a point below the quantile
            gap *= 2.0
            lo = hi - gap
            if lo < -1e300:
                return -math.inf
        while hi - lo > 1e-13 * max(1.0, abs(hi)):  # tail(lo) > a >= tail(hi)
            mid = lo + (hi - lo) / 2.0
            lo, hi = (lo, mid) if tail(mid) <= a else (mid, hi)
        inside = atoms[(atoms > lo) & (atoms < hi)]  # the infimum may be an atom of a finite step
        return next((float(x) for x in inside if tail(float(x)) <= a), hi)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "mixture", "weights": list(self.weights),
                "steps": [{"mechanism": m.to_dict(), "request": None if r is None else r.to_dict()}
                          for m, r in self.steps]}


def mixture(steps: Sequence[tuple[Mechanism, Request | None]], weights: Sequence[float]) -> Mechanism:
    """One i.i.d. round that runs step ``j`` with probability ``w_j`` (drawn independently of the data)
    and releases ``(j, y)``: a :class:`FiniteMechanism` (outputs ``0 .. K-1``, step by step) when every
    step is finite, so the filters' exact audits apply, else a :class:`MixtureMechanism`.

    Parameters
    ----------
    steps : sequence of (Mechanism, Request or None)
        The steps; a request maps each input of the round to the step's input.
    weights : sequence of float
        Positive weights (normalised to sum to one), e.g. how often each step runs.

    Examples
    --------
    >>> rr = randomized_response(2, math.log(3.0))
    >>> m = mixture([(rr, None), (pure(1.0), None)], [3, 1])
    >>> m.probabilities(0).round(4).tolist()
    [0.5625, 0.1875, 0.1828, 0.0672]
    """
    mix = MixtureMechanism(steps, weights)
    if not all(isinstance(m, FiniteMechanism) for m, _ in mix.steps):
        return mix
    inputs = list(dict.fromkeys(v for m, r in mix.steps for v in (
        [k for k, _ in m.table] if r is None else [k for k, _ in r.values])))
    table = {}
    for v in inputs:
        row = []
        for (m, r), w in zip(mix.steps, mix.weights, strict=True):
            row.extend((w * m.probabilities(request_input(r, v))).tolist())
        table[v] = row
    return FiniteMechanism(table)


def mechanism_from_dict(data: Mapping[str, Any],
                        named: Mapping[str, Mechanism] | None = None) -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` data (``named`` supplies sampled ones).

    Examples
    --------
    >>> mechanism_from_dict({"type": "gaussian", "sigma": 2.0, "sensitivity": 1.0})
    GaussianMechanism(sigma=2.0, sensitivity=1.0)
    """
    kind = data.get("type")
    if kind == "gaussian":
        return GaussianMechanism(data["sigma"], data["sensitivity"])
    if kind == "laplace":
        return LaplaceMechanism(data["scale"], data["sensitivity"])
    if kind == "finite":
        pair = data.get("pair")
        return FiniteMechanism({_hashable(v): p for v, p in data["table"]},
                               [_hashable(y) for y in data["outputs"]],
                               pair=None if pair is None else tuple(_hashable(v) for v in pair))
    if kind == "dp":
        return DPMechanism([tuple(c) for c in data["constraints"]])
    if kind == "region":
        def log(x: float | None) -> float:
            return -math.inf if x is None else float(x)

        return RegionMechanism(PrivacyRegion.from_log_masses(
            data["losses"], data["log_p"], data["log_q"], log_p_inf=log(data["log_p_inf"]),
            log_q_ninf=log(data["log_q_ninf"]), check_total=False))
    if kind == "mixture":
        return MixtureMechanism([(mechanism_from_dict(d["mechanism"], named),
                                  None if d["request"] is None else Request.from_dict(d["request"]))
                                 for d in data["steps"]], data["weights"])
    if kind in ("sampled", "tradeoff"):
        if named is None or data["name"] not in named:
            raise ParameterError(f"mechanism {data['name']!r}: a {kind} mechanism cannot be rebuilt "
                                 "from data; pass it in `mechanisms={name: mechanism}`")
        return named[data["name"]]
    raise ParameterError(f"mechanism type={kind!r}: must be one of gaussian, laplace, finite, dp, region, "
                         "mixture, tradeoff, sampled")
