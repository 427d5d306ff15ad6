"""``roblox.FabrikChain`` and ``roblox.fabrik_update`` against a literal port of seed 003's Lua.

The reference below is written from the Lua alone: NumPy vectors for ``Vector3``, a hand
built ``CFrame.new(pos, lookAt)`` (look, ``right = look × (0, 1, 0)``, ``up = right ×
look``), ``table.sort`` of two vectors as a strict swap, and the chain's fields as plain
attributes. No limbik code is used to compute it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from limbik import Frame, fabrik, roblox
from limbik.errors import InvalidInputError

# ----------------------------------------------------------------------------- reference


def mag(v):
    return math.sqrt(float(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))


def unit(v):
    return v / mag(v)


def look_at_up_right(pos, look_at):
    look = unit(look_at - pos)
    right = unit(np.cross(look, np.array([0.0, 1.0, 0.0])))
    up = np.cross(right, look)
    return up, right


class LuaChain:
    """``chain.new(joints, target)`` with ``backward``, ``forward``, ``solve``, ``constrain``."""

    flips = 0  # how many times constrain() met a negative scalar (the >90° case)

    def __init__(self, joints, target):
        lengths = [mag(joints[i] - joints[i + 1]) for i in range(len(joints) - 1)]
        self.n = len(joints)
        self.tolerance = 0.1
        self.target = np.array(target, float)
        self.joints = [np.array(p, float) for p in joints]
        self.lengths = lengths
        self.origin = np.array(joints[0], float)  # CFrame.new(joints[1]).p
        self.totallength = sum(lengths)
        self.constrained = False
        self.left = self.right = self.up = self.down = 0.0

    def backward(self):
        self.joints[self.n - 1] = self.target
        for i in range(self.n - 2, -1, -1):
            r = self.joints[i + 1] - self.joints[i]
            l = self.lengths[i] / mag(r)
            self.joints[i] = (1 - l) * self.joints[i + 1] + l * self.joints[i]

    def forward(self):
        self.joints[0] = self.origin
        for i in range(self.n - 1):
            r = self.joints[i + 1] - self.joints[i]
            l = self.lengths[i] / mag(r)
            pos = (1 - l) * self.joints[i] + l * self.joints[i + 1]
            if self.constrained and i > 0:
                up, right = look_at_up_right(self.joints[i - 1], self.joints[i])
                calc = pos - self.joints[i]
                line = self.joints[i] - self.joints[i - 1]
                pos = self.joints[i] + self.constrain(calc, line, up, right)
            self.joints[i + 1] = pos

    def solve(self):
        distance = mag(self.joints[0] - self.target)
        if distance > self.totallength:
            for i in range(self.n - 1):
                r = mag(self.target - self.joints[i])
                l = self.lengths[i] / r
                self.joints[i + 1] = (1 - l) * self.joints[i] + l * self.target
        else:
            bcount = 0
            dif = mag(self.joints[self.n - 1] - self.target)
            while dif > self.tolerance:
                self.backward()
                self.forward()
                dif = mag(self.joints[self.n - 1] - self.target)
                bcount += 1
                if bcount > 10:
                    break

    def constrain(self, calc, line, up, right):
        scalar = float(np.dot(calc, line)) / mag(line)
        proj = scalar * unit(line)
        ups = [up, -up]
        rights = [right, -right]
        if mag(ups[1] - calc) < mag(ups[0] - calc):
            ups = [ups[1], ups[0]]
        if mag(rights[1] - calc) < mag(rights[0] - calc):
            rights = [rights[1], rights[0]]
        upvec, rightvec = ups[0], rights[0]
        adjust = calc - proj
        if scalar < 0:
            proj = -proj
            LuaChain.flips += 1
        xaspect = float(np.dot(adjust, rightvec))
        yaspect = float(np.dot(adjust, upvec))
        left = -(mag(proj) * math.tan(self.left))
        right_b = mag(proj) * math.tan(self.right)
        up_b = mag(proj) * math.tan(self.up)
        down = -(mag(proj) * math.tan(self.down))
        xbound = right_b if xaspect >= 0 else left
        ybound = up_b if yaspect >= 0 else down
        f = calc
        with np.errstate(divide="ignore", invalid="ignore"):  # Lua: x/0 = inf, 0/0 = nan
            ellipse = (np.float64(xaspect) ** 2 / np.float64(xbound) ** 2
                       + np.float64(yaspect) ** 2 / np.float64(ybound) ** 2)
        inbounds = ellipse <= 1 and scalar >= 0
        if not inbounds:
            a = math.atan2(yaspect, xaspect)
            x = xbound * math.cos(a)
            y = ybound * math.sin(a)
            f = unit(proj + rightvec * x + upvec * y) * mag(calc)
        return f


def lua_update(trunk, branches, start):
    trunk.origin = np.array(start, float)
    trunk.joints[0] = np.array(start, float)
    for b in branches:
        b.backward()
    centroid = branches[0].joints[0]
    for b in branches[1:]:
        centroid = centroid + b.joints[0]
    centroid = centroid / len(branches)
    trunk.target = centroid
    trunk.solve()
    for b in branches:
        b.origin = trunk.joints[trunk.n - 1]
    for b in branches:
        b.forward()


def random_chain(rng, n=None):
    """Joints ``(n, 3)``: a random start and bones of random length 0.3..2."""
    n = int(rng.integers(3, 8)) if n is None else n
    steps = rng.normal(size=(n - 1, 3))
    steps *= rng.uniform(0.3, 2.0, size=(n - 1, 1)) / np.linalg.norm(steps, axis=1, keepdims=True)
    return np.vstack([np.zeros(3), np.cumsum(steps, axis=0)]) + rng.normal(size=3)


def random_target(rng, joints):
    total = np.sum(np.linalg.norm(np.diff(joints, axis=0), axis=1))
    d = rng.normal(size=3)
    return joints[0] + d / np.linalg.norm(d) * total * rng.uniform(0.05, 1.3)


# ----------------------------------------------------------------------------- tests


def test_fabrik_chain_fields_are_the_seeds():
    joints = np.array([[0.0, 0, 0], [0, 1, 0], [0, 3, 0]])
    chain = roblox.FabrikChain(joints, [1.0, 1.0, 0.0])
    assert chain.n == 3 and chain.tolerance == 0.1 and chain.constrained is False
    np.testing.assert_array_equal(chain.lengths, [1.0, 2.0])
    assert chain.totallength == 3.0
    np.testing.assert_array_equal(chain.origin.position, [0, 0, 0])
    np.testing.assert_array_equal(chain.origin.quaternion, [0, 0, 0, 1])
    np.testing.assert_array_equal(chain.target, [1, 1, 0])
    chain.joints[1] = 9.0  # the caller's array is not aliased
    assert joints[1, 0] == 0.0
    chain.origin = np.array([0.0, 0.5, 0.0])  # a point works as well as CFrame.new(point)
    chain.forward()
    np.testing.assert_array_equal(chain.joints[0], [0.0, 0.5, 0.0])


def test_fabrik_chain_solve_matches_the_lua_on_random_chains():
    """Free chains, reachable and not, 2000 cases: every joint within 1e-9 of the Lua."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(2000):
        joints = random_chain(rng)
        target = random_target(rng, joints)
        ours = roblox.FabrikChain(joints, target)
        ref = LuaChain(list(joints), target)
        ours.solve()
        ref.solve()
        worst = max(worst, float(np.abs(ours.joints - np.array(ref.joints)).max()))
    assert worst < 1e-9


