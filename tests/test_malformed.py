"""Malformed input, over every CLI sub-command and option and the Python API.

Each CLI case must exit with status 2 and print exactly one line on stderr that names the parameter; each
API case must raise an :class:`~lpdp.LpdpError` subclass whose message names the parameter. No traceback,
no hang (each case runs under an alarm), no silent answer. ``docs/reliability.md`` reports the counts.
"""

from __future__ import annotations

import contextlib
import math
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lpdp import LpdpError, PrivacyRegion
from lpdp.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = str(ROOT / "scenarios" / "figure1_mixture.toml")
#: Seconds a single malformed input may take before it counts as a hang.
BOUND = 20


GAUSS = ["--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3", "--max-steps", "24"]


class Hang(Exception):
    pass


#: Extra address space a single malformed input may map (a safety net: refusals must come far earlier).
MEMORY = 3 * 2**30


def _mapped_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


@contextlib.contextmanager
def bounded(seconds: int = BOUND):
    """Run the body under an alarm (a hang fails the test) and an address-space cap (so does a blow-up)."""
    def alarm(*_):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    old_as = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_mapped_bytes() + MEMORY, old_as[1]))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, old_as)
        signal.signal(signal.SIGALRM, old)


# (argv, text the one stderr line must contain: the parameter it names)
CLI_CASES = [
    # ---- the command line itself
    ([], "command"),
    (["nope"], "nope"),
    (["region", "--nope"], "--nope"),
    # ---- region
    (["region"], "--dp"),
    (["region", "--dp"], "--dp"),
    (["region", "--dp", "1"], "--dp '1'"),
    (["region", "--dp", "1,0,0"], "--dp '1,0,0'"),
    (["region", "--dp", "a,b"], "--dp 'a,b'"),
    (["region", "--dp", ","], "--dp ','"),
    (["region", "--dp", ""], "--dp ''"),
    (["region", "--dp", "-1,0"], "epsilon=-1.0"),
    (["region", "--dp", "-0.5,0"], "epsilon=-0.5"),
    (["region", "--dp", "1,-0.1"], "delta=-0.1"),
    (["region", "--dp", "1,1.5"], "delta=1.5"),
    (["region", "--dp", "nan,0"], "epsilon=nan"),
    (["region", "--dp", "1,nan"], "delta=nan"),
    (["region", "--dp", "inf,0"], "epsilon=inf"),
    (["region", "--dp", "1e308,0"], "epsilon=1e+308"),
    (["region", "--dp", "9e307,0"], "epsilon=9e+307"),
    (["region", "--dp", "1,0", "--at"], "--at"),
    (["region", "--dp", "1,0", "--at", "x"], "--at"),
    (["region", "--dp", "1,0", "--at", "-1"], "epsilon"),
    (["region", "--dp", "1,0", "--at", "nan"], "epsilon"),
    (["region", "--dp", "1,0", "--at", "1", "--at", "2"], "--at"),
    (["region", "--dp", "1,0", "--lp", "--lp=1"], "--lp"),
    (["region", "--dp", "1,0", "--plot"], "--plot"),
    (["region", "--dp", "1,0", "--plot", "x.gif"], "--plot 'x.gif'"),
    (["region", "--dp", "1,0", "--plot", "{tmp}/missing/x.png"], "--plot"),
    (["region", "--dp", "1,0", "--plot", "{tmp}"], "--plot"),
    (["region", "--dp", "1,0", "--plot", "/proc/x.png"], "--plot"),
    (["region", "--dp", "1,0", "--plot", "{tmp}/link.png"], "--plot"),
    (["region", "--dp", "1,0", "--plot", "{tmp}/a.png", "--plot", "{tmp}/b.png"], "--plot"),
    (["region", "--dp", "1,0", "--export"], "--export"),
    (["region", "--dp", "1,0", "--export", "t.xyz"], "--export 't.xyz'"),
    (["region", "--dp", "1,0", "--export", "{tmp}/missing/x.json"], "--export"),
    (["region", "--dp", "1,0", "--export", "{tmp}"], "--export"),
    (["region", "--dp", "1,0", "--export", "{tmp}/link.json"], "--export"),
    (["region", "--dp", "1,0", "--export", "{tmp}/same.png", "--plot", "{tmp}/same.png"], "--export"),
    (["region", "--dp", "1,0", "--json=yes"], "--json"),
    # ---- mix
    (["mix"], "--dp"),
    (["mix", "--dp", "1,0"], "--weight"),
    (["mix", "--weight", "1"], "--dp"),
    (["mix", "--weight", "x", "--dp", "1,0"], "--weight"),
    (["mix", "--weight", "0.5", "--dp", "1,0", "--weight", "0.6", "--dp", "1,0"], "weights"),
    (["mix", "--weight", "-0.5", "--dp", "1,0", "--weight", "1.5", "--dp", "1,0"], "weights[0]"),
    (["mix", "--weight", "nan", "--dp", "1,0"], "weights"),
    (["mix", "--weight", "1", "--dp", "1,2"], "delta=2.0"),
    (["mix", "--weight", "1", "--dp", "1"], "--dp '1'"),
    (["mix", "--weight", "1", "--dp", "1,0", "--at", "-2"], "epsilon"),
    (["mix", "--weight", "1", "--dp", "1,0", "--export", "x.txt"], "--export"),
    (["mix", "--weight", "1", "--dp", "1,0", "--plot", "x.jpg"], "--plot"),
    # ---- compose
    (["compose"], "--dp"),
    (["compose", "--dp", "1,0"], "-k"),
    (["compose", "--dp", "1,0", "-k"], "-k"),
    (["compose", "--dp", "1,0", "-k", "0"], "-k"),
    (["compose", "--dp", "1,0", "-k", "-3"], "-k"),
    (["compose", "--dp", "1,0", "-k", "2.5"], "-k"),
    (["compose", "--dp", "1,0", "-k", "x"], "-k"),
    (["compose", "--dp", "1,0", "-k", "nan"], "-k"),
    (["compose", "--dp", "1,0", "-k", "inf"], "-k"),
    (["compose", "--dp", "1,0", "-k", "1e30"], "k=10"),
    (["compose", "--dp", "0.5,1e-3", "-k", "1e9"], "k=1000000000"),
    (["compose", "--dp", "0.5,0/0.2,0.1", "-k", "1e9"], "k=1000000000"),
    (["compose", "--dp", "1,0", "-k", "2", "-k", "3"], "-k"),
    (["compose", "--dp", "-0.5,0", "-k", "3"], "epsilon=-0.5"),
    (["compose", "--dp", "1,1", "-k", "3"], "delta"),
    (["compose", "--dp", "1,-1", "-k", "3"], "delta"),
    (["compose", "--dp", "1,x", "-k", "3"], "--dp '1,x'"),
    (["compose", "--dp", "1e308,0", "-k", "3"], "epsilon"),
    (["compose", "--dp", "1,0", "-k", "3", "--at", "-1"], "epsilon"),
    (["compose", "--dp", "1,0", "-k", "3", "--at", "inf"], "epsilon"),
    (["compose", "--dp", "1,0", "-k", "3", "--for-delta", "2"], "--for-delta"),
    (["compose", "--dp", "1,0", "-k", "3", "--for-delta", "-1e-3"], "--for-delta"),
    (["compose", "--dp", "1,0", "-k", "3", "--for-delta", "nan"], "--for-delta"),
    (["compose", "--dp", "1,0", "-k", "3", "--for-delta", "x"], "--for-delta"),
    (["compose", "--dp", "1,0", "-k", "3", "--method", "lattice"], "--method"),
    (["compose", "--dp", "1,0/0.5,0.1", "-k", "3", "--method", "nope"], "--method"),
    (["compose", "--dp", "1,0", "--max-k-within", "1"], "--max-k-within"),
    (["compose", "--dp", "1,0", "--max-k-within", "x,y"], "--max-k-within"),
    (["compose", "--dp", "1,0", "--max-k-within", "2,1e-5", "--k-max", "0"], "--k-max"),
    (["compose", "--dp", "1,0", "--max-k-within", "2,1e-5", "--k-max", "x"], "--k-max"),
    (["compose", "--dp", "1,0", "--max-k-within", "-2,1e-5"], "epsilon"),
    (["compose", "--dp", "1,0", "--max-k-within", "2,2"], "delta"),
    (["compose", "--dp", "1,0", "-k", "3", "--step", "0.1"], "--step"),
    (["compose", "--dp", "1,0/0.5,0.1/0.2,0.3", "-k", "3", "--step", "x"], "--step"),
    (["compose", "--dp", "1,0/0.5,0.1/0.2,0.3", "-k", "3", "--step", "-0.1"], "step"),
    (["compose", "--dp", "1,0/0.5,0.1/0.2,0.3", "-k", "3", "--step", "0"], "step"),
    (["compose", "--dp", "1,0/0.5,0.1/0.2,0.3", "-k", "5", "--step", "1e-300"],
     "step"),
    (["compose", "--pure", "1x2", "-k", "3"], "-k"),
    (["compose", "--pure", "1x2", "--dp", "1,0"], "--dp"),
    (["compose", "--pure", "1"], "--pure '1'"),
    (["compose", "--pure", "ax2"], "--pure 'ax2'"),
    (["compose", "--pure", "1xb"], "--pure '1xb'"),
    (["compose", "--pure", "-0.3x2"], "epsilon"),
    (["compose", "--pure", "1x-2"], "--pure"),
    (["compose", "--pure", "1x2", "--method", "lattice"], "--method"),
    (["compose", "--dp", "1,0", "-k", "3", "--export", "x.geojson.txt"], "--export"),
    (["compose", "--dp", "1,0", "-k", "3", "--plot", "{tmp}/missing/p.png"], "--plot"),
    # ---- fdp
    (["fdp"], "required"),
    (["fdp", "-k", "3"], "--gaussian"),
    (["fdp", "--gaussian", "1"], "-k"),
    (["fdp", "--gaussian", "1", "--laplace", "1", "-k", "3"], "--laplace"),
    (["fdp", "--gaussian", "x", "-k", "3"], "--gaussian"),
    (["fdp", "--gaussian", "0", "-k", "3"], "mu"),
    (["fdp", "--gaussian", "-1", "-k", "3"], "mu"),
    (["fdp", "--gaussian", "nan", "-k", "3"], "mu"),
    (["fdp", "--gaussian", "inf", "-k", "3"], "mu"),
    (["fdp", "--laplace", "0", "-k", "3"], "--laplace=0"),
    (["fdp", "--laplace", "-2", "-k", "3"], "--laplace=-2"),
    (["fdp", "--laplace", "x", "-k", "3"], "--laplace"),
    (["fdp", "--gaussian", "1", "-k", "0"], "k"),
    (["fdp", "--gaussian", "1", "-k", "x"], "-k"),
    (["fdp", "--gaussian", "1", "-k", "2.5"], "k"),
    (["fdp", "--gaussian", "1", "-k", "3", "-k", "4"], "-k"),
    (["fdp", "--gaussian", "1", "-k", "3", "--constraints", "0"], "constraints"),
    (["fdp", "--gaussian", "1", "-k", "3", "--constraints", "x"], "--constraints"),
    (["fdp", "--gaussian", "1", "-k", "3", "--constraints", "2.5"], "constraints"),
    (["fdp", "--gaussian", "1", "-k", "3", "--constraints", "4", "--step", "-1"], "step"),
    (["fdp", "--gaussian", "1", "-k", "3", "--constraints", "4", "--step", "x"], "--step"),
    (["fdp", "--gaussian", "1", "-k", "3", "--delta-min", "2"], "delta_min"),
    (["fdp", "--gaussian", "1", "-k", "3", "--delta-min", "x"], "--delta-min"),
    (["fdp", "--gaussian", "1", "-k", "3", "--layout", "nope"], "--layout"),
    (["fdp", "--gaussian", "1", "-k", "3", "--for-delta", "2"], "delta"),
    (["fdp", "--gaussian", "1", "-k", "3", "--for-delta", "x"], "--for-delta"),
    (["fdp", "--gaussian", "1", "-k", "3", "--at", "-1"], "epsilon"),
    (["fdp", "--gaussian", "1", "-k", "3", "--export", "x.bin"], "--export"),
    (["fdp", "--gaussian", "mu=1e300", "-k", "2"], "--gaussian"),
    (["fdp", "--laplace", "1e-300", "-k", "3"], "--laplace"),
    (["fdp", "--laplace", "1e-300", "-k", "3", "--constraints", "2"], "--laplace"),
    (["filter", "simulate", *GAUSS, "--trajectories", "1e12"], "trajectories"),
    (["filter", "simulate", *GAUSS[:6], "--max-steps", "1000000000"], "max_steps"),
    (["filter", "audit", *GAUSS[:6], "--max-steps", "1000000000"], "max_steps"),
    # ---- filter params / audit / simulate
    (["filter"], "filter_command"),
    (["filter", "nope"], "nope"),
    (["filter", "params"], "--delta"),
    (["filter", "params", "--delta", "1e-3"], "--max-steps"),
    (["filter", "params", "--delta", "0", "--max-steps", "48"], "delta=0.0"),
    (["filter", "params", "--delta", "1", "--max-steps", "48"], "delta=1.0"),
    (["filter", "params", "--delta", "-1e-3", "--max-steps", "48"], "delta"),
    (["filter", "params", "--delta", "x", "--max-steps", "48"], "--delta"),
    (["filter", "params", "--delta", "nan", "--max-steps", "48"], "delta"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "0"], "max_steps=0"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "2.5"], "--max-steps"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "x"], "--max-steps"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--max-steps", "4"], "--max-steps"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--epsilon", "3"], "--gaussian"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--gaussian-sigma", "2"], "--epsilon"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--plot", "x.png"], "--plot"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--export", "x.csv"], "--export"),
    (["filter", "audit", "--delta", "1e-3", "--max-steps", "24"], "--epsilon"),
    (["filter", "audit", *GAUSS[:2], "--delta", "1e-3", "--max-steps", "24"], "--epsilon"),
    (["filter", "audit", "--gaussian-sigma", "-2", *GAUSS[2:]], "sigma=-2.0"),
    (["filter", "audit", "--gaussian-sigma", "0", *GAUSS[2:]], "sigma=0.0"),
    (["filter", "audit", "--gaussian-sigma", "nan", *GAUSS[2:]], "sigma"),
    (["filter", "audit", "--gaussian-sigma", "x", *GAUSS[2:]], "--gaussian-sigma"),
    (["filter", "audit", *GAUSS[:2], "--epsilon", "-6", *GAUSS[4:]], "epsilon"),
    (["filter", "audit", *GAUSS[:2], "--epsilon", "inf", *GAUSS[4:]], "epsilon"),
    (["filter", "audit", *GAUSS[:4], "--delta", "2", *GAUSS[6:]], "delta"),
    (["filter", "audit", *GAUSS[:6], "--max-steps", "0"], "max_steps"),
    (["filter", "audit", *GAUSS[:6], "--max-steps", "-5"], "max_steps"),
    (["filter", "audit", *GAUSS, "--filter", "nope"], "--filter"),
    (["filter", "audit", *GAUSS, "--plot", "x.png"], "--plot"),
    (["filter", "audit", *GAUSS, "--export", "x.geojson"], "--export"),
    (["filter", "simulate", *GAUSS, "--trajectories", "-1"], "trajectories"),
    (["filter", "simulate", *GAUSS, "--trajectories", "x"], "--trajectories"),
    (["filter", "simulate", *GAUSS, "--seed", "x"], "--seed"),
    (["filter", "simulate", *GAUSS, "--filter", "nope"], "--filter"),
    (["filter", "simulate", *GAUSS, "--export", "x.wkt"], "--export"),
    (["filter", "simulate", *GAUSS, "--plot", "x.gif"], "--plot"),
    (["filter", "simulate", "--gaussian-sigma", "0", *GAUSS[2:]], "sigma"),
    # ---- run
    (["run", "{tmp}/missing.toml"], "missing.toml"),
    (["run", "{tmp}"], "directory"),
    (["run", "{tmp}/binary.toml"], "binary.toml"),
    (["run", "{tmp}/bad.toml"], "bad.toml"),
    (["run", "{tmp}/nokind.toml"], "kind"),
    (["run", "{tmp}/badkind.toml"], "kind"),
    (["run", "{tmp}/notitle.toml"], "title"),
    (["run", "{tmp}/a/fig.toml", "{tmp}/b/fig.toml", "--out", "{tmp}/o"], "fig"),
    (["run", SCENARIO, "--out", "{tmp}/file.txt"], "--out"),
    (["run", SCENARIO, "--out", "/proc/lpdp-out"], "--out"),
    (["run", SCENARIO, "--out", "{tmp}/o", "--export", "x.geojson"], "--export"),
    (["run", SCENARIO, "--out", "{tmp}/o", "--export", "{tmp}/missing/x.json"], "--export"),
    (["run", SCENARIO, "--out", "{tmp}/o", "--plot", "x.bmp"], "--plot"),
    (["run", SCENARIO, "--out", "{tmp}/o", "--out", "{tmp}/p"], "--out"),
    # ---- hostile files, values and sizes (each was a traceback, exit 3, a hang or a misleading line)
    (["account", "{tmp}/kind_table.json"], "mechanism[0].kind"),            # TypeError: unhashable
    (["account", "{tmp}/kind_list.json"], "mechanism[0].kind"),
    (["account", "{tmp}/deep.json"], "nested more than"),                  # RecursionError
    (["account", "{tmp}/deep.toml"], "nested more than"),
    (["run", "{tmp}/deep.toml"], "nested more than"),
    (["filter", "params", "--mechanism", "{tmp}/deep.json", "--delta", "1e-3", "--max-steps", "9"],
     "nested more than"),
    (["account", "{tmp}/binary.json"], "not UTF-8"),                       # UnicodeDecodeError
    (["account", "{tmp}/utf16.toml"], "UTF-16"),
    (["run", "{tmp}/utf16.toml"], "UTF-16"),
    (["filter", "audit", "--mechanism", "{tmp}/binary.json", *GAUSS[2:]], "not UTF-8"),
    (["filter", "params", "--mechanism", "{tmp}/utf16.json", "--delta", "1e-3", "--max-steps", "9"],
     "UTF-16"),
    (["fdp", "--gaussian", "-inf", "-k", "3"], "--gaussian=-inf"),         # "expected one argument"
    (["compose", "--dp", "-inf,0", "-k", "3"], "epsilon=-inf"),
    (["account", "--gaussian", "-inf"], "sigma"),
    (["compose", "--dp", "1,0", "-k", "-nan"], "-k"),
    (["account", "--rr", "100000000,0.7"], "categories=100000000"),       # 69 s, then out of memory
    (["filter", "params", "--rr", "100000000,0.7", "--delta", "1e-3", "--max-steps", "9"],
     "categories=100000000"),
    (["account", "{tmp}/times.toml"], "k=1000000000000"),                 # was "must be an integer"
    (["account", "--pure", "1x1e12"], "k=1000000000000"),
    (["filter", "audit", *GAUSS[:6], "--max-steps", "1000000"], "max_steps=1000000"),
    (["filter", "audit", "--laplace", "1", *GAUSS[2:6], "--max-steps", "1000000"], "max_steps=1000000"),
    (["run", SCENARIO, "--out", ""], "--out ''"),                          # "wrote ... to /"
    (["run", SCENARIO, "--out", " "], "--out ' '"),
    (["compose", "--dp", "1,0", "-k", "3", "--plot", ""], "--plot ''"),    # was ignored
    (["compose", "--dp", "1,0", "-k", "3", "--export", ""], "--export ''"),
    (["compose", "--dp", "1,0", "-k", "3", "--export", "{tmp}/x.json/"], "--export"),
]

