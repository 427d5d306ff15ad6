"""The scenes of ``limbik demo``: one per solver family, each solving and drawing.

Every scene takes the output folder (None: solve only, matplotlib is not imported) and
returns its table rows. Pictures are at least 850 pixels wide (100 dpi), with units on
every axis and a legend entry for every mark; the whole demo, Numba compilation
included, stays well under a minute. The methods come from the tutorials listed in
``docs/sources.md`` (seeds 000-004).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from limbik.app.demo.registry import SceneResult, scene, timed
from limbik.geometry.frame import Frame
from limbik.solvers.solution import Solution

DPI = 100


def _plt() -> Any:
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, folder: Path, name: str) -> str:
    from limbik.viz.plots import save_figure

    save_figure(fig, folder / name, dpi=DPI)
    return name


def _attach(rows: list[SceneResult], pictures: list[str]) -> list[SceneResult]:
    """Put the scene's pictures on its first row (so each is counted once)."""
    if not rows or not pictures:
        return rows
    return [dataclasses.replace(rows[0], pictures=tuple(pictures)), *rows[1:]]


def _limb_solution(positions: np.ndarray, target: np.ndarray, reach: float) -> Solution:
    """A Solution for limb positions ``(..., n, 3)`` built outside a solver (Roblox API)."""
    error = np.linalg.norm(positions[..., -1, :] - target, axis=-1)
    return Solution(positions=positions, reached=error <= 1e-9 * reach, error=error,
                    iterations=np.zeros(error.shape, dtype=np.int64))


def _bone(ax: Any, a: np.ndarray, b: np.ndarray, color: str, lw: float, view: str = "3d",
          **kw: Any) -> None:
    from limbik.viz.plots import _coords

    seg = np.stack([a, b])
    style = {"ls": "-", "solid_capstyle": "round"} | kw
    ax.plot(*_coords(seg, view), color=color, lw=lw, **style)


def _style3d(ax: Any) -> None:
    from limbik.viz.plots import style_3d

    style_3d(ax, units="m")


