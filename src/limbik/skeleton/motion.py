"""``Motion``: per-frame local rotations of a :class:`Skeleton`, and forward kinematics."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_float,
    as_float_array,
    as_int,
    as_parents,
    as_points,
    as_quaternions,
    as_real_array,
    as_unit_quaternions,
    broadcast_shapes,
    read_only,
)
from limbik.errors import InvalidInputError
from limbik.geometry.frame import Frame
from limbik.geometry.quaternion import rotate_vectors
from limbik.skeleton._fk_kernels import forward_kinematics_frames
from limbik.skeleton.positions import fit_positions, position_layout
from limbik.skeleton.skeleton import Skeleton

__all__ = ["Motion", "check_motion", "forward_kinematics"]


def _readonly(array: np.ndarray) -> np.ndarray:
    out = np.array(array, dtype=np.float64)
    out.flags.writeable = False
    return out


def forward_kinematics(parents: Any, local_rotations: Any, local_translations: Any,
                       out: tuple[FloatArray, FloatArray] | None = None
                       ) -> tuple[FloatArray, FloatArray]:
    """World rotations ``(..., J, 4)`` and positions ``(..., J, 3)`` of a joint tree.

    ``parents`` ``(J,)`` lists each joint's parent (-1 for roots), parents first.
    ``local_rotations`` ``(..., J, 4)`` (x, y, z, w; normalised, rows already of unit norm
    kept bit for bit) and ``local_translations`` ``(..., J, 3)`` place each joint in its
    parent: ``world_j = world_parent · (R_j, t_j)``; their batch shapes broadcast.
    Frames are spread over every thread.
    ``out``: two writable C-contiguous float64 arrays ``(..., J, 4)`` and ``(..., J, 3)``
    of the broadcast shape (e.g. an earlier call's result), written in place and
    returned (on input that raises, what they hold is unspecified).

    Float64 inputs are checked by the kernel as it runs, on every thread; only where a
    rotation is not unit (or a value not finite) do the NumPy validators run, and the
    kernel again.
    """
    par = as_parents(parents, min_joints=1, forest=True)
    joints = par.size
    q_raw = as_real_array(local_rotations, "local_rotations", (4,))
    t_raw = as_real_array(local_translations, "local_translations", (3,))
    if (q_raw.ndim >= 2 and q_raw.shape[-2:] == (joints, 4) and t_raw.ndim >= 2
            and t_raw.shape[-2:] == (joints, 3)
            and _broadcastable(q_raw.shape[:-2], t_raw.shape[:-2])):
        # the kernel checks the rows as it goes (on every thread): unit rotations and
        # finite translations, as the checks below would pass them, need nothing else
        done, failed = _forward_kinematics_counted(par, q_raw, t_raw, out)
        if not failed:
            return done
    q_local = as_unit_quaternions(local_rotations, "local_rotations", copy=False)
    t_local = as_points(local_translations, "local_translations")
    for array, name in ((q_local, "local_rotations"), (t_local, "local_translations")):
        if array.ndim < 2 or array.shape[-2] != joints:
            raise InvalidInputError(
                f"{name} must have shape (..., {joints}, {array.shape[-1]}) for the "
                f"{joints} joints of parents, got {array.shape}", argument=name)
    broadcast_shapes(("local_rotations", q_local.shape[:-2]),
                     ("local_translations", t_local.shape[:-2]))
    return _forward_kinematics(par, q_local, t_local, out)


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _forward_kinematics(parents: np.ndarray, local_rotations: FloatArray,
                        local_translations: FloatArray,
                        out: tuple[FloatArray, FloatArray] | None = None
                        ) -> tuple[FloatArray, FloatArray]:
    """:func:`forward_kinematics` on trusted input: ``parents`` listed before their
    children, unit quaternions, finite translations, ``J`` joints in both."""
    return _forward_kinematics_counted(parents, local_rotations, local_translations, out)[0]


def _forward_kinematics_counted(parents: np.ndarray, local_rotations: FloatArray,
                                local_translations: FloatArray,
                                out: tuple[FloatArray, FloatArray] | None = None
                                ) -> tuple[tuple[FloatArray, FloatArray], int]:
    """:func:`_forward_kinematics` on float64 arrays of the right shapes, not checked
    otherwise, with the number of joints whose rotation is not unit to the kernel's
    margin or whose translation is not finite (the world frames hold no answer, and
    ``out`` was written, where it is not 0)."""
    q_local = np.asarray(local_rotations, dtype=np.float64)
    t_local = np.asarray(local_translations, dtype=np.float64)
    shape = np.broadcast_shapes(q_local.shape[:-1], t_local.shape[:-1])
    joints = shape[-1]
    if out is not None:
        q_out, p_out = _out_frames(out, shape)
        if np.may_share_memory(q_local, q_out) or np.may_share_memory(q_local, p_out):
            q_local = q_local.copy()
        if np.may_share_memory(t_local, q_out) or np.may_share_memory(t_local, p_out):
            t_local = t_local.copy()
    q = _kernel_rows(q_local, shape + (4,))
    t = _kernel_rows(t_local, shape + (3,))
    if out is None:
        q_world, p_world = np.empty(q.shape), np.empty(t.shape)
    else:
        q_world, p_world = q_out.reshape(q.shape), p_out.reshape(t.shape)
    failed = forward_kinematics_frames(read_only(np.ascontiguousarray(parents, dtype=np.int64)),
                                       q, t, q_world, p_world, np.ones(joints, dtype=np.bool_))
    if out is not None:
        return (q_out, p_out), failed
    return (q_world.reshape(shape + (4,)), p_world.reshape(shape + (3,))), failed


def _out_frames(out: Any, shape: tuple[int, ...]) -> tuple[FloatArray, FloatArray]:
    """``out`` checked as forward kinematics' output arrays of batch ``shape``."""
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise InvalidInputError(
            "out must be a pair of arrays (world rotations, world positions), got "
            f"{type(out).__name__}", argument="out")
    for array, width, name in ((out[0], 4, "rotations"), (out[1], 3, "positions")):
        want = shape + (width,)
        if (not isinstance(array, np.ndarray) or array.shape != want
                or array.dtype != np.float64 or not array.flags.c_contiguous
                or not array.flags.writeable):
            got = (f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray)
                   else type(array).__name__)
            raise InvalidInputError(
                f"out's world {name} must be a writable C-contiguous float64 array of "
                f"shape {want}, got {got}", argument="out")
    return out[0], out[1]


