"""An independent BVH reader and forward kinematics for the tests.

It shares no code with limbik: it tokenises the text itself and composes 4x4
matrices with scipy's ``Rotation.from_euler``, one channel at a time.
Conventions: R = product of the rotation channels in file order (degrees); any
position channel replaces the joint's OFFSET (0 on axes without a channel).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def parse(text: str):
    """Return (names, parents, offsets, channels, end_sites, data (F, C))."""
    words = text.replace("\r", "\n").split()
    i = 0
    names: list[str] = []
    parents: list[int] = []
    offsets: list[list[float]] = []
    channels: list[list[str]] = []
    end_sites: list[tuple[int, list[float]]] = []
    stack: list[int] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # names: full rest of the ROOT/JOINT line
    joint_lines = [ln.split(None, 1)[1].strip() for ln in lines
                   if ln.split() and ln.split()[0] in ("ROOT", "JOINT")]
    assert words[i] == "HIERARCHY"
    i += 1
    in_end = False
    while words[i] != "MOTION":
        w = words[i]
        if w in ("ROOT", "JOINT"):
            name = joint_lines[len(names)]
            names.append(name)
            parents.append(stack[-1] if stack else -1)
            i += 1 + len(name.split())
            stack.append(len(names) - 1)
            offsets.append([0.0, 0.0, 0.0])
            channels.append([])
        elif w == "End":
            in_end = True
            i += 2
        elif w == "OFFSET":
            off = [float(x) for x in words[i + 1:i + 4]]
            if in_end:
                end_sites.append((stack[-1], off))
            else:
                offsets[stack[-1]] = off
            i += 4
        elif w == "CHANNELS":
            n = int(words[i + 1])
            channels[stack[-1]] = words[i + 2:i + 2 + n]
            i += 2 + n
        elif w == "{":
            i += 1
        elif w == "}":
            if in_end:
                in_end = False
            else:
                stack.pop()
            i += 1
        else:
            raise AssertionError(w)
    i += 1
    assert words[i] == "Frames:"
    frames = int(words[i + 1])
    assert words[i + 2] == "Frame" and words[i + 3] == "Time:"
    i += 5
    width = sum(len(c) for c in channels)
    data = np.array([float(x) for x in words[i:]]).reshape(frames, width)
    return names, parents, np.array(offsets), channels, end_sites, data


def world_positions(text: str) -> tuple[list[str], np.ndarray]:
    """Joint names and world positions (F, J + E, 3): joints, then End Sites."""
    names, parents, offsets, channels, end_sites, data = parse(text)
    frames = data.shape[0]
    J = len(names)
    world = np.zeros((frames, J, 4, 4))
    col = 0
    for j in range(J):
        local = np.tile(np.eye(4), (frames, 1, 1))
        translation = np.tile(offsets[j], (frames, 1))
        if any(c.endswith("position") for c in channels[j]):
            translation = np.zeros((frames, 3))
        rot = np.tile(np.eye(3), (frames, 1, 1))
        for c in channels[j]:
            values = data[:, col]
            col += 1
            if c.endswith("position"):
                translation[:, "XYZ".index(c[0])] = values
            else:
                rot = rot @ Rotation.from_euler(c[0].lower(), values[:, None], degrees=True).as_matrix()
        local[:, :3, :3] = rot
        local[:, :3, 3] = translation
        world[:, j] = local if parents[j] < 0 else world[:, parents[j]] @ local
    pos = [world[:, j, :3, 3] for j in range(J)]
    for p, off in end_sites:
        pos.append(world[:, p, :3, :3] @ np.array(off) + world[:, p, :3, 3])
    return names, np.stack(pos, axis=1)
