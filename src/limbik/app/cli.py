"""The ``limbik`` command. ``main(argv)`` returns the exit code, so tests call it in-process."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from limbik.errors import LimbikError

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


class UsageError(Exception):
    """A command-line usage error: one line, a hint to ``--help``, exit code 2."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.prog = prog


#: A negative number, also in exponent form (``-1e-3``), which argparse takes for an
#: option unless it is told otherwise (its own pattern has no exponent).
_NEGATIVE_NUMBER = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (see :class:`UsageError`), and which
    reads ``-1e-3`` as a number."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> Any:  # argparse calls this for every usage error
        raise UsageError(message, self.prog)


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text}")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a whole number >= 1, got 0")
    return value


def _finite_float(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
    if abs(value) > 1e100:  # as every number limbik reads or writes (MAX_MAGNITUDE)
        raise argparse.ArgumentTypeError(f"expected a number within ±1e100, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def _output_path(path: Any, option: str) -> Path:
    """``path`` as a Path whose folder exists; raises naming the option and the user's path."""
    from limbik.errors import InvalidInputError

    out = Path(path)
    folder = out.parent
    if not folder.is_dir():
        raise InvalidInputError(f"{option} {path}: the folder {folder} does not exist",
                                argument=option.lstrip("-"))
    if out.is_dir():
        raise InvalidInputError(f"{option} {path} is a folder; give a file name",
                                argument=option.lstrip("-"))
    import os

    if not os.access(folder, os.W_OK):
        raise InvalidInputError(f"{option} {path}: the folder {folder} is not writable",
                                argument=option.lstrip("-"))
    return out


_ANIMATION_SUFFIXES = (".gif", ".mp4", ".html", ".htm")
#: Still pictures matplotlib writes.
_PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".pdf")


def _animation_path(path: Any, option: str) -> Path:
    """An output path for an animation: a known suffix, ffmpeg present for ``.mp4``."""
    from limbik.errors import InvalidInputError

    out = _output_path(path, option)
    suffix = out.suffix.lower()
    if suffix not in _ANIMATION_SUFFIXES:
        raise InvalidInputError(f"{option} must end in .gif, .mp4 or .html, got {path}",
                                argument=option.lstrip("-"))
    if suffix == ".mp4":
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise InvalidInputError(f"{option} must end in .gif or .html on this machine "
                                    f"(ffmpeg, needed for .mp4, was not found), got {path}",
                                    argument=option.lstrip("-"))
    return out


def _cmd_demo(args: argparse.Namespace) -> int:
    from limbik.app.compile_notice import announce_compilation
    from limbik.app.demo import run_demo

    announce_compilation()

    return run_demo(out=args.out, json_output=args.json, pictures=not args.no_pictures,
                    scenes=args.scene, jobs=args.jobs)


def _cmd_compile(args: argparse.Namespace) -> int:
    import time

    from limbik.app.warmup import available_cores, compile_kernels, worker_groups

    names = args.family or None
    jobs = args.jobs if args.jobs is not None else available_cores()
    start = time.perf_counter()
    seconds = compile_kernels(names, jobs=jobs)
    elapsed = time.perf_counter() - start
    for name, took in seconds.items():
        print(f"{name:<14} {took:6.1f} s")
    processes = 1 if jobs == 1 else min(jobs, len(worker_groups(list(seconds))))
    where = "in this process" if jobs == 1 else f"on {processes} processes"
    count = f"{len(seconds)} famil{'y' if len(seconds) == 1 else 'ies'}"
    print(f"{count} compiled (or loaded from the cache) in {elapsed:.1f} s "
          f"{where}; their first calls now load the kernels from the cache")
    return 0


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


def _footplant_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Terrain keywords and every :func:`limbik.footplant` option the command line gave."""
    import inspect

    from limbik.placement.footplant import footplant

    not_options = {"motion", "terrain", "legs", "progress"}
    if args.terrain == "":
        from limbik.errors import InvalidInputError

        raise InvalidInputError("--terrain must name a terrain or a file, got an empty string",
                                argument="terrain")
    spec = str(args.terrain or ("hills" if args.input is None else "flat"))
    suffix = Path(spec).suffix.lower()
    for flag, value, applies, where in (
            ("cell-size", args.cell_size, suffix in (".npy", ".png"), "a .npy/.png --terrain"),
            ("terrain-origin", args.terrain_origin, suffix in (".npy", ".png"),
             "a .npy/.png --terrain"),
            ("height-scale", args.height_scale, suffix == ".png", "a .png --terrain"),
            ("seed", args.seed, spec == "hills", "--terrain hills")):
        if value is not None and not applies:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(f"--{flag} applies to {where}, got --terrain {spec}",
                                    argument=flag.replace("-", "_"))
    return {
        "terrain_options": {"seed": 0 if args.seed is None else args.seed,
                            "cell_size": 1.0 if args.cell_size is None else args.cell_size,
                            "origin": tuple(args.terrain_origin or (0.0, 0.0)),
                            "height_scale": 1.0 if args.height_scale is None
                            else args.height_scale},
        "footplant_options": {name: getattr(args, name)
                              for name in inspect.signature(footplant).parameters
                              if name not in not_options and hasattr(args, name)},
    }


def _is_library(args: argparse.Namespace) -> bool:
    """A folder, glob or list of clips, or a folder as the output (an existing one, or a
    path ending in a separator)."""
    import os

    if args.input is None:
        return False
    if isinstance(args.input, list):
        return True
    source = Path(args.input)
    if source.is_dir() or (args.output is not None and (
            Path(args.output).is_dir() or str(args.output).endswith(("/", os.sep)))):
        return True  # "-o planted/" is a folder, made if need be
    return not source.exists() and any(c in args.input for c in "*?[")


def _cmd_footplant(args: argparse.Namespace) -> int:
    import json

    from limbik.app.compile_notice import announce_compilation

    # several paths (a glob the shell expanded) are a library; one stays a path
    args.input = (args.input if len(args.input) > 1 else args.input[0] if args.input
                  else None)
    for flag in ("output", "report", "plot"):
        if getattr(args, flag) == "":
            from limbik.errors import InvalidInputError

            raise InvalidInputError(f"{'-o' if flag == 'output' else '--' + flag} must name a "
                                    "file or folder, got an empty path", argument=flag)
    given = args.input if isinstance(args.input, list) else [args.input]
    if any(path is not None and not str(path).strip() for path in given):
        from limbik.errors import InvalidInputError

        # an empty path is the current folder to the file system: not what was meant
        raise InvalidInputError("input must name a clip, a folder or a glob, got an empty "
                                "path", argument="input")
    announce_compilation()

    from limbik._runtime.atomic import atomic_write
    from limbik.app.batch import plant_clip
    from limbik.io.files import read_motion, write_motion

    if _is_library(args):
        return _cmd_footplant_library(args)
    for flag in ("jobs", "scheduler"):
        if getattr(args, flag) is not None:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(f"--{flag} is for a folder or glob of clips (with -o "
                                    f"OUTDIR), got one clip: {args.input or 'the built-in walk'}",
                                    argument=flag)
    output = _footplant_output(args)
    if args.report:
        _output_path(args.report, "--report")
    if args.plot:
        plot_suffix = Path(args.plot).suffix.lower()
        if plot_suffix not in _ANIMATION_SUFFIXES + _PICTURE_SUFFIXES:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(
                f"--plot must end in {', '.join(_PICTURE_SUFFIXES)} (a side view) or .gif, "
                f".mp4, .html (an animation), got {args.plot}", argument="plot")
        (_animation_path if plot_suffix in _ANIMATION_SUFFIXES else _output_path)(args.plot,
                                                                                  "--plot")
    _check_footplant_outputs(args, output)
    if args.input is None:
        from limbik.placement.walk import walk_cycle

        motion = walk_cycle()
        source_name = "built-in walk"
        terrain_spec = args.terrain or "hills"
    else:
        motion = read_motion(args.input, **_file_frame(args))
        source_name = str(args.input)
        terrain_spec = args.terrain or "flat"
    worth_showing = motion.num_frames >= 2000 or sys.stderr.isatty()
    bar = _ProgressBar("footplant", enabled=args.progress and worth_showing)
    settings = _footplant_settings(args)
    done = plant_clip(motion, terrain=terrain_spec, terrain_options=settings["terrain_options"],
                      progress=bar, up=args.up, unit=args.unit,
                      **settings["footplant_options"])
    result, report, terrain, legs = done.planted, done.report, done.terrain, done.legs
    write_motion(result, output, source=args.input, **_file_frame(args))
    written = [str(output)]
    if args.report:
        with atomic_write(args.report) as handle:
            json.dump(report.to_dict(), handle, indent=2)
        written.append(str(args.report))
    if args.plot:
        _footplant_picture(Path(args.plot), motion, result, terrain, legs, report,
                           _length_units(args, args.input))
        written.append(str(args.plot))
    if args.json:
        print(json.dumps({"input": source_name, "terrain": terrain.name, "outputs": written,
                          **report.to_dict()}, indent=2))
    else:
        print(f"footplant: {source_name}, {motion.num_frames} frames, terrain {terrain.name}, "
              f"floor {report.floor:.4g}, lifted by {report.lift:.4g} onto the terrain")
        print(report.summary())
        print("wrote " + ", ".join(written))
    return 0


def _file_frame(args: argparse.Namespace) -> dict[str, Any]:
    """The input file's frame and glTF selection, as read_motion's keywords."""
    def name_or_index(value: str | None) -> str | int | None:
        return int(value) if value is not None and value.isdigit() else value

    return {"up": args.up, "unit": args.unit, "skin": name_or_index(args.skin),
            "animation": name_or_index(args.animation)}


def _cmd_footplant_library(args: argparse.Namespace) -> int:
    """``limbik footplant DIR_OR_GLOB -o OUTDIR``: every clip, on all cores or a cluster."""
    import json

    from limbik.app.batch import SUMMARY_FILES, footplant_library
    from limbik.errors import InvalidInputError

    if args.output is None:
        given = (f"{len(args.input)} clips" if isinstance(args.input, list)
                 else repr(args.input))
        raise InvalidInputError(f"output must be given for a folder, glob or list of clips: "
                                f"-o OUTDIR (input {given})", argument="output")
    for flag in ("report", "plot"):
        if getattr(args, flag):
            raise InvalidInputError(f"--{flag} is for one clip; a folder of clips gets "
                                    f"{', '.join(SUMMARY_FILES)} in {args.output}",
                                    argument=flag)
    bar = _ProgressBar("footplant", enabled=args.progress and sys.stderr.isatty())
    summary = footplant_library(args.input, args.output, terrain=args.terrain or "flat",
                                **_file_frame(args),
                                jobs=args.jobs, scheduler=args.scheduler, force=args.force,
                                progress=lambda done, total, _: bar(done, total,
                                                                    f"{done}/{total} clips"),
                                **_footplant_settings(args))
    failed = summary.failed
    if args.json:
        print(json.dumps({"output": str(summary.output), "ran": summary.ran,
                          "failed": len(failed), "engine": summary.engine,
                          "clips": summary.records}, indent=2))
        return 1 if failed else 0
    total = len(summary.records)
    if summary.ran == 0:
        print(f"footplant: nothing to do, all {total} clips in {summary.output} are up to date "
              "(--force redoes them)")
    else:
        rate = summary.ran / summary.seconds if summary.seconds > 0 else 0.0
        print(f"footplant: planted {summary.ran - len(failed)} of {total} clips in "
              f"{summary.seconds:.1f} s ({summary.ran} run, {rate:.2f} clips/s, "
              f"{summary.engine}); {total - summary.ran} up to date")
    for record in failed:
        print(f"  failed: {record['clip']}: {record['error']}")
    print(f"{len(failed)} failed; wrote {summary.output / SUMMARY_FILES[0]} and "
          f"{', '.join(SUMMARY_FILES[1:])} beside it")
    return 1 if failed else 0


def _check_footplant_outputs(args: argparse.Namespace, output: Path) -> None:
    """Before any work: the clip's output has a format it can be written in, and no two of
    ``-o``, ``--report``, ``--plot`` and the input are one file (``-o`` may replace the
    input)."""
    import os

    from limbik.errors import InvalidInputError
    from limbik.io.files import MOTION_FORMATS

    suffix = output.suffix.lower()
    source = Path(args.input).suffix.lower() if args.input else ".bvh"
    if suffix not in MOTION_FORMATS:
        *others, last = MOTION_FORMATS
        raise InvalidInputError(f"-o must end in {', '.join(others)} or {last}, got {output}",
                                argument="output")
    if MOTION_FORMATS[suffix] == "gltf" and suffix != source:
        raise InvalidInputError(
            f"-o {output}: a {suffix} clip is written into a copy of the {suffix} file the "
            f"clip came from, got {args.input or 'the built-in walk'} (write .bvh instead)",
            argument="output")
    files = {os.path.realpath(args.input): "the input clip"} if args.input else {}
    for flag, path in (("-o", output), ("--report", args.report), ("--plot", args.plot)):
        if not path:
            continue
        key = os.path.realpath(path)
        if key in files and not (flag == "-o" and files[key] == "the input clip"):
            raise InvalidInputError(f"{flag} {path} is also {files[key]}; give another file",
                                    argument=flag.lstrip("-") if flag != "-o" else "output")
        files[key] = f"{flag}'s file" if flag != "-o" else "-o's file"


def _footplant_output(args: argparse.Namespace) -> Path:
    """Where ``limbik footplant`` writes one clip: ``-o``, else a name in the current folder
    (``IN_footplant`` with the input's format, ``footplant.bvh`` for the built-in walk)
    that is never overwritten without ``--force``."""
    from limbik.errors import InvalidInputError

    if args.output is not None:
        return _output_path(args.output, "-o")
    suffix = Path(args.input).suffix.lower() if args.input else ".bvh"
    suffix = suffix if suffix in (".glb", ".gltf") else ".bvh"
    out = Path("footplant.bvh" if args.input is None
               else f"{Path(args.input).stem}_footplant{suffix}")
    if out.exists() and not args.force:
        raise InvalidInputError(f"{out} exists; pass -o PATH to choose the output, or --force "
                                "to overwrite it", argument="output")
    print(f"footplant: no -o given, writing {out}", file=sys.stderr)
    return out


def _length_units(args: argparse.Namespace, file: Any) -> str:
    """The axis unit of a clip's pictures: metres for glTF (the format's unit), with
    ``--unit`` (converted to metres) and for the built-in walk; else the file's own."""
    gltf = file is not None and str(file).lower().endswith((".gltf", ".glb"))
    metres = getattr(args, "unit", None) is not None or gltf or file is None
    return "m" if metres else "BVH units"


def _footplant_picture(path: Path, motion: Any, result: Any, terrain: Any, legs: Any,
                       report: Any, units: str) -> None:
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.footplant_plot import plot_footplant
    from limbik.viz.plots import animate_motion, save_figure

    if path.suffix.lower() in _ANIMATION_SUFFIXES:
        toes = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
        stride = max(1, round(1 / (30 * result.frame_time)))
        animate_motion(result, out=path, terrain=terrain, traces=toes, compare=motion,
                       stride=stride, view="profile", label="planted",
                       compare_label="source, on its own flat floor", units=units,
                       sides=joint_sides(result.skeleton))
    else:
        save_figure(plot_footplant(motion, result, terrain, legs, report.contacts,
                                   floor=report.floor, units=units), path)


def _cmd_view(args: argparse.Namespace) -> int:
    import os

    from limbik.app.compile_notice import announce_compilation

    announce_compilation()

    from limbik.io.files import read_motion
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.plots import animate_motion

    if args.out is not None:
        _animation_path(args.out, "--out")
    motion = read_motion(args.file, **_file_frame(args))
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
    units = _length_units(args, args.file)
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


def _cmd_blender_addon(args: argparse.Namespace) -> int:
    from limbik.app.blender import build_addon

    print(f"wrote {build_addon(args.output)} (install it from Blender's Preferences > "
          "Add-ons > Install...; limbik must be importable in Blender's Python)")
    return 0


SOLVE_METHODS = ("two_bone", "fabrik", "ccd", "lm", "transpose", "pinv", "dls", "svd-dls")
_JACOBIAN = ("lm", "transpose", "pinv", "dls", "svd-dls")
#: problem-file keys (the long options with ``_`` for ``-``)
_SOLVE_KEYS = ("lengths", "urdf", "base", "tip", "target", "method", "root", "direction",
               "pole", "reference", "unreachable", "max_stretch", "tolerance",
               "max_iterations", "damping", "q0", "orientation", "restarts", "close_gap")
#: which options each kind of problem accepts (besides target and method)
_SOLVE_OPTIONS = {
    "two_bone": {"lengths", "root", "pole", "reference", "unreachable", "max_stretch"},
    "fabrik": {"lengths", "root", "direction", "tolerance", "max_iterations", "close_gap"},
    "ccd": {"lengths", "root", "direction", "tolerance", "max_iterations"},
    "ccd-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "q0", "orientation",
                 "restarts"},
    "jacobian": {"lengths", "root", "direction", "tolerance", "max_iterations", "damping",
                 "q0", "orientation", "restarts"},
    "jacobian-urdf": {"urdf", "base", "tip", "tolerance", "max_iterations", "damping", "q0",
                      "orientation", "restarts"},
}


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (JSON keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} twice in one object")
        out[key] = value
    return out


