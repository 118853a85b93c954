"""Input cleaning shared by every entry point: each check names the parameter, its value and the range."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from lpdp.errors import ParameterError

__all__ = [
    "MAX_EPSILON",
    "check_epsilon",
    "check_delta",
    "check_probability",
    "check_positive",
    "check_int",
    "check_weights",
]


def _as_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name}={value!r}: must be a real number")
    return float(value)


#: Largest ε accepted: sums and differences of a few such losses must stay finite doubles (an ε near
#: ``DBL_MAX / 2`` made ``δ(1)`` of ``R(ε, 0)`` come out 0 instead of 1).
MAX_EPSILON = 1e300


def check_epsilon(value: object, name: str = "epsilon") -> float:
    """A finite ε in [0, :data:`MAX_EPSILON`]."""
    v = _as_float(name, value)
    if not math.isfinite(v) or v < 0:
        raise ParameterError(f"{name}={value!r}: must be finite and >= 0")
    if v > MAX_EPSILON:
        raise ParameterError(f"{name}={value!r}: must be at most {MAX_EPSILON:g} (larger losses overflow "
                             f"when added)")
    return v


def check_delta(value: object, name: str = "delta", *, allow_one: bool = True) -> float:
    """A δ in [0, 1] (or [0, 1) when ``allow_one`` is false)."""
    v = _as_float(name, value)
    if not (0.0 <= v <= 1.0) or (not allow_one and v == 1.0):
        rng = "[0, 1]" if allow_one else "[0, 1)"
        raise ParameterError(f"{name}={value!r}: must be in {rng}")
    return v


def check_probability(value: object, name: str, *, open_left: bool = False,
                      open_right: bool = False) -> float:
    """A probability in [0, 1], optionally with open ends."""
    v = _as_float(name, value)
    lo_ok = v > 0 if open_left else v >= 0
    hi_ok = v < 1 if open_right else v <= 1
    if not (lo_ok and hi_ok) or math.isnan(v):
        rng = ("(" if open_left else "[") + "0, 1" + (")" if open_right else "]")
        raise ParameterError(f"{name}={value!r}: must be in {rng}")
    return v


def check_positive(value: object, name: str) -> float:
    """A finite real > 0."""
    v = _as_float(name, value)
    if not math.isfinite(v) or v <= 0:
        raise ParameterError(f"{name}={value!r}: must be finite and > 0")
    return v


def check_int(value: object, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum]; floats are accepted only when integral (e.g. 3.0)."""
    if isinstance(value, bool):
        raise ParameterError(f"{name}={value!r}: must be an integer >= {minimum}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        v = int(value)
    else:
        raise ParameterError(f"{name}={value!r}: must be an integer >= {minimum}")
    if v < minimum or (maximum is not None and v > maximum):
        rng = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ParameterError(f"{name}={value!r}: must be an integer {rng}")
    return v


def check_weights(weights: Sequence[object], name: str = "weights") -> np.ndarray:
    """Non-negative finite weights that sum to 1 (to 1e-9)."""
    w = np.array([_as_float(f"{name}[{i}]", x) for i, x in enumerate(weights)], dtype=float)
    if w.size == 0:
        raise ParameterError(f"{name}=[]: at least one weight is needed")
    for i, x in enumerate(w):
        if not math.isfinite(x) or x < 0:
            raise ParameterError(f"{name}[{i}]={float(x)!r}: must be finite and >= 0")
    total = float(np.sum(w))
    if abs(total - 1.0) > 1e-9:
        raise ParameterError(f"{name}={w.tolist()!r}: must sum to 1 (they sum to {total!r})")
    return w
