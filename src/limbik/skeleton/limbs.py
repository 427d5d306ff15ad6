"""Finding legs and arms in a skeleton by joint names, falling back on topology.

Recognised naming schemes (case-insensitive; namespaces such as ``mixamorig:`` and
prefixes such as ``Bip01``/``DEF-`` are ignored):

- CMU: ``LeftHip, LeftKnee, LeftAnkle, LeftToe``; ``LeftShoulder, LeftElbow, LeftWrist``
  (and CMU exports with Mixamo-style names);
- Mixamo: ``LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase``; ``LeftArm, LeftForeArm, LeftHand``;
- generic: thigh/upperleg, calf/shin/lowerleg/knee, foot/ankle, toe/ball;
  upperarm, forearm/lowerarm, hand/wrist; with side markers ``Left``/``L``/``l``
  as a word, prefix or suffix (``thigh_l``, ``L_Thigh``, ``Thigh.L``, ``lhand``).

Among the joints whose names fit a role, the chain that is connected (each joint
an ancestor of the next) with the fewest joints in between wins, so a clavicle
named ``LeftShoulder`` loses to ``LeftArm`` when both exist. Without names, two
mirror-image chains of at least three joints below a common joint are used:
legs go down (−Y), arms are the highest such pair. Left is +X of the rest pose
(a character facing +Z, as in CMU data); pass ``left_side=(-1, 0, 0)`` for others.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

import numpy as np

from limbik._runtime.validation import as_points
from limbik.errors import DetectionError, InvalidInputError, LimbikError
from limbik.skeleton.skeleton import Skeleton

__all__ = ["Arm", "Leg", "find_arms", "find_legs", "joint_sides"]


@dataclasses.dataclass(frozen=True)
class Leg:
    """Joint indices of one leg; ``toe`` is None when the skeleton has no toe joint."""

    side: str
    hip: int
    knee: int
    ankle: int
    toe: int | None

    @property
    def chain(self) -> tuple[int, int, int]:
        """(hip, knee, ankle): the two-bone chain."""
        return (self.hip, self.knee, self.ankle)


@dataclasses.dataclass(frozen=True)
class Arm:
    """Joint indices of one arm (shoulder = the upper-arm joint)."""

    side: str
    shoulder: int
    elbow: int
    wrist: int

    @property
    def chain(self) -> tuple[int, int, int]:
        """(shoulder, elbow, wrist): the two-bone chain."""
        return (self.shoulder, self.elbow, self.wrist)


# Role words after removing side markers, best first. "leg" alone is the shin
# (Mixamo LeftLeg) and "shoulder" the upper arm only when nothing better connects.
_LEG_ROLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "hip": (("upleg", "upperleg", "thigh", "hip", "femur", "legupper", "thighbone"),),
    "knee": (("leg", "lowerleg", "calf", "shin", "knee", "tibia", "leglower", "crus"),),
    "ankle": (("foot", "ankle", "tarsus"),),
    "toe": (("toebase", "toe", "toes", "ball", "toe0", "toe1", "forefoot"),
            ("toeend", "toetip", "toe_end")),
}
_ARM_ROLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "shoulder": (("arm", "upperarm", "uparm", "humerus", "armupper"), ("shoulder",)),
    "elbow": (("forearm", "lowerarm", "elbow", "loarm", "armlower", "radius"),),
    "wrist": (("hand", "wrist"),),
}
_IGNORED = {"mixamorig", "bip", "bip01", "bip001", "def", "org", "mch", "jnt", "bn", "b", "j",
            "character", "ctrl"}
_LEFT = {"left", "l", "lft", "lt"}
_RIGHT = {"right", "r", "rgt", "rt"}
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _tokens(name: str) -> list[str]:
    name = name.rsplit(":", 1)[-1].rsplit("|", 1)[-1]
    out: list[str] = []
    for part in re.split(r"[\s_.\-]+", name):
        out.extend(t.lower() for t in _CAMEL.findall(part))
    return [t for t in out if t not in _IGNORED]


def _side_and_role(name: str, words: set[str]) -> tuple[str, str] | None:
    """('L' or 'R', role word) for a name, or None if it has no side or no known role."""
    tokens = _tokens(name)
    sides = {"L" for t in tokens if t in _LEFT} | {"R" for t in tokens if t in _RIGHT}
    rest = [t for t in tokens if t not in _LEFT and t not in _RIGHT]
    if not sides and len(rest) >= 1 and rest[0][:1] in ("l", "r"):
        # glued prefix: "lhand", "rthigh"
        glued = rest[0][1:] + "".join(rest[1:])
        if glued in words:
            return ("L" if rest[0][0] == "l" else "R"), glued
    if len(sides) != 1:
        return None
    role = "".join(t for t in rest if not t.isdigit()) or ""
    if role not in words:
        role = "".join(rest)
    return (sides.pop(), role) if role in words else None


def _by_name(skeleton: Skeleton, roles: dict[str, tuple[tuple[str, ...], ...]],
             required: tuple[str, ...]) -> dict[str, dict[str, int | None]] | None:
    """Per side, role → joint index from names (None if a side cannot be completed)."""
    words = {w for tiers in roles.values() for tier in tiers for w in tier}
    candidates: dict[str, dict[str, list[tuple[int, int]]]] = {
        "L": {r: [] for r in roles}, "R": {r: [] for r in roles}}
    for j, name in enumerate(skeleton.names):
        found = _side_and_role(name, words)
        if found is None:
            continue
        side, word = found
        for role, tiers in roles.items():
            for rank, tier in enumerate(tiers):
                if word in tier:
                    candidates[side][role].append((rank, j))
    out: dict[str, dict[str, int | None]] = {}
    for side in ("L", "R"):
        best = _best_chain(skeleton, [candidates[side][r] for r in required])
        if best is None:
            return None
        chosen: dict[str, int | None] = dict(zip(required, best, strict=True))
        for role in roles:
            if role not in required:
                tail = best[-1]
                options = [(rank, _hops(skeleton, tail, j), j)
                           for rank, j in candidates[side][role] if _hops(skeleton, tail, j)]
                if not options and role == "toe" and "ankle" in chosen:
                    # SMPL's order (ankle, then "foot"): a foot joint below the
                    # chosen ankle is the ball of the foot
                    options = [(rank, _hops(skeleton, tail, j), j)
                               for rank, j in candidates[side]["ankle"]
                               if _hops(skeleton, tail, j)]
                chosen[role] = min(options)[2] if options else None
        out[side] = chosen
    return out


def _hops(skeleton: Skeleton, ancestor: int, joint: int) -> int:
    """Number of parent steps from ``joint`` up to ``ancestor`` (0 if not an ancestor)."""
    steps = 0
    j = joint
    while j > ancestor:
        j = int(skeleton.parents[j])
        steps += 1
    return steps if j == ancestor and steps > 0 else 0


def _best_chain(skeleton: Skeleton, options: list[list[tuple[int, int]]]) -> list[int] | None:
    """One joint per role (``options``: (rank, joint) per role), each an ancestor of the
    next, with the fewest hops, then the best ranks; None if no chain connects.

    Dynamic programming over the roles: each candidate walks up its ancestors once,
    so the cost is candidates times depth, never the product of the candidate lists.
    """
    parents = skeleton.parents
    # best (hops, rank sum, joints) ending at each candidate of the current role
    best: dict[int, tuple[int, int, list[int]]] = {}
    for rank, j in options[0]:
        if j not in best or (0, rank) < best[j][:2]:
            best[j] = (0, rank, [j])
    for role_options in options[1:]:
        step: dict[int, tuple[int, int, list[int]]] = {}
        for rank, j in role_options:
            a, hops = int(parents[j]), 1
            while a >= 0:
                if a in best:
                    h, r, joints = best[a]
                    key = (h + hops, r + rank, [*joints, j])
                    if j not in step or key[:2] < step[j][:2]:
                        step[j] = key
                a, hops = int(parents[a]), hops + 1
        best = step
        if not best:
            return None
    if not best:
        return None
    return min(best.values(), key=lambda item: item[:2])[2]


# ---------------------------------------------------------------------- topology
def _effective(start: int, chain: list[int], rest: np.ndarray, scale: float) -> list[int]:
    """``chain`` without joints that sit on their predecessor (zero-length bones)."""
    out: list[int] = []
    previous = start
    for j in chain:
        if np.linalg.norm(rest[j] - rest[previous]) < 1e-6 * scale:
            continue
        out.append(j)
        previous = j
    return out


def _longest_pair(chain: list[int], rest: np.ndarray) -> int:
    """Index i maximising min(|c[i]c[i+1]|, |c[i+1]c[i+2]|): the two main limb bones."""
    lengths = np.linalg.norm(np.diff(rest[chain], axis=0), axis=1)
    scores = np.minimum(lengths[:-1], lengths[1:])
    return int(np.argmax(scores))


_PAIRS_PER_CHAIN = 32
"""Mirror candidates compared per chain in the topology fallback (keeps it linear)."""


def _fork_chains(skeleton: Skeleton, rest: np.ndarray, scale: float
                 ) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Leaf chains by (fork, effective length >= 3): lists of (fork's child, leaf).

    A fork is an ancestor with at least two children; two leaves can only be a mirror
    pair below their lowest common ancestor, so each leaf is listed under each fork on
    its root path. Effective lengths count the joints that do not sit on their parent.
    """
    parents = skeleton.parents
    moved = np.ones(skeleton.num_joints, dtype=np.int64)
    moved[1:] = np.linalg.norm(rest[1:] - rest[parents[1:]], axis=1) >= 1e-6 * scale
    depth = np.zeros(skeleton.num_joints, dtype=np.int64)
    for j in range(1, skeleton.num_joints):
        depth[j] = depth[parents[j]] + moved[j]
    children = np.bincount(parents[1:], minlength=skeleton.num_joints)
    buckets: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for leaf in skeleton.leaves():
        below, j = leaf, int(parents[leaf])
        while j >= 0:
            length = int(depth[leaf] - depth[j])
            if children[j] >= 2 and length >= 3:
                buckets.setdefault((j, length), []).append((below, leaf))
            below, j = j, int(parents[j])
    return buckets


