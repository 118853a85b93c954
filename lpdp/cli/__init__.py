"""The ``lpdp`` command line.

Each command module has ``register(subparsers)``; the handlers call library functions only (nothing is
computed here). A user mistake is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from lpdp._version import __version__
from lpdp.errors import LpdpError

# One line per command module; each module adds its own sub-commands.
_COMMAND_MODULES = (
    "lpdp.cli.regions",
    "lpdp.cli.compose",
    "lpdp.cli.run",
    "lpdp.cli.filter",
    "lpdp.cli.fdp",
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full ``lpdp`` parser (sub-commands from every command module)."""
    parser = _Parser(prog="lpdp", description="Exact privacy regions, compositions and filters.")
    parser.add_argument("--version", action="version", version=f"lpdp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lpdp`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LpdpError as exc:
        print(f"lpdp {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
