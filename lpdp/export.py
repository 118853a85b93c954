"""Plain-data export of regions and results: JSON, GeoJSON, CSV and WKT, each carrying the lpdp version."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lpdp._version import __version__
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["region_dict", "to_json", "to_geojson", "to_csv", "to_wkt", "write"]


def region_dict(region: PrivacyRegion, at: Sequence[float] | None = None) -> dict[str, Any]:
    """A region as plain data: profile, δ at the requested ε, vertices, edges (exact), area.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.export import region_dict
    >>> d = region_dict(PrivacyRegion.from_dp(1.0, 0.0), at=[0.5])
    >>> d["profile"], [round(x, 6) for x in d["delta_at"][0]]
    ([[1.0, 0.0]], [0.5, 0.287649])
    """
    at = [] if at is None else [float(e) for e in at]
    delta_at = np.atleast_1d(region.delta(at)) if at else []
    return {
        "profile": [[e, d] for e, d in region.profile()],
        "delta_at": [[e, float(d)] for e, d in zip(at, delta_at, strict=True)],
        "vertices": region.vertices.tolist(),
        "area": region.area(),
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


def _finite(value: Any) -> Any:
    from lpdp.cli._common import jsonable

    return jsonable(value)


def to_json(regions: Mapping[str, PrivacyRegion], payload: Mapping[str, Any] | None = None) -> str:
    """JSON document: ``{"regions": {label: region_dict}, ...payload, "lpdp_version"}``."""
    doc = dict(payload or {})
    if regions:
        doc["regions"] = {label: region_dict(r) for label, r in regions.items()}
    return json.dumps(_finite(_with_version(doc)), indent=1) + "\n"


def to_geojson(regions: Mapping[str, PrivacyRegion]) -> str:
    """GeoJSON FeatureCollection: one Polygon per region (x = type I error, y = type II error)."""
    features = []
    for label, r in regions.items():
        ring = r.vertices.tolist()
        ring.append(ring[0])
        features.append({
            "type": "Feature",
            "geometry": {"type": "Polygon", "coordinates": [ring]},
            "properties": {"label": label, "profile": [[e, d] for e, d in r.profile()],
                           "area": r.area()},
        })
    doc = {"type": "FeatureCollection", "features": features, "lpdp_version": __version__}
    return json.dumps(_finite(doc)) + "\n"


def to_csv(regions: Mapping[str, PrivacyRegion]) -> str:
    """CSV of the lower boundaries: ``label,type_I,type_II`` rows, after a ``# lpdp VERSION`` line."""
    buf = io.StringIO()
    buf.write(f"# lpdp {__version__}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["label", "type_I", "type_II"])
    for label, r in regions.items():
        for x, y in r.boundary():
            w.writerow([label, repr(float(x)), repr(float(y))])
    return buf.getvalue()


def _table_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    buf.write(f"# lpdp {__version__}\n")
    keys = list(rows[0]) if rows else []
    w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def to_wkt(regions: Mapping[str, PrivacyRegion]) -> str:
    """WKT, one ``POLYGON`` per line, each after a ``# label (lpdp VERSION)`` comment line."""
    lines = []
    for label, r in regions.items():
        lines += [f"# {label} (lpdp {__version__})", r.polygon.wkt]
    return "\n".join(lines) + "\n"


def write(path: str | Path, *, payload: Mapping[str, Any] | None = None,
          regions: Mapping[str, PrivacyRegion] | None = None,
          table: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """Write ``regions`` (or ``payload``/``table``) to ``path``; the format follows the suffix.

    ``.json`` writes the payload and the regions; ``.geojson``, ``.wkt`` need regions; ``.csv`` writes the
    region boundaries, or ``table`` rows when there are no regions.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    regions = dict(regions or {})
    if suffix == ".json":
        text = to_json(regions, payload)
    elif suffix == ".csv" and (regions or table is not None):
        text = to_csv(regions) if regions else _table_csv(table or [])
    elif suffix in (".geojson", ".wkt") and regions:
        text = to_geojson(regions) if suffix == ".geojson" else to_wkt(regions)
    elif suffix in (".geojson", ".wkt", ".csv"):
        raise ParameterError(f"--export {str(path)!r}: this result has no region to write as {suffix}; "
                             f"use .json")
    else:
        raise ParameterError(f"export path {str(path)!r}: suffix must be .json, .geojson, .csv or .wkt")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"export path {str(path)!r}: cannot write ({exc.strerror})") from None
    return path
