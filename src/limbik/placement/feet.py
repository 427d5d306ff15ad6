"""A clip's feet: leg lengths, the points of a foot (ankle, toe, toe tips), the clip's own
floor, and one forward-kinematics pass with End Sites. Shared by foot placement and the
motion-quality metrics."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import rotate_vectors
from limbik.skeleton.limbs import Leg
from limbik.skeleton.motion import Motion, _forward_kinematics

__all__ = ["estimate_floor", "foot_joints", "foot_point", "leg_lengths", "world_pose"]


def leg_lengths(motion: Motion, leg: Leg) -> tuple[float, float]:
    """The leg's thigh and shin lengths; a bone of zero length (no leg to solve) raises."""
    sk = motion.skeleton
    thigh, shin = (float(np.linalg.norm(sk.offsets[j])) for j in (leg.knee, leg.ankle))
    size = float(np.max(np.linalg.norm(sk.offsets, axis=-1), initial=0.0))
    for length, child, bone in ((thigh, leg.knee, "thigh"), (shin, leg.ankle, "shin")):
        if not length > 1e-9 * size:
            parent = int(sk.parents[child])
            raise InvalidInputError(
                f"motion's {leg.side} leg must have bones of non-zero length, got a {bone} "
                f"({sk.names[parent]} → {sk.names[child]}) of length {length:.3g}",
                argument="motion")
    return thigh, shin


def foot_point(leg: Leg) -> int:
    return leg.toe if leg.toe is not None else leg.ankle


def estimate_floor(motion: Motion, legs: Sequence[Leg], leg_length: float, *,
                   positions: np.ndarray | None = None) -> float:
    """The source clip's floor height, from its lowest foot points.

    Per frame, the lowest of the ankles, toes and the toes' End Sites (toe tips); the
    floor is the 5th percentile of that over the clip. Motion-capture files put the
    floor at y = 0, so an estimate within 2% of a leg length of 0 is taken as exactly 0.
    ``positions`` are the clip's world positions with End Sites, when already at hand.
    """
    world = (motion.world_positions(include_end_sites=True) if positions is None
             else positions)
    joints = motion.skeleton.num_joints
    feet = {j for leg in legs for j in (leg.ankle, foot_point(leg))}
    points = sorted(feet) + [joints + k for k, p in enumerate(motion.skeleton.end_site_parents)
                             if int(p) in feet]
    level = float(np.percentile(world[:, points, 1].min(axis=1), 5))
    return 0.0 if abs(level) <= 0.02 * leg_length else level


def world_pose(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World rotations ``(F, J, 4)`` and positions with End Sites ``(F, J + E, 3)``, from
    one forward-kinematics pass."""
    sk = motion.skeleton
    q, p = _forward_kinematics(sk.parents, motion.rotations, motion.local_translations())
    ends = p[:, sk.end_site_parents] + rotate_vectors(q[:, sk.end_site_parents],
                                                      sk.end_site_offsets)
    return q, np.concatenate([p, ends], axis=1)


def foot_joints(motion: Motion, leg: Leg) -> list[int]:
    """Indices into ``world_positions(include_end_sites=True)``: ankle, toe, toe tips."""
    sk = motion.skeleton
    if leg.toe is None:
        return [leg.ankle]
    tips = [sk.num_joints + k for k, p in enumerate(sk.end_site_parents) if int(p) == leg.toe]
    return [leg.ankle, leg.toe, *tips]
