"""Tests hold on every machine: no computed float is compared with ``==``.

The same numpy and scipy give different last bits with and without ``OPENBLAS_CORETYPE`` (and on other
CPUs): ``assert p.expected_T == k`` got 19.999999999999996 for k = 20 in a fresh clone. This scan of the
test files' syntax trees refuses ``==`` and ``!=`` against a float literal and on an expected stopping time
(``expected_T``, a sum of computed survival probabilities) unless the comparison

* uses a tolerance (``pytest.approx``, ``math.isclose``, ``round(x, n) == literal``), or
* is against 0.0, 1.0, -1.0 or infinity (values that clipping and boundary cases return exactly), or
* carries a ``# exact: why`` comment on its line or the line above (an input echoed back, the same
  computation repeated, a mean of integers).
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: Values a computation returns exactly wherever it runs (clipped probabilities, boundary cases).
EXACT_VALUES = {0.0, 1.0, -1.0, math.inf, -math.inf}
#: Attributes that are always computed floats, whatever they are compared with.
COMPUTED = {"expected_T"}


def _float_literal(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _float_literal(node.operand)
        return None if value is None else -value
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, float) else None


def _name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _tolerant(node: ast.AST) -> bool:
    return _name(node) in ("approx", "isclose", "round", "allclose")


def offending(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every ``==``/``!=`` on a computed float in ``source`` without a tolerance."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, a, b in zip(node.ops, sides, sides[1:], strict=False):
            if not isinstance(op, ast.Eq | ast.NotEq) or _tolerant(a) or _tolerant(b):
                continue
            literals = [v for v in (_float_literal(a), _float_literal(b)) if v is not None]
            numbers = [x.value for x in (a, b) if isinstance(x, ast.Constant) and type(x.value) is int]
            if any(v in EXACT_VALUES for v in literals + numbers):
                continue
            if literals or _name(a) in COMPUTED or _name(b) in COMPUTED:
                here = lines[node.lineno - 1]
                above = lines[node.lineno - 2] if node.lineno > 1 else ""
                if "# exact" not in here and not above.strip().startswith("# exact"):
                    found.append((node.lineno, here.strip()))
    return found


def test_no_test_compares_a_computed_float_with_equality():
    bad = {f"{p.name}:{line}": text for p in sorted(TESTS.glob("*.py"))
           for line, text in offending(p.read_text(encoding="utf-8"))}
    assert not bad, bad


def test_the_scan_finds_what_it_must():
    """The scan can fail: the comparison that broke on another machine, and its allowed forms."""
    assert [n for n, _ in offending("assert p.expected_T == k\nassert x == 0.1\nassert -0.5 != y\n")] \
        == [1, 2, 3]
    assert offending("assert p.expected_T == pytest.approx(k)\nassert round(x, 1) == 15.8\n"
                     "assert d == 1e-5  # exact: echoed\nassert q == 0.0 and r == 1.0\n") == []
