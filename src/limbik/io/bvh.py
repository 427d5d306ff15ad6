"""BVH (Biovision Hierarchy) reading and writing.

Conventions, as in Blender's BVH importer (the reference client):

- A joint's local rotation is the product of its rotation channels in file order,
  in degrees: ``Zrotation Xrotation Yrotation`` means ``R = Rz · Rx · Ry``.
- Position channels, on any joint, replace that joint's ``OFFSET``: its local
  translation is the channel values, with 0 on an axis that has no channel.
- ``End Site`` blocks are not joints; their offsets are kept on the skeleton.

Reading accepts any rotation order, position channels on any joint, CRLF or CR
line endings, tabs and spaces, and scientific notation. Anything malformed raises
:class:`~limbik.errors.BVHParseError` with the file, the line and what was expected;
non-finite numbers (``nan``, ``inf``, overflowing exponents) are malformed, and
numbers are ASCII only (``0-9``; other scripts' digits are malformed everywhere).

Limits, so that a small hostile file cannot cost much (reading is linear in the
file's size, its memory a small multiple of it):

- joints nest at most :data:`MAX_DEPTH` levels deep;
- the ``Frames:`` count must be backed by the data: one row per frame, and with no
  channels at all one (empty) line per frame;
- the decoded motion (``frames × joints`` rotations) may take at most 8 bytes per
  byte of file plus 64 MiB.

Writing indents one tab per level up to :data:`MAX_INDENT` levels; deeper joints
keep that indent, so the output stays linear in the number of joints.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from limbik._runtime.atomic import atomic_write
from limbik._runtime.reading import read_bytes
from limbik._runtime.validation import MAX_MAGNITUDE, FloatArray
from limbik.errors import BVHParseError, InvalidInputError
from limbik.geometry.quaternion import (
    matrix_from_quaternion,
    quaternion_from_axis_angle,
    quaternion_multiply,
)
from limbik.io.units import export_axes, import_axes
from limbik.skeleton.motion import Motion, check_motion
from limbik.skeleton.skeleton import CHANNEL_NAMES, Skeleton

__all__ = ["MAX_DEPTH", "MAX_INDENT", "MAX_MAGNITUDE", "format_bvh", "parse_bvh", "read_bvh",
           "write_bvh"]

MAX_DEPTH = 1000
"""Deepest joint nesting a BVH file may have (the root is level 1)."""
MAX_INDENT = 32
"""Tabs of indentation :func:`format_bvh` writes at most."""

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_NUMERIC = re.compile(r"[^0-9eE+\-.\s]")
_INT = re.compile(r"[+]?[0-9]{1,18}")
_TOKEN = re.compile(r"\S+")
_BYTES_PER_FILE_BYTE = 8
_MEMORY_FLOOR = 64 << 20
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CHANNELS = {name.lower(): name for name in CHANNEL_NAMES}
_AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]),
         "Z": np.array([0.0, 0.0, 1.0])}
_MAX_CHANNELS_PER_JOINT = 6


# ---------------------------------------------------------------------- reading
class _Tokens:
    """Whitespace-separated tokens of the hierarchy section, with their line numbers."""

    def __init__(self, source: str, lines: list[str]) -> None:
        self.source = source
        self.lines = lines
        self.line_index = 0  # next line to split
        self.buffer: list[str] = []
        self.buffer_line = 0  # 1-based line of the tokens in buffer
        self.last_line = 1

    def _fill(self) -> bool:
        while not self.buffer:
            if self.line_index >= len(self.lines):
                return False
            self.buffer = self.lines[self.line_index].split()[::-1]
            self.line_index += 1
            self.buffer_line = self.line_index
        return True

    def next(self, expected: str) -> tuple[str, int]:
        if not self._fill():
            raise BVHParseError(self.source, max(len(self.lines), 1), expected, "end of file")
        self.last_line = self.buffer_line
        return self.buffer.pop(), self.buffer_line

    def rest_of_line(self) -> list[str]:
        """The remaining tokens on the current line (possibly none)."""
        out = self.buffer[::-1]
        self.buffer = []
        return out

    def error(self, expected: str, got: str, line: int) -> BVHParseError:
        return BVHParseError(self.source, line, expected, repr(got))

    def keyword(self, word: str) -> int:
        tok, line = self.next(word)
        if tok.upper() != word.upper():
            raise self.error(word, tok, line)
        return line

    def number(self, what: str) -> float:
        tok, line = self.next(what)
        if not _NUMBER.fullmatch(tok):
            raise self.error(what, tok, line)
        value = float(tok)
        if not abs(value) <= MAX_MAGNITUDE:
            raise self.error(f"a finite {what} within ±{MAX_MAGNITUDE:g}", tok, line)
        return value


class _Node:
    __slots__ = ("channels", "line", "name", "offset", "parent")

    def __init__(self, name: str, parent: int, line: int) -> None:
        self.name = name
        self.parent = parent
        self.line = line
        self.offset: list[float] | None = None
        self.channels: list[str] | None = None


def _joint_name(tokens: _Tokens, keyword: str, line: int) -> str:
    """The name after ROOT/JOINT: the rest of its line (inner spacing kept), up to an
    optional ``{``."""
    if tokens.buffer_line != line:
        raise BVHParseError(tokens.source, line, f"a joint name after {keyword}", "end of line")
    parts = tokens.rest_of_line()
    if parts and parts[-1] == "{":
        tokens.buffer = ["{"]
        parts = parts[:-1]
    if not parts or "{" in parts or "}" in parts:
        raise BVHParseError(tokens.source, line, f"a joint name after {keyword}",
                            repr(" ".join(parts)) if parts else "end of line")
    # the same words, with the spacing they have in the file: the name's tokens are
    # the last ones on its line (before a separate "{")
    raw = tokens.lines[line - 1]
    spans = [m.span() for m in _TOKEN.finditer(raw)]
    if spans and raw[slice(*spans[-1])] == "{" and tokens.buffer == ["{"]:
        spans.pop()
    return raw[spans[-len(parts)][0]:spans[-1][1]]


def _parse_offset(tokens: _Tokens) -> list[float]:
    return [tokens.number("an OFFSET coordinate") for _ in range(3)]


def _parse_channels(tokens: _Tokens) -> list[str]:
    tok, line = tokens.next("a channel count")
    if not _INT.fullmatch(tok) or int(tok) > _MAX_CHANNELS_PER_JOINT:
        raise tokens.error(f"a channel count from 0 to {_MAX_CHANNELS_PER_JOINT}", tok, line)
    out: list[str] = []
    for _ in range(int(tok)):
        name, line = tokens.next("a channel name")
        canonical = _CHANNELS.get(name.lower())
        if canonical is None:
            raise tokens.error("a channel name (Xposition ... Zrotation)", name, line)
        if canonical in out:
            raise tokens.error("each channel at most once per joint", name, line)
        out.append(canonical)
    return out


def _parse_hierarchy(tokens: _Tokens) -> tuple[list[_Node], list[tuple[int, list[float]]]]:
    tokens.keyword("HIERARCHY")
    line = tokens.keyword("ROOT")
    nodes = [_Node(_joint_name(tokens, "ROOT", line), -1, line)]
    tokens.keyword("{")
    end_sites: list[tuple[int, list[float]]] = []
    seen = {nodes[0].name: line}
    stack = [0]
    while stack:
        current = nodes[stack[-1]]
        tok, line = tokens.next("OFFSET, CHANNELS, JOINT, End Site or }")
        word = tok.upper()
        if word == "OFFSET":
            if current.offset is not None:
                raise tokens.error(f"one OFFSET in joint {current.name!r}", tok, line)
            current.offset = _parse_offset(tokens)
        elif word == "CHANNELS":
            if current.channels is not None:
                raise tokens.error(f"one CHANNELS in joint {current.name!r}", tok, line)
            current.channels = _parse_channels(tokens)
        elif word == "JOINT":
            name = _joint_name(tokens, "JOINT", line)
            if name in seen:
                raise tokens.error(f"a unique joint name (first used on line {seen[name]})",
                                   name, line)
            seen[name] = line
            if len(stack) >= MAX_DEPTH:
                raise tokens.error(f"joints nested at most {MAX_DEPTH} levels deep", name, line)
            nodes.append(_Node(name, stack[-1], line))
            stack.append(len(nodes) - 1)
            tokens.keyword("{")
        elif word == "END":
            tokens.keyword("Site")
            tokens.keyword("{")
            tokens.keyword("OFFSET")
            end_sites.append((stack[-1], _parse_offset(tokens)))
            tokens.keyword("}")
        elif word == "}":
            if current.offset is None:
                raise tokens.error(f"OFFSET in joint {current.name!r}", tok, line)
            if current.channels is None:
                raise tokens.error(f"CHANNELS in joint {current.name!r}", tok, line)
            stack.pop()
        else:
            raise tokens.error("OFFSET, CHANNELS, JOINT, End Site or }", tok, line)
    return nodes, end_sites


def _quaternions_from_channels(order: str, degrees: FloatArray) -> FloatArray:
    """``(F, 4)`` quaternions for ``R = R_order[0] · R_order[1] · ...`` (angles ``(F, k)``)."""
    q = np.zeros((degrees.shape[0], 4))
    q[:, 3] = 1.0
    for k, axis in enumerate(order):
        q = quaternion_multiply(q, quaternion_from_axis_angle(_AXES[axis],
                                                              np.deg2rad(degrees[:, k])))
    return q


def _parse_motion_header(source: str, lines: list[str],
                         start: int) -> tuple[int, int, float, int]:
    """Frame count, its line, frame time and the index of the first data line after
    ``MOTION``."""
    # tokens of the lines after MOTION, read lazily, with their line numbers
    stream: list[tuple[str, int]] = []
    index = start

    def take(expected: str) -> tuple[str, int]:
        nonlocal index
        while not stream:
            if index >= len(lines):
                raise BVHParseError(source, max(len(lines), 1), expected, "end of file")
            stream.extend((t, index + 1) for t in lines[index].split())
            index += 1
        return stream.pop(0)

    tok, line = take("Frames:")
    if tok.lower() == "frames:":
        tok, line = take("a frame count")
    elif tok.lower().startswith("frames:") and len(tok) > 7:
        tok = tok[7:]
    else:
        raise BVHParseError(source, line, "Frames:", repr(tok))
    if not _INT.fullmatch(tok):
        raise BVHParseError(source, line, "a non-negative integer frame count",
                            repr(tok[:40]))
    frames, frames_line = int(tok), line
    tok, line = take("Frame Time:")
    if tok.lower() != "frame":
        raise BVHParseError(source, line, "Frame Time:", repr(tok))
    tok, line = take("Frame Time:")
    if tok.lower() == "time:":
        tok, line = take("a frame time")
    elif tok.lower().startswith("time:") and len(tok) > 5:
        tok = tok[5:]
    else:
        raise BVHParseError(source, line, "Frame Time:", repr(tok))
    frame_time = float(tok) if _NUMBER.fullmatch(tok) else float("nan")
    if not (np.isfinite(frame_time) and frame_time > 0):
        raise BVHParseError(source, line, "a positive, finite frame time", repr(tok))
    if stream:
        raise BVHParseError(source, stream[0][1], "end of line after the frame time",
                            repr(stream[0][0]))
    return frames, frames_line, frame_time, index


def _parse_data(source: str, lines: list[str], first: int, frames: int, frames_line: int,
                channels: int) -> FloatArray:
    """The ``(frames, channels)`` motion table from ``lines[first:]``."""
    if channels == 0:
        for i in range(first, len(lines)):
            if lines[i].strip():
                raise BVHParseError(source, i + 1, "no motion values (no joint has channels)",
                                    repr(lines[i].strip()[:40]))
        if frames > len(lines) - first:
            raise BVHParseError(source, frames_line,
                                "a frame count backed by the data (one line per frame; "
                                f"{len(lines) - first} lines follow)", str(frames))
        return np.zeros((frames, 0))
    rows: list[str] = []
    row_lines: list[int] = []
    for i in range(first, len(lines)):
        text = lines[i]
        if not text.strip():
            continue
        if len(rows) == frames:
            raise BVHParseError(source, i + 1, f"end of file after {frames} frames",
                                repr(text.strip()[:40]))
        rows.append(text)
        row_lines.append(i + 1)
    if len(rows) < frames:
        raise BVHParseError(source, (row_lines[-1] if row_lines else first) + 1,
                            f"{frames} frames of motion data", f"{len(rows)} frames")
    split: list[list[str]] = []
    for text, line in zip(rows, row_lines, strict=True):
        parts = text.split()
        if len(parts) != channels:
            raise BVHParseError(source, line, f"{channels} values in a frame",
                                f"{len(parts)} values")
        if _NOT_NUMERIC.search(text):
            bad = next((p for p in parts if not _NUMBER.fullmatch(p)), text.strip()[:40])
            raise BVHParseError(source, line, "a decimal number", repr(bad))
        split.append(parts)
    try:
        # only digits, signs, dots and exponents are left, so float() accepts
        # exactly the decimal numbers
        data = np.array(split, dtype=np.float64).reshape(frames, channels)
    except ValueError:
        for parts, line in zip(split, row_lines, strict=True):
            for p in parts:
                if not _NUMBER.fullmatch(p):
                    raise BVHParseError(source, line, "a decimal number", repr(p)) from None
        raise  # pragma: no cover - every token matched, so the conversion cannot fail
    finite = np.abs(data) <= MAX_MAGNITUDE
    if not np.all(finite):
        row, col = (int(i) for i in np.argwhere(~finite)[0])
        raise BVHParseError(source, row_lines[row], f"a finite number within "
                            f"±{MAX_MAGNITUDE:g}", repr(split[row][col]))
    return data


def _build(source: str, nodes: list[_Node], end_sites: list[tuple[int, list[float]]],
           frames: int, frame_time: float, data: FloatArray) -> Motion:
    names = [n.name for n in nodes]
    parents = [n.parent for n in nodes]
    offsets = np.array([n.offset for n in nodes], dtype=np.float64)
    channels = [n.channels or [] for n in nodes]
    skeleton = Skeleton(names, parents, offsets, channels, end_sites)
    J = len(nodes)
    rotations = np.zeros((frames, J, 4))
    rotations[..., 3] = 1.0
    root_positions = np.broadcast_to(offsets[0], (frames, 3)).copy()
    translations: dict[int, FloatArray] = {}
    column = 0
    for j, chans in enumerate(channels):
        cols = {name: column + k for k, name in enumerate(chans)}
        column += len(chans)
        rot = [c for c in chans if c.endswith("rotation")]
        if rot:
            order = "".join(c[0] for c in rot)
            rotations[:, j] = _quaternions_from_channels(order, data[:, [cols[c] for c in rot]])
        if any(c.endswith("position") for c in chans):
            t = np.zeros((frames, 3))
            for axis, name in enumerate(CHANNEL_NAMES[:3]):
                if name in cols:
                    t[:, axis] = data[:, cols[name]]
            if j == 0:
                root_positions = t
            else:
                translations[j] = t
    return Motion(skeleton, root_positions, rotations, frame_time, translations)


def parse_bvh(text: str, *, source: str = "<string>") -> Motion:
    """Parse BVH text into a :class:`Motion`; ``source`` names it in error messages.

    Raises
    ------
    BVHParseError
        For any malformed input, with ``path``, ``line`` (1-based) and ``expected``.
    InvalidInputError
        If ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str of BVH text, got {type(text).__name__}",
                                argument="text")
    lines = _LINE_BREAK.split(text.removeprefix("\ufeff"))
    tokens = _Tokens(source, lines)
    try:
        nodes, end_sites = _parse_hierarchy(tokens)
        motion_line = tokens.keyword("MOTION")
        if tokens.rest_of_line():
            raise BVHParseError(source, motion_line, "end of line after MOTION")
        frames, frames_line, frame_time, first = _parse_motion_header(source, lines,
                                                                      motion_line)
        width = sum(len(n.channels or []) for n in nodes)
        data = _parse_data(source, lines, first, frames, frames_line, width)
        budget = _BYTES_PER_FILE_BYTE * len(text) + _MEMORY_FLOOR
        if frames * len(nodes) * 32 > budget:
            raise BVHParseError(
                source, frames_line,
                f"at most {budget // (32 * len(nodes))} frames for {len(nodes)} joints "
                "in a file of this size", str(frames))
        return _build(source, nodes, end_sites, frames, frame_time, data)
    except BVHParseError:
        raise
    except (ValueError, ArithmeticError, IndexError, KeyError, TypeError,
            RecursionError, InvalidInputError) as exc:  # pragma: no cover - safety net
        raise BVHParseError(source, tokens.last_line, "a well-formed BVH file",
                            f"{type(exc).__name__}: {exc}") from exc


