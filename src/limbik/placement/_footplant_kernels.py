"""Compiled per-frame passes of foot placement over whole clips."""

from __future__ import annotations

import numpy as np
from numba import njit

from limbik.placement._terrain_kernels import height_at


@njit(cache=True)
def limit_rate(values: np.ndarray, rate: np.ndarray, free: np.ndarray,
               raise_only: bool = False) -> np.ndarray:
    """``values`` ``(n,)`` with ``|out[i] - out[i-1]| <= rate[i]`` where it can be had by
    changing only frames with ``free[i]`` true (the others are kept exactly).

    A forward pass clamps each free frame to its predecessor's reach, a backward pass to
    its successor's, so a change that would happen within a frame next to a kept frame
    is spread over the free frames before and after it. Where two kept frames are
    further apart than the rates between them allow, those rates are scaled up just
    enough to join them (evenly, rather than in one frame at the end).

    With ``raise_only``, free frames are only raised where the kept frames allow it: each
    becomes the least value at or above every free frame's value less the rates between
    them (a peak is reached earlier and left later instead of being cut), and no higher
    than any kept frame's value plus the rates between them.
    """
    n = values.shape[0]
    out = values.copy()
    rate = rate.copy()
    i = 0
    while i < n:
        if not free[i]:
            i += 1
            continue
        start = i
        while i < n and free[i]:
            i += 1
        if start > 0 and i < n:
            available = 0.0
            for k in range(start, i + 1):
                available += rate[k]
            needed = abs(values[i] - values[start - 1])
            if needed > available:
                scale = needed / max(available, 1e-300) * (1.0 + 1e-9)
                for k in range(start, i + 1):
                    rate[k] *= scale
    if raise_only and n > 0:
        # the free frames' upper envelope, under the kept frames' cones
        rise = np.where(free, values, -np.inf)
        cap = np.where(free, np.inf, values)
        for i in range(1, n):
            rise[i] = max(rise[i], rise[i - 1] - rate[i])
            cap[i] = min(cap[i], cap[i - 1] + rate[i])
        for i in range(n - 2, -1, -1):
            rise[i] = max(rise[i], rise[i + 1] - rate[i + 1])
            cap[i] = min(cap[i], cap[i + 1] + rate[i + 1])
        for i in range(n):
            if free[i]:
                out[i] = max(out[i], min(rise[i], cap[i]))
    for i in range(1, n):
        if free[i]:
            low = out[i - 1] - rate[i]
            high = out[i - 1] + rate[i]
            if out[i] < low:
                out[i] = low
            elif out[i] > high:
                out[i] = high
    for i in range(n - 2, -1, -1):
        if free[i]:
            low = out[i + 1] - rate[i + 1]
            high = out[i + 1] + rate[i + 1]
            if out[i] < low:
                out[i] = low
            elif out[i] > high:
                out[i] = high
    return out


@njit(cache=True)  # called from the kernels
def eased_limit(change: float, limit: float, full: float) -> float:
    """``change`` limited to ``±limit`` (radians), with the corner eased: exactly
    ``change`` where ``limit >= |change| + w`` and exactly ``±limit`` where
    ``limit <= |change| - w``, for ``w = min(|change|, full - |change|) / 2``, and between
    a quadratic that joins the two with a continuous slope in ``limit`` and in
    ``change``. A limit that grows smoothly through ``|change|`` (a foot turning to a
    slope as its follow weight eases in) then gives a pitch without a corner in time; at
    ``limit = full`` nothing below ``full`` is changed, and from ``|change| >= full`` on
    it is the plain clamp.
    """
    size = abs(change)
    width = 0.5 * min(size, full - size)
    if width <= 0.0:
        out = min(size, limit)
    elif limit >= size + width:
        out = size
    elif limit <= size - width:
        out = limit
    else:
        over = limit - size + width
        out = limit - over * over / (4.0 * width)
    return out if change >= 0.0 else -out


