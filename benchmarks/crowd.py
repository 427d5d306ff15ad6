"""A crowd's feet planted per frame: one batched ``FootPlanter`` against one per leg.

``n`` characters walk side by side over hills (seed 000's loop: a ray down from each
hip, the two-joint solve, the tweens), stepped at 60 Hz. Timed in one run, each the
minimum over ``--repeat`` runs of ``--frames`` frames: one ``FootPlanter`` stepping all
``n`` legs per call, and ``n`` planters stepped one after the other (the unbatched
loop). Printed: the time per leg in each, their ratio, and the largest difference of
the hip and knee C0s (quaternion and position) of the last frame between the two (they
solve the same legs).

    PYTHONPATH=src python benchmarks/crowd.py [--legs 10 100 1000] [--frames 30]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from limbik import Frame, Terrain
from limbik.rigs import FootPlanter


def torsos(terrain: Terrain, n: int, frame: int) -> Frame:
    """The lower torsos of ``n`` walkers, 0.6 m/s along +z, 0.3 m apart."""
    x = 0.3 * np.arange(n) - 0.15 * n
    z = np.full(n, -3.0 + 0.01 * frame)
    y = terrain.height(x + 0.5, z) + 1.9
    return Frame.from_translation(np.c_[x, y, z])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--legs", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    terrain = Terrain.hills(seed=1)
    hip_c0 = Frame.from_translation([0.5, -0.2, 0.0]) @ Frame.from_euler_xyz(0, math.pi, 0)
    knee_c0 = Frame.from_translation([0.0, -1.0, 0.0])
    print(f"{'legs':>6} {'batched µs/leg':>15} {'one by one µs/leg':>18} {'ratio':>7} "
          f"{'max C0 difference':>18}")
    for n in args.legs:
        frames = [torsos(terrain, n, k) for k in range(args.frames)]
        singles = [[f[i] for i in range(n)] for f in frames]
        best_batch = best_single = math.inf
        worst = 0.0
        for _ in range(args.repeat):
            crowd = FootPlanter(hip_c0, knee_c0, 1.0, 1.0, terrain, reach=1.9)
            start = time.perf_counter()
            for f in frames:
                hips, knees = crowd.step(1 / 60, f)
            best_batch = min(best_batch, time.perf_counter() - start)
            legs = [FootPlanter(hip_c0, knee_c0, 1.0, 1.0, terrain, reach=1.9)
                    for _ in range(n)]
            start = time.perf_counter()
            for row in singles:
                last = [leg.step(1 / 60, torso) for leg, torso in zip(legs, row, strict=True)]
            best_single = min(best_single, time.perf_counter() - start)
            # hip and knee C0s, rotation and position, of the last frame
            worst = max(worst, max(
                float(np.abs(np.r_[many[i].quaternion, many[i].position]
                             - np.r_[one.quaternion, one.position]).max())
                for pair, many in zip(zip(*last, strict=True), (hips, knees), strict=True)
                for i, one in enumerate(pair)))
        per = args.frames * n
        print(f"{n:>6} {best_batch / per * 1e6:>15.2f} {best_single / per * 1e6:>18.1f} "
              f"{best_single / best_batch:>6.0f}x {worst:>18.1e}")


if __name__ == "__main__":
    main()
