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
