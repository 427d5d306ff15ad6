"""Small synthetic BVH texts covering the format's corners, for the tests."""

from __future__ import annotations

import itertools

import numpy as np

ORDERS = ["".join(p) for p in itertools.permutations("XYZ")]


def corner_case_bvh(frames: int = 5, seed: int = 0, *, crlf: bool = True) -> str:
    """A BVH with every rotation order, partial channels, position channels on a
    non-root joint, a joint without channels, a name with spaces, End Sites, tabs
    and spaces mixed, scientific notation and (optionally) CRLF line endings."""
    rng = np.random.default_rng(seed)
    lines = ["HIERARCHY", "ROOT Hips", "{", "\tOFFSET 0.5 1.0e+0 -2.5E-1",
             "  CHANNELS 6 Zposition Xposition Yposition Yrotation Xrotation Zrotation"]
    widths = [6]
    depth = 1
    # a chain with each full rotation order
    for k, order in enumerate(ORDERS):
        ind = "\t" * depth
        lines += [f"{ind}JOINT Chain{k}", f"{ind}{{",
                  f"{ind}\tOFFSET {rng.normal():.6e} {rng.normal():.6f} {rng.normal():.6f}",
                  f"{ind}\tCHANNELS 3 " + " ".join(f"{a}rotation" for a in order)]
        widths.append(3)
        depth += 1
    ind = "\t" * depth
    lines += [f"{ind}End Site", f"{ind}{{", f"{ind}\tOFFSET 0 0.25 0", f"{ind}}}"]
    for _ in ORDERS:
        depth -= 1
        lines.append("\t" * depth + "}")
    # partial channels, position channels on a non-root joint, no channels, spaced name
    lines += ["\tJOINT Left Arm Joint", "\t{", "\t\tOFFSET 1 0 0",
              "\t\tCHANNELS 2 Xrotation Zrotation",
              "\t\tJOINT Slider", "\t\t{", "\t\t\tOFFSET 0.3 0.1 0",
              "\t\t\tCHANNELS 6 Xrotation Yposition Zrotation Xposition Yrotation Zposition",
              "\t\t\tJOINT Fixed", "\t\t\t{", "\t\t\t\tOFFSET 0 -0.5 0", "\t\t\t\tCHANNELS 0",
              "\t\t\t\tJOINT Twist", "\t\t\t\t{", "\t\t\t\t\tOFFSET 0 0 0.4",
              "\t\t\t\t\tCHANNELS 1 Yrotation",
              "\t\t\t\t\tEnd Site", "\t\t\t\t\t{", "\t\t\t\t\t\tOFFSET 0 0 1e-1", "\t\t\t\t\t}",
              "\t\t\t\t}", "\t\t\t}", "\t\t}", "\t}", "}"]
    widths += [2, 6, 0, 1]
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 3.3333e-02"]
    width = sum(widths)
    data = rng.uniform(-180, 180, size=(frames, width))
    data[:, :3] = rng.normal(size=(frames, 3))
    slider = 6 + 3 * len(ORDERS) + 2  # first column of the joint "Slider"
    data[:, [slider + 1, slider + 3, slider + 5]] = rng.normal(scale=0.5, size=(frames, 3))
    for f in range(frames):
        lines.append(" ".join(f"{v:.8e}" if (f + i) % 3 == 0 else f"{v:.9f}"
                              for i, v in enumerate(data[f])))
    sep = "\r\n" if crlf else "\n"
    return sep.join(lines) + sep


SMALL_BVH = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 1 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT LeftUpLeg
\t{
\t\tOFFSET 0.1 0 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tJOINT LeftLeg
\t\t{
\t\t\tOFFSET 0 -0.45 0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 -0.45 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 1 0 0 0 0 10 20 30 -5 0 5
0.1 1 0 5 5 5 1e1 2.5E+1 30 -5 0 5
"""
