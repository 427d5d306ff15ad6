"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.

``import limbik`` is cheap: the names below are loaded on first use (module
``__getattr__``), so NumPy-only work never imports Numba, SciPy or matplotlib.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    __version__: str
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
    from limbik.threads import get_num_threads, release_memory, set_num_threads
    from limbik.warmup import compile_kernels

# Names load on first use, so ``import limbik`` (and the ``limbik`` command, which
# handles Ctrl-C from its first line) starts without numpy, scipy or numba.
_LAZY = {
    "Arm": "limbik.skeleton",
    "Cone": "limbik.solvers",
    "EllipticalCone": "limbik.solvers",
    "FabrikTree": "limbik.solvers",
    "FootplantReport": "limbik.placement.footplant",
    "Frame": "limbik.geometry",
    "Hinge": "limbik.solvers",
    "InvalidInputError": "limbik.errors",
    "Joint": "limbik.chain",
    "JointChain": "limbik.chain",
    "Leg": "limbik.skeleton",
    "LimbikError": "limbik.errors",
    "Motion": "limbik.skeleton",
    "Skeleton": "limbik.skeleton",
    "Solution": "limbik.solvers",
    "SwingTwistLimit": "limbik.solvers",
    "Terrain": "limbik.placement",
    "TwistLimit": "limbik.solvers",
    "aim": "limbik.solvers",
    "aim_chain": "limbik.solvers",
    "apply_chain": "limbik.skeleton",
    "apply_ik": "limbik.skeleton",
    "ccd": "limbik.solvers",
    "compile_kernels": "limbik.warmup",
    "errors": "limbik.errors",
    "fabrik": "limbik.solvers",
    "find_arms": "limbik.skeleton",
    "find_legs": "limbik.skeleton",
    "footplant": "limbik.placement.footplant",
    "get_num_threads": "limbik.threads",
    "format_bvh": "limbik.skeleton",
    "full_body_ik": "limbik.skeleton",
    "jacobian_ik": "limbik.solvers",
    "joint_rotations": "limbik.solvers",
    "load_urdf": "limbik.chain",
    "look_at": "limbik.skeleton",
    "metrics": "limbik.metrics",
    "parse_bvh": "limbik.skeleton",
    "parse_urdf": "limbik.chain",
    "read_bvh": "limbik.skeleton",
    "read_gltf": "limbik.skeleton",
    "read_motion": "limbik.skeleton",
    "resample": "limbik.skeleton",
    "release_memory": "limbik.threads",
    "roblox": "limbik.roblox",
    "set_num_threads": "limbik.threads",
    "rotations_from_positions": "limbik.solvers",
    "trim": "limbik.skeleton",
    "two_bone": "limbik.solvers",
    "write_bvh": "limbik.skeleton",
    "write_gltf": "limbik.skeleton",
    "write_motion": "limbik.skeleton",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("limbik")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def __getattr__(name: str) -> _Any:
    if name == "__version__":
        globals()[name] = _version()
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:  # a subpackage used as an attribute, e.g. limbik.skeleton
        if not name.startswith("__"):
            try:
                return _importlib.import_module(f"limbik.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"limbik.{name}":
                    raise
        raise AttributeError(f"module 'limbik' has no attribute {name!r}")
    value = _importlib.import_module(module)
    if module != f"limbik.{name}":
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))



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
    "compile_kernels",
    "errors",
    "fabrik",
    "find_arms",
    "find_legs",
    "footplant",
    "format_bvh",
    "full_body_ik",
    "get_num_threads",
    "jacobian_ik",
    "joint_rotations",
    "load_urdf",
    "look_at",
    "metrics",
    "parse_bvh",
    "parse_urdf",
    "read_bvh",
    "read_gltf",
    "read_motion",
    "release_memory",
    "resample",
    "roblox",
    "rotations_from_positions",
    "set_num_threads",
    "trim",
    "two_bone",
    "write_bvh",
    "write_gltf",
    "write_motion",
]

