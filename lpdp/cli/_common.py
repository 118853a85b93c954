"""Shared CLI plumbing: output options, parsing of ``EPS,DELTA`` pairs, and result emission."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lpdp._version import __version__
from lpdp.display import format_upper
from lpdp.errors import ParameterError
from lpdp.export import EXPORT_SUFFIXES, jsonable
from lpdp.plot import PLOT_SUFFIXES


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--json``, ``--plot FILE`` and ``--export FILE`` (every command has them)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    parser.add_argument("--plot", metavar="FILE", help="write a figure (.png, .svg or .pdf)")
    parser.add_argument("--export", metavar="FILE",
                        help="write the result as plain data (.json, .geojson, .csv or .wkt)")


def parse_pair(text: str, option: str) -> tuple[float, float]:
    """Parse ``EPS,DELTA`` (the value of ``option``) into two floats; ranges are checked by the library."""
    parts = text.split(",")
    if len(parts) != 2:
        raise ParameterError(f"{option} {text!r}: expected EPS,DELTA (two numbers separated by a comma)")
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise ParameterError(f"{option} {text!r}: EPS and DELTA must be numbers") from None


@dataclass
class Result:
    """What a command produced: a summary, a JSON payload, and optionally regions and a plot."""

    summary: str
    payload: dict[str, Any]
    regions: Mapping[str, Any] = field(default_factory=dict)
    plot: Callable[[Any], None] | None = None
    table: Sequence[Mapping[str, Any]] | None = None


def emit(args: argparse.Namespace, result: Result) -> int:
    """Print the summary or the JSON, then write ``--plot`` and ``--export`` files."""
    from lpdp import export

    plot_path = export.check_output_path(args.plot, "--plot", PLOT_SUFFIXES) if getattr(
        args, "plot", None) else None
    export_path = export.check_output_path(args.export, "--export", EXPORT_SUFFIXES) if getattr(
        args, "export", None) else None
    payload = {**result.payload, "lpdp_version": __version__}
    if args.json:
        print(json.dumps(jsonable(payload)))
    else:
        print(result.summary)
    if plot_path is not None:
        if result.plot is None:
            raise ParameterError("--plot: this command has nothing to plot")
        from lpdp.plot import save_figure

        save_figure(result.plot, plot_path)
    if export_path is not None:
        export.write(export_path, payload=payload, regions=result.regions, table=result.table)
    return 0


def region_summary(region: Any, at: Sequence[float] | None = None, *, title: str = "",
                   max_rows: int = 12) -> str:
    """Readable text for one region: its tight (ε, δ) profile (trimmed), δ at ``at``, area."""
    prof = region.profile()
    lines = [title] if title else []
    lines.append(f"tight (epsilon, delta) profile, {len(prof)} pairs:")
    shown = prof if len(prof) <= max_rows else prof[: max_rows // 2] + [None] + prof[-max_rows // 2:]
    for pair in shown:
        lines.append("  ..." if pair is None else
                     f"  eps = {format_upper(pair[0]):<12} delta = {format_upper(pair[1])}")
    for e in at or []:
        lines.append(f"delta({e:g}) = {format_upper(float(region.delta(e)))}")
    lines.append(f"area = {region.area():.6g}, vertices = {len(region.vertices)}")
    return "\n".join(lines)


def regions_plot(regions: Mapping[str, Any]) -> Callable[[Any], None]:
    """A ``plot`` callback drawing labelled regions with :func:`lpdp.plot.regions`."""

    def draw(ax: Any) -> None:
        from lpdp.plot import regions as draw_regions

        draw_regions(list(regions.values()), labels=list(regions), ax=ax)

    return draw
