"""The lpdp error hierarchy.

Every error a user can cause is an :class:`LpdpError`; the CLI turns it into one line on stderr and exit
status 2. Messages name the parameter, its value and the valid range.
"""

from __future__ import annotations

__all__ = [
    "LpdpError",
    "ParameterError",
    "NotApplicableError",
    "BudgetError",
    "SolverError",
    "BudgetExhaustedError",
    "ScenarioError",
    "InternalError",
    "OutputError",
    "ClusterError",
]


class LpdpError(Exception):
    """Base class of every error raised by lpdp."""


class ParameterError(LpdpError, ValueError):
    """A parameter is outside its valid range (the message names it, its value and the range)."""


class NotApplicableError(ParameterError):
    """A mechanism lacks the face asked for (e.g. ρ-zCDP of a mechanism with an outcome impossible under
    a neighbour, or anything mechanism-level of a sampled black box)."""


class BudgetError(ParameterError):
    """A computation would exceed the memory or time budget (``LPDP_MAX_MEMORY_GB``, ``LPDP_MAX_SECONDS``):
    the message gives the estimate, the limit and, where there is one, a cheaper way to ask (e.g. a common
    lattice step, ``Accountant(step=...)``). Raised before anything is allocated."""


class SolverError(LpdpError, RuntimeError):
    """A solver did not return a verified optimal answer (status or residual check failed)."""


class BudgetExhaustedError(LpdpError, RuntimeError):
    """A privacy filter has halted: no further release is allowed."""


class ScenarioError(LpdpError, ValueError):
    """A scenario file is malformed (the message names the file, the key and the problem)."""


class InternalError(LpdpError, RuntimeError):
    """An internal consistency check failed: a defect in lpdp, not the user's input (please report it)."""


class OutputError(LpdpError, OSError):
    """An output file cannot be written where asked (missing folder, a directory, a symlink, no space...).

    Raised before any work when the path can be checked up front; a write that fails midway leaves the
    previous file intact (see :mod:`lpdp.export`).
    """


class ClusterError(LpdpError, RuntimeError):
    """A Dask cluster stopped working during a run: its scheduler is unreachable, no worker has been
    alive for the run's time-out, or a task killed every worker that ran it. The cells finished before
    it are kept (``lpdp run --resume`` computes only the others)."""
