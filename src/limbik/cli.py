"""The ``limbik`` command. ``main(argv)`` returns the exit code, so tests call it in-process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from limbik import __version__
from limbik.errors import LimbikError

Handler = Callable[[argparse.Namespace], int]


def _cmd_demo(args: argparse.Namespace) -> int:
    from limbik.demo import run_demo

    return run_demo(out=args.out, json_output=args.json, pictures=not args.no_pictures)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="limbik", description="Inverse kinematics for limbs, chains and skeletons.")
    parser.add_argument("--version", action="version", version=f"limbik {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="solve the built-in scenes, print a table, draw a gallery")
    demo.add_argument("--out", default="limbik-demo", help="folder for the pictures")
    demo.add_argument("--json", action="store_true", help="print the table as JSON")
    demo.add_argument("--no-pictures", action="store_true", help="only solve and print")
    demo.set_defaults(handler=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return handler(args)
    except (LimbikError, OSError) as exc:
        print(f"limbik: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("limbik: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
