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
    from limbik._compile_notice import announce_compilation
    from limbik.demo import run_demo

    announce_compilation()  # worker processes say it themselves (see demo.run_scenes)

    return run_demo(out=args.out, json_output=args.json, pictures=not args.no_pictures,
                    scenes=args.scene, jobs=args.jobs)


class _ProgressBar:
    """A one-line progress bar on stderr, for long work on a terminal."""

    def __init__(self, label: str, *, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled

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

    from limbik._compile_notice import announce_compilation

    announce_compilation()

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
    worth_showing = motion.num_frames >= 2000 or sys.stderr.isatty()
    bar = _ProgressBar("footplant", enabled=args.progress and worth_showing)
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

    from limbik._compile_notice import announce_compilation

    announce_compilation()

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


SOLVE_METHODS = ("two_bone", "fabrik", "ccd", "lm", "transpose", "pinv", "dls", "svd-dls")
_JACOBIAN = ("lm", "transpose", "pinv", "dls", "svd-dls")
#: problem-file keys (the long options with ``_`` for ``-``)
_SOLVE_KEYS = ("lengths", "urdf", "base", "tip", "target", "method", "root", "direction",
               "pole", "reference", "unreachable", "max_stretch", "tolerance",
               "max_iterations", "damping", "q0")
#: which options each kind of problem accepts (besides target and method)
_SOLVE_OPTIONS = {
    "two_bone": {"lengths", "root", "pole", "reference", "unreachable", "max_stretch"},
    "fabrik": {"lengths", "root", "direction", "tolerance", "max_iterations"},
    "ccd": {"lengths", "root", "direction", "tolerance", "max_iterations"},
    "ccd-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "q0"},
    "jacobian": {"lengths", "root", "direction", "tolerance", "max_iterations", "damping",
                 "q0"},
    "jacobian-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "damping", "q0"},
}


def _solve_problem(args: argparse.Namespace) -> dict[str, Any]:
    """The problem: the JSON file's keys, overridden by the options given."""
    import json

    from limbik.errors import InvalidInputError

    problem: dict[str, Any] = {}
    if args.problem is not None:
        path = Path(args.problem)
        try:
            loaded = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"problem file {path} must be JSON, got an error at line "
                                    f"{exc.lineno}: {exc.msg}", argument="problem") from None
        if not isinstance(loaded, dict):
            raise InvalidInputError(f"problem file {path} must hold a JSON object, got "
                                    f"{type(loaded).__name__}", argument="problem")
        unknown = sorted(set(loaded) - set(_SOLVE_KEYS))
        if unknown:
            raise InvalidInputError(f"problem file keys must be among {', '.join(_SOLVE_KEYS)}"
                                    f"; got {', '.join(unknown)}", argument="problem")
        problem.update(loaded)
        if isinstance(problem.get("urdf"), str):  # relative to the problem file
            problem["urdf"] = str(path.parent / problem["urdf"])
    for key in _SOLVE_KEYS:
        value = getattr(args, key)
        if value is not None:
            problem[key] = value
    return problem


