"""Exact composition theorems (Kairouz et al.; Thms 2-3; docs/fdp.md)."""

from lpdp.compose.double import METHODS, double_dp, max_k_within, total_variation_eta
from lpdp.compose.heterogeneous import heterogeneous
from lpdp.compose.kairouz import homogeneous
from lpdp.compose.multi import multi

__all__ = [
    "METHODS",
    "double_dp",
    "heterogeneous",
    "homogeneous",
    "max_k_within",
    "multi",
    "total_variation_eta",
]
