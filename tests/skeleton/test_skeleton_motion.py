"""Skeleton and Motion: validation, topology helpers, forward kinematics, rest pose."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from bvh_samples import SMALL_BVH, corner_case_bvh
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import limbik
from limbik.errors import InvalidInputError, NonFiniteInputError


def chain_skeleton(n=4):
    return limbik.Skeleton([f"j{i}" for i in range(n)], [-1, *range(n - 1)],
                           [(0, 0, 0)] + [(0, -1.0, 0)] * (n - 1), end_sites={n - 1: (0, -0.5, 0)})


def test_skeleton_basics():
    sk = limbik.parse_bvh(corner_case_bvh(frames=1)).skeleton
    assert sk.num_joints == len(sk) == len(sk.names)
    assert sk.parents[0] == -1 and np.all(sk.parents[1:] < np.arange(1, len(sk)))
    assert sk.index("Twist") == len(sk) - 1
    assert sk.children("Hips") == [1, sk.index("Left Arm Joint")]
    assert sk.ancestors("Twist") == [sk.index(n) for n in ("Fixed", "Slider", "Left Arm Joint", "Hips")]
    assert sk.is_ancestor("Hips", "Twist") and not sk.is_ancestor("Twist", "Hips")
    mask = sk.descendants_mask("Slider")
    assert [sk.names[i] for i in np.flatnonzero(mask)] == ["Slider", "Fixed", "Twist"]
    assert not sk.descendants_mask("Slider", include_self=False)[sk.index("Slider")]
    assert sk.leaves() == [sk.index("Chain5"), sk.index("Twist")]
    assert sk.num_channels == 6 + 18 + 2 + 6 + 0 + 1
    assert sk.end_site_parents.tolist() == [sk.index("Chain5"), sk.index("Twist")]
    assert "Skeleton(11 joints" in repr(sk)
    with pytest.raises(ValueError, match="read-only"):
        sk.offsets[0, 0] = 1.0
    with pytest.raises(AttributeError, match="immutable"):
        sk.names = ()
    assert sk == limbik.parse_bvh(corner_case_bvh(frames=2, seed=0)).skeleton


def test_rest_pose_and_bone_lengths():
    sk = chain_skeleton()
    np.testing.assert_allclose(sk.rest_positions(), [[0, 0, 0], [0, -1, 0], [0, -2, 0], [0, -3, 0]])
    np.testing.assert_allclose(sk.rest_positions(include_end_sites=True)[-1], [0, -3.5, 0])
    np.testing.assert_allclose(sk.bone_lengths(), [0, 1, 1, 1])
    rest = limbik.Motion.rest(sk, num_frames=3)
    np.testing.assert_allclose(rest.world_positions(), np.broadcast_to(sk.rest_positions(), (3, 4, 3)))
    np.testing.assert_allclose(rest.rest_positions(), sk.rest_positions())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"names": []}, "at least one joint"),
        ({"names": ["a", "a"]}, "unique"),
        ({"parents": [0, 0]}, r"parents\[0\] must be -1"),
        ({"parents": [-1, 1]}, r"parents\[1\] must be in \[0, 1\)"),
        ({"parents": [-1]}, "parents must be 2 ints"),
        ({"offsets": [(0, 0, 0)]}, r"offsets must have shape \(2, 3\)"),
        ({"offsets": [(0, 0, 0), (0, np.nan, 0)]}, "offsets must be finite"),
        ({"channels": [("Xposition",), ("Wrotation",)]}, "must be one of"),
        ({"channels": [("Xrotation", "Xrotation"), ()]}, "must not repeat"),
        ({"channels": [()]}, "channels must have 2 entries"),
        ({"end_sites": {5: (0, 0, 0)}}, "end_sites keys"),
    ],
)
def test_skeleton_validation(kwargs, match):
    args = {"names": ["a", "b"], "parents": [-1, 0], "offsets": [(0, 0, 0), (0, 1, 0)]}
    args.update(kwargs)
    with pytest.raises(InvalidInputError, match=match):
        limbik.Skeleton(**args)


def test_index_errors():
    sk = chain_skeleton()
    with pytest.raises(InvalidInputError, match="joint must be one of"):
        sk.index("nope")
    with pytest.raises(InvalidInputError, match=r"joint index must be in \[0, 4\)"):
        sk.index(4)
    with pytest.raises(InvalidInputError, match="joint must be a name or an int"):
        sk.index(1.0)


def test_motion_validation_and_replace():
    m = limbik.parse_bvh(SMALL_BVH)
    assert (m.num_frames, m.num_joints) == (2, 3)
    assert m.frame_rate == pytest.approx(1 / 0.0333333)
    assert m.duration == pytest.approx(0.0333333)
    moved = dataclasses.replace(m, root_positions=m.root_positions + [1.0, 0, 0])
    np.testing.assert_allclose(moved.world_positions(), m.world_positions() + [1.0, 0, 0])
    with pytest.raises(ValueError, match="read-only"):
        m.rotations[0, 0, 0] = 1.0
    with pytest.raises(InvalidInputError, match=r"root_positions must have shape \(2, 3\)"):
        dataclasses.replace(m, root_positions=np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match=r"rotations must have shape \(frames, 3, 4\)"):
        dataclasses.replace(m, rotations=np.ones((2, 2, 4)))
    with pytest.raises(NonFiniteInputError, match="rotations must be finite"):
        dataclasses.replace(m, rotations=np.full((2, 3, 4), np.nan))
    with pytest.raises(InvalidInputError, match="non-zero quaternion"):
        dataclasses.replace(m, rotations=np.zeros((2, 3, 4)))
    with pytest.raises(InvalidInputError, match="frame_time must be > 0"):
        dataclasses.replace(m, frame_time=0.0)
    with pytest.raises(InvalidInputError, match="must not hold the root"):
        dataclasses.replace(m, joint_translations={0: np.zeros((2, 3))})
    with pytest.raises(InvalidInputError, match="skeleton must be a Skeleton"):
        limbik.Motion("sk", np.zeros((2, 3)), np.zeros((2, 3, 4)), 0.1)
    # unnormalised quaternions are normalised; unit ones are kept bit for bit
    scaled = dataclasses.replace(m, rotations=2 * m.rotations)
    np.testing.assert_allclose(scaled.rotations, m.rotations, atol=1e-15)
    np.testing.assert_array_equal(dataclasses.replace(m).rotations, m.rotations)


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_fk_matches_matrix_composition(seed, frames):
    """World frames compose local (R, t) as 4x4 matrices do; world_frames and
    world_positions agree; end sites are the parent frame applied to their offset."""
    rng = np.random.default_rng(seed)
    sk = limbik.parse_bvh(corner_case_bvh(frames=1, seed=seed % 5)).skeleton
    J = sk.num_joints
    q = rng.normal(size=(frames, J, 4))
    m = limbik.Motion(sk, rng.normal(size=(frames, 3)), q, 0.1,
                      {sk.index("Slider"): rng.normal(size=(frames, 3))})
    t = m.local_translations()
    mats = np.zeros((frames, J, 4, 4))
    rots = Rotation.from_quat(m.rotations.reshape(-1, 4)).as_matrix().reshape(frames, J, 3, 3)
    for j in range(J):
        local = np.zeros((frames, 4, 4))
        local[:, :3, :3] = rots[:, j]
        local[:, :3, 3] = t[:, j]
        local[:, 3, 3] = 1
        p = sk.parents[j]
        mats[:, j] = local if p < 0 else mats[:, p] @ local
    frames_ = m.world_frames()
    assert frames_.shape == (frames, J)
    np.testing.assert_allclose(frames_.as_matrix(), mats, atol=1e-9)
    pos = m.world_positions(include_end_sites=True)
    np.testing.assert_allclose(pos[:, :J], mats[..., :3, 3], atol=1e-9)
    for e, (parent, offset) in enumerate(zip(sk.end_site_parents, sk.end_site_offsets, strict=True)):
        np.testing.assert_allclose(pos[:, J + e], mats[:, parent, :3, :3] @ offset + mats[:, parent, :3, 3], atol=1e-9)
    np.testing.assert_allclose(m.world_rotations(), frames_.quaternion)


def test_joint_translations_replace_offsets():
    m = limbik.parse_bvh(corner_case_bvh(frames=3, seed=2))
    j = m.skeleton.index("Slider")
    assert set(m.joint_translations) == {j}
    t = m.local_translations()
    np.testing.assert_array_equal(t[:, j], m.joint_translations[j])
    other = m.skeleton.index("Fixed")
    np.testing.assert_array_equal(t[:, other], np.broadcast_to(m.skeleton.offsets[other], (3, 3)))


def test_writer_adds_channels_a_motion_needs():
    """A joint without rotation channels that is rotated, and a root without
    position channels that moves, get channels on writing."""
    sk = limbik.Skeleton(["a", "b"], [-1, 0], [(0, 1, 0), (0, 1, 0)], channels=[(), ()])
    rot = Rotation.from_euler("xyz", [[10, 20, 30], [0, 0, 0]], degrees=True).as_quat()
    m = limbik.Motion(sk, np.array([[0, 1, 0], [0, 2, 0]]),
                      np.stack([rot, rot], axis=1), 0.5)
    again = limbik.parse_bvh(limbik.format_bvh(m))
    assert again.skeleton.position_axes(0) == "XYZ"
    assert again.skeleton.rotation_order(1) == "ZYX"
    np.testing.assert_allclose(again.world_positions(), m.world_positions(), atol=1e-12)
    still = limbik.Motion.rest(sk, 2)
    text = limbik.format_bvh(dataclasses.replace(still, root_positions=np.tile([0, 1.0, 0], (2, 1))))
    assert "CHANNELS 0" in text


def test_forward_kinematics_reads_its_inputs_without_copying_or_changing_them():
    """Contiguous inputs are handed to the kernel as they are and come back unchanged;
    read-only and broadcast inputs give the same world transforms."""
    from limbik.skeleton.motion import forward_kinematics

    rng = np.random.default_rng(3)
    parents = np.array([-1, 0, 1, 1, 3])
    rot = rng.normal(size=(6, 5, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    trans = rng.normal(size=(6, 5, 3))
    before = rot.copy(), trans.copy()
    q, p = forward_kinematics(parents, rot, trans)
    np.testing.assert_array_equal(rot, before[0])
    np.testing.assert_array_equal(trans, before[1])
    frozen_rot, frozen_trans = rot.copy(), trans.copy()
    frozen_rot.flags.writeable = frozen_trans.flags.writeable = False
    q2, p2 = forward_kinematics(parents, frozen_rot, frozen_trans)
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(p2, p)
    q3, p3 = forward_kinematics(parents, rot, trans[0])  # one set of offsets for all frames
    np.testing.assert_array_equal(q3, q)
    for f in range(6):  # frame by frame, the same numbers
        qf, pf = forward_kinematics(parents, rot[f], trans[0])
        np.testing.assert_array_equal(qf, q[f])
        np.testing.assert_array_equal(pf, p3[f])


@pytest.mark.parametrize(("parents", "rotations", "translations", "argument", "match"), [
    ([-1, 0, 1, 10**9], None, None, "parents", r"parents\[3\] = 1000000000"),
    ([-1, 0, 1, 7], None, None, "parents", r"parents\[3\] = 7"),
    ([-1, 2, 0, 1], None, None, "parents", r"parents\[1\] = 2"),
    ([-1.0, 0, 1, 2], None, None, "parents", "1-D int array"),
    ([[-1, 0, 1, 2]], None, None, "parents", "1-D int array"),
    ([-1, 0], None, None, "local_rotations", r"shape \(\.\.\., 2, 4\)"),
    ([-1, 0, 1, 2], np.zeros((4, 4)), None, "local_rotations", "non-zero quaternion"),
    ([-1, 0, 1, 2], np.ones((3, 4)), None, "local_rotations", r"shape \(\.\.\., 4, 4\)"),
    ([-1, 0, 1, 2], None, np.full((4, 3), np.nan), "local_translations", "finite"),
    ([-1, 0, 1, 2], None, np.ones((4, 2)), "local_translations", r"\(\.\.\., 3\)"),
])
def test_forward_kinematics_refuses_bad_trees_and_transforms(parents, rotations, translations,
                                                             argument, match):
    """Parents out of order or out of range (once read outside the arrays), zero
    quaternions, non-finite offsets and mismatched joint counts raise errors naming the
    argument."""
    from limbik.skeleton import forward_kinematics

    rot = np.tile([0.0, 0, 0, 1], (4, 1)) if rotations is None else rotations
    trans = np.tile([0.0, 1, 0], (4, 1)) if translations is None else translations
    with pytest.raises(InvalidInputError, match=match) as caught:
        forward_kinematics(np.array(parents), rot, trans)
    assert caught.value.argument == argument


def test_forward_kinematics_takes_a_forest_and_normalises_rotations():
    """Any joint may be a root (-1); quaternions are normalised, unit rows kept bit for bit."""
    from limbik.skeleton import forward_kinematics

    trans = np.array([[0.0, 0, 0], [0, 1, 0], [0, 1, 0], [5, 0, 0]])
    half = np.array([0.0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    rot = np.array([2 * half, [0, 0, 0, 1.0], [0, 0, 0, 1.0], [0, 0, 0, 3.0]])
    q, p = forward_kinematics([-1, 0, 1, -1], rot, trans)
    np.testing.assert_allclose(p, [[0, 0, 0], [-1, 0, 0], [-2, 0, 0], [5, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(q[3], [0, 0, 0, 1.0])
    with pytest.raises(InvalidInputError, match="batch shapes"):
        forward_kinematics([-1, 0, 1, -1], np.broadcast_to(rot, (2, 4, 4)),
                           np.broadcast_to(trans, (3, 4, 3)))


def test_forward_kinematics_checks_in_its_kernel_as_the_validators_do():
    """The kernel checks unit rotations and finite translations as it goes; its answer is
    the validated path's, bit for bit, over unit rows, rows off unit by 1e-16 to 1e-3
    (around the 1e-12 line too), huge rows and mixes; bad values raise as before, with
    ``out=`` too."""
    from limbik._runtime.validation import as_points, as_unit_quaternions
    from limbik.skeleton import forward_kinematics
    from limbik.skeleton.motion import _forward_kinematics

    rng = np.random.default_rng(8)
    parents = np.array([-1, 0, 1, 1, 3, -1])
    for trial in range(60):
        rot = rng.normal(size=(7, 6, 4))
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        if trial % 2:  # scale some rows off unit: squared norms 1 ± 1e-16 .. 1e-3
            picks = rng.random((7, 6)) < 0.2
            off = 10.0 ** rng.uniform(-16, -3, size=(7, 6)) * rng.choice([-1, 1], (7, 6))
            off[picks & (rng.random((7, 6)) < 0.3)] = rng.choice([0.99e-12, 1.01e-12])
            rot[picks] *= np.sqrt(1.0 + off[picks])[:, None]
        if trial % 5 == 0:
            rot[rng.integers(7), rng.integers(6)] *= 1e200
        trans = rng.normal(size=(7, 6, 3))
        expected = _forward_kinematics(parents, as_unit_quaternions(rot, "r"),
                                       as_points(trans, "t"))
        for got in (forward_kinematics(parents, rot, trans),
                    forward_kinematics(parents, rot, trans,
                                       out=(np.empty((7, 6, 4)), np.empty((7, 6, 3))))):
            assert got[0].tobytes() == expected[0].tobytes()
            assert got[1].tobytes() == expected[1].tobytes()
    rot = np.tile([0.0, 0, 0, 1], (6, 1))
    trans = np.zeros((6, 3))
    for bad_rot, bad_trans, argument in ((np.where(np.eye(6, 4), np.nan, rot), trans,
                                          "local_rotations"),
                                         (rot, np.full((6, 3), np.inf), "local_translations"),
                                         (np.zeros((6, 4)), trans, "local_rotations")):
        for out in (None, (np.empty((6, 4)), np.empty((6, 3)))):
            with pytest.raises(InvalidInputError) as caught:
                forward_kinematics(parents, bad_rot, bad_trans, out=out)
            assert caught.value.argument == argument
