"""lpdp: exact privacy regions, composition under several DP constraints, realisation-level filters.

The main names (:class:`PrivacyRegion`, :func:`mix`, :class:`Accountant`, :class:`Guarantee`) and every
submodule (``lpdp.mechanisms``, ``lpdp.compose``, ``lpdp.plot``, ...) are reachable from ``import lpdp``;
they are imported on first use (PEP 562), so ``import lpdp`` stays cheap.

Examples
--------
>>> import lpdp
>>> g = lpdp.Accountant().compose(lpdp.mechanisms.pure(1.0), 3).guarantee()
>>> round(g.delta(1.0)[1], 6)
0.337835
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lpdp._version import __version__
from lpdp.errors import (
    BudgetError,
    BudgetExhaustedError,
    LpdpError,
    OutputError,
    ParameterError,
    ScenarioError,
    SolverError,
)

if TYPE_CHECKING:
    from lpdp.accountant import Accountant, Guarantee
    from lpdp.mixture import mix
    from lpdp.region import PrivacyRegion
    from lpdp.sgd import dpsgd

#: Public names imported on first access, and the module that defines each.
_NAMES = {
    "PrivacyRegion": "lpdp.region",
    "mix": "lpdp.mixture",
    "Accountant": "lpdp.accountant",
    "Guarantee": "lpdp.accountant",
    "dpsgd": "lpdp.sgd",
}
#: Submodules reachable as attributes of the package.
_SUBMODULES = ("accountant", "calibrate", "compose", "curves", "display", "errors", "export", "fdp",
               "filters", "interop", "lp", "mechanisms", "mixture", "parallel", "pld", "plot", "region",
               "scenarios", "sgd", "sides", "testing", "tradeoff", "workload")

__all__ = [
    "__version__",
    "Accountant",
    "Guarantee",
    "PrivacyRegion",
    "mix",
    "dpsgd",
    "LpdpError",
    "ParameterError",
    "SolverError",
    "BudgetError",
    "BudgetExhaustedError",
    "ScenarioError",
    "OutputError",
]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"lpdp.{name}")
    else:
        raise AttributeError(f"module 'lpdp' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES) | set(_SUBMODULES))
