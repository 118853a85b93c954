"""Privacy filters: the realisation-level filter of Taylor, Vippathalla and Coon, its parameters and
exact audits, lpdp's union-bound filter, and mechanism-level baselines (spec filter.md)."""

from lpdp.filters.audit import AuditResult, audit
from lpdp.filters.baselines import (
    AdditiveFilter,
    AdvancedFilter,
    Baseline,
    ConcentratedFilter,
    RenyiFilter,
    classical_rounds,
    gaussian_baselines,
    gaussian_delta,
    gaussian_epsilon,
)
from lpdp.filters.params import FilterParameters, check_budget, optimal_parameters
from lpdp.filters.realisation import (
    NaiveBayesianFilter,
    RealisationFilter,
    StoppingRule,
    UnionBoundFilter,
)
from lpdp.filters.simulate import Comparison, SurvivalCurve, gaussian_comparison, survival
from lpdp.mechanisms import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    Request,
    SampledMechanism,
    binary_erasure,
    mechanism_from_dict,
    randomized_response,
)

__all__ = [
    "Mechanism",
    "Request",
    "GaussianMechanism",
    "LaplaceMechanism",
    "FiniteMechanism",
    "SampledMechanism",
    "randomized_response",
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
    "AdditiveFilter",
    "AdvancedFilter",
    "ConcentratedFilter",
    "RenyiFilter",
    "Baseline",
    "gaussian_baselines",
    "gaussian_delta",
    "gaussian_epsilon",
    "classical_rounds",
    "SurvivalCurve",
    "survival",
    "Comparison",
    "gaussian_comparison",
]
