"""Panda pose IK: limbik against ikpy and pytorch_kinematics on the same targets, one run.

Targets are the tip poses (position and orientation) of ``--n`` joint configurations
drawn uniformly within the Franka Panda's limits (``panda_link0`` → ``panda_hand_tcp``,
``../shared/data/urdf/``). Success: the tip within 1 mm and 0.01 rad of the target,
judged by each library's own forward kinematics of the joint values it returned.

Rows: limbik ``jacobian_ik`` (LM, the default, and DLS) batched on one thread and on
every thread, and one target per call (best of three passes over 300 targets, split
into single poses beforehand); ikpy (``inverse_kinematics`` with
``orientation_mode="all"``, one target per call, on the first ``--ikpy-n`` targets);
pytorch_kinematics ``PseudoInverseIK`` (10 retries, its defaults otherwise) batched on
the CPU (and on CUDA when torch sees a GPU). Printed: success, joint limits kept, time
per solve, and the speed ratio over each peer measured in this run.

    PYTHONPATH=src python benchmarks/arm.py [--n 1000] [--ikpy-n 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

import limbik

DATA = Path(os.environ.get("LIMBIK_SHARED_DATA",
                           Path(__file__).resolve().parents[1].parent / "shared" / "data"))
URDF = DATA / "urdf" / "panda_example-robot-data.urdf"
BASE, TIP = "panda_link0", "panda_hand_tcp"
POS_TOL, ROT_TOL = 1e-3, 1e-2  # metres, radians


def pose_errors(position, rotation, goal_p, goal_r):
    """Position distance and rotation angle between poses (arrays (..., 3), (..., 3, 3))."""
    dp = np.linalg.norm(position - goal_p, axis=-1)
    rel = rotation @ np.swapaxes(goal_r, -1, -2)
    cos = (np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0
    return dp, np.arccos(np.clip(cos, -1.0, 1.0))


def success(position, rotation, goal_p, goal_r):
    dp, da = pose_errors(position, rotation, goal_p, goal_r)
    return (dp < POS_TOL) & (da < ROT_TOL)


def run_limbik(chain, goals, method, threads, single):
    limbik.set_num_threads(threads)
    limbik.jacobian_ik(chain, goals[:32], method=method)  # compile / load the kernels
    limbik.jacobian_ik(chain, goals[0], method=method)
    if single:
        count = min(len(goals), 300)
        sub = goals[:count]
        one = [sub[i] for i in range(count)]  # the targets, split before the clock starts
        per = np.inf
        for _ in range(3):
            start = time.perf_counter()
            qs = [limbik.jacobian_ik(chain, goal, method=method).q for goal in one]
            per = min(per, (time.perf_counter() - start) / count)
        q = np.array(qs)
    else:
        best = np.inf
        for _ in range(3):
            start = time.perf_counter()
            sol = limbik.jacobian_ik(chain, goals, method=method)
            best = min(best, time.perf_counter() - start)
        per = best / len(goals)
        q = sol.q
        sub = goals
    tip = chain.forward(q)
    ok = success(tip.position, tip.rotation_matrix, sub.position, sub.rotation_matrix)
    return float(ok.mean()), bool(chain.within_limits(q, atol=0.0).all()), per


def run_ikpy(chain, goals):
    from ikpy.chain import Chain

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ik = Chain.from_urdf_file(str(URDF), base_elements=[BASE])
        mask = [link.name in chain.joint_names for link in ik.links]
        ik = Chain.from_urdf_file(str(URDF), base_elements=[BASE], active_links_mask=mask)
        # ikpy follows the first child link; check it ends at the same tip as limbik
        q_ref = chain.random_q(1, np.random.default_rng(1))[0]
        full = np.zeros(len(ik.links))
        full[np.array(mask)] = q_ref
        if not np.allclose(ik.forward_kinematics(full)[:3, 3], chain.forward(q_ref).position,
                           atol=1e-6):
            raise SystemExit("ikpy's chain does not end at panda_hand_tcp")
        p, r = goals.position, goals.rotation_matrix
        start = time.perf_counter()
        sols = [ik.inverse_kinematics(p[i], r[i], orientation_mode="all")
                for i in range(len(goals))]
        per = (time.perf_counter() - start) / len(goals)
        frames = np.array([ik.forward_kinematics(s) for s in sols])
    ok = success(frames[:, :3, 3], frames[:, :3, :3], p, r)
    q = np.array(sols)[:, np.array(mask)]
    within = bool(np.all((q >= chain.lower) & (q <= chain.upper)))
    return float(ok.mean()), within, per


def run_pytorch_kinematics(chain, goals, device):
    import pytorch_kinematics as pk
    import torch

    dtype = torch.float64
    pkc = pk.build_serial_chain_from_urdf(URDF.read_bytes(), TIP, BASE).to(dtype=dtype,
                                                                          device=device)
    limits = torch.tensor(pkc.get_joint_limits(), dtype=dtype, device=device).T
    ik = pk.PseudoInverseIK(pkc, num_retries=10, joint_limits=limits,
                            early_stopping_any_converged=True, pos_tolerance=POS_TOL,
                            rot_tolerance=ROT_TOL)
    p = torch.tensor(goals.position, dtype=dtype, device=device)
    quat = goals.quaternion  # (x, y, z, w) → pytorch3d order (w, x, y, z)
    rot = torch.tensor(np.c_[quat[:, 3], quat[:, :3]], dtype=dtype, device=device)
    target = pk.Transform3d(pos=p, rot=rot, dtype=dtype, device=device)
    ik.solve(pk.Transform3d(pos=p[:8], rot=rot[:8], dtype=dtype, device=device))  # warm-up
    if device != "cpu":
        torch.cuda.synchronize()
    start = time.perf_counter()
    sol = ik.solve(target)
    if device != "cpu":
        torch.cuda.synchronize()
    per = (time.perf_counter() - start) / len(goals)
    err = (sol.err_pos + sol.err_rot).cpu().numpy()
    best = np.argmin(err, axis=1)
    q = sol.solutions.cpu().numpy()[np.arange(len(goals)), best]
    m = pkc.forward_kinematics(torch.tensor(q, dtype=dtype, device=device)).get_matrix()
    m = m.cpu().numpy()
    ok = success(m[:, :3, 3], m[:, :3, :3], goals.position, goals.rotation_matrix)
    lim = limits.cpu().numpy()
    within = bool(np.all((q >= lim[:, 0] - 1e-9) & (q <= lim[:, 1] + 1e-9)))
    return float(ok.mean()), within, per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="pose targets")
    parser.add_argument("--ikpy-n", type=int, default=50, help="targets ikpy solves")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    chain = limbik.load_urdf(URDF, BASE, TIP)
    goals = chain.forward(chain.random_q(args.n, np.random.default_rng(args.seed)))
    most = limbik.get_num_threads()
    rows: list[tuple[str, float, bool, float]] = []
    for method in ("lm", "dls"):
        rows.append((f"limbik {method}, batch, 1 thread", *run_limbik(chain, goals, method, 1,
                                                                      False)))
        if most > 1:
            rows.append((f"limbik {method}, batch, {most} threads",
                         *run_limbik(chain, goals, method, most, False)))
        rows.append((f"limbik {method}, one target per call",
                     *run_limbik(chain, goals, method, 1, True)))
    limbik.set_num_threads(most)
    peers = {}
    try:
        peers["ikpy"] = run_ikpy(chain, goals[: args.ikpy_n])
        rows.append((f"ikpy, one per call ({min(args.ikpy_n, args.n)} targets)",
                     *peers["ikpy"]))
    except ImportError:
        print("ikpy is not installed (pip install -e '.[bench]'): skipped")
    try:
        import torch

        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for device in devices:
            peers[f"pytorch_kinematics {device}"] = run_pytorch_kinematics(chain, goals, device)
            rows.append((f"pytorch_kinematics PseudoInverseIK, {device}",
                         *peers[f"pytorch_kinematics {device}"]))
    except ImportError:
        print("pytorch_kinematics / torch is not installed: skipped")
    print(f"\nPanda pose IK, {args.n} targets; success = within {POS_TOL * 1e3:g} mm and "
          f"{ROT_TOL:g} rad by the library's own forward kinematics; {os.cpu_count()} cores")
    names = list(peers)
    print(f"{'solver':<46}{'success':>9}{'limits':>8}{'µs/solve':>10}"
          + "".join(f" {'vs ' + n:>26}" for n in names))
    for name, rate, within, per in rows:
        ratios = "".join(f" {peers[n][2] / per:>25.1f}x" for n in names)
        print(f"{name:<46}{rate:>9.1%}{('yes' if within else 'NO'):>8}{per * 1e6:>10.1f}"
              + ratios)
    times = {name: per for name, _, _, per in rows}
    for method in ("lm", "dls"):
        one = times[f"limbik {method}, one target per call"]
        batch = times[f"limbik {method}, batch, 1 thread"]
        print(f"limbik {method}: one target per call costs {one / batch:.2f}x a batched solve "
              f"on one thread ({(one - 2 * batch) * 1e6:+.1f} µs over twice the batched time)")


if __name__ == "__main__":
    main()
