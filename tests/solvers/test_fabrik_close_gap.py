"""fabrik(..., close_gap=True): targets near the edges of reach are reached, continuously."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import Cone, fabrik
from limbik.errors import InvalidInputError
from limbik.solvers.fabrik import close_gap as close_gap_kernel


def edge_problems(seed, batch=3000):
    """Random chains (3-8 joints, bones 0.2-3) and reachable targets, half of them in the
    top 1% of the reach range and half in the bottom 1% (where FABRIK is slow)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in range(3, 9):
        lengths = rng.uniform(0.2, 3.0, size=(batch, n - 1))
        d = rng.normal(size=(batch, n - 1, 3))
        d /= np.linalg.norm(d, axis=-1, keepdims=True)
        chains = np.concatenate([np.zeros((batch, 1, 3)),
                                 np.cumsum(lengths[..., None] * d, axis=1)], axis=1)
        reach = lengths.sum(-1)
        inner = np.maximum(0.0, 2 * lengths.max(-1) - reach)
        u = np.where(rng.uniform(size=batch) < 0.5, rng.uniform(0.99, 1.0, batch),
                     rng.uniform(0.0, 0.01, batch))
        g = rng.normal(size=(batch, 3))
        g /= np.linalg.norm(g, axis=-1, keepdims=True)
        out.append((chains, g * (inner + (reach - inner) * u)[:, None], lengths, reach))
    return out


def test_reachable_targets_near_the_edges_are_reached():
    """Every target near the outer reach is reached, and near the inner reach every one
    whose chain (in FABRIK's pose) stays within 4 times the target's distance of the root;
    the others are left as FABRIK gives them."""
    counts = {"outer short": 0, "outer still short": 0, "levered": 0, "levered short": 0}
    for chains, targets, lengths, reach in edge_problems(1):
        plain = fabrik(chains, targets)
        closed = fabrik(chains, targets, close_gap=True)
        inner = np.maximum(0.0, 2 * lengths.max(-1) - reach)
        distance = np.linalg.norm(targets, axis=-1)
        outer = (distance - inner) > 0.5 * (reach - inner)
        farthest = np.max(np.linalg.norm(plain.positions, axis=-1), axis=-1)
        levered = ~plain.reached & (farthest <= close_gap_kernel.LEVER * distance)
        counts["outer short"] += int(np.sum(outer & ~plain.reached))
        counts["outer still short"] += int(np.sum(outer & ~closed.reached))
        counts["levered"] += int(np.sum(levered))
        counts["levered short"] += int(np.sum(levered & ~closed.reached))
        # chains FABRIK reached are untouched, bit for bit, and so are the levered-out ones
        kept = plain.reached | (~levered & ~outer)
        assert np.array_equal(closed.positions[kept], plain.positions[kept])
        assert np.array_equal(closed.iterations, plain.iterations)
        # every pose keeps its root and bone lengths; reached means within tolerance
        assert np.array_equal(closed.positions[:, 0], chains[:, 0])
        np.testing.assert_allclose(np.linalg.norm(np.diff(closed.positions, axis=1), axis=-1),
                                   lengths, rtol=1e-12)
        end = np.linalg.norm(closed.positions[:, -1] - targets, axis=-1)
        np.testing.assert_allclose(closed.error, end, rtol=1e-12, atol=1e-15)
        assert np.all(closed.error[closed.reached] <= 1e-6 * reach[closed.reached])
        # the change is a modest multiple of the gap FABRIK left
        moved = ~plain.reached & closed.reached
        move = np.max(np.linalg.norm(closed.positions[moved] - plain.positions[moved],
                                     axis=-1), axis=-1)
        assert np.all(move <= 100 * plain.error[moved])
    assert counts["outer short"] > 5000  # the set-up does hit FABRIK's slow edges
    assert counts["outer still short"] == 0, counts
    assert counts["levered short"] <= 0.001 * counts["levered"], counts


def test_the_folded_chain_reaches_its_inner_edge():
    chain = np.array([[0.0, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0]])  # reach 1 to 5
    target = np.array([0.0, 1.05, 0.0])
    assert not fabrik(chain, target).reached
    solved = fabrik(chain, target, close_gap=True)
    assert solved.reached and solved.error <= 5e-6
    np.testing.assert_allclose(np.linalg.norm(np.diff(solved.positions, axis=0), axis=-1),
                               [3, 1, 1], rtol=1e-12)


@pytest.mark.parametrize("warm", [False, True])
def test_poses_are_continuous_along_a_path_to_full_reach(warm):
    """A target moving out to 0.99999 of full reach and back in, 600 frames: no joint
    jumps by more than a few times the target's step, from a fixed or the last pose."""
    rng = np.random.default_rng(4)
    d = rng.normal(size=(5, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    lengths = np.array([1.0, 0.8, 0.6, 0.5, 0.3])
    chain = np.concatenate([np.zeros((1, 3)), np.cumsum(lengths[:, None] * d, axis=0)])
    reach = lengths.sum()
    u = np.concatenate([np.linspace(0.9, 0.99999, 300), np.linspace(0.99999, 0.9, 300)])
    angle = np.linspace(0.0, 0.6, 600)
    targets = reach * u[:, None] * np.stack([np.cos(angle), np.sin(angle),
                                             0.3 * np.ones(600)], axis=1) / np.hypot(1, 0.3)
    pose = chain
    poses, reached = [], []
    for target in targets:
        solved = fabrik(pose if warm else chain, target, close_gap=True)
        poses.append(solved.positions)
        reached.append(bool(solved.reached))
        if warm:
            pose = solved.positions
    poses = np.array(poses)
    assert all(reached)
    step = np.linalg.norm(np.diff(targets, axis=0), axis=-1)
    jump = np.max(np.linalg.norm(np.diff(poses, axis=0), axis=-1), axis=-1)
    assert np.all(jump <= 25 * step + 1e-6 * reach), float(np.max(jump / step))


def test_out_of_reach_and_degenerate_targets_are_left_to_fabrik():
    chain = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0]])
    for target in ([5.0, 0, 0], [0.0, 0, 0], [0.0, 1e-9, 0]):
        plain = fabrik(chain, target)
        closed = fabrik(chain, target, close_gap=True)
        assert np.array_equal(plain.positions, closed.positions)
        assert np.isfinite(closed.positions).all()


