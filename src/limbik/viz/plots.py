"""matplotlib drawing of chains, solutions, cones, skeletons, terrain and motion."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from limbik._runtime.atomic import atomic_save
from limbik._runtime.validation import FloatArray, as_points, choice
from limbik.errors import InvalidInputError
from limbik.geometry.vectors import any_perpendicular, cross, normalize

if TYPE_CHECKING:
    from matplotlib.axes import Axes

VIEWS = ("3d", "side", "front", "top")


def walk_direction(root_xz: np.ndarray) -> np.ndarray:
    """Unit horizontal direction ``(2,)`` (x, z) along which the root travels most."""
    centred = root_xz - root_xz.mean(axis=0)
    if np.ptp(centred, axis=0).max(initial=0.0) < 1e-9:
        return np.array([0.0, 1.0])
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    d = vt[0]
    if np.dot(root_xz[-1] - root_xz[0], d) < 0:
        d = -d
    return d / np.linalg.norm(d)


def _pyplot() -> Any:
    import matplotlib.pyplot as plt  # falls back to Agg where there is no display

    return plt


def _axes(ax: Any, view: str) -> Any:
    choice(view, "view", VIEWS)
    if ax is not None:
        is_3d = getattr(ax, "name", "") == "3d"
        if is_3d != (view == "3d"):
            needed = ("a 3-D axes (fig.add_subplot(projection='3d'))" if view == "3d"
                      else "a 2-D axes")
            raise InvalidInputError(f"ax must be {needed} for view={view!r}, got a "
                                    f"{'3-D' if is_3d else '2-D'} axes", argument="ax")
        return ax
    plt = _pyplot()
    fig = plt.figure(figsize=(9, 8))
    if view == "3d":
        ax = fig.add_subplot(projection="3d")
        style_3d(ax, units="")
        ax.view_init(elev=18, azim=-60)
    else:
        ax = fig.add_subplot()
        ax.set_xlabel({"side": "x", "front": "z", "top": "x"}[view])
        ax.set_ylabel({"side": "y up", "front": "y up", "top": "z"}[view])
        if view == "top":
            ax.invert_yaxis()
    return ax


def _coords(points: FloatArray, view: str) -> list[FloatArray]:
    """Columns to hand to matplotlib for ``points`` ``(..., 3)`` in ``view``."""
    x, y, z = points[..., 0], points[..., 1], points[..., 2]
    return {"3d": [x, z, y], "side": [x, y], "front": [z, y], "top": [x, z]}[view]


def set_equal(ax: Any, points: FloatArray, view: str, margin: float = 0.08) -> None:
    """Equal scaling on every axis, framing ``points`` ``(..., 3)``."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    cols = _coords(pts, view)
    lo = np.array([c.min() for c in cols])
    hi = np.array([c.max() for c in cols])
    centre = (lo + hi) / 2
    half = max(float(np.max(hi - lo)) / 2, 1e-9) * (1 + margin)
    if view == "3d":
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_zlim(centre[2] - half, centre[2] + half)
        ax.set_box_aspect((1, 1, 1))
    else:
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        if view == "top":
            ax.invert_yaxis()


def plot_chain(positions: Any, *, ax: Any = None, view: str = "3d", color: str = "C0",
               label: str | None = None, joints: bool = True, target: Any = None,
               linewidth: float = 2.5, equal: bool = True) -> Axes:
    """Draw one chain ``(n, 3)`` or a batch ``(..., n, 3)`` as polylines with joint dots."""
    pts = as_points(positions, "positions")
    if pts.ndim < 2:
        raise InvalidInputError(f"positions must have shape (..., n, 3), got {pts.shape}",
                                argument="positions")
    ax = _axes(ax, view)
    chains = pts.reshape(-1, pts.shape[-2], 3)
    for k, chain in enumerate(chains):
        cols = _coords(chain, view)
        ax.plot(*cols, "-", color=color, lw=linewidth, label=label if k == 0 else None,
                solid_capstyle="round")
        if joints:
            ax.plot(*cols, "o", color=color, ms=4, mec="k", mew=0.5)
    everything = [pts.reshape(-1, 3)]
    if target is not None:
        t = as_points(target, "target").reshape(-1, 3)
        ax.plot(*_coords(t, view), "*", color="crimson", ms=12, mec="k", mew=0.5,
                label="target" if label else None)
        everything.append(t)
    if equal:
        set_equal(ax, np.concatenate(everything), view)
    return ax


