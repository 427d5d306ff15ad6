"""Blender imports what ``limbik footplant in.glb -o out.glb`` writes, and its own
evaluation of the planted animation puts every joint where limbik does, within 1e-4
of a leg. Skipped when ``blender`` is not on PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest
from gltf_helpers import DATA, leg_length

from limbik.app.cli import main
from limbik.io import read_gltf

# Import a GLB at a given frame rate, make the named action active, evaluate pose-bone
# heads in world space (Blender's Z up) at frames first, first + 1, ...
BLENDER_SCRIPT = r"""
import json, sys
import bpy
path, fps, action, first, count = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps, scene.render.fps_base = int(fps), 1.0
bpy.ops.import_scene.gltf(filepath=path)
arm = next(o for o in scene.objects if o.type == "ARMATURE")
acts = [a for a in bpy.data.actions if a.name.startswith(action)]
arm.animation_data.action = acts[0]
frames = []
for f in range(int(count)):
    scene.frame_set(int(first) + f)
    frames.append([list(arm.matrix_world @ b.head) for b in arm.pose.bones])
print("LIMBIK-JSON" + json.dumps({"names": [b.name for b in arm.pose.bones],
                                  "actions": [a.name for a in bpy.data.actions],
                                  "frames": frames}))
"""


def blender_with_numpy(exe):
    """Extra arguments and environment under which Blender's Python imports NumPy, which
    its glTF importer needs: none where its own Python has it; else this environment's
    packages, where both Pythons are one version (Debian's Blender uses the system
    Python, which may lack python3-numpy)."""
    probe = subprocess.run(
        [exe, "-b", "--factory-startup", "--python-expr",
         "import sys; print('LIMBIK-PY', *sys.version_info[:2]); import numpy; print('LIMBIK-NP')"],
        capture_output=True, text=True, timeout=300, check=False)
    if "LIMBIK-NP" in probe.stdout:
        return [], None
    version = [ln.split()[1:] for ln in probe.stdout.splitlines() if ln.startswith("LIMBIK-PY")]
    if version != [[str(v) for v in sys.version_info[:2]]]:
        pytest.skip(f"Blender's Python ({version}) has no NumPy, which its glTF importer needs, "
                    "and this environment's packages are for another Python")
    paths = sysconfig.get_paths()
    return (["--python-use-system-env"],
            {**os.environ, "PYTHONPATH": os.pathsep.join([paths["purelib"], paths["platlib"]])})


def blender_positions(path, fps, action, first, count):
    exe = shutil.which("blender")
    if exe is None:
        pytest.skip("blender is not on PATH (Debian: apt-get install blender)")
    extra, env = blender_with_numpy(exe)
    done = subprocess.run(
        [exe, "-b", "--factory-startup", *extra, "--python-expr", BLENDER_SCRIPT, "--",
         str(path), str(fps), action, str(first), str(count)],
        capture_output=True, text=True, timeout=300, check=False, env=env)
    marker = [ln for ln in done.stdout.splitlines() if ln.startswith("LIMBIK-JSON")]
    assert marker, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(marker[0][len("LIMBIK-JSON"):])


@pytest.mark.parametrize(("name", "animation"), [("cmu_walk", None), ("mixamo_rig", "Walk")])
def test_blender_imports_the_planted_glb_with_limbiks_joint_positions(tmp_path, capsys,
                                                                       name, animation):
    out = tmp_path / "planted.glb"
    argv = ["footplant", str(DATA / f"{name}.glb"), "-o", str(out), "--no-progress"]
    assert main([*argv, "--animation", animation] if animation else argv) == 0
    planted = read_gltf(out, animation=animation)
    reference = json.loads((DATA / f"{name}.json").read_text())
    action = animation or next(iter(reference["animations"]))
    first = reference["animations"][action]["frames"][0]  # glTF time = frame / fps
    fps = round(planted.frame_rate)
    got = blender_positions(out, fps, action, first, planted.num_frames)
    ours = planted.world_positions()[:, [planted.names.index(n) for n in got["names"]]]
    b = np.array(got["frames"])
    theirs = np.stack([b[..., 0], b[..., 2], -b[..., 1]], axis=-1)
    err = np.abs(ours - theirs).max()
    assert err < 1e-4 * leg_length(planted), err
