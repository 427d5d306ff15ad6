"""Pictures: each plot function returns its axes, uses equal scaling and draws Y up."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from limbik import Solution
from limbik.errors import InvalidInputError
from limbik.placement import Terrain
from limbik.viz import plot_chain, plot_cone, plot_solution, plot_terrain_profile, save_figure


def test_plot_chain_3d_is_equal_scaled_with_y_up(tmp_path):
    pts = np.array([[0, 0, 0], [0, 3, 0], [1, 3, 0.5]])
    ax = plot_chain(pts, target=[1, 3, 0.5])
    spans = [np.ptp(ax.get_xlim()), np.ptp(ax.get_ylim()), np.ptp(ax.get_zlim())]
    assert np.allclose(spans, spans[0])
    # world y is matplotlib's z (the vertical axis)
    assert ax.get_zlim()[1] >= 3 and ax.get_zlabel().startswith("y")
    out = save_figure(ax.figure, tmp_path / "chain.png")
    assert out.stat().st_size > 1000


@pytest.mark.parametrize("view", ["side", "front", "top"])
def test_plot_chain_2d_views(view):
    ax = plot_chain(np.array([[0, 0, 0], [1, 2, 3.0]]), view=view)
    assert ax.get_aspect() == 1.0


def test_plot_solution_colours_by_reached():
    s = Solution(positions=np.array([[[0, 0, 0], [1, 0, 0.0]], [[0, 0, 0], [0, 1, 0.0]]]),
                 reached=np.array([True, False]), error=np.array([0.0, 1.0]),
                 iterations=np.array([1, 2]))
    ax = plot_solution(s, target=[[1, 0, 0], [0, 2, 0]], view="side")
    colours = {line.get_color() for line in ax.get_lines() if line.get_linestyle() == "-"}
    assert {"tab:green", "tab:orange"} <= colours


def test_cone_and_terrain_profile():
    ax = plot_cone([0, 0, 0], [0, 1, 0], [0.2, 0.4, 0.3, 0.5], up=[0, 0, 1])
    assert ax.name == "3d"
    ax = plot_terrain_profile(Terrain.hills(seed=1), (-3, 3))
    assert len(ax.collections) >= 1


def test_bad_view_and_shapes():
    with pytest.raises(InvalidInputError, match="view must be one of"):
        plot_chain(np.zeros((2, 3)), view="iso")
    with pytest.raises(InvalidInputError, match=r"positions must have shape \(\.\.\., n, 3\)"):
        plot_chain(np.zeros(3))


@pytest.mark.parametrize(("projection", "view", "needed"),
                         [(None, "3d", "a 3-D axes"), ("3d", "side", "a 2-D axes")])
def test_an_axes_of_the_wrong_kind_is_a_clear_error(projection, view, needed):
    import matplotlib.pyplot as plt

    from limbik.viz import plot_skeleton

    fig = plt.figure()
    ax = fig.add_subplot(projection=projection)
    pts = np.array([[0, 0, 0], [0, 1, 0.0]])
    for draw in (lambda: plot_chain(pts, ax=ax, view=view),
                 lambda: plot_skeleton(pts, [-1, 0], ax=ax, view=view),
                 lambda: plot_cone([0, 0, 0], [0, 1, 0], 0.3, ax=ax, view=view)):
        with pytest.raises(InvalidInputError, match=f"ax must be {needed}"):
            draw()
    plt.close(fig)


def _walk():
    from limbik.placement.walk import walk_cycle

    return walk_cycle(cycles=3.0)


def _close(ax):
    """Close an animation built only to be inspected (matplotlib warns about unrendered
    animations when they are collected)."""
    import matplotlib.pyplot as plt

    ax.figure.limbik_animation._draw_was_started = True
    plt.close(ax.figure)


def test_animation_colours_left_and_right_limbs_apart_with_a_legend():
    from limbik.skeleton.limbs import joint_sides
    from limbik.viz.plots import SIDE_COLORS, animate_motion

    motion = _walk()
    sides = joint_sides(motion.skeleton)
    assert {"left", "right", ""} <= set(sides)
    ax = animate_motion(motion, stride=10, label="walk", sides=sides)
    colours = {line.get_color() for line in ax.get_lines()}
    assert SIDE_COLORS["left"] in colours and SIDE_COLORS["right"] in colours
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == "walk: left, right, centre"  # one entry, a segment of each colour
    _close(ax)


def test_the_3d_camera_follows_so_the_character_fills_the_box():
    """Every drawn frame: the pose spans at least half of the box's height and its
    horizontal extent stays inside the box."""
    from limbik.viz.plots import animate_motion

    motion = _walk()
    world = motion.world_positions()
    assert np.ptp(world[:, 0, [0, 2]], axis=0).max() > 2.0  # a walk that travels
    ax = animate_motion(motion, stride=7)
    update = ax.figure.limbik_animation._func
    for f in range(0, motion.num_frames, 7):
        update(f)
        (x0, x1), (z0, z1), (y0, y1) = ax.get_xlim(), ax.get_ylim(), ax.get_zlim()
        pose = world[f]
        assert np.ptp(pose[:, 1]) >= 0.5 * (y1 - y0)
        assert x0 <= pose[:, 0].min() and pose[:, 0].max() <= x1
        assert z0 <= pose[:, 2].min() and pose[:, 2].max() <= z1
    _close(ax)


def test_a_bad_animation_suffix_is_refused_before_drawing(tmp_path):
    import warnings

    from limbik.viz.plots import animate_motion

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInputError, match=r"out must end in \.gif, \.mp4 or \.html"):
            animate_motion(_walk(), out=tmp_path / "walk.png")
    assert not (tmp_path / "walk.png").exists()


def test_an_animation_into_a_missing_folder_is_refused_without_a_warning(tmp_path):
    import gc
    import warnings

    from limbik.viz.plots import animate_motion, save_animation

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInputError, match="existing folder"):
            animate_motion(_walk(), out=tmp_path / "nowhere" / "walk.gif")
        gc.collect()  # matplotlib warns from Animation.__del__ when nothing was drawn

    # a write that fails after drawing started: the error, and no warning either
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    fig = plt.figure()
    anim = FuncAnimation(fig, lambda i: [], frames=2)
    (tmp_path / "walk.gif").mkdir()  # a folder where the file should go
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OSError):
            save_animation(anim, tmp_path / "walk.gif", 10)
        del anim
        gc.collect()
    plt.close(fig)


def test_footplant_plot_has_units_and_wide_contacts():
    """Contacts are spans of time, not hairlines on a distance axis."""
    from limbik.placement.footplant import footplant, terrain_for_clip
    from limbik.skeleton.limbs import find_legs
    from limbik.viz.footplant_plot import plot_footplant

    motion = _walk()
    legs = find_legs(motion.skeleton)
    terrain = terrain_for_clip("hills", motion, legs=legs)
    result, report = footplant(motion, terrain, legs=legs)
    fig = plot_footplant(motion, result, terrain, legs, report.contacts, floor=report.floor)
    axes = fig.axes
    assert axes[-1].get_xlabel() == "time (s)"
    assert all("(m)" in ax.get_ylabel() for ax in axes)
    duration = motion.num_frames * motion.frame_time
    for ax in axes:
        widths = [p.get_width() for p in ax.patches if hasattr(p, "get_width")]
        assert widths and max(widths) > 0.1 * duration
    import matplotlib.pyplot as plt

    plt.close(fig)


def _plain(ax):
    pass


def _covered(ax):
    """Something above the skeleton, a static text, titles of the axes and the figure."""
    ax.axvspan(-0.5, 0.5, color="yellow", alpha=0.6, zorder=10)
    ax.set_title("the axes", loc="left")
    ax.text(0.5, 0.5, "note", transform=ax.transAxes)
    ax.figure.suptitle("a title", y=0.9)


def _animated(ax):
    """An animated artist of the caller's: drawn only while saving; the usual path."""
    ax.text(0.2, 0.2, "animated", transform=ax.transAxes, animated=True)


