"""Levenberg–Marquardt over many targets at once, in NumPy: the kernel's bits, no compiler.

:func:`lm_lanes` takes the arguments of
:func:`limbik.solvers._jacobian_kernels.lm_solve_range` and writes the same outputs, bit
for bit, without compiling anything: it runs the kernel's algorithm on every target of
the range together, one NumPy operation over all targets for each of the kernel's
scalar operations, in the same order. A batch's first call uses it while the kernel
compiles (seconds on an empty cache; see :class:`limbik._tiered.TieredRangeKernel`).

Each target ("lane") follows its own path, as in the kernel: the attempts, iterations
and damping trials are loops over the lanes still in them, which leave as the kernel's
``break`` statements say. Elementwise ``+ - * /``, ``sqrt``, ``floor`` and ``fmod``
round exactly as compiled code does; ``sin``, ``cos`` and ``atan2`` go through Python's
``math``, which calls the same C library the kernel calls (NumPy's own can differ in the
last bit on some processors). ``tests/test_lm_lanes.py`` compares the bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_TWO_PI = 2.0 * np.pi
_SPLITMIX_STEP = np.uint64(0x9E3779B97F4A7C15)
_SPLITMIX_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_SPLITMIX_MUL2 = np.uint64(0x94D049BB133111EB)


#: The skew matrix [w]ₓ, row by row, from w: entry i is ``_SKEW_SIGN[i] * w[_SKEW_INDEX[i]]``
#: (the diagonal's entries are overwritten)
_SKEW_INDEX = np.array([0, 2, 1, 2, 0, 0, 1, 0, 0])
_SKEW_SIGN = np.array([0.0, -1.0, 1.0, 1.0, 0.0, -1.0, -1.0, 1.0, 0.0])
_DIAGONAL = np.array([0, 4, 8])


def _libm(func: Callable[..., float], *columns: np.ndarray) -> np.ndarray:
    """``func`` of Python's ``math`` over arrays of one shape, element by element (NaN
    where Python refuses an argument the C library would take, such as an infinity)."""
    shape = columns[0].shape
    lists = [c.ravel().tolist() for c in columns]
    try:
        values = np.fromiter(map(func, *lists), np.float64, columns[0].size)
    except (ValueError, OverflowError):
        values = np.array([_or_nan(func, *args) for args in zip(*lists, strict=True)])
    return values.reshape(shape)


def _or_nan(func: Callable[..., float], *args: float) -> float:
    try:
        return func(*args)
    except (ValueError, OverflowError):
        return math.nan


def _splitmix64(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~limbik.solvers._jacobian_kernels.splitmix64` over uint64 states ``(k,)``."""
    state = state + _SPLITMIX_STEP
    z = (state ^ (state >> np.uint64(30))) * _SPLITMIX_MUL1
    z = (z ^ (z >> np.uint64(27))) * _SPLITMIX_MUL2
    z = z ^ (z >> np.uint64(31))
    return state, (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def _py_max(a: Any, b: Any) -> Any:
    """Python's ``max(a, b)`` elementwise."""
    return np.where(b > a, b, a)


def _py_min(a: Any, b: Any) -> Any:
    """Python's ``min(a, b)`` elementwise."""
    return np.where(b < a, b, a)


class _Chain:
    """The merged chain arrays of one call, with the joint facts the lanes branch on."""

    def __init__(self, pre_rot: np.ndarray, pre_trans: np.ndarray, axis: np.ndarray,
                 kind: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        #: ``(m + 1, 3, 4, 1)``: each fixed transform's rotation, its translation last (the
        #: last axis meets the lanes)
        self.fixed = np.concatenate([pre_rot, pre_trans[:, :, None]], axis=2)[..., None]
        self.axis = axis
        self.m = axis.shape[0]
        self.prismatic = [bool(k == 1) for k in kind.tolist()]
        self.lower = lower
        self.upper = upper
        #: unlimited rotations: wrapped into (-π, π]
        self.wraps = (kind == 0) & (lower == -np.inf) & (upper == np.inf)
        self.any_wraps = bool(self.wraps.any())

    def clip(self, q: np.ndarray) -> np.ndarray:
        """``_clip_q`` over rows ``q (k, m)``; a new array."""
        below = q < self.lower
        above = ~below & (q > self.upper)
        out = np.where(below, self.lower, np.where(above, self.upper, q))
        if self.any_wraps:
            wrap = ~below & ~above & self.wraps & ((q > np.pi) | (q <= -np.pi))
            if wrap.any():
                wrapped = q - _TWO_PI * np.floor((q + np.pi) / _TWO_PI)
                out = np.where(wrap, wrapped, out)
        return out

    def forward(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``chain_fk`` over rows ``q (k, m)``: frames ``(k, m + 1, 3, 3)``, their origins
        ``(k, m + 1, 3)`` and the world joint axes ``(k, m, 3)``.

        Worked with the lanes last (NumPy's inner loops then run over them). Each of the
        kernel's 3-term dot products is one product array summed over an axis in the
        kernel's order: ``(a₀b₀ + a₁b₁) + a₂b₂``."""
        k, m = q.shape[0], self.m
        rots = np.empty((m + 1, 3, 3, k))
        origins = np.empty((m + 1, 3, k))
        axes = np.empty((m, 3, k))
        r = np.zeros((3, 3, k))
        r[0, 0] = r[1, 1] = r[2, 2] = 1.0
        p = np.zeros((3, k))
        qt = q.T
        for j in range(m + 1):
            # r · [pre_rot | pre_trans]: the frame's turn and its origin's offset at once
            prod = r[:, :, None, :] * self.fixed[j]  # (3, 3, 4, k): r[i, c] · fixed[c, col]
            moved = prod[:, 0] + prod[:, 1] + prod[:, 2]
            p = p + moved[:, 3]
            r = moved[:, :3]
            if j < m:
                prod = r * self.axis[j][:, None]
                w = prod[:, 0] + prod[:, 1] + prod[:, 2]
                axes[j] = w
                qj = qt[j]
                if self.prismatic[j]:
                    p = p + w * qj
                else:
                    sn = _libm(math.sin, qj)
                    cs = _libm(math.cos, qj)
                    # Rodrigues: (w wᵀ)(1 - cos) + sin [w]ₓ, cos added on the diagonal
                    outer = ((w[:, None, :] * w[None, :, :]) * (1.0 - cs)).reshape(9, k)
                    turn = outer + (w * sn)[_SKEW_INDEX] * _SKEW_SIGN[:, None]
                    turn[_DIAGONAL] = cs + outer[_DIAGONAL]
                    prod = turn.reshape(3, 3, 1, k) * r[None, :, :, :]  # turn[i, c] r[c, j]
                    r = prod[:, 0] + prod[:, 1] + prod[:, 2]
            rots[j] = r
            origins[j] = p
        return (rots.transpose(3, 0, 1, 2), origins.transpose(2, 0, 1),
                axes.transpose(2, 0, 1))

    def jacobian(self, origins: np.ndarray, axes: np.ndarray, nrow: int, w_pos: float,
                 w_rot: float) -> np.ndarray:
        """``_fill_jacobian``: the weighted Jacobians ``(k, nrow, m)``."""
        m = self.m
        arm = origins[:, m:m + 1, :] - origins[:, :m, :]  # (k, m, 3)
        ax, ay, az = axes[:, :, 0], axes[:, :, 1], axes[:, :, 2]
        rx, ry, rz = arm[:, :, 0], arm[:, :, 1], arm[:, :, 2]
        jac = np.empty((origins.shape[0], nrow, m))
        jac[:, 0] = w_pos * (ay * rz - az * ry)
        jac[:, 1] = w_pos * (az * rx - ax * rz)
        jac[:, 2] = w_pos * (ax * ry - ay * rx)
        if nrow == 6:
            jac[:, 3:6] = w_rot * axes.transpose(0, 2, 1)
        for j in range(m):
            if self.prismatic[j]:
                jac[:, 0:3, j] = w_pos * axes[:, j]
                if nrow == 6:
                    jac[:, 3:6, j] = 0.0
        return jac

    def jump(self, q: np.ndarray, centre: np.ndarray) -> np.ndarray:
        """``jump_size`` of rows ``q (k, m)`` from ``centre (k, m)``: ``(k,)``."""
        d = np.abs(q - centre)
        if self.any_wraps:
            turned = np.fmod(d, _TWO_PI)  # d >= 0: Python's % and C's fmod agree
            d = np.where(self.wraps, _py_min(turned, _TWO_PI - turned), d)
        big = np.zeros(q.shape[0])
        for j in range(self.m):
            big = _py_max(big, d[:, j])
        return big


def _pose_error(rot: np.ndarray, origin: np.ndarray, target_p: np.ndarray,
                target_r: np.ndarray | None, nrow: int, w_pos: float, w_rot: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_pose_error`` of tip frames ``rot (k, 3, 3)``, ``origin (k, 3)`` against targets
    ``target_p (k, 3)``, ``target_r (k, 3, 3)``: errors ``(k, nrow)``, position errors and
    angle errors ``(k,)``."""
    k = origin.shape[0]
    e = np.empty((k, nrow))
    d = target_p - origin
    e[:, 0:3] = w_pos * d
    sq = d * d
    perr = np.sqrt(sq[:, 0] + sq[:, 1] + sq[:, 2])
    if target_r is None or nrow == 3:
        return e, perr, np.zeros(k)
    t, c = target_r, rot
    m = (t[:, :, 0:1] * c[:, None, :, 0] + t[:, :, 1:2] * c[:, None, :, 1]
         + t[:, :, 2:3] * c[:, None, :, 2])
    e00, e01, e02 = m[:, 0, 0], m[:, 0, 1], m[:, 0, 2]
    e10, e11, e12 = m[:, 1, 0], m[:, 1, 1], m[:, 1, 2]
    e20, e21, e22 = m[:, 2, 0], m[:, 2, 1], m[:, 2, 2]
    tr = e00 + e11 + e22
    # Shepperd's four cases, as the kernel's if/elif chain picks them
    first = (tr >= e00) & (tr >= e11) & (tr >= e22)
    second = ~first & (e00 >= e11) & (e00 >= e22)
    third = ~first & ~second & (e11 >= e22)
    s = np.where(first, 1.0 + tr, np.where(second, 1.0 + e00 - e11 - e22,
                 np.where(third, 1.0 + e11 - e00 - e22, 1.0 + e22 - e00 - e11)))
    s = np.sqrt(np.where(s > 1e-300, s, 1e-300)) * 2.0
    quarter = 0.25 * s
    a = (e21 - e12) / s
    b = (e02 - e20) / s
    c_ = (e10 - e01) / s
    d01 = (e01 + e10) / s
    d02 = (e02 + e20) / s
    d12 = (e12 + e21) / s
    w = np.where(first, quarter, np.where(second, a, np.where(third, b, c_)))
    x = np.where(first, a, np.where(second, quarter, np.where(third, d01, d02)))
    y = np.where(first, b, np.where(second, d01, np.where(third, quarter, d12)))
    z = np.where(first, c_, np.where(second, d02, np.where(third, d12, quarter)))
    flip = w < 0.0
    w = np.where(flip, -w, w)
    x = np.where(flip, -x, x)
    y = np.where(flip, -y, y)
    z = np.where(flip, -z, z)
    sn = np.sqrt(x * x + y * y + z * z)
    angle = 2.0 * _libm(math.atan2, sn, w)
    f = np.where(sn >= 1e-300, angle / sn, 0.0)
    e[:, 3] = w_rot * (x * f)
    e[:, 4] = w_rot * (y * f)
    e[:, 5] = w_rot * (z * f)
    return e, perr, angle


def _square_sum(e: np.ndarray) -> np.ndarray:
    """``0.0 + e₀² + e₁² + …`` over the last axis, in that order."""
    total = np.zeros(e.shape[0])
    for i in range(e.shape[1]):
        total = total + e[:, i] * e[:, i]
    return total


def _gram(jac: np.ndarray) -> np.ndarray:
    """``_gram``: ``J Jᵀ (k, nrow, nrow)`` with each entry summed over the joints in order."""
    nrow, m = jac.shape[1], jac.shape[2]
    rows, cols = np.tril_indices(nrow)
    products = jac[:, rows, :] * jac[:, cols, :]
    s = np.zeros(products.shape[:2])
    for j in range(m):
        s = s + products[:, :, j]
    out = np.empty((jac.shape[0], nrow, nrow))
    out[:, rows, cols] = s
    out[:, cols, rows] = s
    return out


def _solve_spd(a: np.ndarray, shift: np.ndarray, rhs: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """``_solve_spd``: solves ``(a + shift I) x = rhs`` for ``a (k, n, n)``, ``shift (k,)``,
    ``rhs (k, n)`` by Cholesky; returns (solved ``(k,)``, ``x (k, n)``). A lane whose
    matrix is not numerically positive definite is not solved (its ``x`` is garbage)."""
    k, n = rhs.shape
    low = np.zeros((k, n, n))
    solved = np.ones(k, dtype=bool)
    for j in range(n):  # column by column: each entry by the kernel's own formula
        s = a[:, j, j] + shift
        for i in range(j):
            s = s - low[:, j, i] * low[:, j, i]
        solved &= ~(s <= 1e-300)
        low[:, j, j] = np.sqrt(s)
        if j + 1 < n:
            col = a[:, j + 1:, j]
            for i in range(j):
                col = col - low[:, j + 1:, i] * low[:, j, i][:, None]
            low[:, j + 1:, j] = col / low[:, j, j][:, None]
    y = np.empty((k, n))
    for i in range(n):
        s = rhs[:, i]
        for j in range(i):
            s = s - low[:, i, j] * y[:, j]
        y[:, i] = s / low[:, i, i]
    x = np.empty((k, n))
    for i in range(n - 1, -1, -1):
        s = y[:, i]
        for j in range(i + 1, n):
            s = s - low[:, j, i] * x[:, j]
        x[:, i] = s / low[:, i, i]
    return solved, x


def _joint_positions(rots: np.ndarray, origins: np.ndarray, frame: np.ndarray,
                     offset: np.ndarray) -> np.ndarray:
    """``joint_positions`` over lanes: ``(k, n + 1, 3)``."""
    k = rots.shape[0]
    out = np.empty((k, frame.shape[0], 3))
    fixed = frame < 0
    out[:, fixed] = offset[fixed]
    moving = np.flatnonzero(~fixed)
    if moving.size:
        f = frame[moving]
        o = offset[moving]
        r = rots[:, f]  # (k, n_moving, 3, 3)
        out[:, moving] = (origins[:, f] + r[..., 0] * o[:, 0:1] + r[..., 1] * o[:, 1:2]
                          + r[..., 2] * o[:, 2:3])
    return out


def lm_lanes(start: int, stop: int, pre_rot: np.ndarray, pre_trans: np.ndarray,
             axis: np.ndarray, kind: np.ndarray, lower: np.ndarray, upper: np.ndarray,
             target_p: np.ndarray, target_r: np.ndarray | None, use_rot: bool, w_pos: float,
             w_rot: float, q_first: np.ndarray, restarts: int, seeds: np.ndarray,
             sample_lo: np.ndarray, sample_hi: np.ndarray, jump_cost: float | None,
             lam_floor: float, max_step: float, tolerance: float, angle_tolerance: float,
             max_iterations: int, patience: int, frame: np.ndarray, offset: np.ndarray,
             *scratch_and_outputs: np.ndarray) -> None:
    """:func:`~limbik.solvers._jacobian_kernels.lm_solve_range` on elements
    ``start .. stop - 1``, all at once: the same arguments (its scratch space is not
    used) and the same outputs, bit for bit."""
    q_out, err_out, reached_out, iters_out, pos_out = scratch_and_outputs[5:]
    if stop <= start:
        return
    chain = _Chain(pre_rot, pre_trans, axis, kind, lower, upper)
    nrow = 6 if use_rot else 3
    # the outputs are written at the end only: where this raises, they are as they were
    q_best = q_out[start:stop].copy()
    err_best = err_out[start:stop].copy()
    with np.errstate(all="ignore"):
        done, total = _solve_lanes(
            chain, q_first[start:stop], target_p[start:stop],
            None if target_r is None else target_r[start:stop], nrow, w_pos, w_rot,
            restarts, seeds[start:stop], sample_lo, sample_hi, jump_cost, lam_floor,
            max_step, tolerance, angle_tolerance, max_iterations, patience, q_best, err_best)
        rots, origins, _ = chain.forward(q_best)
        positions = _joint_positions(rots, origins, frame, offset)
    q_out[start:stop] = q_best
    err_out[start:stop] = err_best
    pos_out[start:stop] = positions
    reached_out[start:stop] = done
    iters_out[start:stop] = total


def _restart(chain: _Chain, state: np.ndarray, sample_lo: np.ndarray, sample_hi: np.ndarray,
             centre: np.ndarray | None, spread: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """``uniform_restart`` (``centre`` None) or ``draw_restart`` with ``spread (k,)``: new
    states and rows ``(k, m)``."""
    q = np.empty((state.shape[0], chain.m))
    narrow = None if centre is None or spread is None else spread < 1.0
    for j in range(chain.m):
        state, u = _splitmix64(state)
        lo = sample_lo[j]
        hi = sample_hi[j]
        q[:, j] = lo + (hi - lo) * u
        if narrow is not None and narrow.any():
            assert centre is not None and spread is not None
            width = spread * (hi - lo)
            c = _py_min(_py_max(centre[:, j], lo), hi)
            lo_j = _py_max(lo, c - width)
            hi_j = _py_min(hi, c + width)
            q[:, j] = np.where(narrow, lo_j + (hi_j - lo_j) * u, q[:, j])
    return state, q


def _solve_lanes(chain: _Chain, q_first: np.ndarray, target_p: np.ndarray,
                 target_r: np.ndarray | None, nrow: int, w_pos: float, w_rot: float,
                 restarts: int, seeds: np.ndarray, sample_lo: np.ndarray,
                 sample_hi: np.ndarray, jump_cost: float | None, lam_floor: float,
                 max_step: float, tolerance: float, angle_tolerance: float,
                 max_iterations: int, patience: int, q_out: np.ndarray, err_out: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's attempts over the lanes of ``q_first (k, m)``, ``target_p (k, 3)``,
    ``target_r (k, 3, 3)`` and ``seeds (k,)``; updates ``q_out (k, m)`` and ``err_out (k,)``
    as it does and returns (reached, iterations) ``(k,)``.

    Every lane runs its own course. Each round evaluates, in one forward kinematics over
    all of them, the lanes that begin an attempt (their start point) and the lanes in an
    iteration whose damped system was solved (their trial point); then each lane takes
    the kernel's next decisions up to its next evaluation.
    """
    n = q_first.shape[0]
    m = chain.m
    warm = jump_cost is not None
    attempts = 2 + restarts + (1 if warm else 0)
    rotations = target_r if nrow == 6 else None
    # per lane (offsets from start)
    best = np.full(n, np.inf)
    total = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    from_restart = np.zeros(n, dtype=bool)
    state = np.array(seeds, dtype=np.uint64)
    att = np.zeros(n, dtype=np.int64)
    it = np.zeros(n, dtype=np.int64)
    trial = np.zeros(n, dtype=np.int64)
    q = np.zeros((n, m))
    e = np.zeros((n, nrow))
    perr = np.zeros(n)
    aerr = np.zeros(n)
    err2 = np.zeros(n)
    mu = np.ones(n)
    attempt_best = np.zeros(n)
    stall = np.zeros(n, dtype=np.int64)
    jac = np.zeros((n, nrow, m))
    gram = np.zeros((n, nrow, nrow))
    starting = np.arange(n)  # lanes that begin an attempt this round
    trying = np.arange(0)  # lanes in an iteration, with J and J Jᵀ at their point

    def charged_of(a: np.ndarray) -> np.ndarray:
        return (1 < a) & (a < attempts - 1) if warm else np.zeros(a.shape, dtype=bool)

    def polish_of(a: np.ndarray) -> np.ndarray:
        return (a == 1) | (a == attempts - 1) if warm else a > restarts

    while starting.size or trying.size:
        # the start points of new attempts
        a = att[starting]
        q_start = q_out[starting]  # polish: from the best point so far
        first = a == 0
        q_start[first] = q_first[starting[first]]
        drawn = ~first & ~polish_of(a)
        if drawn.any():
            lanes = starting[drawn]
            spread = 2.0 * (a[drawn] - 1) / restarts if warm else None
            state[lanes], q_start[drawn] = _restart(
                chain, state[lanes], sample_lo, sample_hi,
                q_first[lanes] if warm else None, spread)
        q_start = chain.clip(q_start)
        # the trial points of lanes in an iteration
        t = trying
        solved, y = _solve_spd(gram[t], mu[t] * 0.5 * err2[t] + lam_floor, e[t])
        failed = t[~solved]
        mu[failed] *= 4.0
        stepping = t[solved]
        y = y[solved]
        jt = jac[stepping]
        dq = np.zeros((stepping.size, m))
        for i in range(nrow):
            dq = dq + jt[:, i, :] * y[:, i:i + 1]
        big = np.zeros(stepping.size)
        for j in range(m):
            size = np.abs(dq[:, j])
            big = np.where(size > big, size, big)
        scale = np.where(big > max_step, max_step / big, 1.0)
        q_trial = chain.clip(q[stepping] + scale[:, None] * dq)
        # one forward kinematics for both
        lanes = np.concatenate([starting, stepping])
        q_new = np.concatenate([q_start, q_trial])
        rots, origins, axes = chain.forward(q_new)
        e_new, p_new, a_new = _pose_error(
            rots[:, -1], origins[:, -1], target_p[lanes],
            None if rotations is None else rotations[lanes], nrow, w_pos, w_rot)
        new2 = _square_sum(e_new)
        s = starting.size
        # a trial that lowers the error is taken; else the damping grows
        lower_error = new2[s:] < err2[stepping]
        taken = np.concatenate([np.ones(s, dtype=bool), lower_error])
        moved = lanes[taken]
        q[moved] = q_new[taken]
        e[moved] = e_new[taken]
        perr[moved] = p_new[taken]
        aerr[moved] = a_new[taken]
        err2[moved] = new2[taken]
        began = starting
        mu[began] = 1.0
        attempt_best[began] = err2[began]
        stall[began] = 0
        it[began] = 0
        rejected = stepping[~lower_error]
        mu[rejected] *= 4.0
        # iterations that end: taken (the stall rule), or twelve trials without a step
        trial[failed] += 1
        trial[rejected] += 1
        gave_up = np.concatenate([failed[trial[failed] >= 12], rejected[trial[rejected] >= 12]])
        still = np.concatenate([failed[trial[failed] < 12], rejected[trial[rejected] < 12]])
        stepped = stepping[lower_error]
        mu[stepped] = np.where(mu[stepped] > 2e-6, mu[stepped] * 0.5, 1e-6)
        total[gave_up] += 1
        total[stepped] += 1
        polish = polish_of(att[stepped])
        improved = np.where(polish,
                            np.sqrt(attempt_best[stepped]) - np.sqrt(err2[stepped]) > tolerance,
                            err2[stepped] < attempt_best[stepped] * 0.5)
        attempt_best[stepped] = np.where(improved, err2[stepped], attempt_best[stepped])
        stall[stepped] = np.where(improved, 0, stall[stepped] + 1)
        stalled = ~improved & (stall[stepped] > patience)
        it[stepped[~stalled]] += 1
        # lanes at a new point check it: reached, best so far, out of iterations
        checking = taken.copy()
        checking[s:][lower_error] = ~stalled
        check = lanes[checking]
        err = np.sqrt(err2[check])
        ok = perr[check] <= tolerance
        if nrow == 6:
            ok &= aerr[check] <= angle_tolerance
        better = ok | ((err < best[check]) & ~charged_of(att[check]))
        won = check[better]
        best[won] = err[better]
        from_restart[won] = charged_of(att[won])
        q_out[won] = q[won]
        err_out[won] = err[better]
        done[check[ok]] = True
        go_on = ~ok & (it[check] < max_iterations)
        iterating = checking.copy()
        iterating[checking] = go_on
        lanes_on = lanes[iterating]
        if lanes_on.size:
            # J and J Jᵀ at the new point (a joint at a limit that the gradient pushes
            # further out stays put)
            j_new = chain.jacobian(origins[iterating], axes[iterating], nrow, w_pos, w_rot)
            q_on = q[lanes_on]
            at_limit = (q_on <= chain.lower) | (q_on >= chain.upper)
            if at_limit.any():
                g = np.zeros(q_on.shape)
                e_on = e[lanes_on]
                for i in range(nrow):
                    g = g + j_new[:, i, :] * e_on[:, i:i + 1]
                out = (((q_on <= chain.lower) & (g < 0.0))
                       | ((q_on >= chain.upper) & (g > 0.0)))
                j_new = np.where((at_limit & out)[:, None, :], 0.0, j_new)
            jac[lanes_on] = j_new
            gram[lanes_on] = _gram(j_new)
            trial[lanes_on] = 0
        # attempts that end
        ended = np.concatenate([check[~ok & ~go_on], gave_up, stepped[stalled]])
        charged = ended[charged_of(att[ended])]
        if charged.size:
            err = np.sqrt(err2[charged])
            assert jump_cost is not None
            score = err + jump_cost * chain.jump(q[charged], q_first[charged])
            wins = score < best[charged]
            won = charged[wins]
            best[won] = score[wins]
            from_restart[won] = True
            q_out[won] = q[won]
            err_out[won] = err[wins]
        att[ended] += 1
        next_attempt = att[ended] < attempts
        if warm:
            next_attempt &= (att[ended] < attempts - 1) | from_restart[ended]
        starting = np.sort(ended[next_attempt])
        trying = np.sort(np.concatenate([still, lanes_on]))
    return done, total
