"""The ``limbik`` command. ``main(argv)`` returns the exit code, so tests call it in-process.

Each subcommand is a module here with ``add_parser(sub)`` and its handler.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from limbik.app.cli import (
    blender_addon,
    compile,
    demo,
    footplant,
    metrics,
    solve,
    urdf,
    view,
)
from limbik.app.cli._args import Parser, UsageError
from limbik.errors import LimbikError

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "EXIT_USAGE",
           "UsageError", "build_parser", "main"]

Handler = Callable[[argparse.Namespace], int]

#: Exit codes: 0 success, 1 bad input or a failed file operation, 2 a usage error (an
#: unknown option, a missing or malformed value), 130 interrupted, 141 the reader of
#: standard output went away (as a Unix tool killed by SIGPIPE).
EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_TERMINATED = 1, 2, 130, 141, 143

class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that it stops as on Ctrl-C (worker
    processes ended, temporary files removed)."""

def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


#: The subcommands, in the order ``--help`` lists them.
COMMANDS = (demo, footplant, view, metrics, blender_addon, solve, compile, urdf)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from limbik import __version__

    parser = Parser(
        prog="limbik", description="Inverse kinematics for limbs, chains and skeletons.")
    parser.add_argument("--version", action="version", version=f"limbik {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code (see ``EXIT_*``).

    Every error is one line on stderr. A usage error adds a hint to ``--help`` and exits
    2; bad input or a failed file operation exits 1. A closed standard output (``limbik
    solve | head -1``) ends the program quietly with 141. Ctrl-C exits 130 and SIGTERM
    143, after stopping worker processes and removing temporary files.
    """
    import signal
    import threading

    # (a SIGTERM the caller ignores stays ignored, as the file writer leaves it)
    installed = (threading.current_thread() is threading.main_thread()
                 and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN)
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if installed else None
    try:
        return _main(argv)
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)

def _main(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()
        try:
            args, unknown = parser.parse_known_args(argv)
            if unknown:  # name the subcommand whose options were wrong
                command = getattr(args, "command", None)
                raise UsageError(f"unrecognized arguments: {' '.join(unknown)}",
                                 f"limbik {command}" if command else "limbik")
        except UsageError as exc:
            print(f"limbik: error: {exc} (see '{exc.prog} --help')", file=sys.stderr)
            return EXIT_USAGE
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return EXIT_USAGE
        from limbik.errors import LimbikWarning

        with warnings.catch_warnings():
            warnings.simplefilter("default", LimbikWarning)  # said, whatever the filters
            warnings.showwarning = _show_warning
            code = handler(args)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (LimbikError, OSError) as exc:
        print(f"limbik: error: {_user_message(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        if isinstance(exc, _Terminated):
            print("limbik: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        print("limbik: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """limbik's warnings as one ``limbik: warning:`` line naming the command's options
    (``up='z'`` reads ``--up z``); others as Python shows them."""
    from limbik.errors import LimbikWarning

    if not issubclass(category, LimbikWarning):
        _python_show_warning(message, category, filename, lineno, file, line)
        return
    text = re.sub(r"\b([a-z][a-z_]*)='([^']*)'",
                  lambda m: f"--{m[1].replace('_', '-')} {m[2]}", str(message))
    print(f"limbik: warning: {text}", file=sys.stderr)

_python_show_warning = warnings.showwarning

def _user_message(exc: Exception) -> str:
    """The error's text, naming the user's path where the atomic writer's temporary file
    (``.NAME.RANDOM.tmp`` beside it) failed."""
    import os
    import re

    filename = getattr(exc, "filename", None)
    if isinstance(exc, OSError) and isinstance(filename, str):
        folder, name = os.path.split(filename)
        temporary = re.fullmatch(r"\.(.+)\.[A-Za-z0-9_]+\.tmp", name)
        if temporary:
            path = os.path.join(folder, temporary.group(1))
            return f"cannot write {path}: {exc.strerror or exc}"
        if isinstance(exc, FileExistsError):  # making an output folder
            return f"{filename} is a file, but a folder is needed there (an output folder)"
        if exc.strerror and "Errno" in str(exc):  # the system's text, without "[Errno N]"
            return f"{filename}: {exc.strerror}"
    return str(exc)

def _silence_stdout() -> None:
    """Point stdout at the null device so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # stdout is not a real file
        pass
