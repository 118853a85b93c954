"""Black-box mechanisms known through a sampler and a log-density (Monte Carlo, conservative side)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from lpdp._binomial import clopper_pearson_upper
from lpdp._validate import check_int, check_probability
from lpdp.mechanisms.base import Mechanism, check_level

__all__ = ["SampledMechanism"]


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
    >>> from lpdp.mechanisms import GaussianMechanism
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
        return clopper_pearson_upper(k, loss.size, self.confidence)

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        a = check_level(a)
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
        return {"kind": "sampled", "name": self.name}

