"""Scenario files: validated TOML descriptions of a computation, run into JSON + PNG + a summary.

Every file has the common keys of :data:`COMMON` and a ``kind`` that selects the schema of the rest.
Kinds are registered by the modules named in :data:`lpdp.scenarios.kinds.KIND_MODULES`; ``lpdp run
--schema`` prints every schema. Errors name the file, the key and the problem.

A ``[sweep]`` table runs the scenario once per cell of a grid (:mod:`lpdp.scenarios.sweep`); cells (and
the chunks of long kinds) are tasks for :mod:`lpdp.parallel`, in this process or on a Dask cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lpdp.errors import ScenarioError
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import (
    COMMON,
    KINDS,
    ScenarioKind,
    ScenarioOutput,
    Split,
    SweepPlot,
    load_kinds,
    read_scenario,
    register,
    schema_text,
)
from lpdp.scenarios.sweep import load, run_scenario

__all__ = ["COMMON", "Field", "KINDS", "ScenarioKind", "ScenarioOutput", "Split", "SweepPlot", "bundled",
           "catalogue", "copy_bundled", "default_files", "load", "load_kinds", "register", "resolve",
           "run_file", "run_many", "schema_text", "shipped_root"]


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
        data = read_scenario(path)
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
        data = read_scenario(p)
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
