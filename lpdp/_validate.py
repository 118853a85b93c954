"""Input cleaning shared by every entry point: each check names the parameter, its value and the range;
:func:`read_document` reads the data files (workloads, scenarios, transcripts) the same way everywhere."""

from __future__ import annotations

import codecs
import functools
import json
import math
import numbers
import os
import tomllib
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from lpdp.errors import LpdpError, ParameterError, ScenarioError

__all__ = [
    "MAX_EPSILON",
    "MAX_NESTING",
    "read_document",
    "check_epsilon",
    "check_delta",
    "check_probability",
    "check_positive",
    "check_int",
    "check_weights",
]


F = TypeVar("F", bound=Callable[..., Any])


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Keep an old keyword spelling of a renamed parameter (``@renamed(eps="epsilon")``): the old keyword
    still works and warns (DeprecationWarning); giving both is a TypeError. The signature shown
    (``inspect.signature``, the docs) is the new one.

    Examples
    --------
    >>> import warnings
    >>> @renamed(eps="epsilon")
    ... def f(epsilon=1.0):
    ...     return epsilon
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(eps=2.0), str(w[0].message)
    (2.0, 'f: eps= is deprecated, write epsilon=')
    """
    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}: give {new}= ({old}= is its deprecated spelling), "
                                        "not both")
                    warnings.warn(f"{fn.__name__}: {old}= is deprecated, write {new}=", DeprecationWarning,
                                  stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)
        return inner  # type: ignore[return-value]
    return wrap


def each_value(method: F) -> F:
    """A method of one number ``method(self, x)`` answering arrays too: an array (or list) ``x`` gives an
    array of its shape, one answer per value; a scalar a scalar (the one shape rule of ``delta()`` and
    ``epsilon()``, docs/api.md).

    Examples
    --------
    >>> class Twice:
    ...     @each_value
    ...     def of(self, x):
    ...         return 2.0 * float(x)
    >>> Twice().of(1.5), Twice().of([[1.0], [2.0]]).tolist()
    (3.0, [[2.0], [4.0]])
    """
    @functools.wraps(method)
    def inner(self: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        if np.ndim(x) == 0:
            return method(self, x, *args, **kwargs)
        try:
            values = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(f"{method.__name__}({x!r}): must be a number or an array of "
                                 "numbers") from None
        out = [method(self, float(v), *args, **kwargs) for v in values.ravel()]
        return np.array(out, dtype=float).reshape(values.shape)
    return inner  # type: ignore[return-value]


def _as_float(name: str, value: object) -> float:
    if isinstance(value, float):        # float and NumPy's float64: the common case, no ABC lookup
        return float(value)
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
    if type(value) is int:              # the common case, no ABC lookup
        v = value
    elif isinstance(value, bool):
        raise ParameterError(f"{name}={value!r}: must be an integer >= {minimum}")
    elif isinstance(value, numbers.Integral):
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
    try:
        w = np.asarray(weights)
    except (TypeError, ValueError):
        w = np.asarray(weights, dtype=object)
    plain = w.ndim == 1 and w.dtype.kind in "iuf" and (
        isinstance(weights, np.ndarray) or not any(isinstance(x, bool | np.bool_) for x in weights))
    if not plain:    # not plain numbers: find the one to name
        w = np.array([_as_float(f"{name}[{i}]", x) for i, x in enumerate(weights)], dtype=float)
    w = w.astype(float)
    if w.size == 0:
        raise ParameterError(f"{name}=[]: at least one weight is needed")
    bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
    if bad.size:
        i = int(bad[0])
        raise ParameterError(f"{name}[{i}]={float(w[i])!r}: must be finite and >= 0")
    total = float(np.sum(w))
    if abs(total - 1.0) > 1e-9:
        shown = repr(w.tolist()) if w.size <= 10 else f"({w.size} weights)"
        raise ParameterError(f"{name}={shown}: must sum to 1 (they sum to {total!r})")
    return w


#: Deepest nesting of lists and tables accepted in a data file (a workload or a scenario is a few levels
#: deep; Python's parsers and everything after them recurse once per level).
MAX_NESTING = 100

_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))


def _depth(value: Any) -> int:
    """Nesting depth of parsed data (a scalar is 0, ``[1]`` is 1), level by level without recursion;
    counting stops past :data:`MAX_NESTING`."""
    depth, level = 0, [value] if isinstance(value, dict | list) else []
    while level and depth <= MAX_NESTING:
        depth += 1
        level = [v for item in level for v in (item.values() if isinstance(item, dict) else item)
                 if isinstance(v, dict | list)]
    return depth


def read_document(path: str | os.PathLike[str], *, what: str = "file", fmt: str | None = None,
                  max_bytes: int | None = None, error: type[LpdpError] = ScenarioError) -> Any:
    """The parsed content of a TOML or JSON data file; every failure is one ``error`` naming the file.

    ``fmt`` is ``"toml"`` or ``"json"`` (default: the suffix, ``.json`` for JSON and TOML otherwise);
    ``what`` names the file in messages (``"workload file"``). Refused with a one-line message: a missing
    file, a directory, more than ``max_bytes`` bytes, text that is not UTF-8 (UTF-16 and UTF-32 are named,
    with their byte-order mark), invalid syntax, and nesting deeper than :data:`MAX_NESTING` levels.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from lpdp._validate import read_document
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.json"
    >>> _ = p.write_text('{"mechanism": [{"kind": "pure", "epsilon": 1.0}]}')
    >>> read_document(p, what="workload file")["mechanism"][0]["kind"]
    'pure'
    >>> _ = p.write_bytes('{}'.encode("utf-16"))
    >>> try:
    ...     read_document(p, what="workload file")
    ... except LpdpError as err:
    ...     print(str(err).split(": ", 1)[1])
    UTF-16 text; save the workload file as UTF-8
    """
    source = os.fspath(path)
    fmt = fmt or ("json" if str(source).lower().endswith(".json") else "toml")
    try:
        if os.path.isdir(source):
            raise error(f"{source}: is a directory, not a {what}")
        size = os.stat(source).st_size
        if max_bytes is not None and size > max_bytes:
            raise error(f"{source}: {size} bytes; a {what} is at most {max_bytes} bytes")
        with open(source, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise error(f"{source}: no such {what}") from None
    except OSError as exc:
        raise error(f"{source}: cannot read it ({exc.strerror or type(exc).__name__})") from None
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raise error(f"{source}: {name} text; save the {what} as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{source}: not UTF-8 text (byte {exc.start}); a {what} is UTF-8 {fmt.upper()}") \
            from None
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{source}: not valid {fmt.upper()}: {exc}") from None
    except RecursionError:
        deep = True
    else:
        deep = _depth(data) > MAX_NESTING
    if deep:
        raise error(f"{source}: nested more than {MAX_NESTING} levels deep; a {what} is a few levels deep")
    return data
