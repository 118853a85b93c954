"""The scenario files' schema: the library's schema language (:mod:`lpdp._schema`) and the checks only
scenarios need."""

from __future__ import annotations

from lpdp._schema import Field, describe_schema, validate

__all__ = ["Field", "validate", "describe_schema", "check_scheduler"]


def check_scheduler(value: str) -> str:
    """The ``scheduler`` key: empty (automatic), ``serial``, ``local`` or ``tcp://HOST:PORT``."""
    from lpdp.parallel import parse_scheduler

    if value:
        parse_scheduler(value, "scheduler")
    return value
