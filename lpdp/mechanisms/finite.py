"""Finite mechanisms: output tables, randomized response, binary erasure, and the mechanisms of privacy
regions and (ε, δ) constraints (their finite dominating pairs)."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound
from lpdp._validate import check_delta, check_epsilon, check_int, check_probability, check_weights
from lpdp.errors import NotApplicableError, ParameterError
from lpdp.mechanisms.base import Inputs, Mechanism, check_level, round_up_ulps
from lpdp.pld import LossLaw
from lpdp.region import PrivacyRegion

__all__ = ["FiniteMechanism", "RandomizedResponse", "randomized_response", "binary_erasure",
           "RegionMechanism",
           "DPMechanism", "pure"]


@dataclass(frozen=True)
class FiniteMechanism(Mechanism):
    """A mechanism with finitely many outputs, given as one probability row per input.

    Parameters
    ----------
    table : mapping
        ``input -> probabilities`` of the outputs (each row non-negative, summing to 1).
    outputs : sequence, optional
        Output labels (JSON scalars); default ``0 .. K-1``.
    pair : tuple of two inputs, optional
        The neighbouring pair the accountant composes (:meth:`region`, :meth:`loss_law`); default: the
        two inputs when the table has exactly two rows.

    Notes
    -----
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
        a = check_level(a)
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
        out = {"kind": "finite", "table": [[v, list(p)] for v, p in self.table],
               "outputs": list(self.outputs)}
        if self._pair is not None and len(self.table) > 2:
            out["pair"] = list(self._pair)
        return out

    @property
    def label(self) -> str:
        return f"a finite mechanism ({len(self.table)} inputs, {len(self.outputs)} outputs)"

    # ------------------------------------------------------------------ filter face
    @property
    def finite_outputs(self) -> bool:
        return True

    def loss_atoms(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
        return self.loss_pmf(value, other)

    def default_pairs(self) -> tuple[tuple[Hashable, Hashable], ...]:
        """Every pair of inputs (local DP: any two values are neighbours)."""
        keys = [v for v, _ in self.table]
        return tuple((a, b) for i, a in enumerate(keys) for b in keys[i + 1:])

    # ------------------------------------------------------------------ mechanism level
    def pair_region(self, value: Any, other: Any) -> PrivacyRegion:
        """The exact region of the ordered pair of inputs ``(value, other)``."""
        return PrivacyRegion.from_pair(self.probabilities(value), self.probabilities(other))

    def pair_regions(self, inputs: Inputs | None = None) -> list[PrivacyRegion]:
        """The distinct exact regions of every ordered pair of ``inputs`` (default
        :meth:`default_pairs`); cached per mechanism and inputs."""
        # copies of the memoised regions, without other callers' queries (PrivacyRegion.from_constraints)
        return [copy.copy(r) for r in _pair_regions(self, tuple(map(tuple, inputs or self.default_pairs())))]

    def round_delta(self, epsilon: float, inputs: Inputs | None = None) -> float:
        """The exact region of each ordered pair (outcomes impossible under the neighbour count in full)."""
        return max(float(r.delta(epsilon)) for r in self.pair_regions(inputs))

    def round_epsilon(self, delta: float, inputs: Inputs | None = None) -> float:
        return max(float(r.epsilon(delta)) for r in self.pair_regions(inputs))

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``log Σ_y p_y^α q_y^{1-α} / (α-1)``, summed in log space (``inf`` when an outcome possible under
        one input is impossible under the other), certified from above (:func:`region_renyi`)."""
        return max(region_renyi(r, alpha) for r in self.pair_regions(inputs))

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``ε²/2`` with ``ε`` the largest ``|loss|`` when every loss is finite (pure ε-DP; Bun and
        Steinke 2016, Proposition 3.3), certified from above (:func:`region_largest_loss`)."""
        eps = max(region_largest_loss(r) for r in self.pair_regions(inputs))
        if not math.isfinite(eps):
            raise NotApplicableError(f"{self.label} is not zCDP (an outcome is impossible under a neighbour)")
        return round_up_ulps(eps * eps / 2.0)

    def pair_mechanism(self, value: Any, other: Any) -> FiniteMechanism:
        """The two rows as a pair, canonical (sorted by loss), so equal pairs compose once."""
        r = self.pair_region(value, other)
        return FiniteMechanism.from_pair(np.exp(r.log_p).tolist() + [math.exp(r.log_p_inf), 0.0],
                                         np.exp(r.log_q).tolist() + [0.0, math.exp(r.log_q_ninf)])


@functools.lru_cache(maxsize=64)
def _pair_regions(mechanism: FiniteMechanism, inputs: tuple[tuple[Any, Any], ...]) -> list[PrivacyRegion]:
    seen: dict[tuple[bytes, bytes, float], PrivacyRegion] = {}
    for a, b in inputs:
        for v, w in ((a, b), (b, a)):
            r = mechanism.pair_region(v, w)
            seen.setdefault((r.losses.tobytes(), r.log_p.tobytes(), r.log_p_inf), r)
    return list(seen.values())


def region_renyi(r: PrivacyRegion, alpha: float) -> float:
    """``D_α`` of a region's pair, ``log Σ_j p_j e^{(α-1) L_j} / (α-1)`` (``inf`` with an outcome the
    neighbour cannot produce), rounded up by the region's error (each exponent moves by at most
    ``(α-1) η_L + η_ℓ``, so the sum's log by the largest of them) and the sum's own rounding (``8u`` of
    the terms' size, absolute: near α = 1 or equal rows the log of a sum near 1 cancels); left-out atoms
    add at most ``e^{dropped + (α-1) dropped_top}``.

    Examples
    --------
    >>> from lpdp.region import PrivacyRegion
    >>> r = PrivacyRegion.from_pair([0.75, 0.25], [0.25, 0.75])
    >>> d = region_renyi(r, 2.0)            # log(0.75²/0.25 + 0.25²/0.75) = log(7/3)
    >>> 0.8472978603872037 <= d < 0.8472978603872037 + 1e-13
    True
    """
    if r.log_p_inf > -math.inf:
        return math.inf
    top = float(np.max(np.abs(r.losses), initial=0.0))
    err = r.error.absolute(top)
    terms = (alpha - 1) * r.losses + r.log_p
    total = float(np.logaddexp.reduce(terms)) if terms.size else -math.inf
    if err.dropped > -math.inf:
        total = float(np.logaddexp(total, err.dropped + (alpha - 1) * max(err.dropped_top, 0.0)))
    slack = (alpha - 1) * err.loss + float(np.max(np.asarray(err.log_mass(np.abs(r.log_p))), initial=0.0))
    slack += 8 * UNIT_ROUNDOFF * (float(np.max(np.abs(terms), initial=0.0)) + terms.size + 1)
    return max(round_up_ulps((total + slack) / (alpha - 1)), 0.0)


def region_largest_loss(r: PrivacyRegion) -> float:
    """The largest ``|L|`` of a region's pair, rounded up by its loss error (``inf`` when an outcome is
    impossible under one of the pair).

    Examples
    --------
    >>> from lpdp.region import PrivacyRegion
    >>> region_largest_loss(PrivacyRegion.from_pair([0.75, 0.25], [0.25, 0.75])) >= math.log(3.0)
    True
    """
    if r.log_p_inf > -math.inf or r.log_q_ninf > -math.inf:
        return math.inf
    top = float(np.max(np.abs(r.losses), initial=0.0))
    return round_up_ulps(top + r.error.absolute(top).loss)


def _region_law(region: PrivacyRegion) -> LossLaw:
    """The discrete loss law under P of a region's dominating pair."""
    return LossLaw(np.array(region.losses), np.array(region.log_p), region.log_p_inf)


def randomized_response(categories: int, epsilon: float) -> RandomizedResponse:
    """k-ary randomized response: report the input with probability ``e^ε / (e^ε + k - 1)``, else one
    of the other ``k - 1`` values uniformly (Warner, 1965; Kairouz, Oh and Viswanath, 2016). Inputs and
    outputs are ``0 .. k-1``; every pair of inputs is alike, and the accountant uses ``(0, 1)``.

    The dominating pair is built from the parameters in log space, not from rounded probabilities: its
    losses are ``ε``, ``0`` and ``-ε`` exactly and ``log keep = -log1p((k-1) e^{-ε})``, valid for every
    ε up to the float range and every k (:class:`RandomizedResponse`).

    Examples
    --------
    >>> m = randomized_response(2, math.log(3.0))
    >>> m.probabilities(0)
    array([0.75, 0.25])
    >>> round(float(randomized_response(4, 0.7).region().delta(0.7)), 12)
    0.0
    >>> randomized_response(2, 36.5).region().losses.tolist()
    [36.5, -36.5]
    """
    return RandomizedResponse(categories, epsilon)


class RandomizedResponse(FiniteMechanism):
    """k-ary randomized response (:func:`randomized_response`), with its exact log-space pair.

    The table (for sampling and the filters) holds the rounded probabilities; the accountant's face
    (:meth:`region`, :meth:`pair_region`, :meth:`loss_law`) and the losses come from ``(k, ε)``: output
    ``value`` has loss ``ε``, output ``other`` ``-ε`` and every other output ``0``, with
    ``log keep = -log1p((k-1) e^{-ε})`` and ``log other = log keep - ε`` (``exp``, one product and
    ``log1p``: within ``9 u`` of the exact value; docs/reliability.md, "Randomized response").

    Examples
    --------
    >>> m = RandomizedResponse(3, 20.0)
    >>> m.region().losses.tolist()
    [20.0, 0.0, -20.0]
    """

    def __init__(self, categories: int, epsilon: float) -> None:
        k = check_int(categories, "categories", minimum=2)
        eps = check_epsilon(epsilon, "epsilon")
        # the k x k table: ~48 bytes a cell at its peak (rows, checked arrays, the `table` tuples), ~1 µs a
        # cell
        check_budget(f"randomized_response(categories={k}) ({k} x {k} table)", memory_bytes=56.0 * k * k,
                     seconds=seconds_for(50.0 * k * k))
        log_keep = -math.log1p((k - 1) * math.exp(-eps))
        log_other = log_keep - eps
        keep, other = math.exp(log_keep), math.exp(log_other)
        super().__init__({v: [keep if y == v else other for y in range(k)] for v in range(k)}, pair=(0, 1))
        object.__setattr__(self, "categories", k)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "_log_keep", log_keep)
        object.__setattr__(self, "_log_other", log_other)

    def __repr__(self) -> str:
        return f"randomized_response({self.categories}, {self.epsilon!r})"

    def to_dict(self) -> dict[str, Any]:
        """Its parameters (the table is rebuilt from them, in log space)."""
        return {"kind": "randomized_response", "categories": self.categories, "epsilon": self.epsilon}

    def __hash__(self) -> int:
        return hash(("randomized_response", self.categories, self.epsilon))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RandomizedResponse):
            return (self.categories, self.epsilon) == (other.categories, other.epsilon)
        return NotImplemented

    @functools.cached_property
    def _exact_region(self) -> PrivacyRegion:
        u = 2.0 ** -53
        k, eps, lk, lo = self.categories, self.epsilon, self._log_keep, self._log_other
        err = ErrorBound(mass=10 * u, per_nat=2 * u)       # |Δ log keep| <= 9u; the subtraction u |ℓ|
        if eps == 0.0:
            return PrivacyRegion.from_log_masses([0.0], [0.0], [0.0], error=err)
        loss, lp, lq = [eps], [lk], [lo]
        if k > 2:
            mid = lo + math.log(k - 2)                      # the k - 2 outputs of loss 0
            loss, lp, lq = loss + [0.0], lp + [mid], lq + [mid]
            err = err.widened(mass=2 * u)
        return PrivacyRegion.from_log_masses(loss + [-eps], lp + [lo], lq + [lk], check_total=False,
                                             error=err)

    def pair_region(self, value: Any, other: Any) -> PrivacyRegion:
        """The exact log-space region of any two different inputs (all pairs are alike)."""
        self._row(value)
        self._row(other)
        if value == other:
            return super().pair_region(value, other)
        return self._exact_region

    def region(self) -> PrivacyRegion:
        return self._exact_region

    def loss_law(self, reverse: bool = False) -> LossLaw:
        return _region_law(self._exact_region)

    @property
    def is_symmetric(self) -> bool:
        return True

    def losses(self, value: Any, other: Any) -> np.ndarray:
        """``ε`` at output ``value``, ``-ε`` at ``other``, 0 elsewhere (exactly)."""
        self._row(value)
        self._row(other)
        out = np.zeros(self.categories)
        if value != other:
            out[self._output_index(value)] = self.epsilon
            out[self._output_index(other)] = -self.epsilon
        return out

    def loss_pmf(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
        if value == other:
            return super().loss_pmf(value, other)
        r = self._exact_region
        return r.losses[::-1].copy(), np.exp(r.log_p[::-1])


def binary_erasure(p: float) -> FiniteMechanism:
    """Binary erasure (filter paper, Sec. II-B): ``Y = X`` with probability ``p``, else the symbol ``"?"``.

    Examples
    --------
    >>> binary_erasure(0.001).loss_quantile(0.001, 0, 1)   # P(L > 0) = p <= 0.001
    0.0
    """
    p = check_probability(p, "p")
    return FiniteMechanism({0: [p, 0.0, 1.0 - p], 1: [0.0, p, 1.0 - p]}, outputs=(0, 1, "?"))


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
        out = {"kind": "region", "losses": r.losses.tolist(), "log_p": r.log_p.tolist(),
               "log_q": r.log_q.tolist()}
        for key in ("log_p_inf", "log_q_ninf"):     # no mass (-inf) is the default
            if getattr(r, key) > -math.inf:
                out[key] = float(getattr(r, key))
        return out

    label = Mechanism.label       # named by its kind (its table is the region's, not the user's)

    def pair_region(self, value: Any, other: Any) -> PrivacyRegion:
        """The region itself for its own pair ``(0, 1)`` (exact log masses), else from the rows."""
        return self._region if (value, other) == (0, 1) else super().pair_region(value, other)

    def pair_mechanism(self, value: Any, other: Any) -> RegionMechanism:
        """Itself (its region is its dominating pair)."""
        return self


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
        return {"kind": "dp", "constraints": [list(c) for c in self.constraints]}

    def dp_constraints(self) -> tuple[tuple[float, float], ...]:
        return self.constraints

    def additive_budget(self) -> tuple[str, Callable[[float], Mechanism]] | None:
        """ε0 of a pure ε-DP mechanism (composition adds it); ``None`` otherwise."""
        return ("epsilon0", pure) if self.is_pure else None


def pure(epsilon: float) -> DPMechanism:
    """A pure ε-DP mechanism (its dominating pair is the ε binary randomized response).

    Examples
    --------
    >>> pure(0.5)
    DPMechanism([(0.5, 0.0)])
    """
    return DPMechanism([(check_epsilon(epsilon, "epsilon"), 0.0)])