#: Words an error line must never contain: options and keyword names the command line does not have.
NOT_CLI = ("memory_gb", "max_seconds", "option memory")


def _fixtures(tmp: Path) -> None:
    (tmp / "binary.toml").write_bytes(b"\xff\xfe\x00kind = 1\n")
    (tmp / "bad.toml").write_text("kind = = 'x'\n")
    (tmp / "nokind.toml").write_text("title = 'x'\n")
    (tmp / "badkind.toml").write_text("kind = 'nope'\ntitle = 'x'\n")
    (tmp / "notitle.toml").write_text("kind = 'mixture'\n")
    for sub in ("a", "b"):
        (tmp / sub).mkdir()
        (tmp / sub / "fig.toml").write_text(Path(SCENARIO).read_text())
    (tmp / "file.txt").write_text("not a folder")
    (tmp / "outside.txt").write_text("precious")
    for name in ("link.png", "link.json"):
        (tmp / name).symlink_to(tmp / "outside.txt")
    (tmp / "kind_table.json").write_text('{"mechanism": [{"kind": {"a": [1]}}]}')
    (tmp / "kind_list.json").write_text('{"mechanism": [{"kind": ["dp"]}]}')
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp / "deep.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (tmp / "binary.json").write_bytes(bytes(range(256)) * 4)
    workload = '[[mechanism]]\nkind = "pure"\nepsilon = 1.0\n'
    (tmp / "utf16.toml").write_bytes(workload.encode("utf-16"))
    (tmp / "utf16.json").write_bytes('{"mechanism": [{"kind": "pure", "epsilon": 1.0}]}'.encode("utf-16"))
    (tmp / "times.toml").write_text(workload + "times = 1e12\n")


