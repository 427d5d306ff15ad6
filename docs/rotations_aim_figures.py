"""Render the pictures of docs/rotations_and_weights.md, docs/aim.md and docs/full_body.md
into docs/img/ (matplotlib, Agg). The full-body picture needs the shared CMU clip.

    PYTHONPATH=src python docs/rotations_aim_figures.py [path/to/shared/data]
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import limbik
from limbik.geometry.quaternion import (
    quaternion_conjugate,
    quaternion_from_axis_angle,
    quaternion_multiply,
    rotate_vectors,
)

OUT = Path(__file__).resolve().parent / "img"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def triad(ax, origin, rotation, size=0.12):
    """The local x (red), y (green) and −z (blue, this library's forward) axes, in x/y."""
    for axis, color in (([1, 0, 0], "tab:red"), ([0, 1, 0], "tab:green"),
                        ([0, 0, -1], "tab:blue")):
        tip = origin + size * rotate_vectors(rotation, np.array(axis, dtype=float))
        ax.plot([origin[0], tip[0]], [origin[1], tip[1]], color=color, lw=2)


def two_bone_picture():
    """A limb with a target rotation, at weights 0, 0.5 and 1."""
    pose = np.array([[0.0, 1.0, 0.0], [0.25, 0.55, 0.0], [0.2, 0.1, 0.0]])
    rest = np.tile([0.0, 0.0, 0.0, 1.0], (3, 1))
    target = np.array([0.55, 0.55, 0.0])
    goal_rot = quaternion_from_axis_angle(np.array([0.0, 0.0, 1.0]), 1.2)
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.4))
    for ax, w in zip(axes, (0.0, 0.5, 1.0), strict=True):
        s = limbik.two_bone(pose[0], target, 0.5148, 0.4528, pose=pose, pose_rotations=rest,
                            target_rotation=goal_rot, weight=w)
        ax.plot(*pose[:, :2].T, "-", color="0.8", lw=5, solid_capstyle="round",
                label="input pose")
        ax.plot(*s.positions[:, :2].T, "-", color="tab:orange", lw=5, solid_capstyle="round",
                label="result")
        for p, q in zip(s.positions, s.rotations, strict=True):
            triad(ax, p, q)
        ax.plot(*target[:2], "*", color="tab:purple", ms=16, label="target")
        triad(ax, target, goal_rot, size=0.08)
        ax.set_title(f"weight = {w}")
        ax.set_aspect("equal")
        ax.set_xlim(-0.3, 0.9)
        ax.set_ylim(-0.05, 1.15)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle("two_bone with target_rotation: joint frames (x red, y green, forward blue)")
    fig.tight_layout()
    fig.savefig(OUT / "two_bone_rotation_weights.png", dpi=90)
    plt.close(fig)


def aim_picture():
    """A four-joint neck chain looking at a target, even weights and a 40° cone."""
    n = 4
    positions = np.stack([np.zeros(n), 1.2 + 0.12 * np.arange(n), np.zeros(n)], axis=-1)
    rotations = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    targets = [np.array([-0.9, 2.2, -0.0]), np.array([-0.6, 0.7, 0.0])]
    axis = np.array([1.0, 0.0, 0.0])  # the head looks along +x in this picture
    for ax, (title, kw) in zip(axes, (("even weights (default)", {}),
                                      ("cone limit 40°", {"limit": np.radians(40)})),
                               strict=True):
        for target, color in zip(targets, ("tab:purple", "tab:green"), strict=True):
            s = limbik.aim_chain(positions, rotations, target, axis=axis, **kw)
            ax.plot(*positions[:, :2].T, "o-", color="0.8", lw=3)
            ax.plot(*s.positions[:, :2].T, "o-", color=color, lw=3)
            head = s.positions[-1]
            look = rotate_vectors(s.rotations[-1], axis)
            ax.plot([head[0], head[0] + 0.5 * look[0]], [head[1], head[1] + 0.5 * look[1]],
                    "--", color=color)
            ax.plot(*target[:2], "*", color=color, ms=15)
            ax.text(target[0], target[1] + 0.06, f"error {np.degrees(s.error):.1f}°",
                    color=color, fontsize=9, ha="center")
        if "limit" in kw:
            head = positions[-1]
            for sign in (-1, 1):
                edge = rotate_vectors(quaternion_from_axis_angle(
                    np.array([0, 0, 1.0]), sign * np.radians(40)), axis)
                ax.plot([head[0], head[0] + 0.8 * edge[0]], [head[1], head[1] + 0.8 * edge[1]],
                        ":", color="k", lw=1)
        ax.set_title(title)
        ax.set_aspect("equal")
        ax.set_xlim(-1.2, 1.0)
        ax.set_ylim(0.5, 2.4)
        ax.grid(alpha=0.3)
    fig.suptitle("aim_chain: a neck (grey = input) turns so the head's +x looks at the star")
    fig.tight_layout()
    fig.savefig(OUT / "aim_chain.png", dpi=90)
    plt.close(fig)


