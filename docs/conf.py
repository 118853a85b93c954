"""Sphinx configuration of lpdp's documentation site.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (``-W``: a warning fails the build),
and run every docstring example with ``python -m sphinx -W -b doctest docs docs/_build/doctest``. The pages
are docs/*.md (MyST Markdown); the API reference (one page per module in ``docs/_api/``, written at build
time) is generated from the docstrings by autodoc; the gallery draws the fast bundled scenarios into
``docs/_gallery/`` at build time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLBACKEND", "Agg")

from lpdp import __version__  # noqa: E402

project = "lpdp"
author = "lpdp maintainers"
release = version = __version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.doctest",
              "sphinx.ext.mathjax"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_gallery/*.json", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
napoleon_numpy_docstring = True
napoleon_google_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
html_title = f"lpdp {version}"
doctest_global_setup = "import matplotlib\nmatplotlib.use('Agg')"
doctest_default_flags = __import__("doctest").NORMALIZE_WHITESPACE | __import__("doctest").ELLIPSIS
suppress_warnings = ["myst.xref_missing"]

#: Bundled scenarios drawn into the gallery (each runs in about a second).
GALLERY = ["figure1_mixture", "figure2_double_dp", "figure3_gaussian", "figure3_caption_dp_tv",
           "count_pure_and_approx", "budget_double_dp", "fdp_tail_gaussian"]


def _gallery(app: object) -> None:
    """Run the gallery scenarios into docs/_gallery (their PNGs are the gallery's figures)."""
    from lpdp.scenarios import bundled, run_many

    out = HERE / "_gallery"
    if all((out / f"{name}.png").exists() for name in GALLERY) and os.environ.get("LPDP_DOCS_RERUN") != "1":
        return
    known = bundled()
    run_many([known[name] for name in GALLERY], out, scheduler="serial", progress=False)


#: Modules of the API reference, one page each (``docs/_api/<module>.rst``, written at build time).
#: ``lpdp.filters`` re-exports the mechanisms, so its page does not index them a second time.
REFERENCE = ["lpdp", "lpdp.accountant", "lpdp.region", "lpdp.curves", "lpdp.mixture", "lpdp.tradeoff",
             "lpdp.fdp", "lpdp.compose", "lpdp.mechanisms", "lpdp.workload", "lpdp.pld", "lpdp.lp",
             "lpdp.filters", "lpdp.plot", "lpdp.display", "lpdp.export", "lpdp.interop", "lpdp.scenarios",
             "lpdp.errors"]
_NO_INDEX = {"lpdp.filters"}

#: Every docstring's examples run as their own doctest group, in the namespace of the module that defines
#: the object (as ``doctest.testmod`` runs them, tests/test_doctests.py), in a fresh temporary folder.
_SETUP = """.. testsetup:: {group}

   import importlib, os, tempfile
   os.chdir(tempfile.mkdtemp())
   globals().update(vars(importlib.import_module("{module}")))

"""


def _examples(app: object, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """Turn the ``>>>`` blocks of one docstring into ``.. doctest::`` blocks of a group of its own."""
    import inspect

    module = obj.__name__ if inspect.ismodule(obj) else getattr(inspect.getmodule(obj), "__name__", None)
    if module is None or not any(line.lstrip().startswith(">>>") for line in lines):
        return
    group = name.replace(".", "_")
    out = _SETUP.format(group=group, module=module).splitlines()
    inside = False
    for i, line in enumerate(lines):
        text = line.lstrip()
        if not inside and text.startswith(">>>") and (i == 0 or not lines[i - 1].strip()):
            indent = line[: len(line) - len(text)]
            out += [f"{indent}.. doctest:: {group}", ""]
            inside = True
        if inside and not text:
            inside = False
        out.append(f"   {line}" if inside else line)
    lines[:] = out


def _reference(app: object) -> None:
    """One reference page per module: its docstring, its public members (autodoc), its examples."""
    out = HERE / "_api"
    out.mkdir(exist_ok=True)
    for name in REFERENCE:
        options = "   :members:\n" + ("   :no-index:\n" if name in _NO_INDEX else "")
        if name == "lpdp":
            options = ""
        text = f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n{options}"
        page = out / f"{name}.rst"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


def setup(app: object) -> None:
    app.connect("builder-inited", _reference)  # type: ignore[attr-defined]
    app.connect("autodoc-process-docstring", _examples)  # type: ignore[attr-defined]
    app.connect("builder-inited", _gallery)  # type: ignore[attr-defined]