@njit(cache=True)
def settle_pitch(heights: np.ndarray, cell: float, x0: float, z0: float, pivot: np.ndarray,
                 heading: np.ndarray, heel: np.ndarray, length: np.ndarray,
                 start: np.ndarray, heel_height: np.ndarray, toe_height: np.ndarray,
                 source: np.ndarray, tilt: np.ndarray, full: float, rounds: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame, the pitch ``(n,)`` of a foot that follows the ground, and the ground-
    following heights of its heel and toe ``(n,)`` there.

    The foot (length ``length``, horizontal direction ``heading`` ``(n, 2)``) turns about
    the point ``pivot`` ``(n, 2)`` that is ``heel`` of the way from the toe to the heel;
    the heel wants to be ``heel_height`` above the ground under it and the toe
    ``toe_height``, which asks for a pitch (within ``tilt`` of the ``source`` pitch,
    :func:`eased_limit` with ``full`` the largest tilt), which moves
    the heel and the toe, and so on: starting from the horizontal extent ``start``, at
    most ``rounds`` rounds of that. Where the rounds do not shrink the change (a steep
    foot over a steep flank, whose ground moves faster than its pitch), the pitch that
    is its own answer is bisected for instead, so that a foot moving smoothly turns
    smoothly.
    """
    n = pivot.shape[0]
    pitch = np.empty(n)
    heel_y = np.empty(n)
    toe_y = np.empty(n)
    for f in range(n):
        px, pz = pivot[f, 0], pivot[f, 1]
        hx, hz = heading[f, 0], heading[f, 1]
        w = heel[f]
        size = length[f]
        scale = max(size, 1e-300)
        reach = start[f]
        step = np.inf
        shrinking = True
        p = 0.0
        ay = 0.0
        ty = 0.0
        for _ in range(rounds):
            ay = height_at(heights, cell, x0, z0, px - (1 - w) * reach * hx,
                           pz - (1 - w) * reach * hz) + heel_height[f]
            ty = height_at(heights, cell, x0, z0, px + w * reach * hx,
                           pz + w * reach * hz) + toe_height[f]
            p = np.arcsin(min(max((ty - ay) / scale, -1.0), 1.0))
            p = source[f] + eased_limit(p - source[f], tilt[f], full)
            new = size * np.cos(p)
            change = abs(new - reach)
            shrinking = change <= 0.5 * step
            step = change
            reach = new
            if change <= 1e-10 * size:
                break
        if step > 1e-10 * size and not shrinking:
            lo, hi = source[f] - tilt[f], source[f] + tilt[f]
            for _ in range(48):
                mid = 0.5 * (lo + hi)
                r = size * np.cos(mid)
                rise = (height_at(heights, cell, x0, z0, px + w * r * hx, pz + w * r * hz)
                        + toe_height[f]
                        - height_at(heights, cell, x0, z0, px - (1 - w) * r * hx,
                                    pz - (1 - w) * r * hz) - heel_height[f])
                wanted = source[f] + eased_limit(
                    np.arcsin(min(max(rise / scale, -1.0), 1.0)) - source[f], tilt[f], full)
                if mid > wanted:
                    hi = mid
                else:
                    lo = mid
            p = 0.5 * (lo + hi)
            reach = size * np.cos(p)
            ay = height_at(heights, cell, x0, z0, px - (1 - w) * reach * hx,
                           pz - (1 - w) * reach * hz) + heel_height[f]
            ty = height_at(heights, cell, x0, z0, px + w * reach * hx,
                           pz + w * reach * hz) + toe_height[f]
        pitch[f] = p
        heel_y[f] = ay
        toe_y[f] = ty
    return pitch, heel_y, toe_y


@njit(cache=True)  # called from the kernels
def turn_point(heights: np.ndarray, cell: float, x0: float, z0: float, px: float,
               py: float, pz: float, hx: float, hz: float, size: float, above: float,
               weight: float, kept: float, rounds: int) -> tuple[float, float, float]:
    """The point ``size`` from the pivot ``(px, py, pz)`` along the unit heading
    ``(hx, hz)`` over the ground (the grid ``heights``, as :func:`height_at`), at the
    height ``weight · (ground + above) + (1 − weight) · kept``: starting from the ground
    under the pivot, ``rounds`` rounds of taking the ground under the point, its height
    there, and the horizontal reach that height leaves (the rise clamped to ±0.99 of
    ``size``); then the height over the last point."""
    x, z = px, pz
    for _ in range(rounds):
        y = weight * (height_at(heights, cell, x0, z0, x, z) + above) + (1.0 - weight) * kept
        rise = min(max(y - py, -0.99 * size), 0.99 * size)
        reach = np.sqrt(size * size - rise * rise)
        x = px + hx * reach
        z = pz + hz * reach
    y = weight * (height_at(heights, cell, x0, z0, x, z) + above) + (1.0 - weight) * kept
    return x, y, z


@njit(cache=True)
def turn_over_ground(heights: np.ndarray, cell: float, x0: float, z0: float,
                     pivot: np.ndarray, heading: np.ndarray, length: np.ndarray,
                     above: np.ndarray, weight: np.ndarray, kept: np.ndarray,
                     rounds: int) -> np.ndarray:
    """:func:`turn_point` for each of ``n`` points: pivots ``(n, 3)``, unit headings
    ``(n, 2)``, and ``length``, ``above``, ``weight``, ``kept`` ``(n,)``: ``(n, 3)``."""
    n = pivot.shape[0]
    out = np.empty((n, 3))
    for i in range(n):
        out[i, 0], out[i, 1], out[i, 2] = turn_point(
            heights, cell, x0, z0, pivot[i, 0], pivot[i, 1], pivot[i, 2], heading[i, 0],
            heading[i, 1], length[i], above[i], weight[i], kept[i], rounds)
    return out


@njit(cache=True)  # called from the kernels
def _run_around(mask: np.ndarray, frame: int) -> tuple[int, int]:
    """The run of true ``mask`` ``(n,)`` entries that holds ``frame``: ``(start, stop)``."""
    start, stop = frame, frame + 1
    while start > 0 and mask[start - 1]:
        start -= 1
    while stop < mask.shape[0] and mask[stop]:
        stop += 1
    return start, stop


@njit(cache=True)
def hold_foot_length(heights: np.ndarray, cell: float, x0: float, z0: float,
                     locks: np.ndarray, heel: np.ndarray, toe: np.ndarray, length: float,
                     rounds: int) -> None:
    """In place, over each run of frames where both the heel (ankle) and the toe are held
    (``heel``, ``toe`` ``(n,)``), in time order: the toe's lock ``locks[:, 1]``
    (``locks`` ``(n, 2, 3)``) is moved, for the whole of its contact, to ``length`` from
    the heel's at the run's first frame along their heading over the ground (its height
    above the ground kept), at the first such run of that contact only (a held toe has
    one place); within the run the heel's lock turns about the toe's, ``length`` from it
    at its own height above the ground; and for the rest of the heel's contact after the
    run it stays where it got to. A run whose locks are less than ``1e-9 · length`` apart
    over the ground keeps them. The turns are :func:`turn_point`'s with ``rounds``
    rounds; the ground is the grid ``heights``."""
    n = locks.shape[0]
    placed = -1  # (the start of the toe contact last placed: runs come in time order)
    start = 0
    while start < n:
        if not (heel[start] and toe[start]):
            start += 1
            continue
        stop = start
        while stop < n and heel[stop] and toe[stop]:
            stop += 1
        hx = locks[start, 1, 0] - locks[start, 0, 0]
        hz = locks[start, 1, 2] - locks[start, 0, 2]
        size = np.sqrt(hx * hx + hz * hz)
        if size > 1e-9 * max(length, 1e-300):
            hx /= size
            hz /= size
            toe_start, toe_stop = _run_around(toe, start)
            if toe_start != placed:
                # the toe's place: ``length`` from the heel's, at the toe's own height
                # above the ground under it
                placed = toe_start
                base = height_at(heights, cell, x0, z0, locks[start, 1, 0],
                                 locks[start, 1, 2])
                above = np.empty(toe_stop - toe_start)
                for f in range(toe_start, toe_stop):
                    above[f - toe_start] = locks[f, 1, 1] - base
                tx, _, tz = turn_point(heights, cell, x0, z0, locks[start, 0, 0],
                                       locks[start, 0, 1], locks[start, 0, 2], hx, hz,
                                       length, above[start - toe_start], 1.0, 1.0, rounds)
                under = height_at(heights, cell, x0, z0, tx, tz)
                for f in range(toe_start, toe_stop):
                    locks[f, 1, 0] = tx
                    locks[f, 1, 1] = under + above[f - toe_start]
                    locks[f, 1, 2] = tz
            # then the heel turns about it at its own height above the ground
            for f in range(start, stop):
                ax, ay, az = locks[f, 0, 0], locks[f, 0, 1], locks[f, 0, 2]
                locks[f, 0, 0], locks[f, 0, 1], locks[f, 0, 2] = turn_point(
                    heights, cell, x0, z0, locks[f, 1, 0], locks[f, 1, 1], locks[f, 1, 2],
                    -hx, -hz, length, ay - height_at(heights, cell, x0, z0, ax, az), 1.0,
                    0.0, rounds)
            _, after = _run_around(heel, start)
            lx, lz = locks[stop - 1, 0, 0], locks[stop - 1, 0, 2]
            last = height_at(heights, cell, x0, z0, lx, lz)
            for f in range(stop, after):
                locks[f, 0, 1] += last - height_at(heights, cell, x0, z0, locks[f, 0, 0],
                                                   locks[f, 0, 2])
                locks[f, 0, 0] = lx
                locks[f, 0, 2] = lz
        start = stop
