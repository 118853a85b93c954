"""README.md: its Python examples run, its CLI examples exit 0, and .ci/run runs its test line."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_quick_start_is_two_lines_and_ci_runs_the_second():
    (quick,) = [b for b in blocks("bash") if "pip install" in b]
    lines = [ln for ln in quick.strip().splitlines() if ln.strip()]
    assert len(lines) == 2
    assert "lpdp run" in lines[0] and "pytest" in lines[1]
    assert lines[1] in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("code", blocks("python"), ids=lambda c: c.splitlines()[0][:40])
def test_python_examples_run(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})


CLI = [ln[2:] for b in blocks("console") for ln in b.splitlines() if ln.startswith("$ lpdp ")]


@pytest.mark.parametrize("line", CLI)
def test_cli_examples_run(line, tmp_path):
    argv = shlex.split(line)[1:]
    out = subprocess.run([sys.executable, "-m", "lpdp", *argv], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()


def test_readme_shows_at_least_three_examples_of_each_kind():
    assert len(blocks("python")) >= 3
    assert len(CLI) >= 3
