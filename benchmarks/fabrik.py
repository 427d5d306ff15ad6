"""FABRIK benchmark in the setup of Aristidou & Lasenby (2011), Table 1.

A 10-joint unconstrained chain of unit bones (length L = 9) starts straight along
+X and solves random targets, reachable (inside the reach sphere) and
unreachable (beyond it). It prints, per tolerance (1e-3·L and 1e-6·L):

- the fraction reached (within 100 iterations), mean iterations and time per
  solve (one call per target, batch 1);
- batched throughput in chains/s at batch 1, 10³ and 10⁵;
- ratios against baselines measured in the same run on the same chain and
  targets: the seed's loop written in plain Python, and ikpy, whose chain is
  built with two revolute axes per joint (Z then Y: position-equivalent to a
  ball joint).

Run: ``python benchmarks/fabrik.py`` (``--quick`` for a short run). ikpy comes
from the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

import limbik

N_JOINTS = 10
LENGTH = float(N_JOINTS - 1)


def start_pose() -> np.ndarray:
    p = np.zeros((N_JOINTS, 3))
    p[:, 0] = np.arange(N_JOINTS)
    return p


def targets(rng: np.random.Generator, count: int, reachable: bool) -> np.ndarray:
    u = rng.normal(size=(count, 3))
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    r = rng.uniform(0.05, 0.99, size=(count, 1)) if reachable else rng.uniform(1.1, 3.0, (count, 1))
    return u * r * LENGTH


def python_fabrik(joints: list[list[float]], target: list[float], tol: float,
                  cap: int = 100) -> tuple[list[list[float]], int]:
    """The seed's chain:solve in plain Python floats (the baseline)."""
    n = len(joints)
    p = [list(j) for j in joints]
    lengths = [math.dist(p[i], p[i + 1]) for i in range(n - 1)]
    root = list(p[0])
    if math.dist(root, target) > sum(lengths):
        for i in range(n - 1):
            r = math.dist(target, p[i])
            lam = lengths[i] / r
            p[i + 1] = [(1 - lam) * a + lam * b for a, b in zip(p[i], target, strict=True)]
        return p, 0
    it = 0
    while math.dist(p[-1], target) > tol and it < cap:
        p[-1] = list(target)
        for i in range(n - 2, -1, -1):
            lam = lengths[i] / math.dist(p[i + 1], p[i])
            p[i] = [(1 - lam) * a + lam * b for a, b in zip(p[i + 1], p[i], strict=True)]
        p[0] = list(root)
        for i in range(n - 1):
            lam = lengths[i] / math.dist(p[i + 1], p[i])
            p[i + 1] = [(1 - lam) * a + lam * b for a, b in zip(p[i], p[i + 1], strict=True)]
        it += 1
    return p, it


def ikpy_chain():
    from ikpy.chain import Chain
    from ikpy.link import OriginLink, URDFLink

    links = [OriginLink()]
    for i in range(N_JOINTS - 1):
        links.append(URDFLink(name=f"j{i}z", origin_translation=[0, 0, 0] if i == 0 else [1, 0, 0],
                              origin_orientation=[0, 0, 0], rotation=[0, 0, 1]))
        links.append(URDFLink(name=f"j{i}y", origin_translation=[0, 0, 0],
                              origin_orientation=[0, 0, 0], rotation=[0, 1, 0]))
    links.append(URDFLink(name="end", origin_translation=[1, 0, 0], origin_orientation=[0, 0, 0],
                          joint_type="fixed"))
    mask = [False] + [True] * (2 * (N_JOINTS - 1)) + [False]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Chain(links, active_links_mask=mask)


def per_call(fn, items) -> float:
    t0 = time.perf_counter()
    for x in items:
        fn(x)
    return (time.perf_counter() - t0) / len(items)


