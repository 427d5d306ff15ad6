"""Compiled per-frame passes of foot placement over whole clips."""

from __future__ import annotations

import numpy as np
from numba import njit

from limbik.geometry._quaternion_kernels import multiply, rotate, swing
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
def turn_point(heights: np.ndarray, cell: float, x0: float, z0: float, px: float,
               py: float, pz: float, hx: float, hz: float, size: float, above: float,
               weight: float, kept: float, rounds: int) -> tuple[float, float, float]:
    """The point ``size`` from the pivot ``(px, py, pz)`` along the unit heading
    ``(hx, hz)`` over the ground (the grid ``heights``, as :func:`height_at`), at the
    height ``weight · (ground + above) + (1 − weight) · kept``: starting from the ground
    under the pivot, ``rounds`` rounds of taking the ground under the point, its height
    there, and the horizontal reach that height leaves (the rise clamped to ±``size``: a
    height ``size`` or more from the pivot's puts the point straight over or under it,
    whatever the heading); then the height over the last point."""
    x, z = px, pz
    for _ in range(rounds):
        y = weight * (height_at(heights, cell, x0, z0, x, z) + above) + (1.0 - weight) * kept
        rise = min(max(y - py, -size), size)
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


@njit(cache=True)
def steady_runs(values: np.ndarray, starts: np.ndarray, stops: np.ndarray,
                band: np.ndarray) -> np.ndarray:
    """``values`` ``(n, c)`` with each column held still within each run ``[starts[r],
    stops[r])`` while it stays within ``band[r]`` of where it is held: each value is first
    the median of itself and its neighbours in the run (the run's first and last frame
    their own), then the mean of a forward and a backward play (backlash) operator of
    half-width ``band[r]`` is taken. Jitter about a level is kept out, and so is a
    one-frame spike of any size; a larger move is followed (on a steady ramp, without
    lag). Frames outside the runs are copied."""
    out = values.copy()
    for r in range(starts.shape[0]):
        a, b, w = starts[r], stops[r], band[r]
        if b - a < 2:
            continue
        for c in range(values.shape[1]):
            # (each value the median of itself and its neighbours in the run)
            v = np.empty(b - a)
            for i in range(a, b):
                p, q, s = values[max(i - 1, a), c], values[i, c], values[min(i + 1, b - 1), c]
                v[i - a] = max(min(p, q), min(max(p, q), s))
            forward = np.empty(b - a)
            held = v[0]
            for i in range(b - a):
                held = min(max(held, v[i] - w), v[i] + w)
                forward[i] = held
            held = v[b - a - 1]
            for i in range(b - a - 1, -1, -1):
                held = min(max(held, v[i] - w), v[i] + w)
                out[a + i, c] = 0.5 * (held + forward[i])
    return out


@njit(cache=True)  # called from the kernels
def _store(q: np.ndarray, f: int, j: int, value: tuple[float, float, float, float]) -> None:
    """``q[f, j] = value``."""
    q[f, j, 0], q[f, j, 1], q[f, j, 2], q[f, j, 3] = value


