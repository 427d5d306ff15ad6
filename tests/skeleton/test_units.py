"""Up axis and units: Z-up files map to Y up as Blender's glTF exporter does, exactly;
unit scaling round-trips to within one rounding; bad names are clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import limbik
from limbik.errors import InvalidInputError
from limbik.io import export_axes, import_axes, unit_scale
from limbik.skeleton import Motion, Skeleton


def random_motion(seed, frames=5):
    rng = np.random.default_rng(seed)
    skeleton = Skeleton(["root", "a", "b", "c"], [-1, 0, 1, 1], rng.normal(size=(4, 3)),
                        end_sites={3: rng.normal(size=3)})
    q = rng.normal(size=(frames, 4, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return Motion(skeleton, rng.normal(size=(frames, 3)), q, 1 / 30,
                  {2: rng.normal(size=(frames, 3))})


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["y", "z"]),
       st.sampled_from([1.0, 0.01, 0.001, 0.0254, 0.5, 100.0]))
def test_round_trip_is_exact_on_axes_and_within_one_rounding_on_scale(seed, up, scale):
    motion = random_motion(seed)
    back = export_axes(import_axes(motion, up=up, scale=scale), up=up, scale=scale)
    assert np.array_equal(back.rotations, motion.rotations)
    for ours, theirs in ((back.root_positions, motion.root_positions),
                         (back.skeleton.offsets, motion.skeleton.offsets),
                         (back.skeleton.end_site_offsets, motion.skeleton.end_site_offsets),
                         (back.joint_translations[2], motion.joint_translations[2])):
        assert np.all(np.abs(ours - theirs) <= np.spacing(np.abs(theirs)))
        if scale in (1.0, 0.5):
            assert np.array_equal(ours, theirs)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_z_up_world_positions_are_the_y_up_ones_turned(seed):
    """A file point (x, y, z) in a Z-up file is limbik's (x, z, -y), for every joint of
    every frame (forward kinematics commutes with the axis change)."""
    file_motion = random_motion(seed)
    ours = import_axes(file_motion, up="z", scale=0.01)
    p = file_motion.world_positions(include_end_sites=True)
    expected = 0.01 * np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1)
    assert np.allclose(ours.world_positions(include_end_sites=True), expected, atol=1e-12)


def test_identity_conversion_returns_the_same_motion():
    motion = random_motion(0)
    assert import_axes(motion) is motion
    assert export_axes(motion, up="y", scale=1.0) is motion


def test_unit_names_and_numbers():
    assert unit_scale("cm") == 0.01
    assert unit_scale("M") == 1.0
    assert unit_scale(None) == 1.0
    assert unit_scale("0.5") == 0.5
    assert unit_scale(2.54) == 2.54
    assert unit_scale("mm", working="cm") == pytest.approx(0.1)
    with pytest.raises(InvalidInputError, match=r"unit must be one of m, dm, cm"):
        unit_scale("furlong")
    with pytest.raises(InvalidInputError, match=r"unit must be > 0"):
        unit_scale(0.0)
    # beyond nanometres..1e9 m a length underflows, or overflows once squared
    assert unit_scale("1e-9") == 1e-9 and unit_scale(1e9) == 1e9
    with pytest.raises(InvalidInputError, match=r"unit must be >= 1e-09, got 1e-200"):
        unit_scale("1e-200")
    with pytest.raises(InvalidInputError, match=r"unit must be <= 1e\+09, got 1e\+300"):
        unit_scale(1e300)
    with pytest.raises(InvalidInputError, match=r"up must be one of 'y', 'z', got 'x'"):
        import_axes(random_motion(1), up="x")


def test_legs_are_found_after_reading_a_z_up_centimetre_clip():
    """A Y-up clip written Z up in centimetres reads back with the same legs and the
    same positions (to rounding)."""
    from limbik.placement.walk import walk_cycle

    walk = walk_cycle()
    file_motion = export_axes(walk, up="z", scale=0.01)
    back = import_axes(file_motion, up="z", scale=0.01)
    assert limbik.find_legs(back.skeleton) == limbik.find_legs(walk.skeleton)
    assert np.allclose(back.world_positions(), walk.world_positions(), rtol=1e-14, atol=1e-14)


def test_bvh_read_and_write_take_the_files_frame(tmp_path):
    """write_bvh(up="z", scale=0.01) writes the Z-up centimetre file that read_bvh with
    the same arguments reads back to the motion (exact axes, one rounding of scale)."""
    motion = random_motion(7)
    limbik.write_bvh(motion, tmp_path / "z.bvh", up="z", scale=0.01)
    raw = limbik.read_bvh(tmp_path / "z.bvh")
    assert np.allclose(raw.world_positions(), export_axes(motion, up="z", scale=0.01)
                       .world_positions(), rtol=1e-12, atol=1e-12)
    back = limbik.read_bvh(tmp_path / "z.bvh", up="z", scale=0.01)
    assert np.allclose(back.world_positions(), motion.world_positions(), rtol=1e-12,
                       atol=1e-12)
