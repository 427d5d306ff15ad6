"""``limbik view``: a clip animated in a window or written to a file, or clips overlaid in
an interactive 3-D page (``--html``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from limbik.app.cli._args import (
    add_file_frame_options,
    add_terrain_options,
    animation_path,
    file_frame,
    length_units,
    output_path,
    positive_float,
)

_POSITION_SUFFIXES = (".npy", ".npz")


def _feet(skeleton: Any) -> list[int]:
    """Each leg's toe (its ankle where it has none); none where no legs are found."""
    from limbik.errors import LimbikError
    from limbik.skeleton.limbs import find_legs

    try:
        legs = find_legs(skeleton)
    except LimbikError:
        return []
    return [leg.toe if leg.toe is not None else leg.ankle for leg in legs]


def _view_html(args: argparse.Namespace) -> int:
    """``limbik view FILE [FILE ...] --html OUT.html``: the motions overlaid in a 3-D page."""
    import os

    from limbik.errors import InvalidInputError
    from limbik.io.files import read_motion
    from limbik.io.units import unit_scale
    from limbik.skeleton.motion import Motion
    from limbik.viz.web import ViewerMotion, to_html

    output_path(args.html, "--html")
    if Path(args.html).suffix.lower() not in (".html", ".htm"):
        raise InvalidInputError(f"--html must end in .html, got {args.html}", argument="html")
    for flag, given in (("fps", args.fps is not None), ("view", args.view is not None),
                        ("no-ground", args.no_ground)):
        if given:
            raise InvalidInputError(f"--{flag} is for --out and the window; the 3-D page plays "
                                    f"every frame from any side, got --{flag} with --html",
                                    argument=flag.replace("-", "_"))
    has_positions = any(Path(f).suffix.lower() in _POSITION_SUFFIXES for f in args.file)
    for flag, value in (("skeleton", args.skeleton), ("frame-rate", args.frame_rate)):
        if value is not None and not has_positions:
            raise InvalidInputError(f"--{flag} applies to position files (.npy, .npz), got "
                                    f"{', '.join(args.file)}", argument=flag.replace("-", "_"))
    gltf_files = [f for f in args.file if Path(f).suffix.lower() in (".glb", ".gltf")]
    from limbik.app.cli.footplant import _footplant_settings

    args.input = args.file  # the terrain options are footplant's
    terrain_options = _footplant_settings(args)["terrain_options"]
    scale = unit_scale(args.unit)
    tracks: list[Any] = []
    clips: list[Any] = []
    frame_time = None
    for file in args.file:
        label = os.path.basename(str(file))
        if Path(file).suffix.lower() in _POSITION_SUFFIXES:
            from limbik.io.positions import read_positions
            from limbik.placement.positions import to_y_up
            from limbik.skeleton.positions import position_layout

            names, parents = position_layout(args.skeleton or "smpl22")
            read = read_positions(file, joints=len(names))
            dt = 1.0 / (args.frame_rate or 20.0)
            count = len(read.positions)
            for k in range(count):
                clip = to_y_up(read.clip(k), args.up) * scale
                motion = Motion.from_positions(clip, args.skeleton or "smpl22", frame_time=dt)
                feet = _feet(motion.skeleton) if args.traces else []
                tracks.append(ViewerMotion(clip, parents, names, label if count == 1
                                           else f"{label}[{k}]", feet=feet, frame_time=dt))
                clips.append(motion)
        else:
            frame = file_frame(args)
            if file not in gltf_files and gltf_files:  # --skin, --animation are glTF's
                frame.update(skin=None, animation=None)
            motion = read_motion(file, **frame)
            if motion.num_frames == 0:
                raise InvalidInputError(f"file must hold at least one frame to draw, got 0 "
                                        f"frames in {file}", argument="file")
            dt = motion.frame_time
            feet = _feet(motion.skeleton) if args.traces else []
            tracks.append(ViewerMotion(motion.world_positions(), motion.skeleton.parents,
                                       motion.names, label, feet=feet, frame_time=dt))
            clips.append(motion)
        frame_time = dt if frame_time is None else min(frame_time, dt)
    terrain = None
    if args.terrain is not None:
        from limbik.placement.footplant import terrain_for_clip

        terrain = terrain_for_clip(args.terrain, clips[0], **terrain_options, up=args.up,
                                   scale=scale)
    assert frame_time is not None
    to_html(args.html, tracks, frame_time=frame_time, terrain=terrain, traces=args.traces,
            title=", ".join(os.path.basename(str(f)) for f in args.file))
    size = os.path.getsize(args.html)
    print(f"wrote {args.html} ({len(tracks)} motion{'s' * (len(tracks) != 1)}, "
          f"{max(len(t.positions) for t in tracks)} frames, {size / 1e6:.2f} MB)")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    import os

    from limbik.app.compile_notice import announce_compilation

    announce_compilation()

    from limbik.errors import InvalidInputError
    from limbik.io.files import read_motion
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.plots import animate_motion

    if args.html is not None:
        if args.out is not None:
            raise InvalidInputError(f"--out and --html write one picture each; give one, got "
                                    f"--out {args.out} --html {args.html}", argument="out")
        return _view_html(args)
    for flag in ("skeleton", "frame_rate", "terrain"):
        if getattr(args, flag) is not None:
            raise InvalidInputError(f"--{flag.replace('_', '-')} is for the 3-D page: add "
                                    f"--html OUT.html", argument=flag)
    if len(args.file) != 1:
        raise InvalidInputError(f"file must be one clip for --out or a window (several are "
                                f"overlaid with --html OUT.html), got {len(args.file)}",
                                argument="file")
    args.file = args.file[0]
    args.fps = 30.0 if args.fps is None else args.fps
    args.view = args.view or "3d"
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
    view = sub.add_parser("view", help="animate a BVH clip or a glTF/GLB character, or "
                          "overlay clips in a 3-D page")
    view.add_argument("file", nargs="+", help="a BVH clip or a glTF/GLB character; with "
                      "--html, several clips (also .npy/.npz joint positions) overlaid")
    add_file_frame_options(view)
    view.add_argument("--out", help="write OUT.gif, OUT.mp4 or OUT.html (pictures of frames) "
                      "instead of a window")
    view.add_argument("--html", help="write an interactive 3-D viewer page (one file that "
                      "works offline): orbit, scrub and play the clips overlaid")
    view.add_argument("--terrain", help="--html: draw this ground: flat, hills, steps, slope, "
                      "or a .npy/.png height field (with --cell-size, --terrain-origin, "
                      "--height-scale, --seed as in footplant)")
    add_terrain_options(view)
    view.add_argument("--skeleton", help="position files: the joint order, smpl22 "
                      "(default) or smpl24")
    view.add_argument("--frame-rate", type=positive_float, default=None,
                      help="position files: frames per second (default 20)")
    view.add_argument("--fps", type=positive_float, default=None,
                      help="frames per second drawn (> 0, default 30)")
    view.add_argument("--view", default=None, choices=("3d", "side", "front", "top", "profile"),
                      help="3d (default); side (x right, y up), front (z right, y up) or top; "
                      "profile: from the side of the walk, distance along it to the right")
    view.add_argument("--traces", action="store_true", help="draw the feet's paths")
    view.add_argument("--no-ground", action="store_true", help="do not draw the floor")
    view.set_defaults(handler=_cmd_view)