@pytest.fixture
def tmp(tmp_path):
    _fixtures(tmp_path)
    return tmp_path


def _argv(argv, tmp):
    return [a.replace("{tmp}", str(tmp)) for a in argv]


def _id(case) -> str:
    argv = case.values[0] if hasattr(case, "values") else case[0]
    return " ".join(argv).replace(str(ROOT), "") or "(none)"


@pytest.mark.parametrize(("argv", "names"), CLI_CASES, ids=[_id(c) for c in CLI_CASES])
def test_cli_malformed_input_is_one_line_exit_2(tmp, capsys, monkeypatch, argv, names):
    monkeypatch.chdir(tmp)
    before = sorted(p.name for p in tmp.rglob("*"))
    with bounded():
        try:
            code = main(_argv(argv, tmp))
        except SystemExit as exc:  # usage errors exit from the parser
            code = exc.code
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert code == 2, (code, out.err[-2000:])
    assert len(lines) == 1, out.err
    assert lines[0].startswith("lpdp") and "Traceback" not in out.err
    assert names.replace("{tmp}", str(tmp)) in lines[0], lines[0]
    assert not any(word in lines[0] for word in NOT_CLI), lines[0]
    assert (tmp / "outside.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp.rglob("*")) == before  # a refused command writes nothing


# ---------------------------------------------------------------- the Python API
def _granted_filter():
    from lpdp.filters import GaussianMechanism, RealisationFilter

    f = RealisationFilter(6.0, 1e-3, 24, 5e-4, 1e-5)
    assert f.ask(GaussianMechanism(2.0))
    return f


def _api_cases():
    from lpdp import compose, export, fdp, filters, mixture, tradeoff, workload
    from lpdp._validate import check_weights
    from lpdp.display import format_upper
    from lpdp.lp import IntersectionLP
    from lpdp.mechanisms import randomized_response

    r = PrivacyRegion.from_dp(1.0, 0.1)
    return [
        (lambda: PrivacyRegion.from_dp(-1, 0), "epsilon"),
        (lambda: PrivacyRegion.from_dp(1, 2), "delta"),
        (lambda: PrivacyRegion.from_dp(1e308, 0), "epsilon"),
        (lambda: PrivacyRegion.from_dp("1", 0), "epsilon"),
        (lambda: PrivacyRegion.from_dp(True, 0), "epsilon"),
        (lambda: PrivacyRegion.from_dp(None, 0), "epsilon"),
        (lambda: PrivacyRegion.from_constraints([]), "constraints"),
        (lambda: PrivacyRegion.from_constraints([(1, 0, 0)]), "constraints"),
        (lambda: PrivacyRegion.from_constraints(None), "constraints"),
        (lambda: PrivacyRegion.from_constraints("1,0"), "constraints"),
        (lambda: IntersectionLP([r]).contains("ab"), "point"),
        (lambda: IntersectionLP([]), ""),
        (lambda: _granted_filter().record("x"), "record"),
        (lambda: filters.RealisationFilter.replay("/no/such/transcript.json"), "transcript"),
        (lambda: filters.RealisationFilter(2.0, 0.5, 3, 0.4, 0.0).save("/no/such/dir/t.json"),
         "/no/such/dir"),
        (lambda: filters.RealisationFilter(2.0, 0.5, 3, 0.6, 0.0), "delta"),
        (lambda: r.delta(-1), "epsilon"),
        (lambda: r.delta(math.nan), "epsilon"),
        (lambda: r.delta("a"), "epsilon"),
        (lambda: r.epsilon(2), "delta"),
        (lambda: r.epsilon(-0.1), "delta"),
        (lambda: r.tradeoff(1.5), "t"),
        (lambda: r.contains((0.5,)), ""),
        (lambda: mixture.mix([]), ""),
        (lambda: mixture.mix([(1.5, r)]), "weight"),
        (lambda: compose.homogeneous(1.0, 0.0, 0), "k"),
        (lambda: compose.homogeneous(1.0, 0.0, 2.5), "k"),
        (lambda: compose.homogeneous(-1.0, 0.0, 3), "epsilon"),
        (lambda: compose.homogeneous(0.5, 1e-3, 10**9), "k=1000000000"),
        (lambda: compose.homogeneous(0.5, 1e-3, 10**30), "k=10"),
        (lambda: compose.heterogeneous({-0.3: 2}), "epsilon"),
        (lambda: compose.heterogeneous({0.3: -2}), ""),
        (lambda: compose.double_dp((1, 0), (0.5, 0.1), 3, method="nope"), "method"),
        (lambda: compose.double_dp((1, 0), (0.5, 1.0), 3), "delta"),
        (lambda: compose.multi([(1, 0), (0.5, 0.1), (0.2, 0.3)], 5, step=1e-300), "step"),
        (lambda: compose.multi([(1, 0), (0.5, 0.1), (0.2, 0.3)], 5, step=-1.0), "step"),
        (lambda: tradeoff.gaussian(0.0), "mu"),
        (lambda: tradeoff.gaussian(math.inf), "mu"),
        (lambda: tradeoff.laplace(-1.0), "b=-1.0"),
        (lambda: fdp.bracket(tradeoff.gaussian(1.0), 0), "k"),
        (lambda: fdp.bracket(tradeoff.gaussian(1.0), 3, 0), "n"),
        (lambda: filters.optimal_parameters(0.0, 10), "delta"),
        (lambda: filters.optimal_parameters(1e-3, 0), "max_steps"),
        (lambda: filters.GaussianMechanism(-1.0), "sigma"),
        (lambda: export.write("x.txt", payload={}), "--export"),
        (lambda: export.write("/no/such/dir/x.json", payload={}), "/no/such/dir"),
        (lambda: export.atomic_write("/no/such/dir/x.json", "x"), "/no/such/dir"),
        (lambda: export.check_output_path(None, "--export"), "--export"),
        (lambda: export.Manifest("/proc/lpdp-x"), "/proc/lpdp-x"),
        (lambda: format_upper(1.0, 0), "digits"),
        # ---- hostile sizes: refused with the estimate before anything is allocated
        (lambda: randomized_response(10**8, 1.0), "categories=100000000"),   # was MemoryError
        (lambda: _parse_under_budget([{"kind": "gaussian", "sigma": 1.0 + i * 1e-6} for i in range(10**5)]),
         "100000 distinct"),   # 10^6 entries through the command line: the deep test below
        (lambda: filters.audit(_realisation(10**6), filters.GaussianMechanism(2.0)), "max_steps=1000000"),
        (lambda: filters.audit(_realisation(10**6), filters.LaplaceMechanism(1.0)), "max_steps=1000000"),
        (lambda: workload.parse({"mechanism": [{"kind": {"a": 1}}]}), "kind"),
        (lambda: workload.read(_hostile_file("deep.json", "[" * 100_000 + "]" * 100_000)), "nested"),
        (lambda: filters.RealisationFilter.replay(_hostile_file("t.json", "[" * 100_000)), "nested"),
        (lambda: check_weights([0.3] * 200_000), "200000 weights"),
    ]


def _parse_under_budget(entries):
    """Read a workload under a 60 s time budget (10^5 distinct entries are ~200 s of estimated work)."""
    from lpdp import workload
    from lpdp._limits import budget

    with budget(seconds=60):
        return workload.parse({"mechanism": entries})


def _wide_pair():
    """A pair of 2·10^5 outputs with as many distinct losses (numpy could not allocate its keys)."""
    from lpdp.mechanisms import FiniteMechanism

    rng = np.random.default_rng(0)
    p, q = rng.random(200_000), rng.random(200_000)
    return FiniteMechanism.from_pair(p / p.sum(), q / q.sum())


def test_a_pair_of_200000_outputs_is_answered_not_refused():
    """It was refused ("unrelated loss levels"), then crashed (RecursionError): k = 1 is the pair itself,
    against max of Σ (p - e^ε q)_+ and Σ (q - e^ε p)_+ in 80-bit long double (about 2^-11 of the double
    rounding the bracket is certified against); k = 2 goes to the certified engine."""
    from lpdp import Accountant

    pair = _wide_pair()
    rng = np.random.default_rng(0)                  # the same draw as _wide_pair
    p, q = rng.random(200_000), rng.random(200_000)
    p, q = (p / p.sum()).astype(np.longdouble), (q / q.sum()).astype(np.longdouble)
    one = Accountant().compose(pair, 1).guarantee()
    for eps in (0.0, 0.5, 2.0):
        e = np.exp(np.longdouble(eps))
        truth = max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum())
        lo, hi = one.delta(eps)
        assert np.longdouble(lo) <= truth * (1 - 1e-17) and truth * (1 + 1e-17) <= np.longdouble(hi)
    lo2, hi2 = Accountant().compose(pair, 2).guarantee().delta(0.5)
    assert 0.0 <= lo2 <= hi2 <= 1.0 and hi2 >= one.delta(0.5)[0]


