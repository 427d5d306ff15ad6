"""glTF 2.0 and GLB skins and animations: read into a :class:`Motion`, write one back.

A skin's joints become the :class:`Skeleton` (parents first, in the node tree's
order); each joint's rest offset is its node's translation, and the node rest pose
is checked against the skin's inverse bind matrices. An animation's translation and
rotation channels on those joints become the :class:`Motion`, sampled at a uniform
frame rate: LINEAR (rotations slerped on the shorter arc), STEP, and CUBICSPLINE
(Hermite, with the in-tangent, value, out-tangent layout of the specification).

The transform of the nodes above the skeleton's root (an armature object, often
turned and scaled by 0.01 in exports of centimetre rigs) is folded into the motion:
its rotation and position into the root, its uniform scale into every length. World
positions are therefore those of the file's scene.

Writing puts a motion back into a copy of the file it came from: the chosen
animation is replaced (or, in a file without animations, one is added), and its new
keyframes are appended after the existing binary data. Every other object (meshes,
materials, skins, other animations, extensions) and every existing byte of the
buffers is kept, so meshes and skins stay byte-identical.

The GLB container (header and chunks), the JSON and the accessors (byteStride,
normalized integers, sparse substitution) are decoded here, with no other library.
Buffers are the GLB binary chunk, ``data:`` URIs, or files in the same folder as
the glTF file; nothing else is read.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import json
import os
import struct
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from limbik._runtime.atomic import atomic_write
from limbik._runtime.reading import read_bytes
from limbik._runtime.validation import MAX_MAGNITUDE, FloatArray, as_float
from limbik.errors import GltfError, InvalidInputError, LimbikError
from limbik.geometry.quaternion import (
    matrix_from_quaternion,
    quaternion_conjugate,
    quaternion_from_matrix,
    quaternion_multiply,
    quaternion_normalize,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.io.units import export_axes, import_axes
from limbik.skeleton.motion import Motion, check_motion
from limbik.skeleton.skeleton import Skeleton
from limbik.tolerances import ANIMATED_TRANSLATION_RTOL

__all__ = ["gltf_contents", "read_gltf", "write_gltf"]

_DTYPES: dict[int, np.dtype[Any]] = {
    5120: np.dtype("i1"), 5121: np.dtype("u1"), 5122: np.dtype("<i2"), 5123: np.dtype("<u2"),
    5125: np.dtype("<u4"), 5126: np.dtype("<f4")}
_NORMALIZED_MAX = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
_FLOAT = 5126
_GLB_MAGIC = b"glTF"
_JSON_CHUNK = 0x4E4F534A
_BIN_CHUNK = 0x004E4942
#: a non-unit joint scale within this is read as 1 (exporters write 0.99999994 and the like)
_SCALE_TOLERANCE = 1e-4
#: a sample time within this fraction of a frame of a keyframe takes the key's value exactly
_KEY_SNAP = 1e-4

#: at most this many joint-frames are sampled from one animation (about 240 MB of
#: rotations and translations): keyframe times far apart in a small file must not
#: ask for more; a lower ``fps`` samples fewer frames
MAX_JOINT_FRAMES = 1 << 22
#: at most this many numbers in an accessor without a bufferView (all zeros)
_MAX_ZERO_ELEMENTS = 1 << 24


@contextlib.contextmanager
def _well_formed(path: str | Path) -> Iterator[None]:
    """Turn what a malformed file makes Python raise (a string where a number belongs, a
    missing field) into a :class:`GltfError` naming the file; limbik's own errors pass."""
    try:
        yield
    except LimbikError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
            ZeroDivisionError, RecursionError) as exc:
        raise GltfError(path, 0, "a well-formed glTF 2.0 file",
                        f"{type(exc).__name__}: {exc}"[:300]) from None


def _numbers(values: FloatArray) -> str:
    """``[1, 2.5, 1e+300]``: a few numbers for an error message."""
    return "[" + ", ".join(f"{float(v):.6g}" for v in values) + "]"


def _count(doc: _Document, value: Any, what: str) -> int:
    """A byte offset, length, stride or element count: an int >= 0 (JSON may hold anything)."""
    return _count_in(doc.path, value, what)


def _count_in(path: Path, value: Any, what: str) -> int:
    """:func:`_count` for the file ``path``, before its document is made; None reads as 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GltfError(path, 0, f"{what} as an integer >= 0", repr(value)[:40])
    return value


# ---------------------------------------------------------------------- the file
@dataclasses.dataclass
class _Document:
    path: Path
    gltf: Any  # _JsonObject: the file's JSON read by attribute
    buffers: list[bytes]
    glb: bool
    document: dict[str, Any]  # the file's own JSON, edited when writing

    def error(self, expected: str, got: str = "") -> GltfError:
        return GltfError(self.path, 0, expected, got)

    def parents(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for i, node in enumerate(self.gltf.nodes):
            for c in node.children or []:
                if not 0 <= c < len(self.gltf.nodes) or c in out:
                    raise self.error("each node to have at most one parent and valid children",
                                     f"node {i} lists child {c}")
                out[c] = i
        return out

    def node_name(self, index: int) -> str:
        name = self.gltf.nodes[index].name
        return name if name else f"node{index}"


def _read_buffer(path: Path, index: int, uri: str | None, blob: bytes | None,
                 length: int) -> bytes:
    if uri is None:
        if blob is None:
            raise GltfError(path, 0, f"buffer {index} to be the GLB binary chunk",
                            "a file without one")
        data = blob
    elif uri.startswith("data:"):
        header, _, payload = uri.partition(",")
        if not header.endswith(";base64"):
            raise GltfError(path, 0, f"buffer {index} as a base64 data URI", header[:40])
        data = base64.b64decode(payload)
    else:
        name = urllib.parse.unquote(uri)
        folder = path.parent.resolve()
        target = (folder / name).resolve()
        if target.parent != folder:
            raise GltfError(path, 0, f"buffer {index} in the glTF file's own folder",
                            repr(uri))
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise GltfError(path, 0, f"buffer {index} ({uri}) to be readable",
                            str(exc)) from None
    if len(data) < length:
        raise GltfError(path, 0, f"buffer {index} to hold {length} bytes", f"{len(data)}")
    return data


class _JsonObject:
    """A glTF JSON object read by attribute, as the specification names its fields: a
    field the file leaves out reads as None; objects inside are :class:`_JsonObject` too."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends: no such protocol here
            raise AttributeError(name)
        return self._fields.get(name)