def _handle(**kw: Any) -> Any:
    """A legend entry for a mark drawn elsewhere (``Line2D`` keywords)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **({"ls": "none"} | kw))


def _star(ax: Any, points: Any, view: str = "3d", **kw: Any) -> None:
    from limbik.viz.plots import _coords

    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    style = {"color": "crimson", "ms": 11, "mec": "k", "mew": 0.5, "ls": "none"} | kw
    ax.plot(*_coords(p, view), "*", **style)


# --------------------------------------------------------------------------- seeds 000/001
ARM_L1, ARM_L2 = 0.30, 0.28
SHOULDER = np.array([0.22, 1.42, 0.0])


def _ring(count: int, radius: float = 0.45, drop: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    """Targets on a horizontal ring around the shoulder; azimuth 0 = ahead (−Z), 90 = right."""
    az = np.linspace(0.0, 360.0, count, endpoint=False)
    t = np.radians(az)
    ring = SHOULDER + np.stack([radius * np.sin(t), np.full_like(t, -drop),
                                -radius * np.cos(t)], axis=-1)
    return az, ring


def _torso(ax: Any) -> None:
    """A torso box (x −0.18..0.18, y 0.95..1.45, z −0.1..0.1) drawn as a wireframe."""
    lo, hi = np.array([-0.18, 0.95, -0.1]), np.array([0.18, 1.45, 0.1])
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    for i in range(8):
        for j in range(i + 1, 8):
            if np.sum(corners[i] != corners[j]) == 1:
                _bone(ax, corners[i], corners[j], "0.55", 1.0)
    head = np.array([0.0, 1.6, 0.0])
    _bone(ax, np.array([0.0, 1.45, 0.0]), head, "0.55", 1.0)
    ax.plot([head[0]], [head[2]], [head[1]], "o", color="0.55", ms=9, mfc="none")


@scene("arm")
def arm_scene(folder: Path | None) -> list[SceneResult]:
    """The rolled plane around a shoulder, and targets out of reach (seeds 000/001)."""
    from limbik import roblox
    from limbik.solvers.two_bone.solver import two_bone

    shoulder_frame = Frame.from_translation(SHOULDER)  # looks along −Z, the body's front
    az, ring = _ring(12)
    sol, t_two = timed(lambda: two_bone(SHOULDER, ring, ARM_L1, ARM_L2,
                                        root_frame=shoulder_frame))

    def seed_arm() -> Solution:
        plane, shoulder, elbow = roblox.solve_ik(shoulder_frame, ring, ARM_L1, ARM_L2)
        upper, lower = roblox.build_arm(plane, shoulder, elbow, ARM_L1, ARM_L2)
        pos = np.stack([plane.position, upper.apply(np.array([0.0, -ARM_L1 / 2, 0.0])),
                        lower.apply(np.array([0.0, -ARM_L2 / 2, 0.0]))], axis=-2)
        return _limb_solution(pos, ring, ARM_L1 + ARM_L2)

    seed, t_seed = timed(seed_arm)
    rows = [SceneResult.from_solution("arm ring (rolled plane)", "two_bone root_frame", sol, t_two),
            SceneResult.from_solution("arm ring (rolled plane)", "roblox.solve_ik+build_arm", seed,
                                      t_seed)]
    rows += _unreachable_rows()
    if folder is None:
        return rows
    pictures = [_arm_ring_picture(folder, az, ring, sol, seed, shoulder_frame),
                _unreachable_picture(folder)]
    return _attach(rows, pictures)


def _arm_ring_picture(folder: Path, az: np.ndarray, ring: np.ndarray, sol: Solution,
                      seed: Solution, frame: Frame) -> str:
    from limbik.solvers.two_bone.solver import two_bone
    from limbik.viz.plots import set_equal

    plt = _plt()
    fig = plt.figure(figsize=(12.5, 5.8), dpi=DPI)
    grid = fig.add_gridspec(1, 2, width_ratios=(1.15, 1.0))
    ax = fig.add_subplot(grid[0], projection="3d")
    _torso(ax)
    cmap = plt.get_cmap("hsv")
    pos = sol.positions
    for k in range(len(az)):
        c = cmap(az[k] / 360.0)
        _bone(ax, pos[k, 0], pos[k, 1], c, 3.0)
        _bone(ax, pos[k, 1], pos[k, 2], c, 2.0)
        ax.plot([pos[k, 1, 0]], [pos[k, 1, 2]], [pos[k, 1, 1]], "o", color=c, mec="k",
                mew=0.5, ms=5)
    _star(ax, ring, ms=8)
    for vec, col, name in ((frame.right, "tab:red", "right"), (frame.up, "tab:green", "up"),
                           (frame.look, "tab:blue", "look (front)")):
        _bone(ax, SHOULDER, SHOULDER + 0.18 * vec, col, 1.6)
        tip = SHOULDER + 0.2 * vec
        ax.text(tip[0], tip[2], tip[1], name, color=col, fontsize=7)
    _style3d(ax)
    ax.set_ylabel("z (m; front is −z)", labelpad=2)
    ax.view_init(elev=14, azim=-25)
    set_equal(ax, np.concatenate([pos.reshape(-1, 3), ring, [[-0.1, 1.0, 0.0]]]), "3d",
              margin=-0.05)
    ax.legend(handles=[
        _handle(color="tab:purple", ls="-", lw=3, label="upper arm, forearm (colour = azimuth)"),
        _handle(marker="o", color="tab:purple", mec="k", ms=6, label="elbow"),
        _handle(marker="*", color="crimson", mec="k", ms=10, label="target"),
        _handle(color="0.55", ls="-", label="torso and head"),
        _handle(color="tab:red", ls="-", label="shoulder frame: right, up, look")],
        loc="upper left", fontsize=8, framealpha=0.9)
    ax.set_title("12 targets circling the right shoulder", fontsize=10)

    # elbow height over a dense sweep of the same ring
    az_d, ring_d = _ring(181)
    dense = two_bone(SHOULDER, ring_d, ARM_L1, ARM_L2, root_frame=frame)
    ax2 = fig.add_subplot(grid[1])
    ax2.axhline(0.0, color="0.7", lw=0.8)
    ax2.axvspan(90, 270, color="0.9", lw=0, label="target behind the shoulder")
    ax2.plot(az_d, dense.positions[:, 1, 1] - SHOULDER[1], "-", color="C0",
             label="elbow, two_bone(root_frame=shoulder)")
    ax2.scatter(az, seed.positions[:, 1, 1] - SHOULDER[1], c=[cmap(a / 360.0) for a in az],
                s=30, edgecolors="k", linewidths=0.5, zorder=3,
                label="elbow, roblox.solve_ik + build_arm (the 12 arms)")
    ax2.set_xlabel("target azimuth around the shoulder (deg; 0 = front, 90 = right)")
    ax2.set_ylabel("elbow height above the shoulder (m)")
    ax2.set_xticks(range(0, 361, 45))
    ax2.legend(fontsize=8, loc="upper left")
    ax2.set_title("the plane rolls with the target: elbow below the shoulder in front,\n"
                  "above it when reaching straight behind the body", fontsize=10)
    fig.suptitle("Two-joint arm on the rolled plane: two_bone(root_frame=...) and "
                 "roblox.solve_ik agree", fontsize=12)
    fig.tight_layout()
    return _save(fig, folder, "arm_rolled_plane.png")


UNREACH_L1, UNREACH_L2 = 0.30, 0.20
UNREACH_TARGETS = np.array([[0.66, 0.28, 0.0],    # too far: 0.72 > 0.5
                            [0.05, -0.04, 0.0]])  # too close: 0.064 < 0.1
UNREACH_POLE = np.array([0.2, 0.6, 0.0])


def _unreachable(policy: str) -> Solution:
    from limbik.solvers.two_bone.solver import two_bone

    return two_bone(np.zeros(3), UNREACH_TARGETS, UNREACH_L1, UNREACH_L2, pole=UNREACH_POLE,
                    unreachable=policy, max_stretch=1.6)


def _unreachable_rows() -> list[SceneResult]:
    rows = []
    for policy in ("extend", "push_root", "stretch"):
        sol, t = timed(partial(_unreachable, policy))
        rows.append(SceneResult.from_solution("arm out of reach", f"two_bone {policy}", sol, t))
    return rows


def _unreachable_picture(folder: Path) -> str:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 4.6), dpi=DPI, sharey=True)
    th = np.linspace(0, 2 * np.pi, 200)
    for ax, policy in zip(axes, ("extend", "push_root", "stretch"), strict=True):
        sol = _unreachable(policy)
        outer, inner = UNREACH_L1 + UNREACH_L2, UNREACH_L1 - UNREACH_L2
        ax.fill(outer * np.cos(th), outer * np.sin(th), color="tab:green", alpha=0.08, lw=0)
        ax.fill(inner * np.cos(th), inner * np.sin(th), color="white", lw=0)
        ax.plot(outer * np.cos(th), outer * np.sin(th), color="tab:green", lw=0.6, alpha=0.6)
        ax.plot(inner * np.cos(th), inner * np.sin(th), color="tab:green", lw=0.6, alpha=0.6)
        ax.plot(0, 0, "s", mfc="none", mec="0.3", ms=11)
        for k, (color, dark, what) in enumerate((("C0", "#0b3d66", "too far"),
                                                 ("C1", "#8a4500", "too close"))):
            p = sol.positions[k]
            ax.plot(*p[:2, :2].T, "-", color=color, lw=7, solid_capstyle="round")
            ax.plot(*p[1:, :2].T, "-", color=dark, lw=2.5, solid_capstyle="round")
            ax.plot(*p[0, :2], "o", color="k", ms=5)
            ax.plot(*p[1, :2], "o", color="white", mec="k", ms=6)
            ax.plot(*UNREACH_TARGETS[k, :2], "x", color="crimson", ms=11, mew=2.5)
            moved = ("" if sol.root_offset is None else
                     f", root moved {np.linalg.norm(sol.root_offset[k]):.3f} m")
            ax.annotate(f"{what}: reached={bool(sol.reached[k])}, error "
                        f"{sol.error[k]:.3f} m{moved}", (0.02, 0.04 + 0.07 * k),
                        xycoords="axes fraction", fontsize=8.5, color=color)
        ax.set_aspect("equal")
        ax.set_xlim(-0.35, 0.8)
        ax.set_ylim(-0.4, 0.55)
        ax.set_xlabel("x (m)")
        ax.set_title(f'unreachable="{policy}"', fontsize=11)
    axes[0].set_ylabel("y up (m)")
    fig.legend(handles=[
        _handle(color="C0", ls="-", lw=7, label="too far: upper bone"),
        _handle(color="#0b3d66", ls="-", lw=2.5, label="too far: lower bone"),
        _handle(color="C1", ls="-", lw=7, label="too close: upper bone"),
        _handle(color="#8a4500", ls="-", lw=2.5, label="too close: lower bone (folded back)"),
        _handle(marker="x", color="crimson", ms=10, mew=2.5, label="target"),
        _handle(marker="s", mfc="none", mec="0.3", ms=10, label="root as given"),
        _handle(marker="o", color="k", ms=5, label="root as returned"),
        _handle(marker="o", color="white", mec="k", ms=6, label="mid joint"),
        _handle(marker="o", color="tab:green", alpha=0.3, ms=12,
                label="reachable ring (0.10 to 0.50 m)")],
        loc="lower center", ncol=5, fontsize=9, frameon=False)
    fig.suptitle("two_bone with targets out of reach: upper bone 0.30 m, lower 0.20 m, "
                 "stretch up to 1.6x", fontsize=12)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return _save(fig, folder, "arm_unreachable.png")


# --------------------------------------------------------------------------- seed 002
PLANAR_A, PLANAR_B = 0.32, 0.26
PLANAR_TARGET = np.array([0.30, 0.18, -0.30])
PLANAR_ROLLS = np.array([0.0, 90.0])


def _planar() -> tuple[Solution, Frame]:
    from limbik import roblox

    origin = np.zeros(3)
    plane, big_b, big_c = roblox.solve_ik_planar(origin, PLANAR_TARGET, PLANAR_A, PLANAR_B,
                                                 PLANAR_ROLLS)
    part_a, part_b = roblox.build_planar(plane, big_b, big_c, PLANAR_A, PLANAR_B)
    pos = np.stack([np.broadcast_to(origin, (2, 3)),
                    part_a.apply(np.array([0.0, 0.0, -PLANAR_A / 2])),
                    part_b.apply(np.array([0.0, 0.0, -PLANAR_B / 2]))], axis=-2)
    return _limb_solution(pos, PLANAR_TARGET, PLANAR_A + PLANAR_B), plane


@scene("planar")
def planar_scene(folder: Path | None) -> list[SceneResult]:
    """One joint in a plane through origin and target, rolled about that line (seed 002)."""
    (sol, plane), t = timed(_planar)
    rows = [SceneResult.from_solution("planar (one joint)", "roblox.solve_ik_planar roll 0/90",
                                      sol, t)]
    if folder is None:
        return rows
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from limbik.viz.plots import set_equal

    plt = _plt()
    fig = plt.figure(figsize=(9.0, 7.5), dpi=DPI)
    ax = fig.add_subplot(projection="3d")
    reach = PLANAR_A + PLANAR_B
    for k, color in enumerate(("C0", "C2")):
        look, up = plane.look[k], plane.up[k]
        corners = np.array([s * look + u * up for s, u in
                            ((-0.05, -0.3), (reach, -0.3), (reach, 0.3), (-0.05, 0.3))])
        ax.add_collection3d(Poly3DCollection([[(c[0], c[2], c[1]) for c in corners]],
                                             color=color, alpha=0.12, lw=0))
        p = sol.positions[k]
        _bone(ax, p[0], p[1], color, 5.0)
        _bone(ax, p[1], p[2], color, 3.0)
        ax.plot([p[1, 0]], [p[1, 2]], [p[1, 1]], "o", color="white", mec="k", ms=7)
    _bone(ax, np.zeros(3), PLANAR_TARGET, "0.5", 0.8, ls="--")
    _star(ax, PLANAR_TARGET, ms=14)
    ax.plot([0], [0], [0], "ks", ms=6)
    _style3d(ax)
    # look from between the two planes' normals, so both are seen at 45°
    normal = plane.right[0] + plane.right[1]
    normal /= np.linalg.norm(normal)
    if normal[1] < 0:
        normal = -normal
    ax.view_init(elev=18.0, azim=float(np.degrees(np.arctan2(normal[2], normal[0]))))
    set_equal(ax, np.concatenate([sol.positions.reshape(-1, 3), [[0.0, 0.3, 0.0],
                                                                [0.0, -0.3, 0.0]]]), "3d")
    ax.legend(handles=[
        _handle(color="C0", ls="-", lw=4, label="roll 0°: the segments and their plane"),
        _handle(color="C2", ls="-", lw=4, label="roll 90°: the segments and their plane"),
        _handle(marker="o", color="white", mec="k", ms=7, label="elbow (the single joint)"),
        _handle(marker="s", color="k", ms=6, label="origin (shoulder)"),
        _handle(marker="*", color="crimson", mec="k", ms=12, label="target"),
        _handle(color="0.5", ls="--", label="origin to target: the roll axis")],
        loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=10, framealpha=0.9)
    ax.set_title("roblox.solve_ik_planar: one joint in a plane through origin and target,\n"
                 f"rolled 0° and 90° about that line; both reach (error {sol.error.max():.1e} m)",
                 fontsize=11)
    return _attach(rows, [_save(fig, folder, "planar_roll.png")])


# --------------------------------------------------------------------------- seed 003
def _straight(n: int, bone: float, direction: Any = (1.0, 0.0, 0.0)) -> np.ndarray:
    return np.arange(n)[:, None] * bone * np.asarray(direction, dtype=np.float64)


TREE_PARENTS = [-1, 0, 1, 2, 3, 2, 5]
TREE_REST = np.array([[0.0, 0.0, 0.0], [0.0, 0.3, 0.0], [0.0, 0.6, 0.0], [-0.2, 0.75, 0.0],
                      [-0.4, 0.9, 0.0], [0.2, 0.75, 0.0], [0.4, 0.9, 0.0]])
TREE_TARGETS = {4: np.array([-0.45, 0.40, 0.0]), 6: np.array([0.30, 0.95, 0.0])}


@scene("fabrik")
def fabrik_scene(folder: Path | None) -> list[SceneResult]:
    """A FABRIK chain, a two-effector tree, and a chain limited by cones (seed 003)."""
    from limbik.solvers.constraints import Cone, EllipticalCone
    from limbik.solvers.fabrik.chain import fabrik
    from limbik.solvers.fabrik.tree import FabrikTree

    chain = _straight(7, 0.15)
    rng = np.random.default_rng(3)
    d = rng.normal(size=(64, 3))
    d[:, 2] = 0.0
    targets = d / np.linalg.norm(d, axis=1, keepdims=True) * rng.uniform(0.2, 0.85, (64, 1))
    targets[0] = [0.35, 0.55, 0.0]
    sol, t_chain = timed(lambda: fabrik(chain, targets))
    tree = FabrikTree(TREE_PARENTS, TREE_REST)
    tree_sol, t_tree = timed(lambda: tree.solve(TREE_TARGETS))

    cone_chain = _straight(6, 0.2, (0.0, 0.0, -1.0))
    constraints = [EllipticalCone(0.3, 0.7, 0.6, 0.2), *[Cone(0.45)] * 4]
    cone_target = np.array([0.5, 0.3, -0.2])
    root_frame = Frame.identity()
    cone_sol, t_cone = timed(lambda: fabrik(cone_chain, cone_target, constraints=constraints,
                                            root_frame=root_frame))
    free_sol = fabrik(cone_chain, cone_target)
    rows = [SceneResult.from_solution("fabrik chain", "fabrik, 64 targets", sol, t_chain),
            SceneResult.from_solution("fabrik tree", "FabrikTree, 2 effectors", tree_sol,
                                      t_tree),
            SceneResult.from_solution("fabrik cones", "fabrik + Cone/EllipticalCone",
                                      cone_sol, t_cone)]
    if folder is None:
        return rows
    pictures = [_fabrik_picture(folder, chain, targets[0], sol[0], tree_sol),
                _cone_picture(folder, cone_sol, free_sol, cone_target, constraints)]
    return _attach(rows, pictures)


def _fabrik_picture(folder: Path, chain: np.ndarray, target: np.ndarray, sol: Solution,
                    tree_sol: Solution) -> str:
    from limbik.viz.plots import plot_chain, set_equal

    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10.5, 5.0), dpi=DPI)
    plot_chain(chain, ax=a1, view="side", color="0.7", label="start pose", equal=False)
    plot_chain(sol.positions, ax=a1, view="side", color="C0", target=target,
               label="solved", equal=False)
    set_equal(a1, np.concatenate([chain, sol.positions, target[None]]), "side")
    a1.set_xlabel("x (m)")
    a1.set_ylabel("y up (m)")
    a1.legend(handles=[_handle(color="0.7", ls="-", lw=2.5, marker="o", mec="k", ms=4,
                               label="start pose, joints"),
                       _handle(color="C0", ls="-", lw=2.5, marker="o", mec="k", ms=4,
                               label="solved, joints"),
                       _handle(marker="*", color="crimson", mec="k", ms=12, label="target")],
              fontsize=9, loc="lower right")
    a1.set_title(f"chain of 6 bones: reached={bool(sol.reached)}, "
                 f"{int(sol.iterations)} iterations", fontsize=9)
    parents = TREE_PARENTS
    pos = tree_sol.positions
    for j, p in enumerate(parents):
        if p < 0:
            continue
        a2.plot(*TREE_REST[[p, j], :2].T, "-", color="0.7", lw=2.5,
                label="start pose" if j == 1 else None)
        a2.plot(*pos[[p, j], :2].T, "-", color="C0", lw=2.5, solid_capstyle="round",
                label="solved" if j == 1 else None)
    a2.plot(*pos[:, :2].T, "o", color="C0", ms=4, mec="k", mew=0.5)
    a2.plot(*pos[2, :2], "o", color="gold", ms=7, mec="k", label="sub-base")
    targets = np.array(list(TREE_TARGETS.values()))
    a2.plot(*targets[:, :2].T, "*", color="crimson", ms=12, mec="k", mew=0.5, ls="none",
            label="targets")
    a2.plot([], [], "o", color="C0", ms=4, mec="k", mew=0.5, label="joint")
    set_equal(a2, np.concatenate([TREE_REST, pos, targets]), "side")
    a2.set_xlabel("x (m)")
    a2.set_ylabel("y up (m)")
    a2.legend(fontsize=9, loc="lower right")
    a2.set_title(f"tree, 2 end effectors: reached={bool(tree_sol.reached)}, "
                 f"{int(tree_sol.iterations)} iterations", fontsize=9)
    fig.suptitle("FABRIK: forward and backward reaching on a chain and a tree", fontsize=12)
    fig.tight_layout()
    return _save(fig, folder, "fabrik_chain_tree.png")


def _cone_picture(folder: Path, sol: Solution, free: Solution, target: np.ndarray,
                  constraints: list[Any]) -> str:
    from limbik.viz.plots import plot_chain, plot_cone, set_equal

    plt = _plt()
    fig = plt.figure(figsize=(10.0, 7.0), dpi=DPI)
    ax = fig.add_subplot(projection="3d")
    pos = sol.positions
    plot_chain(free.positions, ax=ax, color="0.65", label="no constraints", equal=False,
               linewidth=1.5)
    plot_chain(pos, ax=ax, color="C0", label="with cones", target=target, equal=False)
    bones = np.diff(pos, axis=0)
    unit = bones / np.linalg.norm(bones, axis=1, keepdims=True)
    c0 = constraints[0]
    plot_cone(pos[0], (0.0, 0.0, -1.0), (c0.left, c0.right, c0.up, c0.down), up=(0, 1, 0),
              length=0.09, ax=ax, color="tab:orange", alpha=0.25)
    bends = []
    for i in range(1, len(bones)):
        plot_cone(pos[i], unit[i - 1], constraints[i].angle, length=0.09, ax=ax,
                  color="tab:purple", alpha=0.15)
        bends.append(np.degrees(np.arccos(np.clip(unit[i] @ unit[i - 1], -1, 1))))
    ax.view_init(elev=30, azim=-120)
    _style3d(ax)
    set_equal(ax, np.concatenate([pos, free.positions, target[None]]), "3d")
    degrees = ", ".join(f"{np.degrees(a):.0f}°" for a in (c0.left, c0.right, c0.up, c0.down))
    ax.legend(handles=[
        _handle(color="0.65", ls="-", lw=1.5, marker="o", mec="k", ms=4,
                label=f"no constraints: reached={bool(free.reached)}"),
        _handle(color="C0", ls="-", lw=2.5, marker="o", mec="k", ms=4,
                label=f"with cones: reached={bool(sol.reached)}, error "
                      f"{float(sol.error):.2f} m"),
        _handle(marker="*", color="crimson", mec="k", ms=12, label="target"),
        _handle(marker="^", color="tab:orange", alpha=0.5, ms=11,
                label=f"root: elliptical cone (left, right, up, down {degrees})"),
        _handle(marker="^", color="tab:purple", alpha=0.4, ms=11,
                label=f"other joints: {np.degrees(constraints[1].angle):.1f}° cones")],
        loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=10, framealpha=0.9)
    ax.set_title(f"FABRIK with joint cones: the largest bend is {max(bends):.1f}°, so the "
                 "cones stop the curl", fontsize=11)
    return _save(fig, folder, "fabrik_cones.png")


# --------------------------------------------------------------------------- seed 004
LEG_VIEW = (20.0, -120.0)


@scene("leg")
def leg_scene(folder: Path | None) -> list[SceneResult]:
    """A raised foot solved with the animated knee as reference, and without (seed 004)."""
    from limbik.placement.walk import walk_cycle
    from limbik.skeleton.limbs import find_legs
    from limbik.solvers.two_bone.solver import two_bone

    motion = walk_cycle(cycles=1.0, frame_rate=30.0)
    leg = find_legs(motion.skeleton)[0]
    # the walk turned to head along +X, so the world's default bend is no help
    turn = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    world = motion.world_positions() @ turn.T
    hip, knee, ankle = world[:, leg.hip], world[:, leg.knee], world[:, leg.ankle]
    thigh = float(np.linalg.norm(knee[0] - hip[0]))
    shin = float(np.linalg.norm(ankle[0] - knee[0]))
    target = ankle + np.array([0.04, 0.08, 0.0])  # the foot raised onto a step
    rows = []
    solved = {}
    for name, extra in (("reference=knee", {"reference": knee}), ("no hint", {})):
        sol, t = timed(partial(two_bone, hip, target, thigh, shin, **extra))
        solved[name] = sol
        rows.append(SceneResult.from_solution("leg (keep the knee)", f"two_bone {name}", sol, t))
    if folder is None:
        return rows
    from limbik.viz.plots import plot_skeleton, set_equal

    plt = _plt()
    fig = plt.figure(figsize=(13, 5.6), dpi=DPI)
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    f = 6
    plot_skeleton(world[f], motion.skeleton.parents, ax=ax, color="0.7", equal=False,
                  label="animated pose")
    colors = {"reference=knee": "tab:green", "no hint": "tab:orange"}
    for name, sol in solved.items():
        p = sol.positions[f]
        _bone(ax, p[0], p[1], colors[name], 3.5, label=f"two_bone {name}")
        _bone(ax, p[1], p[2], colors[name], 2.5)
    ax.plot([knee[f, 0]], [knee[f, 2]], [knee[f, 1]], "o", color="k", ms=7, mfc="none",
            label="animated knee")
    _star(ax, target[f], ms=13, label="target: the ankle raised 8 cm")
    _style3d(ax)
    ax.set_xlabel("x (m; walk direction)", labelpad=2)
    ax.view_init(*LEG_VIEW)
    lower_body = world[f][world[f, :, 1] < hip[f, 1] + 0.15]
    set_equal(ax, np.concatenate([lower_body, target[f:f + 1],
                                  *(sol.positions[f] for sol in solved.values())]), "3d",
              margin=0.0)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2,
              framealpha=0.9)
    ax.set_title(f"walk frame {f}: left foot raised 8 cm onto a step", fontsize=10)
    ax2 = fig.add_subplot(1, 2, 2)
    for name, sol in solved.items():
        ax2.plot(np.arange(len(hip)), _swivel(hip, target, knee, sol.positions[:, 1]), "-",
                 color=colors[name], lw=2, label=name)
    ax2.set_xlabel("frame of the walk (30 per second)")
    ax2.set_ylabel("knee swivel from the animated knee (deg)")
    ax2.set_ylim(-5, 185)
    ax2.axvline(f, color="0.6", lw=0.8, ls=":", label=f"frame {f}, drawn on the left")
    ax2.legend(fontsize=9, loc="upper right", framealpha=0.9)
    ax2.set_title("knee swivel about the hip-target line:\nthe reference keeps the animated "
                  "knee, no hint swings it away", fontsize=10)
    fig.suptitle("Leg IK that keeps the animated knee: two_bone(reference=knee) against "
                 "two_bone with no hint", fontsize=12)
    fig.tight_layout()
    return _attach(rows, [_save(fig, folder, "leg_pose_preference.png")])


def _swivel(root: np.ndarray, target: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (deg) between mid joints ``a`` and ``b`` seen along the root→target axis."""
    axis = target - root
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)

    def side(p: np.ndarray) -> np.ndarray:
        v = p - root
        v = v - np.sum(v * axis, axis=-1, keepdims=True) * axis
        return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)

    return np.degrees(np.arccos(np.clip(np.sum(side(a) * side(b), axis=-1), -1.0, 1.0)))


