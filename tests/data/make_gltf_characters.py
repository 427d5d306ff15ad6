"""Make the small glTF test characters with Blender, and Blender's own joint positions.

Run from the project root (Debian's Blender 3.4 works):

    blender -b --factory-startup --python tests/data/make_gltf_characters.py -- \
        /path/to/shared/data/bvh tests/data

Writes, in the output folder:

- ``cmu_walk.glb``: the first 12 frames of ``cmu_131_01_start_walk_stop_meters.bvh``
  (120 fps), imported with Blender's BVH importer, with a small skinned mesh (a
  tetrahedron at each bone's head, weighted to that bone); exported Y up.
- ``xia_walk.glb``: frames 10 to 21 of ``xia_neutral_walk_01_000.bvh``, the same way.
- ``mixamo_rig.glb``: a Mixamo-style rig built here (``mixamorig:Hips``,
  ``mixamorig:LeftUpLeg``, ``LeftLeg``, ``LeftFoot``, ``LeftToeBase``, ...), bones in
  centimetres under an armature object scaled by 0.01 and turned 90° about X (as an
  FBX import from Mixamo is), with a skinned mesh and two actions, ``Walk`` (24
  frames at 30 fps, keyed sparsely with Bézier curves) and ``Idle``.
- ``<name>.json`` beside each file: Blender's evaluation of every pose bone's head
  in world space (Blender's Z-up), per frame and animation.
"""

import builtins
import json
import math
import sys
from pathlib import Path

import bpy
import io_anim_bvh.import_bvh as bvh_importer
from mathutils import Quaternion, Vector

# Blender 3.4's BVH importer opens files with mode "rU", which Python 3.11 rejects.
bvh_importer.open = lambda f, mode="r", *a, **k: builtins.open(f, mode.replace("U", ""), *a, **k)

args = sys.argv[sys.argv.index("--") + 1:]
BVH_DIR, OUT = Path(args[0]), Path(args[1])


def skin_mesh(arm, size):
    """A tetrahedron at each bone head, weighted fully to that bone."""
    verts, faces, groups = [], [], []
    for bone in arm.data.bones:
        h = bone.head_local
        base = len(verts)
        for d in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, -1, -1)):
            verts.append(tuple(h[i] + size * d[i] for i in range(3)))
        faces += [(base, base + 1, base + 2), (base, base + 1, base + 3),
                  (base, base + 2, base + 3), (base + 1, base + 2, base + 3)]
        groups.append(bone.name)
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(obj)
    for k, name in enumerate(groups):
        vg = obj.vertex_groups.new(name=name)
        vg.add([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3], 1.0, "REPLACE")
    obj.parent = arm
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    return obj


def positions(arm, frames):
    scene = bpy.context.scene
    out = []
    for f in frames:
        scene.frame_set(f)
        out.append([list(arm.matrix_world @ b.head) for b in arm.pose.bones])
    return out


def export(path):
    bpy.ops.export_scene.gltf(filepath=str(path), export_format="GLB", export_yup=True,
                              export_animations=True, export_force_sampling=True,
                              export_frame_range=True, export_nla_strips=True,
                              export_materials="NONE", export_optimize_animation_size=False)


def bvh_character(source, name, first, count):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=str(BVH_DIR / source), frame_start=1,
                            update_scene_fps=True, update_scene_duration=True)
    arm = bpy.context.object
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = first, first + count - 1
    for curve in arm.animation_data.action.fcurves:  # keep the chosen frames only
        points = curve.keyframe_points
        for k in range(len(points) - 1, -1, -1):
            if not first <= points[k].co[0] <= first + count - 1:
                points.remove(points[k], fast=True)
        curve.update()
    legs = [b for b in arm.data.bones if "Leg" in b.name or "Knee" in b.name]
    skin_mesh(arm, 0.2 * (legs[0].length if legs else 0.3))
    frames = list(range(first, first + count))
    reference = {"fps": scene.render.fps / scene.render.fps_base, "source": source,
                 "names": [b.name for b in arm.pose.bones],
                 "animations": {arm.animation_data.action.name: {
                     "frames": frames, "positions": positions(arm, frames)}}}
    export(OUT / f"{name}.glb")
    (OUT / f"{name}.json").write_text(json.dumps(reference))