def read_bvh(path: str | Path, *, up: str = "y", scale: float = 1.0) -> Motion:
    """Read a BVH file into a :class:`Motion`.

    Text is decoded as UTF-8, falling back to Latin-1. A missing or unreadable file
    raises :class:`~limbik.errors.UnreadableFileError` (an ``OSError`` too); a malformed
    one raises :class:`~limbik.errors.BVHParseError` (never a Motion holding NaN). ``up`` is
    the file's up axis and ``scale`` the factor from its lengths to the motion's
    (see :func:`~limbik.io.units.import_axes`); the defaults keep the file's.
    """
    p, raw = read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return import_axes(parse_bvh(text, source=str(p)), up=up, scale=scale)


# ---------------------------------------------------------------------- writing
def _complete(order: str) -> str:
    """``order`` followed by the missing axes, e.g. ``"ZX"`` → ``"ZXY"``."""
    return order + "".join(a for a in "XYZ" if a not in order)


def _axis_matrices(axis: int, angle: FloatArray) -> FloatArray:
    """Rotation matrices ``(F, 3, 3)`` about coordinate ``axis`` by ``angle`` (rad)."""
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros(angle.shape + (3, 3))
    a1, a2 = (axis + 1) % 3, (axis + 2) % 3
    m[..., axis, axis] = 1.0
    m[..., a1, a1] = c
    m[..., a2, a2] = c
    m[..., a2, a1] = s
    m[..., a1, a2] = -s
    return m


