"""CLI start-up: commands that need no solver, plot or statistics import neither cvxpy, matplotlib nor
scipy.stats (their imports alone cost 0.3 to over 1 s), ``--version`` imports no numpy, and a Gaussian
account loads no heavy package and no scipy (scipy.special alone costs 0.2-0.3 s; lpdp._special computes
log Φ from the C library's erfc). Checked by the modules loaded, not by timing."""

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
# sitecustomize / usercustomize: the interpreter's own start-up hooks, present in some environments
third = sorted({m.split(".")[0] for m in sys.modules if not m.startswith("_")} - set(sys.stdlib_module_names)
               - {"sitecustomize", "usercustomize"})
scipy = sorted({".".join(m.split(".")[:2]) for m in sys.modules
                if m.startswith("scipy.") and not m.startswith("scipy._")})
print(json.dumps({"code": code, "heavy": heavy, "third": third, "scipy": scipy}))
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


def test_version_imports_no_numpy():
    got = _loaded(["--version"])
    assert got["code"] in (0, None)
    assert got["third"] == ["lpdp"], f"lpdp --version imported {got['third']}"


def test_gaussian_account_loads_numpy_and_no_scipy():
    got = _loaded(["account", "--gaussian", "3x50", "--for-delta", "1e-6", "--json"])
    assert got["code"] in (0, None)
    assert not set(got["third"]) & {"cvxpy", "matplotlib", "shapely", "pandas", "distributed", "mpmath",
                                    "dp_accounting"}, got["third"]
    assert got["scipy"] == [], got["scipy"]
