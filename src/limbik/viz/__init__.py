"""Pictures and animations with matplotlib (imported lazily, only when a function runs).

World Y is up. 3-D axes draw world (x, y, z) as matplotlib (x, z, y) so that Y is the
vertical axis on screen; 2-D views are ``"side"`` (x right, y up), ``"front"``
(z right, y up) and ``"top"`` (x right, z down the page). Every function takes
``ax=None`` (a new figure is made) and returns the axes. :func:`to_html` writes an
interactive 3-D viewer page instead (three.js, in one offline HTML file;
:mod:`limbik.viz.web`).
"""

from limbik.viz.plots import (
    animate_motion,
    plot_chain,
    plot_cone,
    plot_skeleton,
    plot_solution,
    plot_terrain_profile,
    save_figure,
)
from limbik.viz.web import ViewerMotion, to_html

__all__ = [
    "ViewerMotion",
    "animate_motion",
    "plot_chain",
    "plot_cone",
    "plot_skeleton",
    "plot_solution",
    "plot_terrain_profile",
    "save_figure",
    "to_html",
]
