"""Seeded fuzzers for the file and problem inputs: BVH, URDF, glTF and ``limbik solve`` JSON.

Each ``fuzz_*`` function runs ``count`` seeded cases and returns the failures as
strings (empty when every promise held). The promises:

- BVH: ``parse_bvh`` returns a Motion with finite arrays, or raises ``BVHParseError``
  with a line inside the file; a parsed Motion writes and reads back.
- URDF: ``parse_urdf`` returns a JointChain with a finite reach, or raises
  ``URDFError``; a chain solves to finite output with q inside its limits.
- glTF: ``read_gltf`` on Blender's GLB files with fields, bytes or length changed
  returns a Motion with finite arrays that ``write_gltf`` writes back, or raises a
  ``LimbikError``, without a NumPy warning on the way.
- problem JSON: ``limbik solve FILE`` exits 0 or 1 and never prints a traceback.

``hostile_bvh_files`` and ``hostile_glb_files`` build small files (< 1 MB) meant to
exhaust time or memory;
``tools/fuzz.py`` runs everything for longer, with a 1 GiB memory cap.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import struct
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import limbik
from limbik.errors import BVHParseError, LimbikError, URDFError
from limbik.placement.walk import walk_cycle

DATA = Path(__file__).resolve().parent / "data"

HOSTILE_NUMBERS = ["1e400", "-1e400", "nan", "inf", "-inf", "1e-400", "1e308", "-0",
                   "0x10", "1_000", "\u0661", "\uff11", "", "1e", ".", "-", "+.5e-3",
                   "9" * 400, "1" * 30, "NaN", "1,5", "١٢"]
HOSTILE_WORDS = ["{", "}", "JOINT", "ROOT", "End Site", "OFFSET", "CHANNELS", "MOTION",
                 "Frames:", "Frame Time:", "\x00", "\ufeff", "\u2028", "\r", "\t", "é",
                 "CHANNELS 7", "CHANNELS -1", "Frames: 1000000000", "Frame Time: 0"]


def _seed_bvh_texts() -> list[str]:
    walk = walk_cycle(cycles=0.25)
    small = ("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 1 0\n  CHANNELS 6 Xposition Yposition "
             "Zposition Zrotation Xrotation Yrotation\n  JOINT Left Leg\n  {\n    OFFSET 0.1 "
             "-0.5 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n"
             "      OFFSET 0 -0.4 0\n    }\n  }\n}\nMOTION\nFrames: 2\nFrame Time: 0.033\n"
             "0 1 0 0 0 0 10 20 30\n0 1.1 0 1 2 3 11 21 31\n")
    return [limbik.format_bvh(walk), small, small.replace("\n", "\r\n")]


def mutate_text(text: str, rng: random.Random) -> str:
    """One to four random edits: tokens swapped for hostile ones, lines dropped,
    duplicated or cut, characters inserted, the file truncated."""
    lines = text.splitlines(keepends=True) or [""]
    for _ in range(rng.choice([1, 1, 1, 2, 3, 4])):
        kind = rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 7, 7])
        if kind == 7:  # a plausible number anywhere in the float range
            i = rng.randrange(len(lines))
            words = lines[i].split(" ")
            j = rng.randrange(len(words))
            if any(c.isdigit() for c in words[j]):
                words[j] = repr(rng.uniform(-2, 2) * 10.0 ** rng.randint(-320, 308))
                lines[i] = " ".join(words)
            continue
        i = rng.randrange(len(lines))
        words = lines[i].split(" ")
        if kind == 0:
            words[rng.randrange(len(words))] = rng.choice(HOSTILE_NUMBERS)
            lines[i] = " ".join(words)
        elif kind == 1:
            words[rng.randrange(len(words))] = rng.choice(HOSTILE_WORDS)
            lines[i] = " ".join(words)
        elif kind == 2 and len(lines) > 1:
            del lines[i]
        elif kind == 3:
            lines.insert(i, lines[i] * rng.randint(1, 3))
        elif kind == 4:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut]
        elif kind == 5:
            pos = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:pos] + chr(rng.choice([0, 9, 10, 13, 32, 0x85, 0x661, 0x2028,
                                                        0xFEFF, rng.randrange(32, 0x3000)])) \
                + lines[i][pos:]
        else:
            lines = lines[: rng.randrange(len(lines)) + 1]
    return "".join(lines)


def _check_motion(motion: limbik.Motion) -> str | None:
    for name in ("root_positions", "rotations"):
        if not np.all(np.isfinite(getattr(motion, name))):
            return f"non-finite {name}"
    again = limbik.parse_bvh(limbik.format_bvh(motion))
    if again.num_frames != motion.num_frames or again.names != motion.names:
        return "format_bvh output does not read back the same"
    return None


def check_bvh_text(text: str) -> str | None:
    """None when ``parse_bvh`` keeps its promise on ``text``, else what went wrong."""
    try:
        motion = limbik.parse_bvh(text)
    except BVHParseError as exc:
        lines = len(text.splitlines()) + 1
        return None if 0 < exc.line <= lines else f"line {exc.line} outside 1..{lines}"
    except Exception as exc:  # the promise is broken: report, do not stop
        return f"{type(exc).__name__}: {exc}"[:200]
    try:
        return _check_motion(motion)
    except Exception as exc:
        return f"after parsing, {type(exc).__name__}: {exc}"[:200]


def fuzz_bvh(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    seeds = _seed_bvh_texts()
    failures = []
    for case in range(count):
        text = mutate_text(rng.choice(seeds), rng)
        problem = check_bvh_text(text)
        if problem is not None:
            failures.append(f"bvh seed={seed} case={case}: {problem}")
    return failures


URDF_SEED = (
    '<?xml version="1.0"?>\n<robot name="r">\n<link name="a"/>\n<link name="b"/>\n'
    '<link name="c"/>\n<link name="d"/>\n'
    '<joint name="j1" type="revolute">\n<parent link="a"/>\n<child link="b"/>\n'
    '<origin xyz="0 0 0.3" rpy="0 0 0"/>\n<axis xyz="0 0 1"/>\n'
    '<limit lower="-2.9" upper="2.9"/>\n</joint>\n'
    '<joint name="j2" type="prismatic">\n<parent link="b"/>\n<child link="c"/>\n'
    '<origin xyz="0 0 0.3" rpy="0.1 0.2 0.3"/>\n<axis xyz="0 1 0"/>\n'
    '<limit lower="-0.5" upper="0.5"/>\n</joint>\n'
    '<joint name="j3" type="continuous">\n<parent link="c"/>\n<child link="d"/>\n'
    '<origin xyz="0.3 0 0"/>\n<axis xyz="1 0 0"/>\n</joint>\n</robot>\n')
URDF_HOSTILE = ['encoding="klingon"', "&lol;", "<!DOCTYPE r [<!ENTITY lol 'lol'>]>",
                'type="floating"', 'type="revolute"', "xyz=\"1e160 0 0\"", 'lower="1e400"',
                "<joint>", "</robot>", "<robot>", "<![CDATA[x]]>", "<?pi x?>"]


def check_urdf_text(text: str | bytes) -> str | None:
    try:
        chain = limbik.parse_urdf(text, "a", "d")
    except URDFError:
        return None
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:200]
    try:
        if not np.isfinite(chain.reach):
            return "infinite reach"
        solution = limbik.jacobian_ik(chain, [0.2, 0.1, 0.4], max_iterations=30, restarts=0)
        q = np.asarray(solution.q)
        if not (np.all(np.isfinite(solution.positions)) and np.isfinite(float(solution.error))):
            return "non-finite solution"
        if np.any(q < chain.lower - 1e-9) or np.any(q > chain.upper + 1e-9):
            return "q outside the joint limits"
    except LimbikError:
        return None
    except Exception as exc:
        return f"after parsing, {type(exc).__name__}: {exc}"[:200]
    return None


def fuzz_urdf(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    failures = []
    for case in range(count):
        text = URDF_SEED
        for _ in range(rng.randint(1, 3)):
            numbers = list(re.finditer(r"-?[0-9.]+", text))
            if numbers and rng.random() < 0.6:  # one value, anywhere in the float range
                m = rng.choice(numbers)
                value = (repr(rng.uniform(-2, 2) * 10.0 ** rng.randint(-320, 308))
                         if rng.random() < 0.7 else rng.choice(HOSTILE_NUMBERS))
                text = text[:m.start()] + value + text[m.end():]
            elif rng.random() < 0.5:
                text = mutate_text(text, rng)
            else:
                pos = rng.randrange(len(text) + 1)
                text = text[:pos] + rng.choice(URDF_HOSTILE) + text[pos:]
        data: str | bytes = text
        if rng.random() < 0.3:
            data = text.encode(rng.choice(["utf-8", "utf-16", "latin-1"]), errors="replace")
        problem = check_urdf_text(data)
        if problem is not None:
            failures.append(f"urdf seed={seed} case={case}: {problem}")
    return failures


def _hostile_value(rng: random.Random) -> object:
    return rng.choice([1e308, -1e308, 1e-320, 0, -1, 10**400, "1.5", True, None, [], {},
                       [1, 2], [[1], [1, 2]], [1e308] * 3, [0, 0, 0], "abc", 3.5, [1, "a", 2],
                       [float(rng.uniform(-2, 2)) for _ in range(3)], 2**63, -(2**63)])


def problem_json(rng: random.Random) -> str:
    problem: dict[str, object] = {"target": [rng.uniform(-2, 2) for _ in range(3)]}
    if rng.random() < 0.9:
        problem["lengths"] = [rng.uniform(0.1, 1.0) for _ in range(rng.randint(2, 5))]
    keys = ["target", "lengths", "method", "root", "direction", "pole", "reference",
            "unreachable", "max_stretch", "tolerance", "max_iterations", "damping", "q0",
            "urdf", "base", "tip", "bogus"]
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(keys)
        problem[key] = (rng.choice(["two_bone", "fabrik", "ccd", "dls", "svd-dls", "nope"])
                        if key == "method" and rng.random() < 0.7 else _hostile_value(rng))
    text = json.dumps(problem)
    if rng.random() < 0.1:
        text = "[" * rng.randint(1000, 100_000)
    return text


def fuzz_problem_json(seed: int, count: int) -> list[str]:
    from limbik.app.cli import main

    rng = random.Random(seed)
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "problem.json"
        for case in range(count):
            text = problem_json(rng)
            data = text.encode()
            if rng.random() < 0.1:
                data = data[: rng.randrange(len(data) + 1)] + bytes([rng.randrange(128, 256)])
            path.write_bytes(data)
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = main(["solve", str(path)])
            except Exception as exc:
                failures.append(f"json seed={seed} case={case}: {type(exc).__name__}: {exc}"
                                f" for {text[:120]}")
                continue
            if code not in (0, 1) or "Traceback" in err.getvalue():
                failures.append(f"json seed={seed} case={case}: exit {code} for {text[:120]}")
    return failures


def hostile_bvh_files() -> dict[str, str]:
    """Small files (< 1 MB) that once cost gigabytes or minutes."""
    root = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n"
    many = "".join(f"JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n}}\n" for i in range(20_000))
    deep = "".join(f"JOINT d{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n" for i in range(20_000))
    return {
        "frames 1e7, no channels": "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\n"
                                   "MOTION\nFrames: 10000000\nFrame Time: 0.1\n",
        "frames 1e9": "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
                      "MOTION\nFrames: 1000000000\nFrame Time: 0.1\n0\n",
        "joint name of 900 kB": "HIERARCHY\nROOT " + "a " * 450_000 + "\n{\nOFFSET 0 0 0\n"
                                "CHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\nFrame Time: 1\n0\n",
        "20000 joints x 100000 frames": root + many[:600_000].rsplit("JOINT", 1)[0]
        + "}\nMOTION\nFrames: 100000\nFrame Time: 0.1\n" + "0\n" * 100_000,
        "20000 nested joints": root + deep + "}" * 20_001 + "\nMOTION\nFrames: 1\n"
                               "Frame Time: 1\n0\n",
    }


# ---------------------------------------------------------------------------- glTF
GLTF_SEEDS = ("mixamo_rig.glb", "cmu_walk.glb")  # made by Blender (tests/data/README.md)
GLTF_HOSTILE = [-1, 0, 1, 2, 3, 2**31, 2**40, 2**63, -(2**63), 10**400, 1e308, 1e200, 1e-320,
                0.5, "x", "", None, [], {}, [0], [1e308] * 16, [1e200] * 4, True, "SCALAR",
                "VEC4", "MAT4", "CUBICSPLINE", "STEP", 5126, 5121, 5123, 5125, 5120]
_GLB_JSON, _GLB_BIN = 0x4E4F534A, 0x004E4942


def glb_parts(raw: bytes) -> tuple[dict, bytearray]:
    """The JSON document and binary chunk of a GLB file."""
    (n,) = struct.unpack("<I", raw[12:16])
    rest = raw[20 + n:]
    (length,) = struct.unpack("<I", rest[:4])
    return json.loads(raw[20:20 + n]), bytearray(rest[8:8 + length])


def glb_bytes(document: object, blob: bytes) -> bytes:
    """A GLB file of a JSON document (any JSON: NaN and huge ints included) and a blob."""
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    blob = bytes(blob) + b"\0" * (-len(blob) % 4)
    body = (struct.pack("<II", len(text), _GLB_JSON) + text
            + struct.pack("<II", len(blob), _GLB_BIN) + blob)
    return b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body


def _json_paths(node: object, prefix: tuple = ()) -> list[tuple]:
    out: list[tuple] = []
    items = (node.items() if isinstance(node, dict)
             else enumerate(node) if isinstance(node, list) else ())
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(_json_paths(value, prefix + (key,)))
    return out


def mutate_glb(raw: bytes, rng: random.Random) -> bytes:
    """One to three edits: a JSON field of the accessors, views, nodes, skins or
    animations set to a hostile value or removed, bytes of the binary chunk changed,
    or the file cut short."""
    document, blob = glb_parts(raw)
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.random()
        if kind < 0.6:
            paths = [p for p in _json_paths(document) if p[0] in (
                "accessors", "bufferViews", "buffers", "nodes", "skins", "animations", "scenes")]
            path = rng.choice(paths)
            parent: Any = document
            for key in path[:-1]:
                parent = parent[key]
            if rng.random() < 0.15:
                del parent[path[-1]]
            else:
                parent[path[-1]] = rng.choice(GLTF_HOSTILE)
        elif kind < 0.85 and blob:
            for _ in range(rng.randrange(1, 20)):
                blob[rng.randrange(len(blob))] = rng.randrange(256)
        else:
            return glb_bytes(document, blob)[: rng.randrange(len(raw))]
    return glb_bytes(document, blob)


def check_glb_bytes(data: bytes, folder: Path) -> str | None:
    """None when ``read_gltf`` keeps its promise on ``data``: a Motion with finite arrays
    that writes back into the same file, or a ``LimbikError``; never a NumPy warning."""
    path = folder / "fuzzed.glb"
    path.write_bytes(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            motion = limbik.read_gltf(path)
            for name in ("root_positions", "rotations"):
                if not np.all(np.isfinite(getattr(motion, name))):
                    return f"non-finite {name}"
            limbik.write_gltf(motion, folder / "written.glb", source=path)
            again = limbik.read_gltf(folder / "written.glb")
            if again.num_frames != motion.num_frames or again.names != motion.names:
                return "write_gltf output does not read back the same"
    except LimbikError:
        return None
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def fuzz_gltf(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    seeds = [(DATA / name).read_bytes() for name in GLTF_SEEDS]
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for case in range(count):
            problem = check_glb_bytes(mutate_glb(rng.choice(seeds), rng), Path(folder))
            if problem is not None:
                failures.append(f"gltf seed={seed} case={case}: {problem}")
    return failures


def hostile_glb_files() -> dict[str, bytes]:
    """Small GLB files whose numbers ask for gigabytes."""
    raw = (DATA / "cmu_walk.glb").read_bytes()
    document, blob = glb_parts(raw)
    out = {}
    times = next(s["input"] for a in document["animations"] for s in a["samplers"])
    far = copy.deepcopy(document)  # keys 1e9 s apart at the clip's frame rate
    far["accessors"][times]["max"] = [1e9]
    far_blob = bytearray(blob)
    view = far["bufferViews"][far["accessors"][times]["bufferView"]]
    at = view.get("byteOffset", 0) + far["accessors"][times].get("byteOffset", 0)
    count = far["accessors"][times]["count"]
    far_blob[at + 4 * (count - 1):at + 4 * count] = struct.pack("<f", 1e9)
    out["keyframes 1e9 s apart"] = glb_bytes(far, far_blob)
    zeros = copy.deepcopy(document)  # an accessor of 2^40 zeros
    for accessor in zeros["accessors"]:
        accessor.pop("bufferView", None)
        accessor["count"] = 2**40
    out["2^40 zeros"] = glb_bytes(zeros, blob)
    return out


FUZZERS: dict[str, Callable[[int, int], list[str]]] = {
    "bvh": fuzz_bvh, "urdf": fuzz_urdf, "json": fuzz_problem_json, "gltf": fuzz_gltf}


# --------------------------------------------------------------------------- solvers
def straight_chain(rng: np.random.Generator, scale: float = 1.0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """A straight chain of 3-8 joints at a random place and direction, and a target on its
    line (a third of them up to 1e-9 of the reach off it) inside its reach."""
    n = int(rng.integers(3, 9))
    lengths = rng.uniform(0.1, 2.0, n - 1)
    total = lengths.sum()
    inner = max(0.0, 2.0 * lengths.max() - total)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    root = rng.normal(size=3)
    pose = root + np.concatenate([[0.0], np.cumsum(lengths)])[:, None] * u
    distance = rng.uniform(inner + 1e-6 * total, total * (1.0 - 1e-6))
    target = root + rng.choice([-1.0, 1.0]) * distance * u
    if rng.random() < 1 / 3:
        off = np.cross(u, rng.normal(size=3))
        target = target + rng.uniform(0.0, 1e-9) * total * off / np.linalg.norm(off)
    return pose * scale, target * scale


def fuzz_line_targets(seed: int, count: int) -> list[str]:
    """Straight chains with their target on their own line inside reach: ``fabrik`` and
    point-chain ``ccd`` (default options) reach every one."""
    rng = np.random.default_rng(seed)
    failures = []
    for case in range(count):
        pose, target = straight_chain(rng, 2.0 ** float(rng.integers(-60, 61)))
        for name, solve in (("fabrik", limbik.fabrik), ("ccd", limbik.ccd)):
            s = solve(pose, target)
            if not s.reached:
                failures.append(f"line {seed}/{case}: {name} left error {float(s.error)!r} "
                                f"for pose {pose.tolist()} target {target.tolist()}")
    return failures


def _element_matches(alone: Any, batch: Any, k: int, size: float, pose: np.ndarray,
                     parents: np.ndarray | None = None) -> str | None:
    """Why batch element ``k`` differs from its solve ``alone`` (None when it does not)."""
    p = batch.positions[k]
    if not np.isfinite(p).all():
        return "non-finite positions"
    if np.abs(p - alone.positions).max() > 1e-9 * size:
        return f"positions {np.abs(p - alone.positions).max() / size:.3g} sizes off"
    p, pose = p / size, pose / size  # exact enough, and no overflow below
    if parents is None:
        bones, given = np.diff(p, axis=0), np.diff(pose, axis=0)
    else:
        bones, given = p[1:] - p[parents[1:]], pose[1:] - pose[parents[1:]]
    if np.abs(np.linalg.norm(bones, axis=-1) - np.linalg.norm(given, axis=-1)).max() > 1e-9:
        return "bone lengths changed"
    if abs(float(batch.error[k]) - float(alone.error)) > 1e-9 * size:
        return f"error {float(batch.error[k])!r}, alone {float(alone.error)!r}"
    if bool(batch.reached[k]) != bool(alone.reached):
        return f"reached {bool(batch.reached[k])}, alone {bool(alone.reached)}"
    return None


def fuzz_mixed_scales(seed: int, count: int) -> list[str]:
    """Batches of 2-4 problems of sizes from 1e-250 to 1e250 (subnormal included):
    ``two_bone``, ``fabrik``, point-chain ``ccd`` and ``FabrikTree`` give each element
    what it gets alone, within 1e-9 of its own size, finite, with its bone lengths."""
    rng = np.random.default_rng(seed)
    failures = []
    tree_parents = np.array([-1, 0, 1, 2, 1, 4])
    for case in range(count):
        m = int(rng.integers(2, 5))
        scales = 10.0 ** rng.uniform(-250, 250, m)
        if rng.random() < 0.2:
            scales[0] = 1e-310
        solver = ("two_bone", "fabrik", "ccd", "tree")[case % 4]
        poses, targets = [], []
        for s in scales:
            if solver == "tree":
                pose = np.cumsum(rng.normal(size=(6, 3)), axis=0)
                pose = pose[tree_parents.clip(0)] * (tree_parents >= 0)[:, None] + (
                    rng.normal(size=(6, 3)))
                pose[0] = 0.0
                target = pose[[3, 5]] + rng.normal(scale=0.5, size=(2, 3))
            else:
                pose = np.cumsum(rng.normal(size=(4 if solver != "two_bone" else 3, 3)),
                                 axis=0)
                target = pose[0] + rng.normal(size=3) * 1.5
            poses.append(pose * s)
            targets.append(target * s)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                if solver == "two_bone":
                    up = np.array([np.linalg.norm(p[1] / s - p[0] / s) * s
                                   for s, p in zip(scales, poses, strict=True)])
                    low = np.array([np.linalg.norm(p[2] / s - p[1] / s) * s
                                    for s, p in zip(scales, poses, strict=True)])
                    roots = np.array([p[0] for p in poses])
                    batch = limbik.two_bone(roots, np.array(targets), up, low)
                    alone = [limbik.two_bone(roots[k], targets[k], up[k], low[k])
                             for k in range(m)]
                elif solver == "tree":
                    batch = limbik.FabrikTree(tree_parents, np.array(poses)).solve(
                        {3: np.array(targets)[:, 0], 5: np.array(targets)[:, 1]})
                    alone = [limbik.FabrikTree(tree_parents, poses[k]).solve(
                        {3: targets[k][0], 5: targets[k][1]}) for k in range(m)]
                else:
                    solve = limbik.fabrik if solver == "fabrik" else limbik.ccd
                    batch = solve(np.array(poses), np.array(targets))
                    alone = [solve(poses[k], targets[k]) for k in range(m)]
        except Exception as e:  # a fuzzer reports every failure
            failures.append(f"scales {seed}/{case} {solver}: {type(e).__name__}: {e}")
            continue
        for k in range(m):
            size = float(np.abs(np.concatenate([poses[k].ravel(), np.ravel(targets[k])])).max())
            why = _element_matches(alone[k], batch, k, size,
                                   poses[k] if solver != "two_bone" else alone[k].positions,
                                   tree_parents if solver == "tree" else None)
            if why:
                failures.append(f"scales {seed}/{case} {solver} element {k} of scales "
                                f"{scales.tolist()}: {why}")
    return failures


FUZZERS["line"] = fuzz_line_targets
FUZZERS["scales"] = fuzz_mixed_scales
