"""``Frame``: an immutable, batched rigid transform (rotation + position), the seeds' CFrame."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from limbik._runtime.validation import (
    FloatArray,
    as_directions,
    as_float_array,
    as_points,
    as_quaternions,
    as_scalars,
    broadcast_shapes,
    finite_squares,
)
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import (
    matrix_from_quaternion,
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_from_euler_xyz,
    quaternion_from_matrix,
    quaternion_multiply,
    quaternion_slerp,
    rotate_vectors,
)
from limbik.geometry.vectors import cross, dot, norm, normalize, project_off

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = ["Frame"]

_X = np.array([1.0, 0.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])


def _scipy_rotation() -> Any:
    """scipy's ``Rotation`` class, or None where scipy (optional) is not installed."""
    try:
        from scipy.spatial.transform import Rotation
    except ImportError:
        return None
    return Rotation


def _plain_numbers(value: Any, size: int) -> list[float] | None:
    """``value`` as ``size`` finite Python floats if it is one such vector of plain
    numbers (a float64 array, or a list or tuple of ints and floats); else None."""
    if isinstance(value, np.ndarray):
        if value.shape != (size,) or value.dtype != np.float64:
            return None
        items = value.tolist()
    elif isinstance(value, list | tuple) and len(value) == size:
        if not all(type(v) is float or type(v) is int for v in value):
            return None
        try:
            items = [float(v) for v in value]
        except OverflowError:  # an int beyond the float range: reported by the array path
            return None
    else:
        return None
    return items if all(math.isfinite(v) for v in items) else None


def _one_frame(quaternion: Any, position: Any) -> tuple[FloatArray, FloatArray] | None:
    """Unit quaternion ``(4,)`` and position ``(3,)`` of one frame given as plain numbers,
    computed as :func:`as_quaternions` does; None for anything else (batches, other
    types, a quaternion too short to normalise, numbers to be checked and reported)."""
    q = _plain_numbers(quaternion, 4)
    p = _plain_numbers(position, 3) if q is not None else None
    if q is None or p is None:
        return None
    x, y, z, w = q
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if not 1e-12 <= n < math.inf:
        return None
    return np.array([x / n, y / n, z / n, w / n]), np.array(p)


def _refuse_points(other: Any) -> None:
    """``@`` composes two frames; points and arrays beside a Frame get an error that says
    how to move them (Roblox's ``CFrame * Vector3`` is ``frame.apply(points)`` here)."""
    if isinstance(other, np.ndarray | np.generic | list | tuple | float | int):
        raise InvalidInputError(
            f"@ composes two Frames, got a Frame and {type(other).__name__}; to move points "
            "use frame.apply(points)", argument="other")


