"""The one resource budget (lpdp._limits): env var, context and per-call overrides, one-line refusals."""

import pytest

from lpdp._limits import (
    DEFAULT_MEMORY_GB,
    ENV_MEMORY,
    ENV_SECONDS,
    budget,
    check_budget,
    memory_limit_bytes,
    seconds_for,
    time_limit_seconds,
)
from lpdp.errors import InternalError, LpdpError, ParameterError


def test_default_budget_is_well_under_a_small_machine(monkeypatch):
    monkeypatch.delenv(ENV_MEMORY, raising=False)
    assert memory_limit_bytes() == int(DEFAULT_MEMORY_GB * 1e9)
    assert memory_limit_bytes() <= 8e9


def test_env_var_then_context_then_call_override(monkeypatch):
    monkeypatch.setenv(ENV_MEMORY, "16")
    assert memory_limit_bytes() == 16_000_000_000
    with budget(memory_gb=2):
        assert memory_limit_bytes() == 2_000_000_000
        assert memory_limit_bytes(memory_gb=1) == 1_000_000_000
        with budget(seconds=5):
            assert memory_limit_bytes() == 2_000_000_000        # inner block keeps the outer memory
            assert time_limit_seconds() == 5
    assert memory_limit_bytes() == 16_000_000_000
    monkeypatch.setenv(ENV_SECONDS, "30")
    assert time_limit_seconds() == 30


@pytest.mark.parametrize("raw", ["abc", "-1", "0", "inf", "nan"])
def test_bad_env_value_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv(ENV_MEMORY, raw)
    with pytest.raises(ParameterError, match=ENV_MEMORY):
        memory_limit_bytes()


def test_refusal_is_one_line_naming_input_estimate_limit_and_remedy(monkeypatch):
    monkeypatch.delenv(ENV_MEMORY, raising=False)
    with pytest.raises(ParameterError) as info:
        check_budget("k=1000000000", memory_bytes=8e10)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("k=1000000000 needs ~80 GB")
    assert "4 GB" in msg and ENV_MEMORY in msg


def test_time_and_unbounded_estimates_are_refused():
    with pytest.raises(ParameterError, match="min of computation"):
        check_budget("k=1e7", seconds=seconds_for(1e11), max_seconds=60)
    with pytest.raises(ParameterError, match="unbounded amount"):
        check_budget("k=1e30", memory_bytes=float("inf"))
    with pytest.raises(ParameterError, match="unbounded amount"):
        check_budget("k=1e30", memory_bytes=float("nan"))
    check_budget("small", memory_bytes=1e3, seconds=0.01)


def test_bad_overrides_are_parameter_errors():
    with pytest.raises(ParameterError, match="memory_gb"):
        memory_limit_bytes(memory_gb=-1)
    with pytest.raises(ParameterError, match="seconds"):
        with budget(seconds=0):
            pass


def test_internal_error_is_an_lpdp_error_but_not_a_parameter_error():
    assert issubclass(InternalError, LpdpError)
    assert not issubclass(InternalError, ParameterError)
