"""Skeletons and motion: BVH I/O, forward kinematics, applying IK, limb detection, clips."""

from limbik.skeleton.apply import apply_chain, apply_ik
from limbik.skeleton.bvh import format_bvh, parse_bvh, read_bvh, write_bvh
from limbik.skeleton.clip import resample, trim
from limbik.skeleton.full_body import full_body_ik
from limbik.skeleton.limbs import Arm, Leg, find_arms, find_legs
from limbik.skeleton.look_at import look_at
from limbik.skeleton.motion import Motion, forward_kinematics
from limbik.skeleton.skeleton import CHANNEL_NAMES, Skeleton

__all__ = [
    "CHANNEL_NAMES",
    "Arm",
    "Leg",
    "Motion",
    "Skeleton",
    "apply_chain",
    "apply_ik",
    "find_arms",
    "find_legs",
    "format_bvh",
    "forward_kinematics",
    "full_body_ik",
    "look_at",
    "parse_bvh",
    "read_bvh",
    "resample",
    "trim",
    "write_bvh",
]
