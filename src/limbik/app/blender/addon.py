"""limbik for Blender: plant an armature's feet on the ground, and two-bone IK.

This file is the add-on (``limbik blender-addon -o limbik_addon.zip`` packs it as
``limbik_blender/__init__.py``). It runs inside Blender and needs ``limbik``
installed into Blender's Python (see docs/blender.md). Operators, in the 3D view's
Object menu (Object mode) and Pose menu (Pose mode), and in F3 search:

- *Plant Feet (limbik)* (``limbik.footplant``): plants the active armature's action
  on the scene's ground (the plane Z = 0) or on a chosen mesh used as a height field,
  and writes the result to a new action, which it makes active.
- *Two-Bone IK (limbik)* (``limbik.two_bone_ik``): turns the active pose bone's
  parent and grandparent so its head reaches a target object (or the 3D cursor) in
  every frame of the action, bending toward a pole object (or keeping the animated
  bend), and writes a new action.
"""

from __future__ import annotations

from typing import Any, ClassVar

import bpy
import numpy as np

bl_info = {
    "name": "limbik",
    "author": "limbik",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "3D View > Object / Pose menu, or F3: Plant Feet (limbik), Two-Bone IK",
    "description": "Foot planting on terrain and two-bone IK with the limbik library",
    "category": "Animation",
}


# ---------------------------------------------------------------------- sampling
def _bones(arm: Any) -> tuple[list[str], list[int], np.ndarray, np.ndarray]:
    """Bone names and parent indices, parents first, rest matrices (J, 4, 4) and rest
    tails (J, 3), in armature space."""
    from limbik.app.blender.armature import bone_order

    bones = list(arm.data.bones)
    order = bone_order([b.name for b in bones],
                       [b.parent.name if b.parent else None for b in bones])
    names = [bones[k].name for k in order]
    position = {n: i for i, n in enumerate(names)}
    parents = [-1] + [position[bones[k].parent.name] for k in order[1:]]
    rest = np.array([np.array(bones[k].matrix_local) for k in order])
    tails = np.array([np.array(bones[k].tail_local) for k in order])
    return names, parents, rest, tails


def _action(arm: Any) -> Any:
    action = arm.animation_data.action if arm.animation_data else None
    if action is None:
        raise ValueError(f"armature {arm.name!r} has no action to work on")
    return action


def _frames(arm: Any) -> list[int]:
    first, last = (round(v) for v in _action(arm).frame_range)
    return list(range(first, last + 1))


def _sample(context: Any, arm: Any, names: list[str], frames: list[int]) -> np.ndarray:
    """Pose matrices in armature space (F, J, 4, 4)."""
    scene = context.scene
    keep = scene.frame_current
    bones = [arm.pose.bones[n] for n in names]
    out = np.empty((len(frames), len(names), 4, 4))
    for f, frame in enumerate(frames):  # Blender evaluates one frame at a time
        scene.frame_set(frame)
        out[f] = [np.array(b.matrix) for b in bones]
    scene.frame_set(keep)
    return out


def _frame_time(scene: Any) -> float:
    return float(scene.render.fps_base) / float(scene.render.fps)


def _motion(context: Any, arm: Any) -> tuple[Any, list[str], list[int], np.ndarray,
                                               np.ndarray, list[int]]:
    from limbik.app.blender.armature import motion_from_armature

    names, parents, rest, tails = _bones(arm)
    frames = _frames(arm)
    pose = _sample(context, arm, names, frames)
    motion = motion_from_armature(names, parents, rest, pose, np.array(arm.matrix_world),
                                  _frame_time(context.scene), tails=tails)
    return motion, names, parents, rest, pose, frames


