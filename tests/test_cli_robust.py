"""The command line computes only what is asked, prints numbers on the safe side, and never loses a file."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from lpdp import PrivacyRegion
from lpdp.cli import main
from lpdp.compose import homogeneous
from lpdp.export import FULL_EDGES, MANIFEST_NAME

ROOT = Path(__file__).resolve().parents[1]
MIXTURE = ROOT / "scenarios" / "figure1_mixture.toml"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- printed numbers err on the safe side
@pytest.mark.parametrize(("eps", "k", "target"), [(0.496, 26, 1e-6), (0.3, 40, 1e-5), (1.0, 7, 1e-3)])
def test_printed_epsilon_is_a_valid_guarantee(capsys, eps, k, target):
    """The issue's example: 12.6287 was printed for a δ(12.6287) = 1.000137e-6 > 1e-6."""
    code, out, _ = run(capsys, "compose", "--dp", f"{eps},0", "-k", k, "--for-delta", target)
    printed = float(re.search(r"epsilon for delta=\S+: (\S+)", out).group(1))
    assert code == 0 and homogeneous(eps, 0.0, k).delta(printed) <= target


def test_every_printed_delta_is_at_least_the_exact_one(capsys):
    code, out, _ = run(capsys, "compose", "--dp", "0.37,1e-4", "-k", 9, "--at", "0.1", "0.7", "1.3")
    region = homogeneous(0.37, 1e-4, 9)
    pairs = re.findall(r"eps = (\S+)\s+delta = (\S+)", out) + re.findall(r"delta\((\S+)\) = (\S+)", out)
    assert code == 0 and len(pairs) >= 3 + 5
    for e, d in pairs:
        # the printed ε is >= the true one and δ is >= δ at the printed ε: each line is a valid pair
        assert Fraction(d) >= Fraction(region.delta(float(e))), (e, d)


# ---------------------------------------------------------------- compute only what is asked
def test_json_of_a_large_composition_never_builds_the_full_profile(capsys, monkeypatch):
    """The profile costs O(edges^2): the CLI abbreviates it for large regions (it took minutes at k=1e5)."""
    calls = []
    original = PrivacyRegion.profile

    def counted(self):
        calls.append(len(self))
        return original(self)

    monkeypatch.setattr(PrivacyRegion, "profile", counted)
    k = 2 * FULL_EDGES
    code, out, _ = run(capsys, "compose", "--dp", "0.1,1e-7", "-k", k, "--for-delta", "1e-3", "--json")
    doc = json.loads(out)
    assert code == 0 and not calls
    assert doc["abbreviated"]["profile_pairs"] > FULL_EDGES and len(doc["profile"]) <= 100
    region = homogeneous(0.1, 1e-7, k)
    assert region.delta(doc["epsilon_for"][0][1]) <= 1e-3 * (1 + 1e-12)
    for e, d in doc["profile"]:  # the same certified quantity (the accountant's route), printed in full
        assert region.lower.delta(e) <= d <= region.delta(e) * (1 + 1e-12)
    code, out, _ = run(capsys, "compose", "--dp", "0.1,1e-7", "-k", k, "--at", "1")
    assert code == 0 and not calls and "first and last 6" in out


def test_small_regions_keep_the_full_data(capsys):
    code, out, _ = run(capsys, "compose", "--dp", "0.5,1e-3", "-k", 5, "--json")
    doc = json.loads(out)
    assert code == 0 and "abbreviated" not in doc and doc["vertices"] and doc["edges"]["loss"]
    region = homogeneous(0.5, 1e-3, 5)
    assert [e for e, _ in doc["profile"]] == [e for e, _ in region.profile()]     # the edge losses
    for e, d in doc["profile"]:     # each δ certified from above: inside the bracket, as wide as delta's
        assert region.delta_lower(e) <= d <= region.delta(e) * (1 + 1e-12)


