"""Scenario files: validated TOML descriptions of a computation, run into JSON + PNG + a summary.

Every file has the common keys of :data:`COMMON` and a ``kind`` that selects the schema of the rest.
Kinds are registered by the modules named in :data:`_KIND_MODULES`; ``lpdp run --schema`` prints every
schema. Errors name the file, the key and the problem.
"""

from __future__ import annotations

import importlib
import json
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lpdp._version import __version__
from lpdp.errors import ScenarioError
from lpdp.scenarios._schema import Field, describe_schema, validate

__all__ = ["Field", "ScenarioKind", "ScenarioOutput", "register", "load", "run_file", "KINDS"]

#: Keys every scenario file has, whatever its kind.
COMMON: dict[str, Field] = {
    "kind": Field("str", "what to compute; one of the registered kinds", required=True),
    "title": Field("str", "a title for the figure and the summary", required=True),
    "description": Field("str", "free text, copied into the JSON", default=""),
    "default": Field("bool", "run by `lpdp run` without arguments", default=True),
}


@dataclass
class ScenarioOutput:
    """What a scenario produced: JSON payload, summary lines, and an optional figure callback."""

    payload: dict[str, Any]
    summary: list[str]
    plot: Callable[[Any], None] | None = None
    figsize: tuple[float, float] = (6.0, 6.0)
    extra_files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScenarioKind:
    """A registered scenario kind: its schema (beyond :data:`COMMON`) and the function that runs it."""

    name: str
    doc: str
    schema: Mapping[str, Field]
    run: Callable[[dict[str, Any]], ScenarioOutput]


KINDS: dict[str, ScenarioKind] = {}

# One line per module that registers scenario kinds.
_KIND_MODULES = (
    "lpdp.scenarios.regions",
    "lpdp.scenarios.filters",
    "lpdp.scenarios.composition",
    "lpdp.scenarios.fdp",
)


def register(kind: ScenarioKind) -> ScenarioKind:
    """Add a scenario kind to the registry (called at import by the kind modules)."""
    KINDS[kind.name] = kind
    return kind


def _load_kinds() -> None:
    for name in _KIND_MODULES:
        importlib.import_module(name)


def load(path: str | Path) -> tuple[ScenarioKind, dict[str, Any]]:
    """Read and validate one scenario file; returns its kind and the validated parameters."""
    _load_kinds()
    path = Path(path)
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{source}: no such scenario file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None
    kind_name = data.get("kind")
    if kind_name not in KINDS:
        raise ScenarioError(f"{source}: key 'kind' = {kind_name!r} must be one of {sorted(KINDS)}")
    kind = KINDS[kind_name]
    params = validate(data, {**COMMON, **kind.schema}, source=source)
    return kind, params


def schema_text() -> str:
    """Documentation of every registered scenario kind."""
    _load_kinds()
    lines = ["Common keys:", *describe_schema(COMMON, "  ")]
    for kind in KINDS.values():
        lines += ["", f"kind = {kind.name!r}: {kind.doc}", *describe_schema(kind.schema, "  ")]
    return "\n".join(lines)


def run_file(path: str | Path, out_dir: str | Path) -> dict[str, Any]:
    """Run one scenario file, write ``<stem>.json`` and ``<stem>.png`` to ``out_dir``; return a row."""
    kind, params = load(path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(path).stem
    t0 = time.perf_counter()
    result = kind.run(params)
    seconds = time.perf_counter() - t0
    payload = {
        "scenario": stem,
        "kind": kind.name,
        "title": params["title"],
        "description": params["description"],
        "parameters": {k: v for k, v in params.items() if k not in COMMON},
        "result": result.payload,
        "seconds": seconds,
        "lpdp_version": __version__,
    }
    from lpdp.export import atomic_write, jsonable

    json_path = atomic_write(out / f"{stem}.json", json.dumps(jsonable(payload), indent=1) + "\n")
    files = [str(json_path)]
    if result.plot is not None:
        from lpdp.plot import save_figure

        png = out / f"{stem}.png"
        save_figure(result.plot, png, figsize=result.figsize, title=params["title"])
        files.append(str(png))
    for name, text in result.extra_files.items():
        atomic_write(out / name, text)
        files.append(str(out / name))
    return {"scenario": stem, "kind": kind.name, "seconds": seconds, "summary": result.summary,
            "files": files}


def default_files(root: str | Path = "scenarios") -> list[Path]:
    """Scenario files in ``root`` whose ``default`` key is not false, sorted by name."""
    files = []
    for p in sorted(Path(root).glob("*.toml")):
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{p}: not valid TOML: {exc}") from None
        if data.get("default", True) is not False:
            files.append(p)
    return files


def run_many(paths: Sequence[str | Path], out_dir: str | Path) -> list[dict[str, Any]]:
    """Validate every file first (so a typo fails fast), then run them in order."""
    for p in paths:
        load(p)
    return [run_file(p, out_dir) for p in paths]
