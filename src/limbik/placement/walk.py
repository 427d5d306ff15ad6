"""A procedural walk on flat ground: limbik's built-in clip, generated, never shipped.

The character faces +Z with its left side toward +X (the CMU convention), in metres,
Y up, standing on the floor y = 0. Feet follow a stepping pattern (planted during
stance, an arc during swing); the knees come from :func:`limbik.two_bone` with a
forward pole, and :func:`limbik.apply_ik` turns the joint positions into local
rotations.
"""

from __future__ import annotations

import numpy as np

from limbik._runtime.validation import as_float, as_int
from limbik.geometry.quaternion import quaternion_from_axis_angle, rotate_vectors
from limbik.skeleton.apply import apply_ik
from limbik.skeleton.motion import Motion
from limbik.skeleton.skeleton import Skeleton
from limbik.solvers.two_bone.solver import two_bone

__all__ = ["walk_cycle", "walk_skeleton"]

THIGH = 0.42
SHIN = 0.41
ANKLE_HEIGHT = 0.08
FOOT = np.array([0.0, -0.06, 0.13])  # ankle → toe, rest pose
HIP_WIDTH = 0.09

_JOINTS: list[tuple[str, int, tuple[float, float, float]]] = [
    ("Hips", -1, (0.0, 0.0, 0.0)),
    ("LeftHip", 0, (HIP_WIDTH, -0.06, 0.0)),
    ("LeftKnee", 1, (0.0, -THIGH, 0.0)),
    ("LeftAnkle", 2, (0.0, -SHIN, 0.0)),
    ("LeftToe", 3, (0.0, -0.06, 0.13)),
    ("RightHip", 0, (-HIP_WIDTH, -0.06, 0.0)),
    ("RightKnee", 5, (0.0, -THIGH, 0.0)),
    ("RightAnkle", 6, (0.0, -SHIN, 0.0)),
    ("RightToe", 7, (0.0, -0.06, 0.13)),
    ("Spine", 0, (0.0, 0.10, 0.0)),
    ("Chest", 9, (0.0, 0.22, 0.0)),
    ("Neck", 10, (0.0, 0.22, 0.0)),
    ("Head", 11, (0.0, 0.10, 0.0)),
    ("LeftShoulder", 10, (0.18, 0.17, 0.0)),
    ("LeftElbow", 13, (0.0, -0.28, 0.0)),
    ("LeftWrist", 14, (0.0, -0.25, 0.0)),
    ("RightShoulder", 10, (-0.18, 0.17, 0.0)),
    ("RightElbow", 16, (0.0, -0.28, 0.0)),
    ("RightWrist", 17, (0.0, -0.25, 0.0)),
]


def walk_skeleton() -> Skeleton:
    """The built-in biped: 19 joints, CMU-style names, metres, facing +Z."""
    names = [j[0] for j in _JOINTS]
    parents = [j[1] for j in _JOINTS]
    offsets = np.array([j[2] for j in _JOINTS])
    end_sites = {4: (0.0, 0.0, 0.06), 8: (0.0, 0.0, 0.06), 12: (0.0, 0.16, 0.0),
                 15: (0.0, -0.08, 0.0), 18: (0.0, -0.08, 0.0)}
    return Skeleton(names, parents, offsets, end_sites=end_sites)