def plot_solution(solution: Any, target: Any = None, *, ax: Any = None, view: str = "3d",
                  color: str | None = None, label: str | None = None, equal: bool = True) -> Axes:
    """Draw a :class:`~limbik.Solution` (every batch element), with its target if given.

    Reached elements are drawn in ``color`` (default green), unreached in orange.
    """
    pos = np.asarray(solution.positions)
    reached = np.asarray(solution.reached).reshape(-1)
    chains = pos.reshape(-1, pos.shape[-2], 3)
    ax = _axes(ax, view)
    for k, chain in enumerate(chains):
        c = color or ("tab:green" if reached[k] else "tab:orange")
        plot_chain(chain, ax=ax, view=view, color=c, label=label if k == 0 else None,
                   equal=False)
    everything = [chains.reshape(-1, 3)]
    if target is not None:
        t = as_points(target, "target").reshape(-1, 3)
        ax.plot(*_coords(t, view), "*", color="crimson", ms=12, mec="k", mew=0.5)
        everything.append(t)
    if equal:
        set_equal(ax, np.concatenate(everything), view)
    return ax


def plot_cone(apex: Any, axis: Any, angles: Any, *, up: Any = None, length: float = 1.0,
              ax: Any = None, view: str = "3d", color: str = "tab:purple",
              alpha: float = 0.15) -> Axes:
    """Draw a joint-limit cone: one angle (circular) or ``(left, right, up, down)`` (elliptical).

    ``up`` is the cone's up axis (perpendicular to ``axis``); right = axis × up.
    The rim is the quarter-ellipse construction of the seed: each quadrant uses its own
    two half-axes ``length·tan(angle)``.
    """
    apex_p = as_points(apex, "apex")
    a = normalize(as_points(axis, "axis"))
    ang = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    left, right, up_a, down = (ang if ang.size == 4 else np.repeat(ang[:1], 4))
    u = normalize(as_points(up, "up")) if up is not None else any_perpendicular(a)
    u = normalize(u - np.dot(u, a) * a)
    r = cross(a, u)
    t = np.linspace(0, 2 * np.pi, 97)
    c, s = np.cos(t), np.sin(t)
    hx = np.where(c >= 0, np.tan(min(right, 1.55)), np.tan(min(left, 1.55)))
    hy = np.where(s >= 0, np.tan(min(up_a, 1.55)), np.tan(min(down, 1.55)))
    rim = a + (hx * c)[:, None] * r + (hy * s)[:, None] * u
    rim = apex_p + length * rim / np.linalg.norm(rim, axis=1, keepdims=True)
    ax = _axes(ax, view)
    ax.plot(*_coords(rim, view), "-", color=color, lw=1)
    for k in range(0, 96, 12):
        seg = np.stack([apex_p, rim[k]])
        ax.plot(*_coords(seg, view), "-", color=color, lw=0.6, alpha=0.8)
    if view == "3d":
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        tris = [[_pt3(apex_p), _pt3(rim[k]), _pt3(rim[k + 1])] for k in range(96)]
        ax.add_collection3d(Poly3DCollection(tris, color=color, alpha=alpha, lw=0))
    else:
        ax.fill(*_coords(np.vstack([apex_p, rim]), view), color=color, alpha=alpha, lw=0)
    return ax


def _pt3(p: FloatArray) -> tuple[float, float, float]:
    return (float(p[0]), float(p[2]), float(p[1]))


def plot_skeleton(motion_or_positions: Any, parents: Any = None, *, frame: int = 0,
                  ax: Any = None, view: str = "3d", color: str = "C0", equal: bool = True,
                  label: str | None = None) -> Axes:
    """Draw a pose: a ``Motion`` at ``frame``, or positions ``(J, 3)`` with ``parents``."""
    if parents is None:
        motion = motion_or_positions
        pos = np.asarray(motion.world_positions()[frame])
        par = np.asarray(motion.skeleton.parents)
    else:
        pos = as_points(motion_or_positions, "positions")
        par = np.asarray(parents)
    ax = _axes(ax, view)
    first = True
    for j, p in enumerate(par):
        if p < 0:
            continue
        seg = pos[[p, j]]
        ax.plot(*_coords(seg, view), "-", color=color, lw=2, label=label if first else None)
        first = False
    ax.plot(*_coords(pos, view), "o", color=color, ms=2.5)
    if equal:
        set_equal(ax, pos, view)
    return ax


