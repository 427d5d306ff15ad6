"""``Skeleton``: a joint hierarchy with rest offsets and a BVH channel layout."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from limbik._runtime.validation import FloatArray, as_points, as_sequence
from limbik.errors import InvalidInputError

__all__ = ["CHANNEL_NAMES", "Skeleton"]

#: The six BVH channel names, in their canonical spelling.
CHANNEL_NAMES = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")

IntArray = NDArray[np.int64]


def _readonly(array: np.ndarray) -> np.ndarray:
    out = np.array(array)  # own, contiguous copy
    out.flags.writeable = False
    return out


class Skeleton:
    """A tree of joints in BVH order: each joint's parent comes before it.

    Parameters
    ----------
    names : sequence of str, length J
        Joint names (BVH ``ROOT`` and ``JOINT`` names, in file order); unique.
    parents : sequence of int, length J
        Parent index per joint; ``-1`` for the root, which must be joint 0 and
        the only root. Every other parent index is smaller than the joint's own.
    offsets : array_like, shape (J, 3)
        Rest translation of each joint from its parent (the root's from the origin).
    channels : sequence of sequences of str, optional
        Per joint, its BVH channels in file order, from :data:`CHANNEL_NAMES`.
        Default: six channels (X/Y/Z position, then Z, Y, X rotation) on the root and
        three rotations (Z, Y, X) on every other joint.
    end_sites : mapping of int to array_like (3,), or sequence of (int, offset) pairs
        BVH ``End Site`` offsets, keyed by their parent joint. End sites are not joints.

    A skeleton is immutable; its arrays are read-only.
    """

    __slots__ = ("_channels", "_end_site_offsets", "_end_site_parents", "_index", "_names",
                 "_offsets", "_parents")

    _names: tuple[str, ...]
    _parents: IntArray
    _offsets: FloatArray
    _channels: tuple[tuple[str, ...], ...]
    _end_site_parents: IntArray
    _end_site_offsets: FloatArray
    _index: dict[str, int]

    def __init__(self, names: Sequence[str], parents: Sequence[int] | np.ndarray,
                 offsets: Any, channels: Sequence[Sequence[str]] | None = None,
                 end_sites: Mapping[int, Any] | Iterable[tuple[int, Any]] | None = None
                 ) -> None:
        names_t = as_sequence(names, "names", "joint names")
        if not names_t:
            raise InvalidInputError("names must hold at least one joint, got none",
                                    argument="names")
        for n in names_t:
            if not isinstance(n, str) or not n:
                raise InvalidInputError(f"names must be non-empty strings, got {n!r}",
                                        argument="names")
        index: dict[str, int] = {}
        for i, n in enumerate(names_t):
            if n in index:
                raise InvalidInputError(f"names must be unique, got {n!r} twice",
                                        argument="names")
            index[n] = i
        J = len(names_t)
        par = np.asarray(parents)
        if par.shape != (J,) or (J and not np.issubdtype(par.dtype, np.integer)):
            raise InvalidInputError(
                f"parents must be {J} ints, got shape {par.shape} of {par.dtype}",
                argument="parents")
        par = par.astype(np.int64)
        if par[0] != -1:
            raise InvalidInputError(f"parents[0] must be -1 (the root), got {par[0]}",
                                    argument="parents")
        idx = np.arange(J)
        bad = (par[1:] < 0) | (par[1:] >= idx[1:])
        if np.any(bad):
            j = int(np.argmax(bad)) + 1
            raise InvalidInputError(
                f"parents[{j}] must be in [0, {j}) (parents before children), got {par[j]}",
                argument="parents")
        off = as_points(offsets, "offsets")
        if off.shape != (J, 3):
            raise InvalidInputError(f"offsets must have shape ({J}, 3), got {off.shape}",
                                    argument="offsets")
        ch: tuple[tuple[str, ...], ...]
        if channels is None:
            ch = tuple((CHANNEL_NAMES[:3] + ("Zrotation", "Yrotation", "Xrotation")) if i == 0
                       else ("Zrotation", "Yrotation", "Xrotation") for i in range(J))
        else:
            ch = tuple(tuple(c) for c in channels)
            if len(ch) != J:
                raise InvalidInputError(f"channels must have {J} entries, got {len(ch)}",
                                        argument="channels")
            for j, c in enumerate(ch):
                for name in c:
                    if name not in CHANNEL_NAMES:
                        raise InvalidInputError(
                            f"channels[{j}] entries must be one of {', '.join(CHANNEL_NAMES)}, "
                            f"got {name!r}", argument="channels")
                if len(set(c)) != len(c):
                    raise InvalidInputError(f"channels[{j}] must not repeat a channel, got {c}",
                                            argument="channels")
        pairs: list[tuple[int, Any]]
        if end_sites is None:
            pairs = []
        elif isinstance(end_sites, Mapping):
            pairs = list(end_sites.items())
        else:
            pairs = list(end_sites)
        es_parents = np.array([int(p) for p, _ in pairs], dtype=np.int64)
        es_offsets = (as_points(np.array([o for _, o in pairs], dtype=np.float64), "end_sites")
                      if pairs else np.zeros((0, 3)))
        if np.any((es_parents < 0) | (es_parents >= J)):
            raise InvalidInputError(
                f"end_sites keys must be joint indices in [0, {J}), got {es_parents.tolist()}",
                argument="end_sites")
        if es_offsets.shape != (len(pairs), 3):
            raise InvalidInputError(
                f"end_sites offsets must have shape (3,), got {es_offsets.shape[1:]}",
                argument="end_sites")
        object.__setattr__(self, "_names", names_t)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_parents", _readonly(par))
        object.__setattr__(self, "_offsets", _readonly(off))
        object.__setattr__(self, "_channels", ch)
        object.__setattr__(self, "_end_site_parents", _readonly(es_parents))
        object.__setattr__(self, "_end_site_offsets", _readonly(es_offsets.reshape(-1, 3)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Skeleton is immutable")

    # ------------------------------------------------------------------ data
    @property
    def names(self) -> tuple[str, ...]:
        """Joint names, in file order."""
        return self._names

    @property
    def parents(self) -> IntArray:
        """Parent index per joint ``(J,)``; -1 for the root."""
        return self._parents

    @property
    def offsets(self) -> FloatArray:
        """Rest translation of each joint from its parent ``(J, 3)``."""
        return self._offsets

    @property
    def channels(self) -> tuple[tuple[str, ...], ...]:
        """BVH channels per joint, in file order (e.g. ``("Zrotation", "Xrotation", ...)``)."""
        return self._channels

    @property
    def end_site_parents(self) -> IntArray:
        """Parent joint of each End Site ``(E,)``."""
        return self._end_site_parents

    @property
    def end_site_offsets(self) -> FloatArray:
        """Offset of each End Site from its parent joint ``(E, 3)``."""
        return self._end_site_offsets

    @property
    def end_sites(self) -> dict[int, FloatArray]:
        """End Site offsets keyed by parent joint (the first one where a joint has several)."""
        out: dict[int, FloatArray] = {}
        for p, o in zip(self._end_site_parents.tolist(), self._end_site_offsets, strict=True):
            out.setdefault(p, o)
        return out

    @property
    def num_joints(self) -> int:
        """Number of joints J."""
        return len(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"Skeleton({self.num_joints} joints, root={self._names[0]!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Skeleton):
            return NotImplemented
        return (self._names == other._names and self._channels == other._channels
                and np.array_equal(self._parents, other._parents)
                and np.array_equal(self._offsets, other._offsets)
                and np.array_equal(self._end_site_parents, other._end_site_parents)
                and np.array_equal(self._end_site_offsets, other._end_site_offsets))

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ channels
    def rotation_order(self, joint: int | str) -> str:
        """The joint's rotation channel axes in file order, e.g. ``"ZXY"`` (``""`` if none).

        The local rotation is the product in this order: ``"ZXY"`` means ``Rz · Rx · Ry``.
        """
        j = self.index(joint)
        return "".join(c[0] for c in self._channels[j] if c.endswith("rotation"))

    def position_axes(self, joint: int | str) -> str:
        """The joint's position channel axes in file order, e.g. ``"XYZ"`` (``""`` if none)."""
        j = self.index(joint)
        return "".join(c[0] for c in self._channels[j] if c.endswith("position"))

    @property
    def num_channels(self) -> int:
        """Total number of channels per frame."""
        return sum(len(c) for c in self._channels)

    # ------------------------------------------------------------------ topology
    def index(self, joint: int | str | np.integer) -> int:
        """Index of a joint given by name or index; raises ``InvalidInputError`` if unknown."""
        if isinstance(joint, str):
            try:
                return self._index[joint]
            except KeyError:
                raise InvalidInputError(
                    f"joint must be one of the skeleton's names, got {joint!r}",
                    argument="joint") from None
        if isinstance(joint, bool) or not isinstance(joint, int | np.integer):
            raise InvalidInputError(f"joint must be a name or an int, got {joint!r}",
                                    argument="joint")
        j = int(joint)
        if not 0 <= j < self.num_joints:
            raise InvalidInputError(
                f"joint index must be in [0, {self.num_joints}), got {j}", argument="joint")
        return j

    def children(self, joint: int | str) -> list[int]:
        """Indices of the joint's direct children, in file order."""
        j = self.index(joint)
        return [int(i) for i in np.flatnonzero(self._parents == j)]

    def ancestors(self, joint: int | str) -> list[int]:
        """Indices from the joint's parent up to the root."""
        j = self.index(joint)
        out = []
        p = int(self._parents[j])
        while p >= 0:
            out.append(p)
            p = int(self._parents[p])
        return out

    def is_ancestor(self, ancestor: int | str, joint: int | str) -> bool:
        """True if ``ancestor`` is a strict ancestor of ``joint``."""
        return self.index(ancestor) in self.ancestors(joint)

    def descendants_mask(self, joint: int | str, *, include_self: bool = True) -> NDArray[np.bool_]:
        """Bool mask ``(J,)`` of the joint's subtree."""
        j = self.index(joint)
        mask = np.zeros(self.num_joints, dtype=bool)
        mask[j] = True
        for i in range(j + 1, self.num_joints):
            mask[i] = mask[self._parents[i]]
        if not include_self:
            mask[j] = False
        return mask

    def leaves(self) -> list[int]:
        """Joints without child joints."""
        has_child = np.zeros(self.num_joints, dtype=bool)
        has_child[self._parents[1:]] = True
        return [int(i) for i in np.flatnonzero(~has_child)]

    # ------------------------------------------------------------------ rest pose
    def rest_positions(self, *, include_end_sites: bool = False) -> FloatArray:
        """World positions of the rest pose (all rotations identity) ``(J, 3)``.

        With ``include_end_sites`` the End Sites follow the joints: ``(J + E, 3)``.
        """
        pos = np.zeros((self.num_joints, 3))
        for j in range(self.num_joints):
            p = self._parents[j]
            pos[j] = self._offsets[j] + (pos[p] if p >= 0 else 0.0)
        if include_end_sites:
            ends = pos[self._end_site_parents] + self._end_site_offsets
            pos = np.concatenate([pos, ends], axis=0)
        return pos

    def bone_lengths(self) -> FloatArray:
        """Length of each joint's offset from its parent ``(J,)`` (the root's is 0)."""
        lengths = np.linalg.norm(self._offsets, axis=-1)
        lengths[0] = 0.0
        return lengths
