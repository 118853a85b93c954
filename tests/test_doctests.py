"""Every Examples section in lpdp's docstrings runs as a test (numpy docstrings must be runnable)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lpdp

MODULES = sorted(m.name for m in pkgutil.walk_packages(lpdp.__path__, "lpdp.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # examples that write files write them here
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_public_api_has_examples():
    """The public entry points document a runnable example."""
    from lpdp import PrivacyRegion, mix
    from lpdp.compose import homogeneous
    from lpdp.lp import IntersectionLP, is_subset

    for obj in (PrivacyRegion, PrivacyRegion.from_dp, PrivacyRegion.delta, mix, homogeneous,
                IntersectionLP, is_subset):
        assert ">>>" in (obj.__doc__ or ""), obj
