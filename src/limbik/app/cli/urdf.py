"""``limbik urdf``: a URDF file's links, joints and limits."""

from __future__ import annotations

import argparse
import math
from typing import Any


def _cmd_urdf(args: argparse.Namespace) -> int:
    from limbik.chain.urdf import read_urdf_tree

    tree = read_urdf_tree(args.file)
    if args.json:
        import json

        def bound(value: float) -> float | None:  # JSON has no infinity: null is no limit
            return value if math.isfinite(value) else None

        print(json.dumps({
            "file": str(args.file), "links": list(tree.links), "bases": list(tree.roots),
            "tips": list(tree.tips),
            "joints": [{"name": name, "type": kind, "parent": parent, "child": child,
                        "lower": bound(lower), "upper": bound(upper)}
                       for (name, kind, parent, child), (lower, upper)
                       in zip(tree.joints, tree.limits, strict=True)]}, indent=2))
        return 0
    print(f"{args.file}: {len(tree.links)} links, {len(tree.joints)} joints")
    print(f"bases (--base): {', '.join(tree.roots)}")
    print(f"tips (--tip):   {', '.join(tree.tips)}")
    print("links: " + ", ".join(tree.links))
    print("joints (name, type, parent -> child, limits):")
    width = max((len(j[0]) for j in tree.joints), default=0)
    type_width = max((len(j[1]) for j in tree.joints), default=0)
    link_width = max((len(f"{j[2]} -> {j[3]}") for j in tree.joints), default=0)
    for (name, kind, parent, child), limits in zip(tree.joints, tree.limits, strict=True):
        print(f"  {name:<{width}}  {kind:<{type_width}}  {f'{parent} -> {child}':<{link_width}}"
              f"  {_limit_text(kind, *limits)}".rstrip())
    return 0

def _limit_text(kind: str, lower: float, upper: float) -> str:
    """A joint's range as ``limits`` prints it: radians or metres, or why there is none."""
    if kind not in ("revolute", "prismatic", "continuous"):
        return ""
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return "no limits" if kind != "continuous" else "no limits (continuous)"
    unit = "rad" if kind == "revolute" else "m"
    return f"[{lower:.6g}, {upper:.6g}] {unit}"


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    urdf = sub.add_parser("urdf", help="list a URDF file's links and joints (for --base/--tip)")
    urdf.add_argument("file", help="a URDF file")
    urdf.add_argument("--json", action="store_true",
                      help="print the links, bases, tips and joints (type, links, limits: "
                      "radians or metres, null where there is none) as JSON")
    urdf.set_defaults(handler=_cmd_urdf)
