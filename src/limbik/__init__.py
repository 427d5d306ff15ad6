"""limbik: inverse kinematics for limbs, chains and skeletons.

Arrays first: every function takes array-likes with points ``(..., 3)`` and
quaternions ``(..., 4)`` (x, y, z, w), broadcasting over leading dimensions.
"""

from importlib.metadata import PackageNotFoundError, version

from limbik import errors
from limbik.chain import Joint, JointChain, load_urdf
from limbik.errors import InvalidInputError, LimbikError
from limbik.geometry import Frame
from limbik.solvers import Solution, ccd, jacobian_ik

try:
    __version__ = version("limbik")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Frame",
    "InvalidInputError",
    "Joint",
    "JointChain",
    "LimbikError",
    "Solution",
    "__version__",
    "ccd",
    "errors",
    "jacobian_ik",
    "load_urdf",
]