def _solve(problem: dict[str, Any]) -> tuple[str, Any, Any]:
    """Solve one problem; returns (method, target, Solution)."""
    import numpy as np

    from limbik._validation import as_float, as_points, as_positive
    from limbik.errors import InvalidInputError

    if "target" not in problem:
        raise InvalidInputError("target is required: --target X Y Z, or \"target\" in the "
                                "problem file", argument="target")
    target = as_points(problem["target"], "target")
    if target.shape != (3,):
        raise InvalidInputError(f"target must have shape (3,), got {target.shape}",
                                argument="target")
    has_lengths = problem.get("lengths") is not None
    has_urdf = problem.get("urdf") is not None
    if has_lengths == has_urdf:
        raise InvalidInputError("give either --lengths L1 L2 ... or --urdf FILE (with --base "
                                "and --tip), got " + ("both" if has_lengths else "neither"),
                                argument="lengths")
    lengths = None
    if has_lengths:
        lengths = as_positive(problem["lengths"], "lengths")
        if lengths.ndim != 1 or lengths.size < 2:
            raise InvalidInputError(f"lengths must be two or more bone lengths, got "
                                    f"{lengths.size if lengths.ndim == 1 else lengths.shape}",
                                    argument="lengths")
    default = "lm" if has_urdf else ("two_bone" if lengths is not None and lengths.size == 2
                                      else "fabrik")
    method = problem.get("method") or default
    if method not in SOLVE_METHODS:
        raise InvalidInputError(f"method must be one of {', '.join(SOLVE_METHODS)}, got "
                                f"{method!r}", argument="method")
    if method == "two_bone" and (lengths is None or lengths.size != 2):
        raise InvalidInputError("method two_bone needs exactly two --lengths, got "
                                + ("a URDF" if lengths is None else f"{lengths.size}"),
                                argument="method")
    if method == "fabrik" and has_urdf:
        raise InvalidInputError("method fabrik needs --lengths (a point chain), got a URDF; "
                                "use ccd or a Jacobian method", argument="method")
    kind = ("jacobian" if method in _JACOBIAN else method) + ("-urdf" if has_urdf else "")
    given = {k for k, v in problem.items() if v is not None} - {"target", "method"}
    extra = sorted(given - _SOLVE_OPTIONS[kind])
    if extra:
        raise InvalidInputError(f"option {', '.join(extra)} does not apply to method {method}"
                                f"{' with a URDF' if has_urdf else ''}; it takes "
                                f"{', '.join(sorted(_SOLVE_OPTIONS[kind]))}", argument=extra[0])
    if has_urdf:
        for key in ("base", "tip"):
            if problem.get(key) is None:
                raise InvalidInputError(f"--urdf needs --{key} LINK", argument=key)
    options: dict[str, Any] = {}
    for key in ("tolerance", "max_iterations", "damping", "q0"):
        if key in given:
            options[key] = problem[key]
    root = as_points(problem.get("root", (0.0, 0.0, 0.0)), "root")
    if method == "two_bone":
        assert lengths is not None
        from limbik.solvers.two_bone import two_bone

        hints: dict[str, Any] = {k: as_points(problem[k], k) for k in ("pole", "reference")
                                 if k in given}
        return method, target, two_bone(
            root, target, float(lengths[0]), float(lengths[1]), **hints,
            unreachable=problem.get("unreachable", "extend"),
            max_stretch=as_float(problem.get("max_stretch", 1.0), "max_stretch", minimum=1.0))
    if has_urdf:
        from limbik.chain.urdf import load_urdf

        chain: Any = load_urdf(problem["urdf"], str(problem["base"]), str(problem["tip"]))
    else:
        assert lengths is not None
        from limbik.geometry.vectors import normalize

        direction = as_points(problem.get("direction", (1.0, 0.0, 0.0)), "direction")
        if direction.shape != (3,) or not np.any(direction):
            raise InvalidInputError(f"direction must be a non-zero vector (3,), got "
                                    f"{problem.get('direction')}", argument="direction")
        steps = np.concatenate([[0.0], np.cumsum(lengths)])
        chain = root + steps[:, None] * normalize(direction)
    if method == "fabrik":
        from limbik.solvers.fabrik import fabrik

        return method, target, fabrik(chain, target, **options)
    if method in _JACOBIAN:
        from limbik.chain.joint_chain import JointChain
        from limbik.solvers.jacobian import jacobian_ik

        if not has_urdf:
            chain = JointChain.from_points(chain)
        if "q0" in options:
            options["q0"] = np.asarray(options["q0"], dtype=np.float64)
        return method, target, jacobian_ik(chain, target, method=method, **options)
    from limbik.solvers.ccd import ccd

    if "q0" in options:
        options["q0"] = np.asarray(options["q0"], dtype=np.float64)
    return method, target, ccd(chain, target, **options)


def _fmt(values: Any) -> str:
    import numpy as np

    return "(" + ", ".join(f"{v:.6g}" for v in np.asarray(values).reshape(-1)) + ")"


