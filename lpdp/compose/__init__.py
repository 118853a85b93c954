"""Exact composition theorems (spec composition.md §3–§5, §7)."""

from lpdp.compose.kairouz import homogeneous

__all__ = ["homogeneous"]
