"""``limbik metrics``: the scores motion-generation papers report, for clips and files of
joint positions, printed as a table or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from limbik.app.cli._args import positive_float

#: The columns of the table, in order, with their headers.
COLUMNS = (("skate_ratio", "skate"), ("penetration", "penetr. m"), ("floating", "float m"),
           ("bone_variation", "bone var"), ("jitter", "jitter m/s3"),
           ("joint_change", "change m"))


def _clips(path: Path, args: argparse.Namespace) -> list[tuple[str, Any, Any, list[str], float]]:
    """``(label, positions (T, J, 3) in the file's units, parents, names, fps)`` of every
    clip in ``path``."""
    from limbik.app.batch import is_position_file, skeleton_layout
    from limbik.app.cli.footplant import skeleton_arg
    from limbik.io.files import read_motion
    from limbik.placement.positions import to_y_up

    if is_position_file(path):
        from limbik.io.positions import read_positions

        skeleton = skeleton_arg(args.skeleton) or "smpl22"
        names, parents = skeleton_layout(skeleton)
        positions = to_y_up(read_positions(path, joints=len(names)).positions, args.up)
        label = str(path)
        return [(f"{label}[{n}]" if len(positions) > 1 else label, clip, parents,
                 list(names), args.fps or 20.0) for n, clip in enumerate(positions)]
    motion = read_motion(path, up=args.up)
    return [(str(path), motion.world_positions(), motion.skeleton.parents,
             list(motion.names), motion.frame_rate)]


def _cmd_metrics(args: argparse.Namespace) -> int:
    import json

    from limbik.errors import InvalidInputError
    from limbik.io.units import unit_scale
    from limbik.placement.metrics import score_positions

    scale = unit_scale(args.unit) if args.unit is not None else 1.0
    references = []
    if args.reference is not None:
        if len(args.file) != 1:
            raise InvalidInputError(f"--reference compares one file, got {len(args.file)} files",
                                    argument="reference")
        references = _clips(Path(args.reference), args)
    rows: list[dict[str, Any]] = []
    for given in args.file:
        clips = _clips(Path(given), args)
        if references and len(references) != len(clips):
            raise InvalidInputError(f"--reference must hold as many clips as {given} "
                                    f"({len(clips)}), got {len(references)}",
                                    argument="reference")
        for k, (label, positions, parents, names, fps) in enumerate(clips):
            reference = references[k][1] if references else None
            scores = score_positions(positions, parents, names=names, fps=fps,
                                     metres_per_unit=scale, reference=reference)
            rows.append({"clip": label, "frames": len(positions), **scores})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len("clip"), *(len(r["clip"]) for r in rows))
    shown = [(key, head) for key, head in COLUMNS if any(key in r for r in rows)]
    print(f"{'clip':<{width}}  " + "  ".join(f"{head:>11}" for _, head in shown))
    for row in rows:
        print(f"{row['clip']:<{width}}  " + "  ".join(f"{row[key]:>11.4g}" for key, _ in shown))
    print("skate: share of frames a toe within 5 cm of the floor moves faster than 0.5 m/s; "
          "bone var: largest bone-length wobble (std / median); jitter: mean joint jerk",
          file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    metrics = sub.add_parser(
        "metrics", help="score clips as motion-generation papers do (skating, penetration, "
        "floating, bone lengths, jitter)",
        description="Score clips (BVH, glTF/GLB) and files of joint positions (.npy/.npz) "
        "with the measures motion-generation papers report: the foot-skating ratio (a toe "
        "within 5 cm of the floor moving faster than 0.5 m/s, in the frame and over 5 "
        "frames), penetration and floating against the clip's floor, bone-length wobble and "
        "jitter (mean joint jerk); with --reference, the mean joint change from it.")
    metrics.add_argument("file", nargs="+", help="clips or files of joint positions")
    metrics.add_argument("--reference", help="a clip or file of the same frames to compare "
                         "with (one file only)")
    metrics.add_argument("--skeleton", help="joint positions: smpl22 (default), smpl24 or a "
                         ".json file of parents")
    metrics.add_argument("--fps", type=positive_float, default=None,
                         help="joint positions: frames per second (default 20)")
    metrics.add_argument("--up", choices=("y", "z"), default="y",
                         help="the files' up axis (default y)")
    metrics.add_argument("--unit", help="the files' length unit, for scores in metres: m, cm, "
                         "mm, in, ft, ... or a factor (default m)")
    metrics.add_argument("--json", action="store_true", help="print the scores as JSON")
    metrics.set_defaults(handler=_cmd_metrics)
