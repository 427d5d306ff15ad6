"""Clip utilities: resample a :class:`Motion` to a new frame rate, and trim it."""

from __future__ import annotations

import dataclasses

import numpy as np

from limbik._runtime.validation import FloatArray, as_float, as_int
from limbik.errors import InvalidInputError
from limbik.geometry.quaternion import quaternion_slerp
from limbik.skeleton.motion import Motion, check_motion

__all__ = ["MAX_RESAMPLED_JOINT_FRAMES", "resample", "trim"]

#: ``resample`` makes at most this many joint-frames (frames × joints; about 2 GB of
#: rotations): a rate far above the clip's must not exhaust the memory
MAX_RESAMPLED_JOINT_FRAMES = 1 << 26


def _interpolate(values: FloatArray, index: FloatArray, alpha: FloatArray) -> FloatArray:
    """Linear interpolation of ``values`` ``(F, ...)`` between frames ``index`` and ``index+1``."""
    a = values[index]
    b = values[np.minimum(index + 1, values.shape[0] - 1)]
    w = alpha.reshape(alpha.shape + (1,) * (values.ndim - 1))
    return a + w * (b - a)


def resample(motion: Motion, frame_rate: float) -> Motion:
    """``motion`` sampled at ``frame_rate`` frames per second (> 0).

    New frames sit at ``t = k / frame_rate`` for every ``t`` within the clip's
    duration, so the first frame is kept and the last new frame is at or before
    the last old one. Rotations are slerped (shorter arc), positions lerped.
    A clip of one frame stays one frame. Returns a new :class:`Motion` with
    ``frame_time = 1 / frame_rate``, of at most ``MAX_RESAMPLED_JOINT_FRAMES`` frames ×
    joints (a higher rate raises).
    """
    check_motion(motion)
    rate = as_float(frame_rate, "frame_rate", minimum=0.0, exclusive=True)
    F = motion.num_frames
    if F == 0:
        return dataclasses.replace(motion, frame_time=1.0 / rate)
    # count in units of old frames; the tiny slack keeps an exact end frame
    step = motion.frame_rate / rate
    frames = np.floor((F - 1) / step + 1e-9) + 1
    if not frames * max(motion.num_joints, 1) <= MAX_RESAMPLED_JOINT_FRAMES:
        raise InvalidInputError(
            f"frame_rate must give at most {MAX_RESAMPLED_JOINT_FRAMES} joint-frames "
            f"({motion.num_joints} joints), got {frame_rate!r} fps: {frames:.4g} frames from "
            f"{F} at {motion.frame_rate:.6g} fps", argument="frame_rate")
    count = int(frames)
    t = np.minimum(np.arange(count) * step, F - 1)
    index = np.minimum(np.floor(t).astype(np.int64), F - 1)
    alpha = t - index
    nxt = np.minimum(index + 1, F - 1)
    rotations = quaternion_slerp(motion.rotations[index], motion.rotations[nxt],
                                 np.broadcast_to(alpha[:, None], (count, motion.num_joints)))
    root = _interpolate(motion.root_positions, index, alpha)
    translations = {j: _interpolate(v, index, alpha) for j, v in motion.joint_translations.items()}
    return dataclasses.replace(motion, rotations=rotations, root_positions=root,
                               frame_time=1.0 / rate, joint_translations=translations)


def trim(motion: Motion, start: int = 0, stop: int | None = None) -> Motion:
    """Frames ``start`` to ``stop`` (exclusive) of ``motion``; negative values count
    from the end, as in Python slicing. The result must hold at least one frame."""
    check_motion(motion)
    F = motion.num_frames
    s = as_int(start, "start")
    e = F if stop is None else as_int(stop, "stop")
    lo, hi, _ = slice(s, e).indices(F)
    if hi <= lo:
        raise InvalidInputError(
            f"start and stop must select at least one of {F} frames, got start={start}, "
            f"stop={stop}", argument="stop")
    return dataclasses.replace(
        motion, rotations=motion.rotations[lo:hi], root_positions=motion.root_positions[lo:hi],
        joint_translations={j: v[lo:hi] for j, v in motion.joint_translations.items()})
