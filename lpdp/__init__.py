"""lpdp: exact privacy regions, composition under several DP constraints, realisation-level filters."""

from lpdp._version import __version__
from lpdp.errors import (
    BudgetExhaustedError,
    LpdpError,
    ParameterError,
    ScenarioError,
    SolverError,
)

__all__ = [
    "__version__",
    "LpdpError",
    "ParameterError",
    "SolverError",
    "BudgetExhaustedError",
    "ScenarioError",
]
