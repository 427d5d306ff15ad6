"""Render the pictures of docs/fabrik.md into docs/img/ (run: python docs/fabrik_images.py)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import limbik

OUT = Path(__file__).parent / "img"


def chain_picture() -> None:
    start = np.zeros((10, 3))
    start[:, 0] = np.arange(10)
    start[:, 1] = 0.15 * np.sin(np.arange(10))
    target = np.array([3.0, 5.0, 0.0])
    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=100)
    ax.plot(start[:, 0], start[:, 1], "o-", color="0.6", label="start pose")
    colours = plt.cm.viridis(np.linspace(0.2, 0.8, 3))
    for k, c in zip((1, 2, 3), colours, strict=True):
        s = limbik.fabrik(start, target, max_iterations=k, tolerance=0.0)
        ax.plot(s.positions[:, 0], s.positions[:, 1], "o-", color=c, alpha=0.45, ms=3,
                label=f"after {k} iteration{'s' if k > 1 else ''} (error {float(s.error):.2g})")
    s = limbik.fabrik(start, target)
    ax.plot(s.positions[:, 0], s.positions[:, 1], "o-", color="tab:blue", lw=2.5,
            label=f"solved: {int(s.iterations)} iterations, error {float(s.error):.1e}")
    ax.plot(*target[:2], "x", color="tab:red", ms=12, mew=3, label="target")
    far = np.array([-8.0, -9.0, 0.0])
    u = limbik.fabrik(start, far)
    ax.plot(u.positions[:, 0], u.positions[:, 1], "o--", color="tab:orange", ms=3,
            label=f"unreachable target: straight, reached={bool(u.reached)}")
    ax.plot(*far[:2], "x", color="tab:orange", ms=10, mew=2)
    ax.plot(0, 0, "ks", ms=9, label="fixed root")
    ax.set_aspect("equal")
    ax.set_title("FABRIK on a 10-joint chain of unit bones")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_xlim(-9, 12)
    fig.tight_layout()
    fig.savefig(OUT / "fabrik_chain.png", dpi=140)
    plt.close(fig)


def tree_picture() -> None:
    # root 0 -> 1 -> 2 (sub-base) -> {3 -> 4 (sub-base) -> {5 -> 6, 7 -> 8}, 9 -> 10}
    parents = [-1, 0, 1, 2, 3, 4, 5, 4, 7, 2, 9]
    pose = np.array([[0, 0], [0, 1], [0, 2], [-0.7, 2.7], [-1.4, 3.4], [-1.6, 4.4],
                     [-1.8, 5.4], [-0.6, 4.1], [0.1, 4.8], [0.8, 2.6], [1.6, 3.2]], float)
    pose = np.c_[pose, np.zeros(len(pose))]
    targets = {6: np.array([-2.6, 3.2, 0.0]), 8: np.array([-0.9, 4.6, 0.0]),
               10: np.array([2.0, 1.0, 0.0])}
    tree = limbik.FabrikTree(parents, pose)
    s = tree.solve(targets)
    fig, ax = plt.subplots(figsize=(6.0, 5.0), dpi=100)
    for j in range(1, len(parents)):
        q = parents[j]
        ax.plot(pose[[q, j], 0], pose[[q, j], 1], "o-", color="0.7", ms=4,
                label="start pose" if j == 1 else None)
        ax.plot(s.positions[[q, j], 0], s.positions[[q, j], 1], "o-", color="tab:blue", lw=2.5,
                ms=5, label=f"solved ({int(s.iterations)} iterations)" if j == 1 else None)
    for k, (j, t) in enumerate(targets.items()):
        ax.plot(*t[:2], "x", color="tab:red", ms=12, mew=3, label="targets" if k == 0 else None)
        ax.annotate(f"effector {j}", t[:2], textcoords="offset points", xytext=(6, -12),
                    fontsize=8)
    for j in (2, 4):
        ax.plot(*s.positions[j, :2], "D", color="tab:green", ms=9,
                label="sub-bases" if j == 2 else None)
    ax.plot(0, 0, "ks", ms=9, label="fixed root")
    ax.set_aspect("equal")
    ax.set_title(f"FabrikTree: three effectors, a sub-base under a sub-base\n"
                 f"max effector error {float(s.error):.1e}")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(OUT / "fabrik_tree.png", dpi=140)
    plt.close(fig)


def carried_frames(p: np.ndarray):
    """Bone frames (look, up, right) carried with minimal twist from the identity."""
    d = np.diff(p, axis=0)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    look, up = np.array([0.0, 0.0, -1.0]), np.array([0.0, 1.0, 0.0])
    frames = []
    for i in range(len(d)):
        q = limbik.geometry.quaternion_from_two_vectors(look, d[i])
        up = limbik.geometry.rotate_vectors(q, up)
        up = up - up @ d[i] * d[i]
        up /= np.linalg.norm(up)
        look = d[i]
        frames.append((look, up, np.cross(look, up)))
    return frames


def constrained_picture() -> None:
    cone = limbik.EllipticalCone(math.radians(15), math.radians(40), math.radians(30),
                                 math.radians(10))
    n = 7
    start = np.zeros((n, 3))
    start[:, 2] = -np.arange(n)
    target = np.array([0.5, 3.0, -2.0])
    free = limbik.fabrik(start, target)
    s = limbik.fabrik(start, target, constraints=[cone] * (n - 1))
    fig = plt.figure(figsize=(6.4, 5.6), dpi=100)
    ax = fig.add_subplot(projection="3d")
    p = s.positions
    ax.plot(free.positions[:, 0], free.positions[:, 2], free.positions[:, 1], "o--",
            color="0.6", ms=3, label=f"unconstrained (reached={bool(free.reached)})")
    ax.plot(p[:, 0], p[:, 2], p[:, 1], "o-", color="tab:blue", lw=2.5,
            label=f"constrained (reached={bool(s.reached)}, error {float(s.error):.2f})")
    ax.scatter([target[0]], [target[2]], [target[1]], marker="x", s=120, color="tab:red",
               label="target")
    frames = carried_frames(p)
    t_left, t_right, t_up, t_down = np.tan([cone.left, cone.right, cone.up, cone.down])
    ang = np.linspace(0, 2 * np.pi, 120)
    x = np.where(np.cos(ang) >= 0, t_right, t_left) * np.cos(ang)
    y = np.where(np.sin(ang) >= 0, t_up, t_down) * np.sin(ang)
    for i in range(1, n - 1):
        look, up, right = frames[i - 1]
        dirs = look + x[:, None] * right + y[:, None] * up
        dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
        rim = p[i] + 0.6 * dirs
        ax.plot(rim[:, 0], rim[:, 2], rim[:, 1], color="tab:orange", lw=1)
        for k in range(0, 120, 15):
            ax.plot([p[i, 0], rim[k, 0]], [p[i, 2], rim[k, 2]], [p[i, 1], rim[k, 1]],
                    color="tab:orange", lw=0.6, alpha=0.7)
        tip = p[i] + 0.6 * up
        ax.plot([p[i, 0], tip[0]], [p[i, 2], tip[2]], [p[i, 1], tip[1]], color="tab:green",
                lw=1, label="carried 'up' axis" if i == 1 else None)
    ax.plot([], [], color="tab:orange", label="allowed cone of the next bone")
    from limbik.viz.plots import style_3d

    style_3d(ax, units="", ticks=5)
    bend = np.degrees(np.arccos(np.clip(np.sum(
        np.diff(p, axis=0)[1:] * np.diff(p, axis=0)[:-1], axis=-1), -1, 1)))
    ax.set_title("EllipticalCone(left 15°, right 40°, up 30°, down 10°) on every joint\n"
                 f"bends: {', '.join(f'{b:.0f}°' for b in bend)}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.view_init(elev=18, azim=-25)
    lim = np.array([p.min(0), p.max(0)])
    c = lim.mean(0)
    r = (lim[1] - lim[0]).max() / 2 + 0.5
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[2] - r, c[2] + r)
    ax.set_zlim(c[1] - r, c[1] + r)
    fig.tight_layout()
    fig.savefig(OUT / "fabrik_constrained.png", dpi=140)
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    chain_picture()
    tree_picture()
    constrained_picture()