def plot_terrain_profile(terrain: Any, x_range: tuple[float, float], z: float = 0.0, *,
                         ax: Any = None, color: str = "0.55", samples: int = 400) -> Axes:
    """Side view (x, y) of the ground along the line ``z = const``, filled below."""
    ax = _axes(ax, "side")
    xs = np.linspace(x_range[0], x_range[1], samples)
    ys = terrain.height(xs, np.full_like(xs, z))
    floor = float(ys.min()) - 0.1 * max(float(np.ptp(ys)), abs(x_range[1] - x_range[0]) * 0.05)
    ax.fill_between(xs, ys, floor, color=color, alpha=0.5, lw=0)
    ax.plot(xs, ys, color="0.3", lw=1)
    return ax


#: Colours of the body's sides in pictures of skeletons: left, right, and the centre line.
SIDE_COLORS = {"left": "tab:red", "right": "tab:blue", "": "0.3"}


def style_3d(ax: Any, *, units: str = "m", ticks: int = 4) -> None:
    """Axis labels with units, few ticks, and an upright vertical label on 3-D axes."""
    from matplotlib.ticker import MaxNLocator

    suffix = f" ({units})" if units else ""
    ax.set_xlabel("x" + suffix, labelpad=2)
    ax.set_ylabel("z" + suffix, labelpad=2)
    ax.zaxis.set_rotate_label(False)
    ax.set_zlabel("y up" + suffix, rotation=90, labelpad=4)
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(ticks))
    ax.tick_params(labelsize=8, pad=0)