def _solve_problem(args: argparse.Namespace) -> dict[str, Any]:
    """The problem: the JSON file's keys, overridden by the options given."""
    import json

    from limbik.errors import InvalidInputError

    problem: dict[str, Any] = {}
    if args.problem is not None:
        from limbik._runtime.reading import read_bytes

        path, raw = read_bytes(args.problem, "problem file")
        try:
            loaded = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_unique_keys)
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"problem file {path} must be UTF-8 text, got byte "
                                    f"{exc.object[exc.start]:#04x} at offset {exc.start}",
                                    argument="problem") from None
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"problem file {path} must be JSON, got an error at line "
                                    f"{exc.lineno}: {exc.msg}", argument="problem") from None
        except (RecursionError, ValueError) as exc:
            what = ("values nested too deeply" if isinstance(exc, RecursionError)
                    else str(exc))
            raise InvalidInputError(f"problem file {path} must be plain JSON, got {what}",
                                    argument="problem") from None
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


def _solve(problem: dict[str, Any]) -> tuple[str, Any, Any, tuple[str, ...]]:
    """Solve one problem; returns (method, target, Solution, names of the q values)."""
    import numpy as np

    from limbik._runtime.validation import as_float, as_points, as_positive
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
                from limbik.chain.urdf import read_urdf_tree

                try:
                    tree = read_urdf_tree(problem["urdf"])
                except LimbikError as exc:
                    raise InvalidInputError(f"--urdf needs --{key} LINK (and the links could "
                                            f"not be listed: {exc})", argument=key) from None
                raise InvalidInputError(
                    f"--urdf needs --{key} LINK, one of the links of {problem['urdf']}: "
                    f"{', '.join(tree.links)} (bases: {', '.join(tree.roots)}; tips: "
                    f"{', '.join(tree.tips)}; 'limbik urdf FILE' lists the joints)",
                    argument=key)
    options: dict[str, Any] = {}
    for key in ("tolerance", "max_iterations", "damping", "q0", "restarts", "close_gap"):
        if key in given:
            options[key] = problem[key]
    goal: Any = target
    if "orientation" in given:
        from limbik.geometry.frame import Frame

        try:
            quat = np.asarray(problem["orientation"], dtype=np.float64)
        except (TypeError, ValueError):
            quat = np.zeros(0)
        if quat.shape != (4,) or not np.all(np.isfinite(quat)) or not np.any(quat):
            raise InvalidInputError(f"orientation must be a quaternion X Y Z W (scalar last, "
                                    f"non-zero), got {problem['orientation']}",
                                    argument="orientation")
        goal = Frame.from_quaternion(quat / np.linalg.norm(quat), target)
    root = as_points(problem.get("root", (0.0, 0.0, 0.0)), "root")
    if method == "two_bone":
        assert lengths is not None
        from limbik.solvers.two_bone.solver import two_bone

        hints: dict[str, Any] = {k: as_points(problem[k], k) for k in ("pole", "reference")
                                 if k in given}
        return method, target, two_bone(
            root, target, float(lengths[0]), float(lengths[1]), **hints,
            unreachable=problem.get("unreachable", "extend"),
            max_stretch=(as_float(problem["max_stretch"], "max_stretch", minimum=1.0)
                         if "max_stretch" in problem else None)), ()
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
        from limbik.solvers.fabrik.chain import fabrik

        return method, target, fabrik(chain, target, **options), ()
    if method in _JACOBIAN:
        from limbik.chain.joint_chain import JointChain
        from limbik.solvers.joint.jacobian import jacobian_ik

        if not has_urdf:
            from limbik.chain.joint_chain import MAX_MAGNITUDE

            if np.max(np.abs(chain)) > MAX_MAGNITUDE:
                raise InvalidInputError(
                    f"lengths and root must keep the chain within ±{MAX_MAGNITUDE:g} for "
                    f"method {method} (a JointChain through its points), got "
                    f"{np.max(np.abs(chain)):g}", argument="lengths")
            chain = JointChain.from_points(chain)
        _one_q0(options, chain.dof)
        return (method, target, jacobian_ik(chain, goal, method=method, **options),
                chain.joint_names)
    from limbik.solvers.ccd import ccd

    if has_urdf:  # (q0 is refused for a point chain above)
        _one_q0(options, chain.dof)
    names = chain.joint_names if has_urdf else ()
    return method, target, ccd(chain, goal, **options), names