# --------------------------------------------------------------------------- foot placement
@scene("footplant")
def footplant_scene(folder: Path | None) -> list[SceneResult]:
    """The built-in walk planted on generated hills (before and after)."""
    from limbik import metrics
    from limbik.placement.footplant import footplant, terrain_for_clip
    from limbik.placement.walk import walk_cycle
    from limbik.skeleton.limbs import find_legs, joint_sides

    motion = walk_cycle(cycles=2.0)
    legs = find_legs(motion.skeleton)
    terrain = terrain_for_clip("hills", motion, legs=legs)
    (result, report), t = timed(lambda: footplant(motion, terrain, legs=legs))
    rows = []
    for label, clip, secs in (("source on hills", motion, 0.0), ("footplant", result, t)):
        world = clip.world_positions()
        for leg in legs:
            contact = np.zeros(clip.num_frames, dtype=bool)
            for start, stop in report.contacts[leg.side]:
                contact[start:stop] = True
            # the planted foot's pivot (heel or toe, as weighted) does not slide: per frame
            # the weighted horizontal move w·Δankle + (1 − w)·Δtoe is zero
            w = report.heel_weight[leg.side][1:, None]
            toe = world[:, leg.toe if leg.toe is not None else leg.ankle]
            move = (w * np.diff(world[:, leg.ankle], axis=0)
                    + (1 - w) * np.diff(toe, axis=0))[:, [0, 2]]
            slide = np.zeros(clip.num_frames)
            slide[1:] = np.where(contact[1:] & contact[:-1], np.hypot(*move.T), 0.0)
            depth = metrics.penetration(world[:, [leg.ankle, leg.toe or leg.ankle]],
                                        terrain).max(axis=1)
            error = (slide + depth)[contact]
            rows.append(SceneResult(f"footplant {leg.side}", label, error <= 1e-6, error,
                                    np.zeros(error.size, dtype=np.int64),
                                    secs if leg is legs[0] else 0.0))
    if folder is None:
        return rows
    from limbik.viz.footplant_plot import plot_footplant
    from limbik.viz.plots import animate_motion

    plt = _plt()
    fig = plt.figure(figsize=(8.6, 5.2), dpi=DPI)
    ax = fig.add_subplot()
    toes = [leg.toe if leg.toe is not None else leg.ankle for leg in legs]
    stride = max(1, round(1 / (15 * result.frame_time)))
    ax.set_xlabel("distance along the walk (m)")
    ax.set_ylabel("y up (m)")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.1, top=0.93)
    animate_motion(result, out=folder / "footplant_walk.gif", view="profile", terrain=terrain,
                   compare=motion, traces=toes, stride=stride, fps=15, ax=ax,
                   sides=joint_sides(result.skeleton),
                   label="planted", compare_label="source, on its own flat floor",
                   trace_labels=[f"path of the planted {leg.side} toe" for leg in legs],
                   title="footplant: the built-in walk planted on hills")
    plt.close(fig)
    fig2 = plot_footplant(motion, result, terrain, legs, report.contacts, floor=report.floor,
                          title="footplant: the built-in walk's toes over the hills")
    return _attach(rows, ["footplant_walk.gif", _save(fig2, folder, "footplant_profile.png")])