def animate_motion(motion: Any, *, out: str | Path | None = None, view: str = "3d",
                   terrain: Any = None, traces: Any = None, stride: int = 1,
                   fps: float | None = None, ax: Any = None, title: str | None = None,
                   compare: Any = None, label: str | None = None,
                   compare_label: str | None = None, trace_labels: Any = None,
                   units: str = "m", follow: bool | None = None,
                   sides: Sequence[str] | None = None) -> Axes:
    """Animate a ``Motion``: skeleton lines, the ground, optional joint traces.

    Parameters
    ----------
    out : path ending in ``.gif`` (Pillow), ``.mp4`` (needs ffmpeg) or ``.html``; when
        None the animation is only built (call ``plt.show()`` to watch it). The suffix
        (and ffmpeg for ``.mp4``) is checked before anything is drawn.
    traces : joint indices whose paths are drawn (coloured by the joint's side).
    stride : draw every ``stride``-th frame.
    compare : a second ``Motion`` drawn in grey (e.g. the source of a foot-placement run).
    label, compare_label, trace_labels : legend text for the motion, ``compare`` and each
        trace; the legend lists the left, right and centre colours of ``motion``.
    units : length unit named on the axes (``""`` for none).
    follow : 3-D only: the camera follows the root so the character fills the box
        (default: when the root travels farther than the body is tall).
    sides : ``"left"``, ``"right"`` or ``""`` per joint, for the colours (see
        :func:`limbik.skeleton.limbs.joint_sides`); default: every joint in the centre
        colour.

    Left limbs are red, right limbs blue and the spine grey (:data:`SIDE_COLORS`).
    The animation object is kept on ``ax.figure.limbik_animation``.
    """
    from matplotlib.animation import FuncAnimation
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D

    choice(view, "view", (*VIEWS, "profile"))
    if out is not None:
        check_animation_path(out)
    world = np.asarray(motion.world_positions())
    parents = np.asarray(motion.skeleton.parents)
    other = np.asarray(compare.world_positions()) if compare is not None else None
    suffix = f" ({units})" if units else ""
    profile_terrain = None
    trace_idx = [] if traces is None else [int(t) for t in np.atleast_1d(traces)]
    under_traces: list[tuple[FloatArray, FloatArray]] = []
    new_axes = ax is None
    if view == "profile":
        # project on the walk direction: x = distance along it, z = across it
        world, other, profile_terrain, under_traces = _profile(world, other, terrain,
                                                               trace_idx)
        view, terrain = "side", None
        if ax is None:
            ax = _axes(None, "side")
            ax.set_xlabel("distance along the walk")
    frames = list(range(0, world.shape[0], max(int(stride), 1)))
    ax = _axes(ax, view)
    fig = ax.figure
    if new_axes:
        fig.set_size_inches(8.5, 7.0 if view == "3d" else 5.5)
        if view == "3d":
            style_3d(ax, units=units)
        else:
            ax.set_xlabel(ax.get_xlabel() + suffix)
            ax.set_ylabel(ax.get_ylabel() + suffix)
            fig.subplots_adjust(left=0.12, right=0.97, bottom=0.1, top=0.93)
    everything = world.reshape(-1, 3) if other is None else np.concatenate(
        [world.reshape(-1, 3), other.reshape(-1, 3)])
    root = world[:, 0]
    height = float(np.ptp(world[..., 1]))
    spread = np.abs(world - root[:, None])[..., [0, 2]].max()
    half = 0.53 * max(height, 2 * float(spread), 1e-6)
    travel = float(np.ptp(root[:, [0, 2]], axis=0).max())
    follow = view == "3d" and (travel > max(height, 2 * half) if follow is None else follow)
    if follow:
        low = float(world[..., 1].min())
        ax.set_box_aspect((1, 1, 1))
        ax.set_zlim(low, low + 2 * half)
    elif view == "3d":
        set_equal(ax, everything, view)
    else:  # equal scale, the limits widened to fill the axes instead of a square
        cols = _coords(everything, view)
        ax.set_aspect("equal", adjustable="datalim")
        ax.update_datalim(np.column_stack(cols))
        ax.margins(0.05)
        ax.autoscale_view()
        if view == "top":
            ax.invert_yaxis()
    clip = {"axlim_clip": True} if view == "3d" and _has_axlim_clip() else {}
    ground: list[Any] = []
    if terrain is not None and not follow:
        _draw_ground(ax, terrain, everything, view)
    sides = [""] * len(parents) if sides is None else list(sides)
    if len(sides) != len(parents):
        raise InvalidInputError(f"sides must have one entry per joint ({len(parents)}), "
                                f"got {len(sides)}", argument="sides")
    trace_colors = [SIDE_COLORS[sides[t]] if sides[t] else f"C{k + 2}"
                    for k, t in enumerate(trace_idx)]
    if profile_terrain is not None:
        along, heights = profile_terrain
        floor = float(heights.min()) - 0.1 * float(np.ptp(everything[:, 1]))
        ax.fill_between(along, heights, floor, color="0.6", alpha=0.45, lw=0)
        ax.plot(along, heights, color="0.35", lw=1)
        # feet off the root's line stand on other ground: draw the ground under each path
        for (along_t, heights_t), color in zip(under_traces, trace_colors, strict=True):
            ax.plot(along_t, heights_t, "--", color=color, lw=1.0, alpha=0.8)
    # a skeleton of one joint (no bone) is drawn as a point: a segment from it to itself
    bones = [(int(p), j) for j, p in enumerate(parents) if p >= 0] or [(0, 0)]
    dot = "o" if bones == [(0, 0)] else ""
    ghost = ([ax.plot(*_coords(other[0, [p, j]], view), dot + "-", color="0.65", lw=1.5,
                      **clip)[0] for p, j in bones] if other is not None else [])
    lines = [ax.plot(*_coords(world[0, [p, j]], view), dot + "-", color=SIDE_COLORS[sides[j]],
                     lw=2.2, **clip)[0] for p, j in bones]
    trace_lines = [ax.plot(*_coords(world[:1, t], view), ":", lw=1.4, color=color, **clip)[0]
                   for t, color in zip(trace_idx, trace_colors, strict=True)]
    handles: list[Any] = []
    name = label or "skeleton"
    used = [side for side in ("left", "right", "") if side in {sides[j] for _, j in bones}]
    # one entry for the sides: a segment of each colour, in the order the label names them
    handles.append(tuple(Line2D([], [], color=SIDE_COLORS[side], lw=2.2) for side in used))
    labels = [f"{name}: {', '.join(side or 'centre' for side in used)}" if len(used) > 1
              else name]
    if other is not None:
        handles.append(Line2D([], [], color="0.65", lw=1.5))
        labels.append(compare_label or "compare")
    names = list(trace_labels) if trace_labels is not None else [
        f"path of {motion.skeleton.names[t]}" for t in trace_idx]
    for line, text in zip(trace_lines, names, strict=False):
        handles.append(Line2D([], [], color=line.get_color(), ls=":", lw=1.4))
        labels.append(text)
    if profile_terrain is not None:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="0.6", alpha=0.45, edgecolor="0.35"))
        labels.append("ground under the root's path")
        if trace_idx:  # one entry: a dashed segment in each path's colour
            handles.append(tuple(Line2D([], [], color=color, ls="--", lw=1.0, alpha=0.8)
                                 for color in trace_colors))
            labels.append("ground under each path")
    legend = ax.legend(handles, labels, loc="upper left", fontsize=8, framealpha=0.85,
                       handler_map={tuple: HandlerTuple(ndivide=None, pad=0.0)})
    if title:
        ax.set_title(title, fontsize=10)

    def _set(line: Any, pts: FloatArray) -> None:
        cols = _coords(pts, view)
        if view == "3d":
            line.set_data(cols[0], cols[1])
            line.set_3d_properties(cols[2])
        else:
            line.set_data(cols[0], cols[1])

    def update(f: int) -> list[Any]:
        for line, (p, j) in zip(lines, bones, strict=True):
            _set(line, world[f, [p, j]])
        for line, (p, j) in zip(ghost, bones, strict=False):
            if other is not None:
                _set(line, other[min(f, len(other) - 1), [p, j]])
        if follow:
            cx, cz = root[f, 0], root[f, 2]
        for line, t in zip(trace_lines, trace_idx, strict=True):
            path = world[: f + 1, t]
            if follow:  # only the part of the path inside the box
                outside = (np.abs(path[:, 0] - cx) > half) | (np.abs(path[:, 2] - cz) > half)
                path = np.where(outside[:, None], np.nan, path)
            _set(line, path)
        if follow:
            ax.set_xlim(cx - half, cx + half)
            ax.set_ylim(cz - half, cz + half)
            if terrain is not None:
                while ground:
                    ground.pop().remove()
                ground.append(_ground_patch(ax, terrain, cx, cz, half))
        return [*lines, *ghost, *trace_lines]

    update(frames[0])
    frame_time = float(motion.frame_time) * max(int(stride), 1)
    rate = fps if fps is not None else min(30.0, 1.0 / frame_time)
    # a flat view whose axes stay put: the GIF draws the figure once, then per frame only
    # what is painted from the skeleton lines on (they, the legend, whatever lies above)
    over_background = (out is not None and view != "3d" and Path(out).suffix.lower() == ".gif"
                       and save_gif_over_background(ax, update, frames,
                                                    [*ghost, *lines, *trace_lines, legend],
                                                    out, rate))
    anim = FuncAnimation(fig, update, frames=frames, interval=1000.0 / rate, blit=False)
    fig.limbik_animation = anim
    if over_background:
        anim._draw_was_started = True  # type: ignore[attr-defined]  # written: no warning
    elif out is not None:
        save_animation(anim, out, rate)
    return ax


