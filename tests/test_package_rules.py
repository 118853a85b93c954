"""Package rules, read from the source (AST): a mechanism's knowledge lives in its own module, and the
library does not depend on the shell."""

from __future__ import annotations

import ast
from pathlib import Path

import lpdp.mechanisms as mechanisms
from lpdp.mechanisms import Mechanism

LPDP = Path(mechanisms.__file__).resolve().parents[1]


def _modules(*, skip: tuple[str, ...]) -> list[tuple[Path, ast.Module]]:
    out = []
    for path in sorted(LPDP.rglob("*.py")):
        rel = path.relative_to(LPDP).as_posix()
        if not rel.startswith(skip):
            out.append((path, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _concrete_mechanisms() -> set[str]:
    seen, todo = set(), [Mechanism]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("lpdp.mechanisms") and sub.__name__ not in seen:
                seen.add(sub.__name__)
                todo.append(sub)
    return seen


def _names(node: ast.AST) -> set[str]:
    """Class names in the second argument of isinstance (names, attributes, tuples, ``A | B``)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


#: Files of other owners that still check a mechanism's class (to move into faces there).
TYPE_CHECKS_LEFT = {"calibrate.py"}


def test_no_type_checks_on_concrete_mechanisms_outside_their_package():
    concrete = _concrete_mechanisms()
    assert {"GaussianMechanism", "FiniteMechanism", "DPMechanism", "MixtureMechanism"} <= concrete
    found = []
    for path, tree in _modules(skip=("mechanisms/",)):
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
                hit = _names(node.args[1]) & concrete
                if hit and path.relative_to(LPDP).as_posix() not in TYPE_CHECKS_LEFT:
                    found.append(f"{path.relative_to(LPDP)}:{node.lineno} {sorted(hit)}")
    assert not found, "ask the mechanism for a face instead:\n" + "\n".join(found)


def test_the_scan_can_fail():
    tree = ast.parse("isinstance(m, (GaussianMechanism, int))\nisinstance(m, mech.FiniteMechanism | X)")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert [sorted(_names(c.args[1]) & _concrete_mechanisms()) for c in calls] == [
        ["GaussianMechanism"], ["FiniteMechanism"]]


def test_library_modules_do_not_import_the_shell():
    found = []
    for path, tree in _modules(skip=("cli/", "scenarios/", "__main__.py")):
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith(("lpdp.cli", "lpdp.scenarios")) for n in names):
                found.append(f"{path.relative_to(LPDP)}:{node.lineno}")
    assert not found, found
