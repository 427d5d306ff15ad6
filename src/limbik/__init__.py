"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.

``import limbik`` is cheap: the names below are loaded on first use (module
``__getattr__``), so NumPy-only work never imports Numba, SciPy or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from limbik.errors import InvalidInputError, LimbikError
from limbik.threads import get_num_threads, set_num_threads

if TYPE_CHECKING:  # the lazy names, for type checkers and IDEs
    from limbik import metrics, roblox
    from limbik.chain import Joint, JointChain, load_urdf
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

#: public name → the module that defines it (imported on first access)
_LAZY = {
    "metrics": "limbik.metrics",
    "roblox": "limbik.roblox",
    "Joint": "limbik.chain.joint_chain",
    "JointChain": "limbik.chain.joint_chain",
    "load_urdf": "limbik.chain.urdf",
    "Frame": "limbik.geometry.frame",
    "Terrain": "limbik.placement.terrain",
    "FootplantReport": "limbik.placement.footplant",
    "footplant": "limbik.placement.footplant",
    "Arm": "limbik.skeleton.limbs",
    "Leg": "limbik.skeleton.limbs",
    "find_arms": "limbik.skeleton.limbs",
    "find_legs": "limbik.skeleton.limbs",
    "Motion": "limbik.skeleton.motion",
    "Skeleton": "limbik.skeleton.skeleton",
    "apply_chain": "limbik.skeleton.apply",
    "apply_ik": "limbik.skeleton.apply",
    "format_bvh": "limbik.skeleton.bvh",
    "parse_bvh": "limbik.skeleton.bvh",
    "read_bvh": "limbik.skeleton.bvh",
    "write_bvh": "limbik.skeleton.bvh",
    "resample": "limbik.skeleton.clip",
    "trim": "limbik.skeleton.clip",
    "Cone": "limbik.solvers.constraints",
    "EllipticalCone": "limbik.solvers.constraints",
    "Hinge": "limbik.solvers.constraints",
    "FabrikTree": "limbik.solvers.fabrik_tree",
    "Solution": "limbik.solvers.solution",
    "ccd": "limbik.solvers.ccd",
    "fabrik": "limbik.solvers.fabrik",
    "jacobian_ik": "limbik.solvers.jacobian",
    "rotations_from_positions": "limbik.solvers.rotations",
    "two_bone": "limbik.solvers.two_bone",
}

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
    "get_num_threads",
    "jacobian_ik",
    "load_urdf",
    "metrics",
    "parse_bvh",
    "read_bvh",
    "resample",
    "roblox",
    "rotations_from_positions",
    "set_num_threads",
    "trim",
    "two_bone",
    "write_bvh",
]


def __getattr__(name: str) -> Any:
    """Load a public name on first access and keep it in the module's namespace."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value: Any = version("limbik")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            value = "0.0.0"
    elif name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        value = module if module.__name__ == f"{__name__}.{name}" else getattr(module, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
