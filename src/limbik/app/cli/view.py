"""``limbik view``: a clip animated in a window or written to a file."""

from __future__ import annotations

import argparse
from typing import Any

from limbik.app.cli._args import (
    add_file_frame_options,
    animation_path,
    file_frame,
    length_units,
    positive_float,
)


def _cmd_view(args: argparse.Namespace) -> int:
    import os

    from limbik.app.compile_notice import announce_compilation

    announce_compilation()

    from limbik.io.files import read_motion
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.plots import animate_motion

    if args.out is not None:
        animation_path(args.out, "--out")
    motion = read_motion(args.file, **file_frame(args))
    if motion.num_frames == 0:
        from limbik.errors import InvalidInputError

        raise InvalidInputError(f"file must hold at least one frame to draw, got 0 frames in "
                                f"{args.file}", argument="file")
    traces = None
    if args.traces:
        from limbik.skeleton.limbs import find_legs

        legs = find_legs(motion.skeleton)
        traces = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
    ground = None
    if not args.no_ground:
        from limbik.placement.footplant import terrain_for_clip

        ground = terrain_for_clip("flat", motion)
    # every stride-th frame; a rate below one frame per clip draws the first frame alone
    per_drawn = 1 / (args.fps * motion.frame_time)
    frames = max(motion.num_frames, 1)
    stride = max(1, round(per_drawn)) if per_drawn < frames else frames
    drawn = len(range(0, motion.num_frames, stride))
    units = length_units(args, args.file)
    if args.out is None:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            from limbik.errors import InvalidInputError

            raise InvalidInputError("no display here to open a window; use --out OUT.gif "
                                    "(or .mp4, .html) to write the animation to a file",
                                    argument="out")
        import matplotlib.pyplot as plt

        animate_motion(motion, terrain=ground, traces=traces, stride=stride, view=args.view,
                       units=units, title=os.path.basename(str(args.file)),
                       sides=joint_sides(motion.skeleton))
        plt.show()
        return 0
    animate_motion(motion, out=args.out, terrain=ground, traces=traces, stride=stride,
                   view=args.view, units=units, title=os.path.basename(str(args.file)),
                   sides=joint_sides(motion.skeleton))
    every = f", one in {stride}" if 1 < stride < motion.num_frames else ""
    print(f"wrote {args.out} ({motion.num_frames} frames, {drawn} drawn{every})")
    return 0


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
    view = sub.add_parser("view", help="animate a BVH clip or a glTF/GLB character")
    view.add_argument("file", help="a BVH clip or a glTF/GLB character")
    add_file_frame_options(view)
    view.add_argument("--out", help="write OUT.gif, OUT.mp4 or OUT.html instead of a window")
    view.add_argument("--fps", type=positive_float, default=30.0,
                      help="frames per second drawn (> 0)")
    view.add_argument("--view", default="3d", choices=("3d", "side", "front", "top", "profile"),
                      help="3d (default); side (x right, y up), front (z right, y up) or top; "
                      "profile: from the side of the walk, distance along it to the right")
    view.add_argument("--traces", action="store_true", help="draw the feet's paths")
    view.add_argument("--no-ground", action="store_true", help="do not draw the floor")
    view.set_defaults(handler=_cmd_view)
