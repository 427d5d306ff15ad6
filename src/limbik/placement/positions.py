"""Foot clean-up of joint-position motions (the ``(T, J, 3)`` arrays that
motion-generation models write), through the same foot placement as clips.

A position motion is fitted with one length per bone and rotations
(:meth:`limbik.skeleton.Motion.from_positions`), planted by :func:`limbik.footplant`
(the same contacts, locks, swings and report), and turned back into positions in the
input's joint order. Every bone of the result holds its fitted length; the upper body
keeps its pose relative to the root as closely as that allows (each joint above the
pelvis the nearest point at its bone's length to where the input has it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import as_float, choice
from limbik.io.units import UP_AXES
from limbik.placement.footplant import FootplantReport, footplant, terrain_for_clip
from limbik.placement.terrain import Terrain
from limbik.skeleton.limbs import Leg, find_legs
from limbik.skeleton.motion import Motion
from limbik.skeleton.positions import fit_positions, position_layout
from limbik.skeleton.skeleton import Skeleton

__all__ = ["PositionCleanup", "footplant_positions", "from_y_up", "to_y_up"]


@dataclasses.dataclass(frozen=True)
class PositionCleanup:
    """What :func:`footplant_positions` did to one clip.

    Attributes
    ----------
    report : FootplantReport
        Foot placement's report on the fitted motion.
    length_variation : ndarray (J,)
        Each bone's length wobble in the input (standard deviation over the frames over
        its fitted length); after the clean-up every bone holds one length.
    lengths : ndarray (J,)
        The fitted bone lengths (0 for the root), in the input's units.
    fit_residual : float
        The largest distance between the input and its fitted motion before any foot
        was moved (0 up to rounding where the bones keep their lengths).
    legs : tuple of Leg
        The legs planted (joint indices in the input's order).
    terrain : Terrain or None
        The ground the feet were planted on (Y up, the units the clip was cleaned in),
        None where no terrain was given.
    """

    report: FootplantReport
    length_variation: np.ndarray
    lengths: np.ndarray
    fit_residual: float
    legs: tuple[Leg, ...] = ()
    terrain: Terrain | None = None


def to_y_up(positions: np.ndarray, up: str) -> np.ndarray:
    """(x, y, z) of a Z-up file as limbik's Y-up (x, z, −y)."""
    if up == "y":
        return positions
    return np.stack([positions[..., 0], positions[..., 2], -positions[..., 1]], axis=-1)


def from_y_up(positions: np.ndarray, up: str) -> np.ndarray:
    """The inverse of :func:`to_y_up`."""
    if up == "y":
        return positions
    return np.stack([positions[..., 0], -positions[..., 2], positions[..., 1]], axis=-1)


def footplant_positions(positions: Any, skeleton: Any = "smpl22", *,
                        names: Sequence[str] | None = None, fps: float = 20.0,
                        terrain: Terrain | str | None = None,
                        terrain_options: Mapping[str, Any] | None = None, up: str = "y",
                        **options: Any) -> tuple[np.ndarray, PositionCleanup]:
    """Clean the feet of a position motion ``(T, J, 3)``; returns positions of the same
    shape (float64) and a :class:`PositionCleanup`.

    Parameters
    ----------
    positions : array_like (T, J, 3)
        Joint positions per frame, in the order of ``skeleton``.
    skeleton : a name from :data:`~limbik.skeleton.positions.POSITION_SKELETONS`
        (``"smpl22"``: HumanML3D's and MDM's order) or a parents list, with ``names``
        for its joints (the legs are found from them, see :func:`limbik.find_legs`).
    fps : frames per second (HumanML3D: 20).
    terrain : the ground: a :class:`Terrain`, or a procedural kind or height-field file
        sized to the clip by :func:`~limbik.placement.footplant.terrain_for_clip` with
        ``terrain_options`` (default: flat at the clip's own floor).
    up : the positions' up axis, ``"y"`` or ``"z"``; the result is in the same frame.
    options : passed on to :func:`limbik.footplant` (for example ``contacts``).
    """
    joint_names, parents = position_layout(skeleton, names)
    rate = as_float(fps, "fps", minimum=0.0, exclusive=True)
    axis = choice(up, "up", UP_AXES)
    pos = to_y_up(np.asarray(positions, dtype=np.float64), axis)
    fit = fit_positions(pos, parents)
    motion = Motion(Skeleton(joint_names, parents, fit.offsets), fit.root_positions,
                    fit.rotations, 1.0 / rate)
    legs = options.pop("legs", None) or find_legs(motion.skeleton)
    if isinstance(terrain, str):
        terrain = terrain_for_clip(terrain, motion, legs=legs, up=axis,
                                   **dict(terrain_options or {}))
    planted, report = footplant(motion, terrain, legs=legs, **options)
    placed = planted.world_positions()
    _upper_body_as_given(placed, pos, parents, fit.lengths, legs)
    out = from_y_up(placed, axis)
    return out, PositionCleanup(report, fit.length_variation, fit.lengths, fit.residual,
                                tuple(legs), terrain)


def _upper_body_as_given(placed: np.ndarray, given: np.ndarray, parents: np.ndarray,
                         lengths: np.ndarray, legs: Sequence[Leg]) -> None:
    """In place: the joints of ``placed`` ``(T, J, 3)`` outside the ``legs`` (a leg is its
    hip and everything below it) and the root, from the root out, each on the line from
    its parent's place toward where ``given`` ``(T, J, 3)`` has it relative to the root,
    at its bone's length ``lengths[j]``: the nearest such point. The upper body keeps its
    pose relative to the root as closely as one length per bone allows, and one bone's
    length error in ``given`` does not carry to the joints beyond it. A joint that
    coincides with that line's start keeps its bone as ``placed`` has it."""
    joints = len(parents)  # (each parent before its children, the root first)
    in_leg = np.zeros(joints, dtype=bool)
    in_leg[[leg.hip for leg in legs]] = True
    for j in range(1, joints):
        in_leg[j] |= in_leg[parents[j]]
    target = placed[:, :1] + (given - given[:, :1])
    before = placed.copy()
    for j in np.flatnonzero(~in_leg)[1:].tolist():
        p = int(parents[j])
        way = target[:, j] - placed[:, p]
        size = np.sqrt(np.einsum("ij,ij->i", way, way))[:, None]
        if np.all(size > 0.0):
            placed[:, j] = placed[:, p] + way * (lengths[j] / size)
        else:
            placed[:, j] = placed[:, p] + np.where(
                size > 0.0, way * (lengths[j] / np.where(size > 0.0, size, 1.0)),
                before[:, j] - before[:, p])
