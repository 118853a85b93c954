"""Shared CLI plumbing: output options, parsing of ``EPS,DELTA`` pairs, and result emission."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lpdp._version import __version__
from lpdp.display import format_upper
from lpdp.errors import ParameterError
from lpdp.export import EXPORT_SUFFIXES, jsonable
from lpdp.plot import PLOT_SUFFIXES


def add_output_options(parser: argparse.ArgumentParser, *, plot: bool = True,
                       export: Sequence[str] = EXPORT_SUFFIXES) -> None:
    """``--json``, ``--plot FILE`` (when the command draws a figure) and ``--export FILE``.

    ``export`` lists the suffixes the command can write. Both paths are checked (folder, suffix, not a
    directory or a link) by :func:`check_outputs` before the command computes anything.
    """
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    if plot:
        parser.add_argument("--plot", metavar="FILE", help="write a figure (.png, .svg or .pdf)")
    parser.add_argument("--export", metavar="FILE",
                        help=f"write the result as plain data ({', '.join(export)}; .json holds everything)")
    parser.set_defaults(export_suffixes=tuple(export))


def check_outputs(args: argparse.Namespace) -> None:
    """Validate ``--plot`` and ``--export`` (suffix, folder, not a directory or a link) before any work."""
    from lpdp.export import check_output_path

    if getattr(args, "plot", None) is not None:    # an empty name is refused, not ignored
        check_output_path(args.plot, "--plot", PLOT_SUFFIXES)
    if getattr(args, "export", None) is not None:
        suffixes = getattr(args, "export_suffixes", EXPORT_SUFFIXES)
        check_output_path(args.export, "--export", suffixes)
        if args.plot and Path(args.plot).resolve() == Path(args.export).resolve():
            raise ParameterError(f"--plot and --export: both name {args.export!r}; give two files")


def _looks_swapped(eps: float, delta: float) -> bool:
    """``EPS,DELTA`` that reads like ``DELTA,EPS``: a large δ with a tiny ε."""
    return 0 <= eps <= 0.01 and 0.1 <= delta < 1


def parse_pair(text: str, option: str) -> tuple[float, float]:
    """Parse ``EPS,DELTA`` (the value of ``option``) into two floats; ranges are checked by the library.

    A pair that looks swapped (δ >= 0.1 with ε <= 0.01) is accepted with a one-line warning on stderr.
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise ParameterError(f"{option} {text!r}: expected EPS,DELTA (two numbers separated by a comma)")
    try:
        eps, delta = float(parts[0]), float(parts[1])
    except ValueError:
        raise ParameterError(f"{option} {text!r}: EPS and DELTA must be numbers") from None
    if _looks_swapped(eps, delta):
        print(f"lpdp: warning: {option} {text}: epsilon = {eps:g} with delta = {delta:g}; the order is "
              f"EPS,DELTA (did you mean {option} {parts[1].strip()},{parts[0].strip()}?)", file=sys.stderr)
    return eps, delta


@dataclass
class Result:
    """What a command produced: a summary, a JSON payload, and optionally regions and a plot."""

    summary: str
    payload: dict[str, Any]
    regions: Mapping[str, Any] = field(default_factory=dict)
    plot: Callable[[Any], None] | None = None
    table: Sequence[Mapping[str, Any]] | None = None


def emit(args: argparse.Namespace, result: Result) -> int:
    """Write ``--plot`` and ``--export`` files (paths checked again first), then print the summary or JSON."""
    from lpdp import export

    check_outputs(args)
    payload = {**result.payload, "lpdp_version": __version__}
    if getattr(args, "plot", None):
        if result.plot is None:
            raise ParameterError("--plot: this result has nothing to plot")
        from lpdp.plot import save_figure

        save_figure(result.plot, args.plot)
    if getattr(args, "export", None):
        export.write(args.export, payload=payload, regions=result.regions, table=result.table)
    if args.json:
        print(json.dumps(jsonable(payload)))
    else:
        print(result.summary)
    return 0


def region_summary(region: Any, at: Sequence[float] | None = None, *, title: str = "",
                   max_rows: int = 12) -> str:
    """Readable text for one region: its tight (ε, δ) profile (at most ``max_rows`` pairs), δ at ``at``.

    Only the pairs shown are computed (the cost is ``max_rows`` δ queries, never the whole profile), and
    every printed ε and δ is rounded up (:func:`lpdp.display.format_upper`): each line is a valid guarantee.
    """
    import numpy as np

    eps = np.sort(region.losses[region.losses >= 0])
    if eps.size == 0:
        eps = np.array([0.0])
    n = int(eps.size)
    idx = list(range(n)) if n <= max_rows else [*range(max_rows // 2), -1, *range(n - max_rows // 2, n)]
    shown = [float(eps[i]) for i in idx if i >= 0]
    deltas = iter(np.atleast_1d(region.delta(shown)).tolist())
    lines = [title] if title else []
    lines.append(f"tight (epsilon, delta) profile, {n} pairs" + (":" if n <= max_rows else
                 f" (first and last {max_rows // 2}; --export FILE.json writes them all):"))
    for i in idx:
        lines.append("  ..." if i < 0 else
                     f"  eps = {format_upper(float(eps[i])):<12} delta = {format_upper(next(deltas))}")
    for e in at or []:
        lines.append(f"delta({e:g}) = {format_upper(float(region.delta(e)))}")
    lines.append(f"area = {region.area():.6g}, edges = {len(region)}")
    return "\n".join(lines)


def regions_plot(regions: Mapping[str, Any]) -> Callable[[Any], None]:
    """A ``plot`` callback drawing labelled regions with :func:`lpdp.plot.regions`."""

    def draw(ax: Any) -> None:
        from lpdp.plot import regions as draw_regions

        draw_regions(list(regions.values()), labels=list(regions), ax=ax)

    return draw
