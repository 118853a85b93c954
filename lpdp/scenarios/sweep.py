"""Running scenarios: sweeps over parameter grids, cells and chunks as tasks, resumable output.

A ``[sweep]`` table maps parameter names to lists of values; the scenario runs once per cell of their
Cartesian product (table order, the last key varying fastest), or of paired lists
(``zip = [["a", "b"]]``). Each cell is validated like a scenario file of its own before anything runs.

Determinism: a cell's parameters, and so its result, depend only on the file. A kind with a ``seed``
that the sweep does not set gets, for cell ``i``, the ``i``-th child of
``numpy.random.SeedSequence(seed)``; chunks of a split kind get the children of their cell's seed. The
scheduler and the number of workers decide where tasks run, never what they compute, and results are
placed by index, so ``result`` is the same byte for byte whatever the scheduler; timing and worker
addresses go under ``execution``.

Resumable: each finished cell of a sweep is written to ``<stem>.cells/<index>.json`` at once (atomic
rename), with a fingerprint of the kind, the cell's parameters and the lpdp version; ``resume=True``
reuses the cells whose fingerprint matches and computes the rest. A finished scenario without a sweep is
reused whole when its ``<stem>.json`` has the same fingerprint.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lpdp._version import __version__
from lpdp.errors import ClusterError, ParameterError, ScenarioError
from lpdp.plot import preload, save_figure
from lpdp.scenarios._schema import validate
from lpdp.scenarios.kinds import COMMON, KINDS, ScenarioKind, ScenarioOutput, load_kinds, read_scenario

__all__ = ["Sweep", "build_sweep", "cell_seed", "load", "run_scenario", "scalar_columns"]

#: Memory held per cell (its validated parameters, its result, its CSV row), high side, for the budget.
BYTES_PER_CELL = 20_000
#: Sweeps of more cells than this show a progress bar (on a terminal) while their cells are checked.
PROGRESS_CELLS = 5000


@dataclass(frozen=True)
class Sweep:
    """A validated grid: ``values[i]`` are the swept values of cell ``i`` (with its derived seed, if
    any) and ``cells[i]`` its complete validated parameters."""

    keys: tuple[str, ...]
    zip: tuple[tuple[str, ...], ...]
    values: tuple[dict[str, Any], ...]
    cells: tuple[dict[str, Any], ...]

    def spec(self) -> dict[str, Any]:
        """The grid as written (plain data for the JSON)."""
        return {"keys": list(self.keys), "zip": [list(z) for z in self.zip], "cells": len(self.cells)}


def cell_seed(seed: int, index: int, cells: int) -> int:
    """The seed of cell ``index`` of ``cells``: from the ``index``-th child of ``SeedSequence(seed)``.

    Examples
    --------
    >>> cell_seed(7, 2, 5) == cell_seed(7, 2, 9)   # the same child whatever the grid size
    True
    >>> cell_seed(7, 0, 5) != cell_seed(7, 1, 5)
    True
    """
    if not 0 <= index < cells:
        raise ParameterError(f"index={index!r}: must be in [0, {cells})")
    child = np.random.SeedSequence(seed, spawn_key=(index,))    # spawn(cells)[index], in O(1)
    return int(child.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _groups(grid: Mapping[str, Any], schema: Mapping[str, Any], source: str) -> list[tuple[str, ...]]:
    zipped = grid.get("zip", [])
    if not (isinstance(zipped, list) and all(isinstance(z, list) and len(z) >= 2
                                             and all(isinstance(k, str) for k in z) for z in zipped)):
        raise ScenarioError(f"{source}: key 'sweep.zip' = {zipped!r} must be a list of lists of at least "
                            "two key names, e.g. [[\"a\", \"b\"]]")
    keys = [k for k in grid if k != "zip"]
    if not keys:
        raise ScenarioError(f"{source}: [sweep] lists no parameter")

    for k in keys:
        if k not in schema or k in COMMON:
            known = ", ".join(sorted(set(schema) - set(COMMON)))
            raise ScenarioError(f"{source}: key 'sweep.{k}' is not a parameter of this kind (sweepable: "
                                f"{known})")
        values = grid[k]
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"{source}: key 'sweep.{k}' = {values!r} must be a non-empty list of values")
    seen: set[str] = set()
    for z in zipped:
        for k in z:
            if k not in keys:
                raise ScenarioError(f"{source}: key 'sweep.zip' names {k!r}, which [sweep] does not list")
            if k in seen:
                raise ScenarioError(f"{source}: key 'sweep.zip' names {k!r} twice")
            seen.add(k)
        lengths = {k: len(grid[k]) for k in z}
        if len(set(lengths.values())) != 1:
            raise ScenarioError(f"{source}: key 'sweep.zip' pairs lists of different lengths {lengths}")
    groups: list[tuple[str, ...]] = []
    for k in keys:
        if k in seen:
            z = next(tuple(z) for z in zipped if k in z)
            if z not in groups:
                groups.append(z)
        else:
            groups.append((k,))
    return groups


def build_sweep(grid: Any, data: Mapping[str, Any], schema: Mapping[str, Any], *, source: str) -> Sweep:
    """Expand and validate a ``[sweep]`` table against ``schema`` (errors name the file and the cell)."""

    if not isinstance(grid, dict):
        raise ScenarioError(f"{source}: key 'sweep' must be a table ([sweep])")
    groups = _groups(grid, schema, source)
    for k in (k for g in groups for k in g):
        if k in data:
            raise ScenarioError(f"{source}: key {k!r} is both set and swept; remove one")
    from lpdp._limits import check_budget

    sizes = [len(grid[g[0]]) for g in groups]
    check_budget(f"[sweep] of {' x '.join(map(str, sizes))} cells",
                 memory_bytes=math.prod(sizes) * BYTES_PER_CELL)
    axes = [[dict(zip(g, vals, strict=True)) for vals in zip(*(grid[k] for k in g), strict=True)]
            for g in groups]
    combos = [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*axes)]
    derive = "seed" in schema and "seed" not in grid
    cells, values = [], []
    steps: Any = enumerate(combos)
    if len(combos) > PROGRESS_CELLS:
        from tqdm import tqdm

        steps = tqdm(steps, total=len(combos), desc=f"checking {source}", unit="cell", file=sys.stderr,
                     disable=not sys.stderr.isatty(), leave=False)
    for i, combo in steps:
        label = ", ".join(f"{k}={v!r}" for k, v in combo.items())
        params = validate({**data, **combo}, schema, source=f"{source} (sweep cell {i}: {label})")
        if derive:
            combo = {**combo, "seed": cell_seed(params["seed"], i, len(combos))}
            params["seed"] = combo["seed"]
        cells.append(params)
        values.append(combo)
    keys = tuple(k for g in groups for k in g)
    return Sweep(keys, tuple(tuple(z) for z in grid.get("zip", [])), tuple(values), tuple(cells))


def load(path: str | Path) -> tuple[ScenarioKind, dict[str, Any]]:
    """Read and validate one scenario file; returns its kind and the validated parameters.

    With a ``[sweep]`` table, every cell is validated and ``params["sweep"]`` is the
    :class:`Sweep` (the other parameters are those of the first cell);
    otherwise ``params["sweep"]`` is ``None``.
    """
    load_kinds()
    path = Path(path)
    source = str(path)
    data = read_scenario(path)
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


def _fingerprint(kind: str, params: Mapping[str, Any]) -> str:
    from lpdp.export import jsonable

    plain = {k: v for k, v in params.items() if k not in ("sweep", "scheduler", "workers", "default")}
    text = json.dumps([kind, jsonable(plain), __version__], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run_task(kind_name: str, params: dict[str, Any], chunk: int | None, seed: Any) -> Any:
    """One task (runs on a worker): a whole cell, or chunk ``chunk`` of a split kind."""
    load_kinds()
    kind = KINDS[kind_name]
    if chunk is None:
        out = kind.run(params)
        return out.payload, out.summary
    return kind.split.run(params, chunk, seed)


def _execute(kind: Any, cells: Sequence[tuple[int, dict[str, Any]]], scheduler: Any, progress: bool,
             label: str, submitted: Callable[[], None] | None = None) -> Iterator[tuple[int, Any, str]]:
    """Run the given cells (index, params); yield ``(index, output, where)`` as each cell completes
    (``submitted`` as in :func:`lpdp.parallel.run_tasks`).

    ``output`` is a :class:`ScenarioOutput` for split kinds (combined here, in chunk order) and
    ``(payload, summary)`` otherwise; ``where`` lists the workers that ran its tasks.
    """
    from tqdm import tqdm

    from lpdp.parallel import run_tasks

    tasks, owner = [], []
    for i, params in cells:
        if kind.split is None:
            tasks.append((kind.name, params, None, None))
            owner.append((i, 0, 1))
            continue
        n = kind.split.chunks(params)
        seeds = np.random.SeedSequence(params["seed"]).spawn(n)
        tasks += [(kind.name, params, j, seeds[j]) for j in range(n)]
        owner += [(i, j, n) for j in range(n)]
    unit = "cell" if kind.split is None else "chunk"
    parts: dict[int, dict[int, Any]] = {}
    where: dict[int, set[str]] = {}
    params_of = dict(cells)
    with tqdm(total=len(tasks), desc=label, unit=unit, file=sys.stderr, disable=not progress,
              dynamic_ncols=True) as bar:
        for t, result, host in run_tasks(_run_task, tasks, scheduler, submitted=submitted):
            bar.update(1)
            i, j, n = owner[t]
            parts.setdefault(i, {})[j] = result
            where.setdefault(i, set()).add(host)
            if len(parts[i]) == n:
                done = parts.pop(i)
                out = done[0] if kind.split is None else kind.split.combine(
                    params_of[i], [done[j] for j in range(n)])
                yield i, out, ",".join(sorted(where.pop(i)))


def scalar_columns(result: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The numbers, strings and booleans of a (nested) result, keyed by dotted path (lists skipped).

    Examples
    --------
    >>> scalar_columns({"a": 1.5, "b": {"c": 2, "d": [1, 2]}, "e": "x"})
    {'a': 1.5, 'b.c': 2, 'e': 'x'}
    """
    out: dict[str, Any] = {}
    for k, v in result.items():
        if isinstance(v, Mapping):
            out.update(scalar_columns(v, f"{prefix}{k}."))
        elif isinstance(v, (bool, int, float, str)) or v is None:
            out[f"{prefix}{k}"] = v
    return out