def _by_topology(skeleton: Skeleton, left_side: np.ndarray, *, arms: bool
                 ) -> dict[str, list[int]] | None:
    """Left and right chains from mirror-image pairs of leaf paths, or None.

    Linear in the number of leaves times the depth: leaves are grouped by fork and
    chain length, and each chain is compared with at most ``_PAIRS_PER_CHAIN`` chains
    on the other side of its fork.
    """
    rest = skeleton.rest_positions()
    scale = float(np.ptp(rest, axis=0).max()) or 1.0
    pairs = []
    for (fork, _), members in _fork_chains(skeleton, rest, scale).items():
        if len(members) < 2:
            continue
        lateral_end = (rest[[leaf for _, leaf in members]] - rest[fork]) @ left_side
        plus = [m for m, lat in zip(members, lateral_end, strict=True) if lat > 1e-6 * scale]
        minus: dict[int, list[int]] = {}  # by the fork's child they hang from
        for (below, leaf), lat in zip(members, lateral_end, strict=True):
            if lat < -1e-6 * scale:
                minus.setdefault(below, []).append(leaf)
        for below1, l1 in plus:
            mirrors = itertools.chain.from_iterable(
                leaves for below, leaves in minus.items() if below != below1)
            for l2 in itertools.islice(mirrors, _PAIRS_PER_CHAIN):
                pair = _mirror_pair(skeleton, rest, scale, left_side, fork, l1, l2)
                if pair is not None:
                    pairs.append(pair)
    legs = [p for p in pairs if p[0] > 0.1 * scale]
    if not arms:
        if not legs:
            return None
        chosen = max(legs, key=lambda p: p[0])
    else:
        floor = max(legs, key=lambda p: p[0])[1] if legs else -np.inf
        others = [p for p in pairs if p[1] > floor]
        if not others:
            return None
        chosen = max(others, key=lambda p: p[2])
    return {"L": chosen[3], "R": chosen[4]}


