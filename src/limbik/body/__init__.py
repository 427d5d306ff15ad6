"""Whole-body solving on a Motion: the solvers applied to a skeleton's limbs, spine and
head, written back as local rotations (``full_body_ik``, ``look_at``)."""

from limbik.body.full_body import full_body_ik
from limbik.body.look_at import look_at

__all__ = ["full_body_ik", "look_at"]
