"""CLI start-up: commands that need no solver, plot or statistics import neither cvxpy, matplotlib nor
scipy.stats (their imports alone cost 0.3 to over 1 s). Checked by the modules loaded, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = """
import contextlib, io, json, sys
from lpdp.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
heavy = sorted(({m.split(".")[0] for m in sys.modules} & {"cvxpy", "matplotlib"})
               | ({"scipy.stats"} & set(sys.modules)))
print(json.dumps({"code": code, "heavy": heavy}))
"""


def _loaded(argv: list[str]) -> dict:
    res = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["compose", "--dp", "0.5,0", "-k", "3", "--at", "1", "--json"],
    ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "10", "--at", "1", "--json"],
])
def test_light_commands_skip_solver_and_plot_imports(argv):
    got = _loaded(argv)
    assert got["code"] in (0, None)
    assert got["heavy"] == [], f"{argv} imported {got['heavy']}"