def _small_dpi(ax):
    """A savefig.dpi unlike the figure's: the usual path, which honours it."""
    import matplotlib

    matplotlib.rcParams["savefig.dpi"] = 40


@pytest.mark.parametrize(("view", "decorate"), [("side", _plain), ("profile", _plain),
                                                ("side", _covered), ("side", _animated),
                                                ("side", _small_dpi)])
def test_a_flat_gif_drawn_over_its_background_has_the_full_redraws_pixels(tmp_path, view,
                                                                           decorate,
                                                                           monkeypatch):
    """A GIF of a flat view draws the still figure once and then only what a full draw
    paints from the moving lines on; every frame must match the frame of a full redraw,
    pixel for pixel, also with the caller's axes holding other artists."""
    import gc
    import warnings

    import matplotlib
    import matplotlib.pyplot as plt
    from PIL import Image

    from limbik.viz import plots
    from limbik.viz.plots import animate_motion, save_animation

    usual = []
    monkeypatch.setattr(plots, "save_animation", lambda *a: usual.append(save_animation(*a)))
    motion = _walk()
    kw = {"view": view, "stride": 9, "compare": motion, "traces": [4], "fps": 10,
          "title": "a walk"}
    with matplotlib.rc_context():
        _, ax = plt.subplots(figsize=(6, 4), dpi=60)
        decorate(ax)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "animation deleted without rendering" warning
            animate_motion(motion, out=tmp_path / "fast.gif", ax=ax, **kw)
            _close(ax)
            gc.collect()
        # the fast path where it can give the same pixels, the usual one elsewhere
        assert len(usual) == (0 if decorate in (_plain, _covered) else 1)
        _, ax = plt.subplots(figsize=(6, 4), dpi=60)
        decorate(ax)
        animate_motion(motion, ax=ax, **kw)
        save_animation(ax.figure.limbik_animation, tmp_path / "full.gif", 10)
        _close(ax)
    with Image.open(tmp_path / "fast.gif") as fast, Image.open(tmp_path / "full.gif") as full:
        assert fast.size == full.size
        assert fast.n_frames == full.n_frames
        assert fast.info["duration"] == full.info["duration"] == 100
        for i in range(full.n_frames):
            fast.seek(i)
            full.seek(i)
            assert np.array_equal(np.asarray(fast.convert("RGB")),
                                  np.asarray(full.convert("RGB")))
    if decorate is _plain:  # a GIF that moves: the comparison above covers real frames
        assert full.n_frames == len(range(0, motion.num_frames, 9)) > 2


