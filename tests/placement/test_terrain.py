"""Terrain: layout of samples, bilinear heights, normals and raycasts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limbik.errors import InvalidInputError, TerrainError
from limbik.placement import Terrain


def test_sample_layout_and_bilinear():
    h = np.array([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])  # rows along z, cols along x
    t = Terrain.from_array(h, cell_size=2.0, origin=(1.0, -1.0))
    assert t.height(1.0, -1.0) == 0.0
    assert t.height(3.0, -1.0) == 1.0  # x = x0 + 1 cell -> column 1
    assert t.height(1.0, 1.0) == 10.0  # z = z0 + 1 cell -> row 1
    assert np.isclose(t.height(2.0, 0.0), (0 + 1 + 10 + 11) / 4)
    # clamped outside
    assert t.height(-100.0, -100.0) == 0.0
    assert t.height(100.0, 100.0) == 12.0
    assert t.height(np.zeros((4, 5)), 0.0).shape == (4, 5)


def test_flat_and_slope_normals():
    flat = Terrain.flat(0.5)
    np.testing.assert_allclose(flat.height([0, 3, -7], [1, 2, 3]), 0.5)
    np.testing.assert_allclose(flat.normal(0.3, 0.2), [0, 1, 0])
    s = Terrain.slope(0.2)
    assert np.isclose(s.height(1.0, 0.0), np.tan(0.2))
    np.testing.assert_allclose(s.normal(0.5, 0.5), [-np.sin(0.2), np.cos(0.2), 0], atol=1e-12)


def test_one_sample_normals_are_those_of_the_same_plane_sampled(rng):
    """A flat terrain of one sample gives the normals (signed zeros and broadcast shape
    included) of the same plane as a grid of equal samples."""
    for height in (0.0, -1.3, 2.5e3):
        one = Terrain.flat(height)
        grid = Terrain.from_array(np.full((2, 3), height), cell_size=0.7, origin=(-1.0, 2.0))
        x = rng.normal(0.0, 5.0, size=(7, 1))
        z = rng.normal(0.0, 5.0, size=(1, 4))
        got, want = one.normal(x, z), grid.normal(x, z)
        assert got.shape == want.shape == (7, 4, 3)
        assert np.array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    assert one.normal(0.3, -0.2).shape == (3,)


def test_normal_matches_finite_differences(rng):
    t = Terrain.hills(seed=3, extent=(-5, 5, -5, 5), cell_size=0.05)
    # stay off cell edges, where the bilinear surface has a kink
    cells = rng.integers(-80, 80, size=(2, 200))
    x, z = (cells + rng.uniform(0.1, 0.9, size=(2, 200))) * 0.05
    e = 1e-5
    dx = (t.height(x + e, z) - t.height(x - e, z)) / (2 * e)
    dz = (t.height(x, z + e) - t.height(x, z - e)) / (2 * e)
    expected = np.stack([-dx, np.ones_like(dx), -dz], -1)
    expected /= np.linalg.norm(expected, axis=-1, keepdims=True)
    np.testing.assert_allclose(t.normal(x, z), expected, atol=1e-4)


def test_vertical_raycast_is_exact(rng):
    t = Terrain.hills(seed=1)
    o = np.c_[rng.uniform(-8, 8, 100), np.full(100, 5.0), rng.uniform(-8, 8, 100)]
    hit, dist, point, normal = t.raycast(o, [0, -1, 0])
    assert hit.all()
    np.testing.assert_allclose(point[:, 1], t.height(o[:, 0], o[:, 2]), atol=1e-12)
    np.testing.assert_allclose(dist, 5.0 - point[:, 1], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(normal, axis=-1), 1.0)


def test_oblique_raycast_lands_on_surface(rng):
    t = Terrain.hills(seed=2, extent=(-6, 6, -6, 6))
    o = np.c_[rng.uniform(-3, 3, 50), np.full(50, 2.0), rng.uniform(-3, 3, 50)]
    d = np.c_[rng.uniform(-0.5, 0.5, 50), -np.ones(50), rng.uniform(-0.5, 0.5, 50)]
    hit, dist, point, _ = t.raycast(o, d)
    assert hit.all()
    np.testing.assert_allclose(point[:, 1], t.height(point[:, 0], point[:, 2]), atol=1e-8)
    unit = d / np.linalg.norm(d, axis=1, keepdims=True)
    np.testing.assert_allclose(o + unit * dist[:, None], point, atol=1e-8)
    # the first crossing: every sample of the ray before the hit is above ground
    for s in np.linspace(0, 1, 50)[:-1]:
        q = o + unit * (dist * s)[:, None]
        assert np.all(q[:, 1] >= t.height(q[:, 0], q[:, 2]) - 1e-9)


def test_raycast_misses_and_starts_below():
    t = Terrain.flat(0.0)
    hit, dist, _, _ = t.raycast([[0, 1, 0], [0, -1, 0]], [[0, 1, 0], [0, -1, 0]])
    assert not hit[0] and np.isinf(dist[0])
    assert hit[1] and dist[1] == 0.0
    hit, _, _, _ = t.raycast([0, 10, 0], [0, -1, 0], max_distance=5.0)
    assert not hit
    hit, _, _, _ = t.raycast([0, 10, 0], [0, -1, 0], max_distance=np.float64(np.inf))
    assert hit
    hit, dist, _, _ = t.raycast([0, -1, 0], [0, -1, 0], max_distance=0)
    assert hit and dist == 0.0  # from below the ground: a hit at 0, within 0


def test_ground_below_gives_the_straight_down_raycasts_bits(rng):
    """``ground_below`` is the straight-down ray's query: its hits and points are
    raycast's, bit for bit, above, below and beyond the ray, off the grid, at signed zeros
    and for a batch of any shape."""
    rows = np.c_[rng.uniform(-14, 14, 400), rng.uniform(-3, 6, 400), rng.uniform(-14, 14, 400)]
    rows[:8, 0] = [0.0, -0.0, 0.0, -0.0, 1e-300, -1e-300, 7.5, -7.5]
    rows[:8, 2] = [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0, -0.0, 0.0]
    for terrain in (Terrain.flat(0.25), Terrain.hills(seed=4), Terrain.steps(),
                    Terrain.slope(0.3), Terrain.from_array(rng.normal(size=(30, 40)), 0.5)):
        for length in (0.5, 2.0, 5.0, 1e-3):
            for origins in (rows, rows.reshape(20, 20, 3), rows[0]):
                hit, point = terrain.ground_below(origins, length)
                r_hit, _, r_point, _ = terrain.raycast(origins, [0.0, -length, 0.0],
                                                       max_distance=length)
                assert hit.dtype == bool and hit.shape == np.shape(r_hit)
                assert hit.tobytes() == r_hit.tobytes()
                assert point.tobytes() == r_point.tobytes()
            assert 0 < np.count_nonzero(terrain.ground_below(rows, length)[0]) or length < 1


def test_ground_below_takes_any_positive_length():
    """A ray too short for raycast to normalise still has a straight-down answer: a hit
    exactly where the origin is at most that far above the ground."""
    t = Terrain.flat(0.5)
    hit, point = t.ground_below([[1.0, 0.5, 2.0], [1.0, 0.5 + 1e-12, 2.0], [1.0, 0.3, 2.0]],
                                1e-300)
    assert hit.tolist() == [True, False, True]
    assert point[:, 1].tolist() == [0.5, 0.5, 0.5]
    hit, point = t.ground_below([[1e300, 1e300, -1e300], [0.0, 1e300, 0.0]], 1e300)
    assert hit.tolist() == [True, True]  # 1e300 - 0.5 rounds to 1e300: within the ray
    assert point.tolist() == [[1e300, 0.5, -1e300], [0.0, 0.5, 0.0]]
    assert not t.ground_below([[0.0, 1e300, 0.0]], 1e299)[0][0]


def test_ground_below_refuses_bad_input():
    with pytest.raises(InvalidInputError, match="length must be"):
        Terrain.flat(0.0).ground_below([0, 1, 0], 0.0)
    with pytest.raises(InvalidInputError, match="origins"):
        Terrain.flat(0.0).ground_below([0, np.nan, 0], 1.0)


@pytest.mark.parametrize("bad", [-1.0, np.nan, -np.inf, "5"])
def test_raycast_refuses_a_bad_max_distance(bad):
    with pytest.raises(InvalidInputError, match="max_distance must be"):
        Terrain.flat(0.0).raycast([0, 1, 0], [0, -1, 0], max_distance=bad)


@given(st.floats(-20, 20), st.floats(-20, 20))
def test_height_is_finite_everywhere(x, z):
    for t in (Terrain.flat(), Terrain.hills(seed=0), Terrain.steps(), Terrain.slope(0.3)):
        assert np.isfinite(t.height(x, z))
        assert np.all(np.isfinite(t.normal(x, z)))


def test_steps_rise_by_step_height():
    t = Terrain.steps(step_height=0.2, step_length=1.0, cell_size=0.01)
    assert np.isclose(t.height(0.5, 0.0), 0.0)
    assert np.isclose(t.height(1.5, 0.0), 0.2)
    assert np.isclose(t.height(2.5, 3.0), 0.4)


def test_hills_are_seeded():
    a = Terrain.hills(seed=7).heights
    assert np.array_equal(a, Terrain.hills(seed=7).heights)
    assert not np.array_equal(a, Terrain.hills(seed=8).heights)


def test_npy_and_png_loaders(tmp_path):
    h = np.arange(12, dtype=float).reshape(3, 4)
    np.save(tmp_path / "t.npy", h)
    t = Terrain.from_npy(tmp_path / "t.npy", cell_size=0.5, origin=(1, 2))
    assert t.height(1.5, 2.5) == h[1, 1]
    from PIL import Image

    grey = np.arange(0, 240, 12, dtype=np.uint8).reshape(4, 5)
    Image.fromarray(grey, mode="L").save(tmp_path / "t.png")
    p = Terrain.from_png(tmp_path / "t.png", height_scale=2.0)
    np.testing.assert_allclose(p.heights, grey / 255 * 2.0, atol=1e-12)


def test_bad_terrain_input(tmp_path):
    with pytest.raises(TerrainError, match=r"heights must be a 2-D array \(rows, cols\), got shape \(3,\)"):
        Terrain.from_array([1.0, 2.0, 3.0])
    with pytest.raises(InvalidInputError, match="cell_size must be > 0"):
        Terrain.from_array(np.zeros((2, 2)), cell_size=0)
    np.save(tmp_path / "bad.npy", np.zeros(5))
    with pytest.raises(TerrainError, match="must hold a 2-D array"):
        Terrain.from_npy(tmp_path / "bad.npy")
    (tmp_path / "junk.npy").write_text("nope")
    with pytest.raises(TerrainError, match="could not be read"):
        Terrain.from_npy(tmp_path / "junk.npy")
    with pytest.raises(TerrainError, match="could not be read"):
        Terrain.from_npy(tmp_path / "missing.npy")
    with pytest.raises(InvalidInputError, match="heights must be finite"):
        Terrain.from_array([[0.0, np.nan]])


@pytest.mark.parametrize("terrain", [Terrain.flat(0.25), Terrain.hills(2, extent=(-2, 2, -2, 2))])
def test_height_broadcasts_either_argument(terrain):
    """A scalar on either side broadcasts against an array on the other, and a point
    query equals the same point inside a batch (one compiled sampler for both)."""
    xs = np.linspace(-1.5, 1.5, 7)
    across = terrain.height(0.3, xs)
    along = terrain.height(xs, 0.3)
    assert across.shape == along.shape == (7,)
    for k, x in enumerate(xs):
        assert float(terrain.height(x, 0.3)) == along[k]
        assert float(terrain.height(0.3, x)) == across[k]
    grid = terrain.height(xs[:, None], xs[None, :])
    assert grid.shape == (7, 7)
    np.testing.assert_array_equal(grid[:, 2], terrain.height(xs, xs[2]))


def test_terrain_files_cannot_ask_for_more_memory_than_they_back(tmp_path):
    """A .npy header declaring 10^10 samples in a 200-byte file, an .npz under a .npy
    name and a PNG decoding to more than MAX_TERRAIN_SAMPLES pixels are refused before
    anything large is allocated; heights beyond ±1e100 are refused at once."""
    from PIL import Image

    from limbik.placement.terrain import MAX_TERRAIN_SAMPLES

    small = tmp_path / "small.npy"
    np.save(small, np.zeros((2, 2)))
    raw = small.read_bytes()
    lying = tmp_path / "lying.npy"
    lying.write_bytes(raw.replace(b"(2, 2)", b"(100000, 100000)"))
    with pytest.raises(TerrainError, match=r"could not be read as \.npy") as caught:
        Terrain.from_npy(lying)
    assert caught.value.argument == "path"
    archive = tmp_path / "archive.npz"
    np.savez(archive, a=np.zeros((5, 5)))
    renamed = tmp_path / "archive.npy"
    archive.rename(renamed)
    with pytest.raises(TerrainError, match=r"single 2-D array \(\.npy\), got an archive"):
        Terrain.from_npy(renamed)
    side = int(MAX_TERRAIN_SAMPLES**0.5) + 8
    big = tmp_path / "big.png"
    Image.new("L", (side, side), 0).save(big, optimize=True)
    assert big.stat().st_size < 5_000_000  # a small file
    with pytest.raises(TerrainError, match="at most"):
        Terrain.from_png(big)
    huge = tmp_path / "huge.npy"
    np.save(huge, np.full((3, 3), 1e300))
    with pytest.raises(TerrainError, match=r"within ±1e\+100") as caught:
        Terrain.from_npy(huge)
    assert caught.value.argument == "heights"
    with pytest.raises(TerrainError, match=r"within ±1e\+100"):
        Terrain.from_array(np.full((2, 2), -1e101))


def test_distance_outside_is_zero_over_the_samples_and_grows_beyond_them():
    t = Terrain(np.zeros((3, 5)), 0.5, origin=(1.0, -1.0))  # x 1..3, z -1..0
    x = np.array([1.0, 3.0, 2.0, 4.0, 0.0, 6.0])
    z = np.array([-1.0, 0.0, -0.5, -0.5, -2.0, 4.0])
    np.testing.assert_allclose(t.distance_outside(x, z), [0, 0, 0, 1, np.hypot(1, 1), 5])
    assert np.all(Terrain.flat(2.0).distance_outside(x * 1e6, z) == 0.0)  # level everywhere


@pytest.mark.parametrize("offset", [0.0, 0.05, 3.0, 250.0])
def test_a_clip_that_leaves_a_height_field_is_warned_about_saying_how_far(offset):
    """A field placed away from the clip would be clamped to its edge without a word."""
    import warnings

    from limbik.errors import LimbikWarning
    from limbik.placement.footplant import footplant
    from limbik.placement.walk import walk_cycle

    motion = walk_cycle(cycles=1.0)
    world = motion.world_positions()
    x_least = float(world[..., 0].min())  # the field runs 7.8 from its origin, past the clip
    field = Terrain(np.zeros((40, 40)), 0.2, origin=(x_least + offset, -4.0))
    beyond = float(np.max(field.distance_outside(world[..., 0], world[..., 2])))
    assert beyond == pytest.approx(offset, abs=1e-9)
    if offset == 0.0:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            footplant(motion, field)
        return
    with pytest.warns(LimbikWarning, match=rf"^motion leaves terrain 'array' by up to "
                      rf"{offset:.4g} beyond its edge in \d+ of {motion.num_frames} frames"):
        footplant(motion, field)
