"""``lpdp run``: run scenario files (default: the shipped set) into an output folder.

``--plot`` tiles every scenario figure into one image; ``--export`` writes the summary table (.json or .csv).
``--scheduler``/``--workers`` choose where sweep cells and chunks run (this process, a Dask cluster on this
machine, or a running Dask scheduler); ``--resume`` reuses the finished cells of an earlier run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lpdp.cli._common import Result, add_output_options, emit
from lpdp.errors import ParameterError, ScenarioError


def _default_root() -> Path:
    """``./scenarios`` when there is one, else the default scenarios shipped with lpdp."""
    from lpdp.scenarios import shipped_root

    here = Path("scenarios")
    return here if here.is_dir() else shipped_root()


def _handle(args: argparse.Namespace) -> int:
    from lpdp import scenarios

    if args.schema:
        print(scenarios.schema_text())
        return 0
    if args.list:
        rows = scenarios.catalogue()
        width = max(len(name) for name, _, _ in rows)
        for name, title, default in rows:
            print(f"{name:<{width}}  {title}" + ("" if default else "  (not run by default)"))
        return 0
    if args.copy:
        print(f"wrote {scenarios.copy_bundled(*args.copy)}: edit it, then `lpdp run {args.copy[1]}`")
        return 0
    out = _out_folder(args.out)
    paths = [scenarios.resolve(p) for p in args.files] or scenarios.default_files(_default_root())
    if not paths:
        raise ScenarioError("no scenario files to run")
    args.interrupted_note = (f"finished cells are kept in {out}: rerun with --resume to compute only the "
                             "missing ones")   # the line lpdp.cli.main prints on Ctrl-C
    rows = scenarios.run_many(paths, args.out, scheduler=args.scheduler, workers=args.workers,
                              resume=args.resume, progress=False if args.quiet else None,
                              cluster_timeout=args.cluster_timeout)
    reused = sum(r["reused"] for r in rows)
    width = max(len(r["scenario"]) for r in rows)
    lines = [f"{'scenario':<{width}}  {'seconds':>8}  result"]
    for r in rows:
        first, *rest = r["summary"] or [""]
        lines.append(f"{r['scenario']:<{width}}  {r['seconds']:8.2f}  {first}")
        lines += [f"{'':<{width}}  {'':>8}  {line}" for line in rest]
    lines.append(f"wrote {sum(len(r['files']) for r in rows)} files to {out}"
                 + (f" (reused {reused} finished cells)" if args.resume else ""))
    pngs = [f for r in rows for f in r["files"] if f.endswith(".png")]
    return emit(args, Result(
        summary="\n".join(lines),
        payload={"out": str(args.out), "out_folder": str(Path(args.out).resolve()), "scenarios": rows,
                 "reused": reused},
        plot=_contact_sheet(pngs) if pngs else None,
        table=[{"scenario": r["scenario"], "kind": r["kind"], "seconds": r["seconds"],
                "summary": " | ".join(r["summary"])} for r in rows],
    ))


def _out_folder(out: str) -> str:
    """``--out`` as the summary names it; an empty name is refused, a link to a folder is followed and
    named with its target (the files land in the target)."""
    if not out.strip():
        raise ParameterError(f"--out {out!r}: an empty folder name; give a folder (--out . is the working "
                             "folder)")
    path = Path(out)
    if path.is_symlink() and path.is_dir():
        return f"{out}/ (a symbolic link to {path.resolve()}/)"
    return f"{out}/"


def _contact_sheet(pngs: list[str]):
    """A ``plot`` callback tiling the scenario figures into one image (:func:`lpdp.plot.contact_sheet`)."""

    def draw(ax) -> None:
        from lpdp.plot import contact_sheet

        contact_sheet(pngs, ax)

    return draw


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run scenario files (default: every default scenario)",
                       description="Run scenario TOML files (or bundled scenarios by name); write JSON and "
                                   "PNG per scenario.")
    p.add_argument("files", nargs="*", metavar="SCENARIO",
                   help="scenario files, or names of bundled scenarios (see --list)")
    p.add_argument("--list", action="store_true", help="list the bundled scenarios (name and title) and exit")
    p.add_argument("--copy", nargs=2, metavar=("NAME", "FILE"),
                   help="copy the bundled scenario NAME to FILE (.toml, not overwritten) to edit, and exit")
    p.add_argument("--out", default="lpdp-results", help="output folder (default ./lpdp-results)")
    p.add_argument("--schema", action="store_true", help="print the scenario file schema and exit")
    p.add_argument("--scheduler", metavar="WHERE",
                   help="where sweep cells run: 'serial' (this process), 'local' (a Dask cluster of worker "
                        "processes on this machine) or tcp://HOST:PORT (a running Dask scheduler); default: "
                        "the file's 'scheduler' key, else $LPDP_SCHEDULER, else 'local' for sweeps of more "
                        "than a few cells when Dask is installed (pip install 'lpdp[dask]'), else 'serial'. "
                        "Results are identical whatever the choice")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of --scheduler local (default: one per CPU)")
    p.add_argument("--cluster-timeout", type=float, metavar="SECONDS",
                   help="stop (keeping the finished cells for --resume) when a Dask cluster has had no "
                        "reachable scheduler or no worker for this long (default 60)")
    p.add_argument("--resume", action="store_true",
                   help="reuse the finished cells (and finished scenarios) of an earlier run into --out; "
                        "compute only the missing ones")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    add_output_options(p, export=(".json", ".csv"))
    p.set_defaults(func=_handle)
