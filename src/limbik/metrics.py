"""Motion-quality metrics (``limbik.metrics``): see :mod:`limbik.placement.metrics`."""

from limbik.placement.metrics import (
    bone_length_drift,
    floating,
    foot_skate,
    knee_angles,
    knee_pop,
    penetration,
    speed_near_floor,
)

__all__ = [
    "bone_length_drift",
    "floating",
    "foot_skate",
    "knee_angles",
    "knee_pop",
    "penetration",
    "speed_near_floor",
]
