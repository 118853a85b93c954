"""A small, documented schema language for the library's data files (workloads, scenarios; TOML/JSON).

A schema maps each key to a :class:`Field`. Validation rejects unknown keys, missing required keys and
values of the wrong type or range, naming the file, the key (dotted path) and the problem.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lpdp.errors import LpdpError, ScenarioError

Check = Callable[[Any], Any]


@dataclass(frozen=True)
class Field:
    """One key of a scenario table.

    ``kind`` is one of ``"str"``, ``"bool"``, ``"int"``, ``"float"``, ``"table"`` (with ``schema``),
    ``"list"`` (any list; ``check`` or the reader validates its items),
    ``"list[float]"``, ``"list[int]"``, ``"list[str]"``, ``"list[pair]"`` (``[ε, δ]`` pairs) or
    ``"list[table]"`` (with ``schema``). ``check`` may further validate (and normalise) the value by
    calling the library's own validators, whose errors become scenario errors naming the key.
    """

    kind: str
    doc: str
    required: bool = False
    default: Any = None
    schema: Mapping[str, Field] | None = None
    check: Check | None = None


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":   # 1e12 is an integer, as `-k 1e12` is on the command line
        return (isinstance(value, int) and not isinstance(value, bool)
                or isinstance(value, float) and value.is_integer())
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "table":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    if kind.startswith("list[") and isinstance(value, list):
        inner = kind[5:-1]
        if inner == "pair":
            return all(isinstance(v, list) and len(v) == 2 and all(_type_ok("float", x) for x in v)
                       for v in value)
        return all(_type_ok(inner, v) for v in value)
    return False


def _describe(kind: str) -> str:
    return {"float": "a number", "int": "an integer", "str": "a string", "bool": "true or false",
            "table": "a table", "list": "a list",
            "list[pair]": "a list of [epsilon, delta] pairs"}.get(kind, f"a {kind}")


def validate(data: Mapping[str, Any], schema: Mapping[str, Field], *, source: str,
             prefix: str = "") -> dict[str, Any]:
    """Check ``data`` against ``schema``; return a new dict with defaults filled in."""
    out: dict[str, Any] = {}
    for key in data:
        if key not in schema:
            known = ", ".join(sorted(schema))
            raise ScenarioError(f"{source}: unknown key '{prefix}{key}' (known keys: {known})")
    for key, fld in schema.items():
        path = f"{prefix}{key}"
        if key not in data:
            if fld.required:
                raise ScenarioError(f"{source}: missing required key {path!r} ({fld.doc})")
            out[key] = fld.default
            continue
        value = data[key]
        if not _type_ok(fld.kind, value):
            raise ScenarioError(f"{source}: key {path!r} = {value!r} must be {_describe(fld.kind)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ScenarioError(f"{source}: key {path!r} = {value!r} must be finite")
        if fld.kind == "int":
            value = int(value)
        if fld.kind == "table" and fld.schema is not None:
            value = validate(value, fld.schema, source=source, prefix=f"{path}.")
        elif fld.kind == "list[table]" and fld.schema is not None:
            value = [validate(v, fld.schema, source=source, prefix=f"{path}[{i}].")
                     for i, v in enumerate(value)]
        if fld.check is not None:
            try:
                value = fld.check(value)
            except LpdpError as exc:
                raise ScenarioError(f"{source}: key {path!r}: {exc}") from None
        out[key] = value
    return out


def describe_schema(schema: Mapping[str, Field], indent: str = "") -> list[str]:
    """Human-readable lines documenting a schema (used by ``lpdp run --schema``)."""
    lines = []
    for key, fld in schema.items():
        req = "required" if fld.required else f"optional, default {fld.default!r}"
        lines.append(f"{indent}{key} ({fld.kind}, {req}): {fld.doc}")
        if fld.schema is not None:
            lines.extend(describe_schema(fld.schema, indent + "    "))
    return lines