# --------------------------------------------------------------------------- CCD / Jacobian
JAC_METHODS = ("transpose", "pinv", "dls", "svd-dls")


@scene("jacobian")
def jacobian_scene(folder: Path | None) -> list[SceneResult]:
    """CCD and the four Jacobian methods on the same 10-joint ball-joint chain (27 DOF)."""
    from limbik.chain.joint_chain import JointChain
    from limbik.solvers.ccd import ccd
    from limbik.solvers.joint.jacobian import jacobian_ik

    points = _straight(10, 0.1)
    chain = JointChain.from_points(points, name="10-joint chain")
    rng = np.random.default_rng(7)
    angle = rng.uniform(0.2, np.pi - 0.2, 16)
    radius = rng.uniform(0.35, 0.8, 16)
    targets = np.stack([radius * np.cos(angle), radius * np.sin(angle), np.zeros(16)], axis=-1)
    targets[0] = [-0.25, 0.45, 0.0]
    solved: dict[str, Solution] = {}
    rows = []
    for method in ("ccd", *JAC_METHODS):
        if method == "ccd":
            sol, t = timed(partial(ccd, chain, targets))
        else:
            sol, t = timed(partial(jacobian_ik, chain, targets, method=method))
        solved[method] = sol
        rows.append(SceneResult.from_solution("10-joint chain", method, sol, t))
    if folder is None:
        return rows
    from limbik.viz.plots import plot_chain, set_equal

    plt = _plt()
    fig, axes = plt.subplots(1, 5, figsize=(14, 4.0), dpi=DPI, sharey=True)
    for ax, (method, sol) in zip(axes, solved.items(), strict=True):
        plot_chain(points, ax=ax, view="side", color="0.75", equal=False, joints=False,
                   linewidth=1.5)
        plot_chain(sol.positions[0], ax=ax, view="side", color="C0", target=targets[0],
                   equal=False, linewidth=2.0)
        set_equal(ax, np.concatenate([points, targets[:1], [[-0.5, -0.1, 0.0]]]), "side")
        ax.set_xlabel("x (m)")
        ax.set_title(f"{method}: {int(sol.iterations[0])} iterations\n"
                     f"error {float(sol.error[0]):.1e} m, reached={bool(sol.reached[0])}",
                     fontsize=10)
    axes[0].set_ylabel("y up (m)")
    fig.legend(handles=[_handle(color="0.75", ls="-", lw=1.5, label="start pose"),
                        _handle(color="C0", ls="-", lw=2, marker="o", mec="k", ms=4,
                                label="solved chain, joints"),
                        _handle(marker="*", color="crimson", mec="k", ms=12, label="target")],
               loc="lower center", ncol=3, fontsize=10, frameon=False)
    fig.suptitle("CCD and Jacobian IK on the same 10-joint chain of ball joints (the first of "
                 "the table's 16 targets)", fontsize=12)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return _attach(rows, [_save(fig, folder, "ccd_jacobian.png")])


