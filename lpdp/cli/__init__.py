"""The ``lpdp`` command line.

Each command module has ``register(subparsers)``; the handlers call library functions only (nothing is
computed here). A user mistake is one line on stderr and exit status 2, never a traceback: usage errors
(unknown or repeated options, missing values) come from the parser, bad values from the library's
:class:`~lpdp.errors.LpdpError`. Output paths are checked before any work. A defect inside lpdp is one
line too, with exit status 3 (``LPDP_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from lpdp._version import __version__
from lpdp.errors import InternalError, LpdpError

# One line per command module; each module adds its own sub-commands.
_COMMAND_MODULES = (
    "lpdp.cli.regions",
    "lpdp.cli.compose",
    "lpdp.cli.account",
    "lpdp.cli.run",
    "lpdp.cli.filter",
    "lpdp.cli.fdp",
    "lpdp.cli.calibrate",
)

#: Exit status of a user mistake (usage or value) and of a defect inside lpdp.
EXIT_USAGE, EXIT_INTERNAL = 2, 3
#: Set to 1 to see the traceback of an unexpected error instead of the one-line report.
DEBUG_ENV = "LPDP_DEBUG"


class _StoreOnce(argparse._StoreAction):
    """``store`` that refuses a repeated option (argparse would silently keep the last value)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        seen = namespace.__dict__.setdefault("_given", {})
        if self.dest in seen:
            raise argparse.ArgumentError(self, f"given twice ({seen[self.dest]!r} and {values!r}); give it "
                                               f"once")
        seen[self.dest] = values
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr and exit status 2.

    Values that start with a minus sign and a digit (``-0.5,0``, ``-1e-3``) are values, not options, so
    the library can say what is wrong with them; an option given twice is an error.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``lpdp`` parser: every command module, or only those up to the one that registers ``command``
    (so a command does not pay for importing the others: the filter commands alone load scipy.stats)."""
    parser = _Parser(prog="lpdp", description="Exact privacy regions, compositions and filters.")
    parser.add_argument("--version", action="version", version=f"lpdp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Python warnings on stderr as one line each (never the source line)."""
    print(f"lpdp: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lpdp`` console script; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:
        print(f"lpdp {__version__}")
        return 0
    from lpdp.cli._common import check_outputs  # after --version, which needs no numpy

    parser = build_parser(words[0] if words and not words[0].startswith("-") else None)
    args = parser.parse_args(words)
    command = args.command
    debug = os.environ.get(DEBUG_ENV) == "1"
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            warnings.simplefilter("once")
            check_outputs(args)
            return int(args.func(args) or 0)
    except InternalError as exc:
        if debug:
            raise
        print(f"lpdp {command}: internal error: {_one_line(exc)} (please report it)", file=sys.stderr)
        return EXIT_INTERNAL
    except LpdpError as exc:
        print(f"lpdp {command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"lpdp {command}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"lpdp {command}: error: out of memory (the estimate was too low; please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:  # a defect: one line, and the traceback on request
        if debug:
            raise
        print(f"lpdp {command}: internal error: {type(exc).__name__}: {_one_line(exc)} (please report "
              f"it; {DEBUG_ENV}=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
