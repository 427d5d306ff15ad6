"""The Blender add-on, installed into Blender headless from the zip that
``limbik blender-addon`` writes: it plants a BVH-imported armature's action, and the
pose bones land where limbik's own footplant puts the joints, within 1e-4 of a leg;
its two-bone IK puts the chosen bone on its target. Skipped without ``blender``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from limbik.app.cli import main
from limbik.io import read_bvh, write_bvh
from limbik.placement.footplant import footplant
from limbik.placement.terrain import Terrain
from limbik.placement.walk import walk_cycle
from limbik.skeleton import find_legs

SRC = Path(__file__).resolve().parents[2] / "src"

# argv: addon zip, bvh, output json; runs the three cases in one Blender session
BLENDER_SCRIPT = r"""
import builtins, json, sys
import bpy
import io_anim_bvh.import_bvh as importer
importer.open = lambda f, mode="r", *a, **k: builtins.open(f, mode.replace("U", ""), *a, **k)
addon, bvh, out = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.preferences.addon_install(filepath=addon, overwrite=True)
results = {}
for mode in ("plant", "mesh", "ik"):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.preferences.addon_enable(module="limbik_blender")
    bpy.ops.import_anim.bvh(filepath=bvh, frame_start=1, update_scene_fps=True,
                            update_scene_duration=True)
    arm = bpy.context.object
    scene = bpy.context.scene
    if mode == "plant":
        result = bpy.ops.limbik.footplant()
    elif mode == "mesh":
        bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, 0.05))
        ground = bpy.context.active_object.name
        bpy.context.view_layer.objects.active = arm
        result = bpy.ops.limbik.footplant(ground=ground)
    else:
        bpy.ops.object.mode_set(mode="POSE")
        bone = arm.pose.bones["LeftAnkle"]
        arm.data.bones.active = bone.bone
        scene.cursor.location = (0.1, 0.3, 0.12)
        result = bpy.ops.limbik.two_bone_ik()
        bpy.ops.object.mode_set(mode="OBJECT")
    first, last = (int(round(v)) for v in arm.animation_data.action.frame_range)
    frames = []
    for f in range(first, last + 1):
        scene.frame_set(f)
        frames.append([list(arm.matrix_world @ b.head) for b in arm.pose.bones])
    results[mode] = {"result": list(result), "action": arm.animation_data.action.name,
                     "names": [b.name for b in arm.pose.bones], "frames": frames}
json.dump(results, open(out, "w"))
"""


@pytest.fixture(scope="module")
def blender_results(tmp_path_factory):
    """The add-on's results on the built-in walk written as BVH: plant, mesh, ik."""
    exe = shutil.which("blender")
    if exe is None:
        pytest.skip("blender is not on PATH (Debian: apt-get install blender)")
    if sys.version_info[:2] != (3, 11):
        pytest.skip("Debian's Blender 3.4 runs Python 3.11; this environment's packages "
                    f"are for {sys.version_info[0]}.{sys.version_info[1]}")
    tmp = tmp_path_factory.mktemp("addon")
    bvh = tmp / "walk.bvh"
    write_bvh(walk_cycle(), bvh)
    addon = tmp / "limbik_addon.zip"
    assert main(["blender-addon", "-o", str(addon)]) == 0
    paths = sysconfig.get_paths()
    env = {**os.environ, "BLENDER_USER_SCRIPTS": str(tmp / "scripts"),
           "BLENDER_USER_CONFIG": str(tmp / "config"),
           "PYTHONPATH": os.pathsep.join([str(SRC), paths["purelib"], paths["platlib"]])}
    out = tmp / "blender.json"
    done = subprocess.run(
        [exe, "-b", "--factory-startup", "--python-use-system-env", "--python-expr",
         BLENDER_SCRIPT, "--", str(addon), str(bvh), str(out)],
        capture_output=True, text=True, timeout=600, check=False, env=env)
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return read_bvh(bvh), json.loads(out.read_text())


def _in_limbik_frame(got, motion):
    b = np.array(got["frames"])
    theirs = np.stack([b[..., 0], b[..., 2], -b[..., 1]], axis=-1)
    index = [got["names"].index(n) for n in motion.names]
    return theirs[:, index]


def _leg(motion):
    legs = find_legs(motion.skeleton)
    lengths = motion.skeleton.bone_lengths()
    return float(np.mean([lengths[lg.knee] + lengths[lg.ankle] for lg in legs]))


def test_addon_plants_a_bvh_imported_action_like_limbik(blender_results):
    source, results = blender_results
    got = results["plant"]
    assert got["result"] == ["FINISHED"]
    assert got["action"].endswith("_planted")
    expected, _ = footplant(source, Terrain.flat(0.0), legs=find_legs(source.skeleton))
    ours = expected.world_positions()
    theirs = _in_limbik_frame(got, source)
    assert theirs.shape == ours.shape
    assert np.abs(theirs - ours).max() < 1e-4 * _leg(source)
    # and planting changed the clip: the feet were not on Z = 0 before
    assert np.abs(ours - source.world_positions()).max() > 1e-3 * _leg(source)


def test_addon_plants_on_a_mesh_used_as_a_height_field(blender_results):
    """A plane 5 cm above the scene's ground, sampled by rays, plants the clip as limbik
    plants it on flat ground at that height."""
    source, results = blender_results
    got = results["mesh"]
    assert got["result"] == ["FINISHED"]
    expected, _ = footplant(source, Terrain.flat(0.05), legs=find_legs(source.skeleton))
    theirs = _in_limbik_frame(got, source)
    assert np.abs(theirs - expected.world_positions()).max() < 1e-4 * _leg(source)


def test_addon_two_bone_ik_reaches_the_cursor(blender_results):
    source, results = blender_results
    got = results["ik"]
    assert got["result"] == ["FINISHED"]
    theirs = _in_limbik_frame(got, source)
    ankle = source.names.index("LeftAnkle")
    target = np.array([0.1, 0.12, -0.3])  # the cursor (0.1, 0.3, 0.12), Y up
    hip = theirs[:, source.skeleton.parents[source.skeleton.parents[ankle]]]
    reach = np.linalg.norm(target - hip, axis=-1)
    lengths = source.skeleton.bone_lengths()
    reachable = reach < lengths[source.skeleton.parents[ankle]] + lengths[ankle] - 1e-6
    assert reachable.any()
    err = np.linalg.norm(theirs[:, ankle] - target, axis=-1)
    assert err[reachable].max() < 1e-4 * _leg(source)
    # joints outside the leg keep their animation
    other = source.names.index("RightAnkle")
    assert np.abs(theirs[:, other] - source.world_positions()[:, other]).max() < (
        1e-4 * _leg(source))