def _realisation(max_steps: int):
    from lpdp.filters import RealisationFilter, optimal_parameters

    params = optimal_parameters(1e-3, 48)
    return RealisationFilter(6.0, 1e-3, max_steps, params.delta_tilde, params.theta)


def _hostile_file(name: str, text: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / name
    path.write_text(text)
    return path


API_CASES = _api_cases()


@pytest.mark.parametrize(("call", "name"), API_CASES)
def test_api_malformed_input_raises_an_lpdp_error(call, name):
    with bounded(), pytest.raises(LpdpError) as info:
        call()
    assert name in str(info.value) and "\n" not in str(info.value).strip()


def test_suite_size():
    """The acceptance criterion: at least 150 malformed inputs."""
    assert len(CLI_CASES) + len(API_CASES) >= 150


def test_a_real_process_prints_one_line_and_no_python_warning(tmp_path):
    """Out of process too (no warning machinery of pytest in between): exit 2, one line."""
    for argv in (["region", "--dp", "1e308,0", "--at", "1"], ["compose", "--dp", "-0.5,0", "-k", "3"],
                 ["run", str(tmp_path)]):
        out = subprocess.run([sys.executable, "-m", "lpdp", *argv], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
        assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, (argv, out.stderr)


def test_no_result_is_printed_when_the_output_path_is_bad(tmp_path, capsys):
    """Output paths are checked before any work: nothing on stdout, nothing written."""
    assert main(["compose", "--dp", "1,0", "-k", "3", "--at", "1", "--plot", str(tmp_path / "p.png"),
                 "--export", str(tmp_path / "t.xyz")]) == 2
    assert capsys.readouterr().out == "" and not list(tmp_path.iterdir())



@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_on_stdout_is_one_line_exit_2(tmp_path):
    """`lpdp compose ... > /dev/full` was an internal error (OSError, exit 3)."""
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "lpdp", "compose", "--dp", "1,0", "-k", "3", "--at", "1"],
                             stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "standard output" in lines[0], out.stderr


@pytest.mark.deep
def test_a_workload_of_a_million_mechanisms_is_refused_with_the_estimate(tmp_path):
    """10^6 distinct entries: refused up front with the estimated time (it ran for an hour, silently);
    10^6 equal entries are read once and answered."""
    import json

    distinct = tmp_path / "distinct.json"
    distinct.write_text(json.dumps({"mechanism": [{"kind": "gaussian", "sigma": 1.0 + i * 1e-7}
                                                  for i in range(10**6)]}))
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"mechanism": [{"kind": "pure", "epsilon": 1e-3}] * 10**6}))
    for path, code, err in ((distinct, 2, "1000000 distinct"), (same, 0, "")):
        out = subprocess.run([sys.executable, "-m", "lpdp", "account", str(path), "--at", "1"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert out.returncode == code and err in out.stderr and len(out.stderr.splitlines()) == code // 2
