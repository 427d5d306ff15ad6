"""``cone_frames="seed"`` on ``fabrik`` and ``FabrikTree``, and FabrikTree's single passes."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import EllipticalCone, FabrikTree, fabrik, roblox
from limbik.errors import InvalidInputError


def random_chain(rng, n):
    steps = rng.normal(size=(n - 1, 3))
    steps *= rng.uniform(0.4, 1.5, size=(n - 1, 1)) / np.linalg.norm(steps, axis=1, keepdims=True)
    return np.vstack([np.zeros(3), np.cumsum(steps, axis=0)]) + rng.normal(size=3)


def seed_chain(joints, angles):
    chain = roblox.FabrikChain(joints, joints[-1])
    chain.constrained = True
    chain.left, chain.right, chain.up, chain.down = angles
    return chain


def test_one_forward_pass_with_seed_frames_is_the_seed_forward():
    """A chain as a tree: ``forward`` with seed frames equals ``FabrikChain.forward``."""
    rng = np.random.default_rng(41)
    for _ in range(300):
        n = int(rng.integers(3, 7))
        rest = random_chain(rng, n)
        angles = rng.uniform(0.1, 1.4, size=4)
        cones = [None] + [EllipticalCone(*angles, method="seed")] * (n - 2)
        tree = FabrikTree(np.arange(-1, n - 1), rest, constraints=cones, cone_frames="seed")
        moved = rest + rng.normal(size=rest.shape) * 0.3
        ours = tree.forward(moved, root=rest[0])
        chain = seed_chain(rest, angles)
        chain.joints = moved.copy()
        chain.forward()
        np.testing.assert_allclose(ours, chain.joints, atol=1e-9)


def test_one_backward_pass_is_the_seed_backward_with_centroids():
    rng = np.random.default_rng(42)
    # trunk 0-1-2, branches 2-3-4 and 2-5-6
    parents = np.array([-1, 0, 1, 2, 3, 2, 5])
    for _ in range(100):
        trunk = random_chain(rng, 3)
        b1 = random_chain(rng, 3)
        b2 = random_chain(rng, 3)
        b1 += trunk[-1] - b1[0]
        b2 += trunk[-1] - b2[0]
        pose = np.vstack([trunk, b1[1:], b2[1:]])
        t1, t2 = rng.normal(size=3) + b1[-1], rng.normal(size=3) + b2[-1]
        tree = FabrikTree(parents, pose)
        out = tree.backward(pose, {4: t1, 6: t2})
        c1 = roblox.FabrikChain(b1, t1)
        c2 = roblox.FabrikChain(b2, t2)
        c1.backward()
        c2.backward()
        np.testing.assert_allclose(out[[3, 4]], c1.joints[1:], atol=1e-12)
        np.testing.assert_allclose(out[[5, 6]], c2.joints[1:], atol=1e-12)
        centroid = (c1.joints[0] + c2.joints[0]) / 2
        np.testing.assert_allclose(out[2], centroid, atol=1e-12)
        ct = roblox.FabrikChain(trunk, centroid)
        ct.backward()
        np.testing.assert_allclose(out[:2], ct.joints[:2], atol=1e-12)
        # a forward pass puts the root back and keeps every bone length
        fw = tree.forward(out)
        np.testing.assert_allclose(fw[0], pose[0], atol=1e-15)
        bones = np.linalg.norm(fw[1:] - fw[parents[1:]], axis=1)
        np.testing.assert_allclose(bones, np.linalg.norm(pose[1:] - pose[parents[1:]], axis=1),
                                   rtol=1e-12)


def seed_ellipse(calc, line, up, right, angles):
    """The seed's in-cone measure (``<= 1`` inside; inf behind the cone's apex).

    The seed measures along the closer of ±up and of ±right, so both coordinates are
    taken >= 0 and only the ``right`` and ``up`` angles bound its cone.
    """
    axis = line / np.linalg.norm(line)
    h = float(np.dot(calc, axis))
    if h <= 0:
        return np.inf
    x, y = abs(float(np.dot(calc, right))), abs(float(np.dot(calc, up)))
    return (x / (h * np.tan(angles[1]))) ** 2 + (y / (h * np.tan(angles[2]))) ** 2


def test_fabrik_seed_frames_keep_every_bone_in_the_seed_cone():
    rng = np.random.default_rng(43)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(3, 7))
        rest = random_chain(rng, n)
        angles = rng.uniform(0.15, 1.3, size=4)
        cones = [None] + [EllipticalCone(*angles, method="seed")] * (n - 2)
        target = rest[0] + rng.normal(size=3)
        sol = fabrik(rest, target, constraints=cones, cone_frames="seed", max_iterations=20)
        p = sol.positions
        for i in range(1, n - 1):
            _, up, right = roblox.look_at_axes(tuple(p[i - 1]), tuple(p[i]))
            assert seed_ellipse(p[i + 1] - p[i], p[i] - p[i - 1], up, right, angles) <= 1 + 1e-9
            checked += 1
        np.testing.assert_allclose(np.linalg.norm(np.diff(p, axis=0), axis=1),
                                   np.linalg.norm(np.diff(rest, axis=0), axis=1), rtol=1e-9)
    assert checked > 300


def test_seed_and_carried_frames_differ_for_asymmetric_cones_only():
    rng = np.random.default_rng(44)
    rest = random_chain(rng, 5)
    target = rest[0] + np.array([0.5, 0.8, -0.3])
    sym = [None] + [EllipticalCone(0.5, 0.5, 0.5, 0.5)] * 3
    a = fabrik(rest, target, constraints=sym, cone_frames="seed").positions
    b = fabrik(rest, target, constraints=sym, cone_frames="carried").positions
    # a circular cone has no "up" (the target is out of these cones' reach: the polish's
    # steps after FABRIK carry rounding a little further)
    np.testing.assert_allclose(a, b, atol=1e-6)
    asym = [None] + [EllipticalCone(0.1, 1.2, 0.2, 0.9)] * 3
    a = fabrik(rest, target, constraints=asym, cone_frames="seed").positions
    b = fabrik(rest, target, constraints=asym, cone_frames="carried").positions
    assert np.abs(a - b).max() > 1e-3


def test_cone_frames_errors_name_the_argument():
    with pytest.raises(InvalidInputError, match="cone_frames must be one of"):
        fabrik(np.eye(3), [0, 0, 0], cone_frames="look")
    with pytest.raises(InvalidInputError, match="cone_frames"):
        FabrikTree([-1, 0, 1], np.eye(3), cone_frames=1)
    tree = FabrikTree([-1, 0, 1], np.eye(3))
    with pytest.raises(InvalidInputError, match="positions must have shape"):
        tree.forward(np.zeros((2, 3)))
