"""``limbik blender-addon``: the Blender add-on as a zip."""

from __future__ import annotations

import argparse
from typing import Any


def _cmd_blender_addon(args: argparse.Namespace) -> int:
    from limbik.app.blender import build_addon

    print(f"wrote {build_addon(args.output)} (install it from Blender's Preferences > "
          "Add-ons > Install...; limbik must be importable in Blender's Python)")
    return 0


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    addon = sub.add_parser("blender-addon", help="write the Blender add-on zip")
    addon.add_argument("-o", "--output", default="limbik_addon.zip", help="the zip to write")
    addon.set_defaults(handler=_cmd_blender_addon)
