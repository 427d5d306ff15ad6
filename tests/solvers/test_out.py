"""out=: every batched solver writes into an earlier result's arrays, with the same bits as
a fresh solve, also when the input pose is that result's own array (a warm start)."""

from __future__ import annotations

import numpy as np
import pytest

import limbik
from limbik import FabrikTree
from limbik.errors import InvalidInputError
from limbik.skeleton import forward_kinematics

FIELDS = ("positions", "reached", "error", "iterations", "rotations", "q", "root_offset")
SHAPES = [(), (1,), (4,), (2, 3)]


def assert_same(got, want):
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert np.shape(a) == np.shape(b), name
            assert np.array_equal(a, b), name


def check_frames(solve, start, warm):
    """Three frames into one buffer: each equals a fresh solve from the same pose; with
    ``warm`` the pose is the buffer's own positions."""
    buffer = solve(start, None)
    pose = start
    for _ in range(3):
        arg = buffer.positions if warm else pose
        want = solve(np.array(arg), None)
        got = solve(arg, buffer)
        assert_same(got, want)
        if np.ndim(buffer.error):
            assert got.positions is buffer.positions and got.error is buffer.error
            assert got.reached is buffer.reached and got.iterations is buffer.iterations
        pose = np.array(got.positions)


def chain(rng, shape, n=5):
    pts = np.cumsum(rng.normal(scale=0.3, size=shape + (n, 3)), axis=-2)
    return pts, pts[..., -1, :] + rng.normal(scale=0.4, size=shape + (3,))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("rotations", [False, True])
@pytest.mark.parametrize("warm", [False, True])
def test_fabrik_and_ccd_into_out(shape, rotations, warm):
    rng = np.random.default_rng(len(shape) + 10 * rotations)
    pts, target = chain(rng, shape)
    check_frames(lambda p, o: limbik.fabrik(p, target, return_rotations=rotations, out=o),
                 pts, warm)
    check_frames(lambda p, o: limbik.ccd(p, target, return_rotations=rotations, out=o),
                 pts, warm)


def test_limited_ccd_and_close_gap_into_out():
    rng = np.random.default_rng(3)
    pts, target = chain(rng, (6,))
    limits = [limbik.SwingTwistLimit(swing=1.0, min_twist=-0.5, max_twist=0.5)] * 4
    check_frames(lambda p, o: limbik.ccd(p, target, constraints=limits, out=o), pts, True)
    check_frames(lambda p, o: limbik.fabrik(p, target, close_gap=True, out=o), pts, True)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("rotations", [False, True])
def test_fabrik_tree_into_out(shape, rotations):
    tree = FabrikTree([-1, 0, 1, 2, 2], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 2.5, 0],
                                          [-1, 2.5, 0.0]])
    targets = {3: np.broadcast_to([1.5, 2.0, 0.3], shape + (3,)),
               4: np.broadcast_to([-1.2, 2.2, 0.0], shape + (3,))}
    start = np.broadcast_to(tree.positions, shape + (5, 3)).copy()
    check_frames(lambda p, o: tree.solve(targets, start=p, return_rotations=rotations, out=o),
                 start, warm=True)


@pytest.mark.parametrize("method", ["lm", "dls", "ccd"])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_joint_chains_into_out(shared_data, method, shape):
    arm = limbik.load_urdf(shared_data / "urdf" / "panda_example-robot-data.urdf",
                           "panda_link0", "panda_hand_tcp")
    target = np.broadcast_to([0.4, 0.1, 0.5], shape + (3,)) + np.linspace(0, 0.1, 3)[:1]

    def solve(q0, out):
        if method == "ccd":
            return limbik.ccd(arm, target, q0=q0, out=out)
        return limbik.jacobian_ik(arm, target, q0=q0, method=method, out=out)

    buffer = solve(None, None)
    for step in range(3):
        q0 = buffer.q  # warm start from the buffer's own q
        want = solve(np.array(q0), None)
        got = solve(q0, buffer)
        assert_same(got, want)
        assert got.q is buffer.q or shape == ()
        target = target + 0.01 * (step + 1)


def test_two_bone_single_limb_into_out():
    root, target = np.zeros(3), np.array([0.5, 0.2, 0.1])
    buffer = limbik.two_bone(root, target, 0.4, 0.4)
    for policy in ("extend", "push_root", "stretch"):
        far = target * 3
        got = limbik.two_bone(root, far, 0.4, 0.4, unreachable=policy, out=buffer)
        assert_same(got, limbik.two_bone(root, far, 0.4, 0.4, unreachable=policy))
        assert got.positions is buffer.positions


