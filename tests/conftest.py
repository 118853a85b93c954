import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: ``LPDP_DEEP=1`` (or ``pytest --deep``) runs the slow checks marked ``@pytest.mark.deep``.
DEEP_ENV = "LPDP_DEEP"


@pytest.fixture(autouse=True)
def _mpmath_precision_restored():
    """Each test gets the mpmath precision the collected modules set, whatever a test before it (in
    the same process) set: a test lowering ``mp.dps`` to 15 for speed left the 50-digit references of
    later tests at 15 digits (failures only in the orders pytest-xdist happens to run)."""
    import mpmath

    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--deep", action="store_true", help="also run the slow checks marked deep")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--deep") or os.environ.get(DEEP_ENV) == "1":
        return
    skip = pytest.mark.skip(reason=f"deep profile: run with --deep or {DEEP_ENV}=1")
    for item in items:
        if "deep" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under pytest-xdist, a worker hands its soundness tally to the controller (``workeroutput``)."""
    from tests.oracles import SOUNDNESS_TALLY

    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["soundness_tally"] = SOUNDNESS_TALLY


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """The controller adds each finished worker's soundness tally to its own (pytest-xdist hook)."""
    from tests.oracles import SOUNDNESS_TALLY

    for route, counts in getattr(node, "workeroutput", {}).get("soundness_tally", {}).items():
        mine = SOUNDNESS_TALLY.setdefault(route, {"cases": 0, "points": 0, "unsafe": 0})
        for key, value in counts.items():
            mine[key] = mine.get(key, 0) + value


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Print the soundness suite's counts (tests/test_soundness.py) when it ran."""
    from tests.oracles import tally_summary

    lines = tally_summary()
    if lines:
        terminalreporter.section("soundness suite: public routes against independent references")
        for line in lines:
            terminalreporter.write_line(line)
