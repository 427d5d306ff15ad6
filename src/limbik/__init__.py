"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.

``import limbik`` is cheap: the names below are loaded on first use (module
``__getattr__``), so NumPy-only work never imports Numba, SciPy or matplotlib.
"""

import importlib as _importlib
from typing import Any as _Any

#: The public names, by the module that defines them. Each loads on first use, so
#: ``import limbik`` (and the ``limbik`` command, which handles Ctrl-C from its first
#: line) starts without numpy, scipy or numba.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "limbik.app.warmup": ("compile_kernels",),
    "limbik.body": ("full_body_ik", "look_at"),
    "limbik.chain": ("Joint", "JointChain", "load_urdf", "parse_urdf"),
    "limbik.errors": ("InvalidInputError", "LimbikError"),
    "limbik.geometry": ("Frame",),
    "limbik.io": (
        "format_bvh", "parse_bvh", "read_bvh", "read_gltf", "read_motion", "write_bvh",
        "write_gltf", "write_motion",
    ),
    "limbik.placement": ("Terrain",),
    "limbik.placement.footplant": ("footplant", "FootplantReport"),
    "limbik.skeleton": (
        "apply_chain", "apply_ik", "Arm", "find_arms", "find_legs", "Leg", "Motion", "resample",
        "Skeleton", "trim",
    ),
    "limbik.solvers": (
        "aim", "aim_chain", "ccd", "Cone", "EllipticalCone", "fabrik", "FabrikTree", "Hinge",
        "jacobian_ik", "joint_rotations", "rotations_from_positions", "Solution",
        "SwingTwistLimit", "TwistLimit", "two_bone",
    ),
    "limbik.threads": ("get_num_threads", "release_memory", "set_num_threads"),
}
#: Public modules, loaded on first use as attributes of the package, by their homes.
_MODULES = {"errors": "limbik.errors", "metrics": "limbik.placement.metrics",
            "roblox": "limbik.roblox"}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_LAZY, *_MODULES, "__version__"])


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
    if name in _MODULES:
        globals()[name] = _importlib.import_module(_MODULES[name])
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:  # a subpackage used as an attribute
        if not name.startswith("__"):
            try:
                return _importlib.import_module(f"limbik.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"limbik.{name}":
                    raise
        raise AttributeError(f"module 'limbik' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES))
