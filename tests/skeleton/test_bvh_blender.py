"""Blender's BVH importer (the reference client) reads limbik-written files with the
same joint world positions, within 1e-4.

Blender converts BVH's Y-up to its Z-up on import (``axis_forward='-Z'``,
``axis_up='Y'``, the defaults): a BVH point (x, y, z) becomes (x, -z, y). Scale 1.
It replaces spaces in joint names with underscores. Blender 3.4's importer opens
files with mode ``"rU"``, which Python 3.11 rejects, so the script below strips the
``U`` before importing. Skipped when ``blender`` is not on PATH.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from bvh_samples import corner_case_bvh

import limbik

BLENDER_SCRIPT = r"""
import builtins, json, sys
import bpy
import io_anim_bvh.import_bvh as importer
importer.open = lambda f, mode="r", *a, **k: builtins.open(f, mode.replace("U", ""), *a, **k)
args = sys.argv[sys.argv.index("--") + 1:]
out = {}
for path in args[1:]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=path, frame_start=1)
    arm = bpy.context.object
    scene = bpy.context.scene
    frames = []
    for f in range(int(args[0])):
        scene.frame_set(1 + f)
        frames.append([list(arm.matrix_world @ b.head) for b in arm.pose.bones])
    out[path] = {"names": [b.name for b in arm.pose.bones], "frames": frames}
print("LIMBIK-JSON" + json.dumps(out))
"""

FRAMES = 8


def blender_positions(paths):
    exe = shutil.which("blender")
    if exe is None:
        pytest.skip("blender is not on PATH (Debian: apt-get install blender)")
    done = subprocess.run(
        [exe, "-b", "--factory-startup", "--python-expr", BLENDER_SCRIPT, "--",
         str(FRAMES), *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=False)
    marker = [ln for ln in done.stdout.splitlines() if ln.startswith("LIMBIK-JSON")]
    assert marker, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(marker[0][len("LIMBIK-JSON"):])


def test_blender_imports_written_bvh_with_same_world_positions(tmp_path):
    from conftest import SHARED_DATA

    motions = {}
    for path in sorted((SHARED_DATA / "bvh").glob("*.bvh")):
        motions[path.stem] = limbik.trim(limbik.read_bvh(path), 0, FRAMES)
    corner = limbik.parse_bvh(corner_case_bvh(frames=FRAMES, seed=11))
    motions["corner_cases"] = corner
    if "xia_neutral_walk_01_000" in motions:  # a motion changed by applying IK
        m = motions["xia_neutral_walk_01_000"]
        leg, _ = limbik.find_legs(m.skeleton)
        pos = m.world_positions()
        knee_turn = np.array([np.sin(0.2), 0.0, 0.0, np.cos(0.2)])
        from limbik.geometry import rotate_vectors

        knee = pos[:, leg.hip] + rotate_vectors(knee_turn, pos[:, leg.knee] - pos[:, leg.hip])
        motions["applied_ik"] = limbik.apply_ik(m, {leg.knee: knee})
    files = {}
    for name, motion in motions.items():
        files[name] = tmp_path / f"{name}.bvh"
        limbik.write_bvh(motion, files[name])
    result = blender_positions(files.values())
    for name, motion in motions.items():
        got = result[str(files[name])]
        ours = motion.world_positions()
        blender_names = [n.replace(" ", "_") for n in motion.names]
        index = [blender_names.index(n) for n in got["names"]]
        assert len(index) == motion.num_joints
        ours = ours[:, index]
        expected = np.stack([ours[..., 0], -ours[..., 2], ours[..., 1]], axis=-1)
        err = np.abs(np.array(got["frames"]) - expected).max()
        print(f"blender {name}: max |Δ| = {err:.2e}")
        assert err < 1e-4, (name, err)