# ---------------------------------------------------------------- silent surprises
def test_a_swapped_pair_is_accepted_with_one_warning(capsys):
    code, out, err = run(capsys, "region", "--dp", "1e-3,0.5", "--at", "0")
    assert code == 0 and out
    assert err.count("\n") == 1 and "did you mean --dp 0.5,1e-3" in err
    code, _, err = run(capsys, "region", "--dp", "0.5,1e-3")
    assert code == 0 and err == ""


def test_a_negative_value_is_a_value_not_an_option(capsys):
    code, _, err = run(capsys, "compose", "--dp", "-0.5,0", "-k", 3)
    assert code == 2 and "epsilon=-0.5" in err and "expected one argument" not in err


def test_output_paths_are_checked_before_the_work(capsys, tmp_path, monkeypatch):
    """--export t.xyz used to be refused after the work, and after the plot was written."""
    import lpdp.compose

    monkeypatch.setattr(lpdp.compose, "homogeneous", lambda *a: pytest.fail("computed before refusing"))
    png = tmp_path / "p.png"
    code, out, err = run(capsys, "compose", "--dp", "1,0", "-k", 3, "--plot", png, "--export",
                         tmp_path / "t.xyz")
    assert code == 2 and out == "" and "--export" in err and not png.exists()


# ---------------------------------------------------------------- files: nothing lost
def test_run_writes_a_manifest(capsys, tmp_path):
    out_dir = tmp_path / "res"
    code, _, _ = run(capsys, "run", MIXTURE, "--out", out_dir)
    doc = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert code == 0 and doc["complete"] is True
    assert [i["path"] for i in doc["inputs"]] == [str(MIXTURE)]
    names = sorted(o["name"] for o in doc["outputs"])
    assert names == sorted(p.name for p in out_dir.iterdir() if p.name != MANIFEST_NAME)
    assert {"figure1_mixture.json", "figure1_mixture.png"} <= set(names)


def test_run_refuses_colliding_names_before_running(capsys, tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "fig.toml").write_text(MIXTURE.read_text())
    code, out, err = run(capsys, "run", tmp_path / "a" / "fig.toml", tmp_path / "b" / "fig.toml", "--out",
                         tmp_path / "o")
    assert code == 2 and "fig.json" in err and out == "" and not (tmp_path / "o").exists()


def test_run_never_writes_through_a_symlink(capsys, tmp_path):
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text("precious")
    (out_dir / "figure1_mixture.json").symlink_to(outside)
    code, _, err = run(capsys, "run", MIXTURE, "--out", out_dir)
    assert code == 2 and "symbolic link" in err and outside.read_text() == "precious"
    assert json.loads((out_dir / MANIFEST_NAME).read_text())["complete"] is False


def test_a_rerun_replaces_outputs_atomically(capsys, tmp_path):
    out_dir = tmp_path / "o"
    assert run(capsys, "run", MIXTURE, "--out", out_dir)[0] == 0
    first = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert run(capsys, "run", MIXTURE, "--out", out_dir)[0] == 0
    again = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert again["complete"] and len(again["outputs"]) == len(first["outputs"])
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no temporary file left


# ---------------------------------------------------------------- text for users cites papers and docs
INTERNAL = re.compile(r"[Ss]pec ?§|spec/|[Ss]pec (filter|composition)\.md|\b[Ii]ssue #?\d"
                      r"|README section \(proposed\)")


def test_user_facing_text_cites_papers_not_internal_notes(capsys):
    """Help, errors, docstrings, docs and scenarios cite the papers or docs/, never notes users cannot see."""
    from lpdp.cli import build_parser

    patterns = ("lpdp/**/*.py", "docs/*.md", "scenarios/*.toml", "README.md")
    texts = {str(p): p.read_text() for pattern in patterns for p in ROOT.glob(pattern)}
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "run" in a.choices)
    for name, cmd in sub.choices.items():
        texts[f"lpdp {name} --help"] = cmd.format_help()
        nested = [a for a in cmd._actions if a.choices and isinstance(a.choices, dict)]
        for a in nested:
            texts.update({f"lpdp {name} {n} --help": c.format_help() for n, c in a.choices.items()})
    bad = {where: INTERNAL.search(text).group(0) for where, text in texts.items() if INTERNAL.search(text)}
    assert not bad


