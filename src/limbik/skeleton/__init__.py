"""Skeletons and motion: BVH and glTF I/O, up axis and units, forward kinematics,
applying IK, limb detection, clips."""

from limbik.skeleton.apply import apply_chain, apply_ik
from limbik.skeleton.bvh import format_bvh, parse_bvh, read_bvh, write_bvh
from limbik.skeleton.clip import resample, trim
from limbik.skeleton.files import MOTION_FORMATS, motion_format, read_motion, write_motion
from limbik.skeleton.full_body import full_body_ik
from limbik.skeleton.gltf import gltf_contents, read_gltf, write_gltf
from limbik.skeleton.limbs import Arm, Leg, find_arms, find_legs
from limbik.skeleton.look_at import look_at
from limbik.skeleton.motion import Motion, forward_kinematics
from limbik.skeleton.skeleton import CHANNEL_NAMES, Skeleton
from limbik.skeleton.units import (
    UNITS,
    UP_AXES,
    export_axes,
    import_axes,
    import_height_field,
    unit_scale,
)

__all__ = [
    "CHANNEL_NAMES",
    "MOTION_FORMATS",
    "UNITS",
    "UP_AXES",
    "Arm",
    "Leg",
    "Motion",
    "Skeleton",
    "apply_chain",
    "apply_ik",
    "export_axes",
    "find_arms",
    "find_legs",
    "format_bvh",
    "forward_kinematics",
    "full_body_ik",
    "gltf_contents",
    "import_axes",
    "import_height_field",
    "look_at",
    "motion_format",
    "parse_bvh",
    "read_bvh",
    "read_gltf",
    "read_motion",
    "resample",
    "trim",
    "unit_scale",
    "write_bvh",
    "write_gltf",
    "write_motion",
]