@njit(cache=True)
def leg_chain_rotations(source_rotations: np.ndarray, world: np.ndarray, lift: np.ndarray,
                        translations: np.ndarray, parents: np.ndarray, chains: np.ndarray,
                        knee_at: np.ndarray, ankle_at: np.ndarray, ankle_q: np.ndarray,
                        toe_q: np.ndarray, q_local: np.ndarray) -> None:
    """In place, the local rotations ``q_local`` ``(F, J, 4)`` of legs along the chains
    ``(L, 4)`` (hip, knee, ankle, toe joints; toe -1 where it keeps its rotation): each
    bone turned by the smallest rotation from its direction in the clip's world pose
    (rotations ``source_rotations`` ``(F, J, 4)``, positions ``world`` ``(F, J, 3)``) to
    its new one, from the hip moved by ``lift`` ``(F, 3)`` to the knee ``knee_at`` and
    from there to the ankle ``ankle_at`` ``(F, L, 3)`` (the knee placed by the thigh's
    local translation, ``translations`` ``(F, J, 3)``); the ankle and toe take the world
    rotations ``ankle_q`` and ``toe_q`` ``(F, L, 4)``."""
    frames = world.shape[0]
    for f in range(frames):
        for i in range(chains.shape[0]):
            hip, knee, ankle, toe = chains[i, 0], chains[i, 1], chains[i, 2], chains[i, 3]
            hx = world[f, hip, 0] + lift[f, 0]
            hy = world[f, hip, 1] + lift[f, 1]
            hz = world[f, hip, 2] + lift[f, 2]
            s = swing(world[f, knee, 0] - world[f, hip, 0], world[f, knee, 1] - world[f, hip, 1],
                      world[f, knee, 2] - world[f, hip, 2], knee_at[f, i, 0] - hx,
                      knee_at[f, i, 1] - hy, knee_at[f, i, 2] - hz)
            hq = multiply(s[0], s[1], s[2], s[3], source_rotations[f, hip, 0],
                          source_rotations[f, hip, 1], source_rotations[f, hip, 2],
                          source_rotations[f, hip, 3])
            t = rotate(hq[0], hq[1], hq[2], hq[3], translations[f, knee, 0],
                       translations[f, knee, 1], translations[f, knee, 2])
            kx, ky, kz = hx + t[0], hy + t[1], hz + t[2]
            s = swing(world[f, ankle, 0] - world[f, knee, 0],
                      world[f, ankle, 1] - world[f, knee, 1],
                      world[f, ankle, 2] - world[f, knee, 2], ankle_at[f, i, 0] - kx,
                      ankle_at[f, i, 1] - ky, ankle_at[f, i, 2] - kz)
            kq = multiply(s[0], s[1], s[2], s[3], source_rotations[f, knee, 0],
                          source_rotations[f, knee, 1], source_rotations[f, knee, 2],
                          source_rotations[f, knee, 3])
            p = parents[hip]
            _store(q_local, f, hip, multiply(
                -source_rotations[f, p, 0], -source_rotations[f, p, 1],
                -source_rotations[f, p, 2], source_rotations[f, p, 3], hq[0], hq[1], hq[2],
                hq[3]))
            _store(q_local, f, knee, multiply(-hq[0], -hq[1], -hq[2], hq[3], kq[0], kq[1],
                                              kq[2], kq[3]))
            _store(q_local, f, ankle, multiply(
                -kq[0], -kq[1], -kq[2], kq[3], ankle_q[f, i, 0], ankle_q[f, i, 1],
                ankle_q[f, i, 2], ankle_q[f, i, 3]))
            if toe >= 0:
                _store(q_local, f, toe, multiply(
                    -ankle_q[f, i, 0], -ankle_q[f, i, 1], -ankle_q[f, i, 2], ankle_q[f, i, 3],
                    toe_q[f, i, 0], toe_q[f, i, 1], toe_q[f, i, 2], toe_q[f, i, 3]))


