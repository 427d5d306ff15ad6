"""JointChain kinematics against published robot values, an independent 4x4 product and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from limbik import Frame, Joint, JointChain, load_urdf
from limbik.chain import parse_urdf
from limbik.errors import InvalidInputError, NonFiniteInputError

PANDA = "urdf/panda_example-robot-data.urdf"
IIWA = "urdf/kuka_iiwa_pybullet_data.urdf"
TYPES = ("revolute", "continuous", "prismatic", "fixed")


# ---------------------------------------------------------------- independent reference
def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def homogeneous(r, p):
    t = np.eye(4)
    t[:3, :3] = r
    t[:3, 3] = p
    return t


def reference_fk(specs, q):
    """Tip 4x4 of a joint list by explicit matrix products (URDF semantics)."""
    t = np.eye(4)
    k = 0
    for s in specs:
        r, p, y = s["rpy"]
        t = t @ homogeneous(rz(y) @ ry(p) @ rx(r), s["xyz"])
        axis = np.asarray(s.get("axis", (1.0, 0.0, 0.0)), dtype=float)
        axis = axis / np.linalg.norm(axis)
        if s["type"] in ("revolute", "continuous"):
            t = t @ homogeneous(Rotation.from_rotvec(axis * q[k]).as_matrix(), np.zeros(3))
            k += 1
        elif s["type"] == "prismatic":
            t = t @ homogeneous(np.eye(3), axis * q[k])
            k += 1
    return t


def random_specs(rng, n):
    specs = []
    for i in range(n):
        s = {"name": f"j{i}", "type": TYPES[rng.integers(4)],
             "xyz": rng.uniform(-1, 1, 3), "rpy": rng.uniform(-np.pi, np.pi, 3)}
        if rng.random() < 0.7:  # otherwise the axis is omitted: URDF default +X
            s["axis"] = rng.normal(size=3)
        specs.append(s)
    return specs


def specs_to_urdf(specs):
    links = "".join(f'<link name="l{i}"/>' for i in range(len(specs) + 1))
    joints = []
    for i, s in enumerate(specs):
        axis = (f'<axis xyz="{" ".join(repr(float(v)) for v in s["axis"])}"/>'
                if "axis" in s else "")
        limit = '<limit lower="-100" upper="100" effort="1" velocity="1"/>'
        joints.append(
            f'<joint name="{s["name"]}" type="{s["type"]}"><parent link="l{i}"/>'
            f'<child link="l{i + 1}"/><origin xyz="{" ".join(repr(float(v)) for v in s["xyz"])}" '
            f'rpy="{" ".join(repr(float(v)) for v in s["rpy"])}"/>{axis}{limit}</joint>')
    return f'<?xml version="1.0"?>\n<robot name="r">{links}{"".join(joints)}</robot>'


def specs_to_chain(specs):
    dicts = []
    for s in specs:
        d = {"name": s["name"], "type": s["type"],
             "origin": {"xyz": s["xyz"], "rpy": s["rpy"]}}
        if "axis" in s:
            d["axis"] = s["axis"]
        dicts.append(d)
    return JointChain.from_joints(dicts)


# ---------------------------------------------------------------- real robots
def test_panda_matches_published_values(shared_data):
    """Panda FK at the README's configurations, within 1e-6."""
    path = shared_data / PANDA
    q = np.array([0, -0.3, 0, -2.2, 0, 2.0, np.pi / 4])
    link8 = load_urdf(path, "panda_link0", "panda_link8")
    tcp = load_urdf(path, "panda_link0", "panda_hand_tcp")
    assert link8.dof == tcp.dof == 7
    np.testing.assert_allclose(link8.forward(q).position, [0.47372404, 0, 0.51551321], atol=1e-6)
    np.testing.assert_allclose(link8.forward(np.zeros(7)).position, [0.088, 0, 0.926], atol=1e-6)
    f = tcp.forward(q)
    np.testing.assert_allclose(f.position, [0.48404682, 0, 0.41262978], atol=1e-6)
    wxyz = np.array([0, 0.99875026, 0, 0.04997917])
    expected = Frame(np.r_[wxyz[1:], wxyz[0]], f.position)
    assert f.isclose(expected, atol=1e-6)