def _write_action(arm: Any, source: Any, name: str, motion: Any, names: list[str],
                  parents: list[int], rest: np.ndarray, pose: np.ndarray,
                  frames: list[int]) -> Any:
    """A new action holding ``motion`` as pose-bone keys, made the active one."""
    from limbik.app.blender.armature import euler_from_quaternions, pose_bases

    loc, quat, scale = pose_bases(motion, parents, rest, pose, np.array(arm.matrix_world))
    action = bpy.data.actions.new(name)
    times = np.asarray(frames, dtype=np.float64)

    def curve(path: str, index: int, group: str, values: np.ndarray) -> None:
        fc = action.fcurves.new(path, index=index, action_group=group)
        fc.keyframe_points.add(len(times))
        fc.keyframe_points.foreach_set("co", np.column_stack([times, values]).ravel())
        fc.keyframe_points.foreach_set("interpolation", [2] * len(times))  # LINEAR
        fc.update()

    for j, bone_name in enumerate(names):
        pb = arm.pose.bones[bone_name]
        base = f'pose.bones["{bpy.utils.escape_identifier(bone_name)}"]'
        for i in range(3):
            curve(f"{base}.location", i, bone_name, loc[:, j, i])
        if pb.rotation_mode == "QUATERNION":
            for i in range(4):
                curve(f"{base}.rotation_quaternion", i, bone_name, quat[:, j, i])
        elif pb.rotation_mode == "AXIS_ANGLE":
            raise ValueError(f"bone {bone_name!r} uses axis-angle rotation; set it to "
                             "quaternion or Euler")
        else:
            euler = euler_from_quaternions(quat[:, j], pb.rotation_mode)
            for i in range(3):
                curve(f"{base}.rotation_euler", i, bone_name, euler[:, i])
        if np.max(np.abs(scale[:, j] - 1.0)) > 1e-9 or any(
                fc.data_path == f"{base}.scale" for fc in source.fcurves):
            for i in range(3):
                curve(f"{base}.scale", i, bone_name, scale[:, j, i])
    arm.animation_data.action = action
    return action


def _armature(context: Any) -> Any:
    arm = context.active_object
    if arm is None or arm.type != "ARMATURE":
        raise ValueError("the active object must be an armature")
    return arm


# ---------------------------------------------------------------------- terrain
def _height_field(context: Any, obj: Any, cell: float) -> Any:
    """The mesh as a height field (limbik Terrain), sampled by rays down along -Z."""
    from mathutils import Matrix, Vector

    from limbik.io.units import import_height_field
    from limbik.placement.terrain import Terrain

    corners = np.array([np.array(obj.matrix_world @ Vector(c)) for c in obj.bound_box])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    nx = max(2, int(np.ceil((hi[0] - lo[0]) / cell)) + 1)
    ny = max(2, int(np.ceil((hi[1] - lo[1]) / cell)) + 1)
    inverse: Matrix = obj.matrix_world.inverted()
    direction = (inverse.to_3x3() @ Vector((0.0, 0.0, -1.0))).normalized()
    depsgraph = context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    top = hi[2] + 1.0 + (hi[2] - lo[2])
    heights = np.full((ny, nx), np.nan)
    for i in range(ny):
        for j in range(nx):
            origin = inverse @ Vector((lo[0] + j * cell, lo[1] + i * cell, top))
            hit, location, _, _ = evaluated.ray_cast(origin, direction)
            if hit:
                heights[i, j] = (obj.matrix_world @ location)[2]
    if np.all(np.isnan(heights)):
        raise ValueError(f"mesh {obj.name!r} has no faces seen from above")
    heights = np.where(np.isnan(heights), np.nanmin(heights), heights)
    h, c, origin2 = import_height_field(heights, cell, (float(lo[0]), float(lo[1])), up="z")
    return Terrain(h, c, origin2, name=f"mesh {obj.name}")


# ---------------------------------------------------------------------- operators
class _ActionWriter:
    """An operator that writes a new action: ``run`` does the work and returns the
    message; errors are reported in Blender's status bar and cancel the operator."""

    bl_options: ClassVar[set[str]] = {"REGISTER", "UNDO"}

    def run(self, context: Any) -> str:
        raise NotImplementedError

    def execute(self, context: Any) -> set[str]:
        from limbik.errors import LimbikError

        try:
            message = self.run(context)
        except (LimbikError, ValueError) as exc:
            self.report({"ERROR"}, f"limbik: {exc}")  # type: ignore[attr-defined]
            return {"CANCELLED"}
        self.report({"INFO"}, f"limbik: {message}")  # type: ignore[attr-defined]
        return {"FINISHED"}


