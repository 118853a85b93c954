"""Plain-data export and safe file writing.

* Exports of regions and results: JSON, GeoJSON, CSV (readable by ``pandas.read_csv`` without options; the
  version is a column) and WKT, each carrying the lpdp version.
* :func:`atomic_write` / :func:`atomic_open`: every file lpdp writes goes to a temporary file in the same
  folder, is flushed to disk and renamed into place, so a failing write leaves the previous file intact. A
  path that is a symlink is refused (lpdp never writes through one).
* :func:`check_output_path`: validate an output path (folder exists, not a directory, not a symlink, suffix
  known) before any work is done.
* :class:`Manifest`: ``manifest.json`` in an output folder listing inputs, outputs (with their SHA-256),
  the lpdp version and ``complete: true/false``, so an interrupted run is recognisable; it refuses two
  outputs of one run with the same name.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from lpdp._version import __version__
from lpdp.errors import OutputError, ParameterError

if TYPE_CHECKING:     # annotations only: lpdp.region draws itself through lpdp.plot, which writes here
    from lpdp.region import PrivacyRegion

__all__ = [
    "region_dict",
    "jsonable",
    "to_json",
    "to_geojson",
    "to_csv",
    "to_wkt",
    "table_csv",
    "write",
    "check_output_path",
    "atomic_open",
    "atomic_write",
    "Manifest",
    "MANIFEST_NAME",
]

#: Suffixes :func:`write` understands.
EXPORT_SUFFIXES = (".json", ".geojson", ".csv", ".wkt")
#: Name of the manifest file :class:`Manifest` keeps in an output folder.
MANIFEST_NAME = "manifest.json"


def jsonable(value: Any) -> Any:
    """Plain JSON data: floats stay floats, inf/NaN become strings, numpy values become Python ones.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp.export import jsonable
    >>> jsonable({"d": np.array([0.5, np.inf]), 1: (2, float("nan"))})
    {'d': [0.5, 'inf'], '1': [2, 'nan']}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def _describe(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_output_path(path: str | os.PathLike[str], option: str = "path",
                      suffixes: Sequence[str] | None = None) -> Path:
    """Check, before any work, that ``path`` can be written; returns it as a :class:`~pathlib.Path`.

    The folder must exist and be writable, ``path`` must not be a directory or a symlink, and its suffix
    must be one of ``suffixes`` (when given). Errors are :class:`~lpdp.errors.OutputError` (or
    :class:`~lpdp.errors.ParameterError` for a suffix) naming ``option`` and the path.

    Examples
    --------
    >>> from lpdp.export import check_output_path
    >>> check_output_path("/no/such/folder/x.json", "--export")
    Traceback (most recent call last):
    ...
    lpdp.errors.OutputError: --export '/no/such/folder/x.json': the folder '/no/such/folder' does not exist
    """
    try:
        name = os.fspath(path)
    except TypeError:
        raise ParameterError(f"{option}={path!r}: must be a file path") from None
    if not isinstance(name, str):
        raise ParameterError(f"{option}={path!r}: must be a file path given as text")
    path = Path(name)
    if not path.name or path.name in (".", "..") or name.endswith(("/", os.sep)):
        raise OutputError(f"{option} {name!r}: not a file name")
    parent = path.parent
    if path.is_symlink():
        raise OutputError(f"{option} {name!r}: is a symbolic link; lpdp does not write through links")
    if path.is_dir():
        raise OutputError(f"{option} {name!r}: is a directory, not a file")
    if not parent.exists():
        raise OutputError(f"{option} {name!r}: the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{option} {name!r}: {str(parent)!r} is not a folder")
    try:  # the one reliable test (root, read-only mounts, /proc): create a file there
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"{option} {name!r}: cannot write in the folder {str(parent)!r} "
                          f"({_describe(exc)})") from None
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise ParameterError(f"{option} {name!r}: the file name must end in one of {', '.join(suffixes)}")
    return path


_UMASK: list[int] = []


