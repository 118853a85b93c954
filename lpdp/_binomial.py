"""Exact (Clopper–Pearson) confidence bounds for a binomial proportion: the one home of the rule
(Clopper and Pearson, 1934), used by the Monte Carlo audits, the survival estimates and sampled
mechanisms. ``scipy.stats`` is imported on first use (it costs ~0.3 s of CLI start-up).

Examples
--------
>>> from lpdp._binomial import clopper_pearson, clopper_pearson_upper
>>> [round(v, 4) for v in clopper_pearson(0, 100, 0.95)]
[0.0, 0.0362]
>>> round(clopper_pearson_upper(0, 100, 0.95), 4)
0.0295
"""

from __future__ import annotations

__all__ = ["clopper_pearson", "clopper_pearson_upper"]


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """The exact two-sided interval at level ``confidence`` for ``successes`` out of ``trials``."""
    from scipy import stats

    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=confidence,
                                                                     method="exact")
    return float(ci.low), float(ci.high)


def clopper_pearson_upper(successes: int, trials: int, confidence: float) -> float:
    """The exact one-sided upper bound at level ``confidence``: the ``confidence`` quantile of
    ``Beta(successes + 1, trials - successes)``; 1 when every trial succeeded."""
    if successes >= trials:
        return 1.0
    from scipy import stats

    return float(stats.beta.ppf(confidence, successes + 1, trials - successes))