def test_forward_kinematics_into_out():
    rng = np.random.default_rng(4)
    parents = np.array([-1, 0, 1, 1, 3])
    q = rng.normal(size=(7, 5, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    t = rng.normal(size=(7, 5, 3))
    want = forward_kinematics(parents, q, t)
    out = (np.empty((7, 5, 4)), np.empty((7, 5, 3)))
    got = forward_kinematics(parents, q, t, out=out)
    assert got[0] is out[0] and got[1] is out[1]
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    q2, t2 = q.copy(), t.copy()  # the inputs themselves as the outputs
    got = forward_kinematics(parents, q2, t2, out=(q2, t2))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    with pytest.raises(InvalidInputError, match=r"out's world rotations must be a writable"):
        forward_kinematics(parents, q, t, out=(want[0][:3], want[1]))
    with pytest.raises(InvalidInputError, match="out must be a pair of arrays"):
        forward_kinematics(parents, q, t, out=want[0])


def test_an_out_that_does_not_fit_is_rejected_before_anything_is_written():
    pts = np.cumsum(np.ones((4, 5, 3)), axis=-2)
    target = pts[:, -1] + 0.5
    buffer = limbik.fabrik(pts, target)
    before = buffer.positions.copy()
    with pytest.raises(InvalidInputError, match=r"out.positions .* shape \(4, 6, 3\)"):
        limbik.fabrik(np.cumsum(np.ones((4, 6, 3)), axis=-2), target, out=buffer)
    with pytest.raises(InvalidInputError, match=r"out.rotations .* got NoneType"):
        limbik.fabrik(pts, target, return_rotations=True, out=buffer)
    with pytest.raises(InvalidInputError, match=r"out.positions .* shape \(3, 5, 3\)"):
        limbik.ccd(pts[:3], target[:3], out=buffer)
    with pytest.raises(InvalidInputError, match="out must be a Solution, got tuple"):
        limbik.fabrik(pts, target, out=(buffer.positions,))
    buffer.positions.flags.writeable = False
    with pytest.raises(InvalidInputError, match=r"out.positions .* got read-only"):
        limbik.fabrik(pts, target, out=buffer)
    assert np.array_equal(buffer.positions, before)


def two_bone_cases(rng):
    """Batches of the lean form (C-contiguous float64 rows) and their general-path twins."""
    for count in (1, 2, 7, 300):
        root = rng.normal(size=(count, 3))
        target = root + rng.normal(scale=0.8, size=(count, 3))
        upper = rng.uniform(0.2, 0.7, size=count)
        lower = rng.uniform(0.2, 0.7, size=count)
        for lengths in ((0.45, 0.35), (upper, lower), (0.5, lower)):
            for point in (None, "pole", "reference"):
                for policy in ("extend", "stretch"):
                    kwargs = {"unreachable": policy, "max_stretch": 1.2}
                    if point:
                        kwargs[point] = root + rng.normal(size=(count, 3))
                    yield root, target, lengths, kwargs


def test_two_bone_small_batches_have_the_bits_of_the_general_path():
    rng = np.random.default_rng(5)
    for root, target, (upper, lower), kwargs in two_bone_cases(rng):
        lean = limbik.two_bone(root, target, upper, lower, **kwargs)
        general = limbik.two_bone(root.tolist(), np.asfortranarray(target),
                                  np.array(upper).tolist(), lower,
                                  **{k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                     for k, v in kwargs.items()})
        assert_same(lean, general)
        buffer = limbik.two_bone(root, target, 1.0, 1.0)
        assert_same(limbik.two_bone(root, target, upper, lower, out=buffer, **kwargs), general)


def test_two_bone_small_batches_report_bad_input_as_the_general_path_does():
    root, target = np.zeros((3, 3)), np.ones((3, 3))
    bad_target = target.copy()
    bad_target[1, 2] = np.nan
    with pytest.raises(limbik.LimbikError, match="target"):
        limbik.two_bone(root, bad_target, 1.0, 1.0)
    with pytest.raises(limbik.LimbikError, match="upper"):
        limbik.two_bone(root, target, np.array([1.0, -1.0, 1.0]), 1.0)
    with pytest.raises(limbik.LimbikError, match="unreachable"):
        limbik.two_bone(root, target, 1.0, 1.0, unreachable="snap")
    with pytest.raises(limbik.LimbikError, match="max_stretch"):
        limbik.two_bone(root, target, 1.0, 1.0, max_stretch=0.5)
    tiny = limbik.two_bone(root * 1e-200, target * 1e-200, 1e-200, 1e-200)  # rescaled path
    assert np.all(np.isfinite(tiny.positions)) and np.all(tiny.reached)


@pytest.mark.parametrize("rng", [None, 7])
@pytest.mark.parametrize("method", ["lm", "dls", "ccd"])
def test_joint_chain_batches_equal_single_solves_with_restarts(method, rng):
    """None and int seeds give every target the restarts it gets alone."""
    arm = limbik.JointChain.from_points(np.c_[np.arange(6.0) / 5, np.zeros(6), np.zeros(6)])
    arm = limbik.JointChain([limbik.Joint(j.name, "revolute" if j.movable else "fixed",
                                          j.origin, j.axis, -0.6, 0.6) for j in arm.joints])
    targets = np.random.default_rng(5).normal(size=(6, 3)) * 0.4

    def solve(t):
        if method == "ccd":
            return limbik.ccd(arm, t, max_iterations=30, rng=rng)
        return limbik.jacobian_ik(arm, t, method=method, max_iterations=30, rng=rng)

    batch = solve(targets)
    assert np.any(batch.iterations > 30)  # restarts ran
    for i, t in enumerate(targets):
        alone = solve(t)
        assert np.array_equal(batch.q[i], alone.q)
        assert batch.error[i] == alone.error and batch.reached[i] == alone.reached


def test_inputs_in_outs_memory_are_read_as_given():
    """A target, a root or rotations that are views of ``out`` give a fresh solve's bits."""
    pts = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]])
    buffer = limbik.fabrik(pts, np.array([1.5, 1, 0]))
    want = limbik.fabrik(pts, buffer.end_effector.copy())
    assert_same(limbik.fabrik(pts, buffer.end_effector, out=buffer), want)
    # push_root feeds the moved root back in: the offset is measured from it
    single = limbik.two_bone(np.zeros(3), np.array([2.0, 0, 0]), 0.5, 0.4)
    root = single.positions[0]
    want = limbik.two_bone(root.copy(), [2.0, 0, 0], 0.5, 0.4, unreachable="push_root")
    got = limbik.two_bone(root, [2.0, 0, 0], 0.5, 0.4, unreachable="push_root", out=single)
    assert_same(got, want)
    rng = np.random.default_rng(8)
    batch = limbik.two_bone(np.zeros((300, 3)), rng.normal(size=(300, 3)) * 3, 0.5, 0.4)
    targets = rng.normal(size=(300, 3)) * 3
    root = batch.positions[0, 0]  # one root for all, inside the output
    want = limbik.two_bone(root.copy(), targets, 0.5, 0.4, unreachable="push_root")
    assert_same(limbik.two_bone(root, targets, 0.5, 0.4, unreachable="push_root", out=batch),
                want)
    small = limbik.two_bone(np.zeros((1, 3)), np.ones((1, 3)), 1.0, 1.0)
    small.positions[:, 2] = [0.5, 0.7, 0.2]
    target = small.positions[:, 2]  # a C-contiguous (1, 3) view: the lean path
    assert target.flags.c_contiguous and np.shares_memory(target, small.positions)
    want = limbik.two_bone(np.zeros((1, 3)), target.copy(), 1.0, 1.0)
    assert_same(limbik.two_bone(np.zeros((1, 3)), target, 1.0, 1.0, out=small), want)


