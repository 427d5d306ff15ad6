"""IK solvers. Each returns a :class:`~limbik.solvers.solution.Solution`."""

from limbik.solvers.solution import Solution

__all__ = ["Solution"]
