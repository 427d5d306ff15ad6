"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from limbik import errors, metrics, roblox
from limbik.chain import Joint, JointChain, load_urdf
from limbik.errors import InvalidInputError, LimbikError
from limbik.geometry import Frame
from limbik.placement import Terrain
from limbik.placement.footplant import FootplantReport, footplant
from limbik.skeleton import (
    Arm,
    Leg,
    Motion,
    Skeleton,
    apply_chain,
    apply_ik,
    find_arms,
    find_legs,
    format_bvh,
    full_body_ik,
    look_at,
    parse_bvh,
    read_bvh,
    read_gltf,
    read_motion,
    resample,
    trim,
    write_bvh,
    write_gltf,
    write_motion,
)
from limbik.solvers import (
    Cone,
    EllipticalCone,
    FabrikTree,
    Hinge,
    Solution,
    SwingTwistLimit,
    TwistLimit,
    aim,
    aim_chain,
    ccd,
    fabrik,
    jacobian_ik,
    joint_rotations,
    rotations_from_positions,
    two_bone,
)

try:
    __version__ = _version("limbik")
except _PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Arm",
    "Cone",
    "EllipticalCone",
    "FabrikTree",
    "FootplantReport",
    "Frame",
    "Hinge",
    "InvalidInputError",
    "Joint",
    "JointChain",
    "Leg",
    "LimbikError",
    "Motion",
    "Skeleton",
    "Solution",
    "SwingTwistLimit",
    "Terrain",
    "TwistLimit",
    "__version__",
    "aim",
    "aim_chain",
    "apply_chain",
    "apply_ik",
    "ccd",
    "errors",
    "fabrik",
    "find_arms",
    "find_legs",
    "footplant",
    "format_bvh",
    "full_body_ik",
    "jacobian_ik",
    "joint_rotations",
    "load_urdf",
    "look_at",
    "metrics",
    "parse_bvh",
    "read_bvh",
    "read_gltf",
    "read_motion",
    "resample",
    "roblox",
    "rotations_from_positions",
    "trim",
    "two_bone",
    "write_bvh",
    "write_gltf",
    "write_motion",
]
