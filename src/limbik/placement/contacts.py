"""Foot contacts: detection from height and speed with hysteresis, or from frame ranges."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numba import njit

from limbik._runtime.validation import FloatArray, as_float, as_float_array, as_int
from limbik.errors import InvalidInputError

__all__ = [
    "contact_spans",
    "contacts_from_ranges",
    "detect_contacts",
    "feet_contacts",
    "horizontal_speed",
    "joint_contacts",
    "local_minimum",
    "low_pass",
    "noise_smoothing",
    "standing_noise",
    "universal_band",
    "white_noise",
]

#: Seconds either side over which a joint's local floor (its running minimum height) is
#: taken: long enough to span a step, short enough that stances hovering at different
#: heights from step to step are each found.
LOCAL_FLOOR_TIME = 0.4
#: Leg lengths above its local floor up to which a joint may enter a contact; it leaves
#: above twice this.
CONTACT_HEIGHT = 0.03
#: How many times ``CONTACT_HEIGHT`` above its local floor a joint leaves its contact.
EXIT_RATIO = 2.0
#: Seconds: the shortest contact and the shortest gap between two contacts.
MIN_CONTACT_TIME = 0.06
#: Seconds over which a joint's horizontal speed is averaged before it is compared.
SPEED_WINDOW = 0.05
#: Seconds: the standard deviation of the Gaussian low-pass that measures how much a
#: standing joint jitters, and the widest low-pass of a noisy clip's foot heights before
#: its contacts are found.
NOISE_TIME = 0.05
#: Standing jitter (leg lengths, :func:`standing_noise`) up to which a clip is taken as
#: clean (the shared motion capture stands within 0.05–0.5% of a leg) and from which it is
#: taken as fully noisy (half the contact height, where single frames cross its band);
#: linear in between (:func:`noise_smoothing`).
CLEAN_NOISE, NOISY_NOISE = 0.005, 0.015
#: Seconds ahead within which a joint that still comes lower is landing, not standing.
LANDING_TIME = 0.2
#: Share of the contact height by which a joint may still come down after its contact
#: starts (a landing foot is taken as down once it is this close to where it stops).
LANDED_SHARE = 0.25


def horizontal_speed(positions: Any, dt: float) -> FloatArray:
    """Speed in the XZ plane ``(frames,)`` of a trajectory ``(frames, 3)`` (central differences)."""
    p = as_float_array(positions, "positions", (3,))
    if p.shape[0] < 2:
        return np.zeros(p.shape[0])
    v = np.gradient(p[:, [0, 2]], dt, axis=0)
    return np.hypot(v[:, 0], v[:, 1])


def low_pass(values: Any, sigma: float) -> FloatArray:
    """``values`` ``(frames, ...)`` smoothed along frames by a Gaussian of standard
    deviation ``sigma`` frames, edges padded with the end values (``sigma`` 0 copies)."""
    v = as_float_array(values, "values")
    if sigma <= 0 or v.ndim == 0 or v.shape[0] < 2:
        return v.copy()
    half = int(np.ceil(3.0 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    flat = v.reshape(v.shape[0], -1)
    padded = np.pad(flat, ((half, half), (0, 0)), mode="edge")
    out = np.empty_like(flat)
    for c in range(flat.shape[1]):
        out[:, c] = np.convolve(padded[:, c], kernel, mode="valid")
    return out.reshape(v.shape)


def _foot_paths(paths: Any) -> FloatArray:
    """``paths`` as a float array ``(frames, k, 3)``, or a named error."""
    p = as_float_array(paths, "paths", (3,))
    if p.ndim != 3:
        raise InvalidInputError(f"paths must have shape (frames, k, 3), got {p.shape}",
                                argument="paths")
    return p


def _slowest_frames(smooth: FloatArray, dt: float, inner: slice = slice(None)) -> np.ndarray:
    """``(frames, k)`` over the frames ``inner``: each joint's slowest 30% of them, by the
    horizontal speed of its low-passed path ``smooth`` (where a foot stands its path
    should be still)."""
    speed = np.linalg.norm(np.gradient(smooth[..., [0, 2]], dt, axis=0), axis=-1)[inner]
    return np.asarray(speed <= np.percentile(speed, 30, axis=0))


def standing_noise(paths: Any, dt: float) -> float:
    """How far foot joints standing still jitter (the clip's units): per joint path of
    ``paths`` ``(frames, k, 3)``, the median distance from its ``NOISE_TIME`` low-pass
    over its slowest 30% of frames; the median over the joints."""
    p = _foot_paths(paths)
    if p.shape[0] < 4 or p.shape[1] == 0:
        return 0.0
    smooth = low_pass(p, NOISE_TIME / dt)
    off = np.linalg.norm(p - smooth, axis=-1)
    slow = _slowest_frames(smooth, dt)
    return float(np.median([np.median(off[slow[:, k], k]) for k in range(p.shape[1])]))


def white_noise(paths: Any, dt: float) -> float:
    """The standard deviation of white noise on foot joint paths ``paths`` ``(frames, k,
    3)`` (the paths' units): per joint, the median absolute third difference of its
    coordinates over its slowest 30% of frames, over 0.6745 (a normal sample's median
    absolute value in deviations) and √20 (a third difference of white noise has √20
    times its deviation); the median over the joints. A smooth path's third differences
    vanish as the frame rate rises, so motion capture measures close to 0; per-frame
    jitter measures its own size. 0 for fewer than 5 frames or no joints."""
    p = _foot_paths(paths)
    if p.shape[0] < 5 or p.shape[1] == 0:
        return 0.0
    third = np.abs(p[3:] - 3.0 * p[2:-1] + 3.0 * p[1:-2] - p[:-3])
    slow = _slowest_frames(low_pass(p, NOISE_TIME / dt), dt, slice(1, -2))
    return float(np.median([np.median(third[slow[:, k], k]) for k in range(p.shape[1])])
                 / (0.6745 * np.sqrt(20.0)))


def universal_band(frames: Any, noise: float) -> Any:
    """The universal threshold ``noise·√(2 ln m)`` of runs of ``m`` ``frames`` (an int or
    an array; at least 2): about the largest offset that white noise of standard
    deviation ``noise`` reaches over such a run."""
    return noise * np.sqrt(2.0 * np.log(np.maximum(frames, 2)))


def noise_smoothing(paths: Any, dt: float, leg_length: float) -> float:
    """Seconds of low-pass for :func:`joint_contacts` on foot joint paths ``paths``
    ``(frames, k, 3)`` (leg length ``leg_length``, the paths' units): none where their
    :func:`standing_noise` is at most ``CLEAN_NOISE`` leg lengths (the paths are used as
    they are), ``NOISE_TIME`` from ``NOISY_NOISE``, linear in between."""
    noise = standing_noise(paths, dt) / max(float(leg_length), 1e-300)
    share = (noise - CLEAN_NOISE) / (NOISY_NOISE - CLEAN_NOISE)
    return NOISE_TIME * float(np.clip(share, 0.0, 1.0))


def local_minimum(values: Any, half_width: int) -> FloatArray:
    """Running minimum ``(frames,)`` of ``values`` ``(frames,)`` over ``±half_width`` frames.

    A foot's height above its local minimum finds stances on data whose planted feet
    hover at different heights from step to step (synthesis output).
    """
    v = as_float_array(values, "values")
    w = as_int(half_width, "half_width", minimum=0)
    if v.ndim != 1:
        raise InvalidInputError(f"values must have shape (frames,), got {v.shape}",
                                argument="values")
    if w == 0 or v.size == 0:
        return v.copy()
    padded = np.pad(v, w, mode="edge")
    return np.lib.stride_tricks.sliding_window_view(padded, 2 * w + 1).min(axis=1)


@njit(cache=True)
def _hysteresis(height: np.ndarray, speed: np.ndarray, enter_h: float, exit_h: float,
                enter_v: float, exit_v: float, grounded_v: float) -> np.ndarray:
    n = height.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    state = False
    for i in range(n):
        grounded = height[i] <= 0.0 and speed[i] <= grounded_v
        if state:
            if not grounded and (height[i] > exit_h or speed[i] > exit_v):
                state = False
        elif grounded or (height[i] <= enter_h and speed[i] <= enter_v):
            state = True
        out[i] = state
    return out


def _frame_flags(value: Any, name: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """``value`` as a bool array of ``shape`` (frames,), or None for None."""
    if value is None:
        return None
    flags = np.asarray(value, dtype=bool)
    if flags.shape != shape:
        raise InvalidInputError(f"{name} must have shape {shape}, got {flags.shape}",
                                argument=name)
    return flags


def detect_contacts(height: Any, speed: Any, *, enter_height: float, exit_height: float,
                    enter_speed: float, exit_speed: float, grounded_speed: float | None = None,
                    min_frames: int = 3, lifting: Any | None = None,
                    landing: Any | None = None) -> np.ndarray:
    """Contact mask ``(frames,)`` from a foot's height above its floor and its speed.

    A contact starts when the foot is at most ``enter_height`` high and at most
    ``enter_speed`` fast, and ends when it rises above ``exit_height`` or moves faster
    than ``exit_speed`` (hysteresis: enter thresholds are the stricter ones).
    A foot at or below its floor (``height <= 0``) is in contact unless it moves
    faster than ``grounded_speed`` (default ``exit_speed``): sliding through the floor is
    a contact that skates, not a swing.
    ``lifting`` ``(frames,)`` (bool) marks frames at which the foot may be leaving the
    ground (:func:`joint_contacts` passes every frame).
    A contact whose last frames are all above ``enter_height`` and ``lifting`` ends
    before them: the hysteresis band keeps a contact through noise in its middle, but
    a foot that rises out of the band from a toe-off is lifting off, not standing (a
    contact that lasts to the last frame is kept).
    ``landing`` ``(frames,)`` (bool) marks frames at which the foot is still coming down
    (:func:`joint_contacts` passes: lower within the next ``LANDING_TIME`` s by more
    than ``LANDED_SHARE`` of the contact height). A contact whose first frames are
    ``landing`` starts after them: the band takes a foot in a few frames before it lands,
    and pinning it there puts it down early (a contact from the first frame is kept).
    Contacts and gaps shorter than ``min_frames`` are removed (gaps first, contacts
    after their lift-off and touch-down are cut), except a contact at the clip's first or
    last frame, which the clip cuts short: it needs two frames.
    """
    h = as_float_array(height, "height")
    v = as_float_array(speed, "speed")
    if h.shape != v.shape or h.ndim != 1:
        raise InvalidInputError(f"height and speed must both have shape (frames,), got "
                                f"{h.shape} and {v.shape}", argument="height")
    if enter_height > exit_height or enter_speed > exit_speed:
        raise InvalidInputError("enter thresholds must not exceed exit thresholds, got "
                                f"height {enter_height} > {exit_height} or speed "
                                f"{enter_speed} > {exit_speed}", argument="enter_height")
    lift = _frame_flags(lifting, "lifting", h.shape)
    land = _frame_flags(landing, "landing", h.shape)
    mask = _hysteresis(np.ascontiguousarray(h), np.ascontiguousarray(v), float(enter_height),
                       float(exit_height), float(enter_speed), float(exit_speed),
                       float(exit_speed if grounded_speed is None else grounded_speed))
    m = as_int(min_frames, "min_frames", minimum=1)
    n = len(mask)
    # fill short gaps between contacts, then drop short contacts (all contacts at once)
    lo, hi = runs(~mask)
    inner = (hi - lo < m) & (lo > 0) & (hi < n)
    mask |= runs_mask(lo[inner], hi[inner], n)
    starts, stops = runs(mask)
    if starts.size == 0:
        return mask
    frame = np.arange(n)
    if lift is not None:  # a contact ends after its last standing frame
        standing = (h <= enter_height) | ~lift
        last = window_reduce(np.maximum, np.where(standing, frame, -1), starts, stops)
        stops = np.where(stops < n, np.where(last >= 0, last + 1, starts), stops)
    if land is not None:  # and starts at its first frame not landing
        first = window_reduce(np.minimum, np.where(land, n, frame), starts, stops)
        starts = np.where(starts > 0, np.minimum(first, stops), starts)
    # (a contact cut by the clip's first or last frame lasted longer than is seen)
    edge = (starts == 0) | (stops == n)
    kept = stops - starts >= np.where(edge, min(m, 2), m)
    return runs_mask(starts[kept], stops[kept], n)


def runs(mask: Any) -> tuple[np.ndarray, np.ndarray]:
    """The runs of true entries of ``mask`` ``(n,)``: starts and stops ``(S,)`` of
    half-open frame ranges, in order."""
    padded = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return edges[::2], edges[1::2]


def runs_mask(starts: np.ndarray, stops: np.ndarray, n: int) -> np.ndarray:
    """The bool mask ``(n,)`` that is true on the ranges ``[starts, stops)`` ``(S,)`` (in
    order, apart)."""
    change = np.zeros(n + 1, dtype=np.int64)
    change[starts] += 1
    change[stops] -= 1
    return np.cumsum(change[:-1]) > 0


def window_reduce(ufunc: np.ufunc, values: np.ndarray, starts: np.ndarray,
                  stops: np.ndarray) -> np.ndarray:
    """``ufunc`` reduced over each window ``[starts, stops)`` ``(S,)`` of the rows of
    ``values`` ``(n, ...)`` (windows in order, apart, none empty): ``(S, ...)``."""
    edges = np.stack([starts, stops], axis=1).ravel()
    if edges[-1] == len(values):  # (the last window runs to the end)
        edges = edges[:-1]
    return ufunc.reduceat(values, edges, axis=0)[::2]


def contact_spans(mask: Any) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` half-open frame ranges where ``mask`` ``(frames,)`` is true."""
    starts, stops = runs(mask)
    return list(zip(starts.tolist(), stops.tolist(), strict=True))


def contacts_from_ranges(ranges: Iterable[Sequence[int]], n_frames: int) -> np.ndarray:
    """Contact mask ``(n_frames,)`` from inclusive ``(first, last)`` frame ranges."""
    n = as_int(n_frames, "n_frames", minimum=0)
    mask = np.zeros(n, dtype=bool)
    for pair in ranges:
        if len(pair) != 2:
            raise InvalidInputError(f"contact ranges must be (first, last) pairs, got {pair!r}",
                                    argument="contacts")
        first, last = int(pair[0]), int(pair[1])
        if not 0 <= first <= last < n:
            raise InvalidInputError(
                f"contact range must satisfy 0 <= first <= last < {n}, got ({first}, {last})",
                argument="contacts")
        mask[first:last + 1] = True
    return mask


def joint_speed_threshold(speeds: Any) -> float:
    """A clip's planted-versus-moving speed threshold (leg lengths/s) from the smoothed
    horizontal speeds (leg lengths/s) of its foot joints, any shape.

    Foot speeds are bimodal: slow while planted (or skating), fast in swing. The
    threshold is the geometric mean of the 10th and 90th percentiles, within [0.1, 2].
    """
    v = np.asarray(speeds, dtype=np.float64).ravel()
    if v.size == 0:
        return 0.5
    low, high = np.percentile(v, [10, 90])
    return float(np.clip(np.sqrt(max(low, 1e-3) * max(high, 1e-3)), 0.1, 2.0))


def smoothed_speed(positions: Any, dt: float, smoothing: float = 0.0) -> FloatArray:
    """Horizontal speed ``(frames,)`` of ``positions`` ``(frames, 3)``, low-passed over
    ``smoothing`` seconds first (:func:`low_pass`, for a noisy clip its
    :func:`noise_smoothing`) and box-averaged over ``SPEED_WINDOW`` seconds (a skating
    foot's jitter does not read as a swing)."""
    if smoothing > 0:
        positions = low_pass(as_float_array(positions, "positions", (3,)), smoothing / dt)
    speed = horizontal_speed(positions, dt)
    width = max(1, round(SPEED_WINDOW / dt)) | 1
    if width == 1 or speed.size < 2:
        return speed
    kernel = np.ones(width) / width
    return np.convolve(np.pad(speed, width // 2, mode="edge"), kernel, mode="valid")


def joint_contacts(heights: Any, speeds: Any, leg_length: float, dt: float, *,
                   contact_height: float = CONTACT_HEIGHT,
                   speed_threshold: float | None = None,
                   smoothing: float = 0.0, noise: float = 0.0) -> np.ndarray:
    """Contact masks ``(frames, k)`` of ``k`` foot joints (heel/ankle, toe), as an animator
    marks them.

    ``heights`` ``(frames, k)`` are the joints' heights above the ground under them and
    ``speeds`` ``(frames, k)`` their smoothed horizontal speeds (:func:`smoothed_speed`),
    in the clip's units and units/s. On a noisy clip (``smoothing`` seconds of
    :func:`low_pass`: pass the paths' :func:`noise_smoothing`, and the same to
    :func:`smoothed_speed`) each height is first lowered to its low-pass where that is
    lower, so jitter that lifts a standing joint out of the band neither keeps it from
    entering a contact nor ends it, while a landing, which comes down, is found no later;
    and the local floor is taken from the low-pass, which the jitter's deepest dips do not
    pull down. Per joint, its height is measured from its local
    floor (the running minimum over ±``LOCAL_FLOOR_TIME`` s, so a joint that hovers
    through a stance is still found) and in leg lengths, its speed in leg lengths/s. A
    contact starts at most ``contact_height`` above the local floor and below 0.7× the
    speed threshold (default: :func:`joint_speed_threshold` of these joints), and ends
    above twice that height or 1.4× the threshold (hysteresis); a joint at or below the
    ground stays in contact unless it moves faster than the threshold's 1.4× (a planted
    foot that skates is still planted). Contacts and gaps shorter than
    ``MIN_CONTACT_TIME`` are removed. A contact starts where the joint has landed (its
    first frames, while it still comes lower within ``LANDING_TIME`` s by more than
    ``LANDED_SHARE`` of the contact height, are its landing) and ends where it lifts off
    (its last frames above the entry height are its lift-off), unless the clip cuts it.
    On a clip with white ``noise`` (the standard deviation of its foot paths' jitter,
    :func:`white_noise`, in the clip's units) a landing must come lower by that share
    and by the :func:`universal_band` of the frames it looks ahead over too: a standing
    joint's jitter alone does not make it look as if it still comes down.
    """
    h = np.atleast_2d(np.asarray(heights, dtype=np.float64).T).T
    v = np.atleast_2d(np.asarray(speeds, dtype=np.float64).T).T
    if h.shape != v.shape:
        raise InvalidInputError(f"heights and speeds must have one shape, got {h.shape} and "
                                f"{v.shape}", argument="heights")
    size = max(float(leg_length), 1e-300)
    smooth = low_pass(h, smoothing / dt) if smoothing > 0 else h
    h = np.minimum(h, smooth)
    scaled_speed = v / size
    gate = (joint_speed_threshold(scaled_speed) if speed_threshold is None
            else float(speed_threshold))
    half = max(1, round(LOCAL_FLOOR_TIME / dt))
    frames = max(2, round(MIN_CONTACT_TIME / dt))
    landing = max(1, round(LANDING_TIME / dt))
    # (how much lower a joint must come within the landing time to be still landing, leg
    # lengths: beyond what the noise reaches over those frames)
    noise = as_float(noise, "noise", minimum=0.0)
    descent = LANDED_SHARE * contact_height + float(universal_band(landing + 1, noise)) / size
    out = np.zeros(h.shape, dtype=bool)
    for k in range(h.shape[1]):
        height = h[:, k] / size
        settled = smooth[:, k] / size
        local = height - local_minimum(settled, half)
        signal = np.where(height <= 0.0, height, local)
        # (still landing: lower within the next LANDING_TIME s by more than LANDED_SHARE
        # of the contact height)
        ahead = np.lib.stride_tricks.sliding_window_view(
            np.pad(height, (0, landing), mode="edge"), landing + 1).min(axis=1)
        out[:, k] = detect_contacts(signal, scaled_speed[:, k], enter_height=contact_height,
                                    exit_height=EXIT_RATIO * contact_height, enter_speed=0.7 * gate,
                                    exit_speed=1.4 * gate, min_frames=frames,
                                    lifting=np.ones(len(signal), dtype=bool),
                                    landing=height > ahead + descent)
    return out


def feet_contacts(paths: Sequence[np.ndarray], heights: Sequence[np.ndarray],
                  leg_length: float, dt: float, *, contact_height: float = CONTACT_HEIGHT,
                  speed_threshold: float | None = None,
                  noise: float | None = None) -> list[np.ndarray]:
    """:func:`joint_contacts` for each foot of a clip: ``paths[i]`` ``(frames, k, 3)`` are
    foot ``i``'s joints' positions and ``heights[i]`` ``(frames, k)`` their heights above
    the ground, in the clip's units. One noise low-pass (:func:`noise_smoothing` of all
    the feet's paths), one white noise (default: :func:`white_noise` of all the paths) and
    one speed threshold (default: :func:`joint_speed_threshold` of all their speeds)
    serve every foot; returns a mask ``(frames, k)`` per foot."""
    if not paths:
        return []
    every = np.concatenate(list(paths), axis=1)
    smoothing = noise_smoothing(every, dt, leg_length)
    noise = white_noise(every, dt) if noise is None else as_float(noise, "noise", minimum=0.0)
    speeds = [np.stack([smoothed_speed(p[:, k], dt, smoothing) for k in range(p.shape[1])],
                       axis=1) for p in paths]
    gate = (joint_speed_threshold(np.concatenate([s.ravel() for s in speeds]) / leg_length)
            if speed_threshold is None else float(speed_threshold))
    return [joint_contacts(h, v, leg_length, dt, contact_height=contact_height,
                           speed_threshold=gate, smoothing=smoothing, noise=noise)
            for h, v in zip(heights, speeds, strict=True)]
