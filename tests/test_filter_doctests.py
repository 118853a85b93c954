"""The Examples sections of the filter modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["lpdp.filters.mechanisms", "lpdp.filters.params", "lpdp.filters.realisation",
           "lpdp.filters.audit", "lpdp.filters.baselines", "lpdp.filters.simulate"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