def _euler_degrees(order: str, q: FloatArray) -> FloatArray:
    """Angles ``(F, 3)`` in degrees with ``R = R_order[0] · R_order[1] · R_order[2]``.

    The middle angle comes from a well-conditioned ``atan2``; the last one is taken
    from what the first two leave, so the angles reproduce the rotation to rounding
    even at or near gimbal lock (where the first angle alone is ill-defined).
    """
    i, j, k = ("XYZ".index(a) for a in order.upper())
    e = 1.0 if (j - i) % 3 == 1 else -1.0  # even permutation (XYZ, YZX, ZXY)
    r = matrix_from_quaternion(q)
    b = np.arctan2(e * r[..., i, k], np.hypot(r[..., i, i], r[..., i, j]))
    a = np.arctan2(-e * r[..., j, k], r[..., k, k])
    rest = np.einsum("...ji,...jk->...ik", _axis_matrices(i, a) @ _axis_matrices(j, b), r)
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    c = np.arctan2(rest[..., k2, k1], rest[..., k1, k1])
    return np.rad2deg(np.stack([a, b, c], axis=-1))


def _layout(motion: Motion) -> tuple[list[list[str]], FloatArray]:
    """Channels per joint for writing, and the ``(F, C)`` table of values."""
    sk = motion.skeleton
    F = motion.num_frames
    translations = motion.local_translations()
    layout: list[list[str]] = []
    columns: list[FloatArray] = []
    identity_tol = 1e-15
    for j in range(sk.num_joints):
        chans: list[str] = []
        pos_axes = sk.position_axes(j)
        if j == 0:
            moving = not np.array_equal(motion.root_positions,
                                        np.broadcast_to(sk.offsets[0], (F, 3)))
        else:
            moving = j in motion.joint_translations
        if pos_axes or moving:
            order = _complete(pos_axes) if pos_axes else "XYZ"
            for axis in order:
                chans.append(f"{axis}position")
                columns.append(translations[:, j, "XYZ".index(axis)])
        rot_order = sk.rotation_order(j)
        q = motion.rotations[:, j]
        rotated = bool(np.any(1.0 - np.abs(q[:, 3]) > identity_tol)) if F else False
        if rot_order or rotated:
            order = _complete(rot_order) if rot_order else "ZYX"
            angles = _euler_degrees(order, q)
            for k, axis in enumerate(order):
                chans.append(f"{axis}rotation")
                columns.append(angles[:, k])
        layout.append(chans)
    table = np.stack(columns, axis=1) if columns else np.zeros((F, 0))
    return layout, table