def _one_q0(options: dict[str, Any], dof: int) -> None:
    """``options["q0"]``, where given, checked as one set of ``dof`` joint values."""
    if "q0" not in options:
        return
    from limbik._runtime.validation import as_float_array
    from limbik.errors import InvalidInputError

    q0 = as_float_array(options["q0"], "q0")
    if q0.shape != (dof,):
        raise InvalidInputError(f"q0 must be one set of {dof} joint values, shape ({dof},), "
                                f"got shape {q0.shape}", argument="q0")
    options["q0"] = q0


def _fmt(values: Any) -> str:
    import numpy as np

    return "(" + ", ".join(f"{v:.6g}" for v in np.asarray(values).reshape(-1)) + ")"


def _cmd_solve(args: argparse.Namespace) -> int:
    import json

    from limbik.app.compile_notice import announce_compilation

    announce_compilation()

    problem = _solve_problem(args)
    method, target, solution, names = _solve(problem)
    orientation = problem.get("orientation")
    if args.json:
        extra = {"orientation": list(orientation)} if orientation is not None else {}
        named = {"joint_names": list(names)} if names else {}
        print(json.dumps({"method": method, "target": target.tolist(), **extra,
                          **solution.to_dict(), **named}, indent=2))
        return 0
    n = solution.positions.shape[-2]
    what = "pose error" if orientation is not None else "error"
    steps = int(solution.iterations)
    per_attempt = solution.q is not None and method != "fabrik"
    print(f"{method}: {'reached' if bool(solution.reached) else 'NOT reached'}, "
          f"{what} {float(solution.error):.3g}, {steps} iterations"
          + (" in all attempts (--max-iterations caps each attempt)" if per_attempt else ""))
    print(f"target      {_fmt(target)}")
    if orientation is not None:
        print(f"orientation {_fmt(orientation)} (x, y, z, w)")
    print(f"end effector {_fmt(solution.end_effector)}")
    if solution.root_offset is not None:
        print(f"root moved  {_fmt(solution.root_offset)} (--unreachable push_root)")
    print(f"positions ({n} joints, root first):")
    for k, p in enumerate(solution.positions):
        print(f"  {k:3d}  {_fmt(p)}")
    if solution.q is not None:
        print(f"q ({solution.q.size} joint values, radians or length units):")
        labels = names if len(names) == solution.q.size else [f"q{k}" for k in
                                                              range(solution.q.size)]
        width = max(len(label) for label in labels)
        for label, value in zip(labels, solution.q.reshape(-1), strict=True):
            print(f"  {label:<{width}}  {float(value):.6g}")
    return 0