def best_of(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer targets, smaller batches")
    parser.add_argument("--ikpy", type=int, default=20, help="targets solved by ikpy per case")
    args = parser.parse_args()
    rng = np.random.default_rng(2011)
    n_single = 300 if args.quick else 2000
    batches = (1, 1000, 10_000) if args.quick else (1, 1000, 100_000)
    p0 = start_pose()
    limbik.fabrik(p0, [1.0, 2.0, 3.0])  # compile (cached after the first run)

    print(f"FABRIK, {N_JOINTS}-joint unconstrained chain of unit bones (L = {LENGTH:g}), "
          "straight start along +X")
    print(f"{'tolerance':>10} {'targets':>12} {'reached':>8} {'mean it':>8} {'us/solve':>9} "
          f"{'python us':>10} {'python it':>9} {'x python':>9}")
    cases = {}
    for rel in (1e-3, 1e-6):
        tol = rel * LENGTH
        for reachable in (True, False):
            t = targets(rng, n_single, reachable)
            sol = limbik.fabrik(np.broadcast_to(p0, (n_single, N_JOINTS, 3)), t, tolerance=tol)
            if not reachable:
                assert not sol.reached.any() and np.all(sol.iterations == 0)
            us = per_call(lambda x, tol=tol: limbik.fabrik(p0, x, tolerance=tol), t) * 1e6
            py_its = []

            def run_py(x, tol=tol, py_its=py_its):
                py_its.append(python_fabrik(p0.tolist(), x.tolist(), tol)[1])

            py_us = per_call(run_py, t) * 1e6
            label = "reachable" if reachable else "unreachable"
            cases[(rel, reachable)] = (t, us)
            print(f"{rel:>8.0e}·L {label:>12} {sol.reached.mean():>8.1%} "
                  f"{sol.iterations.mean():>8.2f} {us:>9.1f} "
                  f"{py_us:>10.1f} {np.mean(py_its):>9.2f} {py_us / us:>8.0f}x")

    t, _ = cases[(1e-6, True)]
    chains = np.broadcast_to(p0, (len(t), N_JOINTS, 3))
    plain = limbik.fabrik(chains, t, tolerance=1e-6 * LENGTH)
    closed = limbik.fabrik(chains, t, tolerance=1e-6 * LENGTH, close_gap=True)
    times = {gap: per_call(lambda x, gap=gap: limbik.fabrik(p0, x, tolerance=1e-6 * LENGTH,
                                                            close_gap=gap), t)
             for gap in (False, True)}
    print(f"\nclose_gap=True on the same reachable targets at 1e-6·L: reached "
          f"{plain.reached.mean():.1%} -> {closed.reached.mean():.1%}, time per solve "
          f"{times[True] / times[False]:.2f}x plain FABRIK's")

    print("\nbatched throughput, tolerance 1e-6·L, reachable targets")
    print(f"{'batch':>8} {'chains/s':>12} {'us/chain':>9} {'x batch 1':>10}")
    base = None
    for b in batches:
        t = targets(rng, b, True)
        p = np.broadcast_to(p0, (b, N_JOINTS, 3))
        reps = 200 if b == 1 else (20 if b <= 1000 else 3)
        dt = best_of(lambda p=p, t=t: limbik.fabrik(p, t, tolerance=1e-6 * LENGTH), reps)
        rate = b / dt
        base = base or rate
        print(f"{b:>8} {rate:>12.4g} {dt / b * 1e6:>9.3f} {rate / base:>9.1f}x")

    try:
        chain = ikpy_chain()
    except ImportError:
        print("\nikpy not installed (pip install limbik[bench]); skipping the ikpy comparison")
        return
    print(f"\nlimbik vs ikpy ({2 * (N_JOINTS - 1)} revolute axes, default solver), "
          f"{args.ikpy} targets per case, same start (all angles 0 = straight along +X)")
    print(f"{'targets':>12} {'ikpy ms':>9} {'ikpy err/L':>11} {'limbik err/L':>13} "
          f"{'x (batch 1, 1e-6·L)':>20} {'x (batched, 1e-6·L)':>20}")
    q0 = np.zeros(len(chain.links))
    for reachable in (True, False):
        t, us = cases[(1e-6, reachable)]
        t = t[: args.ikpy]
        errs = []

        def run_ikpy(x, errs=errs):
            q = chain.inverse_kinematics(x, initial_position=q0)
            errs.append(np.linalg.norm(chain.forward_kinematics(q)[:3, 3] - x))

        ik_ms = per_call(run_ikpy, t) * 1e3
        sol = limbik.fabrik(np.broadcast_to(p0, (len(t), N_JOINTS, 3)), t, tolerance=1e-6 * LENGTH)
        big_t = np.resize(t, (100_000 if not args.quick else 10_000, 3))
        pb = np.broadcast_to(p0, (len(big_t), N_JOINTS, 3))
        batched_us = best_of(lambda pb=pb, big_t=big_t: limbik.fabrik(
            pb, big_t, tolerance=1e-6 * LENGTH), 3) / len(big_t) * 1e6
        label = "reachable" if reachable else "unreachable"
        print(f"{label:>12} {ik_ms:>9.2f} {np.mean(errs) / LENGTH:>11.2e} "
              f"{sol.error.mean() / LENGTH:>13.2e} {ik_ms * 1e3 / us:>19.0f}x "
              f"{ik_ms * 1e3 / batched_us:>19.0f}x")


if __name__ == "__main__":
    main()
