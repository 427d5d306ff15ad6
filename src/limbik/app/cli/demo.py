"""``limbik demo``: the built-in scenes, their table and the gallery."""

from __future__ import annotations

import argparse
from typing import Any

from limbik.app.cli._args import positive_int


def _cmd_demo(args: argparse.Namespace) -> int:
    from limbik.app.compile_notice import announce_compilation
    from limbik.app.demo import run_demo

    announce_compilation()

    return run_demo(out=args.out, json_output=args.json, pictures=not args.no_pictures,
                    scenes=args.scene, jobs=args.jobs)


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    from limbik.app.demo import SCENE_NAMES

    demo = sub.add_parser("demo", help="solve the built-in scenes, print a table, draw a gallery")
    demo.add_argument("--out", default="limbik-demo", help="folder for the pictures")
    demo.add_argument("--json", action="store_true", help="print the table as JSON")
    demo.add_argument("--no-pictures", action="store_true", help="only solve and print")
    demo.add_argument("--scene", action="append", metavar="NAME",
                      help="run only this scene (repeatable): " + ", ".join(SCENE_NAMES))
    demo.add_argument("--jobs", type=positive_int, default=None,
                      help="worker processes (default: up to 2, one per core)")
    demo.set_defaults(handler=_cmd_demo)
