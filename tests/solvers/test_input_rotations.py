"""Input joint rotations (``rotations=``) of the point-chain solvers: one check, one
message, and each solver's output rotations as joint_rotations gives them."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import FabrikTree, ccd, fabrik, joint_rotations
from limbik.errors import InvalidInputError

PARENTS = [-1, 0, 1, 2, 2]
POSE = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 2.5, 0], [-1, 2.5, 0.0]])


def _chain_solvers():
    def tree(pts, target, **kw):
        return FabrikTree(PARENTS, POSE).solve({3: target, 4: target - [2.0, 0, 0]},
                                               start=pts, **kw)

    return {"fabrik": fabrik, "ccd": ccd, "tree": tree}


@pytest.mark.parametrize("solver", ["fabrik", "ccd", "tree"])
def test_rotations_of_a_wrong_shape_or_batch_are_refused_with_one_message(solver):
    solve = _chain_solvers()[solver]
    pts = np.broadcast_to(POSE, (3, 5, 3))
    target = np.array([1.2, 2.0, 0.3])
    cases = [(np.tile([0.0, 0, 0, 1], (4, 1)), r"rotations must have shape \(\.\.\., 5, 4\), "
              r"got \(4, 4\)"),
             (np.tile([0.0, 0, 0, 1], (2, 3, 5, 1)), r"rotations must have a batch shape that "
              r"broadcasts to the solve's \(3,\), got \(2, 3, 5, 4\)"),
             (np.tile([0.0, 0, 0, 1], (2, 5, 1)), r"rotations must have a batch shape that "
              r"broadcasts to the solve's \(3,\), got \(2, 5, 4\)")]
    for rotations, message in cases:
        with pytest.raises(InvalidInputError, match=message) as caught:
            solve(pts, target, rotations=rotations)
        assert caught.value.argument == "rotations"
    with pytest.raises(InvalidInputError, match="rotations must be a non-zero quaternion"):
        solve(pts, target, rotations=np.zeros((5, 4)))


@pytest.mark.parametrize("shape", [(), (1,), (8,), (2, 3)])
def test_output_rotations_are_joint_rotations_bit_for_bit(shape):
    """Each solver's rotations are those of the public joint_rotations on the solved and
    input poses and the caller's input rotations, bit for bit: the solvers normalise the
    input rotations once, as joint_rotations does."""
    rng = np.random.default_rng(len(shape))
    for _ in range(5):
        pts = np.cumsum(rng.normal(scale=0.4, size=shape + (5, 3)), axis=-2)
        target = pts[..., -1, :] + rng.normal(scale=0.5, size=shape + (3,))
        rotations = rng.normal(size=shape + (5, 4))  # not unit: the solvers normalise
        solved = fabrik(pts, target, rotations=rotations)
        assert np.array_equal(solved.rotations, joint_rotations(
            solved.positions, pts, input_rotations=rotations))
        solved = ccd(pts, target, rotations=rotations)
        assert np.array_equal(solved.rotations, joint_rotations(
            solved.positions, pts, input_rotations=rotations))
        tree = FabrikTree(PARENTS, pts)
        solved = tree.solve({3: target, 4: target - [1.0, 0, 0]}, rotations=rotations)
        assert np.array_equal(solved.rotations, joint_rotations(
            solved.positions, pts, input_rotations=rotations, parents=PARENTS))


@pytest.mark.parametrize("k", [-520, -40, 40, 520])
def test_output_rotations_do_not_depend_on_the_scale(k):
    """A chain or tree scaled by 2^k turns its joints the same way, bit for bit (bones
    of 1e-12 were taken for zero-length ones, and bones beyond 1e154 overflowed)."""
    s = 2.0**k
    rng = np.random.default_rng(7)
    pts = np.cumsum(rng.normal(scale=0.4, size=(6, 5, 3)), axis=-2)
    target = pts[:, -1, :] + rng.normal(scale=0.5, size=(6, 3))
    rotations = rng.normal(size=(6, 5, 4))
    for solve in (fabrik, ccd):
        plain = solve(pts, target, rotations=rotations)
        scaled = solve(pts * s, target * s, rotations=rotations)
        np.testing.assert_array_equal(scaled.rotations, plain.rotations)
    plain = FabrikTree(PARENTS, POSE).solve({3: [1.2, 2.0, 0.3], 4: [-0.8, 2.0, 0.3]},
                                            return_rotations=True)
    scaled = FabrikTree(PARENTS, POSE * s).solve(
        {3: np.array([1.2, 2.0, 0.3]) * s, 4: np.array([-0.8, 2.0, 0.3]) * s},
        return_rotations=True)
    np.testing.assert_array_equal(scaled.rotations, plain.rotations)
    np.testing.assert_array_equal(
        joint_rotations(pts * s, (pts + 0.1) * s, input_rotations=rotations),
        joint_rotations(pts, pts + 0.1, input_rotations=rotations))