def _mirror_pair(skeleton: Skeleton, rest: np.ndarray, scale: float, left_side: np.ndarray,
                 fork: int, l1: int, l2: int
                 ) -> tuple[float, float, float, list[int], list[int]] | None:
    """(drop, fork height, reach, left chain, right chain) if the two leaf chains below
    ``fork`` are mirror images across ``left_side``, else None."""
    parents = skeleton.parents
    paths = []
    for leaf in (l1, l2):
        path = [leaf]
        while int(parents[path[-1]]) != fork:
            path.append(int(parents[path[-1]]))
        paths.append(path[::-1])
    c1 = _effective(fork, paths[0], rest, scale)
    c2 = _effective(fork, paths[1], rest, scale)
    if len(c1) != len(c2) or len(c1) < 3:
        return None
    d1 = rest[c1] - rest[fork]
    d2 = rest[c2] - rest[fork]
    lateral1, lateral2 = d1 @ left_side, d2 @ left_side
    other1 = d1 - lateral1[:, None] * left_side
    other2 = d2 - lateral2[:, None] * left_side
    mirrored = (np.abs(other1 - other2).max() < 0.05 * scale
                and np.abs(lateral1 + lateral2).max() < 0.05 * scale)
    opposite = min(abs(lateral1[-1]), abs(lateral2[-1])) > 1e-6 * scale and (
        np.sign(lateral1[-1]) != np.sign(lateral2[-1]))
    if not (mirrored and opposite):
        return None
    drop = float(rest[fork, 1] - max(rest[c1[-1], 1], rest[c2[-1], 1]))
    reach = float(np.abs(lateral1).max() + np.abs(lateral2).max())
    left, right = (c1, c2) if lateral1[-1] > lateral2[-1] else (c2, c1)
    return drop, float(rest[fork, 1]), reach, left, right