# --------------------------------------------------------------------------- per-frame rigs
def foot_planter_run(terrain_kind: str = "hills") -> dict[str, Any]:
    """Seed 000's foot-planting loop, frame by frame at 60 Hz, beside offline ``footplant``.

    The built-in walk's pelvis (as ``footplant`` placed it) carries a lower torso facing
    the walk (+Z, so the torso's −Z is forward, as in Roblox). Each leg is a
    :class:`~limbik.rigs.FootPlanter` whose rest hip C0 is turned half a turn about Y
    (knees forward) and whose ray hits the ground raised by the ankle's rest height.
    Returns the terrain, both clips' joints ``(frames, joints, 3)`` and the planter's
    hip/knee/ankle ``(frames, legs, 3, 3)`` and ray hits ``(frames, legs, 3)``.
    """
    from limbik.placement.footplant import footplant, terrain_for_clip
    from limbik.placement.walk import walk_cycle
    from limbik.rigs import FootPlanter
    from limbik.skeleton.limbs import find_legs

    motion = walk_cycle(cycles=2.0)
    legs = find_legs(motion.skeleton)
    terrain = terrain_for_clip(terrain_kind, motion, legs=legs, seed=2)
    result, _ = footplant(motion, terrain, legs=legs)
    source = motion.world_positions()
    planted = result.world_positions()
    turn = Frame.from_euler_xyz(0.0, np.pi, 0.0)
    rest_world = source[0]
    pelvis0 = rest_world[0]
    planters = []
    for leg in legs:
        thigh = float(np.linalg.norm(rest_world[leg.knee] - rest_world[leg.hip]))
        shin = float(np.linalg.norm(rest_world[leg.ankle] - rest_world[leg.knee]))
        ankle_height = float(rest_world[leg.ankle, 1] - terrain_for_clip(
            "flat", motion, legs=legs).height(0.0, 0.0))
        offset = turn.inverse().apply(rest_world[leg.hip] - pelvis0)
        hip_c0 = Frame.from_translation(offset) @ turn

        def cast(origin: np.ndarray, direction: np.ndarray, lift: float = ankle_height
                 ) -> np.ndarray | None:
            hit, _, point, _ = terrain.raycast(origin, direction,
                                               max_distance=float(np.linalg.norm(direction)))
            return point + np.array([0.0, lift, 0.0]) if bool(hit) else None

        planters.append(FootPlanter(hip_c0, Frame.from_translation([0.0, -thigh, 0.0]),
                                    thigh, shin, cast, reach=thigh + shin,
                                    ray_length=2 * (thigh + shin)))
    frames = planted.shape[0]
    joints = np.empty((frames, len(legs), 3, 3))
    hits = np.full((frames, len(legs), 3), np.nan)
    for f in range(frames):
        torso = Frame.from_translation(planted[f, 0]) @ turn
        for k, planter in enumerate(planters):
            planter.step(float(motion.frame_time), torso)
            joints[f, k] = planter.joints(torso)
            if planter.ground is not None:
                hits[f, k] = planter.ground
    return {"terrain": terrain, "legs": legs, "source": source, "footplant": planted,
            "planter": joints, "hits": hits, "frame_time": float(motion.frame_time)}


