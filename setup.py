"""Build hook: the top-level ``scenarios/`` folder (the one home of the default scenario files) ships as
package data ``lpdp/_default_scenarios/`` so that ``lpdp run`` works from a wheel, outside the checkout.
Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["lpdp", "lpdp.*"]), "lpdp._default_scenarios"],
    package_dir={"lpdp._default_scenarios": "scenarios"},
    package_data={"lpdp": ["py.typed"], "lpdp._default_scenarios": ["*.toml"]},
)
