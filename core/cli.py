"""The `changeprov` command: thin subcommands over library functions.

Exit codes: 0 ok, 1 findings (a check found problems, or a load completed but its export disagrees with
its manifest), 2 error (bad input, environment, store).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import threading
from typing import Sequence

from changeprov import __version__
from changeprov.errors import ChangeprovError
from changeprov.terminal import visible

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Once(argparse._StoreAction):
    """A single-valued option given twice with different values is refused: argparse keeps the last
    one, so `--store a … --store b` queried b without a word (ut42d #8)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", {})
        if self.option_strings and self.dest in given and given[self.dest] != values:
            # the values are not repeated: an endpoint URL may hold a key (rv44 #3)
            raise argparse.ArgumentError(self, "given twice, with different values: give it once")
        given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)


def build_parser() -> argparse.ArgumentParser:
    from changeprov.commands import COMMANDS

    parser = _Parser(
        prog="changeprov",
        description="Metadata change events (OpenMetadata, DataHub) to a PROV-O knowledge graph.",
        epilog="Exit codes: 0 ok, 1 findings, 2 error.",
    )
    parser.add_argument("--version", action="version", version=f"changeprov {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.configure(p)
        p.set_defaults(_run=cmd.run, _parser=p)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that cleanups run: an output being written
    to a temporary file beside it (``replaced_on_success``) is removed, not left behind."""


def _terminate(_signum, _frame) -> None:
    raise Terminated()


def _not_py4j(record: logging.LogRecord) -> bool:
    return "py4j" not in record.pathname.replace("\\", "/").split("/")


def _quiet_py4j() -> None:
    """py4j reports a call cut short (Ctrl-C during a Spark job, the JVM gone) with tracebacks through
    the root logger (``logging.exception``, which adds a stderr handler on first use); the CLI says
    what happened in one line instead, so the root logger gets a stderr handler that drops py4j's."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.addFilter(_not_py4j)
        root.addHandler(handler)


_QUOTED_CONTROL = re.compile(r"'([\x00-\x1f\x7f])'")


def one_line(message: str) -> str:
    """An error message as one line: a control character an engine quotes is named (U+000A), line
    breaks of a message that spans lines become spaces, and other controls (an escape sequence in a
    name the store suggests) are shown as \\uXXXX.

    >>> one_line("Invalid IRI code point '\\n'")
    "Invalid IRI code point 'U+000A'"
    >>> one_line("expected one of a,\\n  b")
    'expected one of a, b'
    """
    named = _QUOTED_CONTROL.sub(lambda m: f"'U+{ord(m.group(1)):04X}'", message)
    return visible(re.sub(r"\s*[\r\n]+\s*", " ", named).strip())


TRACEBACK_ENV = "CHANGEPROV_TRACEBACK"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the command's own usage, not the top level's (ut22 m9)
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not args.command:
        parser.print_help()
        return EXIT_OK
    _quiet_py4j()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    try:
        return args._run(args)
    except ChangeprovError as exc:
        print(f"changeprov {args.command}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        return _stopped(args.command, exc)
    except BrokenPipeError:  # `changeprov query … | head`: the reader has all it wanted
        _silence_stdout()
        return getattr(args, "verdict", EXIT_OK)  # a check's or an audit's findings stand (ut44c #2)
    except Exception as exc:  # still one line and exit 2 (1 means findings), the traceback on request
        stop = _interruption(exc)
        if stop is not None:  # py4j's own clean-up after Ctrl-C failed, with the JVM gone
            return _stopped(args.command, stop)
        if os.environ.get(TRACEBACK_ENV):
            # printed, not raised: an uncaught exception exits 1, which means findings (ut47b #1)
            import traceback

            traceback.print_exc()
        if isinstance(exc, ConnectionRefusedError) and args.command in ("export", "demo"):
            # py4j's gateway, with the JVM gone (ut44e #2: "[Errno 111] Connection refused" after the
            # JVM's out-of-memory handler stopped it)
            print(f"changeprov {args.command}: error: the Spark JVM is gone (out of memory? if it printed "
                  f"OutOfMemoryError above, give it more with --conf spark.driver.memory=8g)",
                  file=sys.stderr)
            return EXIT_ERROR
        print(f"changeprov {args.command}: {_unexpected(exc)}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def stop_word(exc: KeyboardInterrupt) -> str:
    """How a stop is told: SIGTERM is "terminated", Ctrl-C "interrupted"."""
    return "terminated" if isinstance(exc, Terminated) else "interrupted"


def _stopped(command: str, exc: KeyboardInterrupt) -> int:
    print(f"changeprov {command}: {stop_word(exc)}", file=sys.stderr)
    return EXIT_ERROR


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM that ``exc`` was raised while handling, if any: py4j closes its connection
    on a KeyboardInterrupt and raises its own error when the JVM (in the same process group, so
    interrupted too) has already gone."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _unexpected(exc: Exception) -> str:
    """What an error no command checked for says: the file system (ut8b #4: exit 1 and a traceback), the
    Spark JVM gone or failing outside a job (rv29 #6: it was called a bug), or a bug.

    >>> _unexpected(OSError(28, "No space left on device"))
    'error: [Errno 28] No space left on device'
    >>> _unexpected(KeyError("x"))
    "internal error (a bug in changeprov, please report it): KeyError: 'x' (set CHANGEPROV_TRACEBACK=1 to see where)"
    """
    if isinstance(exc, OSError):
        return f"error: {one_line(str(exc))}"
    if type(exc).__module__.startswith("py4j."):
        # a Java error's text is its whole stack trace: keep the lines that are not frames
        said = [line.strip() for line in str(exc).splitlines() if line.strip() and not line[:1].isspace()]
        return (f"error: the Spark JVM failed or stopped (out of memory, killed?): {type(exc).__name__}: "
                f"{one_line(' '.join(said[:2]))} (set {TRACEBACK_ENV}=1 to see where)")
    return (f"internal error (a bug in changeprov, please report it): {type(exc).__name__}: {one_line(str(exc))} "
            f"(set {TRACEBACK_ENV}=1 to see where)")


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