# ---------------------------------------------------------------- Ctrl-C, links, hostile but valid input
def _default_sigint() -> None:
    """A terminal's Ctrl-C reaches a process whose SIGINT is not ignored: an earlier test (or the runner)
    may leave it ignored in this process, and children inherit that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted_run(tmp_path, delay: float, *extra: str) -> tuple[int, str, Path]:
    """``lpdp run`` in its own process group, interrupted as a terminal does (SIGINT to the group)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out_dir = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "lpdp", "run", "--out", str(out_dir), *extra],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc.returncode, err, out_dir


def test_console_script_flushes_everything_before_it_ends(tmp_path):
    """The console script ends without Python's finalisation: buffered output (a file, not a terminal,
    and no PYTHONUNBUFFERED) must be complete, and the status the one of the command."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    runs = [(["account", "--gaussian", "3x50", "--for-delta", "1e-6", "--json"], 0),
            (["account", "--gaussian", "3x50", "--for-delta", "2"], 2)]
    for argv, status in runs:
        with out.open("w") as o, err.open("w") as e:
            code = subprocess.run([sys.executable, "-m", "lpdp", *argv], stdout=o, stderr=e, env=env,
                                  cwd=tmp_path, timeout=120).returncode
        assert code == status, err.read_text()
        if status == 0:
            doc = json.loads(out.read_text())
            assert doc["epsilon_for"][0]["delta"] == pytest.approx(1e-6)
        else:
            assert out.read_text() == "" and len(err.read_text().splitlines()) == 1
            assert "delta=2.0: must be in [0, 1]" in err.read_text()


@pytest.mark.parametrize("delay", [0.6, 2.5])
def test_ctrl_c_during_run_is_one_line_and_exit_130(tmp_path, delay):
    """4 tracebacks in 7 tries (Python loading, Dask workers, a cluster's shutdown); once it went on."""
    code, err, _ = _interrupted_run(tmp_path, delay)
    assert code == 130 and len(err.splitlines()) == 1 and "interrupted" in err, err


@pytest.mark.deep
@pytest.mark.parametrize("delay", [3.0, 8.0, 15.0])
def test_ctrl_c_on_a_local_dask_cluster_is_one_line(tmp_path, delay):
    """The terminal interrupts every process of the group: the workers start with SIGINT blocked. The
    shipped filter sweep with ten times its cells (it alone ends within 8 s on two idle cores)."""
    pytest.importorskip("distributed")
    text = (ROOT / "scenarios" / "filter_sweep_gaussian.toml").read_text()
    start = text.index("epsilon = [")
    end = text.index("]", start)
    sweep = tmp_path / "long_sweep.toml"
    sweep.write_text(text[:start] + f"epsilon = {[2 + i / 20 for i in range(201)]}" + text[end + 1:])
    code, err, _ = _interrupted_run(tmp_path, delay, str(sweep), "--scheduler", "local", "--workers", "2")
    assert code == 130 and len(err.splitlines()) == 1 and "--resume" in err, err


def test_an_interrupt_that_library_code_swallows_still_exits_130(capsys, monkeypatch):
    """The signal is remembered: a result computed after a swallowed Ctrl-C is not a success."""
    import os
    import signal

    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not ignored)

    real, sent = PrivacyRegion.delta, []

    def swallowing(self, *args):
        if not sent:                   # one Ctrl-C (a second one exits at once)
            sent.append(True)
            try:
                os.kill(os.getpid(), signal.SIGINT)
                sum(range(10**6))      # the handler runs here
            except KeyboardInterrupt:
                pass
        return real(self, *args)

    monkeypatch.setattr(PrivacyRegion, "delta", swallowing)
    try:
        code, _, err = run(capsys, "compose", "--dp", "1,0", "-k", 3, "--at", "1")
    finally:
        signal.signal(signal.SIGINT, old)
    assert code == 130 and err.splitlines() == ["lpdp compose: interrupted"]


