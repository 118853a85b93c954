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
function); :func:`subsampled` (any of them on a Poisson subsample: DP-SGD's batches).

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

Layout: :mod:`~lpdp.mechanisms.base` (the protocol, requests), one module per family
(:mod:`~lpdp.mechanisms.gaussian`, :mod:`~lpdp.mechanisms.laplace`, :mod:`~lpdp.mechanisms.finite`,
:mod:`~lpdp.mechanisms.tradeoff`, :mod:`~lpdp.mechanisms.sampled`, :mod:`~lpdp.mechanisms.mixture`,
:mod:`~lpdp.mechanisms.subsampled`) and
:mod:`~lpdp.mechanisms.registry` (the one data form: ``to_dict`` writes a ``[[mechanism]]`` table,
``kind = ...``, which workload files, filter mechanism files, transcripts and JSON output share;
:func:`mechanism_from_entry` reads it, :func:`register_kind` adds a kind).
"""

from __future__ import annotations

from lpdp.mechanisms.base import Mechanism, Request, Step, pair_increments, request_input, step_to_dict
from lpdp.mechanisms.bracketed import BracketedMechanism
from lpdp.mechanisms.finite import (
    DPMechanism,
    FiniteMechanism,
    RegionMechanism,
    binary_erasure,
    pure,
    randomized_response,
)
from lpdp.mechanisms.gaussian import GaussianMechanism
from lpdp.mechanisms.laplace import LaplaceMechanism
from lpdp.mechanisms.mixture import MixtureMechanism, mixture
from lpdp.mechanisms.registry import (
    KINDS,
    MECHANISM,
    mechanism_from_dict,
    mechanism_from_entry,
    register_kind,
    step_from_dict,
    unregister_kind,
)
from lpdp.mechanisms.sampled import SampledMechanism
from lpdp.mechanisms.subsampled import SubsampledMechanism, subsampled
from lpdp.mechanisms.tradeoff import TradeoffMechanism

__all__ = [
    "Mechanism",
    "Request",
    "GaussianMechanism",
    "LaplaceMechanism",
    "FiniteMechanism",
    "SampledMechanism",
    "SubsampledMechanism",
    "BracketedMechanism",
    "subsampled",
    "MixtureMechanism",
    "mixture",
    "DPMechanism",
    "RegionMechanism",
    "TradeoffMechanism",
    "randomized_response",
    "pure",
    "binary_erasure",
    "mechanism_from_dict",
    "mechanism_from_entry",
    "register_kind",
    "unregister_kind",
    "KINDS",
    "MECHANISM",
    "step_to_dict",
    "step_from_dict",
    "pair_increments",
    "Step",
    "request_input",
]