def twist_picture():
    """Twist of the middle joint over 100 000 CCD solves, free and with TwistLimit(±0.3)."""
    rng = np.random.default_rng(7)
    count, n = 100_000, 5
    pts = np.cumsum(rng.normal(size=(count, n, 3)), axis=1)
    start = np.tile([0.0, 0.0, 0.0, 1.0], (count, n, 1))
    target = pts[:, 0] + rng.normal(size=(count, 3)) * 2.0
    limit = limbik.TwistLimit(-0.3, 0.3)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for label, constraints, color in (("no limit", [limbik.TwistLimit(-np.pi, np.pi)] * 4,
                                       "0.6"),
                                      ("TwistLimit(-0.3, 0.3)", [limit] * 4, "tab:blue")):
        s = limbik.ccd(pts, target, constraints=constraints, rotations=start,
                       max_iterations=20)
        local = quaternion_multiply(quaternion_conjugate(s.rotations[:, 1]), s.rotations[:, 2])
        twist, _ = limit.twist_and_swing(local, pts[:, 3] - pts[:, 2])
        ax.hist(twist, bins=180, range=(-np.pi, np.pi), color=color, alpha=0.8,
                label=f"{label}: reached {s.reached.mean():.0%}")
    ax.axvline(-0.3, color="k", ls=":")
    ax.axvline(0.3, color="k", ls=":")
    ax.set_xlabel("twist of joint 2 about its bone, from the input pose (rad)")
    ax.set_ylabel("solves")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("ccd on point chains with twist limits: 100 000 random solves")
    fig.tight_layout()
    fig.savefig(OUT / "twist_limits.png", dpi=90)
    plt.close(fig)


def full_body_picture(data: Path):
    """CMU clip: hands reach a target moving in front of the chest, feet stay planted."""
    motion = limbik.read_bvh(data / "bvh" / "cmu_131_01_start_walk_stop_meters.bvh")
    sk = motion.skeleton
    pos = motion.world_positions()
    time = np.arange(motion.num_frames)[:, None] / 120.0
    ahead = rotate_vectors(motion.world_rotations()[:, 0], [0, 0, 1.0]) * [1, 0, 1]
    ahead /= np.linalg.norm(ahead, axis=-1, keepdims=True)
    left = np.cross([0, 1.0, 0], ahead)
    chest = pos[:, sk.index("Chest2")]
    orbit = 0.08 * np.concatenate([np.cos(3 * time), np.sin(3 * time)], -1)
    goal = {"LeftWrist": chest + 0.35 * ahead + (0.1 + orbit[:, :1]) * left
            + orbit[:, 1:] * [0, 1.0, 0],
            "RightWrist": chest + 0.35 * ahead + (-0.1 + orbit[:, :1]) * left
            + orbit[:, 1:] * [0, 1.0, 0]}
    out = limbik.full_body_ik(motion, goal)
    after = out.world_positions()
    par = sk.parents
    frames = [150, 400, 650, 900]
    fig, axes = plt.subplots(2, len(frames), figsize=(14, 8.5))
    for col, f in enumerate(frames):
        # side view: along the body's left axis, ahead to the right
        for row, (u, name) in enumerate(((ahead[f], "side"), (left[f], "front"))):
            ax = axes[row, col]
            for p, color, lw in ((pos[f], "0.75", 2), (after[f], "tab:blue", 2.5)):
                x = p @ u
                for j in range(1, len(par)):
                    ax.plot([x[par[j]], x[j]], [p[par[j], 1], p[j, 1]], color=color, lw=lw)
            for legs, color in (((2, 3, 4), "tab:red"), ((7, 8, 9), "tab:orange")):
                p = after[f]
                ax.plot(p[list(legs)] @ u, p[list(legs), 1], "o-", color=color, lw=3, ms=4)
                # the clip's legs on top, thin and dashed, to compare
                ax.plot(pos[f][list(legs)] @ u, pos[f][list(legs), 1], "--", color="k", lw=1)
            for g in goal.values():
                ax.plot(g[f] @ u, g[f, 1], "*", color="tab:purple", ms=13)
            ax.axhline(min(pos[:, :, 1].min(), 0.0), color="k", lw=0.8)
            ax.set_aspect("equal")
            ax.set_title(f"frame {f}, {name} view")
            ax.grid(alpha=0.3)
    err = max(np.max(np.linalg.norm(after[:, sk.index(w)] - g, axis=-1)) for w, g in goal.items())
    feet = max(np.max(np.linalg.norm(after[:, j] - pos[:, j], axis=-1)) for j in (4, 9))
    fig.suptitle(f"full_body_ik on the CMU walk (grey: clip, blue: result, legs red/orange, "
                 f"clip legs dashed):\nhands {err:.1e} m from targets, ankles {feet:.1e} m "
                 "from the clip's")
    fig.tight_layout()
    fig.savefig(OUT / "full_body_cmu.png", dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    two_bone_picture()
    aim_picture()
    twist_picture()
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    if (data / "bvh").is_dir():
        full_body_picture(data)
    else:
        print(f"no shared data at {data}: full_body_cmu.png not drawn")
