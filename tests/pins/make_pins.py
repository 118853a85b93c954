"""Write the regression pins (tests/pins/*.json) from the current tree.

Run only when an output is *meant* to change, and say why in the commit:
``PYTHONPATH=. python tests/pins/make_pins.py``. ``tests/test_regression_pins.py`` re-runs every case and
compares with these files. The cases are listed in :mod:`tests.pins.cases`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from tests.pins.cases import CLI_CASES, SCENARIOS, doc_snippets, run_cli, run_scenario, run_snippet  # noqa: E402


def main() -> None:
    snippets = [{"source": src, "code": code, "stdout": run_snippet(code)} for src, code in doc_snippets()]
    (HERE / "snippets.json").write_text(json.dumps(snippets, indent=1) + "\n")
    cli = [{"argv": argv, "output": run_cli(argv)} for argv in CLI_CASES]
    (HERE / "cli.json").write_text(json.dumps(cli, indent=1) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        scen = {name: run_scenario(name, Path(tmp)) for name in SCENARIOS}
    (HERE / "scenarios.json").write_text(json.dumps(scen, indent=1) + "\n")


if __name__ == "__main__":
    main()
