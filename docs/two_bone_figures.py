"""Render the pictures of docs/two_bone.md into docs/img/ (matplotlib, Agg).

    PYTHONPATH=src python docs/two_bone_figures.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import limbik
from limbik import Frame

OUT = Path(__file__).resolve().parent / "img"


def draw_limb(ax, positions, color, label=None, offset=0.0):
    """Bones as thick lines (2D: x, y); the lower bone nudged by ``offset`` to show folds."""
    root, mid, end = positions[:, :2]
    normal = np.array([-(end - mid)[1], (end - mid)[0]])
    normal = normal / max(np.linalg.norm(normal), 1e-12) * offset
    ax.plot(*np.c_[root, mid], "-", color=color, lw=5, solid_capstyle="round", label=label)
    ax.plot(*np.c_[mid + normal, end + normal], "-", color=color, lw=3, alpha=0.7,
            solid_capstyle="round")
    ax.plot(*root, "o", color="k", ms=6, zorder=5)
    ax.plot(*mid, "o", color="white", mec="k", ms=6, zorder=5)
    ax.plot(*end, "o", color=color, mec="k", ms=5, zorder=5)


def policies() -> None:
    l1, l2 = 1.0, 0.7
    pole = np.array([0.5, 2.0, 0.0])
    cases = [("too far: target at 1.95", np.array([1.95, 0.0, 0.0])),
             ("too close: target at 0.15", np.array([0.15, 0.0, 0.0]))]
    fig, axes = plt.subplots(2, 3, figsize=(11, 5.0), sharex=True, sharey=True)
    for row, (title, target) in enumerate(cases):
        for col, policy in enumerate(["extend", "push_root", "stretch"]):
            ax = axes[row, col]
            sol = limbik.two_bone(np.zeros(3), target, l1, l2, pole=pole, unreachable=policy,
                                  max_stretch=1.2)
            ax.axhline(0, color="0.85", lw=0.8, zorder=0)
            ax.plot(0, 0, "s", mfc="none", mec="0.4", ms=11, label="input root")
            ax.plot(*target[:2], "x", color="crimson", ms=11, mew=2.5, label="target")
            draw_limb(ax, sol.positions, "C0", offset=-0.09 if row == 1 else 0.0)
            a, b = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
            ax.set_title(f'"{policy}"', fontsize=11)
            moved = ("" if sol.root_offset is None
                     else f", root moved {np.linalg.norm(sol.root_offset):.2f}")
            ax.text(0.02, 0.04, f"bones {a:.2f}, {b:.2f}\nreached={bool(sol.reached)}, "
                    f"error={float(sol.error):.2f}{moved}", transform=ax.transAxes,
                    fontsize=8.5, va="bottom")
            ax.set_aspect("equal")
            ax.set_xlim(-0.9, 2.3)
            ax.set_ylim(-0.45, 0.55)
            if col == 0:
                ax.set_ylabel(title.replace(": ", ":\n"), fontsize=9.5)
    from matplotlib.lines import Line2D

    marks = [Line2D([], [], ls="none", marker="s", mfc="none", mec="0.4", ms=10,
                    label="input root"),
             Line2D([], [], ls="none", marker="x", color="crimson", ms=10, mew=2.5,
                    label="target"),
             Line2D([], [], ls="none", marker="o", color="k", ms=6, label="returned root"),
             Line2D([], [], ls="none", marker="o", color="white", mec="k", ms=6,
                    label="mid joint"),
             Line2D([], [], ls="none", marker="o", color="C0", mec="k", ms=5, label="end"),
             Line2D([], [], color="C0", lw=5, label="upper bone"),
             Line2D([], [], color="C0", lw=3, alpha=0.7, label="lower bone")]
    fig.legend(handles=marks, loc="lower center", ncol=7, fontsize=9, frameon=False)
    for ax in axes[1]:
        ax.set_xlabel("x (length units)")
    fig.suptitle("two_bone out of reach (upper 1.0, lower 0.7, pole above; stretch "
                 "max_stretch=1.2; folded bones drawn slightly apart)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(OUT / "two_bone_policies.png", dpi=110)
    plt.close(fig)


def reference() -> None:
    root = np.zeros(3)
    target = np.array([0.3, -1.5, 0.2])
    knee = np.array([0.35, -0.7, -0.45])
    l1, l2 = 0.9, 0.85
    sol = limbik.two_bone(root, target, l1, l2, reference=knee)
    mid = sol.positions[1]
    axis = target / np.linalg.norm(target)
    centre = root + np.dot(mid - root, axis) * axis
    r1 = mid - centre
    r2 = np.cross(axis, r1)
    th = np.linspace(0, 2 * np.pi, 200)
    circle = centre + np.cos(th)[:, None] * r1 + np.sin(th)[:, None] * r2
    fig = plt.figure(figsize=(6.4, 5.6))
    ax = fig.add_subplot(projection="3d")
    ax.plot(*circle.T, color="0.6", lw=1, label="bend circle (all rotations about the axis)")
    for angle in np.linspace(0, 2 * np.pi, 8, endpoint=False)[1:]:
        other = centre + np.cos(angle) * r1 + np.sin(angle) * r2
        ax.plot(*np.c_[root, other, target], color="0.75", lw=1.2)
    ax.plot(*np.c_[root, target], "--", color="crimson", lw=1, label="root→target axis")
    ax.plot(*np.c_[root, mid, target], color="C0", lw=4, label="solution")
    ax.scatter(*knee, color="C2", s=50, label="reference (animated knee)")
    ax.plot(*np.c_[knee, mid], ":", color="C2", lw=1.5)
    ax.plot(*np.c_[centre, mid], color="C1", lw=1.5,
            label="centre → mid: along the reference's part perpendicular to the axis")
    ax.scatter(*root, color="k", s=30)
    ax.scatter(*target, color="crimson", marker="x", s=60)
    ax.view_init(elev=18, azim=-58)
    ax.set_box_aspect((1, 1.6, 1))
    ax.set_xlim(-0.6, 0.9)
    ax.set_ylim(-1.6, 0.1)
    ax.set_zlim(-0.8, 0.6)
    ax.set_xticks([-0.5, 0.0, 0.5])
    ax.set_yticks([-1.5, -1.0, -0.5, 0.0])
    ax.set_zticks([-0.5, 0.0, 0.5])
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.zaxis.set_rotate_label(False)
    ax.set_zlabel("z", rotation=0)
    ax.legend(loc="upper left", fontsize=7.5)
    ax.set_title("reference mode: the mid joint is the point of the bend circle\n"
                 "closest to the reference (the closed-form θ)", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "two_bone_reference.png", dpi=150)
    plt.close(fig)


def default_bend() -> None:
    """Side view of the default bend, drawn with forward (-Z) to the right and +Y up."""
    fig, ax = plt.subplots(figsize=(6.2, 6.0))
    angles = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    for i, a in enumerate(angles):
        # directions in the Y-Z plane; plotted with forward (-Z) to the right, Y up
        target = 1.5 * np.array([0.0, np.sin(a), -np.cos(a)])
        sol = limbik.two_bone(np.zeros(3), target, 1.0, 1.0)
        p = sol.positions
        xy = np.c_[-p[:, 2], p[:, 1]]
        color = plt.cm.viridis(i / len(angles))
        ax.plot(*xy.T, "-", color=color, lw=2.5)
        ax.plot(*xy[1], "o", mfc="white", mec=color, ms=5)
        ax.plot(*xy[2], "x", color=color, ms=6)
    ax.plot(0, 0, "ko")
    ax.annotate("ahead: mid joint down", (1.2, -0.35), fontsize=8.5)
    ax.annotate("straight behind (+Z), the one\nsingular direction: mid joint up",
                (-2.05, -2.0), fontsize=8.5)
    ax.set_aspect("equal")
    ax.set_xlim(-2.1, 2.1)
    ax.set_ylim(-2.1, 2.1)
    ax.set_xlabel("forward = −Z")
    ax.set_ylabel("up = +Y")
    ax.set_title("default bend (no pole/reference/root_frame): the rolled plane\n"
                 "targets 1.5 away around the root in the Y–Z plane; white dot = mid joint",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "two_bone_default.png", dpi=150)
    plt.close(fig)


def _c1_arm(torso, shoulder_c0, c1x, elbow, l1, l2):
    """Shoulder joint, arm-line start, elbow and hand of an arm whose C1 has X offset c1x."""
    from limbik import roblox

    joint = torso @ shoulder_c0
    upper = roblox.motor6d_part1(torso, shoulder_c0, Frame.from_translation([c1x, 0.0, 0.0]))
    elbow_cf = upper.translated([0.0, -l1, 0.0]) @ Frame.from_euler_xyz(elbow, 0.0, 0.0)
    return np.array([joint.position, upper.position, elbow_cf.position,
                     elbow_cf.apply([0.0, -l2, 0.0])])


def c1_offset() -> None:
    from limbik import roblox

    torso = Frame.identity()
    origin = Frame.from_translation([0.0, 0.0, 0.0])
    c1x, l1, l2 = -0.35, 1.0, 0.9
    target = np.array([0.9, -0.5, -1.2])
    plane, s, e = roblox.solve_ik(origin, target, l1, l2)
    l3 = float(np.linalg.norm(target))
    cases = [("no fix: hand misses by |C1.X|", roblox.shoulder_motor_c0(torso, plane, s), e)]
    fixed = roblox.compensate_c1_plane(plane, c1x, l1, l2, reach=l3)
    cases.append(("compensate_c1_plane (reach=l3)", roblox.shoulder_motor_c0(torso, fixed, s), e))
    start = roblox.compensate_c1_origin(origin, c1x)
    plane_o, s_o, e_o = roblox.solve_ik(start, target, l1, l2)
    cases.append(("compensate_c1_origin", roblox.shoulder_motor_c0(
        torso, plane_o.translated([c1x, 0.0, 0.0]), s_o), e_o))
    fig, axes = plt.subplots(1, 3, figsize=(11, 4.0), sharex=True, sharey=True)
    for ax, (title, c0, elbow) in zip(axes, cases, strict=True):
        pts = _c1_arm(torso, c0, c1x, elbow, l1, l2)
        miss = np.linalg.norm(pts[-1] - target)
        ax.plot(pts[:2, 0], pts[:2, 2], ":", color="0.4", lw=2, label="C1 offset")
        ax.plot(pts[1:, 0], pts[1:, 2], "-o", color="C0", lw=4, ms=5, label="arm (top view)")
        ax.plot(0, 0, "ks", ms=8, label="rest shoulder joint")
        ax.plot(pts[0, 0], pts[0, 2], "o", mfc="none", mec="k", ms=10, label="solved joint")
        ax.plot(target[0], target[2], "x", color="crimson", ms=12, mew=3, label="target")
        ax.set_title(f"{title}\nhand error {miss:.2e}", fontsize=10)
        ax.set_aspect("equal")
        ax.set_xlabel("x (right)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("z (−Z is forward)")
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Shoulder C1.X = −0.35: the seed's solve aims the joint, the arm hangs beside it",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "two_bone_c1_offset.png", dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    policies()
    reference()
    default_bend()
    c1_offset()
    for path in sorted(OUT.glob("two_bone_*.png")):
        print(path, path.stat().st_size // 1024, "KB")
