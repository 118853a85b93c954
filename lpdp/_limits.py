"""The one resource budget of lpdp: estimate memory and time from the inputs, refuse before allocating.

Every route whose cost grows with its inputs (composition lattices, FFT grids, simulations, audits) calls
:func:`check_budget` with its own estimate *before* it allocates or loops, and the call raises a one-line
:class:`~lpdp.errors.ParameterError` naming the input, the estimate, the limit and how to raise it. So
nothing a user types can take the machine down.

The budget
----------
* memory: :data:`DEFAULT_MEMORY_GB` (4 GB, well under the 24 GB of a small machine), or the environment
  variable ``LPDP_MAX_MEMORY_GB``;
* time: :data:`DEFAULT_SECONDS` (10 minutes of estimated work), or ``LPDP_MAX_SECONDS``.

A caller (a CLI option, a scenario setting, a test) can raise or lower either for a block of code with
:func:`budget`; per-call overrides (``memory_gb=``, ``seconds=``) win over both. Estimates are deliberately
on the high side (peak bytes of the temporaries, a conservative operation rate), so a refusal can come a
little early but an accepted job stays within the budget.

Examples
--------
>>> from lpdp._limits import budget, check_budget, memory_limit_bytes
>>> from lpdp.errors import ParameterError
>>> memory_limit_bytes(memory_gb=2.0)
2000000000
>>> check_budget("k=10", memory_bytes=1e6)          # fits: returns nothing
>>> try:
...     with budget(memory_gb=0.001):
...         check_budget("k=10", memory_bytes=1e7)
... except ParameterError as err:
...     print(str(err)[:51])
k=10 needs ~10 MB of memory; the limit is 1 MB (rai
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
from collections.abc import Iterator

from lpdp.errors import BudgetError, ParameterError

__all__ = [
    "DEFAULT_MEMORY_GB",
    "DEFAULT_SECONDS",
    "ENV_MEMORY",
    "ENV_SECONDS",
    "OPS_PER_SECOND",
    "budget",
    "check_budget",
    "memory_limit_bytes",
    "seconds_for",
    "time_limit_seconds",
]

#: Default memory budget in GB (10^9 bytes): what one computation may allocate at its peak.
DEFAULT_MEMORY_GB = 4.0
#: Default time budget in seconds of *estimated* work before a computation is refused.
DEFAULT_SECONDS = 600.0
#: Environment variable that sets the memory budget (in GB).
ENV_MEMORY = "LPDP_MAX_MEMORY_GB"
#: Environment variable that sets the time budget (in seconds).
ENV_SECONDS = "LPDP_MAX_SECONDS"
#: Conservative rate of simple vectorised floating-point operations per second on one core, used to turn an
#: operation count into seconds (numpy's elementwise ``exp``/``log`` run at ~1e8/s; BLAS far faster).
OPS_PER_SECOND = 5e7

_OVERRIDE: contextvars.ContextVar[tuple[float | None, float | None]] = contextvars.ContextVar(
    "lpdp_budget", default=(None, None))


def _from_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"environment variable {name}={raw!r}: must be a positive number")
    return value


def _positive(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"{name}={value!r}: must be finite and > 0")
    return v


def _resolve(value: float | None, name: str, slot: int, env: str, default: float) -> float:
    """A per-call value if given, else the :func:`budget` block's (``slot``), else the environment's."""
    for candidate in (_positive(value, name), _OVERRIDE.get()[slot]):
        if candidate is not None:
            return candidate
    return _from_env(env, default)


def memory_limit_bytes(memory_gb: float | None = None) -> int:
    """The memory budget in bytes: ``memory_gb`` if given, else :func:`budget`'s, else the environment's."""
    return int(_resolve(memory_gb, "memory_gb", 0, ENV_MEMORY, DEFAULT_MEMORY_GB) * 1e9)


def time_limit_seconds(seconds: float | None = None) -> float:
    """The time budget in seconds: ``seconds`` if given, else :func:`budget`'s, else the environment's."""
    return _resolve(seconds, "seconds", 1, ENV_SECONDS, DEFAULT_SECONDS)


@contextlib.contextmanager
def budget(*, memory_gb: float | None = None, seconds: float | None = None) -> Iterator[None]:
    """Set the memory and/or time budget for the code inside the ``with`` block (``None`` keeps it)."""
    old = _OVERRIDE.get()
    new = (_positive(memory_gb, "memory_gb") if memory_gb is not None else old[0],
           _positive(seconds, "seconds") if seconds is not None else old[1])
    token = _OVERRIDE.set(new)
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


def seconds_for(operations: float) -> float:
    """Estimated seconds for ``operations`` simple vectorised operations (at :data:`OPS_PER_SECOND`)."""
    return float(operations) / OPS_PER_SECOND


def _fmt_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def _fmt_seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.3g} h"
    if s >= 60:
        return f"{s / 60:.3g} min"
    return f"{s:.3g} s"


def check_budget(what: str, *, memory_bytes: float = 0.0, seconds: float = 0.0,
                 memory_gb: float | None = None, max_seconds: float | None = None, hint: str = "") -> None:
    """Refuse a computation whose estimated peak memory or time exceeds the budget.

    Parameters
    ----------
    what : str
        The inputs that drive the cost, as the user wrote them (e.g. ``"k=1000000000"``): the message
        starts with it.
    memory_bytes, seconds : float
        The caller's estimates (peak bytes; seconds, e.g. from :func:`seconds_for`). Infinite or NaN
        estimates (an overflowing product of sizes) are refused.
    memory_gb, max_seconds : float, optional
        Per-call budgets, overriding :func:`budget` and the environment.
    hint : str, optional
        A cheaper way to ask, appended to the message (e.g. ``"pass step= (a common lattice step)"``).

    Raises
    ------
    BudgetError
        A :class:`~lpdp.errors.ParameterError`; one line: ``"<what> needs ~80 GB of memory; the limit is
        4 GB (raise it with ...)"``.
    """
    for need, limit, fmt, unbounded, of, env, unit in (
            (float(memory_bytes), memory_limit_bytes(memory_gb), _fmt_bytes, "an unbounded amount",
             "memory", ENV_MEMORY, "GB"),
            (float(seconds), time_limit_seconds(max_seconds), _fmt_seconds, "unbounded time", "computation",
             ENV_SECONDS, "seconds")):
        if not need <= limit:
            shown = fmt(need) if math.isfinite(need) else unbounded
            raise BudgetError(f"{what} needs ~{shown} of {of}; the limit is {fmt(limit)} (raise it with the "
                              f"environment variable {env}, in {unit})" + (f"; or {hint}" if hint else ""))
