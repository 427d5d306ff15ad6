"""Frame against independent formulas (scipy, explicit CFrame matrices) and its algebra."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from limbik import Frame
from limbik.errors import InvalidInputError, NonFiniteInputError

from strategies import angles, quaternions, unit_vectors, vectors

N = 3000


def random_frames(rng: np.random.Generator, n: int = N) -> tuple[Frame, np.ndarray]:
    q = Rotation.random(n, random_state=rng.integers(1 << 31)).as_quat()
    p = rng.normal(size=(n, 3)) * 5
    m = np.zeros((n, 4, 4))
    m[:, :3, :3] = Rotation.from_quat(q).as_matrix()
    m[:, :3, 3] = p
    m[:, 3, 3] = 1
    return Frame(q, p), m


def cframe_look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """CFrame.new(eye, target) written out: columns right, up, back."""
    look = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(look, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, look)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = right, up, -look, eye
    return m


def rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_matrix_round_trip_matches_scipy(rng):
    frames, m = random_frames(rng)
    np.testing.assert_allclose(frames.as_matrix(), m, atol=1e-12)
    back = Frame.from_matrix(m)
    np.testing.assert_allclose(back.as_matrix(), m, atol=1e-12)
    assert back.isclose(frames).all()


def test_composition_inverse_apply_to_local_match_matrices(rng):
    a, ma = random_frames(rng)
    b, mb = random_frames(rng)
    pts = rng.normal(size=(N, 3)) * 3
    np.testing.assert_allclose((a @ b).as_matrix(), ma @ mb, atol=1e-9)
    np.testing.assert_allclose(a.inverse().as_matrix(), np.linalg.inv(ma), atol=1e-9)
    hom = np.concatenate([pts, np.ones((N, 1))], axis=1)
    np.testing.assert_allclose(a.apply(pts), np.einsum("nij,nj->ni", ma, hom)[:, :3], atol=1e-9)
    local = np.einsum("nij,nj->ni", np.linalg.inv(ma), hom)[:, :3]
    np.testing.assert_allclose(a.to_local(pts), local, atol=1e-9)
    np.testing.assert_allclose(a.to_local_frame(b).as_matrix(), np.linalg.inv(ma) @ mb,
                               atol=1e-9)
    np.testing.assert_allclose(a.rotate(pts), np.einsum("nij,nj->ni", ma[:, :3, :3], pts),
                               atol=1e-9)
    np.testing.assert_allclose(a.unrotate(a.rotate(pts)), pts, atol=1e-9)


def test_axis_angle_matches_scipy(rng):
    axis = rng.normal(size=(N, 3))
    angle = rng.uniform(-7, 7, size=N)
    pos = rng.normal(size=(N, 3))
    f = Frame.from_axis_angle(axis, angle, pos)
    unit = axis / np.linalg.norm(axis, axis=1, keepdims=True)
    expected = Rotation.from_rotvec(unit * angle[:, None]).as_matrix()
    np.testing.assert_allclose(f.rotation_matrix, expected, atol=1e-9)
    np.testing.assert_allclose(f.position, pos)


def test_euler_xyz_is_cframe_angles(rng):
    a = rng.uniform(-4, 4, size=(N, 3))
    f = Frame.from_euler_xyz(a[:, 0], a[:, 1], a[:, 2])
    expected = np.stack([rx(x) @ ry(y) @ rz(z) for x, y, z in a])
    np.testing.assert_allclose(f.rotation_matrix, expected, atol=1e-9)


def test_look_at_is_cframe_new(rng):
    eye = rng.normal(size=(N, 3)) * 4
    target = rng.normal(size=(N, 3)) * 4
    f = Frame.look_at(eye, target)
    expected = np.stack([cframe_look_at(e, t) for e, t in zip(eye, target, strict=True)])
    np.testing.assert_allclose(f.as_matrix(), expected, atol=1e-9)
    look = (target - eye) / np.linalg.norm(target - eye, axis=1, keepdims=True)
    np.testing.assert_allclose(f.look, look, atol=1e-12)


def test_look_at_degenerate_cases_are_finite_and_documented():
    same = Frame.look_at([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(same.rotation_matrix, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(same.position, [1, 2, 3])
    for direction in ([0, 1, 0], [0, -1, 0]):
        f = Frame.look_at([0, 0, 0], direction)
        np.testing.assert_allclose(f.look, direction, atol=1e-12)
        np.testing.assert_allclose(f.right, [1, 0, 0], atol=1e-12)
        # continuity: nearly the same as a slightly tilted look toward -Z
        tilted = Frame.look_at([0, 0, 0], np.array(direction) + [0, 0, -1e-7])
        np.testing.assert_allclose(tilted.rotation_matrix, f.rotation_matrix, atol=1e-6)
    f = Frame.look_at([0, 0, 0], [0, 0, -5], up=[0, 0, 1])
    assert np.isfinite(f.as_matrix()).all()
    np.testing.assert_allclose(np.linalg.det(f.rotation_matrix), 1.0)


def test_zero_axis():
    np.testing.assert_allclose(Frame.from_axis_angle([0, 0, 0], 0.0).as_matrix(), np.eye(4))
    with pytest.raises(InvalidInputError, match="axis must be non-zero"):
        Frame.from_axis_angle([0, 0, 0], 0.5)
    with pytest.raises(InvalidInputError, match="axis must be non-zero"):
        Frame.from_axis_angle([[1, 0, 0], [0, 0, 0]], [0.0, 0.1])


def test_broadcasting_points_through_frames(rng):
    frames, m = random_frames(rng, 5)
    pts = rng.normal(size=(7, 5, 3))
    out = frames.apply(pts)
    assert out.shape == (7, 5, 3)
    expected = np.einsum("jik,njk->nji", m[:, :3, :3], pts) + m[:, :3, 3]
    np.testing.assert_allclose(out, expected, atol=1e-12)
    assert frames.to_local(pts).shape == (7, 5, 3)
    grid = Frame.from_translation(rng.normal(size=(4, 1, 3))) @ frames
    assert grid.shape == (4, 5)


def test_scipy_interop(rng):
    r = Rotation.random(10, random_state=1)
    f = Frame.from_rotation(r, np.zeros(3))
    np.testing.assert_allclose(f.as_rotation().as_matrix(), r.as_matrix(), atol=1e-12)


def test_frames_are_immutable():
    f = Frame.identity()
    with pytest.raises(AttributeError):
        f.x = 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        f.position[0] = 2.0


def test_lerp_endpoints(rng):
    a, _ = random_frames(rng, 50)
    b, _ = random_frames(rng, 50)
    assert a.lerp(b, 0.0).isclose(a).all()
    assert a.lerp(b, 1.0).isclose(b).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Frame.from_translation([1, 2, 3, 4]), r"position must have shape \(\.\.\., 3\), got \(4,\)"),
        (lambda: Frame.identity().apply([1.0, 2.0]), r"points must have shape \(\.\.\., 3\), got \(2,\)"),
        (lambda: Frame([0, 0, 0, 0]), "quaternion must be a non-zero quaternion"),
        (lambda: Frame.look_at([0, 0, 0], [1, 0, 0], up=[0, 0, 0]), "up must be non-zero vectors"),
        (lambda: Frame.from_matrix(np.ones((4, 4))), "matrix must have an orthonormal"),
        (lambda: Frame.from_rotation("x"), "rotation must be a scipy Rotation"),
        (lambda: Frame.from_translation("abc"), r"position must be a numeric array"),
        (lambda: Frame([0, 0, 0, 1], np.zeros((2, 3))) @ Frame([0, 0, 0, 1], np.zeros((3, 3))),
         "broadcast"),
    ],
)
def test_bad_input_raises_invalid_input(call, message):
    with pytest.raises((InvalidInputError, ValueError), match=message):
        call()


def test_nan_is_rejected_with_its_own_message():
    with pytest.raises(NonFiniteInputError, match=r"position must be finite, got NaN at index \(1,\)"):
        Frame.from_translation([0.0, np.nan, 1.0])
    with pytest.raises(NonFiniteInputError, match="angle must be finite, got inf"):
        Frame.from_axis_angle([1, 0, 0], np.inf)


@given(quaternions, vectors)
def test_frame_times_inverse_is_identity(q, p):
    f = Frame(q, p)
    assert (f @ f.inverse()).isclose(Frame.identity(), atol=1e-9)
    assert (f.inverse() @ f).isclose(Frame.identity(), atol=1e-9)


@given(quaternions, vectors, quaternions, vectors, quaternions, vectors)
def test_composition_is_associative(q1, p1, q2, p2, q3, p3):
    a, b, c = Frame(q1, p1), Frame(q2, p2), Frame(q3, p3)
    np.testing.assert_allclose(((a @ b) @ c).as_matrix(), (a @ (b @ c)).as_matrix(), atol=1e-8)


@given(quaternions, vectors, vectors)
def test_apply_and_to_local_are_inverse(q, p, x):
    f = Frame(q, p)
    np.testing.assert_allclose(f.to_local(f.apply(x)), x, atol=1e-8)
    np.testing.assert_allclose(f.inverse().apply(x), f.to_local(x), atol=1e-8)


@given(unit_vectors, angles)
def test_axis_angle_preserves_axis_and_rotates_by_angle(axis, angle):
    f = Frame.from_axis_angle(axis, angle)
    np.testing.assert_allclose(f.rotate(axis), axis, atol=1e-12)
    perp = np.cross(axis, [1.0, 0.0, 0.0])
    if np.linalg.norm(perp) < 1e-3:
        perp = np.cross(axis, [0.0, 1.0, 0.0])
    perp /= np.linalg.norm(perp)
    turned = f.rotate(perp)
    assert np.isclose(np.dot(turned, perp), np.cos(angle), atol=1e-12)


@given(vectors, vectors)
def test_look_at_is_orthonormal_and_points_at_target(eye, target):
    f = Frame.look_at(eye, target)
    r = f.rotation_matrix
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(r), 1.0)
    d = target - eye
    if np.linalg.norm(d) > 1e-9:
        np.testing.assert_allclose(f.look, d / np.linalg.norm(d), atol=1e-9)
    assert f.up[1] >= -1e-12  # +Y as close to world up as possible


@given(st.lists(quaternions, min_size=1, max_size=6))
def test_batched_equals_one_by_one(qs):
    q = np.array(qs)
    f = Frame(q, np.arange(3 * len(qs), dtype=float).reshape(-1, 3))
    m = f.as_matrix()
    for i in range(len(qs)):
        np.testing.assert_allclose(f[i].as_matrix(), m[i], atol=1e-15)


def test_one_frame_of_plain_numbers_is_the_batched_frame_bit_for_bit():
    rng = np.random.default_rng(11)
    for _ in range(2000):
        scale = 10.0 ** rng.uniform(-10, 10)
        q, p = rng.normal(size=4) * scale, rng.normal(size=3) * scale
        batched = Frame(q[None], p[None])
        for args in ((q, p), (q.tolist(), p.tolist()), (tuple(q), tuple(p))):
            one = Frame(*args)
            assert one.shape == ()
            assert np.array_equal(one.quaternion, batched.quaternion[0])
            assert np.array_equal(one.position, batched.position[0])
    assert np.array_equal(Frame([0, 0, 0, 2], [1, 2, 3]).quaternion, [0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    ("quaternion", "position", "error", "message"),
    [
        ([0.0, 0.0, 0.0, 1e-13], [0, 0, 0], InvalidInputError, "non-zero quaternion"),
        ([0.0, 0.0, np.nan, 1.0], [0, 0, 0], NonFiniteInputError, "quaternion must be finite"),
        ([0.0, 0.0, 0.0, 1.0], [0, np.inf, 0], NonFiniteInputError, "position must be finite"),
        ([False, False, False, True], [0, 0, 0], InvalidInputError, "real numbers"),
        ([0, 0, 0, 10**400], [0, 0, 0], NonFiniteInputError, "integer beyond the float range"),
        ([0, 0, 0, 1], (10**400, 0, 0), NonFiniteInputError, "integer beyond the float range"),
        ([0.0, 0.0, 1.0], [0, 0, 0], InvalidInputError, r"quaternion must have shape"),
    ],
)
def test_one_frame_of_bad_numbers_is_reported_as_a_batch_would_be(quaternion, position, error,
                                                                  message):
    with pytest.raises(error, match=message):
        Frame(quaternion, position)


def test_indexing_a_batch_gives_its_own_copy():
    f = Frame(np.tile([0.0, 0.0, 0.0, 1.0], (3, 1)), np.arange(9.0).reshape(3, 3))
    one = f[1]
    assert one.shape == () and np.array_equal(one.position, [3.0, 4.0, 5.0])
    assert not np.shares_memory(one.position, f.position)
    assert not one.position.flags.writeable


def test_without_scipy_the_rotation_bridges_say_what_is_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy.spatial.transform", None)  # import fails
    with pytest.raises(InvalidInputError, match="rotation must be a scipy Rotation, got str"):
        Frame.from_rotation("x")
    with pytest.raises(ImportError, match="pip install scipy"):
        Frame.identity().as_rotation()


def test_quaternions_too_large_to_square_are_normalised():
    """Entries whose squares overflow (up to the float maximum) still give the unit
    quaternion, one frame or a batch, without a warning (warnings fail the tests)."""
    for scale in (1e160, 1e300, 1.7e308):
        one = Frame((scale, 0.0, 0.0, scale))
        batch = Frame(np.array([[scale, 0.0, 0.0, scale], [0.0, 0.0, 0.0, 2.0]]))
        half = np.sqrt(0.5)
        np.testing.assert_allclose(one.quaternion, [half, 0.0, 0.0, half], rtol=1e-15)
        np.testing.assert_allclose(batch.quaternion, [[half, 0, 0, half], [0, 0, 0, 1.0]],
                                   rtol=1e-15)


@pytest.mark.parametrize("other", [np.zeros(3), [1.0, 2.0, 3.0], np.zeros((4, 3)), 2.0])
def test_at_with_points_says_how_to_move_them(other):
    """``@`` composes Frames; points on either side get a limbik error that names
    ``apply`` (NumPy's own matmul error said nothing of frames)."""
    frame = Frame.from_translation([1.0, 0.0, 0.0])
    with pytest.raises(InvalidInputError, match=r"@ composes two Frames.*frame\.apply"):
        frame @ other
    with pytest.raises(InvalidInputError, match=r"@ composes two Frames.*frame\.apply"):
        other @ frame
