"""Skeletons and motion: the joint hierarchy, clips of local rotations, forward
kinematics, applying IK results, limb detection, resampling and trimming."""

from limbik.skeleton.apply import apply_chain, apply_ik
from limbik.skeleton.clip import resample, trim
from limbik.skeleton.limbs import Arm, Leg, find_arms, find_legs
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
    "forward_kinematics",
    "resample",
    "trim",
]