def _new_file_mode(path: Path) -> int:
    """The mode a plain ``open(path, "w")`` would give (the old file's mode when replacing one)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return 0o666 & ~_UMASK[0]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *, option: str = "path"
                ) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success it is fsynced and renamed onto ``path``.

    If the body raises, or writing fails (disk full, file-size limit), the temporary file is removed and
    the previous ``path`` is left untouched. ``mode`` is ``"w"`` (UTF-8 text) or ``"wb"``. A ``path``
    that is a symlink or a directory, or whose folder is missing, raises
    :class:`~lpdp.errors.OutputError` naming ``option``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from lpdp.export import atomic_open
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "note.txt"
    >>> with atomic_open(target) as f:
    ...     _ = f.write("hello")
    >>> target.read_text()
    'hello'
    """
    if mode not in ("w", "wb"):
        raise ParameterError(f"mode={mode!r}: must be 'w' or 'wb'")
    path = check_output_path(path, option)
    file_mode = _new_file_mode(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"{option} {str(path)!r}: cannot write ({_describe(exc)})") from None
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, file_mode)
        if path.is_symlink():  # appeared while we wrote: still never replace a link
            raise OutputError(f"{option} {str(path)!r}: is a symbolic link; lpdp does not write "
                              f"through links")
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"{option} {str(path)!r}: cannot write ({_describe(exc)}); "
                              f"any previous file is unchanged") from None
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, option: str = "path") -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically (see :func:`atomic_open`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from lpdp.export import atomic_write
    >>> p = atomic_write(pathlib.Path(tempfile.mkdtemp()) / "a.json", '{"ok": true}')
    >>> p.read_text()
    '{"ok": true}'
    """
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w", option=option) as f:
        f.write(data)
    return Path(path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Manifest:
    """The record of one run into an output folder: ``<folder>/manifest.json``.

    Created with ``complete: false`` before any output is written; :meth:`finish` (or leaving the ``with``
    block without an exception) rewrites it with ``complete: true``. Each output is listed with its size
    and SHA-256, each input with its SHA-256, so a rerun can tell what is already done
    (:meth:`done`). Two outputs of one run with the same name are refused (:meth:`claim`).

    Parameters
    ----------
    folder : path
        The output folder (created if missing).
    inputs : iterable of path
        Files the run reads (their SHA-256 is recorded when they exist).
    option : str
        The option name used in error messages (e.g. ``"--out"``).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from lpdp.export import Manifest
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "results"
    >>> with Manifest(out, inputs=[]) as m:
    ...     _ = m.write("a.json", "{}", source="demo")
    >>> doc = json.loads((out / "manifest.json").read_text())
    >>> doc["complete"], [o["name"] for o in doc["outputs"]]
    (True, ['a.json'])
    """

    def __init__(self, folder: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = (),
                 *, option: str = "--out") -> None:
        self.folder = Path(folder)
        self.option = option
        if self.folder.is_symlink() and not self.folder.is_dir():
            raise OutputError(f"{option} {str(self.folder)!r}: is a dangling symbolic link")
        if self.folder.exists() and not self.folder.is_dir():
            raise OutputError(f"{option} {str(self.folder)!r}: exists and is not a folder")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{option} {str(self.folder)!r}: cannot create the folder "
                              f"({_describe(exc)})") from None
        self.path = check_output_path(self.folder / MANIFEST_NAME, option)
        self.previous = self._read_previous()
        self.inputs = [{"path": str(p), "sha256": _sha256(Path(p)) if Path(p).is_file() else None}
                       for p in inputs]
        self.outputs: dict[str, dict[str, Any]] = {}
        self._claims: dict[str, str] = {MANIFEST_NAME: "the manifest"}
        self.complete = False
        self.flush()

    def _read_previous(self) -> dict[str, Any] | None:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def claim(self, name: str, source: str = "") -> Path:
        """Reserve the output ``name`` (a file in the folder) for ``source``; a second claim is refused."""
        if Path(name).name != name or name in ("", ".", ".."):
            raise OutputError(f"{self.option}: output name {name!r} must be a plain file name")
        if name in self._claims:
            raise OutputError(f"{self.option} {str(self.folder)!r}: {source or 'an output'} and "
                              f"{self._claims[name]} both write {name!r}; rename one of them")
        self._claims[name] = source or name
        return check_output_path(self.folder / name, self.option)

    def record(self, path: str | os.PathLike[str]) -> None:
        """List a written file (in the folder) among the outputs, with its size and SHA-256."""
        p = Path(path)
        self.outputs[p.name] = {"name": p.name, "bytes": p.stat().st_size, "sha256": _sha256(p)}

    def write(self, name: str, data: str | bytes, source: str = "") -> Path:
        """Claim ``name``, write ``data`` atomically, record it; returns the path."""
        path = self.claim(name, source)
        atomic_write(path, data, option=self.option)
        self.record(path)
        return path

    def done(self, name: str) -> bool:
        """Whether a previous complete run listed ``name`` and the file still has the recorded SHA-256."""
        if not self.previous or self.previous.get("complete") is not True:
            return False
        entry = {o.get("name"): o for o in self.previous.get("outputs", []) if isinstance(o, dict)}.get(name)
        p = self.folder / name
        return entry is not None and p.is_file() and not p.is_symlink() and entry.get("sha256") == _sha256(p)

    def to_dict(self) -> dict[str, Any]:
        """The manifest document."""
        return {"lpdp_version": __version__, "complete": self.complete, "inputs": self.inputs,
                "outputs": list(self.outputs.values())}

    def flush(self) -> None:
        """Rewrite ``manifest.json`` (atomically) with what is known now."""
        atomic_write(self.path, json.dumps(self.to_dict(), indent=1) + "\n", option=self.option)

    def finish(self) -> None:
        """Mark the run complete and rewrite the manifest."""
        self.complete = True
        self.flush()

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.finish()
        else:
            self.flush()


#: Regions with more edges than this are abbreviated by :func:`region_dict` unless ``full=True``.
FULL_EDGES = 5000
#: Profile pairs kept at each end of an abbreviated region.
ABBREVIATED_ENDS = 50


def _attack_profile(region: PrivacyRegion) -> list[list[float]]:
    """The profile pairs with each δ certified from below (:meth:`PrivacyRegion.delta_lower`)."""
    eps = np.sort(region.losses[region.losses >= 0])
    eps = eps if eps.size else np.array([0.0])
    return [[float(e), float(d)] for e, d in zip(eps, np.atleast_1d(region.delta_lower(eps)), strict=True)]


def region_dict(region: PrivacyRegion, at: Sequence[float] | None = None, *,
                full: bool | None = None, attack: bool = False) -> dict[str, Any]:
    """A region as plain data: profile, δ at the requested ε, vertices, edges (exact), area.

    A region of more than :data:`FULL_EDGES` edges is abbreviated unless ``full=True``: the profile keeps
    the first and last :data:`ABBREVIATED_ENDS` pairs, and ``vertices`` and ``edges`` are left out, so a
    printed result costs what the question costs (``"abbreviated"`` then says how many pairs there are).
    Exports to a file (:func:`to_json`) are always full. With ``attack=True`` (a region that lies inside
    the truth's, e.g. ``lpdp.fdp.Bracket.from_above``) every δ is certified from below instead.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.export import region_dict
    >>> d = region_dict(PrivacyRegion.from_dp(1.0, 0.0), at=[0.5])
    >>> d["profile"], [round(x, 6) for x in d["delta_at"][0]]
    ([[1.0, 0.0]], [0.5, 0.287649])
    """
    at = [] if at is None else [float(e) for e in at]
    side = region.delta_lower if attack else region.delta
    delta_at = np.atleast_1d(side(at)) if at else []
    doc: dict[str, Any] = {"delta_at": [[e, float(d)] for e, d in zip(at, delta_at, strict=True)],
                           "area": region.area()}
    if full is None:
        full = len(region) <= FULL_EDGES
    if not full:
        eps = np.sort(region.losses[region.losses >= 0])
        ends = np.concatenate((eps[:ABBREVIATED_ENDS], eps[-ABBREVIATED_ENDS:])) \
            if eps.size > 2 * ABBREVIATED_ENDS else eps
        shown = np.atleast_1d(side(ends))
        return {"profile": [[float(e), float(d)] for e, d in zip(ends, shown, strict=True)],
                "abbreviated": {"profile_pairs": int(eps.size), "edges": len(region),
                                "shown": "first and last " + str(ABBREVIATED_ENDS) + " profile pairs; "
                                         "vertices and edges omitted (export to .json for all)"},
                **doc}
    return {
        "profile": [list(pair) for pair in region.profile()] if not attack else _attack_profile(region),
        **doc,
        "vertices": region.vertices.tolist(),
        "edges": {
            "loss": region.losses.tolist(),
            "log_p": region.log_p.tolist(),
            "log_q": region.log_q.tolist(),
            "log_p_inf": region.log_p_inf,
            "log_q_ninf": region.log_q_ninf,
        },
    }


def _with_version(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "lpdp_version": __version__}


def to_json(regions: Mapping[str, PrivacyRegion], payload: Mapping[str, Any] | None = None) -> str:
    """JSON document: ``{"regions": {label: region_dict}, ...payload, "lpdp_version"}``."""
    doc = dict(payload or {})
    if regions:
        doc["regions"] = {label: region_dict(r, full=True) for label, r in regions.items()}
    return json.dumps(jsonable(_with_version(doc)), indent=1) + "\n"


def to_geojson(regions: Mapping[str, PrivacyRegion]) -> str:
    """GeoJSON FeatureCollection: one Polygon per region (x = type I error, y = type II error)."""
    features = []
    for label, r in regions.items():
        ring = r.vertices.tolist()
        ring.append(ring[0])
        features.append({
            "type": "Feature",
            "geometry": {"type": "Polygon", "coordinates": [ring]},
            "properties": {"label": label, "profile": [list(pair) for pair in r.profile()],
                           "area": r.area()},
        })
    doc = {"type": "FeatureCollection", "features": features, "lpdp_version": __version__}
    return json.dumps(jsonable(doc)) + "\n"


def to_csv(regions: Mapping[str, PrivacyRegion]) -> str:
    """CSV of the lower boundaries: ``label,type_I,type_II,lpdp_version`` (a header, then plain rows)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["label", "type_I", "type_II", "lpdp_version"])
    for label, r in regions.items():
        for x, y in r.boundary():
            w.writerow([label, repr(float(x)), repr(float(y)), __version__])
    return buf.getvalue()


def table_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV of table rows (keys of the first row as the header) plus an ``lpdp_version`` column."""
    buf = io.StringIO()
    keys = [*(rows[0] if rows else []), "lpdp_version"]
    w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    w.writeheader()
    w.writerows({**row, "lpdp_version": __version__} for row in rows)
    return buf.getvalue()


def to_wkt(regions: Mapping[str, PrivacyRegion]) -> str:
    """WKT, one ``POLYGON`` per line, each after a ``# label (lpdp VERSION)`` comment line."""
    lines = []
    for label, r in regions.items():
        lines += [f"# {label} (lpdp {__version__})", r.polygon.wkt]
    return "\n".join(lines) + "\n"


def write(path: str | Path, *, payload: Mapping[str, Any] | None = None,
          regions: Mapping[str, PrivacyRegion] | None = None,
          table: Sequence[Mapping[str, Any]] | None = None, option: str = "--export") -> Path:
    """Write ``regions`` (or ``payload``/``table``) to ``path`` atomically; the format follows the suffix.

    ``.json`` writes the payload and the regions; ``.geojson``, ``.wkt`` need regions; ``.csv`` writes the
    region boundaries, or ``table`` rows when there are no regions. The path and the format are checked
    before anything is written; a failed write leaves any previous file intact.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.export import write
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> p = write(folder / "r.csv", regions={"R(1, 0)": PrivacyRegion.from_dp(1.0, 0.0)})
    >>> p.read_text().splitlines()[0]
    'label,type_I,type_II,lpdp_version'
    """
    path = check_output_path(path, option, EXPORT_SUFFIXES)
    suffix = path.suffix.lower()
    regions = dict(regions or {})
    if suffix == ".json":
        text = to_json(regions, payload)
    elif suffix == ".csv" and (regions or table is not None):
        text = to_csv(regions) if regions else table_csv(table or [])
    elif regions:
        text = to_geojson(regions) if suffix == ".geojson" else to_wkt(regions)
    else:
        raise ParameterError(f"{option} {str(path)!r}: this result has no region to write as {suffix}; "
                             f"use .json" + ("" if table is None else " or .csv"))
    return atomic_write(path, text, option=option)
