"""The ``limbik`` command. ``main(argv)`` returns the exit code, so tests call it in-process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from limbik import __version__
from limbik.errors import LimbikError

Handler = Callable[[argparse.Namespace], int]


def _cmd_demo(args: argparse.Namespace) -> int:
    from limbik.demo import run_demo

    return run_demo(out=args.out, json_output=args.json, pictures=not args.no_pictures,
                    scenes=args.scene, jobs=args.jobs)


class _ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, label: str, *, force: bool = False) -> None:
        self.label = label
        self.enabled = force or sys.stderr.isatty()

    def __call__(self, done: int, total: int, stage: str) -> None:
        if not self.enabled:
            return
        width = 24
        filled = int(width * done / max(total, 1))
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {stage:<14}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _cmd_footplant(args: argparse.Namespace) -> int:
    import json

    from limbik._io import atomic_write
    from limbik.placement.footplant import footplant, terrain_for_clip
    from limbik.skeleton.bvh import read_bvh, write_bvh
    from limbik.skeleton.limbs import find_legs

    if args.input is None:
        from limbik.placement.walk import walk_cycle

        motion = walk_cycle()
        source_name = "built-in walk"
        terrain_spec = args.terrain or "hills"
    else:
        motion = read_bvh(args.input)
        source_name = str(args.input)
        terrain_spec = args.terrain or "flat"
    legs = find_legs(motion.skeleton)
    terrain = terrain_for_clip(terrain_spec, motion, seed=args.seed, cell_size=args.cell_size,
                               origin=tuple(args.terrain_origin), height_scale=args.height_scale,
                               legs=legs)
    bar = _ProgressBar("footplant", force=motion.num_frames >= 2000 and args.progress)
    result, report = footplant(motion, terrain, legs=legs, floor=args.floor, progress=bar)
    write_bvh(result, args.output)
    written = [str(args.output)]
    if args.report:
        with atomic_write(args.report) as handle:
            json.dump(report.to_dict(), handle, indent=2)
        written.append(str(args.report))
    if args.plot:
        _footplant_picture(Path(args.plot), motion, result, terrain, legs, report)
        written.append(str(args.plot))
    if args.json:
        print(json.dumps({"input": source_name, "terrain": terrain.name, "outputs": written,
                          **report.to_dict()}, indent=2))
    else:
        print(f"footplant: {source_name}, {motion.num_frames} frames, terrain {terrain.name}, "
              f"floor {report.floor:.4g}")
        print(report.summary())
        print("wrote " + ", ".join(written))
    return 0


def _footplant_picture(path: Path, motion: Any, result: Any, terrain: Any, legs: Any,
                       report: Any) -> None:
    from limbik.viz.footplant_plot import plot_footplant
    from limbik.viz.plots import animate_motion, save_figure

    if path.suffix.lower() in (".gif", ".mp4", ".html"):
        toes = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
        stride = max(1, round(1 / (30 * result.frame_time)))
        animate_motion(result, out=path, terrain=terrain, traces=toes, compare=motion,
                       stride=stride, view="profile", title="planted (blue) and source (grey)")
    else:
        save_figure(plot_footplant(motion, result, terrain, legs, report.contacts,
                                   floor=report.floor), path)


def _cmd_view(args: argparse.Namespace) -> int:
    import os

    from limbik.skeleton.bvh import read_bvh
    from limbik.viz.plots import animate_motion

    motion = read_bvh(args.file)
    traces = None
    if args.traces:
        from limbik.skeleton.limbs import find_legs

        legs = find_legs(motion.skeleton)
        traces = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
    ground = None
    if not args.no_ground:
        from limbik.placement.footplant import terrain_for_clip

        ground = terrain_for_clip("flat", motion)
    stride = max(1, round(1 / (args.fps * motion.frame_time)))
    if args.out is None:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            print("limbik view: no display here; use --out OUT.gif (or .mp4, .html) to write "
                  "the animation to a file", file=sys.stderr)
            return 2
        import matplotlib.pyplot as plt

        animate_motion(motion, terrain=ground, traces=traces, stride=stride, view=args.view)
        plt.show()
        return 0
    animate_motion(motion, out=args.out, terrain=ground, traces=traces, stride=stride,
                   view=args.view, title=os.path.basename(str(args.file)))
    print(f"wrote {args.out} ({motion.num_frames} frames, every {stride} drawn)")
    return 0


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
    demo.add_argument("--scene", action="append", metavar="NAME",
                      help="run only this scene (repeatable): arm, planar, fabrik, leg, "
                      "footplant, jacobian")
    demo.add_argument("--jobs", type=int, default=None,
                      help="worker processes (default: up to 2, one per core)")
    demo.set_defaults(handler=_cmd_demo)

    fp = sub.add_parser("footplant", help="plant a clip's feet on terrain (default: built-in walk)")
    fp.add_argument("input", nargs="?", help="a BVH clip (default: the built-in walk on hills)")
    fp.add_argument("--terrain", help="flat, hills, steps, slope, or a .npy/.png height field "
                    "(default: flat for a clip, hills for the built-in walk)")
    fp.add_argument("--cell-size", type=float, default=1.0, help="terrain file sample spacing")
    fp.add_argument("--terrain-origin", type=float, nargs=2, default=(0.0, 0.0),
                    metavar=("X", "Z"), help="world (x, z) of the terrain file's first sample")
    fp.add_argument("--height-scale", type=float, default=1.0, help="PNG value to height")
    fp.add_argument("--seed", type=int, default=0, help="seed of procedural terrain")
    fp.add_argument("--floor", type=float, default=None, help="the clip's floor height "
                    "(default: estimated)")
    fp.add_argument("-o", "--output", default="footplant.bvh", help="output BVH")
    fp.add_argument("--report", help="write the metrics report as JSON here")
    fp.add_argument("--plot", help="write a picture: .png side view, or .gif/.mp4/.html "
                    "animation")
    fp.add_argument("--json", action="store_true", help="print the report as JSON")
    fp.add_argument("--no-progress", dest="progress", action="store_false",
                    help="no progress bar for long clips")
    fp.set_defaults(handler=_cmd_footplant)

    view = sub.add_parser("view", help="animate a BVH clip")
    view.add_argument("file", help="a BVH clip")
    view.add_argument("--out", help="write OUT.gif, OUT.mp4 or OUT.html instead of a window")
    view.add_argument("--fps", type=float, default=30.0, help="frames per second drawn")
    view.add_argument("--view", default="3d", choices=("3d", "side", "front", "top"))
    view.add_argument("--traces", action="store_true", help="draw the feet's paths")
    view.add_argument("--no-ground", action="store_true", help="do not draw the floor")
    view.set_defaults(handler=_cmd_view)
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
