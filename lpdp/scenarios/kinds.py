"""The scenario kinds: their registry, the keys every file has, and what a run produces.

A kind is registered by its module (one of :data:`KIND_MODULES`) at import; :func:`load_kinds` imports
them all. ``lpdp run --schema`` prints every schema (:func:`schema_text`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lpdp._validate import check_int, read_document
from lpdp.scenarios._schema import Field, check_scheduler, describe_schema

__all__ = ["COMMON", "KINDS", "KIND_MODULES", "MAX_SCENARIO_BYTES", "ScenarioKind", "ScenarioOutput", "Split",
           "SweepPlot", "load_kinds", "read_scenario", "register", "schema_text"]

#: Keys every scenario file has, whatever its kind.
COMMON: dict[str, Field] = {
    "kind": Field("str", "what to compute; one of the registered kinds", required=True),
    "title": Field("str", "a title for the figure and the summary", required=True),
    "description": Field("str", "free text, copied into the JSON", default=""),
    "default": Field("bool", "run by `lpdp run` without arguments", default=True),
    "scheduler": Field("str", "where cells run: 'serial', 'local' (a Dask cluster on this machine) or "
                       "tcp://HOST:PORT; empty: $LPDP_SCHEDULER, else automatic (--scheduler wins)",
                       default="", check=check_scheduler),
    "workers": Field("int", "worker processes of the 'local' scheduler (0: one per CPU)", default=0,
                     check=lambda v: check_int(v, "workers", minimum=0)),
}

#: The optional ``[sweep]`` table (documented here; validated by :mod:`lpdp.scenarios.sweep`).
SWEEP_DOC = ("[sweep] (table, optional): each key names a parameter of the kind and gives a list of "
             "values; the scenario runs once per cell of their Cartesian product (in table order, the "
             "last key fastest). zip = [[\"a\", \"b\"]] pairs equal-length lists instead. A kind with a "
             "'seed' that is not swept gets one seed per cell, derived from it by "
             "numpy.random.SeedSequence.spawn.")


@dataclass
class ScenarioOutput:
    """What a scenario produced: JSON payload, summary lines, and an optional figure callback.

    ``payload`` (the JSON's ``result``) depends only on the parameters: the same file gives the same
    result on any machine, any day. Wall-clock times go in ``timings`` (the JSON's ``execution``).
    """

    payload: dict[str, Any]
    summary: list[str]
    plot: Callable[[Any], None] | None = None
    figsize: tuple[float, float] = (6.0, 6.0)
    extra_files: dict[str, str] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Split:
    """A long scenario cut into independent chunks (tasks), e.g. batches of Monte Carlo trajectories.

    ``chunks(params)`` is the number of chunks (a function of the parameters only, never of the
    workers); ``run(params, j, seed)`` computes chunk ``j`` with ``seed``, the ``j``-th child of
    ``numpy.random.SeedSequence(params["seed"])``; ``combine(params, parts)`` makes the output from
    the chunk results in chunk order.
    """

    chunks: Callable[[dict[str, Any]], int]
    run: Callable[[dict[str, Any], int, Any], Any]
    combine: Callable[[dict[str, Any], list[Any]], ScenarioOutput]


@dataclass(frozen=True)
class SweepPlot:
    """The summary figure of a sweep of this kind: result ``y`` against the swept parameter ``x``.

    ``y`` names a number of the cell result, or a table of numbers (one line per entry, with
    ``labels``/``styles`` by entry name); one panel per combination of the other swept parameters.
    ``labels`` may be a function returning the mapping, called once when a sweep of the kind starts (a
    kind whose labels need a heavy import then costs nothing to load, and the workers of a local cluster,
    forked after the call, inherit the import with the rest of what the cells need).
    """

    x: str
    y: str
    ylabel: str
    labels: Mapping[str, str] | Callable[[], Mapping[str, str]] = field(default_factory=dict)
    styles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    logy: bool = False

    def label_map(self) -> Mapping[str, str]:
        """``labels``, called first if it is a function."""
        return self.labels() if callable(self.labels) else self.labels


@dataclass(frozen=True)
class ScenarioKind:
    """A registered scenario kind: its schema (beyond :data:`COMMON`) and the function that runs it.

    ``split`` makes its runs chunked tasks (then ``run`` is ``None``); ``sweep_plot`` draws the summary
    figure of its sweeps.
    """

    name: str
    doc: str
    schema: Mapping[str, Field]
    run: Callable[[dict[str, Any]], ScenarioOutput] | None
    split: Split | None = None
    sweep_plot: SweepPlot | None = None


KINDS: dict[str, ScenarioKind] = {}

#: Largest scenario file read (a scenario is a few lines; this bounds the time and memory of parsing).
MAX_SCENARIO_BYTES = 1_000_000

#: One line per module that registers scenario kinds.
KIND_MODULES = (
    "lpdp.scenarios.regions",
    "lpdp.scenarios.filters",
    "lpdp.scenarios.composition",
    "lpdp.scenarios.fdp",
    "lpdp.scenarios.audit",
    "lpdp.scenarios.account",
)


def register(kind: ScenarioKind) -> ScenarioKind:
    """Add a scenario kind to the registry (called at import by the kind modules)."""
    KINDS[kind.name] = kind
    return kind


def load_kinds() -> None:
    """Import every module of :data:`KIND_MODULES` (each registers its kinds)."""
    for name in KIND_MODULES:
        importlib.import_module(name)


def read_scenario(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; every failure is a :class:`ScenarioError` naming the file."""
    return read_document(path, what="scenario file", fmt="toml", max_bytes=MAX_SCENARIO_BYTES)


def schema_text() -> str:
    """Documentation of every registered scenario kind."""
    load_kinds()
    lines = ["Common keys:", *describe_schema(COMMON, "  "), f"  {SWEEP_DOC}"]
    for kind in KINDS.values():
        lines += ["", f"kind = {kind.name!r}: {kind.doc}", *describe_schema(kind.schema, "  ")]
    return "\n".join(lines)