def _objects(value: Any) -> Any:
    """JSON ``value`` with every object in it (at any depth) read by attribute."""
    if isinstance(value, dict):
        return _JsonObject({k: _objects(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_objects(v) for v in value]
    return value


def _glb_chunks(path: Path, raw: bytes) -> tuple[bytes, bytes | None]:
    """The JSON chunk and the first binary chunk (None if there is none) of GLB ``raw``;
    chunks of other types are skipped, as the specification asks."""
    if len(raw) < 20:
        raise GltfError(path, 0, "a GLB file with a header and a JSON chunk",
                        f"{len(raw)} bytes")
    version, length = struct.unpack("<II", raw[4:12])
    if version != 2:
        raise GltfError(path, 0, "a GLB file of version 2", f"version {version}")
    if not 20 <= length <= len(raw):
        raise GltfError(path, 0, f"a GLB length from 20 to the file's {len(raw)} bytes",
                        f"{length}")
    chunks: list[tuple[int, bytes]] = []
    offset = 12
    while offset + 8 <= length:
        size, kind = struct.unpack("<II", raw[offset:offset + 8])
        start = offset + 8
        if start + size > length:
            raise GltfError(path, 0, f"GLB chunk {len(chunks)} to end within the file's "
                            f"{length} bytes", f"{size} bytes from byte {start}")
        chunks.append((kind, raw[start:start + size]))
        offset = start + size
    if not chunks or chunks[0][0] != _JSON_CHUNK:
        raise GltfError(path, 0, "a GLB file whose first chunk is JSON",
                        f"chunk type {chunks[0][0]:#x}" if chunks else "no chunk")
    blob = next((data for kind, data in chunks[1:] if kind == _BIN_CHUNK), None)
    return chunks[0][1], blob


def _load(path: str | Path) -> _Document:
    p, raw = read_bytes(path)
    glb = raw[:4] == _GLB_MAGIC
    text, blob = _glb_chunks(p, raw) if glb else (raw, None)
    try:  # bytes: UTF-8 with or without a byte order mark; GLB pads JSON with spaces
        document = json.loads(text.rstrip(b"\0") if glb else text)
    except (ValueError, RecursionError) as exc:
        raise GltfError(p, 0, "a glTF 2.0 file (JSON .gltf or binary .glb)",
                        f"{type(exc).__name__}: {exc}"[:300]) from None
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise GltfError(p, 0, "a glTF 2.0 file (JSON .gltf or binary .glb)", "no nodes list")
    gltf = _objects(document)
    required = gltf.extensionsRequired
    unsupported = [e for e in (required if isinstance(required, list) else [])
                   if e in ("EXT_meshopt_compression", "KHR_mesh_quantization")]
    if unsupported:
        raise GltfError(p, 0, "no required compression extension", ", ".join(unsupported))
    buffers = gltf.buffers or []
    if not isinstance(buffers, list) or not all(isinstance(b, _JsonObject) for b in buffers):
        raise GltfError(p, 0, "buffers as a list of objects", repr(document["buffers"])[:40])
    return _Document(p, gltf, [_read_buffer(p, i, b.uri, blob,
                                            _count_in(p, b.byteLength, f"buffer {i}'s byteLength"))
                               for i, b in enumerate(buffers)], glb, document)


def _accessor(doc: _Document, index: Any, what: str) -> np.ndarray:
    """Accessor ``index`` as float64 ``(count, width)`` (normalized integers scaled)."""
    accessors = doc.gltf.accessors or []
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(accessors):
        raise doc.error(f"{what} to be an accessor index in [0, {len(accessors)})", repr(index))
    acc = accessors[index]
    width = _WIDTH.get(acc.type)
    dtype = _DTYPES.get(acc.componentType)
    if width is None or dtype is None:
        raise doc.error(f"{what} (accessor {index}) of a SCALAR/VEC/MAT4 numeric type",
                        f"{acc.type} of component {acc.componentType}")
    count = _count(doc, acc.count, f"accessor {index}'s count")
    values = _view_array(doc, acc.bufferView, _count(doc, acc.byteOffset,
                                                     f"accessor {index}'s byteOffset"),
                         count, width, dtype, f"accessor {index}")
    if acc.sparse is not None and acc.sparse.count:
        values = values.copy()
        n = _count(doc, acc.sparse.count, f"accessor {index}'s sparse count")
        idx_dtype = _DTYPES.get(acc.sparse.indices.componentType)
        if idx_dtype is None or idx_dtype.kind != "u":
            raise doc.error(f"accessor {index}'s sparse indices as unsigned integers",
                            str(acc.sparse.indices.componentType))
        rows = _view_array(doc, acc.sparse.indices.bufferView,
                           _count(doc, acc.sparse.indices.byteOffset, "sparse byteOffset"),
                           n, 1, idx_dtype,
                           f"accessor {index} sparse indices")[:, 0].astype(np.int64)
        if np.any(rows >= count):
            raise doc.error(f"accessor {index}'s sparse indices below {count}",
                            str(int(rows.max())))
        values[rows] = _view_array(doc, acc.sparse.values.bufferView,
                                   _count(doc, acc.sparse.values.byteOffset,
                                          "sparse byteOffset"), n, width, dtype,
                                   f"accessor {index} sparse values")
    with np.errstate(invalid="ignore", over="ignore"):  # checked just below
        out = values.astype(np.float64)
    if acc.normalized:
        top = _NORMALIZED_MAX.get(acc.componentType)
        if top is None:
            raise doc.error(f"accessor {index}: normalized only on 8/16-bit integers",
                            str(acc.componentType))
        out = np.maximum(out / top, -1.0)
    if not np.all(np.abs(out) <= MAX_MAGNITUDE):
        raise doc.error(f"finite numbers within ±{MAX_MAGNITUDE:g} in {what} (accessor "
                        f"{index})", _numbers(out[~(np.abs(out) <= MAX_MAGNITUDE)][:3]))
    return out


def _view_array(doc: _Document, view_index: Any, offset: int, count: int, width: int,
                dtype: np.dtype[Any], what: str) -> np.ndarray:
    if view_index is None:
        if count * width > _MAX_ZERO_ELEMENTS:
            raise doc.error(f"{what} without a bufferView to hold at most "
                            f"{_MAX_ZERO_ELEMENTS} numbers", f"{count} × {width}")
        return np.zeros((count, width), dtype=dtype)
    views = doc.gltf.bufferViews or []
    if isinstance(view_index, bool) or not isinstance(view_index, int) or not (
            0 <= view_index < len(views)):
        raise doc.error(f"{what}'s bufferView in [0, {len(views)})", repr(view_index)[:40])
    view = views[view_index]
    buffer = view.buffer
    if isinstance(buffer, bool) or not isinstance(buffer, int) or not (
            0 <= buffer < len(doc.buffers)):
        raise doc.error(f"bufferView {view_index}'s buffer in [0, {len(doc.buffers)})",
                        repr(buffer)[:40])
    view_offset = _count(doc, view.byteOffset, f"bufferView {view_index}'s byteOffset")
    view_length = _count(doc, view.byteLength, f"bufferView {view_index}'s byteLength")
    element = dtype.itemsize * width
    stride = _count(doc, view.byteStride, f"bufferView {view_index}'s byteStride") or element
    start = view_offset + offset
    needed = offset + (stride * (count - 1) + element if count else 0)
    if stride < element or needed > view_length or (
            view_offset + view_length > len(doc.buffers[buffer])):
        raise doc.error(f"{what} to fit in bufferView {view_index} "
                        f"({view_length} bytes, stride {stride})",
                        f"{count} elements of {element} bytes from offset {offset}")
    return np.ndarray((count, width), dtype=dtype, buffer=doc.buffers[buffer],
                      offset=start, strides=(stride, dtype.itemsize)).copy()


def _node_trs(doc: _Document, index: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A node's local (translation (3,), rotation (4,) xyzw, scale (3,))."""
    node = doc.gltf.nodes[index]
    if node.matrix is not None and not np.allclose(node.matrix, np.eye(4).ravel()):
        m = np.asarray(node.matrix, dtype=np.float64).reshape(4, 4).T  # column-major
        if not np.all(np.abs(m) <= MAX_MAGNITUDE):
            raise doc.error(f"node {index}'s matrix as finite numbers within "
                            f"±{MAX_MAGNITUDE:g}")
        scale = np.linalg.norm(m[:3, :3], axis=0)
        if np.any(scale <= 0) or np.linalg.det(m[:3, :3]) <= 0:
            raise doc.error(f"node {index}'s matrix to be a rotation with positive scale")
        return m[:3, 3].copy(), quaternion_from_matrix(m[:3, :3] / scale), scale
    t = np.asarray(node.translation if node.translation is not None else (0, 0, 0), float)
    q = np.asarray(node.rotation if node.rotation is not None else (0, 0, 0, 1), float)
    s = np.asarray(node.scale if node.scale is not None else (1, 1, 1), float)
    if t.shape != (3,) or q.shape != (4,) or s.shape != (3,) or not np.any(q):
        raise doc.error(f"node {index}'s translation (3), rotation (4) and scale (3)")
    if not np.all(np.abs(np.r_[t, s]) <= MAX_MAGNITUDE):
        raise doc.error(f"node {index}'s translation and scale as finite numbers within "
                        f"±{MAX_MAGNITUDE:g}", _numbers(np.r_[t, s]))
    return t, _unit_quaternions(doc, q[None], f"node {index}'s rotation")[0], s


def _sized_quaternions(doc: _Document, q: FloatArray, what: str) -> FloatArray:
    """Rows ``(n, 4)`` as they are, but those of a size whose square would overflow or
    vanish divided by their largest component; a zero or non-finite row is an error."""
    top = np.max(np.abs(q), axis=-1, keepdims=True)
    if not np.all(np.isfinite(top)) or np.any(top == 0.0):
        raise doc.error(f"{what} as finite non-zero quaternions")
    return np.where((top > 1e100) | (top < 1e-100), q / top, q)


def _unit_quaternions(doc: _Document, q: FloatArray, what: str) -> FloatArray:
    """Rows ``(n, 4)`` scaled to unit length (see :func:`_sized_quaternions`)."""
    return quaternion_normalize(_sized_quaternions(doc, q, what))


# ---------------------------------------------------------------------- selection
def _label(items: list[Any], noun: str) -> str:
    return ", ".join(f"{i} {(item.name or f'<unnamed {noun}>')!r}" for i, item in
                     enumerate(items))


def _select(doc: _Document, items: list[Any], which: int | str | None, noun: str) -> int:
    if not items:
        raise doc.error(f"a file with a {noun}", f"no {noun}s")
    if which is None:
        if len(items) > 1:
            raise doc.error(f"one {noun}, or {noun}= a name or index to choose one",
                            f"{len(items)} {noun}s: {_label(items, noun)}")
        return 0
    if isinstance(which, str):
        found = [i for i, item in enumerate(items) if item.name == which]
        if len(found) != 1:
            raise doc.error(f"{noun} {which!r} to name exactly one of: {_label(items, noun)}",
                            f"{len(found)} matches")
        return found[0]
    if isinstance(which, bool) or not isinstance(which, int | np.integer) or not (
            -len(items) <= which < len(items)):
        raise doc.error(f"{noun} index in [0, {len(items)}) or a name: {_label(items, noun)}",
                        repr(which))
    return int(which) % len(items)


def gltf_contents(path: str | Path) -> dict[str, list[str]]:
    """Names of the file's skins and animations, in file order (unnamed ones as ``""``).

    Returns ``{"skins": [...], "animations": [...]}``.
    """
    with _well_formed(path):
        doc = _load(path)
        return {"skins": [str(s.name or "") for s in doc.gltf.skins or []],
                "animations": [str(a.name or "") for a in doc.gltf.animations or []]}


# ---------------------------------------------------------------------- skeleton
@dataclasses.dataclass
class _Rig:
    """A skin's joints in Skeleton order, with their file data."""

    nodes: list[int]  # node index per skeleton joint
    names: list[str]
    parents: list[int]
    rest_t: FloatArray  # (J, 3) node translations (file units)
    rest_q: FloatArray  # (J, 4)
    above_q: FloatArray  # (4,) rotation of the nodes above the root
    above_p: FloatArray  # (3,) their position
    above_s: float  # their uniform scale
    above: list[int]  # node indices above the root


def _rig(doc: _Document, skin_index: int, *, check_bind: bool) -> _Rig:
    skin = doc.gltf.skins[skin_index]
    joints = list(skin.joints or [])
    nodes = doc.gltf.nodes
    if not joints or any(not isinstance(j, int) or not 0 <= j < len(nodes) for j in joints):
        raise doc.error(f"skin {skin_index}'s joints to be node indices", repr(joints[:8]))
    if len(set(joints)) != len(joints):
        raise doc.error(f"skin {skin_index}'s joints to be distinct nodes")
    parent_of = doc.parents()
    joint_set = set(joints)
    roots = [j for j in joints if parent_of.get(j) not in joint_set]
    if len(roots) != 1:
        raise doc.error(f"skin {skin_index}'s joints to form one tree (one root joint)",
                        f"roots {', '.join(doc.node_name(r) for r in roots)}")
    order: list[int] = []
    stack = [roots[0]]
    while stack:  # depth first, children in file order
        n = stack.pop()
        order.append(n)
        stack.extend(c for c in reversed(nodes[n].children or []) if c in joint_set)
    if len(order) != len(joints):
        missing = sorted(joint_set - set(order))
        raise doc.error(f"every joint of skin {skin_index} under its root's joint subtree",
                        "joints below non-joint nodes: "
                        + ", ".join(doc.node_name(m) for m in missing[:6]))
    position = {n: k for k, n in enumerate(order)}
    names: list[str] = []
    for n in order:
        name = doc.node_name(n)
        names.append(name if name not in names else f"{name}.{n}")
    parents = [-1] + [position[parent_of[n]] for n in order[1:]]
    trs = [_node_trs(doc, n) for n in order]
    for n, (_, _, s) in zip(order, trs, strict=True):
        if np.max(np.abs(s - 1.0)) > _SCALE_TOLERANCE:
            raise doc.error(f"joint {doc.node_name(n)!r} with unit scale (limbik bones do "
                            "not scale)", _numbers(s))
    rest_t = np.array([t for t, _, _ in trs])
    rest_q = np.array([q for _, q, _ in trs])
    above: list[int] = []
    n = roots[0]
    while n in parent_of:
        n = parent_of[n]
        above.append(n)
    aq, ap, a_s = np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), 1.0
    for n in above:  # compose from the scene root down: A = P · A
        t, q, s = _node_trs(doc, n)
        if np.max(np.abs(s - s[0])) > _SCALE_TOLERANCE * abs(s[0]):
            raise doc.error(f"node {doc.node_name(n)!r} above the skeleton with a uniform "
                            "scale", _numbers(s))
        ap = t + s[0] * rotate_vectors(q, ap)
        aq = quaternion_multiply(q, aq)
        a_s = float(s[0]) * a_s
    rig = _Rig(order, names, parents, rest_t, rest_q, aq, ap, a_s, above)
    if check_bind and skin.inverseBindMatrices is not None:
        _check_bind(doc, skin_index, joints, rig)
    return rig


def _check_bind(doc: _Document, skin_index: int, joints: list[int], rig: _Rig) -> None:
    """Each joint's rest transform in its parent equals the one the inverse bind
    matrices give, to 1e-4 of the skeleton's size and 1e-3 in rotation."""
    ibm = _accessor(doc, doc.gltf.skins[skin_index].inverseBindMatrices,
                    f"skin {skin_index} inverseBindMatrices")
    if ibm.shape != (len(joints), 16):
        raise doc.error(f"skin {skin_index}'s inverseBindMatrices as {len(joints)} MAT4",
                        str(ibm.shape))
    column = {n: k for k, n in enumerate(joints)}
    bind = np.linalg.inv(ibm.reshape(-1, 4, 4).transpose(0, 2, 1))  # column-major
    size = max(float(np.max(np.linalg.norm(rig.rest_t[1:], axis=1), initial=0.0)), 1e-12)
    for k in range(1, len(rig.nodes)):
        local = np.linalg.solve(bind[column[rig.nodes[rig.parents[k]]]],
                                bind[column[rig.nodes[k]]])
        rot = matrix_from_quaternion(rig.rest_q[k])
        dt = np.max(np.abs(local[:3, 3] - rig.rest_t[k]))
        dr = np.max(np.abs(local[:3, :3] - rot))
        if dt > 1e-4 * size or dr > 1e-3:
            raise doc.error(
                f"joint {rig.names[k]!r}'s rest transform to match skin {skin_index}'s inverse "
                "bind matrices (or check_bind=False)",
                f"a difference of {dt:.3g} in position and {dr:.3g} in rotation")


def _skeleton(rig: _Rig) -> Skeleton:
    offsets = rig.above_s * rig.rest_t
    offsets[0] = rig.above_p + rig.above_s * rotate_vectors(rig.above_q, rig.rest_t[0])
    return Skeleton(rig.names, rig.parents, offsets)


# ---------------------------------------------------------------------- sampling
def _sample(times: FloatArray, values: FloatArray, mode: str, at: FloatArray, *,
            rotation: bool, snap: float) -> FloatArray:
    """One sampler's output ``(len(at), width)`` at times ``at``."""
    n = times.size
    width = values.shape[1]
    if mode == "CUBICSPLINE":
        if values.shape[0] != 3 * n:
            raise ValueError(f"CUBICSPLINE output of 3 × {n} elements, got {values.shape[0]}")
        triples = values.reshape(n, 3, width)
        tangent_in, value, tangent_out = triples[:, 0], triples[:, 1], triples[:, 2]
    else:
        if values.shape[0] != n:
            raise ValueError(f"{n} output elements, got {values.shape[0]}")
        value = values
    # the key at or before each sample; a sample within `snap` of a key is on it
    i = np.clip(np.searchsorted(times, at + snap, side="right") - 1, 0, n - 1)
    on_key = np.abs(at - times[i]) <= snap
    if mode == "STEP" or n == 1:
        return value[i]
    seg = np.minimum(i, n - 2)
    t0, t1 = times[seg], times[seg + 1]
    u = np.clip((at - t0) / (t1 - t0), 0.0, 1.0)
    if mode == "LINEAR":
        if rotation:
            out = quaternion_slerp(value[seg], value[seg + 1], u)
        else:
            out = value[seg] + u[:, None] * (value[seg + 1] - value[seg])
    else:
        d = (t1 - t0)[:, None]
        uu = u[:, None]
        u2, u3 = uu * uu, uu * uu * uu
        out = ((2 * u3 - 3 * u2 + 1) * value[seg] + (u3 - 2 * u2 + uu) * d * tangent_out[seg]
               + (-2 * u3 + 3 * u2) * value[seg + 1] + (u3 - u2) * d * tangent_in[seg + 1])
        if rotation:
            out = quaternion_normalize(out)
    before, after = at < times[0], at > times[-1]
    out = np.where(on_key[:, None], value[i], out)
    out = np.where(before[:, None], value[0], out)
    return np.where(after[:, None], value[-1], out)


@dataclasses.dataclass
class _Channel:
    node: int
    path: str
    times: FloatArray
    values: FloatArray
    mode: str


def _channels(doc: _Document, anim_index: int) -> list[_Channel]:
    anim = doc.gltf.animations[anim_index]
    samplers = anim.samplers or []
    out = []
    for c, channel in enumerate(anim.channels or []):
        target = channel.target
        if target is None or target.node is None:
            continue
        s = channel.sampler
        if not isinstance(s, int) or not 0 <= s < len(samplers):
            raise doc.error(f"animation {anim_index} channel {c}'s sampler in "
                            f"[0, {len(samplers)})", repr(s))
        sampler = samplers[s]
        mode = sampler.interpolation or "LINEAR"
        if mode not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise doc.error(f"interpolation LINEAR, STEP or CUBICSPLINE in animation "
                            f"{anim_index} sampler {s}", repr(mode))
        times = _accessor(doc, sampler.input, f"animation {anim_index} sampler {s} input")
        if times.shape[1] != 1 or times.shape[0] == 0 or np.any(np.diff(times[:, 0]) <= 0):
            raise doc.error(f"animation {anim_index} sampler {s}'s input as increasing times")
        values = _accessor(doc, sampler.output, f"animation {anim_index} sampler {s} output")
        out.append(_Channel(int(target.node), target.path, times[:, 0], values, mode))
    return out


def _regular_keys(channels: list[_Channel], start: float, end: float) -> FloatArray | None:
    """The key times of the channel with the most keys where they run from ``start`` to
    ``end`` at one step (within 1e-3 of it, and float32 rounding) and every other
    channel's keys are among them; else None."""
    keys = max((c.times for c in channels), key=len, default=None)
    if keys is None or keys.size < 2 or keys[0] != start or keys[-1] != end:
        return None
    steps = np.diff(keys)
    step = (end - start) / (keys.size - 1)
    # key times are float32 in the file: each off by up to half a unit in its last place
    slack = 1e-3 * step + 2.0 * float(np.spacing(np.float32(max(abs(start), abs(end)))))
    if not (step > 0 and np.all(np.abs(steps - step) <= slack)):
        return None
    for c in channels:  # a constant channel's two keys are among them; other times are not
        if not np.all(np.isin(c.times, keys)):
            return None
    return keys


def _frame_time(channels: list[_Channel], fps: float | None) -> float:
    if fps is not None:
        return 1.0 / as_float(fps, "fps", minimum=0.0, exclusive=True)
    steps = [np.diff(c.times) for c in channels if c.times.size > 1]
    if not steps:
        return 1.0 / 30.0
    return _snapped(float(np.min(np.concatenate(steps))))


def _snapped(step: float) -> float:
    """``step`` (seconds), or the whole fps's frame time within 1e-3 of it."""
    rate = 1.0 / step
    near = round(rate)
    return 1.0 / near if near and abs(rate - near) <= 1e-3 * rate else step


def _motion(doc: _Document, rig: _Rig, anim_index: int | None, fps: float | None) -> tuple[
        Motion, float]:
    """The skeleton's motion under an animation, and the animation's start time."""
    skeleton = _skeleton(rig)
    J = len(rig.nodes)
    if anim_index is None:
        frame_time = 1.0 / (30.0 if fps is None else as_float(fps, "fps", minimum=0.0,
                                                               exclusive=True))
        rot = np.broadcast_to(rig.rest_q, (1, J, 4))
        trans = rig.rest_t[None]
        start = 0.0
    else:
        joint_of = {n: k for k, n in enumerate(rig.nodes)}
        channels = _channels(doc, anim_index)
        moved_above = [doc.node_name(c.node) for c in channels
                       if c.node in rig.above and c.path in ("translation", "rotation", "scale")]
        if moved_above:
            raise doc.error("no animation of the nodes above the skeleton's root",
                            ", ".join(sorted(set(moved_above))))
        used = [c for c in channels if c.node in joint_of
                and c.path in ("translation", "rotation", "scale")]
        start = min((c.times[0] for c in used), default=0.0)
        end = max((c.times[-1] for c in used), default=0.0)
        # keys at one step from start to end (a clip written at a BVH's 0.008333 s, whose
        # frame time is snapped to 1/120) are sampled on the keys themselves, every one of
        # them; an fps asked for, or keys at uneven steps, are sampled every frame_time
        keys = _regular_keys(used, start, end) if fps is None else None
        frame_time = (_snapped((end - start) / (len(keys) - 1)) if keys is not None
                      else _frame_time(used, fps))
        frames = (float(len(keys)) if keys is not None
                  else np.floor((end - start) / frame_time + 1e-6) + 1)
        if not frames * J <= MAX_JOINT_FRAMES:
            raise doc.error(f"an animation of at most {MAX_JOINT_FRAMES} joint-frames "
                            "(a lower fps samples fewer)",
                            f"{frames:.3g} frames of {J} joints ({end - start:.6g} s at "
                            f"{1.0 / frame_time:.6g} fps)")
        F = int(frames)
        at: FloatArray = (np.array(keys, dtype=np.float64) if keys is not None
                          else np.asarray(start + np.arange(F) * frame_time, dtype=np.float64))
        rot = np.array(np.broadcast_to(rig.rest_q, (F, J, 4)))
        trans = np.array(np.broadcast_to(rig.rest_t, (F, J, 3)))
        width = {"translation": 3, "rotation": 4, "scale": 3}
        for c in used:
            w = width[c.path]
            if c.values.shape[1] != w:
                raise doc.error(f"{c.path} output of VEC{w} on node {doc.node_name(c.node)!r}",
                                f"width {c.values.shape[1]}")
            keys = c.values
            if c.path == "rotation" and c.mode != "CUBICSPLINE":  # no overflow in slerp
                keys = _sized_quaternions(doc, keys,
                                          f"rotation keys on {doc.node_name(c.node)!r}")
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # checked below
                    sampled = _sample(c.times, keys, c.mode, at, rotation=c.path == "rotation",
                                      snap=_KEY_SNAP * frame_time)
            except ValueError as exc:
                raise doc.error(f"{c.path} keyframes on {doc.node_name(c.node)!r} that fit "
                                f"{c.mode}", str(exc)) from None
            k = joint_of[c.node]
            if not np.all(np.isfinite(sampled)):
                raise doc.error(f"{c.path} keyframes on {doc.node_name(c.node)!r} whose "
                                f"{c.mode} curve stays finite")
            if c.path == "rotation":
                rot[:, k] = _unit_quaternions(doc, sampled,
                                              f"rotation keys on {doc.node_name(c.node)!r}")
            elif c.path == "translation":
                trans[:, k] = sampled
            elif np.max(np.abs(sampled - 1.0)) > _SCALE_TOLERANCE:
                raise doc.error(f"unit scale keys on joint {rig.names[k]!r} (limbik bones "
                                "do not scale)", f"scales up to {np.max(sampled):.6g}")
    q_root = quaternion_multiply(rig.above_q, rot[:, 0])
    root = rig.above_p + rig.above_s * rotate_vectors(rig.above_q, trans[:, 0])
    rotations = np.array(rot)
    rotations[:, 0] = q_root
    size = max(float(np.max(np.abs(rig.rest_t[1:]), initial=0.0)), 1e-300)
    moving = {k: rig.above_s * trans[:, k] for k in range(1, J)
              if np.max(np.abs(trans[:, k] - rig.rest_t[k])) > ANIMATED_TRANSLATION_RTOL * size}
    return Motion(skeleton, root, rotations, frame_time, moving), start


def read_gltf(path: str | Path, *, skin: int | str | None = None,
              animation: int | str | None = None, fps: float | None = None,
              up: str = "y", scale: float = 1.0, check_bind: bool = True) -> Motion:
    """A skin's joints and one animation of a glTF 2.0 / GLB file, as a :class:`Motion`.

    Parameters
    ----------
    path : the ``.gltf`` or ``.glb`` file.
    skin, animation : a name or index; needed only where the file holds several (the
        error lists them). A file without animations gives its rest pose, one frame.
    fps : the frame rate to sample at (default: the rate of the closest keyframes,
        rounded to a whole number of frames per second when within 0.1 %).
    up, scale : the file's up axis (``"y"``, as glTF specifies, or ``"z"``) and the
        factor from its lengths to the motion's (see :mod:`limbik.io.units`).
    check_bind : check the nodes' rest pose against the inverse bind matrices.

    Frames start at the animation's first keyframe; F = its duration × fps + 1.
    """
    with _well_formed(path):
        doc = _load(path)
        skin_index = _select(doc, doc.gltf.skins or [], skin, "skin")
        rig = _rig(doc, skin_index, check_bind=check_bind)
        anims = doc.gltf.animations or []
        anim_index = None if not anims and animation is None else _select(
            doc, anims, animation, "animation")
        motion, _ = _motion(doc, rig, anim_index, fps)
    return import_axes(motion, up=up, scale=scale)


# ---------------------------------------------------------------------- writing
def _append(blob: bytearray, data: bytes) -> int:
    """Append 4-byte aligned; returns the offset."""
    blob.extend(b"\0" * (-len(blob) % 4))
    offset = len(blob)
    blob.extend(data)
    return offset


def _glb_bytes(json_text: str, blob: bytes) -> bytes:
    body = json_text.encode("utf-8")
    body += b" " * (-len(body) % 4)
    binary = bytes(blob) + b"\0" * (-len(blob) % 4)
    chunks = struct.pack("<II", len(body), _JSON_CHUNK) + body
    if binary:
        chunks += struct.pack("<II", len(binary), _BIN_CHUNK) + binary
    return _GLB_MAGIC + struct.pack("<II", 2, 12 + len(chunks)) + chunks


#: The name of the buffer views and accessors that hold the keys limbik writes: writing
#: over their animation again drops them, so a file planted in place does not grow.
KEYS_NAME = "limbik keys"


def _drop_replaced_keys(gltf: dict[str, Any], blob: bytearray, replace: int,
                        joint_nodes: set[int], glb: bool) -> None:
    """Remove the keys an earlier limbik write left for animation ``replace``: the buffer
    views and accessors named :data:`KEYS_NAME` at the ends of their lists, with their
    bytes at the end of the GLB chunk (or their own last ``.gltf`` buffer), where nothing
    but that animation's replaced channels uses them. Anything else stays as it is."""
    try:
        _drop_keys(gltf, blob, replace, joint_nodes, glb)
    except (AttributeError, TypeError, ValueError):  # an odd document: nothing is dropped
        pass


def _drop_keys(gltf: dict[str, Any], blob: bytearray, replace: int, joint_nodes: set[int],
               glb: bool) -> None:
    """:func:`_drop_replaced_keys`, raising where the document is not as the spec says."""
    views = gltf.get("bufferViews") or []
    accessors = gltf.get("accessors") or []

    def tail(items: list[Any]) -> int:
        """Index of the first of the trailing items named KEYS_NAME."""
        k = len(items)
        while k > 0 and isinstance(items[k - 1], dict) and items[k - 1].get("name") == KEYS_NAME:
            k -= 1
        return k

    first_view, first_accessor = tail(views), tail(accessors)
    if first_view == len(views) or first_accessor == len(accessors):
        return
    if any(a.get("bufferView") is None or not first_view <= a["bufferView"] < len(views)
           for a in accessors[first_accessor:]):
        return
    # what stays referenced: other animations, the replaced one's channels on other nodes,
    # meshes, skins, images and the other accessors
    used_accessors: set[Any] = set()
    for k, animation in enumerate(gltf.get("animations") or []):
        samplers = animation.get("samplers") or []
        kept = (range(len(samplers)) if k != replace else
                [ch.get("sampler") for ch in animation.get("channels") or []
                 if (ch.get("target") or {}).get("node") not in joint_nodes])
        for i in kept:
            if isinstance(i, int) and 0 <= i < len(samplers):
                used_accessors |= {samplers[i].get("input"), samplers[i].get("output")}
    for mesh in gltf.get("meshes") or []:
        for primitive in mesh.get("primitives") or []:
            used_accessors |= set((primitive.get("attributes") or {}).values())
            used_accessors.add(primitive.get("indices"))
            for target in primitive.get("targets") or []:
                used_accessors |= set(target.values())
    used_accessors |= {skin.get("inverseBindMatrices") for skin in gltf.get("skins") or []}
    if any(isinstance(i, int) and i >= first_accessor for i in used_accessors):
        return
    used_views = {image.get("bufferView") for image in gltf.get("images") or []}
    used_views |= {a.get("bufferView") for a in accessors[:first_accessor]}
    if any(isinstance(i, int) and i >= first_view for i in used_views):
        return
    ours = views[first_view:]
    kept_views = views[:first_view]
    if glb:
        start = min(v.get("byteOffset", 0) for v in ours)
        if any(v.get("buffer") != 0 for v in ours) or any(
                v.get("buffer") == 0 and v.get("byteOffset", 0) + v.get("byteLength", 0) > start
                for v in kept_views):
            return
        del blob[start:]
    else:
        buffers = gltf.get("buffers") or []
        last = len(buffers) - 1
        if last < 1 or any(v.get("buffer") != last for v in ours) or any(
                v.get("buffer") == last for v in kept_views) or not str(
                buffers[last].get("uri", "")).startswith("data:"):
            return
        del buffers[last]
    del views[first_view:]
    del accessors[first_accessor:]


def _move_file_references(gltf: dict[str, Any], data: Sequence[bytes], source: Path,
                          out: Path) -> None:
    """A document written to another folder than ``source``'s keeps its files: buffers in
    files of ``source``'s folder are embedded (base64 data URIs: a glTF's buffers are
    read from its own folder), and images in files are named from ``out``'s folder."""
    folder = source.parent.resolve()
    target = out.parent.resolve()
    if folder == target:
        return

    def external(entry: Any) -> bool:
        uri = entry.get("uri") if isinstance(entry, dict) else None
        return isinstance(uri, str) and not uri.startswith("data:") and "://" not in uri

    for k, buffer in enumerate(gltf.get("buffers") or []):
        if external(buffer) and k < len(data):
            length = buffer.get("byteLength")  # the file may hold more than is declared
            kept = data[k][:length] if isinstance(length, int) and length >= 0 else data[k]
            buffer["uri"] = ("data:application/octet-stream;base64,"
                             + base64.b64encode(kept).decode())
    for image in gltf.get("images") or []:
        if external(image):
            name = folder / urllib.parse.unquote(image["uri"])
            image["uri"] = urllib.parse.quote(Path(os.path.relpath(name, target)).as_posix())


def write_gltf(motion: Motion, path: str | Path, *, source: str | Path,
               skin: int | str | None = None, animation: int | str | None = None,
               name: str | None = None, up: str = "y", scale: float = 1.0) -> None:
    """Write ``motion`` as an animation of a copy of ``source`` to ``path``.

    ``motion`` must be of the source skin's skeleton (same joint names, as
    :func:`read_gltf` gives). The animation chosen by ``animation`` (as in
    :func:`read_gltf`) is replaced by the motion's rotation and translation keys
    (LINEAR, one per frame, from the replaced animation's start time); a file
    without animations gains one named ``name`` (default ``"limbik"``). Channels of
    the replaced animation on nodes outside the skeleton are kept. Everything else in
    the file, and every existing buffer byte, is kept, except the keys an earlier
    write left for the animation replaced (:data:`KEYS_NAME`). GLB in, GLB out; a ``.gltf``
    source gets its new keys in an added base64 buffer. ``up`` and ``scale`` undo
    those given to :func:`read_gltf`. The write is atomic.
    """
    check_motion(motion)
    if motion.num_frames == 0:
        raise InvalidInputError("motion must have at least one frame to write as an "
                                "animation, got 0", argument="motion")
    with _well_formed(source):
        doc = _load(source)
        skin_index = _select(doc, doc.gltf.skins or [], skin, "skin")
        rig = _rig(doc, skin_index, check_bind=False)
        anims = doc.gltf.animations or []
        replace = None if not anims else _select(doc, anims, animation, "animation")
        start = 0.0 if replace is None else _motion(doc, rig, replace, None)[1]
    out = Path(path)
    if (out.suffix.lower() == ".glb") != doc.glb:
        raise InvalidInputError(
            f"path must have the source's format ({'.glb' if doc.glb else '.gltf'}), got "
            f"{out.name!r}", argument="path")
    if tuple(rig.names) != motion.names:
        raise InvalidInputError(
            f"motion must be of skin {skin_index}'s skeleton ({len(rig.names)} joints "
            f"{', '.join(rig.names[:4])}, ...), got {motion.num_joints} joints "
            f"{', '.join(motion.names[:4])}, ...", argument="motion")

    m = export_axes(motion, up=up, scale=scale)
    F = m.num_frames
    inverse_q = quaternion_conjugate(rig.above_q)
    local_t = m.local_translations() / rig.above_s
    local_t[:, 0] = rotate_vectors(inverse_q, m.root_positions - rig.above_p) / rig.above_s
    local_q = np.array(m.rotations)
    local_q[:, 0] = quaternion_multiply(inverse_q, m.rotations[:, 0])

    gltf = copy.deepcopy(doc.document)  # the file's own JSON: nothing else changes
    blob = bytearray(doc.buffers[0]) if doc.glb and doc.buffers else bytearray()
    buffers = gltf.setdefault("buffers", [])
    _move_file_references(gltf, doc.buffers, Path(source), out)
    if replace is not None:
        _drop_replaced_keys(gltf, blob, replace, set(rig.nodes), doc.glb)
    buffer_index = 0 if doc.glb else len(buffers)
    times = (start + np.arange(F) * m.frame_time).astype("<f4")
    pieces = {"times": times.tobytes(),
              "rotations": np.ascontiguousarray(local_q.transpose(1, 0, 2), "<f4").tobytes(),
              "translations": np.ascontiguousarray(local_t.transpose(1, 0, 2),
                                                   "<f4").tobytes()}
    views = gltf.setdefault("bufferViews", [])
    accessors = gltf.setdefault("accessors", [])
    view_of: dict[str, int] = {}
    for label, data in pieces.items():
        view_of[label] = len(views)
        views.append({"buffer": buffer_index, "byteOffset": _append(blob, data),
                      "byteLength": len(data), "name": KEYS_NAME})

    def accessor(view: str, offset: int, kind: str, **extra: Any) -> int:
        accessors.append({"bufferView": view_of[view], "byteOffset": offset,
                          "componentType": _FLOAT, "count": F, "type": kind,
                          "name": KEYS_NAME, **extra})
        return len(accessors) - 1

    time_acc = accessor("times", 0, "SCALAR", min=[float(times.min())],
                        max=[float(times.max())])
    samplers: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    for k, node in enumerate(rig.nodes):
        for path_name, view, kind, size in (("rotation", "rotations", "VEC4", 16),
                                            ("translation", "translations", "VEC3", 12)):
            samplers.append({"input": time_acc, "output": accessor(view, k * F * size, kind),
                             "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1,
                             "target": {"node": node, "path": path_name}})
    animations = gltf.setdefault("animations", [])
    if replace is not None:
        old = animations[replace]
        joint_nodes = set(rig.nodes)
        with _well_formed(source):  # the replaced animation's raw JSON, as the file has it
            for ch in old.get("channels") or []:  # keep channels on other nodes (morphs)
                if ch["target"].get("node") in joint_nodes:
                    continue
                k = ch["sampler"]
                if isinstance(k, bool) or not isinstance(k, int) or not (
                        0 <= k < len(old["samplers"])):
                    raise GltfError(source, 0, f"animation {replace}'s channel samplers as "
                                    f"indices of its samplers", repr(k)[:40])
                samplers.append(old["samplers"][k])
                channels.append({**ch, "sampler": len(samplers) - 1})
        old["channels"], old["samplers"] = channels, samplers
    else:
        animations.append({"name": name or "limbik", "channels": channels,
                           "samplers": samplers})
    if doc.glb:
        if not buffers:
            buffers.append({})
        buffers[0]["byteLength"] = len(blob)
        payload = _glb_bytes(json.dumps(gltf, separators=(",", ":")), bytes(blob))
    else:
        buffers.append({"byteLength": len(blob), "uri": "data:application/octet-stream;base64,"
                        + base64.b64encode(blob).decode()})
        payload = json.dumps(gltf, separators=(",", ":")).encode("utf-8")
    with atomic_write(out, "wb") as handle:
        handle.write(payload)
