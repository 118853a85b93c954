"""Rebuild a mechanism from its plain data (:meth:`~lpdp.mechanisms.Mechanism.to_dict`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lpdp.errors import ParameterError
from lpdp.mechanisms.base import Mechanism, Request, hashable
from lpdp.mechanisms.finite import DPMechanism, FiniteMechanism, RegionMechanism, randomized_response
from lpdp.mechanisms.gaussian import GaussianMechanism
from lpdp.mechanisms.laplace import LaplaceMechanism
from lpdp.mechanisms.mixture import MixtureMechanism
from lpdp.mechanisms.subsampled import SubsampledMechanism
from lpdp.region import PrivacyRegion

__all__ = ["mechanism_from_dict"]


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
        return FiniteMechanism({hashable(v): p for v, p in data["table"]},
                               [hashable(y) for y in data["outputs"]],
                               pair=None if pair is None else tuple(hashable(v) for v in pair))
    if kind == "randomized_response":
        return randomized_response(data["categories"], data["epsilon"])
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
    if kind == "subsampled":
        return SubsampledMechanism(mechanism_from_dict(data["mechanism"], named), data["rate"],
                                   data.get("scheme", "poisson"), data.get("relation"))
    if kind in ("sampled", "tradeoff"):
        if named is None or data["name"] not in named:
            raise ParameterError(f"mechanism {data['name']!r}: a {kind} mechanism cannot be rebuilt "
                                 "from data; pass it in `mechanisms={name: mechanism}`")
        return named[data["name"]]
    raise ParameterError(f"mechanism type={kind!r}: must be one of gaussian, laplace, finite, "
                         "randomized_response, dp, region, mixture, subsampled, tradeoff, sampled")