def _cmd_solve(args: argparse.Namespace) -> int:
    import json

    from limbik._compile_notice import announce_compilation

    announce_compilation()

    method, target, solution = _solve(_solve_problem(args))
    if args.json:
        print(json.dumps({"method": method, "target": target.tolist(), **solution.to_dict()},
                         indent=2))
        return 0
    n = solution.positions.shape[-2]
    print(f"{method}: {'reached' if bool(solution.reached) else 'NOT reached'}, "
          f"error {float(solution.error):.3g}, {int(solution.iterations)} iterations")
    print(f"target      {_fmt(target)}")
    print(f"end effector {_fmt(solution.end_effector)}")
    print(f"positions ({n} joints, root first):")
    for k, p in enumerate(solution.positions):
        print(f"  {k:3d}  {_fmt(p)}")
    if solution.q is not None:
        print(f"q ({solution.q.size} joint values): {_fmt(solution.q)}")
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

    solve = sub.add_parser(
        "solve", help="solve one IK problem given as options or a JSON file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Solve one problem and print the Solution (--json: as JSON).",
        epilog="""\
The chain is either bone lengths (--lengths, root first) or a URDF (--urdf FILE
--base LINK --tip LINK). Two lengths default to the analytic two_bone solver; more
lengths make a straight point chain from --root along --direction (default +X),
solved by FABRIK by default; a URDF defaults to lm (Levenberg-Marquardt).
Methods: two_bone, fabrik, ccd, lm, transpose, pinv, dls, svd-dls (Jacobian
methods and ccd on lengths use ball joints through the straight chain's points).

Options by method:
  two_bone          --root --pole | --reference --unreachable --max-stretch
  fabrik            --root --direction --tolerance --max-iterations
  ccd               --root --direction (or --urdf ... --q0) --tolerance --max-iterations
  Jacobian methods  as ccd, plus --damping

A problem file is a JSON object with the same names, '_' for '-', e.g.
  {"lengths": [0.3, 0.25], "target": [0.2, 0.3, 0.1], "pole": [0, 0, 1],
   "unreachable": "stretch", "max_stretch": 1.2}
  {"urdf": "panda.urdf", "base": "panda_link0", "tip": "panda_hand",
   "target": [0.4, 0.1, 0.5], "method": "svd-dls"}
(a relative "urdf" path is relative to the file). Options given on the command
line override the file's values.

Examples:
  limbik solve --lengths 0.3 0.25 --target 0.2 0.3 0.1 --pole 0 0 1
  limbik solve --lengths 0.2 0.2 0.2 0.2 --target 0.3 0.4 0 --method ccd --json
  limbik solve problem.json""")
    solve.add_argument("problem", nargs="?", help="a JSON problem file (optional)")
    solve.add_argument("--lengths", type=float, nargs="+", metavar="L",
                       help="bone lengths, root first (two or more)")
    solve.add_argument("--urdf", help="a URDF file (instead of --lengths)")
    solve.add_argument("--base", help="the URDF chain's base link")
    solve.add_argument("--tip", help="the URDF chain's tip link")
    solve.add_argument("--target", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="where the end effector should go")
    solve.add_argument("--method", help="two_bone, fabrik, ccd, lm, transpose, pinv, dls, svd-dls "
                       "(default: two_bone for 2 lengths, fabrik for more, lm for a URDF)")
    solve.add_argument("--root", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="root position of a --lengths chain (default origin)")
    solve.add_argument("--direction", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="direction of the straight starting chain (default 1 0 0)")
    solve.add_argument("--pole", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="two_bone: the mid joint bends toward this point")
    solve.add_argument("--reference", type=float, nargs=3, metavar=("X", "Y", "Z"),
                       help="two_bone: the animated mid joint to stay close to")
    solve.add_argument("--unreachable", choices=("extend", "push_root", "stretch"),
                       help="two_bone: policy for targets out of reach (default extend)")
    solve.add_argument("--max-stretch", type=float, help="two_bone: largest bone scale for "
                       "--unreachable stretch (default 1)")
    solve.add_argument("--tolerance", type=float, help="reach distance (default 1e-6 of the "
                       "chain length)")
    solve.add_argument("--max-iterations", type=int, help="iteration cap")
    solve.add_argument("--damping", type=float, help="Jacobian methods: damping relative to "
                       "the reach")
    solve.add_argument("--q0", type=float, nargs="+", metavar="Q",
                       help="ccd/Jacobian: starting joint values")
    solve.add_argument("--json", action="store_true", help="print the Solution as JSON")
    solve.set_defaults(handler=_cmd_solve)
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