def save_gif_over_background(ax: Any, update: Any, frames: list[int], moving: list[Any],
                             out: str | Path, fps: float) -> bool:
    """Write a GIF atomically, drawing the still part of ``ax.figure`` once and, for each
    frame ``f`` after ``update(f)``, only what a full draw paints from the first of the
    ``moving`` artists of ``ax`` on: the later artists of ``ax`` in z-order, then those of
    the figure above ``ax``. Each frame so has the pixels of a full redraw.

    Returns False, writing nothing, where that cannot hold: a canvas other than Agg's, a
    ``savefig.dpi`` other than the figure's, or animated artists in the figure (the caller
    then saves the animation the usual way). Frames last ``1000 / fps`` ms, as with
    matplotlib's writer.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = ax.figure
    canvas = fig.canvas
    dpi = matplotlib.rcParams["savefig.dpi"]
    if (not isinstance(canvas, FigureCanvasAgg) or dpi not in ("figure", fig.dpi)
            or fig.findobj(lambda artist: artist.get_animated())):
        return False
    path = check_animation_path(out)
    redrawn = [artist for artist in _painted_from(ax, moving) if artist.get_visible()]
    canvas.draw()  # a full draw first: it places what is laid out when drawn (titles)
    texts = [(text, text.get_position()) for text in redrawn if isinstance(text, Text)]
    for artist in redrawn:
        artist.set_visible(False)
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    for artist in redrawn:
        artist.set_visible(True)
    for text, position in texts:  # a hidden title is moved off the axes by that draw
        text.set_position(position)
    images = []
    for f in frames:
        update(f)
        canvas.restore_region(background)
        for artist in redrawn:
            fig.draw_artist(artist)
        images.append(canvas_image(canvas))
    atomic_save(path, lambda tmp: images[0].save(
        tmp, format="GIF", save_all=True, append_images=images[1:],
        duration=int(1000 / max(1, round(fps))), loop=0))
    return True


def canvas_image(canvas: Any) -> Any:
    """The Agg ``canvas``'s current pixels as a Pillow image of their own: RGB where
    every pixel is opaque, else RGBA."""
    from PIL import Image

    frame = Image.frombuffer("RGBA", canvas.get_width_height(physical=True),
                             canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    lowest_alpha: Any = frame.getchannel("A").getextrema()[0]
    return frame.copy() if lowest_alpha < 255 else frame.convert("RGB")


def _painted_from(ax: Any, moving: list[Any]) -> list[Any]:
    """The artists a full draw of ``ax.figure`` paints from the first of ``moving`` (artists
    of ``ax``) on, in painting order (as ``Axes.draw`` and ``Figure.draw`` sort them)."""
    skipped = {id(ax.patch)}
    if not (ax.axison and ax.get_frame_on()):
        skipped |= {id(spine) for spine in ax.spines.values()}
    if not ax.axison:
        skipped |= {id(axis) for axis in (ax.xaxis, ax.yaxis)}
    in_axes = sorted((artist for artist in ax.get_children() if id(artist) not in skipped),
                     key=lambda artist: artist.get_zorder())
    ids = {id(artist) for artist in moving}
    first = next(i for i, artist in enumerate(in_axes) if id(artist) in ids)
    fig = ax.figure
    in_figure = sorted((artist for artist in fig.get_children() if artist is not fig.patch),
                       key=lambda artist: artist.get_zorder())
    above = in_figure[next(i for i, artist in enumerate(in_figure) if artist is ax) + 1:]
    return in_axes[first:] + above


def _has_axlim_clip() -> bool:
    import matplotlib

    return tuple(int(v) for v in matplotlib.__version__.split(".")[:2]) >= (3, 10)


def _ground_patch(ax: Any, terrain: Any, cx: float, cz: float, half: float) -> Any:
    xs = np.linspace(cx - half, cx + half, 24)
    zs = np.linspace(cz - half, cz + half, 24)
    X, Z = np.meshgrid(xs, zs)
    return ax.plot_surface(X, Z, terrain.height(X, Z), color="0.6", alpha=0.35, lw=0,
                           antialiased=False)


def check_animation_path(out: str | Path) -> Path:
    """``out`` as a Path if it can be written as an animation, else InvalidInputError:
    the suffix is ``.gif``, ``.mp4`` (with ffmpeg installed) or ``.html``."""
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix == ".mp4":
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise InvalidInputError(
                f"out must end in .gif or .html on this machine (ffmpeg not found), got {out}",
                argument="out")
    elif suffix not in (".gif", ".html", ".htm"):
        raise InvalidInputError(f"out must end in .gif, .mp4 or .html, got {out}",
                                argument="out")
    if not path.absolute().parent.is_dir():
        raise InvalidInputError(f"out must be in an existing folder, got {out} (no folder "
                                f"{path.absolute().parent})", argument="out")
    return path


def _profile(world: FloatArray, other: FloatArray | None, terrain: Any,
             traces: list[int] | None = None
             ) -> tuple[FloatArray, FloatArray | None, tuple[FloatArray, FloatArray] | None,
                        list[tuple[FloatArray, FloatArray]]]:
    """World positions re-expressed as (along the walk, y, across); the ground profile
    under the root's line; and, per traced joint, the ground under its own path as
    (distance along the walk, height), sorted along the walk (none without a terrain)."""
    d = walk_direction(world[:, 0, [0, 2]])
    basis = np.array([[d[0], 0.0, d[1]], [0.0, 1.0, 0.0], [-d[1], 0.0, d[0]]])
    origin = world[0, 0] * np.array([1.0, 0.0, 1.0])

    def turn(p: FloatArray) -> FloatArray:
        return (p - origin) @ basis.T

    ground = None
    under: list[tuple[FloatArray, FloatArray]] = []
    if terrain is not None:
        along = turn(world.reshape(-1, 3))[:, 0]
        pad = 0.1 * max(float(np.ptp(along)), 1.0)
        s = np.linspace(along.min() - pad, along.max() + pad, 400)
        path = origin + s[:, None] * basis[0]
        ground = (s, terrain.height(path[:, 0], path[:, 2]))
        for t in traces or []:
            foot = world[:, t]
            along_t = turn(foot)[:, 0]
            order = np.argsort(along_t, kind="stable")
            under.append((along_t[order], terrain.height(foot[order, 0], foot[order, 2])))
    return turn(world), (None if other is None else turn(other)), ground, under


def _draw_ground(ax: Any, terrain: Any, points: FloatArray, view: str) -> None:
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    pad = 0.1 * float(np.max(hi - lo))
    if view == "3d":
        xs = np.linspace(lo[0] - pad, hi[0] + pad, 40)
        zs = np.linspace(lo[2] - pad, hi[2] + pad, 40)
        X, Z = np.meshgrid(xs, zs)
        Y = terrain.height(X, Z)
        ax.plot_surface(X, Z, Y, color="0.6", alpha=0.35, lw=0, antialiased=False)
    elif view in ("side", "front"):
        a = 0 if view == "side" else 2
        xs = np.linspace(lo[a] - pad, hi[a] + pad, 300)
        mid = (lo + hi) / 2
        if view == "side":
            ys = terrain.height(xs, np.full_like(xs, mid[2]))
        else:
            ys = terrain.height(np.full_like(xs, mid[0]), xs)
        ax.fill_between(xs, ys, float(ys.min()) - pad, color="0.6", alpha=0.4, lw=0)


def _gif_writer(fps: int) -> Any:
    """matplotlib's Pillow GIF writer, taking each frame from the canvas that the
    animation has just drawn instead of drawing the figure a second time (half the work;
    the same pixels). Falls back to Pillow's own grab where the canvas is not Agg's or
    its size is not the frame's."""
    from matplotlib.animation import PillowWriter
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    class DrawnFrameWriter(PillowWriter):
        def grab_frame(self, **savefig_kwargs: Any) -> None:
            canvas = self.fig.canvas
            if (savefig_kwargs or not isinstance(canvas, FigureCanvasAgg)
                    or self.dpi != self.fig.dpi
                    or tuple(canvas.get_width_height(physical=True)) != self.frame_size):
                super().grab_frame(**savefig_kwargs)
                return
            frames: list[Any] = self._frames  # type: ignore[attr-defined]
            frames.append(canvas_image(canvas))

    return DrawnFrameWriter(fps=fps)


def save_animation(anim: Any, out: str | Path, fps: float) -> None:
    """Write an animation atomically: ``.gif`` (Pillow), ``.mp4`` (ffmpeg) or ``.html``."""
    path = check_animation_path(out)
    suffix = path.suffix.lower()
    # a failed write must not leave matplotlib warning that nothing was rendered
    anim._draw_was_started = True
    if suffix == ".gif":
        atomic_save(path, lambda tmp: anim.save(tmp, writer=_gif_writer(max(1, round(fps)))))
    elif suffix == ".mp4":
        from matplotlib.animation import FFMpegWriter

        atomic_save(path, lambda tmp: anim.save(tmp, writer=FFMpegWriter(fps=max(1, round(fps)))))
    else:
        html = anim.to_jshtml(fps=fps)
        atomic_save(path, lambda tmp: Path(tmp).write_text(html))


def save_figure(fig: Any, path: str | Path, dpi: int = 90) -> Path:
    """Save a figure atomically (format from the suffix) and close it."""
    plt = _pyplot()
    target = Path(path)
    atomic_save(target, lambda tmp: fig.savefig(tmp, dpi=dpi, bbox_inches="tight"))
    plt.close(fig)
    return target