def _cmd_urdf(args: argparse.Namespace) -> int:
    from limbik.chain.urdf import read_urdf_tree

    tree = read_urdf_tree(args.file)
    print(f"{args.file}: {len(tree.links)} links, {len(tree.joints)} joints")
    print(f"bases (--base): {', '.join(tree.roots)}")
    print(f"tips (--tip):   {', '.join(tree.tips)}")
    print("links: " + ", ".join(tree.links))
    print("joints (name, type, parent -> child):")
    width = max((len(j[0]) for j in tree.joints), default=0)
    type_width = max((len(j[1]) for j in tree.joints), default=0)
    for name, kind, parent, child in tree.joints:
        print(f"  {name:<{width}}  {kind:<{type_width}}  {parent} -> {child}")
    return 0


def _add_file_frame_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--up", choices=("y", "z"), default="y",
                        help="the file's up axis (default y; Blender and Unreal files: z)")
    parser.add_argument("--unit", help="the file's length unit, converted to metres: m, cm, "
                        "mm, in, ft, ... or a factor (default: keep the file's units; "
                        "--floor and terrain files are in the file's units)")
    parser.add_argument("--skin", help="glTF: the skin to use (name or index)")
    parser.add_argument("--animation", help="glTF: the animation to use (name or index)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from limbik import __version__
    from limbik.app.demo import SCENE_NAMES
    from limbik.tolerances import JACOBIAN_RESTARTS, LM_RESTARTS

    parser = _Parser(
        prog="limbik", description="Inverse kinematics for limbs, chains and skeletons.")
    parser.add_argument("--version", action="version", version=f"limbik {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="solve the built-in scenes, print a table, draw a gallery")
    demo.add_argument("--out", default="limbik-demo", help="folder for the pictures")
    demo.add_argument("--json", action="store_true", help="print the table as JSON")
    demo.add_argument("--no-pictures", action="store_true", help="only solve and print")
    demo.add_argument("--scene", action="append", metavar="NAME",
                      help="run only this scene (repeatable): " + ", ".join(SCENE_NAMES))
    demo.add_argument("--jobs", type=_positive_int, default=None,
                      help="worker processes (default: up to 2, one per core)")
    demo.set_defaults(handler=_cmd_demo)

    fp = sub.add_parser(
        "footplant", help="plant a clip's feet on terrain (default: built-in walk)",
        description="Plant a clip's feet on terrain: contacts found and locked (heel and "
        "toe), stance float and floor penetration removed, soles following the ground, "
        "knees bending about their own hinge. The terrain is in world coordinates: "
        "'flat' is the plane y = 0, the procedural kinds lie around y = 0, and a .npy/.png "
        "height field is placed with --cell-size and --terrain-origin. The clip's own floor "
        "(estimated, or --floor) is carried onto the terrain, so a clip whose feet rest at "
        "y = -1.3 is lifted by 1.3; the report prints that lift.")
    fp.add_argument("input", nargs="*", help="a BVH clip or glTF/GLB character (default: the "
                    "built-in walk on hills), or a folder, glob or several clips (then -o "
                    "is a folder that mirrors them)")
    fp.add_argument("--terrain", help="flat, hills, steps, slope, or a .npy/.png height field "
                    "(default: flat for a clip, hills for the built-in walk)")
    fp.add_argument("--cell-size", type=_positive_float, default=None,
                    help="terrain file sample spacing (default 1)")
    fp.add_argument("--terrain-origin", type=_finite_float, nargs=2, default=None,
                    metavar=("X", "Z"), help="world (x, z) of the terrain file's first sample "
                    "(default 0 0)")
    fp.add_argument("--height-scale", type=_finite_float, default=None,
                    help="PNG value to height (default 1)")
    fp.add_argument("--seed", type=_non_negative_int, default=None,
                    help="seed of the hills terrain (a whole number >= 0, default 0)")
    fp.add_argument("--floor", type=_finite_float, default=None, help="the clip's own floor "
                    "height, which is moved onto the terrain (default: estimated from the lowest "
                    "foot points)")
    fp.add_argument("-o", "--output", default=None,
                    help="output BVH, or GLB/glTF for a glTF input (a copy of it with the planted "
                    "animation); a file named here is replaced, even the input clip itself. "
                    "Without -o: IN_footplant.bvh/.glb, or footplant.bvh for the built-in walk, "
                    "in the current folder, which is never overwritten without --force. For a "
                    "folder or glob of clips, the output folder")
    _add_file_frame_options(fp)
    fp.add_argument("--report", help="write the metrics report as JSON here")
    fp.add_argument("--plot", help="write a picture: .png (.jpg, .svg, .pdf) side view, or "
                    ".gif/.mp4/.html animation")
    fp.add_argument("--json", action="store_true", help="print the report as JSON")
    fp.add_argument("--no-progress", dest="progress", action="store_false",
                    help="no progress bar for long clips")
    fp.add_argument("--jobs", type=_positive_int, default=None, help="a folder of clips: worker "
                    "processes (default: one per core; 1 runs in this process)")
    fp.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a folder of clips: run "
                    "each clip as a task on this Dask scheduler (pip install \"limbik[dask]\")")
    fp.add_argument("--force", action="store_true", help="overwrite the default output file; "
                    "for a folder of clips, redo clips whose output is up to date")
    fp.set_defaults(handler=_cmd_footplant)

    view = sub.add_parser("view", help="animate a BVH clip")
    view.add_argument("file", help="a BVH clip or a glTF/GLB character")
    _add_file_frame_options(view)
    view.add_argument("--out", help="write OUT.gif, OUT.mp4 or OUT.html instead of a window")
    view.add_argument("--fps", type=_positive_float, default=30.0,
                      help="frames per second drawn (> 0)")
    view.add_argument("--view", default="3d", choices=("3d", "side", "front", "top", "profile"),
                      help="3d (default); side (x right, y up), front (z right, y up) or top; "
                      "profile: from the side of the walk, distance along it to the right")
    view.add_argument("--traces", action="store_true", help="draw the feet's paths")
    view.add_argument("--no-ground", action="store_true", help="do not draw the floor")
    view.set_defaults(handler=_cmd_view)

    addon = sub.add_parser("blender-addon", help="write the Blender add-on zip")
    addon.add_argument("-o", "--output", default="limbik_addon.zip", help="the zip to write")
    addon.set_defaults(handler=_cmd_blender_addon)

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
  ccd               --root --direction (or --urdf ... --q0 --orientation --restarts)
                    --tolerance --max-iterations
  Jacobian methods  as ccd, plus --damping; --orientation and --restarts also on lengths

--max-iterations caps each attempt of ccd and the Jacobian methods on joints; a result
reports the iterations of all attempts (--restarts 0: one attempt, the cap is a total;
lm adds one last run from its best point when no attempt reached the target).
'limbik urdf FILE' lists a URDF's links and joints.

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
                       "--unreachable stretch (default 1.25)")
    solve.add_argument("--tolerance", type=float, help="reach distance (default 1e-6 of the "
                       "chain length)")
    solve.add_argument("--max-iterations", type=_non_negative_int,
                       help="iteration cap; for ccd and the Jacobian methods on joints, per "
                       "attempt (a result reports the iterations of all attempts)")
    solve.add_argument("--restarts", type=_non_negative_int,
                       help="ccd/Jacobian on joints: extra attempts from random starts while "
                       f"the target is not reached (default {JACOBIAN_RESTARTS}, {LM_RESTARTS} for "
                       "lm); 0 makes "
                       "--max-iterations a total")
    solve.add_argument("--orientation", type=float, nargs=4, metavar=("X", "Y", "Z", "W"),
                       help="ccd/Jacobian on joints: the tip's orientation as a quaternion "
                       "(scalar last), making the target a pose")
    solve.add_argument("--damping", type=float, help="Jacobian methods: damping relative to "
                       "the reach")
    solve.add_argument("--q0", type=float, nargs="+", metavar="Q",
                       help="ccd/Jacobian: starting joint values")
    solve.add_argument("--close-gap", action="store_true", default=None,
                       help="fabrik: reach the targets near the edges of the chain's reach "
                       "that FABRIK stops short of (docs/fabrik.md)")
    solve.add_argument("--json", action="store_true", help="print the Solution as JSON")
    solve.set_defaults(handler=_cmd_solve)

    from limbik.app.warmup import FAMILIES

    compile_ = sub.add_parser(
        "compile", help="compile the kernels ahead of their first use (all cores)",
        description="Compile limbik's kernels ahead of their first use and cache them on "
        "disk, the solver families in parallel processes, so that later first calls load "
        "them in a fraction of a second. Run it once after an install (a container build, "
        "a cluster node, a game's loading screen).")
    compile_.add_argument("--family", action="append", choices=list(FAMILIES), metavar="NAME",
                          help="only this family (repeatable): " + ", ".join(FAMILIES))
    compile_.add_argument("--jobs", type=_positive_int, default=None,
                          help="worker processes (default: one per core)")
    compile_.set_defaults(handler=_cmd_compile)

    urdf = sub.add_parser("urdf", help="list a URDF file's links and joints (for --base/--tip)")
    urdf.add_argument("file", help="a URDF file")
    urdf.set_defaults(handler=_cmd_urdf)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
