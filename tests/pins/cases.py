"""The cases the regression pins cover, and how each is run.

* every Python example of README.md and docs/*.md (its printed output),
* a set of CLI commands with ``--json`` (every command: account, compose, region, mix, fdp and
  filter params|audit|simulate, including the documented examples),
* the ``result`` of every default scenario.

The pinned files hold the code and command lines as they were when pinned, so the docs may change
without losing the check.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent

CLI_CASES: list[list[str]] = [
    ["region", "--dp", "1.3,0", "--dp", "0.5,0.2", "--at", "0", "1", "--json"],
    ["mix", "--weight", "0.5", "--dp", "1.3,0", "--weight", "0.5", "--dp", "0.5,0.2", "--json"],
    ["compose", "--dp", "0.1,1e-7", "-k", "1000", "--at", "1", "2", "--json"],
    ["compose", "--dp", "0.1,1e-7", "-k", "100000", "--for-delta", "1e-3", "--json"],
    ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--for-delta", "1e-3",
     "--max-k-within", "2,1e-3", "--json"],
    ["compose", "--pure", "0.5x6", "--pure", "0.2x4", "--at", "1", "--for-delta", "1e-6", "--json"],
    ["compose", "--dp", "1,0", "--dp", "0.5,0.05", "--dp", "0.25,0.2", "-k", "30", "--step", "0.25", "--at",
     "1", "3", "--json"],
    ["account", "--dp", "1,0/0.5,0.1x10", "--rr", "4,0.7x20", "--pure", "0.3x4", "--at", "1", "2",
     "--for-delta", "1e-6", "--json"],
    ["account", "--gaussian", "3x50", "--laplace", "1x5", "--rr", "4,0.7x20", "--for-delta", "1e-3",
     "1e-6", "--json"],
    ["account", "--gaussian", "3x50", "--for-delta", "1e-6", "--json"],
    ["account", "--laplace", "1x10", "--at", "1", "3", "--for-delta", "1e-5", "--json"],
    ["fdp", "--laplace", "1", "-k", "100", "--for-delta", "1e-5", "1e-9", "--json"],
    ["fdp", "--gaussian", "1", "-k", "10", "--constraints", "2", "--at", "1", "2", "--json"],
    ["fdp", "--laplace", "1", "-k", "5", "--constraints", "4", "--at", "0.5", "--json"],
    ["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--gaussian-sigma", "2", "--epsilon", "6",
     "--json"],
    ["filter", "audit", "--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3", "--max-steps", "48",
     "--filter", "realisation", "--json"],
    ["filter", "simulate", "--rr", "4,0.7", "--epsilon", "6", "--delta", "1e-6", "--max-steps", "40",
     "--trajectories", "0", "--json"],
    ["filter", "simulate", "--rr", "4,0.7", "--epsilon", "6", "--delta", "1e-6", "--max-steps", "40",
     "--json"],
]

#: Default scenarios that run in a few seconds: pinned in the default profile; the rest in the deep one.
FAST_SCENARIOS = ["budget_double_dp", "count_pure_and_approx", "fdp_tail_gaussian", "figure1_mixture",
                  "figure2_double_dp", "figure3_gaussian"]
SCENARIOS = [*FAST_SCENARIOS, "account_mixed_workload", "fdp_tightening_gaussian", "figure_filter_gaussian",
             "filter_adaptive_audit", "ldp_telemetry_filter"]

#: Keys whose values are wall-clock or machine-dependent, never pinned.
VOLATILE = re.compile(r"seconds|time|elapsed|version|path|file", re.I)


def doc_snippets() -> list[tuple[str, str]]:
    """Every ```python block of README.md and docs/*.md, as (source, code)."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S)):
            out.append((f"{path.relative_to(ROOT)}#{i}", code))
    return out


def run_snippet(code: str) -> str:
    """Run ``code`` in a fresh namespace inside a temporary folder; its standard output."""
    import tempfile

    buf = io.StringIO()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(code, "<pinned example>", "exec"), {"__name__": "__pinned__"})
        finally:
            os.chdir(cwd)
    return buf.getvalue()


def run_cli(argv: list[str]) -> Any:
    """Run ``lpdp ARGV`` in-process; its JSON output."""
    from lpdp.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    if code not in (0, None):
        raise RuntimeError(f"lpdp {' '.join(argv)} exited {code}")
    return json.loads(buf.getvalue())


def run_scenario(name: str, tmp: Path) -> Any:
    """The ``result`` of the shipped scenario ``name``, run serially."""
    from lpdp.scenarios import run_file

    out = tmp / name
    with contextlib.redirect_stdout(io.StringIO()):
        run_file(ROOT / "scenarios" / f"{name}.toml", out, scheduler="serial")
    return json.loads((out / f"{name}.json").read_text())["result"]