MIXAMO = [  # name, parent, head (armature space: Y up, centimetres)
    ("Hips", None, (0, 100, 0)), ("Spine", "Hips", (0, 110, 1)),
    ("Spine1", "Spine", (0, 122, 1)), ("Spine2", "Spine1", (0, 135, 0)),
    ("Neck", "Spine2", (0, 150, 0)), ("Head", "Neck", (0, 160, 2)),
    ("HeadTop_End", "Head", (0, 180, 2)),
    ("LeftShoulder", "Spine2", (6, 145, 0)), ("LeftArm", "LeftShoulder", (17, 145, 0)),
    ("LeftForeArm", "LeftArm", (43, 145, 0)), ("LeftHand", "LeftForeArm", (67, 145, 0)),
    ("RightShoulder", "Spine2", (-6, 145, 0)), ("RightArm", "RightShoulder", (-17, 145, 0)),
    ("RightForeArm", "RightArm", (-43, 145, 0)), ("RightHand", "RightForeArm", (-67, 145, 0)),
    ("LeftUpLeg", "Hips", (9, 95, 0)), ("LeftLeg", "LeftUpLeg", (9, 52, 1)),
    ("LeftFoot", "LeftLeg", (9, 9, -2)), ("LeftToeBase", "LeftFoot", (9, 1, 11)),
    ("LeftToe_End", "LeftToeBase", (9, 1, 19)),
    ("RightUpLeg", "Hips", (-9, 95, 0)), ("RightLeg", "RightUpLeg", (-9, 52, 1)),
    ("RightFoot", "RightLeg", (-9, 9, -2)), ("RightToeBase", "RightFoot", (-9, 1, 11)),
    ("RightToe_End", "RightToeBase", (-9, 1, 19)),
]


def mixamo_character():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 30
    data = bpy.data.armatures.new("Armature")
    arm = bpy.data.objects.new("Armature", data)
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    arm.rotation_euler = (math.pi / 2, 0, 0)
    arm.scale = (0.01, 0.01, 0.01)
    bpy.ops.object.mode_set(mode="EDIT")
    heads = {n: Vector(h) for n, _, h in MIXAMO}
    kids = {}
    for n, p, _ in MIXAMO:
        kids.setdefault(p, []).append(n)
    for n, p, _ in MIXAMO:
        b = data.edit_bones.new("mixamorig:" + n)
        b.head = heads[n]
        tail = heads[kids[n][0]] if n in kids else heads[n] + (heads[n] - heads[p]) * 0.5
        b.tail = tail
        if p is not None:
            b.parent = data.edit_bones["mixamorig:" + p]
    bpy.ops.object.mode_set(mode="OBJECT")
    skin_mesh(arm, 4.0)
    arm.animation_data_create()

    def action(name, keys):
        act = bpy.data.actions.new(name)
        arm.animation_data.action = act
        for frame, pose in keys:
            for pb in arm.pose.bones:  # every bone keyed: unkeyed ones would keep any pose
                axis, angle = pose.get(pb.name.split(":")[1], ((1, 0, 0), 0.0))
                pb.rotation_mode = "QUATERNION"
                pb.rotation_quaternion = Quaternion(axis, angle)
                pb.keyframe_insert("rotation_quaternion", frame=frame)
            hips = arm.pose.bones["mixamorig:Hips"]
            hips.location = pose.get("_loc", (0, 0, 0))
            hips.keyframe_insert("location", frame=frame)
        return act

    walk_keys = []
    for k, frame in enumerate((1, 7, 13, 19, 25)):
        s = math.sin(k * math.pi / 2)
        c = math.cos(k * math.pi / 2)
        walk_keys.append((frame, {
            "LeftUpLeg": ((1, 0, 0), 0.45 * s), "RightUpLeg": ((1, 0, 0), -0.45 * s),
            "LeftLeg": ((1, 0, 0), -0.5 * max(c, 0.0)), "RightLeg": ((1, 0, 0), -0.5 * max(-c, 0)),
            "LeftFoot": ((1, 0, 0), 0.2 * s), "RightFoot": ((1, 0, 0), -0.2 * s),
            "LeftArm": ((0, 0, 1), -1.2 + 0.1 * s), "RightArm": ((0, 0, 1), 1.2 + 0.1 * s),
            "Spine": ((0, 1, 0), 0.08 * s), "_loc": (0, -2 * abs(s), 0)}))
    walk = action("Walk", walk_keys)
    idle = action("Idle", [(1, {"Spine": ((1, 0, 0), 0.0), "Head": ((0, 1, 0), 0.0)}),
                           (15, {"Spine": ((1, 0, 0), 0.1), "Head": ((0, 1, 0), 0.3)})])
    reference = {"fps": 30.0, "source": "built", "names": [b.name for b in arm.pose.bones],
                 "animations": {}}
    for act, (first, last) in ((walk, (1, 25)), (idle, (1, 15))):
        arm.animation_data.action = act
        frames = list(range(first, last + 1))
        reference["animations"][act.name] = {"frames": frames,
                                             "positions": positions(arm, frames)}
    for act in (walk, idle):
        track = arm.animation_data.nla_tracks.new()
        track.name = act.name
        track.strips.new(act.name, 1, act)
    arm.animation_data.action = None
    scene.frame_start, scene.frame_end = 1, 25
    export(OUT / "mixamo_rig.glb")
    (OUT / "mixamo_rig.json").write_text(json.dumps(reference))


bvh_character("cmu_131_01_start_walk_stop_meters.bvh", "cmu_walk", 1, 12)
bvh_character("xia_neutral_walk_01_000.bvh", "xia_walk", 10, 12)
mixamo_character()
print("made", sorted(p.name for p in OUT.iterdir()))