def _foot_path(phase: np.ndarray, cycle: np.ndarray, stride: float, duty: float,
               clearance: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward position, lift and pitch of one foot from its gait phase in [0, 1)."""
    swing = phase >= duty
    s = np.where(swing, (phase - duty) / (1.0 - duty), 0.0)
    ease = 0.5 - 0.5 * np.cos(np.pi * s)
    # planted at stride * cycle during stance; moves one stride during swing
    forward = stride * (cycle + ease)
    lift = clearance * np.sin(np.pi * s)
    pitch = np.where(swing, 0.35 * np.sin(2 * np.pi * s), 0.0)
    return forward, lift, pitch


def walk_cycle(*, cycles: float = 3.0, frame_rate: float = 60.0, speed: float = 1.0,
               cadence: float = 1.0, duty: float = 0.6, clearance: float = 0.07) -> Motion:
    """Generate a straight walk along +Z on the floor y = 0.

    Parameters
    ----------
    cycles : number of gait cycles (two steps each).
    frame_rate : frames per second.
    speed : forward speed, m/s.
    cadence : gait cycles per second.
    duty : fraction of a cycle each foot is planted (> 0.5 gives double support).
    clearance : swing foot lift, m.

    Returns
    -------
    Motion
        Contacts are exact: the left foot is planted while ``(t·cadence) mod 1 < duty``,
        the right foot half a cycle later.
    """
    cycles = as_float(cycles, "cycles", minimum=0.0, exclusive=True)
    rate = as_float(frame_rate, "frame_rate", minimum=0.0, exclusive=True)
    speed = as_float(speed, "speed", minimum=0.0)
    cadence = as_float(cadence, "cadence", minimum=0.0, exclusive=True)
    duty = as_float(duty, "duty", minimum=0.0, exclusive=True)
    frames = as_int(max(round(cycles / cadence * rate), 2), "frames", minimum=2)
    skeleton = walk_skeleton()
    t = np.arange(frames) / rate
    stride = speed / cadence
    phase_time = t * cadence
    reach = 0.97 * (THIGH + SHIN)
    feet = {}
    for side, shift, x in (("Left", 0.0, 0.1), ("Right", 0.5, -0.1)):
        shifted = phase_time + shift
        phase = np.mod(shifted, 1.0)
        forward, lift, pitch = _foot_path(phase, np.floor(shifted), stride, duty, clearance)
        # the planted foot sits under the hip at mid-stance
        ankle = np.stack([np.full(frames, x), ANKLE_HEIGHT + lift,
                          forward + speed * (0.5 * duty - shift) / cadence], axis=-1)
        feet[side] = (ankle, pitch, shifted)

    root = np.zeros((frames, 3))
    root[:, 2] = speed * t
    root[:, 0] = 0.015 * np.sin(2 * np.pi * phase_time)  # sway over the stance foot
    # compass gait: the pelvis rides just below full reach of both feet
    height = np.full(frames, np.inf)
    for side, (ankle, _, _) in feet.items():
        hip = root + skeleton.offsets[skeleton.index(f"{side}Hip")]
        horizontal = np.hypot(hip[:, 0] - ankle[:, 0], hip[:, 2] - ankle[:, 2])
        over = np.sqrt(np.maximum(reach**2 - horizontal**2, 0.0)) + ankle[:, 1] + 0.06
        height = np.minimum(height, over)
    kernel = np.hanning(max(int(0.12 * rate) | 1, 3))
    padded = np.pad(height, len(kernel), mode="edge")
    root[:, 1] = np.convolve(padded, kernel / kernel.sum(), mode="same")[len(kernel):-len(kernel)]
    root[:, 1] = np.minimum(root[:, 1], height)

    rotations = np.zeros((frames, skeleton.num_joints, 4))
    rotations[..., 3] = 1.0
    targets: dict[str, np.ndarray] = {}
    for side, (ankle, pitch, shifted) in feet.items():
        toe = ankle + rotate_vectors(
            quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), pitch), FOOT)
        hip = root + skeleton.offsets[skeleton.index(f"{side}Hip")]
        pole = hip + np.array([0.0, -0.5 * THIGH, 1.0])
        legs = two_bone(hip, ankle, THIGH, SHIN, pole=pole)
        targets[f"{side}Knee"] = legs.positions[:, 1]
        targets[f"{side}Ankle"] = legs.positions[:, 2]
        targets[f"{side}Toe"] = toe + (legs.positions[:, 2] - ankle)
        # arms swing against the same-side leg, elbows slightly bent
        swing = -0.3 * np.sin(2 * np.pi * (shifted - 0.5 * duty))
        arm = skeleton.index(f"{side}Shoulder")
        rotations[:, arm] = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]), swing)
        rotations[:, arm + 1] = quaternion_from_axis_angle(np.array([1.0, 0.0, 0.0]),
                                                           np.full(frames, -0.35))
    motion = Motion(skeleton, root, rotations, 1.0 / rate)
    return apply_ik(motion, positions=targets)