def foot_planter_picture(run: dict[str, Any], path: Path, title: str) -> None:
    """Side views: the per-frame loop's legs (left) and offline ``footplant`` (right)."""
    plt = _plt()
    terrain, legs = run["terrain"], run["legs"]
    planted, joints, hits = run["footplant"], run["planter"], run["hits"]
    frames = planted.shape[0]
    z = np.linspace(planted[:, 0, 2].min() - 0.6, planted[:, 0, 2].max() + 0.6, 300)
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.2), dpi=DPI, sharey=True)
    picks = np.linspace(0, frames - 1, 9).round().astype(int)
    seconds = (picks[1] - picks[0]) * run["frame_time"]
    colors = {"left": "C0", "right": "C3"}
    for ax, label in zip(axes, ("rigs.FootPlanter: raycast, two_bone, tween, every frame",
                                "footplant: the whole clip at once, offline"), strict=True):
        ax.fill_between(z, terrain.height(np.zeros_like(z), z), -1, color="0.88", zorder=0)
        ax.plot(z, terrain.height(np.zeros_like(z), z), color="0.45", lw=1)
        for f in picks:
            ax.plot(planted[f, 0, 2], planted[f, 0, 1], "ks", ms=3)
            for k, leg in enumerate(legs):
                chain = joints[f, k] if ax is axes[0] else planted[f, list(leg.chain)]
                ax.plot(chain[:, 2], chain[:, 1], "-o", color=colors[leg.side], lw=2, ms=2.5,
                        alpha=0.85)
                if ax is axes[0] and not np.isnan(hits[f, k, 0]):
                    ax.plot(hits[f, k, 2], hits[f, k, 1], "x", color=colors[leg.side], ms=7,
                            mew=1.5)
        for k, leg in enumerate(legs):
            trace = joints[:, k, 2] if ax is axes[0] else planted[:, leg.ankle]
            ax.plot(trace[:, 2], trace[:, 1], ":", color=colors[leg.side], lw=1)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("z, along the walk (m)")
        ax.set_aspect("equal")
        ax.set_ylim(-0.35, 1.25)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("y, up (m)")
    fig.legend(handles=[
        _handle(color="C0", ls="-", lw=2, marker="o", ms=3, label="left leg (hip, knee, ankle)"),
        _handle(color="C3", ls="-", lw=2, marker="o", ms=3, label="right leg"),
        _handle(color="k", marker="s", ms=4, label="pelvis"),
        _handle(color="0.3", ls=":", lw=1, label="ankle path, every frame"),
        _handle(color="0.3", marker="x", ms=7, mew=1.5,
                label="ray hit + ankle height (the loop's target)"),
        _handle(color="0.88", marker="s", ms=10, mec="0.45", label="ground (hills)")],
        loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"{title} (9 frames, {seconds:.2f} s apart)", fontsize=11)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    from limbik.viz.plots import save_figure

    save_figure(fig, path, dpi=DPI)
    plt.close(fig)