@njit(cache=True)
def keep_length(heights: np.ndarray, cell: float, x0: float, z0: float, ankle: np.ndarray,
                toe: np.ndarray, length: np.ndarray, toe_first: np.ndarray,
                heading: np.ndarray, weight: np.ndarray, rounds: int) -> None:
    """In place, ``rounds`` times: each ankle and toe ``(n, 3)`` put ``length`` ``(n,)``
    apart as :func:`limbik.placement.footplant._keep_length` puts them (the toe moved by
    ``1 − toe_first`` ``(n,)`` of the change, the ankle by the rest; ``heading`` ``(n, 2)``
    for joints at one place), then each joint's height changed by ``weight`` ``(n,)``
    times the change of the ground (the grid ``heights``, as :func:`height_at`) under
    it since the round before."""
    for i in range(ankle.shape[0]):
        ax, ay, az = ankle[i, 0], ankle[i, 1], ankle[i, 2]
        tx, ty, tz = toe[i, 0], toe[i, 1], toe[i, 2]
        size, share, w = length[i], toe_first[i], weight[i]
        under_a = height_at(heights, cell, x0, z0, ax, az)
        under_t = height_at(heights, cell, x0, z0, tx, tz)
        for _ in range(rounds):
            ox, oy, oz = tx - ax, ty - ay, tz - az
            distance = np.sqrt(ox * ox + oy * oy + oz * oz)
            sine = oy / max(distance, 1e-300) if distance > 1e-9 * size else 0.0
            kept = 1.0 - sine ** 16.0
            rise = kept * min(max(oy, -size), size) + (1.0 - kept) * size * sine
            hx, hz = ox, oz
            if not np.sqrt(hx * hx + hz * hz) > 1e-9 * size:
                hx, hz = heading[i, 0], heading[i, 1]
            flat = max(np.sqrt(hx * hx + hz * hz), 1e-300)
            hx, hz = hx / flat, hz / flat
            over = np.sqrt(max(size * size - rise * rise, 0.0))
            gx, gz = over * hx, over * hz
            px = (1.0 - share) * ax + share * tx
            pz = (1.0 - share) * az + share * tz
            py = (1.0 - share) * ay + share * ty
            ax, az = px - share * gx, pz - share * gz
            ay = py - share * rise
            tx, tz = ax + gx, az + gz
            ty = ay + rise
            below = height_at(heights, cell, x0, z0, ax, az)
            ay += w * (below - under_a)
            under_a = below
            below = height_at(heights, cell, x0, z0, tx, tz)
            ty += w * (below - under_t)
            under_t = below
        ankle[i, 0], ankle[i, 1], ankle[i, 2] = ax, ay, az
        toe[i, 0], toe[i, 1], toe[i, 2] = tx, ty, tz


@njit(cache=True)  # called from the kernels
def _smoothstep(x: float) -> float:
    """Smoothstep of ``x`` clipped to [0, 1] (``footplant._ramp``)."""
    s = min(max(x, 0.0), 1.0)
    return s * s * (3 - 2 * s)


@njit(cache=True)
def eased_offsets(values: np.ndarray, mask: np.ndarray, before: int, after: int,
                  out: np.ndarray, weights: np.ndarray) -> None:
    """``out`` ``(n, d)`` and ``weights`` ``(n,)`` of
    :func:`limbik.placement.footplant._eased_offsets` for ``values`` ``(n, d)`` and a
    ``mask`` ``(n,)`` with at least one true entry."""
    n = mask.shape[0]
    last_seen = -1
    since = np.empty(n)
    last = np.empty(n, dtype=np.int64)
    for i in range(n):  # frames since the last run frame at or before each, and that frame
        if mask[i]:
            last_seen = i
        since[i] = i - last_seen if last_seen >= 0 else np.inf
        last[i] = last_seen
    next_seen = -1
    for i in range(n - 1, -1, -1):  # frames until the next at or after, and that frame
        if mask[i]:
            next_seen = i
        until = next_seen - i if next_seen >= 0 else np.inf
        # (before the first run frame, its own; after the last, the last's)
        lo = last[i] if last[i] >= 0 else next_seen
        hi = next_seen if next_seen >= 0 else last[i]
        w_in = (_smoothstep(1.0 - until / (before + 1)) if before > 0
                else (1.0 if until == 0 else 0.0))
        w_out = (_smoothstep(1.0 - since[i] / (after + 1)) if after > 0
                 else (1.0 if since[i] == 0 else 0.0))
        weights[i] = max(w_in, w_out)
        if mask[i]:
            for c in range(values.shape[1]):
                out[i, c] = values[i, c]
            continue
        if (since[i] < np.inf and until < np.inf
                and since[i] + until - 1 < max(before, after)):
            # (a gap shorter than the longer ease: one smoothstep across it)
            share = _smoothstep(since[i] / (since[i] + until))
            w_out, w_in = 1.0 - share, share
        total = max(w_out + w_in, 1.0)
        for c in range(values.shape[1]):
            out[i, c] = (w_out / total) * values[lo, c] + (w_in / total) * values[hi, c]