def _csv(rows: Sequence[Mapping[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows({k: repr(v) if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    return buf.getvalue()


def _sweep_summary(kind: Any, sweep: Sweep, payloads: Sequence[Mapping[str, Any]]) -> list[str]:
    from lpdp.display import format_upper

    lines = [f"{len(payloads)} cells over " + " x ".join(
        f"{k} ({len(dict.fromkeys(json.dumps(v[k], default=repr) for v in sweep.values))})"
        for k in sweep.keys)]
    sp = kind.sweep_plot
    if sp is None:
        return lines
    others = _others(kind, sweep)
    groups: dict[tuple[Any, ...], dict[str, float]] = {}
    for vals, res in zip(sweep.values, payloads, strict=True):
        y = res.get(sp.y)
        series = y if isinstance(y, Mapping) else {sp.y: y}
        best = groups.setdefault(tuple(vals[k] for k in others), {})
        for name, v in series.items():
            if isinstance(v, (int, float)):
                best[name] = max(best.get(name, -np.inf), float(v))
    for key, best in groups.items():
        where = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in zip(others, key, strict=True))
        lines.append((f"{where}: " if where else "") + f"largest {sp.y} over {sp.x} (rounded up): "
                     + ", ".join(f"{n} {format_upper(v, 4)}" for n, v in best.items()))
    return lines


def _sweep_plot(kind: Any, sweep: Sweep, payloads: Sequence[Mapping[str, Any]], labels: Mapping[str, str]
                ) -> Any:
    sp = kind.sweep_plot
    if sp is None or sp.x not in sweep.keys:
        return None
    others = _others(kind, sweep)

    def draw(ax: Any) -> None:
        from lpdp.plot import sweep_lines

        sweep_lines(list(zip(sweep.values, payloads, strict=True)), ax, x=sp.x, y=sp.y, panels=others,
                    ylabel=sp.ylabel, labels=dict(labels), styles=sp.styles, logy=sp.logy)

    return draw


def _read_cell(path: Path, fingerprint: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):   # unreadable or damaged: computed again
        return None
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint or "result" not in doc:
        return None
    return doc


def run_scenario(path: str | Path, manifest: Any, *, scheduler: str | None = None,
                 workers: int | None = None, resume: bool = False, progress: bool | None = None,
                 cluster_timeout: float | None = None) -> dict[str, Any]:
    """Run one scenario into the folder of ``manifest`` (a :class:`lpdp.export.Manifest` in which
    ``<stem>.json`` is already claimed); the other arguments are those of
    :func:`lpdp.scenarios.run_file`. Every output is written atomically and recorded in the manifest."""
    from lpdp.export import atomic_write, jsonable
    from lpdp.parallel import resolve_scheduler

    kind, params = load(path)
    sweep: Sweep | None = params["sweep"]
    stem = Path(path).stem
    out = manifest.folder
    fingerprint = _fingerprint(kind.name, params if sweep is None else
                               {**params, "sweep": [sweep.spec(), list(sweep.values)]})
    json_path = out / f"{stem}.json"
    if progress is None:
        progress = sys.stderr.isatty()
    if resume and sweep is None and json_path.exists():
        doc = _read_cell(json_path, fingerprint)
        if doc is not None and all((out / f).exists() for f in doc.get("outputs", [])):
            for name in doc["outputs"]:
                if name != json_path.name:
                    manifest.claim(name, stem)
                manifest.record(out / name)
            return {"scenario": stem, "kind": kind.name, "seconds": 0.0, "summary": doc.get("summary", []),
                    "files": [str(out / f) for f in doc["outputs"]], "reused": 1}
    cells = list(sweep.cells) if sweep is not None else [params]
    n_tasks = sum(kind.split.chunks(c) for c in cells) if kind.split is not None else len(cells)
    sched = resolve_scheduler(scheduler or params["scheduler"] or None,
                              workers=workers or params["workers"] or None, tasks=n_tasks,
                              source="--scheduler" if scheduler else "scheduler", timeout=cluster_timeout)
    t0 = time.perf_counter()
    hosts: set[str] = set()
    reused = 0
    if sweep is None and kind.split is None:
        result: ScenarioOutput = kind.run(params)
        hosts.add("serial")
    elif sweep is None:
        ((_, result, where),) = list(_execute(kind, [(0, params)], sched, progress, stem))
        hosts.update(where.split(","))
    else:
        cell_dir = out / f"{stem}.cells"
        cell_dir.mkdir(exist_ok=True)
        cell_paths = [cell_dir / f"{i:05d}.json" for i in range(len(cells))]
        prints = [_fingerprint(kind.name, c) for c in cells]
        payloads: list[Any] = [None] * len(cells)
        if resume:
            for i, p in enumerate(cell_paths):
                doc = _read_cell(p, prints[i])
                if doc is not None:
                    payloads[i] = doc["result"]
                    reused += 1
        todo = [(i, c) for i, c in enumerate(cells) if payloads[i] is None]
        # The figure's labels may need a heavy import (the one the cells need): the workers of a local
        # cluster, forked as it starts, inherit it; with a remote cluster it runs, like pyplot's import,
        # while the workers compute; serially the cells have made it by the end.
        plot = kind.sweep_plot
        labels = plot.label_map() if plot is not None and sched.kind == "local" else None

        def submitted() -> None:
            nonlocal labels
            preload()
            if labels is None and plot is not None:
                labels = plot.label_map()

        try:
            for i, output, where in _execute(kind, todo, sched, progress, stem, submitted):
                payload, summary = ((output.payload, output.summary) if isinstance(output, ScenarioOutput)
                                    else output)
                payloads[i] = jsonable(payload)
                hosts.update(where.split(","))
                atomic_write(cell_paths[i], json.dumps({
                    "fingerprint": prints[i], "index": i, "parameters": jsonable(sweep.values[i]),
                    "result": payloads[i], "summary": summary, "lpdp_version": __version__},
                    default=repr) + "\n", option="--out")
        except ClusterError as exc:
            kept = sum(p is not None for p in payloads)
            raise ClusterError(f"{exc}; {kept} of {len(cells)} cells are kept in {cell_dir}/: rerun with "
                               "--resume to compute only the others") from None
        if labels is None:
            labels = plot.label_map() if plot is not None else {}
        rows = [{**scalar_columns(jsonable(v)), **scalar_columns(r)}
                for v, r in zip(sweep.values, payloads, strict=True)]
        result = ScenarioOutput(
            payload={"cells": [{"parameters": jsonable(v), "result": r}
                               for v, r in zip(sweep.values, payloads, strict=True)]},
            summary=_sweep_summary(kind, sweep, payloads), plot=_sweep_plot(kind, sweep, payloads, labels),
            figsize=(5.5 * max(1, _panels(kind, sweep)), 4.5), extra_files={f"{stem}.csv": _csv(rows)})
    seconds = time.perf_counter() - t0
    files = [json_path]
    if result.plot is not None:
        png = manifest.claim(f"{stem}.png", stem)
        save_figure(result.plot, png, figsize=result.figsize, title=params["title"], option="--out")
        manifest.record(png)
        files.append(png)
    for name, text in result.extra_files.items():
        files.append(manifest.write(name, text, source=stem))
    doc = {
        "scenario": stem,
        "kind": kind.name,
        "title": params["title"],
        "description": params["description"],
        "parameters": {k: v for k, v in params.items()
                       if k not in COMMON and k != "sweep" and (sweep is None or k not in sweep.keys)},
        "sweep": None if sweep is None else sweep.spec(),
        "result": result.payload,
        "summary": result.summary,
        "fingerprint": fingerprint,
        "outputs": [f.name for f in files],
        "seconds": seconds,
        "execution": {"scheduler": sched.describe(), "workers": sorted(hosts), "reused": reused,
                      "computed": len(cells) - reused, "seconds": seconds, **result.timings},
        "lpdp_version": __version__,
    }
    atomic_write(json_path, json.dumps(jsonable(doc), indent=1) + "\n", option="--out")
    manifest.record(json_path)
    manifest.flush()
    return {"scenario": stem, "kind": kind.name, "seconds": seconds, "summary": result.summary,
            "files": [str(f) for f in files], "reused": reused}


def _others(kind: Any, sweep: Sweep) -> list[str]:
    """Swept keys other than the plot's x axis (and derived seeds): one figure panel per combination."""
    return [k for k in sweep.keys if k not in (kind.sweep_plot.x, "seed")]


def _panels(kind: Any, sweep: Sweep) -> int:
    if kind.sweep_plot is None:
        return 1
    others = _others(kind, sweep)
    return len({tuple(json.dumps(v[k], default=repr) for k in others) for v in sweep.values})
