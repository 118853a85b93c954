"""lpdp: exact privacy regions, composition under several DP constraints, realisation-level filters."""

from lpdp._version import __version__
from lpdp.errors import (
    BudgetExhaustedError,
    LpdpError,
    OutputError,
    ParameterError,
    ScenarioError,
    SolverError,
)
from lpdp.mixture import mix
from lpdp.region import PrivacyRegion

__all__ = [
    "__version__",
    "PrivacyRegion",
    "mix",
    "LpdpError",
    "ParameterError",
    "SolverError",
    "BudgetExhaustedError",
    "ScenarioError",
    "OutputError",
]