def test_the_profile_view_draws_the_ground_under_each_traced_path():
    """Feet off the walk's centre line stand on other ground than the line's profile: the
    profile view draws, per traced joint, the ground under that joint's own path (the
    heights of the terrain there), so no foot seems to sink into the drawn ground."""
    import matplotlib.pyplot as plt

    from limbik.placement.terrain import Terrain
    from limbik.skeleton.limbs import find_legs
    from limbik.viz.plots import animate_motion

    motion = _walk()
    terrain = Terrain.hills(seed=3)
    toes = [leg.toe if leg.toe is not None else leg.ankle for leg in find_legs(motion.skeleton)]
    _, ax = plt.subplots(figsize=(6, 4), dpi=60)
    animate_motion(motion, view="profile", terrain=terrain, traces=toes, stride=10, ax=ax,
                   trace_labels=["left toe path", "right toe path"])
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == len(toes)
    world = np.asarray(motion.world_positions())
    for line, toe in zip(dashed, toes, strict=True):
        path = world[:, toe]
        expected = np.sort(terrain.height(path[:, 0], path[:, 2]))
        np.testing.assert_allclose(np.sort(line.get_ydata()), expected, atol=1e-12)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "ground under the root's path" in labels
    assert "ground under each path" in labels
    _close(ax)