# ---------------------------------------------------------------------- public API
def _resolve_overrides(skeleton: Skeleton, overrides: dict[str, Any],
                       roles: tuple[str, ...]) -> dict[str, dict[str, int | None]]:
    allowed = {f"{side}_{role}" for side in ("left", "right") for role in roles}
    out: dict[str, dict[str, int | None]] = {"L": {}, "R": {}}
    for key, value in overrides.items():
        if key not in allowed:
            raise InvalidInputError(
                f"override must be one of {', '.join(sorted(allowed))}, got {key!r}",
                argument=key)
        side, role = key.split("_", 1)
        out["L" if side == "left" else "R"][role] = (None if value is None
                                                      else skeleton.index(value))
    return out


def _find(skeleton: Skeleton, kind: str, roles: dict[str, tuple[tuple[str, ...], ...]],
          required: tuple[str, ...], overrides: dict[str, Any], left_side: Any,
          ) -> dict[str, dict[str, int | None]]:
    if not isinstance(skeleton, Skeleton):
        raise InvalidInputError(f"skeleton must be a Skeleton, got {type(skeleton).__name__}",
                                argument="skeleton")
    forced = _resolve_overrides(skeleton, overrides, tuple(roles))
    side_vec = as_points(left_side, "left_side")
    if side_vec.shape != (3,) or not np.linalg.norm(side_vec) > 0:
        raise InvalidInputError(f"left_side must be a non-zero 3-vector, got {side_vec}",
                                argument="left_side")
    side_vec = side_vec / np.linalg.norm(side_vec)
    found = _by_name(skeleton, roles, required)
    if found is None:
        chains = _by_topology(skeleton, side_vec, arms=kind == "arms")
        if chains is not None:
            rest = skeleton.rest_positions()
            found = {}
            for side, chain in chains.items():
                i = _longest_pair(chain, rest)
                picked: dict[str, int | None] = dict(
                    zip(required, chain[i:i + len(required)], strict=True))
                if "toe" in roles:
                    picked["toe"] = chain[i + 3] if i + 3 < len(chain) else None
                found[side] = picked
    if found is None:
        found = {"L": {}, "R": {}}
    for side in ("L", "R"):
        found[side].update(forced[side])
        missing = [r for r in required if found[side].get(r) is None]
        if missing:
            name = "left" if side == "L" else "right"
            raise DetectionError(
                f"could not find the {name} {kind[:-1]} ({', '.join(missing)}) by name or "
                f"topology; pass overrides such as {name}_{missing[0]}='JointName'",
                list(skeleton.names))
    return found


