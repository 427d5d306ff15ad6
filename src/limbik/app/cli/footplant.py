"""``limbik footplant``: a clip's feet planted on terrain, or a library of clips on every
core or a Dask cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from limbik.app.cli._args import (
    ANIMATION_SUFFIXES,
    PICTURE_SUFFIXES,
    ProgressBar,
    add_file_frame_options,
    add_terrain_options,
    animation_path,
    file_frame,
    finite_float,
    length_units,
    output_path,
    positive_float,
    positive_int,
)


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
    for flag in ("output", "report", "plot", "html"):
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
    if args.input is not None and Path(args.input).suffix.lower() in (".npy", ".npz"):
        return _cmd_footplant_positions(args)
    for flag, value in (("skeleton", args.skeleton), ("fps", args.fps)):
        if value is not None:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(f"--{flag} is for files of joint positions (.npy/.npz), "
                                    f"got {args.input or 'the built-in walk'}", argument=flag)
    for flag in ("jobs", "scheduler"):
        if getattr(args, flag) is not None:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(f"--{flag} is for a folder or glob of clips (with -o "
                                    f"OUTDIR), got one clip: {args.input or 'the built-in walk'}",
                                    argument=flag)
    output = _footplant_output(args)
    if args.report:
        output_path(args.report, "--report")
    _check_html(args)
    if args.plot:
        plot_suffix = Path(args.plot).suffix.lower()
        if plot_suffix not in ANIMATION_SUFFIXES + PICTURE_SUFFIXES:
            from limbik.errors import InvalidInputError

            raise InvalidInputError(
                f"--plot must end in {', '.join(PICTURE_SUFFIXES)} (a side view) or .gif, "
                f".mp4, .html (an animation), got {args.plot}", argument="plot")
        (animation_path if plot_suffix in ANIMATION_SUFFIXES else output_path)(args.plot,
                                                                                  "--plot")
    _check_footplant_outputs(args, output)
    if args.input is None:
        from limbik.placement.walk import walk_cycle

        motion = walk_cycle()
        source_name = "built-in walk"
        terrain_spec = args.terrain or "hills"
    else:
        motion = read_motion(args.input, **file_frame(args))
        source_name = str(args.input)
        terrain_spec = args.terrain or "flat"
    worth_showing = motion.num_frames >= 2000 or sys.stderr.isatty()
    bar = ProgressBar("footplant", enabled=args.progress and worth_showing)
    settings = _footplant_settings(args)
    done = plant_clip(motion, terrain=terrain_spec, terrain_options=settings["terrain_options"],
                      progress=bar, up=args.up, unit=args.unit,
                      **settings["footplant_options"])
    result, report, terrain, legs = done.planted, done.report, done.terrain, done.legs
    write_motion(result, output, source=args.input, **file_frame(args))
    written = [str(output)]
    if args.report:
        with atomic_write(args.report) as handle:
            json.dump(report.to_dict(), handle, indent=2)
        written.append(str(args.report))
    if args.plot:
        _footplant_picture(Path(args.plot), motion, result, terrain, legs, report,
                           length_units(args, args.input))
        written.append(str(args.plot))
    if args.html:
        from limbik.viz.web import footplant_page

        footplant_page(args.html, motion, result, terrain, legs, report, name=source_name)
        written.append(str(args.html))
    if args.json:
        print(json.dumps({"input": source_name, "terrain": terrain.name, "outputs": written,
                          **report.to_dict()}, indent=2))
    else:
        print(f"footplant: {source_name}, {motion.num_frames} frames, terrain {terrain.name}, "
              f"floor {report.floor:.4g}, lifted by {report.lift:.4g} onto the terrain")
        print(report.summary())
        print("wrote " + ", ".join(written))
    return 0

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
    if args.html not in (None, True):
        raise InvalidInputError(f"--html takes no file for a folder of clips (each clip's page "
                                f"is written beside its output), got --html {args.html}",
                                argument="html")
    for flag in ("report", "plot"):
        if getattr(args, flag):
            raise InvalidInputError(f"--{flag} is for one clip; a folder of clips gets "
                                    f"{', '.join(SUMMARY_FILES)} in {args.output}",
                                    argument=flag)
    bar = ProgressBar("footplant", enabled=args.progress and sys.stderr.isatty())
    summary = footplant_library(args.input, args.output, terrain=args.terrain or "flat",
                                skeleton=skeleton_arg(args.skeleton), fps=args.fps,
                                **file_frame(args), html=args.html is True,
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

def _check_html(args: argparse.Namespace) -> None:
    """``--html`` for one file: it names a page ending in .html in a folder that exists."""
    from limbik.errors import InvalidInputError

    if args.html is True:
        raise InvalidInputError("--html must name the page for one clip (--html OUT.html), "
                                "got no file", argument="html")
    if args.html:
        output_path(args.html, "--html")
        if Path(args.html).suffix.lower() not in (".html", ".htm"):
            raise InvalidInputError(f"--html must end in .html, got {args.html}",
                                    argument="html")


def _check_footplant_outputs(args: argparse.Namespace, output: Path) -> None:
    """Before any work: the clip's output has a format it can be written in, and
    :func:`_check_distinct`."""
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
    _check_distinct(args, output)


def _check_distinct(args: argparse.Namespace, output: Path) -> None:
    """No two of ``-o``, ``--report``, ``--plot``, ``--html`` and the input are one file
    (``-o`` may replace the input)."""
    import os

    from limbik.errors import InvalidInputError

    files = {os.path.realpath(args.input): "the input clip"} if args.input else {}
    for flag, path in (("-o", output), ("--report", args.report), ("--plot", args.plot),
                       ("--html", args.html)):
        if not path:
            continue
        key = os.path.realpath(path)
        if key in files and not (flag == "-o" and files[key] == "the input clip"):
            raise InvalidInputError(f"{flag} {path} is also {files[key]}; give another file",
                                    argument=flag.lstrip("-") if flag != "-o" else "output")
        files[key] = f"{flag}'s file" if flag != "-o" else "-o's file"


def skeleton_arg(text: str | None) -> Any:
    """``--skeleton``: a built-in position skeleton's name, or a JSON file holding a
    parents list or ``{"names": [...], "parents": [...]}`` (as ``(names, parents)``)."""
    import json

    from limbik.errors import InvalidInputError
    from limbik.skeleton.positions import POSITION_SKELETONS, position_layout

    if text is None or text in POSITION_SKELETONS:
        return text
    from limbik._runtime.reading import read_bytes

    if not text.lower().endswith(".json"):
        raise InvalidInputError(f"--skeleton must be one of {', '.join(POSITION_SKELETONS)} or a "
                                f".json file of parents, got {text!r}", argument="skeleton")
    path, raw = read_bytes(text, "skeleton")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInputError(f"--skeleton {path} must be JSON, got {exc}",
                                argument="skeleton") from None
    names, parents = (data.get("names"), data.get("parents")) if isinstance(data, dict) \
        else (None, data)
    names, par = position_layout(parents, names)
    return list(names), [int(p) for p in par]


def _cmd_footplant_positions(args: argparse.Namespace) -> int:
    """``limbik footplant MOTION.npy``: the feet of every clip in a file of joint positions."""
    import json

    from limbik._runtime.atomic import atomic_write
    from limbik.app.batch import plant_positions_file
    from limbik.errors import InvalidInputError

    for flag in ("scheduler", "plot", "skin", "animation"):
        if getattr(args, flag) is not None:
            raise InvalidInputError(f"--{flag} does not apply to a file of joint positions, "
                                    f"got {args.input}", argument=flag)
    output = _footplant_output(args)
    if output.suffix.lower() not in (".npy", ".npz", ".bvh"):
        raise InvalidInputError(f"-o must end in .npy or .npz for a file of joint positions "
                                f"(or .bvh for one clip), got {output}", argument="output")
    if args.report:
        output_path(args.report, "--report")
    _check_html(args)
    _check_distinct(args, output)
    skeleton = skeleton_arg(args.skeleton) or "smpl22"
    settings = _footplant_settings(args)
    record = plant_positions_file(
        args.input, output, skeleton, fps=args.fps or 20.0, terrain=args.terrain or "flat",
        terrain_options=settings["terrain_options"], up=args.up, unit=args.unit,
        html=args.html, jobs=args.jobs, **settings["footplant_options"])
    written = [str(output)] + ([str(args.html)] if args.html else [])
    if args.report:
        with atomic_write(args.report) as handle:
            json.dump(record, handle, indent=2)
        written.append(str(args.report))
    if args.json:
        print(json.dumps({"input": str(args.input), "outputs": written, **record}, indent=2))
        return 0
    name = skeleton if isinstance(skeleton, str) else f"{len(skeleton[1])} joints"
    print(f"footplant: {args.input}, {record['clips']} clip(s), {record['frames']} frames in all, "
          f"skeleton {name} at {args.fps or 20.0:g} fps; bones held to one length each "
          f"(largest wobble before: {100 * record['bone_wobble']:.2g}% of a bone)")
    print("wrote " + ", ".join(written))
    return 0


def _footplant_output(args: argparse.Namespace) -> Path:
    """Where ``limbik footplant`` writes one clip: ``-o``, else a name in the current folder
    (``IN_footplant`` with the input's format, ``footplant.bvh`` for the built-in walk)
    that is never overwritten without ``--force``."""
    from limbik.errors import InvalidInputError

    if args.output is not None:
        return output_path(args.output, "-o")
    suffix = Path(args.input).suffix.lower() if args.input else ".bvh"
    suffix = suffix if suffix in (".glb", ".gltf", ".npy", ".npz") else ".bvh"
    out = Path("footplant.bvh" if args.input is None
               else f"{Path(args.input).stem}_footplant{suffix}")
    if out.exists() and not args.force:
        raise InvalidInputError(f"{out} exists; pass -o PATH to choose the output, or --force "
                                "to overwrite it", argument="output")
    print(f"footplant: no -o given, writing {out}", file=sys.stderr)
    return out

def _footplant_picture(path: Path, motion: Any, result: Any, terrain: Any, legs: Any,
                       report: Any, units: str) -> None:
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.footplant_plot import plot_footplant
    from limbik.viz.plots import animate_motion, save_figure

    if path.suffix.lower() in ANIMATION_SUFFIXES:
        toes = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
        stride = max(1, round(1 / (30 * result.frame_time)))
        animate_motion(result, out=path, terrain=terrain, traces=toes, compare=motion,
                       stride=stride, view="profile", label="planted",
                       compare_label="source, on its own flat floor", units=units,
                       sides=joint_sides(result.skeleton))
    else:
        save_figure(plot_footplant(motion, result, terrain, legs, report.contacts,
                                   floor=report.floor, units=units), path)


def add_parser(sub: Any) -> None:
    """Add the command to the subcommands ``sub``."""
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
    add_terrain_options(fp)
    fp.add_argument("--floor", type=finite_float, default=None, help="the clip's own floor "
                    "height, which is moved onto the terrain (default: estimated from the lowest "
                    "foot points)")
    fp.add_argument("-o", "--output", default=None,
                    help="output BVH, or GLB/glTF for a glTF input (a copy of it with the planted "
                    "animation); a file named here is replaced, even the input clip itself. "
                    "Without -o: IN_footplant.bvh/.glb, or footplant.bvh for the built-in walk, "
                    "in the current folder, which is never overwritten without --force. For a "
                    "folder or glob of clips, the output folder")
    add_file_frame_options(fp, plants=True)
    fp.add_argument("--report", help="write the metrics report as JSON here")
    fp.add_argument("--plot", help="write a picture: .png (.jpg, .svg, .pdf) side view, or "
                    ".gif/.mp4/.html animation")
    fp.add_argument("--html", nargs="?", const=True, metavar="OUT.html",
                    help="write an interactive 3-D page: source and result on the terrain, "
                    "contacts on the feet, the metrics beside them; for a file of several "
                    "joint-position clips, one page with every clip's pair where it is (a "
                    "procedural terrain other than flat is refused there: each clip has its "
                    "own); for a folder of clips, --html alone writes one beside each output, "
                    "linked from summary.html")
    fp.add_argument("--json", action="store_true", help="print the report as JSON")
    fp.add_argument("--no-progress", dest="progress", action="store_false",
                    help="no progress bar for long clips")
    fp.add_argument("--jobs", type=positive_int, default=None, help="a folder of clips, or a "
                    "file of several clips of joint positions: worker processes (default: one "
                    "per core; 1 runs in this process)")
    fp.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a folder of clips: run "
                    "each clip as a task on this Dask scheduler (pip install \"limbik[dask]\")")
    fp.add_argument("--force", action="store_true", help="overwrite the default output file; "
                    "for a folder of clips, redo clips whose output is up to date")
    fp.add_argument("--skeleton", help="joint positions (.npy/.npz files, (T, J, 3), "
                    "(N, J, 3, T) or (N, T, J, 3)): their joint order, smpl22 (HumanML3D/MDM; "
                    "the default for such a file), smpl24, or a .json file of parents (or "
                    "{\"names\": [...], \"parents\": [...]}); for a folder, makes its .npy/.npz "
                    "files clips")
    fp.add_argument("--fps", type=positive_float, default=None,
                    help="joint positions: frames per second (default 20)")
    fp.set_defaults(handler=_cmd_footplant)