class LIMBIK_OT_footplant(_ActionWriter, bpy.types.Operator):
    """Plant the active armature's feet on the ground or a mesh; writes a new action"""

    bl_idname = "limbik.footplant"
    bl_label = "Plant Feet (limbik)"

    ground: bpy.props.StringProperty(  # type: ignore[valid-type]
        name="Ground mesh", default="",
        description="A mesh object used as a height field (empty: the plane Z = 0)")
    cell_size: bpy.props.FloatProperty(  # type: ignore[valid-type]
        name="Cell size", default=0.0, min=0.0,
        description="Height field sample spacing (0: a twentieth of a leg)")
    action_name: bpy.props.StringProperty(  # type: ignore[valid-type]
        name="New action", default="", description="Name of the new action "
        "(empty: the source action's name + '_planted')")

    def run(self, context: Any) -> str:
        from limbik.placement.footplant import footplant
        from limbik.placement.terrain import Terrain
        from limbik.skeleton.limbs import find_legs

        arm = _armature(context)
        source = _action(arm)
        motion, names, parents, rest, pose, frames = _motion(context, arm)
        legs = find_legs(motion.skeleton)
        if self.ground:
            obj = bpy.data.objects.get(self.ground)
            if obj is None or obj.type != "MESH":
                raise ValueError(f"ground must name a mesh object, got {self.ground!r}")
            lengths = motion.skeleton.bone_lengths()
            leg = float(np.mean([lengths[lg.knee] + lengths[lg.ankle] for lg in legs]))
            terrain = _height_field(context, obj, self.cell_size or leg / 20.0)
        else:
            terrain = Terrain.flat(0.0)
        result, report = footplant(motion, terrain, legs=legs)
        _write_action(arm, source, self.action_name or f"{source.name}_planted", result,
                      names, parents, rest, pose, frames)
        skate = report.after.get("left_skate", 0.0) + report.after.get("right_skate", 0.0)
        return f"planted {len(frames)} frames on {terrain.name}; foot skate after {skate:.3g}"


class LIMBIK_OT_two_bone_ik(_ActionWriter, bpy.types.Operator):
    """Solve two-bone IK so the active pose bone's head reaches a target; new action"""

    bl_idname = "limbik.two_bone_ik"
    bl_label = "Two-Bone IK (limbik)"

    target: bpy.props.StringProperty(  # type: ignore[valid-type]
        name="Target", default="",
        description="Object whose (animated) origin the bone's head reaches "
        "(empty: the 3D cursor)")
    pole: bpy.props.StringProperty(  # type: ignore[valid-type]
        name="Pole", default="",
        description="Object the middle joint bends toward (empty: keep the animated bend)")
    action_name: bpy.props.StringProperty(  # type: ignore[valid-type]
        name="New action", default="",
        description="Name of the new action (empty: the source action's name + '_ik')")

    def run(self, context: Any) -> str:
        from limbik.skeleton.apply import apply_ik
        from limbik.solvers.two_bone.solver import two_bone

        arm = _armature(context)
        bone = context.active_pose_bone
        if bone is None or bone.id_data != arm:
            raise ValueError("select the bone whose head should reach the target "
                             "(the end of a two-bone chain) in Pose mode")
        source = _action(arm)
        motion, names, parents, rest, pose, frames = _motion(context, arm)
        end = names.index(bone.name)
        mid = parents[end]
        root = parents[mid] if mid > 0 else -1
        if root < 0:
            raise ValueError(f"bone {bone.name!r} needs a parent and a grandparent")
        target = _track(context, self.target, frames)
        world = motion.world_positions()
        hints: dict[str, Any] = ({"pole": _track(context, self.pole, frames)} if self.pole
                                 else {"reference": world[:, mid]})
        lengths = motion.skeleton.bone_lengths()
        solution = two_bone(world[:, root], target, float(lengths[mid]), float(lengths[end]),
                            **hints)
        solved = apply_ik(motion, {mid: solution.positions[:, 1],
                                   end: solution.positions[:, 2]})
        _write_action(arm, source, self.action_name or f"{source.name}_ik", solved, names,
                      parents, rest, pose, frames)
        return f"target reached in {int(np.sum(solution.reached))} of {len(frames)} frames"


def _track(context: Any, name: str, frames: list[int]) -> np.ndarray:
    """An object's world origin per frame (or the 3D cursor), limbik's Y up (F, 3)."""
    scene = context.scene
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise ValueError(f"no object named {name!r}")
        keep = scene.frame_current
        points = []
        for frame in frames:
            scene.frame_set(frame)
            points.append(np.array(obj.matrix_world.translation))
        scene.frame_set(keep)
        p = np.array(points)
    else:
        p = np.broadcast_to(np.array(scene.cursor.location), (len(frames), 3))
    return np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=-1)


def _menu(self: Any, context: Any) -> None:
    self.layout.separator()
    self.layout.operator(LIMBIK_OT_footplant.bl_idname)
    self.layout.operator(LIMBIK_OT_two_bone_ik.bl_idname)


_CLASSES = (LIMBIK_OT_footplant, LIMBIK_OT_two_bone_ik)


def register() -> None:
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.VIEW3D_MT_object.append(_menu)
    bpy.types.VIEW3D_MT_pose.append(_menu)


def unregister() -> None:
    bpy.types.VIEW3D_MT_pose.remove(_menu)
    bpy.types.VIEW3D_MT_object.remove(_menu)
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
