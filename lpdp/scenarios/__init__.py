"""Scenario files: validated TOML descriptions of a computation, run into JSON + PNG + a summary.

Every file has the common keys of :data:`COMMON` and a ``kind`` that selects the schema of the rest.
Kinds are registered by the modules named in :data:`_KIND_MODULES`; ``lpdp run --schema`` prints every
schema. Errors name the file, the key and the problem.

A ``[sweep]`` table runs the scenario once per cell of a grid (:mod:`lpdp.scenarios.sweep`); cells (and
the chunks of long kinds) are tasks for :mod:`lpdp.parallel`, in this process or on a Dask cluster.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lpdp._validate import check_int
from lpdp.errors import ScenarioError
from lpdp.scenarios._schema import Field, check_scheduler, describe_schema, validate

__all__ = ["Field", "ScenarioKind", "ScenarioOutput", "Split", "SweepPlot", "register", "load", "run_file",
           "KINDS", "bundled", "catalogue", "resolve", "copy_bundled"]

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
    """

    x: str
    y: str
    ylabel: str
    labels: Mapping[str, str] = field(default_factory=dict)
    styles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    logy: bool = False


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

# One line per module that registers scenario kinds.
_KIND_MODULES = (
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
    for name in _KIND_MODULES:
        importlib.import_module(name)


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; every failure is a :class:`ScenarioError` naming the file."""
    from lpdp._validate import read_document

    return read_document(path, what="scenario file", fmt="toml", max_bytes=MAX_SCENARIO_BYTES)


def load(path: str | Path) -> tuple[ScenarioKind, dict[str, Any]]:
    """Read and validate one scenario file; returns its kind and the validated parameters.

    With a ``[sweep]`` table, every cell is validated and ``params["sweep"]`` is the
    :class:`~lpdp.scenarios.sweep.Sweep` (the other parameters are those of the first cell);
    otherwise ``params["sweep"]`` is ``None``.
    """
    from lpdp.scenarios.sweep import build_sweep

    load_kinds()
    path = Path(path)
    source = str(path)
    data = _read_toml(path)
    kind_name = data.get("kind")
    if not isinstance(kind_name, str) or kind_name not in KINDS:
        raise ScenarioError(f"{source}: key 'kind' = {kind_name!r} must be one of {sorted(KINDS)}")
    kind = KINDS[kind_name]
    grid = data.pop("sweep", None)
    schema = {**COMMON, **kind.schema}
    if grid is None:
        return kind, {**validate(data, schema, source=source), "sweep": None}
    sweep = build_sweep(grid, data, schema, source=source)
    return kind, {**sweep.cells[0], "sweep": sweep}


def schema_text() -> str:
    """Documentation of every registered scenario kind."""
    load_kinds()
    lines = ["Common keys:", *describe_schema(COMMON, "  "), f"  {SWEEP_DOC}"]
    for kind in KINDS.values():
        lines += ["", f"kind = {kind.name!r}: {kind.doc}", *describe_schema(kind.schema, "  ")]
    return "\n".join(lines)


def run_file(path: str | Path, out_dir: str | Path, *, scheduler: str | None = None,
             workers: int | None = None, resume: bool = False, progress: bool | None = None,
             cluster_timeout: float | None = None) -> dict[str, Any]:
    """Run one scenario file into ``out_dir`` (``<stem>.json``, ``<stem>.png``, ...); return a row.

    ``scheduler``/``workers`` choose where cells and chunks run (:func:`lpdp.parallel.resolve_scheduler`;
    the file's own keys are used when these are ``None``); ``resume`` reuses finished cells (and whole
    finished scenarios) of an earlier run into the same folder; ``progress`` shows a progress bar on
    stderr (``None``: when stderr is a terminal); ``cluster_timeout`` is how long to wait for a cluster
    with no reachable scheduler or worker before stopping with :class:`~lpdp.errors.ClusterError`
    (finished cells are kept for ``resume``).
    """
    return run_many([path], out_dir, scheduler=scheduler, workers=workers, resume=resume,
                    progress=progress, cluster_timeout=cluster_timeout)[0]


def shipped_root() -> Path:
    """The folder of the default scenario files shipped with lpdp.

    In an installed wheel they are package data (``lpdp/_default_scenarios``, read with
    :mod:`importlib.resources`); in a source checkout they are its top-level ``scenarios/`` folder (the one
    home of the files: the wheel's copy is made from it at build time).

    Examples
    --------
    >>> from lpdp.scenarios import shipped_root
    >>> (shipped_root() / "figure1_mixture.toml").is_file()
    True
    """
    import importlib.resources

    packaged = Path(str(importlib.resources.files("lpdp") / "_default_scenarios"))
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "scenarios"
    if checkout.is_dir():
        return checkout
    raise ScenarioError("the default scenarios are missing from this installation of lpdp: reinstall it, "
                        "or name scenario files")


def bundled() -> dict[str, Path]:
    """Every scenario file shipped with lpdp (default or not), by name (the file's stem).

    Examples
    --------
    >>> from lpdp.scenarios import bundled
    >>> bundled()["figure2_double_dp"].name
    'figure2_double_dp.toml'
    """
    return {p.stem: p for p in sorted(shipped_root().glob("*.toml"))}


def catalogue() -> list[tuple[str, str, bool]]:
    """``(name, title, default)`` of every bundled scenario, sorted by name (``lpdp run --list``)."""
    out = []
    for name, path in bundled().items():
        data = _read_toml(path)
        out.append((name, str(data.get("title", "")), data.get("default", True) is not False))
    return out


def resolve(name: str | Path) -> Path:
    """A scenario argument as a file: an existing path as it is, else the bare name of a bundled
    scenario (``figure1_mixture``; a missing ``figure1_mixture.toml`` is an error that points to the
    name). Anything else is a :class:`ScenarioError` naming the bundled scenarios.

    Examples
    --------
    >>> from lpdp.scenarios import resolve
    >>> resolve("figure1_mixture").name
    'figure1_mixture.toml'
    """
    path = Path(name)
    if path.exists():
        return path
    known = bundled()
    stem = path.name[:-5] if path.name.endswith(".toml") else path.name
    if str(name) == stem and stem in known:       # a bare name; a file name is never redirected
        return known[stem]
    hint = (f"; the bundled scenario of that name runs as `lpdp run {stem}`" if stem in known else
            f"; bundled scenarios (`lpdp run --list`): {', '.join(known)}")
    raise ScenarioError(f"{name}: no such scenario file{hint}")


def copy_bundled(name: str, destination: str | Path) -> Path:
    """Copy the bundled scenario ``name`` to ``destination`` (a new ``.toml`` file) to edit and run.

    An existing file is never overwritten. The copy is written atomically (:func:`lpdp.export.atomic_write`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from lpdp.scenarios import copy_bundled
    >>> dest = pathlib.Path(tempfile.mkdtemp()) / "mine.toml"
    >>> copy_bundled("figure1_mixture", dest).read_text().startswith("#") or dest.exists()
    True
    """
    from lpdp.export import atomic_write, check_output_path

    known = bundled()
    if name not in known:
        raise ScenarioError(f"--copy {name}: not a bundled scenario; bundled: {', '.join(known)}")
    dest = check_output_path(destination, "--copy", (".toml",))
    if dest.exists():
        raise ScenarioError(f"--copy {name} {destination}: {destination} exists; remove it or give another "
                            f"file name")
    return atomic_write(dest, known[name].read_text(encoding="utf-8"), option="--copy")


def default_files(root: str | Path = "scenarios") -> list[Path]:
    """Scenario files in ``root`` whose ``default`` key is not false, sorted by name."""
    files = []
    for p in sorted(Path(root).glob("*.toml")):
        data = _read_toml(p)
        if data.get("default", True) is not False:
            files.append(p)
    return files


def run_many(paths: Sequence[str | Path], out_dir: str | Path, **options: Any) -> list[dict[str, Any]]:
    """Validate every file, the scheduler and the output names first (so a mistake fails before any
    work), then run them in order into ``out_dir`` (``options`` as in :func:`run_file`).

    ``out_dir/manifest.json`` lists the inputs and every output, with ``complete: false`` until all
    scenarios have finished; two scenarios with the same file name are refused.
    """
    from lpdp.export import Manifest
    from lpdp.parallel import resolve_scheduler
    from lpdp.scenarios.sweep import run_scenario

    stems: dict[str, str] = {}
    for p in paths:
        load(p)
        stem = Path(p).stem
        if stem in stems:  # before the output folder is touched
            raise ScenarioError(f"{stems[stem]} and {p}: both would write {stem}.json; rename one")
        stems[stem] = str(p)
    if options.get("scheduler") or options.get("workers") or options.get("cluster_timeout") is not None:
        resolve_scheduler(options.get("scheduler"), workers=options.get("workers"),
                          timeout=options.get("cluster_timeout"))
    with Manifest(out_dir, inputs=paths, option="--out") as manifest:
        for p in paths:
            manifest.claim(f"{Path(p).stem}.json", str(p))
        return [run_scenario(p, manifest, **options) for p in paths]
