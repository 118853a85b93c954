"""Package rules, read from the source (AST): a mechanism's knowledge lives in its own module, and the
library does not depend on the shell."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import lpdp.mechanisms as mechanisms
from lpdp.mechanisms import Mechanism

LPDP = Path(mechanisms.__file__).resolve().parents[1]


@functools.lru_cache(maxsize=8)
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


def _type_checks(tree: ast.AST, concrete: set[str]) -> list[tuple[int, list[str]]]:
    """``isinstance``/``issubclass`` on a concrete mechanism class, and ``type(x)`` compared with (``is``,
    ``==``, ``in``) an expression naming one."""
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            hit = _names(node.args[1]) & concrete
        elif isinstance(node, ast.Compare) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "type"
                for n in (node.left, *node.comparators)):
            hit = set().union(*(_names(n) for n in (node.left, *node.comparators))) & concrete
        else:
            continue
        if hit:
            out.append((node.lineno, sorted(hit)))
    return out


def test_no_type_checks_on_concrete_mechanisms_outside_their_package():
    concrete = _concrete_mechanisms()
    assert {"GaussianMechanism", "FiniteMechanism", "DPMechanism", "MixtureMechanism"} <= concrete
    found = [f"{path.relative_to(LPDP)}:{line} {hit}" for path, tree in _modules(skip=("mechanisms/",))
             for line, hit in _type_checks(tree, concrete)]
    assert not found, "ask the mechanism for a face (a declared capability) instead:\n" + "\n".join(found)


def test_the_base_class_docstring_states_every_face():
    """Each public method and property of :class:`Mechanism` (a face or a declared capability) is named in
    its docstring, which is the protocol a new mechanism reads."""
    doc = Mechanism.__doc__ or ""
    faces = [n for n in vars(Mechanism) if not n.startswith("_")]
    assert len(faces) > 20
    assert not [n for n in faces if f"`{n}`" not in doc], "name it in the Mechanism docstring"


def test_the_scan_can_fail():
    tree = ast.parse("isinstance(m, (GaussianMechanism, int))\nisinstance(m, mech.FiniteMechanism | X)\n"
                     "type(m) in {LaplaceMechanism: 1}\ntype(m) is int\n")
    assert _type_checks(tree, _concrete_mechanisms()) == [
        (1, ["GaussianMechanism"]), (2, ["FiniteMechanism"]), (3, ["LaplaceMechanism"])]


def test_every_public_module_is_reachable_from_the_package():
    """``import lpdp`` reaches every public submodule (the command line, ``lpdp.cli``, is the shell)."""
    import pkgutil

    import lpdp

    public = {m.name for m in pkgutil.iter_modules(lpdp.__path__) if not m.name.startswith("_")}
    assert public - {"cli"} == set(lpdp._SUBMODULES)


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


# ------------------------------------------------------------------ imports (issue: package rules)
#: Optional heavy dependencies: the only imports allowed inside functions of library modules.
HEAVY = ("matplotlib", "cvxpy", "dask", "distributed", "threadpoolctl", "dp_accounting",
         "mpmath")   # mpmath: 55 ms to import; threadpoolctl: inspects every loaded library on import

#: Function-level imports of third-party submodules left lazy in library modules, each for CLI start-up
#: (tests/test_cli_startup.py: ``lpdp account --gaussian`` loads no scipy and no shapely; ``--version`` no
#: numpy) or because it runs only on a rare path. No lpdp module is ever imported inside a function
#: (:func:`test_no_lpdp_module_is_imported_inside_a_function`); the list only shrinks.
FUNCTION_IMPORTS_LEFT = {
    "_binomial.py": {"scipy"},          # scipy.stats (2 s cold): lpdp._binomial is on the account path
    "_special.py": {"scipy"},           # scipy.special on first use: 0.2-0.3 s of a Gaussian `lpdp account`
    "calibrate.py": {"scipy.optimize"},  # 0.3-1 s, only for an all-Gaussian workload's closed-form root
    "mechanisms/sampled.py": {"scipy"},  # scipy.stats: lpdp.mechanisms loads every family on the account path
    "parallel.py": {"ctypes", "multiprocessing"},   # a glibc-only malloc tweak; only when a cluster starts
    "pld.py": {"scipy.fft"},            # 0.5 s: lpdp.pld is on the account path, exact routes never need it
    "region.py": {"shapely.geometry"},  # 60 ms: polygons only for geometry queries, not δ(ε) or ε(δ)
    "workload.py": {"tqdm"},            # 45 ms: a progress bar only for more than PROGRESS_ENTRIES entries
}

#: The shell (commands, scenarios) imports the library inside its handlers so that ``lpdp --help`` and a
#: failing argument parse load no numerical module (tests/test_cli_startup.py); the rules on function-level
#: imports are for the library.
SHELL = ("cli/", "scenarios/", "__main__.py")


def _rel(path: Path) -> str:
    return path.relative_to(LPDP).as_posix()


def _module_name(path: Path) -> str:
    parts = ("lpdp/" + _rel(path))[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
    return out


def _imports(tree: ast.Module, module: str) -> list[tuple[ast.AST, list[str], bool]]:
    """``(node, imported module names, inside a function)`` for every executed import."""
    skip = _type_checking_nodes(tree)
    inner = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
             for n in ast.walk(f) if isinstance(n, ast.Import | ast.ImportFrom)}
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(module.split(".")[:-node.level] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out.append((node, names, id(node) in inner))
    return out


def _graph(*, functions: bool) -> dict[str, set[str]]:
    """lpdp module -> the lpdp modules it imports (at module level; with ``functions`` also inside
    functions). ``from package import name`` counts as an import of ``package.name`` when that is a
    module, else of the package."""
    modules = {_module_name(p): tree for p, tree in _modules(skip=())}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m, tree in modules.items():
        for _node, names, inner in _imports(tree, m):
            if inner and not functions:
                continue
            base, *members = names
            hits = [n for n in members if n in modules] or ([base] if base in modules else [])
            graph[m] |= {h for h in hits if h != m}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_at_module_level():
    assert not _cycles(_graph(functions=False))


def test_no_import_cycle_with_function_level_imports_counted():
    """Imports inside functions close no cycle either, in the library or in the shell (the scenario
    registry, :mod:`lpdp.scenarios.kinds`, sits below the sweep runner and the package)."""
    assert not _cycles(_graph(functions=True))


def test_no_lpdp_module_is_imported_inside_a_function():
    """Library modules import lpdp modules at module level only (the shell may defer its imports of the
    library, :data:`SHELL`)."""
    found = [f"{_rel(path)}:{node.lineno} {names[0]}" for path, tree in _modules(skip=SHELL)
             for node, names, inner in _imports(tree, _module_name(path))
             if inner and names[0].split(".")[0] == "lpdp"]
    assert not found, "import it at module level (break the cycle it closes instead):\n" + "\n".join(found)
    assert not [m for mods in FUNCTION_IMPORTS_LEFT.values() for m in mods if m.split(".")[0] == "lpdp"]


def test_the_cycle_scan_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert not _cycles({"a": {"b"}, "b": set()})


def test_no_private_name_is_imported_from_another_module():
    found = []
    for path, tree in _modules(skip=()):
        for node, _names, _inner in _imports(tree, _module_name(path)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lpdp"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        target = f"{node.module}.{a.name}"
                        if not (LPDP / f"{target[5:].replace('.', '/')}.py").exists() and not \
                                (LPDP / target[5:].replace(".", "/")).is_dir():
                            found.append(f"{_rel(path)}:{node.lineno} {target}")
    assert not found, "make the name public in its module, or move it:\n" + "\n".join(found)


def test_imports_inside_functions_are_for_optional_heavy_dependencies():
    found = []
    for path, tree in _modules(skip=SHELL):
        left = FUNCTION_IMPORTS_LEFT.get(_rel(path), set())
        for node, names, inner in _imports(tree, _module_name(path)):
            if not inner:
                continue
            name = names[0] if isinstance(node, ast.ImportFrom) else names
            for n in ([name] if isinstance(name, str) else name):
                if n.split(".")[0] not in HEAVY and n not in left:
                    found.append(f"{_rel(path)}:{node.lineno} {n}")
    assert not found, "import at module level (or add a heavy optional dependency to HEAVY):\n" + \
        "\n".join(found)


def test_the_allow_list_only_names_imports_that_exist():
    """FUNCTION_IMPORTS_LEFT shrinks: an entry whose import is gone must be removed."""
    present: dict[str, set[str]] = {}
    for path, tree in _modules(skip=SHELL):
        for node, names, inner in _imports(tree, _module_name(path)):
            if inner:
                present.setdefault(_rel(path), set()).update(
                    [names[0]] if isinstance(node, ast.ImportFrom) else names)
    stale = {f: mods - present.get(f, set()) for f, mods in FUNCTION_IMPORTS_LEFT.items()}
    assert not {f: m for f, m in stale.items() if m}


# ------------------------------------------------------------------ one router (issue: no bypasses)
#: The composition engines: only the router (lpdp.accountant) and the engines themselves call them; fdp,
#: the scenarios, ``lpdp compose`` and the filters' classical baselines compose through lpdp.Accountant.
ENGINES = {"lpdp.compose": {"double_dp", "homogeneous", "heterogeneous", "multi", "kairouz"},
           "lpdp.compose.double": {"double_dp"}, "lpdp.compose.kairouz": {"homogeneous"},
           "lpdp.compose.heterogeneous": {"heterogeneous"}, "lpdp.compose.multi": {"multi", "compose_regions",
                                                                                  "directed_product"},
           "lpdp.compose.multinomial": {"power"}, "lpdp.pld": {"compose"}}
ROUTER = ("accountant.py", "compose/", "pld.py")


def _engine_calls(tree: ast.Module, module: str) -> list[str]:
    """Engine functions imported by name (lpdp's modules import names, never ``import lpdp.x``)."""
    return [f"{names[0]}.{a.name}" for node, names, _inner in _imports(tree, module)
            if isinstance(node, ast.ImportFrom) for a in node.names if a.name in ENGINES.get(names[0], ())]


def test_only_the_router_calls_the_composition_engines():
    found = [f"{_rel(path)}: {hit}" for path, tree in _modules(skip=ROUTER)
             for hit in _engine_calls(tree, _module_name(path))]
    assert not found, "compose through lpdp.Accountant (the one router):\n" + "\n".join(found)
    plain = [f"{_rel(path)}:{node.lineno}" for path, tree in _modules(skip=()) for node in ast.walk(tree)
             if isinstance(node, ast.Import) and any(a.name.startswith("lpdp") for a in node.names)]
    assert not plain, f"import names (from lpdp.x import y), which this scan reads: {plain}"


def test_the_engine_scan_can_fail():
    tree = ast.parse("from lpdp.compose import double_dp, max_k_within\nfrom lpdp.pld import compose as c\n")
    assert _engine_calls(tree, "lpdp.x") == ["lpdp.compose.double_dp", "lpdp.pld.compose"]


def _kind_tests(tree: ast.AST, kinds: set[str]) -> list[int]:
    """Lines comparing a table's ``kind`` (``d["kind"]``, ``d.get("kind")``) with a mechanism kind's name:
    a type check by another name."""
    def reads_kind(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Constant) and n.value == "kind" for n in ast.walk(node))

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            named = {n.value for s in sides for n in ast.walk(s) if isinstance(n, ast.Constant)} & kinds
            if named and any(reads_kind(s) for s in sides):
                out.append(node.lineno)
    return out


def test_no_dispatch_on_a_mechanism_kind_outside_its_package():
    """Outside lpdp/mechanisms a mechanism's table is data: nothing branches on its ``kind`` (ask the
    mechanism for a face instead)."""
    from lpdp.mechanisms import KINDS

    found = [f"{_rel(path)}:{line}" for path, tree in _modules(skip=("mechanisms/",))
             for line in _kind_tests(tree, set(KINDS))]
    assert not found, "ask the mechanism for a face instead of testing its kind:\n" + "\n".join(found)
    assert _kind_tests(ast.parse('if d.get("kind") == "gaussian": pass\nif kind == "tradeoff": pass\n'),
                       set(KINDS)) == [1]