def test_iiwa_matches_published_value(shared_data):
    chain = load_urdf(shared_data / IIWA, "lbr_iiwa_link_0", "lbr_iiwa_link_7")
    assert chain.dof == 7 and chain.n_joints == 7
    f = chain.forward([0, -np.pi / 4, 0, np.pi / 2, 0, np.pi / 4, 0])
    np.testing.assert_allclose(f.position, [-0.660827561, 0, 0.374142136], atol=1e-6)
    assert f.isclose(Frame([0, -0.7071068, 0, 0.7071068], f.position), atol=1e-6)


def test_panda_limits_and_names(shared_data):
    chain = load_urdf(shared_data / PANDA, "panda_link0", "panda_hand_tcp")
    assert chain.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert chain.n_joints == 10  # 7 revolute + joint8, hand and tcp (fixed)
    np.testing.assert_allclose(chain.lower[3], -3.0718)
    np.testing.assert_allclose(chain.upper[5], 3.7525)


# ---------------------------------------------------------------- random chains
@pytest.mark.parametrize("seed", range(6))
def test_random_chains_match_matrix_products(seed):
    """Random chains (omitted axes, fixed, prismatic, continuous) in code and as URDF text, within 1e-9."""
    rng = np.random.default_rng(seed)
    specs = random_specs(rng, int(rng.integers(1, 9)))
    from_code = specs_to_chain(specs)
    from_urdf = parse_urdf(specs_to_urdf(specs), "l0", f"l{len(specs)}")
    dof = sum(s["type"] != "fixed" for s in specs)
    assert from_code.dof == from_urdf.dof == dof
    qs = rng.uniform(-3, 3, (20, dof))
    for chain in (from_code, from_urdf):
        got = chain.forward(qs).as_matrix()
        want = np.array([reference_fk(specs, q) for q in qs])
        np.testing.assert_allclose(got, want, atol=1e-9)
        frames = chain.joint_frames(qs)
        assert frames.shape == (20, len(specs) + 1)
        np.testing.assert_allclose(frames[:, -1].as_matrix(), want, atol=1e-9)
        np.testing.assert_allclose(frames[:, 0].as_matrix(), np.broadcast_to(np.eye(4), (20, 4, 4)))


def angular_difference(r_plus, r_minus):
    """Rotation vector of r_plus · r_minusᵀ."""
    return Rotation.from_matrix(r_plus @ np.swapaxes(r_minus, -1, -2)).as_rotvec()


@pytest.mark.parametrize("seed", range(4))
def test_jacobian_matches_finite_differences(seed):
    rng = np.random.default_rng(100 + seed)
    specs = [s for s in random_specs(rng, 7)]
    specs.append({"name": "p", "type": "prismatic", "xyz": rng.uniform(-1, 1, 3),
                  "rpy": rng.uniform(-1, 1, 3), "axis": rng.normal(size=3)})
    chain = specs_to_chain(specs)
    q = rng.uniform(-2, 2, (5, chain.dof))
    jac = chain.jacobian(q)
    assert jac.shape == (5, 6, chain.dof)
    h = 1e-6
    for k in range(chain.dof):
        dq = np.zeros(chain.dof)
        dq[k] = h
        fp, fm = chain.forward(q + dq), chain.forward(q - dq)
        lin = (fp.position - fm.position) / (2 * h)
        ang = angular_difference(fp.rotation_matrix, fm.rotation_matrix) / (2 * h)
        np.testing.assert_allclose(jac[:, :3, k], lin, atol=1e-7)
        np.testing.assert_allclose(jac[:, 3:, k], ang, atol=1e-7)


