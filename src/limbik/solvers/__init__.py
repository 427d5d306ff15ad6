"""IK solvers. Each returns a :class:`~limbik.solvers.solution.Solution`."""

from limbik.solvers.ccd import ccd
from limbik.solvers.jacobian import JACOBIAN_METHODS, jacobian_ik
from limbik.solvers.solution import Solution

__all__ = ["JACOBIAN_METHODS", "Solution", "ccd", "jacobian_ik"]
