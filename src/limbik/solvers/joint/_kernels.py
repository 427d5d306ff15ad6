"""Compiled batch loop of the joint-space solvers: restarts, stall detection, best result.

:func:`joint_solve_range` runs one step rule per call, chosen by an integer code: the
Jacobian rules of :mod:`limbik.solvers.joint._jacobian_kernels` (``METHOD_TRANSPOSE``,
``METHOD_PINV``, ``METHOD_DLS``, ``METHOD_SVD_DLS``) or a CCD sweep of
:mod:`limbik.solvers._ccd_kernels` (``METHOD_CCD``, inlined at compile time).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from limbik.solvers._ccd_kernels import ccd_sweep
from limbik.solvers.joint._jacobian_kernels import (
    _NO_ALLOCATION,
    _clip_q,
    _fill_jacobian,
    _pose_error,
    _step,
    chain_fk,
    draw_restart,
    joint_positions,
    jump_size,
    thread_scratch,
    uniform_restart,
)

#: Step rule code of a CCD sweep (the Jacobian rules are 0 to 3).
METHOD_CCD = 4


@njit(nogil=True, **_NO_ALLOCATION)
def joint_solve_range(start, stop, pre_rot, pre_trans, axis, kind, lower, upper,
                target_p, target_r, use_rot, w_pos, w_rot,
                q_first, restarts, seeds, sample_lo, sample_hi, jump_cost, method, lam,
                cutoff, max_step, tolerance, angle_tolerance, max_iterations, patience,
                frame, offset, wr_buf, wp_buf, wa_buf, e_buf, q_buf, jac, dq, work, tip_r,
                alt, q_out, err_out, reached_out, iters_out,
                pos_out):  # pragma: no cover - compiled
    """Joint-space IK of batch elements ``start .. stop - 1``.

    The chain comes as :attr:`JointChain.kernel_arrays`.

    ``target_p (B, 3)``, ``target_r (B, 3, 3)`` (ignored unless ``use_rot``),
    ``q_first (B, m)``: first starts; then up to ``restarts`` starts uniform in
    ``[sample_lo, sample_hi]`` (m,), drawn from a generator seeded with ``seeds[b]``, are
    tried in turn until one reaches the target. With a ``jump_cost`` (a warm start),
    an unreached first attempt runs on once more from its best point before the
    restarts, restart ``r`` of ``R`` is drawn within ``r / R`` of the box around the
    warm start (:func:`~limbik.solvers.joint._jacobian_kernels.draw_restart`), and an
    unreached restart counts its error plus ``jump_cost`` times its jump from the warm
    start (:func:`~limbik.solvers.joint._jacobian_kernels.jump_size`) against the first
    attempt's best effort (``jump_cost=None``: restarts from the whole box, the best of
    all attempts). Each
    iteration is one step of ``method``; ``lam`` is the Jacobian rules' damping and CCD's
    motion-cost radius (:func:`~limbik.solvers._ccd_kernels.ccd_sweep`); ``cutoff`` and
    ``max_step`` are used by the Jacobian rules only.
    An attempt ends when the target is reached, after ``max_iterations`` steps, or when
    the error has not dropped by 0.1 % for ``patience`` steps. Writes the best
    ``q_out (B, m)``, its ``err_out (B,)`` (weighted pose error norm), ``reached_out (B,)``,
    the iterations used over all attempts ``iters_out`` and the joint positions at the
    best ``q``, ``pos_out (B, n + 1, 3)``, placed by ``frame``, ``offset``
    (:attr:`JointChain.position_map`).

    Scratch space, from :func:`joint_scratch` (the kernel allocates nothing, which keeps
    it small to compile): ``wr_buf (1, m + 1, 3, 3)``, ``wp_buf (1, m + 1, 3)``,
    ``wa_buf (1, m, 3)``, ``e_buf (1, 6)``, ``q_buf (1, m)`` (the helpers' one slot),
    ``jac (6, m)``, ``dq (m,)``, ``work (4, 6, 6)`` (None for CCD), ``tip_r (3, 3)``
    (None for the Jacobian rules) and ``alt (1, m)`` (a charged restart's best point).
    """
    # a warm start that does not reach the target runs on from its best point (att 1)
    # before the restarts (``jump_cost`` None, a cold start, compiles without the warm
    # start's code: every use of it sits under a ``jump_cost is (not) None`` test, which
    # Numba prunes for None)
    first_restart = 1 if jump_cost is None else 2
    attempts = first_restart + restarts
    m = axis.shape[0]
    nrow = 6 if use_rot else 3
    lam2 = lam * lam
    # one slot of the helpers' slot buffers, and views of it for the step rules
    s = np.intp(0)
    wr = wr_buf[0]
    wp = wp_buf[0]
    wa = wa_buf[0]
    e = e_buf[0]
    q = q_buf[0]
    state = np.uint64(0)
    for b in range(start, stop):
        best = np.inf
        total = 0
        done = False
        for att in range(attempts):
            # after a warm start, a restart's best point is charged for its jump from the
            # warm start and compared with the best so far once the restart has ended
            charged = False
            if jump_cost is not None:
                charged = att >= first_restart
            alt_err = np.inf
            if att == 0:
                for k in range(m):
                    q[k] = q_first[b, k]
            elif att < first_restart:
                for k in range(m):
                    q[k] = q_out[b, k]
            else:
                if att == first_restart:
                    state = seeds[b]
                if jump_cost is not None:
                    # a warm start's restarts widen from it: restart r of R within r / R
                    state = draw_restart(state, q_buf, s, sample_lo, sample_hi, q_first, b,
                                         2.0 * (att - 1) / restarts)
                else:
                    state = uniform_restart(state, q_buf, s, sample_lo, sample_hi)
            _clip_q(q_buf, s, lower, upper, kind)
            attempt_best = np.inf
            stall = 0
            for it in range(max_iterations + 1):
                chain_fk(pre_rot, pre_trans, axis, kind, q_buf, s, wr_buf, wp_buf, wa_buf)
                perr, aerr = _pose_error(wr_buf, wp_buf, s, m, target_p, target_r, b, w_pos,
                                         w_rot, use_rot, e_buf)
                err = 0.0
                for i in range(nrow):
                    err += e[i] * e[i]
                err = math.sqrt(err)
                ok = perr <= tolerance and (not use_rot or aerr <= angle_tolerance)
                if ok or (err < best and not charged):
                    best = err
                    for k in range(m):
                        q_out[b, k] = q[k]
                    err_out[b] = err
                elif charged and err < alt_err:
                    alt_err = err
                    for k in range(m):
                        alt[0, k] = q[k]
                if ok:
                    done = True
                    break
                if it == max_iterations:
                    break
                if err < attempt_best * (1.0 - 1e-3):
                    attempt_best = err
                    stall = 0
                else:
                    stall += 1
                    if stall > patience:
                        break
                # One step rule is compiled in: CCD gets ``work`` None, the Jacobian rules
                # ``tip_r`` None, and Numba prunes the branch of the one that is None.
                if tip_r is not None:
                    ccd_sweep(q, wr, wp, wa, kind, lower, upper, target_p[b], target_r[b],
                              use_rot, w_pos, w_rot, lam2, tip_r)
                if work is not None:
                    # the Jacobian step is written out here: as a call it costs ~10 %
                    _fill_jacobian(wp_buf, wa_buf, s, kind, m, nrow, w_pos, w_rot, jac)
                    _step(method, jac, e, nrow, m, lam2, cutoff, dq, work)
                    # limit the largest joint change of one step
                    big = 0.0
                    for k in range(m):
                        if abs(dq[k]) > big:
                            big = abs(dq[k])
                    scale = max_step / big if big > max_step else 1.0
                    for k in range(m):
                        q[k] += scale * dq[k]
                    _clip_q(q_buf, s, lower, upper, kind)
                total += 1
            if jump_cost is not None:
                if charged and not done and alt_err < np.inf:
                    jump = jump_size(alt, s, q_first, b, kind, lower, upper)
                    score = alt_err + jump_cost * jump
                    if score < best:
                        best = score
                        for k in range(m):
                            q_out[b, k] = alt[0, k]
                        err_out[b] = alt_err
            if done:
                break
        reached_out[b] = done
        iters_out[b] = total
        for k in range(m):
            q[k] = q_out[b, k]
        chain_fk(pre_rot, pre_trans, axis, kind, q_buf, s, wr_buf, wp_buf, wa_buf)
        joint_positions(wr, wp, frame, offset, pos_out[b])


def _joint_arrays(m: int) -> tuple[np.ndarray, ...]:
    return (np.empty((1, m + 1, 3, 3)), np.empty((1, m + 1, 3)), np.empty((1, m, 3)),
            np.empty((1, 6)), np.empty((1, m)), np.empty((6, m)), np.empty(m),
            np.zeros((4, 6, 6)), np.empty((3, 3)), np.empty((1, m)))


def joint_scratch(m: int, method: int) -> tuple[np.ndarray | None, ...]:
    """Scratch arrays of :func:`joint_solve_range` for a chain of ``m`` movable joints and
    step rule ``method``, kept per thread (:func:`thread_scratch`); the argument of the
    other kind of step rule is None (``work`` for CCD, ``tip_r`` for a Jacobian rule)."""
    *common, work, tip_r, alt = thread_scratch("joint", m, _joint_arrays)
    ccd = method == METHOD_CCD
    return (*common, None if ccd else work, tip_r if ccd else None, alt)
