"""The wheel a user installs: built from the tree, it carries the default scenarios and py.typed, and runs
from an empty folder outside the checkout. The full check (fresh venv with every dependency downloaded)
is in .ci/run; here the fresh venv borrows the test environment's dependencies, never its lpdp."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_setup_maps_the_one_scenarios_folder_as_package_data():
    """The wheel's scenario files come from the top-level scenarios/ folder (no second copy in lpdp/)."""
    text = (ROOT / "setup.py").read_text()
    assert '"lpdp._default_scenarios": "scenarios"' in text and '"lpdp": ["py.typed"]' in text
    assert (ROOT / "lpdp" / "py.typed").is_file() and not (ROOT / "lpdp" / "_default_scenarios").exists()


def test_shipped_root_is_the_scenarios_folder_in_a_checkout():
    from lpdp.scenarios import shipped_root

    assert sorted(p.name for p in shipped_root().glob("*.toml")) == sorted(
        p.name for p in (ROOT / "scenarios").glob("*.toml"))


@pytest.mark.deep
def test_wheel_runs_from_an_empty_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tree = tmp_path / "tree"  # build from a copy: pip writes build/ and *.egg-info next to the sources
    for name in ("pyproject.toml", "setup.py", "README.md", "lpdp", "scenarios"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        tree.mkdir(exist_ok=True)
        copy(ROOT / name, tree / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                          if (ROOT / name).is_dir() else {}))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist),
                    str(tree)], check=True, timeout=600, env=env)
    (wheel,) = dist.glob("lpdp-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"lpdp/_default_scenarios/{p.name}" for p in (ROOT / "scenarios").glob("*.toml")}
    assert shipped and shipped <= names and "lpdp/py.typed" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True,
                   timeout=600, env=env)
    # dependencies from the test environment (a .pth line adds its site-packages after the venv's own)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    deps = [p for p in {sysconfig.get_paths()["purelib"], *site.getsitepackages()} if Path(p).is_dir()]
    Path(purelib, "test-deps.pth").write_text("\n".join(deps) + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run([str(py), "-c", "import lpdp; print(lpdp.__file__)"], cwd=empty, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where
    out = tmp_path / "results"
    run = subprocess.run([str(venv / "bin" / "lpdp"), "run", "--out", str(out), "--scheduler", "serial",
                          "--quiet", str(Path("figure1_mixture.toml"))], cwd=empty, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 2 and "figure1_mixture.toml" in run.stderr  # not in this folder: one line
    run = subprocess.run([str(venv / "bin" / "lpdp"), "run", "--out", str(out), "--scheduler", "serial",
                          "--quiet"], cwd=empty, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and len(manifest["inputs"]) == len(
        [p for p in shipped if "default = false" not in (ROOT / "scenarios" / Path(p).name).read_text()])
    comp = subprocess.run([str(venv / "bin" / "lpdp"), "compose", "--dp", "0.1,1e-7", "-k", "100000",
                           "--for-delta", "1e-3", "--json"], cwd=empty, env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    assert json.loads(comp.stdout)["epsilon_for"][0][0] == 1e-3  # exact: the δ asked for, echoed
    assert not list(empty.iterdir())
