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
        read = read_positions(path, joints=len(names))
        label = str(path)
        count = len(read.positions)
        return [(f"{label}[{n}]" if count > 1 else label, to_y_up(read.clip(n), args.up),
                 parents, list(names), args.fps or 20.0) for n in range(count)]
    motion = read_motion(path, up=args.up)
    return [(str(path), motion.world_positions(), motion.skeleton.parents,
             list(motion.names), motion.frame_rate)]


def _files(given: str) -> list[tuple[Path, Path | None]]:
    """The files a ``file`` argument names, each with its path relative to the folder
    given (None for a file named on its own)."""
    from limbik.app.batch import find_clips

    path = Path(given)
    if path.is_file():
        return [(path, None)]
    root, clips = find_clips(given, positions=True)
    return [(clip, clip.relative_to(root)) for clip in clips]


def _reference_file(args: argparse.Namespace, relative: Path | None) -> Path:
    """The reference of a file: ``--reference`` itself, or for a file found in a folder,
    the file at the same relative path in the ``--reference`` folder."""
    from limbik.errors import InvalidInputError

    reference = Path(args.reference)
    if relative is None:
        if reference.is_dir():
            raise InvalidInputError(f"--reference must be a file to compare with a file, got "
                                    f"the folder {args.reference!r}", argument="reference")
        return reference
    if not reference.is_dir():
        raise InvalidInputError(f"--reference must be a folder to compare with a folder, got "
                                f"{args.reference!r}", argument="reference")
    match = reference / relative
    if not match.is_file():
        raise InvalidInputError(f"--reference must hold {relative.as_posix()} (as the folder "
                                f"compared with it does), got no such file in "
                                f"{args.reference!r}", argument="reference")
    return match


def _cmd_metrics(args: argparse.Namespace) -> int:
    import json

    from limbik.errors import InvalidInputError
    from limbik.io.units import unit_scale
    from limbik.placement.metrics import score_positions

    scale = unit_scale(args.unit) if args.unit is not None else 1.0
    if args.reference is not None and len(args.file) != 1:
        raise InvalidInputError(f"--reference compares one file or folder, got "
                                f"{len(args.file)} of them", argument="reference")
    rows: list[dict[str, Any]] = []
    for given in args.file:
        for path, relative in _files(given):
            clips = _clips(path, args)
            references = []
            if args.reference is not None:
                references = _clips(_reference_file(args, relative), args)
                if len(references) != len(clips):
                    raise InvalidInputError(f"--reference must hold as many clips as {path} "
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
    shown = [(key, head) for key, head in COLUMNS if any(key in r for r in rows)]
    if len(rows) > 1:  # (a test set's figure is the mean over its clips)
        rows.append({"clip": f"mean of {len(rows)}",
                     **{key: sum(r[key] for r in rows) / len(rows) for key, _ in shown}})
    width = max(len("clip"), *(len(r["clip"]) for r in rows))
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
        "jitter (mean joint jerk); with --reference, the mean joint change from it. A "
        "table of several clips ends with their mean.")
    metrics.add_argument("file", nargs="+", help="clips or files of joint positions, or "
                         "folders of them (searched recursively)")
    metrics.add_argument("--reference", help="a clip or file of the same frames to compare "
                         "with (one file only); for a folder, a folder holding each of its "
                         "files at the same relative path")
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