def test_close_gap_needs_a_free_fixed_root_chain():
    chain = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    with pytest.raises(InvalidInputError) as caught:
        fabrik(chain, [1.0, 1, 0], close_gap=True, constraints=[None, Cone(0.5)])
    assert caught.value.argument == "close_gap" and "constraints" in str(caught.value)
    with pytest.raises(InvalidInputError, match="direction"):
        fabrik(chain, [1.0, 1, 0], close_gap=True, direction=[0.0, 1, 0])
    with pytest.raises(InvalidInputError, match="fixed_root"):
        fabrik(chain, [1.0, 1, 0], close_gap=True, fixed_root=False)
    with pytest.raises(InvalidInputError):
        fabrik(chain, [1.0, 1, 0], close_gap="yes")
    # constraints that constrain nothing are no constraints
    free = fabrik(chain, [1.0, 1, 0], close_gap=True, constraints=[None, None])
    assert np.array_equal(free.positions, fabrik(chain, [1.0, 1, 0], close_gap=True).positions)


@pytest.mark.parametrize("power", [-900, -40, 40, 900])
def test_the_same_answer_at_any_scale(power):
    """Closed in problem-sized units: scaled by 2^k, the chain gets the same pose scaled."""
    chains, targets, _, _ = edge_problems(5, batch=200)[2]
    base = fabrik(chains, targets, close_gap=True)
    scale = 2.0 ** power
    scaled = fabrik(chains * scale, targets * scale, close_gap=True)
    assert np.isfinite(scaled.positions).all()
    assert np.array_equal(scaled.positions, base.positions * scale)
    assert np.array_equal(scaled.reached, base.reached) and base.reached.mean() > 0.9


@pytest.mark.parametrize(("chain", "target", "iterations"), [
    ([[0, 0, 0], [2, 0, 0], [1, 0, 0]], [0, 1.5, 0], 0),  # folded back exactly: a bend of pi
    ([[0, 0, 0], [1, 0, 0], [2, 0, 0], [2, 1, 0]], [0.5, 2.0, 0.3], 0),  # a bend of 0
    ([[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0]], [-0.171, 0.063, 0.19], 100),  # a zero bone
    ([[0, 0, 0], [0, 0, 0], [1, 0, 0], [1, 1, 0]], [-0.171, 0.063, 0.19], 100),  # zero first
])
def test_degenerate_bends_keep_bone_lengths(chain, target, iterations):
    chain = np.array(chain, dtype=float)
    lengths = np.linalg.norm(np.diff(chain, axis=0), axis=-1)
    solved = fabrik(chain, target, max_iterations=iterations, close_gap=True)
    np.testing.assert_allclose(np.linalg.norm(np.diff(solved.positions, axis=0), axis=-1),
                               lengths, atol=1e-12)
    assert np.isfinite(solved.positions).all()
    assert solved.reached and not fabrik(chain, target, max_iterations=iterations).reached
    np.testing.assert_allclose(solved.error, np.linalg.norm(solved.positions[-1] - target),
                               atol=1e-15)


def test_a_target_near_the_root_of_a_long_chain_is_left_to_fabrik():
    """Turning a long chain onto a target close to its root would swing it wide for a
    small gap: along a path just outside a folded chain's inner reach, close_gap leaves
    FABRIK's poses, and moves no more per frame than FABRIK does."""
    chain = np.array([[0, 0, 0], [3, 0, 0], [2.2, 0.6, 0], [1.5, 0.2, 0.5], [0.6, 0.3, 0.1]])
    lengths = np.linalg.norm(np.diff(chain, axis=0), axis=-1)
    inner = 2 * lengths.max() - lengths.sum()
    radius = inner + np.concatenate([np.linspace(0.02, 0.0005, 100), np.linspace(0.0005, 0.02, 101)])
    angle = np.linspace(0, 1.0, 201)
    targets = radius[:, None] * np.stack([np.cos(angle), np.sin(angle), 0.3 * np.ones(201)],
                                         axis=1) / np.hypot(1, 0.3)
    plain = np.array([fabrik(chain, t).positions for t in targets])
    closed = np.array([fabrik(chain, t, close_gap=True).positions for t in targets])
    jump = np.max(np.linalg.norm(np.diff(closed, axis=0), axis=-1), axis=-1)
    jump_plain = np.max(np.linalg.norm(np.diff(plain, axis=0), axis=-1), axis=-1)
    assert np.max(jump) <= np.max(jump_plain) + 1e-9
