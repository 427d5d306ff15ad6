"""IK solvers. Each returns a :class:`~limbik.solvers.solution.Solution`."""

from limbik.solvers.solution import Solution
from limbik.solvers.two_bone import two_bone

__all__ = ["Solution", "two_bone"]