def test_out_through_a_link_to_a_folder_follows_it_and_says_so(capsys, tmp_path):
    target = tmp_path / "real"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    code, out, _ = run(capsys, "run", MIXTURE, "--out", tmp_path / "link")
    assert code == 0 and f"a symbolic link to {target.resolve()}" in out
    assert (target / MANIFEST_NAME).is_file() and (target / "figure1_mixture.json").is_file()


def test_a_title_of_a_megabyte_is_wrapped_and_capped(capsys, tmp_path):
    """matplotlib refused the image ("Image size ... too large"): exit 3."""
    scenario = tmp_path / "long.toml"
    text = MIXTURE.read_text()
    scenario.write_text(re.sub(r"(?m)^title = .*$", 'title = "' + "a long title " * 70_000 + '"', text))
    code, _, err = run(capsys, "run", scenario, "--out", tmp_path / "o")
    assert code == 0 and err == "" and (tmp_path / "o" / "long.png").stat().st_size > 0


def test_an_fdp_bracket_whose_guarantee_is_trivial_is_printed(capsys):
    """`lpdp fdp --gaussian mu=20 -k 4 --constraints 2` failed on an empty region (zero-size max): the
    guarantee side is the trivial δ = 1, which is never below the exact G_40."""
    from lpdp.tradeoff import gaussian

    code, out, err = run(capsys, "fdp", "--gaussian", "mu=20", "-k", 4, "--constraints", 2, "--at", 0, 5,
                         "--json")
    doc = json.loads(out)
    assert code == 0 and err == ""
    for e, d in doc["from_below"]["delta_at"]:
        assert d >= float(gaussian(40.0).delta(e))
    for e, d in doc["from_above"]["delta_at"]:
        assert d <= float(gaussian(40.0).delta(e))


@pytest.mark.parametrize("eps", [1e20, 1e300, 1e308, 1.7e308])
def test_delta_at_a_huge_epsilon_of_a_certified_guarantee(eps):
    """OverflowError on a Laplace guarantee. Three Laplace(1) losses never exceed 3, so the true δ is 0:
    the attack side must say 0 and the guarantee side must not grow beyond its value at ε = 3."""
    import warnings

    from lpdp import Accountant
    from lpdp.mechanisms import LaplaceMechanism

    g = Accountant().compose(LaplaceMechanism(1.0), 3).guarantee()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = g.delta(eps)
    assert lo <= 0.0 <= hi <= g.delta(3.0)[1]


def test_a_sweep_seed_is_the_index_th_child_in_constant_time():
    """cell_seed spawned every child for every cell: O(cells^2), hours for 10^5 cells."""
    import time

    import numpy as np

    from lpdp.scenarios.sweep import cell_seed

    child = np.random.SeedSequence(7).spawn(1000)[999]
    assert cell_seed(7, 999, 1000) == int(child.generate_state(1, np.uint64)[0] >> np.uint64(1))
    start = time.perf_counter()
    seeds = {cell_seed(7, i, 10**5) for i in range(0, 10**5, 1000)}
    assert len(seeds) == 100 and time.perf_counter() - start < 5


def test_a_large_sweep_shows_progress_while_its_cells_are_checked(capsys, monkeypatch, tmp_path):
    """10^5 cells took minutes to check before the first ran, in silence: a progress bar on a terminal."""
    import sys

    import lpdp.scenarios.sweep as sweep
    from lpdp.scenarios import load

    monkeypatch.setattr(sweep, "PROGRESS_CELLS", 3)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    scenario = tmp_path / "s.toml"
    scenario.write_text('kind = "double_dp_epsilon"\ntitle = "t"\nconstraints = [[0.3, 0.0], [0.15, 0.02]]\n'
                        'delta = 1e-6\n[sweep]\nk = [1, 2, 3, 4, 5, 6]\n')
    assert len(load(scenario)[1]["sweep"].cells) == 6
    assert "checking" in capsys.readouterr().err