def _kernel_rows(array: FloatArray, shape: tuple[int, ...]) -> FloatArray:
    """``array`` as read-only C-contiguous rows ``(N, J, width)`` of ``shape``: a view of
    the array when it already is one (the kernel only reads it), else of a copy."""
    if array.shape != shape or not array.flags.c_contiguous:
        array = np.array(np.broadcast_to(array, shape), order="C")
    return read_only(array.reshape(-1, shape[-2], shape[-1]))


def _unit_quaternions(value: Any) -> FloatArray:
    """Validated quaternions; rows already of unit norm (to rounding) are kept bit for bit."""
    raw = as_float_array(value, "rotations", (4,))  # numbers, finite, shape (..., 4)
    with np.errstate(over="ignore"):  # huge rows: not unit, so normalised (scaled) below
        near_unit = np.abs(np.sum(raw * raw, axis=-1) - 1.0) <= _NEAR_UNIT
    if near_unit.all():
        return raw
    q = as_quaternions(raw, "rotations")  # normalised; a zero quaternion raises
    return np.where(near_unit[..., None], raw, q)


#: Largest difference of a quaternion's squared norm from 1 that keeps it as it is.
_NEAR_UNIT = 4 * np.finfo(np.float64).eps


@dataclasses.dataclass(frozen=True, eq=False)
class Motion:
    """An animation of a :class:`Skeleton`: F frames of local joint transforms.

    Attributes
    ----------
    skeleton : Skeleton
        The joint hierarchy (J joints).
    root_positions : ndarray, shape (F, 3)
        The root's translation per frame (the BVH root position channels).
    rotations : ndarray, shape (F, J, 4)
        Local joint rotations as unit quaternions (x, y, z, w): a joint's frame in
        its parent's is ``(rotations[f, j], offset_j)``.
    frame_time : float
        Seconds per frame (> 0).
    joint_translations : mapping of int to ndarray (F, 3)
        Per-frame local translations of non-root joints that have BVH position
        channels; they replace those joints' offsets. Empty for most clips.

    Arrays are validated and stored read-only. Use :func:`dataclasses.replace` to
    derive a changed motion, e.g. ``replace(motion, root_positions=new)``.
    """

    skeleton: Skeleton
    root_positions: FloatArray
    rotations: FloatArray
    frame_time: float
    joint_translations: Mapping[int, FloatArray] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.skeleton, Skeleton):
            raise InvalidInputError(
                f"skeleton must be a Skeleton, got {type(self.skeleton).__name__}",
                argument="skeleton")
        J = self.skeleton.num_joints
        rot = _unit_quaternions(self.rotations)
        if rot.ndim != 3 or rot.shape[1] != J:
            raise InvalidInputError(
                f"rotations must have shape (frames, {J}, 4), got {rot.shape}",
                argument="rotations")
        F = rot.shape[0]
        root = as_points(self.root_positions, "root_positions")
        if root.shape != (F, 3):
            raise InvalidInputError(
                f"root_positions must have shape ({F}, 3), got {root.shape}",
                argument="root_positions")
        ft = as_float(self.frame_time, "frame_time", minimum=0.0, exclusive=True)
        translations: dict[int, FloatArray] = {}
        for key, value in dict(self.joint_translations).items():
            j = self.skeleton.index(key)
            if j == 0:
                raise InvalidInputError(
                    "joint_translations must not hold the root (use root_positions), got 0",
                    argument="joint_translations")
            t = as_points(value, f"joint_translations[{j}]")
            if t.shape != (F, 3):
                raise InvalidInputError(
                    f"joint_translations[{j}] must have shape ({F}, 3), got {t.shape}",
                    argument="joint_translations")
            translations[j] = _readonly(t)
        object.__setattr__(self, "rotations", _readonly(rot))
        object.__setattr__(self, "root_positions", _readonly(root))
        object.__setattr__(self, "frame_time", ft)
        object.__setattr__(self, "joint_translations", translations)

    # ------------------------------------------------------------------ sizes
    @property
    def num_frames(self) -> int:
        """Number of frames F."""
        return int(self.rotations.shape[0])

    @property
    def num_joints(self) -> int:
        """Number of joints J."""
        return self.skeleton.num_joints

    @property
    def names(self) -> tuple[str, ...]:
        """The skeleton's joint names."""
        return self.skeleton.names

    @property
    def frame_rate(self) -> float:
        """Frames per second."""
        return 1.0 / self.frame_time

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame, ``(F - 1) · frame_time``."""
        return max(self.num_frames - 1, 0) * self.frame_time

    def __len__(self) -> int:
        return self.num_frames

    def __repr__(self) -> str:
        return (f"Motion({self.num_frames} frames at {self.frame_rate:.6g} fps, "
                f"{self.num_joints} joints)")

    # ------------------------------------------------------------------ kinematics
    def local_translations(self) -> FloatArray:
        """Each joint's translation in its parent ``(F, J, 3)`` (offsets, or animated)."""
        t = np.broadcast_to(self.skeleton.offsets, (self.num_frames, self.num_joints, 3)).copy()
        t[:, 0] = self.root_positions
        for j, value in self.joint_translations.items():
            t[:, j] = value
        return t

    def world_frames(self) -> Frame:
        """World transform of every joint per frame: a :class:`Frame` of shape ``(F, J)``."""
        q, p = _forward_kinematics(self.skeleton.parents, self.rotations,
                                   self.local_translations())
        return Frame._make(q, p)

    def world_positions(self, *, include_end_sites: bool = False,
                        joints: Sequence[int | str] | None = None) -> FloatArray:
        """World joint positions ``(F, J, 3)``.

        With ``include_end_sites`` the End Sites follow the joints: ``(F, J + E, 3)``,
        in the order of ``skeleton.end_site_parents``. ``joints`` (names or indices)
        picks joints in that order instead: ``(F, len(joints), 3)``, for example a
        position skeleton's order (:data:`~limbik.skeleton.positions.POSITION_SKELETONS`).
        """
        q, p = _forward_kinematics(self.skeleton.parents, self.rotations,
                                   self.local_translations())
        if joints is not None:
            if include_end_sites:
                raise InvalidInputError("joints and include_end_sites cannot be combined, "
                                        "got both", argument="joints")
            if isinstance(joints, str):
                raise InvalidInputError(f"joints must be a sequence of names or indices, "
                                        f"got the string {joints!r}", argument="joints")
            return p[:, [self.skeleton.index(j) for j in joints]]
        if not include_end_sites:
            return p
        sk = self.skeleton
        ends = p[:, sk.end_site_parents] + rotate_vectors(q[:, sk.end_site_parents],
                                                          sk.end_site_offsets)
        return np.concatenate([p, ends], axis=1)

    def world_rotations(self) -> FloatArray:
        """World joint rotations ``(F, J, 4)`` (x, y, z, w)."""
        q, _ = _forward_kinematics(self.skeleton.parents, self.rotations,
                                   self.local_translations())
        return q

    def rest_positions(self, *, include_end_sites: bool = False) -> FloatArray:
        """World positions of the rest pose ``(J, 3)`` (see :meth:`Skeleton.rest_positions`)."""
        return self.skeleton.rest_positions(include_end_sites=include_end_sites)

    @classmethod
    def rest(cls, skeleton: Skeleton, num_frames: int = 1, frame_time: float = 1.0 / 30.0,
             ) -> Motion:
        """A motion that holds the rest pose (identity rotations, root at its offset)."""
        if not isinstance(skeleton, Skeleton):
            raise InvalidInputError(f"skeleton must be a Skeleton, got {type(skeleton).__name__}",
                                    argument="skeleton")
        if isinstance(num_frames, float | np.floating) and float(num_frames).is_integer():
            num_frames = int(num_frames)  # 3.0 from arithmetic is a count
        n = as_int(num_frames, "num_frames", minimum=1)
        rot = np.zeros((n, skeleton.num_joints, 4))
        rot[..., 3] = 1.0
        root = np.broadcast_to(skeleton.offsets[0], (n, 3))
        return cls(skeleton, root, rot, frame_time)

    @classmethod
    def from_positions(cls, positions: Any, skeleton: Any, *, names: Sequence[str] | None = None,
                       frame_time: float = 1.0 / 20.0, rest_frame: int = 0) -> Motion:
        """A motion whose forward kinematics reproduces joint positions ``(F, J, 3)``.

        ``skeleton`` is a built-in position skeleton's name (``"smpl22"``, ``"smpl24"``:
        :data:`~limbik.skeleton.positions.POSITION_SKELETONS`) or a parents list, with
        ``names`` for its joints. Every bone gets one length (its median over the
        frames); the rest pose is frame ``rest_frame`` with those lengths, and each
        joint turns by the smallest rotation that points its bones where the positions
        put them (see :func:`~limbik.skeleton.positions.fit_positions`, which also
        reports the bones' length wobble and the residual). Positions made by one
        skeleton's forward kinematics come back to rounding.
        """
        joint_names, parents = position_layout(skeleton, names)
        fit = fit_positions(positions, parents, rest_frame=rest_frame)
        return cls(Skeleton(joint_names, parents, fit.offsets), fit.root_positions,
                   fit.rotations, frame_time)

    def with_rotations(self, rotations: Any) -> Motion:
        """This motion with new local rotations ``(F, J, 4)``."""
        return dataclasses.replace(self, rotations=rotations)


def check_motion(motion: Any) -> Motion:
    """``motion`` if it is a :class:`Motion`, else an error naming the argument."""
    if not isinstance(motion, Motion):
        raise InvalidInputError(f"motion must be a Motion, got {type(motion).__name__}",
                                argument="motion")
    return motion