def _number(x: float) -> str:
    return repr(float(x))


def _children(parents: np.ndarray) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents.tolist()):
        if p >= 0:
            kids[p].append(j)
    return kids


def _name_problem(name: str) -> str | None:
    """Why a joint name would not read back from a BVH file as written, or None."""
    if _LINE_BREAK.search(name):
        return "holds a line break"
    if not name.strip():
        return "is empty"
    if "{" in name.split() or "}" in name.split():
        return "holds a brace as a word"
    return None


def format_bvh(motion: Motion) -> str:
    """BVH text for ``motion`` (LF line endings, tab indents, shortest exact numbers).

    Indentation is one tab per level up to :data:`MAX_INDENT` tabs, so the text
    stays linear in the number of joints however deep they nest.

    Joints are written depth first (the file order of a skeleton read from BVH).
    A joint gets all three rotation channels (in its own order, completed with the
    missing axes) unless it had none and never rotates; position channels are
    written for the root when it has them or moves, and for animated joint
    translations. Values are written with ``repr`` so a re-read gives the same numbers.
    """
    check_motion(motion)
    sk = motion.skeleton
    for j, name in enumerate(sk.names):
        problem = _name_problem(name)
        if problem:
            raise InvalidInputError(f"motion's joint names must read back from a BVH line: "
                                    f"joint {j} {name!r} {problem}", argument="motion")
    layout, table = _layout(motion)
    kids = _children(sk.parents)
    ends: list[list[FloatArray]] = [[] for _ in range(sk.num_joints)]
    for p, off in zip(sk.end_site_parents.tolist(), sk.end_site_offsets, strict=True):
        ends[p].append(off)
    out = ["HIERARCHY"]
    order: list[int] = []

    def offset_line(indent: str, off: FloatArray) -> str:
        return f"{indent}OFFSET {' '.join(_number(v) for v in off)}"

    # iterative depth-first walk: ("open", j, depth) or ("close", j, depth)
    stack: list[tuple[str, int, int]] = [("open", 0, 0)]
    while stack:
        action, j, depth = stack.pop()
        indent = "\t" * min(depth, MAX_INDENT - 1)
        if action == "close":
            for off in ends[j]:
                out += [f"{indent}\tEnd Site", f"{indent}\t{{",
                        offset_line(indent + "\t\t", off), f"{indent}\t}}"]
            out.append(f"{indent}}}")
            continue
        order.append(j)
        keyword = "ROOT" if j == 0 else "JOINT"
        out += [f"{indent}{keyword} {sk.names[j]}", f"{indent}{{",
                offset_line(indent + "\t", sk.offsets[j]),
                f"{indent}\tCHANNELS {len(layout[j])}" + "".join(f" {c}" for c in layout[j])]
        stack.append(("close", j, depth))
        for child in reversed(kids[j]):
            stack.append(("open", child, depth + 1))
    out += ["MOTION", f"Frames: {motion.num_frames}", f"Frame Time: {_number(motion.frame_time)}"]
    # columns in written (depth-first) joint order
    starts = np.cumsum([0] + [len(c) for c in layout])
    cols = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in order]).astype(np.int64)
    table = table[:, cols]
    for what, values in (("offsets", sk.offsets), ("end site offsets", sk.end_site_offsets),
                         ("channel values", table)):
        if values.size and not np.abs(values).max() <= MAX_MAGNITUDE:
            raise InvalidInputError(f"motion's {what} must be within ±{MAX_MAGNITUDE:g} to be "
                                    f"written (and read back), got "
                                    f"{float(np.abs(values).max()):g}", argument="motion")
    out.extend(" ".join(map(repr, row)) for row in table.tolist())
    return "\n".join(out) + "\n"


def write_bvh(motion: Motion, path: str | Path, *, up: str = "y", scale: float = 1.0) -> None:
    """Write ``motion`` to a BVH file atomically (temporary file, then rename).

    See :func:`format_bvh` for the layout. A failure leaves ``path`` untouched.
    ``up`` and ``scale`` give the file's frame, as for :func:`read_bvh`.
    """
    text = format_bvh(export_axes(motion, up=up, scale=scale))
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
