"""DP-SGD's vocabulary (``lpdp.dpsgd``): noise multiplier, sampling rate (or batch and dataset size), steps
(or epochs).

One DP-SGD step with Poisson sampling at rate ``q`` and noise multiplier ``σ`` (Gaussian noise of standard
deviation ``σ C`` added to the sum of gradients clipped to norm ``C``) is, under add/remove neighbours,
the Gaussian mechanism of sensitivity 1 and noise ``σ`` run on a Poisson subsample
(:func:`lpdp.mechanisms.subsampled`; Abadi et al. 2016, and the dominating pairs of Zhu, Dong and Wang
2022). ``T`` steps are its ``T``-fold adaptive composition: :func:`dpsgd` returns the accountant holding
them, whose guarantee is certified (the certified engine composes both neighbouring directions).

With ``scheme="fixed_size"`` each step draws a batch of ``batch_size`` examples out of ``dataset_size``
without replacement, under replace-one neighbours: a replaced example moves the clipped sum by up to
twice the clipping norm, so the step is the Gaussian mechanism of sensitivity 2 and noise ``σ`` on a
fixed-size batch (:func:`lpdp.mechanisms.subsampled`, ``docs/subsampling.md``: a certified upper side and
a fixed-dataset attack as the lower side).

Examples
--------
>>> import lpdp
>>> g = lpdp.dpsgd(noise_multiplier=1.5, sampling_rate=0.04, steps=100).guarantee()
>>> lo, hi = g.epsilon(1e-5)
>>> g.relation, g.scheme, bool(0 < lo <= hi)
('add_remove', 'poisson', True)
"""

from __future__ import annotations

import math

from lpdp._validate import check_int, check_positive, check_probability
from lpdp.accountant import Accountant
from lpdp.errors import ParameterError
from lpdp.mechanisms import GaussianMechanism, SubsampledMechanism, subsampled
from lpdp.mechanisms.subsampled import check_scheme

__all__ = ["dpsgd", "dpsgd_mechanism", "dpsgd_steps"]


def _rate(sampling_rate: float | None, batch_size: int | None, dataset_size: int | None,
          scheme: str = "poisson") -> float:
    if scheme == "fixed_size" and sampling_rate is not None:
        raise ParameterError(f"sampling_rate={sampling_rate!r}: scheme='fixed_size' draws batch_size "
                             "examples out of dataset_size; give those two instead")
    if sampling_rate is not None:
        if batch_size is not None or dataset_size is not None:
            raise ParameterError("sampling_rate: give it or batch_size with dataset_size, not both")
        return check_probability(sampling_rate, "sampling_rate", open_left=True)
    if batch_size is None or dataset_size is None:
        raise ParameterError("sampling_rate=None: give sampling_rate, or batch_size and dataset_size "
                             "(the expected batch of Poisson sampling, rate = batch_size / dataset_size)")
    b = check_int(batch_size, "batch_size", 1)
    n = check_int(dataset_size, "dataset_size", 1)
    if b > n:
        raise ParameterError(f"batch_size={b}: must be at most dataset_size={n}")
    return b / n


def dpsgd_mechanism(noise_multiplier: float, sampling_rate: float | None = None, *,
                    batch_size: int | None = None, dataset_size: int | None = None,
                    scheme: str = "poisson") -> SubsampledMechanism:
    """One DP-SGD step: the Gaussian mechanism (sensitivity 1, noise ``noise_multiplier``) on a Poisson
    subsample at ``sampling_rate`` (or ``batch_size / dataset_size``); with ``scheme="fixed_size"`` the
    Gaussian of sensitivity 2 (replace-one) on a batch of ``batch_size`` out of ``dataset_size``.

    Examples
    --------
    >>> dpsgd_mechanism(1.0, batch_size=256, dataset_size=60000).rate
    0.004266666666666667
    >>> m = dpsgd_mechanism(1.0, batch_size=256, dataset_size=60000, scheme="fixed_size")
    >>> m.relation, m.mechanism.sensitivity
    ('replace_one', 2.0)
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    scheme = check_scheme(scheme)[0]
    rate = _rate(sampling_rate, batch_size, dataset_size, scheme)
    sensitivity = 2.0 if scheme == "fixed_size" else 1.0
    return subsampled(GaussianMechanism(sigma, sensitivity), rate, scheme)


def dpsgd_steps(sampling_rate: float, steps: int | None = None, epochs: float | None = None) -> int:
    """The number of steps: ``steps``, or ``epochs`` passes of ``1 / sampling_rate`` steps each, rounded up.

    Examples
    --------
    >>> dpsgd_steps(0.01, epochs=3)
    300
    """
    if (steps is None) == (epochs is None):
        raise ParameterError("steps: give steps or epochs (one of them)")
    if steps is not None:
        return check_int(steps, "steps", 1)
    e = check_positive(epochs, "epochs")
    q = check_probability(sampling_rate, "sampling_rate", open_left=True)
    x = e / q
    # e / q to a few ulps: an integer count of steps is not rounded up by its float error
    return max(1, math.ceil(x * (1 - 4e-16)))


def dpsgd(noise_multiplier: float, sampling_rate: float | None = None, steps: int | None = None, *,
          batch_size: int | None = None, dataset_size: int | None = None,
          epochs: float | None = None, scheme: str = "poisson") -> Accountant:
    """An :class:`~lpdp.Accountant` holding the steps of DP-SGD (Poisson sampling, add/remove neighbours;
    or fixed-size batches, replace-one neighbours).

    Parameters
    ----------
    noise_multiplier : float
        ``σ``: the noise's standard deviation over the clipping norm.
    sampling_rate : float, optional
        Probability that each example is in a batch, in (0, 1]; or give ``batch_size`` and
        ``dataset_size`` (rate = their ratio).
    steps : int, optional
        Number of steps; or give ``epochs`` (``ceil(epochs / rate)`` steps).
    scheme : {"poisson", "fixed_size"}
        Poisson sampling (add/remove neighbours) or batches of exactly ``batch_size`` drawn without
        replacement (replace-one neighbours; needs ``batch_size`` and ``dataset_size``).

    Examples
    --------
    >>> import lpdp
    >>> acc = lpdp.dpsgd(1.0, batch_size=600, dataset_size=60000, epochs=1)
    >>> [(m.rate, k) for m, k in acc.parts]
    [(0.01, 100)]
    >>> lpdp.dpsgd(1.0, batch_size=600, dataset_size=60000, epochs=1, scheme="fixed_size").parts[0][1]
    100
    """
    m = dpsgd_mechanism(noise_multiplier, sampling_rate, batch_size=batch_size, dataset_size=dataset_size,
                        scheme=scheme)
    return Accountant().compose(m, dpsgd_steps(m.rate, steps, epochs))
