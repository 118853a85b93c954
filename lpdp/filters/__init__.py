"""Privacy filters: the realisation-level filter of Taylor, Vippathalla and Coon, its parameters and
exact audits, lpdp's union-bound filter, and mechanism-level baselines (spec filter.md)."""

from lpdp.filters.audit import AuditResult, audit
from lpdp.filters.mechanisms import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    Request,
    SampledMechanism,
    binary_erasure,
    mechanism_from_dict,
    randomised_response,
)
from lpdp.filters.params import FilterParameters, check_budget, optimal_parameters
from lpdp.filters.realisation import (
    NaiveBayesianFilter,
    RealisationFilter,
    StoppingRule,
    UnionBoundFilter,
)

__all__ = [
    "Mechanism",
    "Request",
    "GaussianMechanism",
    "LaplaceMechanism",
    "FiniteMechanism",
    "SampledMechanism",
    "randomised_response",
    "binary_erasure",
    "mechanism_from_dict",
    "FilterParameters",
    "optimal_parameters",
    "check_budget",
    "StoppingRule",
    "RealisationFilter",
    "UnionBoundFilter",
    "NaiveBayesianFilter",
    "AuditResult",
    "audit",
]
