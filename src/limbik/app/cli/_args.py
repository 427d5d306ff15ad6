"""What the commands share: the parser that makes usage errors one line, argument types,
output paths, the progress bar and the input file's frame options."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """A command-line usage error: one line, a hint to ``--help``, exit code 2."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.prog = prog

#: A negative number, also in exponent form (``-1e-3``), which argparse takes for an
#: option unless it is told otherwise (its own pattern has no exponent).
NEGATIVE_NUMBER = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")

class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (see :class:`UsageError`), and which
    reads ``-1e-3`` as a number."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> Any:  # argparse calls this for every usage error
        raise UsageError(message, self.prog)

def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text}")
    return value

def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a whole number >= 1, got 0")
    return value

def finite_float(text: str) -> float:
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

def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value

def output_path(path: Any, option: str) -> Path:
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

ANIMATION_SUFFIXES = (".gif", ".mp4", ".html", ".htm")

#: Still pictures matplotlib writes.
PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".pdf")

def animation_path(path: Any, option: str) -> Path:
    """An output path for an animation: a known suffix, ffmpeg present for ``.mp4``."""
    from limbik.errors import InvalidInputError

    out = output_path(path, option)
    suffix = out.suffix.lower()
    if suffix not in ANIMATION_SUFFIXES:
        raise InvalidInputError(f"{option} must end in .gif, .mp4 or .html, got {path}",
                                argument=option.lstrip("-"))
    if suffix == ".mp4":
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise InvalidInputError(f"{option} must end in .gif or .html on this machine "
                                    f"(ffmpeg, needed for .mp4, was not found), got {path}",
                                    argument=option.lstrip("-"))
    return out

class ProgressBar:
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

def file_frame(args: argparse.Namespace) -> dict[str, Any]:
    """The input file's frame and glTF selection, as read_motion's keywords."""
    def name_or_index(value: str | None) -> str | int | None:
        return int(value) if value is not None and value.isdigit() else value

    return {"up": args.up, "unit": args.unit, "skin": name_or_index(args.skin),
            "animation": name_or_index(args.animation)}

def add_file_frame_options(parser: argparse.ArgumentParser, *, plants: bool = False) -> None:
    """--up, --unit, --skin and --animation; ``plants``: the command takes --floor and
    terrain files, whose lengths --unit leaves alone."""
    parser.add_argument("--up", choices=("y", "z"), default="y",
                        help="the file's up axis (default y; Blender and Unreal BVH files: "
                        "z; glTF files are y by specification)")
    parser.add_argument("--unit", help="the file's length unit, converted to metres: m, cm, "
                        "mm, in, ft, ... or a factor (default: keep the file's units"
                        + ("; --floor and terrain files are in the file's units)" if plants
                           else ")"))
    parser.add_argument("--skin", help="glTF: the skin to use (name or index)")
    parser.add_argument("--animation", help="glTF: the animation to use (name or index)")

def length_units(args: argparse.Namespace, file: Any) -> str:
    """The axis unit of a clip's pictures: metres with ``--unit`` (converted to metres)
    and for the built-in walk; else the file's own (a glTF file's are metres only where
    its exporter kept to the specification)."""
    if getattr(args, "unit", None) is not None or file is None:
        return "m"
    return "glTF units" if str(file).lower().endswith((".gltf", ".glb")) else "BVH units"


def add_terrain_options(parser: argparse.ArgumentParser) -> None:
    """How ``--terrain`` is made: a height file's placement and scale, the hills' seed."""
    parser.add_argument("--cell-size", type=positive_float, default=None,
                        help="terrain file sample spacing (default 1)")
    parser.add_argument("--terrain-origin", type=finite_float, nargs=2, default=None,
                        metavar=("X", "Z"), help="world (x, z) of the terrain file's first "
                        "sample (default 0 0)")
    parser.add_argument("--height-scale", type=finite_float, default=None,
                        help="height of a white PNG pixel (black is 0; default 1)")
    parser.add_argument("--seed", type=non_negative_int, default=None,
                        help="seed of the hills terrain (a whole number >= 0, default 0)")
