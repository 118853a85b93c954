"""The ``lpdp`` command line.

Each command module has ``register(subparsers)``; the handlers call library functions only (nothing is
computed here). A user mistake is one line on stderr and exit status 2, never a traceback: usage errors
(unknown or repeated options, missing values) come from the parser, bad values from the library's
:class:`~lpdp.errors.LpdpError`. Output paths are checked before any work. A defect inside lpdp is one
line too, with exit status 3 (``LPDP_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import signal
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

    Values that start with a minus sign and a digit, ``inf`` or ``nan`` (``-0.5,0``, ``-1e-3``, ``-inf``)
    are values, not options, so the library can say what is wrong with them; an option given twice is an
    error.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\.?\d|inf|nan)", re.IGNORECASE)
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


class _StdoutLost(Exception):
    """Writing a result to standard output failed (a full disk, a closed pipe): ``cause`` says why."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause)
        self.cause = cause


class _GuardedStdout:
    """``sys.stdout`` whose write errors are :class:`_StdoutLost`, told apart from the command's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _StdoutLost(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise _StdoutLost(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's last flush cannot fail a second time."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
    except (OSError, ValueError):
        return
    if fd >= 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


#: Exit status after Ctrl-C (128 + SIGINT), as a shell reports a process killed by it.
EXIT_INTERRUPTED = 130


class _Interrupts:
    """Ctrl-C while a command runs: one line on stderr at once, exit status 130, never a traceback.

    The first SIGINT prints the line (with the command's ``args.interrupted_note``, e.g. what was kept),
    then raises :class:`KeyboardInterrupt` so files and clusters are closed by the code that opened them;
    what that cleaning up prints (a Dask cluster's shutdown errors) goes to /dev/null in the console script
    (not with ``LPDP_DEBUG=1``). A second Ctrl-C exits at once. The signal is remembered, so a command
    whose library code swallowed the exception still exits 130. A SIGINT the shell told lpdp to ignore
    (``lpdp run &`` in a script) stays ignored.
    """

    def __init__(self, command: str, *, console: bool) -> None:
        self.command = command
        self.args: argparse.Namespace | None = None
        self.seen = False
        self.reported = False
        self._console = console
        self._silence_after = console and os.environ.get(DEBUG_ENV) != "1"
        self._old: Any = None

    def report(self) -> int:
        """Print the one line (once); the exit status 130."""
        if not self.reported:
            self.reported = True
            note = getattr(self.args, "interrupted_note", "")
            line = f"lpdp {self.command}: interrupted" + (f"; {note}" if note else "")
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
        return EXIT_INTERRUPTED

    def exit(self) -> int:
        """The status 130 after the one line; the console script ends here at once, since Python's own
        exit would kill the process with SIGINT once a KeyboardInterrupt went through its C code."""
        self.report()
        if self._console:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED

    def _handler(self, signum: int, frame: Any) -> None:
        if self.seen:               # a second Ctrl-C: no more cleaning up
            os._exit(self.report())
        self.seen = True
        self.report()
        if self._silence_after:
            with contextlib.suppress(OSError, ValueError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
                os.close(null)
        raise KeyboardInterrupt

    def __enter__(self) -> _Interrupts:
        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
                self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *_: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lpdp`` console script; returns the exit status.

    Called with ``argv`` (tests, other programs) it returns. As the console script it ends the process
    once its output is flushed, without Python's finalisation: every file lpdp writes is closed (and
    renamed into place) before the command returns, and tearing down the ~1,500 modules of NumPy, SciPy
    and matplotlib only adds 0.3 s to every command (measured on a 2-core machine).
    """
    code = _status(argv)
    if argv is None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    return code


def _status(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and not words[0].startswith("-") else "lpdp"
    # the console script (argv None) silences stderr after a Ctrl-C and exits at once; a caller does not
    interrupts = _Interrupts(command, console=argv is None)
    stdout = sys.stdout
    try:
        with interrupts:
            sys.stdout = _GuardedStdout(stdout)
            try:
                code = _main(words, interrupts)
                sys.stdout.flush()
            finally:
                sys.stdout = stdout
            return interrupts.exit() if interrupts.seen else code
    except KeyboardInterrupt:
        return interrupts.exit()
    except _StdoutLost as exc:
        _silence_stdout()
        if isinstance(exc.cause, BrokenPipeError):  # the reader went away (``lpdp ... | head -1``)
            return 0
        print(f"lpdp {command}: error: cannot write the result to standard output "
              f"({exc.cause.strerror or type(exc.cause).__name__})", file=sys.stderr)
        return EXIT_USAGE


def _main(words: list[str], interrupts: _Interrupts) -> int:
    if words == ["--version"]:
        print(f"lpdp {__version__}")
        return 0
    from lpdp.cli._common import check_outputs  # after --version, which needs no numpy

    parser = build_parser(words[0] if words and not words[0].startswith("-") else None)
    args = parser.parse_args(words)   # usage errors and --help exit here (SystemExit, status 2 or 0)
    interrupts.args = args
    command = args.command
    debug = os.environ.get(DEBUG_ENV) == "1"
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            warnings.simplefilter("once")
            check_outputs(args)
            return int(args.func(args) or 0)
    except (KeyboardInterrupt, _StdoutLost):
        raise
    except InternalError as exc:
        if debug:
            raise
        print(f"lpdp {command}: internal error: {_one_line(exc)} (please report it)", file=sys.stderr)
        return EXIT_INTERNAL
    except LpdpError as exc:
        print(f"lpdp {command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
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