def find_legs(skeleton: Skeleton, *, left_side: Any = (1.0, 0.0, 0.0),
              **overrides: str | int | None) -> tuple[Leg, Leg]:
    """The (left, right) legs of ``skeleton``.

    Overrides name joints directly: ``left_hip``, ``left_knee``, ``left_ankle``,
    ``left_toe`` and the ``right_*`` equivalents (a name or an index; ``None`` for
    no toe). Raises :class:`~limbik.errors.DetectionError`, listing the joint
    names, when a leg cannot be found.
    """
    found = _find(skeleton, "legs", _LEG_ROLES, ("hip", "knee", "ankle"), overrides, left_side)
    legs = []
    for side in ("L", "R"):
        f = found[side]
        hip, knee, ankle = (int(f[r]) for r in ("hip", "knee", "ankle"))  # type: ignore[arg-type]
        toe = f.get("toe")
        legs.append(Leg("left" if side == "L" else "right", hip, knee, ankle,
                        None if toe is None else int(toe)))
    return legs[0], legs[1]


def find_arms(skeleton: Skeleton, *, left_side: Any = (1.0, 0.0, 0.0),
              **overrides: str | int | None) -> tuple[Arm, Arm]:
    """The (left, right) arms of ``skeleton``: shoulder (upper arm), elbow, wrist.

    Overrides: ``left_shoulder``, ``left_elbow``, ``left_wrist`` and ``right_*``.
    Raises :class:`~limbik.errors.DetectionError` listing the joint names on failure.
    """
    found = _find(skeleton, "arms", _ARM_ROLES, ("shoulder", "elbow", "wrist"), overrides,
                  left_side)
    arms = []
    for side in ("L", "R"):
        f = found[side]
        s, e, w = (int(f[r]) for r in ("shoulder", "elbow", "wrist"))  # type: ignore[arg-type]
        arms.append(Arm("left" if side == "L" else "right", s, e, w))
    return arms[0], arms[1]


def joint_sides(skeleton: Any) -> list[str]:
    """``"left"``, ``"right"`` or ``""`` per joint: the legs and arms found by
    :func:`find_legs`/:func:`find_arms` and every joint below them (for pictures)."""
    parents = np.asarray(skeleton.parents)
    sides = [""] * len(parents)
    starts: dict[int, str] = {}
    for finder, first in ((find_legs, "hip"), (find_arms, "shoulder")):
        try:
            limbs = finder(skeleton)
        except LimbikError:
            continue
        for limb in limbs:
            starts[int(getattr(limb, first))] = "left" if limb.side.lower().startswith(
                "l") else "right"
    for j, p in enumerate(parents):  # parents come before children
        sides[j] = starts.get(j, sides[p] if p >= 0 else "")
    return sides
