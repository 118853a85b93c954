"""Monte Carlo audits of a filter on an *adaptive* sequence of finite mechanisms, in chunks.

The exact audits of :mod:`lpdp.filters.audit` assume i.i.d. rounds. Theorem 1 of Taylor, Vippathalla and
Coon (``P_x(l^{(T)} > ε) <= δ̃ + (1 - δ̃) θ (E_x[T] - 1) <= δ`` for the realisation-level filter) also
covers adaptive analysts, whose next mechanism depends on past outputs. This module checks it there: an
adversary (:class:`EscalatingPolicy`) submits finite mechanisms (e.g. k-ary randomised-response reports)
and moves to a stronger one after each output that already pushed the realised loss up, and a filter of
the registry decides when to stop.

For every ordered neighbouring pair ``(x, x')`` the audit estimates, under ``P_x``,

* the violation probability ``P_x(l^{(T)}(x, x') > ε)``, and
* the hockey-stick δ of the stopped transcript, ``δ(ε) = E_x[(1 - e^{ε - l^{(T)}})_+]`` (its exact
  privacy profile: the transcript's likelihood ratio is ``e^{l^{(T)}}`` because stopping depends on past
  outputs only),

each with an exact binomial (Clopper–Pearson) confidence interval. The hockey-stick interval is exact too:
each trajectory's ``z = (1 - e^{ε - l})_+ ∈ [0, 1]`` is turned into a Bernoulli(``z``) draw, whose
success count is Binomial(``n``, δ). The guarantee is *consistent* with the estimate when neither lower
confidence bound exceeds the filter's δ.

Sampling. Trajectories that share a prefix of outputs share the filter's state, so the ``n`` trajectories
of a chunk are drawn as a tree: a node holding ``m`` trajectories splits them over the next outputs by
one multinomial draw. This is exactly the law of ``n`` independent trajectories (the counts at the leaves
are what independent sampling would give), at a cost that grows with the number of distinct prefixes, not
with ``n``. Losses within :data:`~lpdp.filters.realisation.LOSS_TIE_TOL` of ε count as ties (no
violation), as in the filters themselves.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._binomial import clopper_pearson
from lpdp._validate import check_epsilon, check_int, check_probability
from lpdp.errors import ParameterError
from lpdp.filters.realisation import Filter, within
from lpdp.filters.registry import build_filter
from lpdp.mechanisms import FiniteMechanism, Mechanism, randomized_response

__all__ = ["EscalatingPolicy", "ChunkCounts", "PairEstimate", "MonteCarloAudit", "audit_chunk",
           "combine_chunks", "clopper_pearson"]


@dataclass(frozen=True)
class EscalatingPolicy:
    """An adaptive adversary over finite mechanisms: in state ``s`` it submits ``mechanisms[s]``; after
    an output that raised the realised loss of ``pair`` (positive loss ``log p_x(y) / p_x'(y)``) it
    moves to the next, stronger mechanism, after any other output it falls back to the first.

    Examples
    --------
    >>> p = EscalatingPolicy.randomized_response(2, (0.5, 1.0))
    >>> p.next_state(0, 0), p.next_state(1, 0), p.next_state(1, 1), p.candidates(0)
    (1, 1, 0, (0, 1))
    """

    mechanisms: tuple[FiniteMechanism, ...]
    pair: tuple[Any, Any] = (0, 1)
    _up: tuple[frozenset[Any], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.mechanisms or not all(isinstance(m, Mechanism) and m.finite_outputs
                                          for m in self.mechanisms):
            raise ParameterError(f"mechanisms={self.mechanisms!r}: give at least one FiniteMechanism")
        x, x_other = self.pair
        up = []
        for m in self.mechanisms:
            losses = m.losses(x, x_other)
            up.append(frozenset(y for y, loss in zip(m.outputs, losses, strict=True) if loss > 0))
        object.__setattr__(self, "_up", tuple(up))

    @classmethod
    def randomized_response(cls, categories: int, levels: Sequence[float], leak: float = 0.0
                            ) -> EscalatingPolicy:
        """Escalating k-ary randomised response with ε0 in ``levels``; with probability ``leak`` a
        report reveals the value in clear instead (outputs ``k .. 2k-1``, infinite loss: the rare
        event a realisation-level filter may ignore at level δ̃)."""
        k = check_int(categories, "categories", minimum=2)
        leak = check_probability(leak, "leak", open_right=True)
        mechs = []
        for i, e in enumerate(levels):
            if check_epsilon(e, f"levels[{i}]") <= 0:
                raise ParameterError(f"levels[{i}]={e!r}: must be > 0")
            rr = randomized_response(k, e)
            rows = {v: [(1 - leak) * q for q in rr.probabilities(v)] + [leak * (u == v) for u in range(k)]
                    for v in range(k)}
            mechs.append(FiniteMechanism(rows, pair=(0, 1)) if leak > 0 else rr)
        return cls(tuple(mechs))

    def mechanism(self, state: int) -> FiniteMechanism:
        """The mechanism submitted in ``state``."""
        return self.mechanisms[state]

    def next_state(self, state: int, output: Any) -> int:
        """The state after ``output``."""
        return min(state + 1, len(self.mechanisms) - 1) if output in self._up[state] else 0

    def candidates(self, state: int) -> tuple[int, ...]:
        """Every state the adversary may be in at the next step (declared to the filter's look-ahead)."""
        return tuple(sorted({0, min(state + 1, len(self.mechanisms) - 1)}))


@dataclass(frozen=True)
class ChunkCounts:
    """What one chunk found, per ordered pair ``"x,x'"`` (trajectories drawn under ``P_x``): the number
    of violations, of Bernoulli(``z``) successes, the sum of ``z``, and the histogram of ``T``."""

    trajectories: int
    violations: dict[str, int]
    hockey_hits: dict[str, int]
    hockey_sum: dict[str, float]
    stopping_times: dict[str, list[int]]


def _pair_key(pair: tuple[Any, Any]) -> str:
    return f"{pair[0]},{pair[1]}"


def audit_chunk(policy: EscalatingPolicy, filter_name: str, epsilon: float, delta: float, max_steps: int,
                trajectories: int, seed: Any) -> ChunkCounts:
    """Draw ``trajectories`` trajectories under each database of the policy's pair, with the generator
    seeded by ``seed`` (an int or a ``numpy.random.SeedSequence``), and count.

    The filter is the registered filter ``filter_name`` tuned for i.i.d. rounds of the strongest
    (last) mechanism of the policy; its look-ahead is told every mechanism the policy may submit next.

    Examples
    --------
    >>> p = EscalatingPolicy.randomized_response(2, (0.5, 1.0))
    >>> c = audit_chunk(p, "realisation", 2.0, 1e-3, 6, 1000, 0)
    >>> c.trajectories, sorted(c.violations)
    (1000, ['0,1', '1,0'])
    """
    trajectories = check_int(trajectories, "trajectories")
    pair = policy.pair
    rng = np.random.default_rng(seed)
    keep = {id(m): m for m in policy.mechanisms}
    violations, hits, sums, times = {}, {}, {}, {}
    for x, x_other in (pair, pair[::-1]):
        key = _pair_key((x, x_other))
        root = build_filter(filter_name, policy.mechanisms[-1], epsilon, delta, max_steps, [pair])
        hist = [0] * (max_steps + 1)
        over = hit = 0
        z_sum = []
        stack: list[tuple[Filter, int, int]] = [(root, 0, trajectories)]
        while stack:
            filt, state, m = stack.pop()
            mech = policy.mechanism(state)
            nxt = [(policy.mechanism(s), None) for s in policy.candidates(state)]
            if not filt.ask(mech, next=nxt):
                loss = filt.spent()[(x, x_other)]
                hist[filt.steps] += m
                over += 0 if within(loss, epsilon) else m
                z = 1.0 if loss == math.inf else max(0.0, -math.expm1(epsilon - loss))
                z_sum.append(m * z)
                hit += int(rng.binomial(m, z))
                continue
            split = rng.multinomial(m, mech.probabilities(x))
            outputs = [(y, int(c)) for y, c in zip(mech.outputs, split, strict=True) if c > 0]
            for i, (y, c) in enumerate(outputs):
                child = filt if i == len(outputs) - 1 else copy.deepcopy(filt, dict(keep))
                child.record(y)
                stack.append((child, policy.next_state(state, y), c))
        violations[key], hits[key], sums[key], times[key] = over, hit, math.fsum(z_sum), hist
    return ChunkCounts(trajectories, violations, hits, sums, times)


@dataclass(frozen=True)
class PairEstimate:
    """Estimates for one ordered pair under ``P_x``, with Clopper–Pearson intervals."""

    pair: str
    tail: float
    tail_interval: tuple[float, float]
    hockey_stick_delta: float
    hockey_stick_interval: tuple[float, float]
    expected_T: float


@dataclass(frozen=True)
class MonteCarloAudit:
    """A combined Monte Carlo audit (see the module docstring for the method)."""

    filter: str
    epsilon: float
    delta: float
    trajectories: int
    confidence: float
    pairs: tuple[PairEstimate, ...]
    filter_bound: float | None

    @property
    def consistent(self) -> bool:
        """Whether the (ε, δ) guarantee is consistent with the estimates: no lower confidence bound of
        the violation probability or of the hockey-stick δ exceeds δ."""
        return all(p.tail_interval[0] <= self.delta and p.hockey_stick_interval[0] <= self.delta
                   for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"filter": self.filter, "epsilon": self.epsilon, "delta": self.delta,
                "trajectories": self.trajectories, "confidence": self.confidence,
                "interval": "Clopper-Pearson (exact binomial), two-sided",
                "consistent": self.consistent, "filter_bound": self.filter_bound,
                "pairs": {p.pair: {"tail": p.tail, "tail_interval": list(p.tail_interval),
                                   "hockey_stick_delta": p.hockey_stick_delta,
                                   "hockey_stick_interval": list(p.hockey_stick_interval),
                                   "expected_T": p.expected_T} for p in self.pairs}}


def combine_chunks(chunks: Sequence[ChunkCounts], policy: EscalatingPolicy, filter_name: str, epsilon: float,
                   delta: float, max_steps: int, confidence: float = 0.95) -> MonteCarloAudit:
    """Combine chunk counts (in the given order: integer sums, and ``math.fsum`` of the float sums, so
    the result does not depend on where the chunks ran) into estimates with confidence intervals.

    ``filter_bound`` is the filter's own bound on the violation probability at the largest estimated
    ``E_x[T]`` (Theorem 1 for the realisation-level filter).

    Examples
    --------
    >>> p = EscalatingPolicy.randomized_response(2, (0.5, 1.0))
    >>> chunks = [audit_chunk(p, "realisation", 2.0, 1e-3, 6, 500, s) for s in (1, 2)]
    >>> a = combine_chunks(chunks, p, "realisation", 2.0, 1e-3, 6)
    >>> a.trajectories, a.consistent
    (1000, True)
    """
    confidence = check_probability(confidence, "confidence", open_left=True, open_right=True)
    n = sum(c.trajectories for c in chunks)
    estimates = []
    for key in chunks[0].violations:
        over = sum(c.violations[key] for c in chunks)
        hits = sum(c.hockey_hits[key] for c in chunks)
        hist = np.sum([c.stopping_times[key] for c in chunks], axis=0)
        estimates.append(PairEstimate(
            key, over / n, clopper_pearson(over, n, confidence),
            math.fsum(c.hockey_sum[key] for c in chunks) / n, clopper_pearson(hits, n, confidence),
            float(np.dot(np.arange(hist.size), hist)) / n))
    filt = build_filter(filter_name, policy.mechanisms[-1], epsilon, delta, max_steps, [policy.pair])
    return MonteCarloAudit(filter_name, epsilon, delta, n, confidence, tuple(estimates),
                           filt.guarantee(max(e.expected_T for e in estimates)))
