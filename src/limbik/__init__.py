"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.
"""

from importlib.metadata import PackageNotFoundError, version

from limbik import errors, metrics, roblox
from limbik.chain import Joint, JointChain, load_urdf, parse_urdf
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
    parse_bvh,
    read_bvh,
    resample,
    trim,
    write_bvh,
)
from limbik.solvers import (
    Cone,
    EllipticalCone,
    FabrikTree,
    Hinge,
    Solution,
    ccd,
    fabrik,
    jacobian_ik,
    rotations_from_positions,
    two_bone,
)

try:
    __version__ = version("limbik")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
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
    "Terrain",
    "__version__",
    "apply_chain",
    "apply_ik",
    "ccd",
    "errors",
    "fabrik",
    "find_arms",
    "find_legs",
    "footplant",
    "format_bvh",
    "jacobian_ik",
    "load_urdf",
    "metrics",
    "parse_bvh",
    "parse_urdf",
    "read_bvh",
    "resample",
    "roblox",
    "rotations_from_positions",
    "trim",
    "two_bone",
    "write_bvh",
]
