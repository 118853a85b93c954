"""One i.i.d. round of a mix of steps with a public index (:class:`MixtureMechanism`, :func:`mixture`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lpdp import _special as special
from lpdp._numerics import UNIT_ROUNDOFF
from lpdp._search import bisect
from lpdp._validate import check_positive
from lpdp.errors import ParameterError
from lpdp.mechanisms.base import (
    Inputs,
    Mechanism,
    Request,
    Step,
    check_level,
    request_input,
    round_up_ulps,
    step_to_dict,
)
from lpdp.mechanisms.finite import FiniteMechanism
from lpdp.pld import LossLaw
from lpdp.pld import mixture as mixture_law

__all__ = ["MixtureMechanism", "mixture"]

#: Unit roundoff of a double.
_U = float(np.finfo(float).eps) / 2.0


class MixtureMechanism(Mechanism):
    """One i.i.d. round of a mix: step ``j`` (a mechanism and the request giving its inputs) runs with
    probability ``w_j``, drawn independently of the data, and the round releases ``(j, y)``.

    The index is public, so the round's loss law is the weighted mixture of the steps' laws
    (:func:`lpdp.pld.mixture`) and its privacy region the weighted Minkowski sum of theirs (Lemma 1 and
    Corollary 1 of Cadir, Najib and Shkel). ``loss_quantile`` is the exact generalised inverse of the mixed
    tail, found by bisection on the exact tails to 1e-13 relative and rounded up (the conservative side
    for a filter), or an atom of a finite step exactly.
    Use :func:`mixture` to build one: it returns a :class:`FiniteMechanism` when every step is finite.

    Parameters
    ----------
    steps : sequence of (Mechanism, Request or None)
        The steps; a request maps each input of the mixture to the step's input (``None``: the same).
    weights : sequence of float
        Positive weights (normalised to sum to one).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism
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
        a = check_level(a)
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
        lo, hi = bisect(lambda c: tail(c) > a, lo, hi, rtol=1e-13)     # tail(lo) > a >= tail(hi)
        inside = atoms[(atoms > lo) & (atoms < hi)]  # the infimum may be an atom of a finite step
        return next((float(x) for x in inside if tail(float(x)) <= a), hi)

    # ------------------------------------------------------------------ mechanism level
    def parts(self, inputs: Inputs | None = None) -> list[tuple[float, Mechanism, list[tuple[Any, Any]]]]:
        """``(w_j, step mechanism, its input pairs)``, the pairs mapped by each step's request."""
        pairs = list(inputs or self.default_pairs())
        return [(w, m, [(request_input(r, a), request_input(r, b)) for a, b in pairs])
                for (m, r), w in zip(self.steps, self.weights, strict=True)]

    def round_delta(self, epsilon: float, inputs: Inputs | None = None) -> float:
        """``Σ_j w_j δ_j(ε)``, rounded up (exact for symmetric steps, an upper bound otherwise)."""
        total = math.fsum(w * m.round_delta(epsilon, ins) for w, m, ins in self.parts(inputs))
        return min(1.0, total * (1.0 + 4.0 * len(self.steps) * _U))

    def round_epsilon(self, delta: float, inputs: Inputs | None = None) -> float:
        """Bisection on the non-increasing :meth:`round_delta`, answering the upper end."""
        def over(e: float) -> bool:
            return self.round_delta(e, inputs) > delta

        if not over(0.0):
            return 0.0
        hi = max(m.round_epsilon(delta, ins) for _, m, ins in self.parts(inputs))
        if not math.isfinite(hi):
            return hi
        return bisect(over, 0.0, hi, rtol=1e-13)[1]

    def renyi(self, alpha: float, inputs: Inputs | None = None) -> float:
        """``log(Σ_j w_j e^{(α-1) D_{α,j}}) / (α-1)``, rounded up."""
        a = alpha
        terms = [(a - 1) * m.renyi(a, ins) + math.log(w) for w, m, ins in self.parts(inputs) if w > 0]
        if any(t == math.inf for t in terms):
            return math.inf
        # the log of a sum near 1 cancels: widened by 8u of the terms' size (each a product, a log, a sum)
        total = float(special.logsumexp(terms)) + 8 * UNIT_ROUNDOFF * (max(map(abs, terms)) + len(terms) + 1)
        return max(round_up_ulps(total / (a - 1)), 0.0)

    def zcdp_rho(self, inputs: Inputs | None = None) -> float:
        """``max_j ρ_j`` (``D_α <= α max_j ρ_j``, tight as α grows)."""
        return max(m.zcdp_rho(ins) for _, m, ins in self.parts(inputs))

    def pair_mechanism(self, value: Any, other: Any) -> MixtureMechanism:
        """Itself (the accountant composes its mixed loss law)."""
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "mixture", "weights": list(self.weights),
                "components": [step_to_dict(s) for s in self.steps]}

    @property
    def label(self) -> str:
        return "an i.i.d. mix of " + ", ".join(m.label for m, _ in self.steps)


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
    >>> from lpdp.mechanisms import pure, randomized_response
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