@scene("footplanter")
def foot_planter_scene(folder: Path | None) -> list[SceneResult]:
    """Seed 000's per-frame foot planting (raycast, solve, tween) beside ``footplant``."""
    run, t = timed(lambda: foot_planter_run("hills"))
    rows = []
    for k, leg in enumerate(run["legs"]):
        hits = run["hits"][:, k]
        ok = ~np.isnan(hits[:, 0])
        error = np.linalg.norm(run["planter"][ok, k, 2] - hits[ok], axis=-1)
        rows.append(SceneResult(f"foot planter {leg.side}", "rigs.FootPlanter (seed 000 loop)",
                                error <= 0.02, error, np.zeros(error.size, dtype=np.int64),
                                t if k == 0 else 0.0))
    if folder is None:
        return rows
    foot_planter_picture(run, folder / "foot_planter_hills.png",
                         "The built-in walk on hills: feet planted frame by frame in a game "
                         "loop, beside offline footplant")
    return _attach(rows, ["foot_planter_hills.png"])


@scene("rotations")
def rotations_scene(folder: Path | None) -> list[SceneResult]:
    """Hand rotations, look-at and full-body IK on the built-in walk: the hands hold a
    target circling in front of the chest while the feet stay planted, and the head
    follows it over the spine, chest and neck."""
    from limbik.body.full_body import full_body_ik
    from limbik.body.look_at import look_at
    from limbik.geometry.quaternion import quaternion_from_axis_angle, rotate_vectors
    from limbik.placement.walk import walk_cycle
    from limbik.skeleton.limbs import find_arms
    from limbik.solvers.aim import aim_chain
    from limbik.solvers.two_bone.solver import two_bone

    motion = walk_cycle(cycles=1.0, frame_rate=30.0)
    sk = motion.skeleton
    pos = motion.world_positions()
    rot = motion.world_rotations()
    frames = motion.num_frames
    phase = np.linspace(0.0, 2.0 * np.pi, frames)[:, None]
    chest = pos[:, sk.index("Chest")]
    orbit = np.concatenate([0.08 * np.cos(phase), 0.08 * np.sin(phase), 0.0 * phase], -1)
    goals = {"LeftWrist": chest + [0.1, -0.05, 0.3] + orbit,
             "RightWrist": chest + [-0.1, -0.05, 0.3] + orbit}
    rows = []
    neck = [sk.index(n) for n in ("Spine", "Chest", "Neck", "Head")]
    gaze_at = goals["LeftWrist"] + [-0.1, 0.0, 0.0]
    shares = [0.15, 0.2, 0.3, 1.0]
    look, t_look = timed(partial(aim_chain, pos[:, neck], rot[:, neck], gaze_at,
                            axis=(0.0, 0.0, 1.0), weights=shares))
    # the head turns first (look_at), then the hands reach and the feet stay planted
    looking = look_at(motion, neck, gaze_at, axis=(0.0, 0.0, 1.0), weights=shares)
    body, t_body = timed(partial(full_body_ik, looking, goals))
    after = body.world_positions()
    error = np.concatenate([np.linalg.norm(after[:, sk.index(w)] - g, axis=-1)
                            for w, g in goals.items()])
    feet = [sk.index(n) for n in ("LeftAnkle", "RightAnkle")]
    planted = np.concatenate([np.linalg.norm(after[:, j] - pos[:, j], axis=-1) for j in feet])
    zeros = np.zeros(2 * frames, dtype=np.int64)
    rows.append(SceneResult("walk, hands on a target", "full_body_ik hands", error <= 1e-6,
                            error, zeros, t_body))
    rows.append(SceneResult("walk, hands on a target", "full_body_ik planted feet",
                            planted <= 1e-6, planted, zeros, 0.0))
    # the left hand also turns to a palm-down rotation, solved on the clip's own pose
    arm = find_arms(sk)[0]
    palm = quaternion_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array(-0.5 * np.pi))
    hand, t = timed(partial(two_bone, pos[:, arm.shoulder], goals["LeftWrist"],
                            float(np.linalg.norm(pos[0, arm.elbow] - pos[0, arm.shoulder])),
                            float(np.linalg.norm(pos[0, arm.wrist] - pos[0, arm.elbow])),
                            pose=pos[:, list(arm.chain)], pose_rotations=rot[:, list(arm.chain)],
                            target_rotation=palm))
    rows.append(SceneResult.from_solution("walk, hands on a target",
                                          "two_bone target_rotation", hand, t))
    rows.append(SceneResult.from_solution("walk, hands on a target", "aim_chain head", look,
                                          t_look))
    if folder is None:
        return rows
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(12, 5.2), dpi=DPI, sharey=True,
                             layout="constrained")
    parents = sk.parents
    for ax, f in zip(axes, (0, frames // 3, 2 * frames // 3), strict=True):
        for p, color, lw in ((pos[f], "0.75", 2.0), (after[f], "tab:blue", 2.5)):
            for j in range(1, len(parents)):
                ax.plot([p[parents[j], 2], p[j, 2]], [p[parents[j], 1], p[j, 1]], color=color,
                        lw=lw, solid_capstyle="round")
        head = after[f, neck[-1]]
        gaze = rotate_vectors(body.world_rotations()[f, neck[-1]], np.array([0.0, 0.0, 1.0]))
        ax.plot([head[2], head[2] + 0.4 * gaze[2]], [head[1], head[1] + 0.4 * gaze[1]], "--",
                color="tab:green", lw=1.5)
        for g in goals.values():
            ax.plot(g[f, 2], g[f, 1], "*", color="tab:purple", ms=13)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_aspect("equal")
        ax.set_xlim(after[f, 0, 2] - 0.7, after[f, 0, 2] + 0.8)
        ax.set_ylim(-0.05, 1.75)
        ax.set_xlabel("z, walk direction (m)")
        ax.set_title(f"frame {f} ({f * motion.frame_time:.2f} s), side view", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("y, up (m)")
    fig.legend(handles=[
        _handle(color="0.75", ls="-", lw=2, label="built-in walk (input)"),
        _handle(color="tab:blue", ls="-", lw=2.5, label="full_body_ik result (feet planted)"),
        _handle(marker="*", color="tab:purple", ms=12, label="hand targets (both hands)"),
        _handle(color="tab:green", ls="--", lw=1.5,
                label="head's forward after look_at (at the hands)"),
        _handle(color="k", ls="-", lw=0.8, label="ground")],
        loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle("full_body_ik and look_at on the built-in walk: the hands hold a target "
                 "circling in front of the chest, the head follows it", fontsize=11)
    return _attach(rows, [_save(fig, folder, "rotations_full_body.png")])
