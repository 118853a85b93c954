"""Public test helpers: compare regions by δ(ε) and by boundary distance, and one-sided δ checks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from shapely.geometry import LineString

from lpdp._validate import renamed
from lpdp.region import PrivacyRegion

__all__ = ["assert_regions_equal", "assert_delta_le", "boundary_distance"]


def _grid(a: PrivacyRegion, b: PrivacyRegion, epsilon: Sequence[float] | None) -> np.ndarray:
    if epsilon is not None:
        return np.asarray(epsilon, dtype=float)
    edges = np.concatenate([a.losses, b.losses])
    top = float(np.max(np.abs(edges))) if edges.size else 1.0
    return np.unique(np.concatenate([np.abs(edges), np.linspace(0.0, top * 1.05 + 0.1, 257)]))


def boundary_distance(a: PrivacyRegion, b: PrivacyRegion) -> float:
    """Hausdorff distance between the two lower boundaries (Shapely)."""
    return float(LineString(a.boundary()).hausdorff_distance(LineString(b.boundary())))


@renamed(eps="epsilon")
def assert_regions_equal(a: PrivacyRegion, b: PrivacyRegion, *, rtol: float = 1e-12,
                         atol: float = 1e-300, boundary_atol: float = 1e-12,
                         epsilon: Sequence[float] | None = None) -> None:
    """Assert equal δ(ε) on a grid (relative ``rtol``) and boundary distance below ``boundary_atol``.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.testing import assert_regions_equal
    >>> assert_regions_equal(PrivacyRegion.from_dp(1, 0), PrivacyRegion.from_constraints([(1, 0)]))
    """
    grid = _grid(a, b, epsilon)
    da, db = np.asarray(a.delta(grid)), np.asarray(b.delta(grid))
    bad = np.abs(da - db) > rtol * np.maximum(np.abs(da), np.abs(db)) + atol
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"δ differs at ε={grid[i]!r}: {da[i]!r} vs {db[i]!r} "
                             f"({int(bad.sum())} of {grid.size} grid points)")
    dist = boundary_distance(a, b)
    if dist > boundary_atol:
        raise AssertionError(f"boundaries differ by {dist!r} > {boundary_atol!r}")


@renamed(eps="epsilon")
def assert_delta_le(a: PrivacyRegion, b: PrivacyRegion | np.ndarray,
                    epsilon: Sequence[float] | None = None, *, rtol: float = 1e-12) -> None:
    """Assert ``δ_a(ε) <= δ_b(ε)`` (relative ``rtol``) at every ``epsilon``: ``a`` is at least as
    private (``eps=`` is a deprecated spelling of ``epsilon=``)."""
    if epsilon is None:
        raise TypeError("assert_delta_le: give the epsilon grid")
    grid = np.asarray(epsilon, dtype=float)
    da = np.asarray(a.delta(grid))
    db = np.asarray(b.delta(grid)) if isinstance(b, PrivacyRegion) else np.asarray(b, dtype=float)
    bad = da > db * (1 + rtol) + 1e-300
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"δ_a({grid[i]!r}) = {da[i]!r} > δ_b = {db[i]!r}")