def test_fabrik_chain_keeps_lengths_and_reaches_within_its_tolerance():
    rng = np.random.default_rng(4)
    for _ in range(300):
        joints = random_chain(rng)
        target = random_target(rng, joints)
        chain = roblox.FabrikChain(joints, target)
        chain.solve()
        np.testing.assert_allclose(np.linalg.norm(np.diff(chain.joints, axis=0), axis=1),
                                   chain.lengths, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(chain.joints[0], joints[0], atol=1e-12)
        if np.linalg.norm(target - joints[0]) > chain.totallength:
            # the straight line toward the target
            d = np.diff(chain.joints, axis=0)
            u = (target - joints[0]) / np.linalg.norm(target - joints[0])
            np.testing.assert_allclose(d / np.linalg.norm(d, axis=1, keepdims=True),
                                       np.broadcast_to(u, d.shape), atol=1e-12)


def solve_constrained(joints, target, angles):
    """``chain:solve()`` with the cone ``angles`` (left, right, up, down): ours and the Lua's."""
    ours = roblox.FabrikChain(joints, target)
    ref = LuaChain(list(joints), target)
    for c in (ours, ref):
        c.constrained = True
        c.left, c.right, c.up, c.down = angles
    ours.solve()
    ref.solve()
    return ours, ref


def test_constrained_chain_matches_the_lua_with_asymmetric_cones_and_the_flip():
    rng = np.random.default_rng(5)
    LuaChain.flips = 0
    worst = 0.0
    for _ in range(1200):
        joints = random_chain(rng)
        target = random_target(rng, joints)
        ours, ref = solve_constrained(joints, target, rng.uniform(0.05, 1.5, size=4))
        worst = max(worst, float(np.abs(ours.joints - np.array(ref.joints)).max()))
    assert worst < 1e-9
    assert LuaChain.flips > 100  # the >90° branch was exercised


def test_constrain_matches_the_lua_on_random_vectors():
    rng = np.random.default_rng(6)
    chain = roblox.FabrikChain(np.array([[0.0, 0, 0], [0, 0, -1]]), [0, 0, -2])
    ref = LuaChain([np.zeros(3), np.array([0, 0, -1.0])], np.array([0, 0, -2.0]))
    flips = 0
    for _ in range(2000):
        chain.left, chain.right, chain.up, chain.down = rng.uniform(0.05, 1.5, size=4)
        ref.left, ref.right, ref.up, ref.down = chain.left, chain.right, chain.up, chain.down
        a, b = rng.normal(size=3), rng.normal(size=3)
        cf = Frame.look_at(a, b)
        calc = rng.normal(size=3) * rng.uniform(0.1, 3)
        line = (b - a) * rng.uniform(0.2, 2)
        up, right = look_at_up_right(a, b)
        flips += float(np.dot(calc, line)) < 0
        out = chain.constrain(calc, line, cf)
        np.testing.assert_allclose(out, ref.constrain(calc, line, up, right), atol=1e-12)
        assert abs(np.linalg.norm(out) - np.linalg.norm(calc)) < 1e-12
    assert flips > 600


def test_constrain_perpendicular_and_degenerate_cases_are_finite():
    chain = roblox.FabrikChain(np.array([[0.0, 0, 0], [0, 0, -1]]), [0, 0, -2])
    cf = Frame.look_at([0, 0, 0], [0, 0, -1])
    out = chain.constrain([1.0, 0, 0], [0, 0, -2.0], cf)  # exactly 90° from the axis
    np.testing.assert_allclose(out, [0, 0, -1.0])
    np.testing.assert_array_equal(chain.constrain([1.0, 2, 0], [0, 0, 0], cf), [1, 2, 0])
    chain.constrained = True
    for bad in (-0.1, 1.6, float("nan")):
        chain.left = bad
        with pytest.raises(InvalidInputError, match="left must be in"):
            chain.forward()


def test_zero_cone_angles_close_their_side_as_the_lua_does():
    """The Lua takes any angle; a zero one divides by a zero bound (inf, or 0/0 = nan),
    which is never "in bounds". Chains with some sides closed match it, and a cone
    closed on all sides keeps every constrained bone on its parent bone's line."""
    rng = np.random.default_rng(9)
    worst = 0.0
    for k in range(600):
        joints = random_chain(rng)
        target = random_target(rng, joints)
        angles = rng.uniform(0.05, 1.5, size=4)
        angles[rng.random(4) < 0.5] = 0.0
        if k % 10 == 0:
            angles[:] = 0.0
        ours, ref = solve_constrained(joints, target, angles)
        assert np.all(np.isfinite(ours.joints))
        worst = max(worst, float(np.abs(ours.joints - np.array(ref.joints)).max()))
        if k % 10 == 0 and np.linalg.norm(target - joints[0]) <= ours.totallength:
            bones = np.diff(ours.joints, axis=0)
            cross = np.cross(bones[:-1], bones[1:])
            assert np.abs(cross).max() < 1e-9 * max(1.0, float(np.abs(bones).max()) ** 2)
    assert worst < 1e-9


def test_constrained_solve_respects_the_seed_cone():
    """After a solve that ran a pass, each constrained bone is inside the seed's cone."""
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(300):
        joints = random_chain(rng)
        target = random_target(rng, joints) * 0.5 + joints[0] * 0.5
        if np.linalg.norm(joints[-1] - target) <= 0.1:
            continue  # within the seed's tolerance already: no pass runs
        chain = roblox.FabrikChain(joints, target)
        chain.constrained = True
        chain.left = chain.right = chain.up = chain.down = 0.6
        chain.solve()
        j = chain.joints
        for i in range(1, chain.n - 1):
            a, b = j[i] - j[i - 1], j[i + 1] - j[i]
            ang = math.acos(np.clip(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))
            assert ang <= 0.6 + 1e-9
            checked += 1
    assert checked > 300


def test_fabrik_update_matches_the_lua_over_30_frames():
    rng = np.random.default_rng(9)
    for n_branches in (1, 2, 3):
        for _ in range(20):
            start = rng.normal(size=3)
            trunk_j = random_chain(rng, 4)
            trunk_j = trunk_j - trunk_j[0] + start
            sub = trunk_j[-1]
            branches_j = [random_chain(rng, int(rng.integers(3, 6))) for _ in range(n_branches)]
            branches_j = [b - b[0] + sub for b in branches_j]
            targets = [b[-1] + rng.normal(size=3) for b in branches_j]
            trunk = roblox.FabrikChain(trunk_j, sub)
            branches = [roblox.FabrikChain(b, t) for b, t in zip(branches_j, targets, strict=True)]
            rtrunk = LuaChain(list(trunk_j), sub)
            rbranches = [LuaChain(list(b), t) for b, t in zip(branches_j, targets, strict=True)]
            vel = rng.normal(size=(n_branches, 3)) * 0.1
            for frame in range(30):
                s = start + 0.05 * np.sin(frame / 5) * np.array([1.0, 0.3, 0])
                for k in range(n_branches):
                    t = targets[k] + vel[k] * frame
                    branches[k].target = t
                    rbranches[k].target = t
                roblox.fabrik_update(trunk, branches, s)
                lua_update(rtrunk, rbranches, s)
                np.testing.assert_allclose(trunk.joints, np.array(rtrunk.joints), atol=1e-9,
                                           rtol=0)
                for b, rb in zip(branches, rbranches, strict=True):
                    np.testing.assert_allclose(b.joints, np.array(rb.joints), atol=1e-9, rtol=0)
            # the branches hang off the trunk's end and keep their lengths
            for b in branches:
                np.testing.assert_allclose(b.joints[0], trunk.joints[-1], atol=1e-12)
                np.testing.assert_allclose(np.linalg.norm(np.diff(b.joints, axis=0), axis=1),
                                           b.lengths, rtol=1e-12)


def test_fabrik_settings_reproduce_the_seed_solve():
    """``fabrik(tolerance=0.1, max_iterations=11, min_improvement=-inf)`` is ``chain:solve()``."""
    rng = np.random.default_rng(10)
    worst = 0.0
    for _ in range(500):
        joints = random_chain(rng)
        target = random_target(rng, joints)
        chain = roblox.FabrikChain(joints, target)
        chain.solve()
        sol = fabrik(joints, target, tolerance=0.1, max_iterations=11, min_improvement=-np.inf)
        worst = max(worst, float(np.abs(sol.positions - chain.joints).max()))
    assert worst < 1e-9


def test_fabrik_update_and_chain_errors_name_the_argument():
    chain = roblox.FabrikChain(np.eye(3), [0, 0, 0])
    with pytest.raises(InvalidInputError, match="joints must have shape"):
        roblox.FabrikChain(np.zeros(3), [0, 0, 0])
    with pytest.raises(InvalidInputError, match="branches must be"):
        roblox.fabrik_update(chain, [], [0, 0, 0])
    with pytest.raises(InvalidInputError, match="trunk must be"):
        roblox.fabrik_update(None, [chain], [0, 0, 0])
    with pytest.raises(InvalidInputError, match="start must have shape"):
        roblox.fabrik_update(chain, [chain], [0, 0])