def test_bad_rotations_are_refused_before_out_is_written():
    pts = np.cumsum(np.ones((3, 4, 3)), axis=1)
    for solve in (limbik.fabrik, limbik.ccd):
        buffer = solve(pts, pts[:, -1] + 0.3, return_rotations=True)
        before = buffer.positions.copy()
        for bad in (np.zeros((3, 4, 4)), np.tile([0.0, 0, 0, 1], (3, 5, 1))):
            with pytest.raises(InvalidInputError, match="rotations"):
                solve(pts, pts[:, -1] - 0.5, rotations=bad, out=buffer)
        assert np.array_equal(buffer.positions, before)


@pytest.mark.parametrize("shape", [(), (5,)])
@pytest.mark.parametrize("options", [{"bend_axis": [1.0, 0, 0]}, {"softness": 0.1},
                                     {"bend_axis": [1.0, 0, 0], "softness": 0.05,
                                      "reference": [0.0, -0.5, -0.3]}])
def test_two_bone_hinge_and_soft_reach_into_out(shape, options):
    rng = np.random.default_rng(9)
    root = np.zeros(shape + (3,))
    buffer = limbik.two_bone(root, [0.0, -0.6, -0.2], 0.45, 0.42, **options)
    for _ in range(3):
        target = rng.normal(scale=0.5, size=shape + (3,)) + [0.0, -0.5, 0.0]
        want = limbik.two_bone(root, target, 0.45, 0.42, **options)
        got = limbik.two_bone(root, target, 0.45, 0.42, out=buffer, **options)
        assert_same(got, want)
        assert got.positions is buffer.positions
    with pytest.raises(InvalidInputError, match="out is for solves without a pose"):
        limbik.two_bone(root, target, 0.45, 0.42, pose=np.zeros(shape + (3, 3)), out=buffer)


def test_soft_reach_refuses_an_out_that_is_not_a_solution():
    with pytest.raises(InvalidInputError, match="out must be a Solution, got int"):
        limbik.two_bone(np.zeros(3), [1.0, 0, 0], 1.0, 1.0, softness=0.1, out=5)


def test_fabrik_rotations_of_a_larger_batch_are_refused_before_out_is_written():
    pts = np.cumsum(np.ones((3, 4, 3)), axis=1)
    buffer = limbik.fabrik(pts, pts[:, -1] + 0.3, return_rotations=True)
    before = buffer.positions.copy()
    larger = np.tile([0.0, 0, 0, 1], (2, 3, 4, 1))
    for out in (None, buffer):
        with pytest.raises(InvalidInputError, match="rotations must have a batch shape"):
            limbik.fabrik(pts, pts[:, -1] - 0.5, rotations=larger, out=out)
    assert np.array_equal(buffer.positions, before)
