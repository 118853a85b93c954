"""``lpdp run``: run scenario files (default: the shipped set) into an output folder.

``--plot`` tiles every scenario figure into one image; ``--export`` writes the summary table (.json or .csv).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lpdp.cli._common import Result, add_output_options, emit
from lpdp.errors import ScenarioError


def _default_root() -> Path:
    here = Path("scenarios")
    if here.is_dir():
        return here
    shipped = Path(__file__).resolve().parents[2] / "scenarios"
    if shipped.is_dir():
        return shipped
    raise ScenarioError("no ./scenarios folder here and none shipped with lpdp: name scenario files")


def _handle(args: argparse.Namespace) -> int:
    from lpdp import scenarios

    if args.schema:
        print(scenarios.schema_text())
        return 0
    paths = [Path(p) for p in args.files] or scenarios.default_files(_default_root())
    if not paths:
        raise ScenarioError("no scenario files to run")
    rows = scenarios.run_many(paths, args.out)
    width = max(len(r["scenario"]) for r in rows)
    lines = [f"{'scenario':<{width}}  {'seconds':>8}  result"]
    for r in rows:
        first, *rest = r["summary"] or [""]
        lines.append(f"{r['scenario']:<{width}}  {r['seconds']:8.2f}  {first}")
        lines += [f"{'':<{width}}  {'':>8}  {line}" for line in rest]
    lines.append(f"wrote {sum(len(r['files']) for r in rows)} files to {args.out}/")
    pngs = [f for r in rows for f in r["files"] if f.endswith(".png")]
    return emit(args, Result(
        summary="\n".join(lines),
        payload={"out": str(args.out), "scenarios": rows},
        plot=_contact_sheet(pngs) if pngs else None,
        table=[{"scenario": r["scenario"], "kind": r["kind"], "seconds": r["seconds"],
                "summary": " | ".join(r["summary"])} for r in rows],
    ))


def _contact_sheet(pngs: list[str]):
    """A ``plot`` callback that tiles the scenario figures into one image."""

    def draw(ax) -> None:
        import math

        import matplotlib.image as mpimg

        fig = ax.figure
        fig.delaxes(ax)
        cols = min(3, len(pngs))
        rows = math.ceil(len(pngs) / cols)
        fig.set_size_inches(6 * cols, 4 * rows)
        for i, png in enumerate(pngs):
            sub = fig.add_subplot(rows, cols, i + 1)
            sub.imshow(mpimg.imread(png))
            sub.set_title(Path(png).stem, fontsize="small")
            sub.axis("off")

    return draw


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run scenario files (default: every default scenario)",
                       description="Run scenario TOML files; write JSON and PNG per scenario.")
    p.add_argument("files", nargs="*", metavar="SCENARIO.toml")
    p.add_argument("--out", default="lpdp-results", help="output folder (default ./lpdp-results)")
    p.add_argument("--schema", action="store_true", help="print the scenario file schema and exit")
    add_output_options(p)
    p.set_defaults(func=_handle)
