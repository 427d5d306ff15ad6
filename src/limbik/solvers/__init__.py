"""IK solvers. Each returns a :class:`~limbik.solvers.solution.Solution`."""

from limbik.solvers.aim import aim, aim_chain
from limbik.solvers.ccd import ccd
from limbik.solvers.constraints import Cone, EllipticalCone, Hinge, SwingTwistLimit, TwistLimit
from limbik.solvers.fabrik.chain import fabrik
from limbik.solvers.fabrik.tree import FabrikTree
from limbik.solvers.joint.jacobian import JACOBIAN_METHODS, jacobian_ik
from limbik.solvers.rotations import joint_rotations, rotations_from_positions
from limbik.solvers.solution import Solution
from limbik.solvers.two_bone.solver import two_bone

__all__ = [
    "JACOBIAN_METHODS",
    "Cone",
    "EllipticalCone",
    "FabrikTree",
    "Hinge",
    "Solution",
    "SwingTwistLimit",
    "TwistLimit",
    "aim",
    "aim_chain",
    "ccd",
    "fabrik",
    "jacobian_ik",
    "joint_rotations",
    "rotations_from_positions",
    "two_bone",
]
