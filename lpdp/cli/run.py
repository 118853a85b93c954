"""``lpdp run``: run scenario files (default: the shipped set) into an output folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lpdp.cli._common import jsonable
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
    if args.json:
        print(json.dumps(jsonable({"out": str(args.out), "scenarios": rows})))
        return 0
    width = max(len(r["scenario"]) for r in rows)
    print(f"{'scenario':<{width}}  {'seconds':>8}  result")
    for r in rows:
        lines = r["summary"] or [""]
        print(f"{r['scenario']:<{width}}  {r['seconds']:8.2f}  {lines[0]}")
        for line in lines[1:]:
            print(f"{'':<{width}}  {'':>8}  {line}")
    print(f"wrote {sum(len(r['files']) for r in rows)} files to {args.out}/")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run scenario files (default: every default scenario)",
                       description="Run scenario TOML files; write JSON and PNG per scenario.")
    p.add_argument("files", nargs="*", metavar="SCENARIO.toml")
    p.add_argument("--out", default="lpdp-results", help="output folder (default ./lpdp-results)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--schema", action="store_true", help="print the scenario file schema and exit")
    p.set_defaults(func=_handle)