class Frame:
    """A batch of rigid transforms, world ← local, like Roblox's ``CFrame``.

    A frame maps local points to world points: ``world = R · local + position``.
    ``a @ b`` composes (CFrame ``a * b``): first ``b``, then ``a``.

    Parameters
    ----------
    quaternion : array_like, shape (..., 4)
        Rotations as (x, y, z, w); normalised on construction.
    position : array_like, shape (..., 3)
        Translations. The two broadcast to one batch shape.

    Frames are immutable: their arrays are read-only.
    """

    __slots__ = ("_p", "_q")
    #: NumPy leaves its binary operators to Frame (``array @ frame`` comes here too)
    __array_ufunc__ = None

    _q: FloatArray
    _p: FloatArray

    def __init__(self, quaternion: Any = (0.0, 0.0, 0.0, 1.0),
                 position: Any = (0.0, 0.0, 0.0)) -> None:
        one = _one_frame(quaternion, position)
        if one is not None:  # a single frame of plain numbers: no array round trips
            self._set(*one)
            return
        q = as_quaternions(quaternion, "quaternion")
        p = as_points(position, "position")
        shape = broadcast_shapes(("quaternion", q.shape[:-1]), ("position", p.shape[:-1]))
        self._set(np.broadcast_to(q, shape + (4,)), np.broadcast_to(p, shape + (3,)))

    def _set(self, q: FloatArray, p: FloatArray) -> None:
        q = np.array(q, dtype=np.float64)  # own, contiguous copies
        p = np.array(p, dtype=np.float64)
        q.flags.writeable = False
        p.flags.writeable = False
        object.__setattr__(self, "_q", q)
        object.__setattr__(self, "_p", p)

    @classmethod
    def _make(cls, q: FloatArray, p: FloatArray) -> Frame:
        """Trusted constructor: ``q`` unit ``(..., 4)``, ``p`` ``(..., 3)``, broadcast here."""
        out = cls.__new__(cls)
        if q.shape[:-1] == p.shape[:-1]:
            out._set(q, p)
            return out
        shape = np.broadcast_shapes(q.shape[:-1], p.shape[:-1])
        out._set(np.broadcast_to(q, shape + (4,)), np.broadcast_to(p, shape + (3,)))
        return out

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Frame is immutable")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def identity(cls, shape: tuple[int, ...] = ()) -> Frame:
        """The identity frame, optionally repeated to batch ``shape``."""
        q = np.broadcast_to(np.array([0.0, 0.0, 0.0, 1.0]), tuple(shape) + (4,))
        return cls._make(q, np.zeros(tuple(shape) + (3,)))

    @classmethod
    def from_translation(cls, position: Any) -> Frame:
        """Pure translations ``(..., 3)`` (``CFrame.new(x, y, z)``)."""
        p = as_points(position, "position")
        return cls._make(np.array([0.0, 0.0, 0.0, 1.0]), p)

    @classmethod
    def from_axis_angle(cls, axis: Any, angle: Any, position: Any = (0.0, 0.0, 0.0)) -> Frame:
        """Rotation by ``angle`` (rad) about ``axis`` ``(..., 3)``: ``CFrame.fromAxisAngle``.

        The axis is normalised. A zero axis with angle 0 is the identity; a zero axis
        with a non-zero angle raises :class:`~limbik.errors.InvalidInputError`.
        """
        axis = finite_squares(as_points(axis, "axis"))
        angle = as_scalars(angle, "angle")
        p = as_points(position, "position")
        broadcast_shapes(("axis", axis.shape[:-1]), ("angle", angle.shape),
                         ("position", p.shape[:-1]))
        zero, nonzero_angle = np.broadcast_arrays(norm(axis) < 1e-12, angle != 0.0)
        if np.any(zero & nonzero_angle):
            raise InvalidInputError(
                "axis must be non-zero when angle is non-zero, got a zero axis",
                argument="axis")
        return cls._make(quaternion_from_axis_angle(axis, angle), p)

    @classmethod
    def from_euler_xyz(cls, rx: Any, ry: Any, rz: Any, position: Any = (0.0, 0.0, 0.0)) -> Frame:
        """``R = Rx(rx) · Ry(ry) · Rz(rz)``, radians: exactly ``CFrame.Angles(rx, ry, rz)``."""
        rx = as_scalars(rx, "rx")
        ry = as_scalars(ry, "ry")
        rz = as_scalars(rz, "rz")
        p = as_points(position, "position")
        return cls._make(quaternion_from_euler_xyz(rx, ry, rz), p)

    @classmethod
    def look_at(cls, eye: Any, target: Any, up: Any = (0.0, 1.0, 0.0)) -> Frame:
        """A frame at ``eye`` whose −Z (``look``) points at ``target``: ``CFrame.new(eye, target)``.

        +Y is as close to ``up`` as possible; ``right = look × up``.

        Degenerate cases (documented choices, never NaN):

        - ``eye == target``: no direction, so the rotation is the identity
          (look = −Z), at ``eye``.
        - ``look`` parallel to ``up``: ``right`` is world +X with its component
          along ``look`` removed (world +Z if ``look`` is along X). For the default
          ``up`` this is the limit reached when tilting from −Z to ±Y.
        """
        eye = as_points(eye, "eye")
        target = as_points(target, "target")
        up = as_directions(up, "up")[0]
        shape = broadcast_shapes(("eye", eye.shape[:-1]), ("target", target.shape[:-1]),
                                 ("up", up.shape[:-1]))
        look = normalize(target - eye, fallback=np.array([0.0, 0.0, -1.0]))
        look = np.broadcast_to(look, shape + (3,))
        up_u = normalize(up)
        right = cross(look, up_u)
        right_n = norm(right)
        parallel = right_n < 1e-12
        fallback = project_off(np.broadcast_to(_X, look.shape), look)
        fallback = np.where((norm(fallback) < 1e-6)[..., None],
                            project_off(np.broadcast_to(_Z, look.shape), look), fallback)
        right = np.where(parallel[..., None], fallback, right)
        right = normalize(right)
        true_up = cross(right, look)
        m = np.stack([right, true_up, -look], axis=-1)
        return cls._make(quaternion_from_matrix(m), np.broadcast_to(eye, shape + (3,)))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Frame:
        """From homogeneous matrices ``(..., 4, 4)``; the rotation block must be orthonormal."""
        m = as_float_array(matrix, "matrix", (4, 4))
        r = m[..., :3, :3]
        err = np.abs(np.einsum("...ji,...jk->...ik", r, r) - np.eye(3)).max(initial=0.0)
        det = np.linalg.det(r) if r.size else np.ones(0)
        if err > 1e-6 or np.any(det < 0):
            raise InvalidInputError(
                "matrix must have an orthonormal, right-handed rotation block, got deviation "
                f"{err:.3g} from orthonormal", argument="matrix")
        return cls._make(quaternion_from_matrix(r), m[..., :3, 3])

    @classmethod
    def from_rotation(cls, rotation: Rotation, position: Any = (0.0, 0.0, 0.0)) -> Frame:
        """From a scipy :class:`~scipy.spatial.transform.Rotation` and positions ``(..., 3)``."""
        rotation_class = _scipy_rotation()
        if rotation_class is None or not isinstance(rotation, rotation_class):
            raise InvalidInputError(
                f"rotation must be a scipy Rotation, got {type(rotation).__name__}",
                argument="rotation")
        p = as_points(position, "position")
        return cls._make(as_quaternions(rotation.as_quat(), "rotation"), p)

    @classmethod
    def from_quaternion(cls, quaternion: Any, position: Any = (0.0, 0.0, 0.0)) -> Frame:
        """From quaternions ``(..., 4)`` (x, y, z, w) and positions ``(..., 3)``."""
        return cls(quaternion, position)

    # ------------------------------------------------------------------ properties
    @property
    def quaternion(self) -> FloatArray:
        """Rotations ``(..., 4)`` as (x, y, z, w)."""
        return self._q

    @property
    def position(self) -> FloatArray:
        """Positions ``(..., 3)``."""
        return self._p

    @property
    def shape(self) -> tuple[int, ...]:
        """Batch shape."""
        return self._p.shape[:-1]

    @property
    def rotation_matrix(self) -> FloatArray:
        """Rotation matrices ``(..., 3, 3)``; columns are ``right``, ``up`` and ``-look``."""
        return matrix_from_quaternion(self._q)

    @property
    def right(self) -> FloatArray:
        """Local +X in world ``(..., 3)`` (``CFrame.RightVector``)."""
        return rotate_vectors(self._q, _X)

    @property
    def up(self) -> FloatArray:
        """Local +Y in world ``(..., 3)`` (``CFrame.UpVector``)."""
        return rotate_vectors(self._q, np.array([0.0, 1.0, 0.0]))

    @property
    def look(self) -> FloatArray:
        """Local −Z in world ``(..., 3)`` (``CFrame.LookVector``)."""
        return rotate_vectors(self._q, np.array([0.0, 0.0, -1.0]))

    # ------------------------------------------------------------------ algebra
    def __matmul__(self, other: Frame) -> Frame:
        """Composition ``self · other`` (CFrame ``self * other``)."""
        if not isinstance(other, Frame):
            _refuse_points(other)
            return NotImplemented
        q = quaternion_multiply(self._q, other._q)
        p = self._p + rotate_vectors(self._q, other._p)
        return Frame._make(q, p)

    def __rmatmul__(self, other: Any) -> Frame:
        _refuse_points(other)
        return NotImplemented

    def inverse(self) -> Frame:
        """The inverse transform (``CFrame:Inverse()``)."""
        qi = quaternion_conjugate(self._q)
        return Frame._make(qi, -rotate_vectors(qi, self._p))

    def to_local_frame(self, other: Frame) -> Frame:
        """``self⁻¹ · other``: ``other`` expressed in this frame (``CFrame:ToObjectSpace``)."""
        return self.inverse() @ other

    def apply(self, points: Any) -> FloatArray:
        """Local → world points ``(..., 3)`` (``CFrame * Vector3``, ``PointToWorldSpace``)."""
        pts = as_points(points, "points")
        return rotate_vectors(self._q, pts) + self._p

    def to_local(self, points: Any) -> FloatArray:
        """World → local points ``(..., 3)`` (``CFrame:PointToObjectSpace``)."""
        pts = as_points(points, "points")
        return rotate_vectors(quaternion_conjugate(self._q), pts - self._p)

    def rotate(self, vectors: Any) -> FloatArray:
        """Local → world directions, no translation (``CFrame:VectorToWorldSpace``)."""
        return rotate_vectors(self._q, as_points(vectors, "vectors"))

    def unrotate(self, vectors: Any) -> FloatArray:
        """World → local directions, no translation (``CFrame:VectorToObjectSpace``)."""
        return rotate_vectors(quaternion_conjugate(self._q), as_points(vectors, "vectors"))

    def translated(self, offset: Any) -> Frame:
        """This frame moved by a local offset: ``self · CFrame.new(offset)``."""
        off = as_points(offset, "offset")
        return Frame._make(self._q, self._p + rotate_vectors(self._q, off))

    def lerp(self, other: Frame, alpha: Any) -> Frame:
        """Interpolate toward ``other`` (``CFrame:Lerp``): slerp rotation, lerp position."""
        a = as_scalars(alpha, "alpha")
        q = quaternion_slerp(self._q, other._q, a)
        p = self._p + a[..., None] * (other._p - self._p)
        return Frame._make(q, p)

    # ------------------------------------------------------------------ conversions
    def as_matrix(self) -> FloatArray:
        """Homogeneous matrices ``(..., 4, 4)``."""
        m = np.zeros(self.shape + (4, 4))
        m[..., :3, :3] = self.rotation_matrix
        m[..., :3, 3] = self._p
        m[..., 3, 3] = 1.0
        return m

    def as_rotation(self) -> Rotation:
        """The rotations as a scipy :class:`~scipy.spatial.transform.Rotation` (needs scipy,
        an optional dependency: ``pip install scipy``)."""
        rotation_class = _scipy_rotation()
        if rotation_class is None:
            raise ImportError("Frame.as_rotation returns a scipy Rotation, and scipy is not "
                              "installed: pip install scipy")
        return rotation_class.from_quat(self._q)

    # ------------------------------------------------------------------ batch handling
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unbatched Frame")
        return self.shape[0]

    def __getitem__(self, index: Any) -> Frame:
        return Frame._make(self._q[index], self._p[index])

    def reshape(self, *shape: int) -> Frame:
        """The same frames with a new batch shape."""
        return Frame._make(self._q.reshape(*shape, 4), self._p.reshape(*shape, 3))

    def isclose(self, other: Frame, atol: float = 1e-9) -> np.ndarray:
        """Per-element bool ``(...)``: same position and rotation (q and −q are equal)."""
        dp = norm(self._p - other._p)
        dq = np.abs(np.abs(dot(self._q, other._q)) - 1.0)
        return (dp <= atol) & (dq <= atol)

    def __repr__(self) -> str:
        if self.shape == ():
            p = np.array2string(self._p, precision=6, separator=", ")
            q = np.array2string(self._q, precision=6, separator=", ")
            return f"Frame(position={p}, quaternion={q})"
        return f"Frame(shape={self.shape})"
