"""Helpers for the glTF tests: the committed Blender-made characters, raw GLB access."""

from __future__ import annotations

import functools
import json
import struct
from pathlib import Path

import numpy as np
import pygltflib

import limbik

DATA = Path(__file__).resolve().parents[1] / "data"


def leg_length(motion):
    """Mean thigh + shin length of the motion's legs (rest pose)."""
    legs = limbik.find_legs(motion.skeleton)
    rest = motion.rest_positions()
    return float(np.mean([np.linalg.norm(rest[lg.knee] - rest[lg.hip])
                          + np.linalg.norm(rest[lg.ankle] - rest[lg.knee]) for lg in legs]))


@functools.cache
def glb(path):
    g = pygltflib.GLTF2.load_from_bytes(Path(path).read_bytes())
    return g, g.binary_blob()


def accessor_bytes(path, index):
    """The raw bytes an accessor covers (element by element, stride respected)."""
    g, blob = glb(path)
    acc = g.accessors[index]
    view = g.bufferViews[acc.bufferView]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc.type]
    size = {5121: 1, 5123: 2, 5125: 4, 5126: 4, 5120: 1, 5122: 2}[acc.componentType] * width
    stride = view.byteStride or size
    start = (view.byteOffset or 0) + (acc.byteOffset or 0)
    return b"".join(blob[start + k * stride:start + k * stride + size] for k in range(acc.count))


def raw_json(path):
    """The JSON chunk of a GLB file, as Python objects."""
    data = Path(path).read_bytes()
    length, kind = struct.unpack("<II", data[12:20])
    assert kind == 0x4E4F534A
    return json.loads(data[20:20 + length])


def mesh_and_skin_accessors(g):
    out = []
    for mesh in g.meshes:
        for prim in mesh.primitives:
            out += list(vars(prim.attributes).values()) + [prim.indices]
    out += [s.inverseBindMatrices for s in g.skins]
    return [a for a in out if isinstance(a, int)]