def test_panda_jacobian_matches_finite_differences(shared_data):
    chain = load_urdf(shared_data / PANDA, "panda_link0", "panda_hand_tcp")
    q = chain.random_q(4, np.random.default_rng(3))
    jac = chain.jacobian(q)
    h = 1e-6
    for k in range(7):
        dq = np.eye(7)[k] * h
        fp, fm = chain.forward(q + dq), chain.forward(q - dq)
        np.testing.assert_allclose(jac[:, :3, k], (fp.position - fm.position) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(
            jac[:, 3:, k], angular_difference(fp.rotation_matrix, fm.rotation_matrix) / (2 * h),
            atol=1e-7)


# ---------------------------------------------------------------- shapes and construction
def test_batch_shapes_and_unbatched_q():
    chain = JointChain.from_joints([
        {"type": "revolute", "axis": (0, 0, 1), "origin": {"xyz": (0, 0, 1)}},
        {"type": "prismatic", "axis": (0, 1, 0), "origin": {"xyz": (1, 0, 0)}, "lower": 0,
         "upper": 1},
    ])
    assert chain.forward(np.zeros(2)).shape == ()
    assert chain.forward(np.zeros((2, 3, 2))).shape == (2, 3)
    assert chain.jacobian(np.zeros((4, 2))).shape == (4, 6, 2)
    assert chain.joint_positions(np.zeros((4, 2))).shape == (4, 3, 3)
    np.testing.assert_allclose(chain.forward([np.pi / 2, 0.5]).position, [-0.5, 1, 1], atol=1e-12)


def test_from_points_reproduces_the_points_at_zero():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(5, 3))
    chain = JointChain.from_points(pts)
    assert chain.dof == 12
    positions = chain.joint_positions(np.zeros(12))
    np.testing.assert_allclose(positions[1::3][:5], pts, atol=1e-12)
    np.testing.assert_allclose(positions[-1], pts[-1], atol=1e-12)
    # any q keeps bone lengths
    moved = chain.joint_positions(rng.uniform(-3, 3, 12))[1::3][:5]
    np.testing.assert_allclose(np.linalg.norm(np.diff(moved, axis=0), axis=-1),
                               np.linalg.norm(np.diff(pts, axis=0), axis=-1), atol=1e-12)


def test_limits_random_q_and_clip():
    chain = JointChain.from_joints([
        {"type": "revolute", "lower": -0.5, "upper": 0.25},
        {"type": "continuous", "lower": -1, "upper": 1},
        {"type": "prismatic", "lower": 0, "upper": 2, "origin": {"xyz": (1, 0, 0)}},
    ])
    assert chain.lower[1] == -np.inf and chain.upper[1] == np.inf  # continuous: unlimited
    q = chain.random_q((100,), np.random.default_rng(0))
    assert chain.within_limits(q).all()
    assert np.all(np.abs(q[:, 1]) <= np.pi)
    np.testing.assert_allclose(chain.clip([1.0, 7.0, -1.0]), [0.25, 7.0, 0.0])


def test_invalid_joints_and_q_raise():
    with pytest.raises(InvalidInputError, match="type of joint 'a' must be one of"):
        Joint("a", "floating")
    with pytest.raises(InvalidInputError, match="axis of joint 'a' must be non-zero"):
        Joint("a", "revolute", axis=(0, 0, 0))
    with pytest.raises(InvalidInputError, match="lower limit of joint 'a' must be <= upper"):
        Joint("a", "prismatic", lower=1, upper=0)
    with pytest.raises(InvalidInputError, match="origin of joint 'a' must be an unbatched Frame"):
        Joint("a", origin=Frame.identity((2,)))
    with pytest.raises(InvalidInputError, match="at least one Joint"):
        JointChain([])
    with pytest.raises(InvalidInputError, match=r"joints\[0\] must be a Joint or a dict"):
        JointChain.from_joints([3])
    chain = JointChain([Joint("a"), Joint("b")])
    with pytest.raises(InvalidInputError, match=r"q must have shape \(\.\.\., 2\), got \(3,\)"):
        chain.forward(np.zeros(3))
    with pytest.raises(NonFiniteInputError, match="q must be finite"):
        chain.jacobian([0.0, np.nan])
