"""Batched rigid-transform math: vectors, quaternions (x, y, z, w) and :class:`Frame`."""

from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import (
    axis_angle_from_quaternion,
    matrix_from_quaternion,
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_from_euler_xyz,
    quaternion_from_matrix,
    quaternion_from_two_vectors,
    quaternion_multiply,
    quaternion_normalize,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.geometry.vectors import any_perpendicular, dot, norm, normalize, project_off

__all__ = [
    "Frame",
    "any_perpendicular",
    "axis_angle_from_quaternion",
    "dot",
    "matrix_from_quaternion",
    "norm",
    "normalize",
    "project_off",
    "quaternion_conjugate",
    "quaternion_from_axis_angle",
    "quaternion_from_euler_xyz",
    "quaternion_from_matrix",
    "quaternion_from_two_vectors",
    "quaternion_multiply",
    "quaternion_normalize",
    "quaternion_slerp",
    "rotate_vectors",
]
