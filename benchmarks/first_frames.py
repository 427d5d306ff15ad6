"""First frames of a per-frame IK loop on an empty cache: tiered first calls against none.

A fresh process with an empty Numba cache solves one problem per frame along a smooth
path: a Panda pose target (``jacobian_ik``, LM, warm-started from the last frame's
joints), or a 6-joint chain reaching for a moving point (``fabrik``, from the last
frame's pose). Two loops:

- ``paced``: a 60 Hz game loop (it sleeps to the next frame);
- ``tight``: the same calls back to back.

Each loop runs ``--repeat`` times in each mode, the modes alternated: with tiered first
calls (the default: the first calls run the kernel's Python source while it compiles in
the background, see ``limbik/_tiered.py``) and with ``LIMBIK_BACKGROUND_COMPILE=0`` (the
first call compiles in the foreground). Printed per loop and mode: the slowest frame, frames over 16.7 ms,
the time until every frame is done, the time until the compiled kernel was in place (seen
after a frame), and the ratios measured in this run. The solver modules are imported
before the loop, as a game would at load time.

    PYTHONPATH=src python benchmarks/first_frames.py [--frames 360] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PANDA = Path(os.environ.get("LIMBIK_SHARED_DATA", ROOT.parent / "shared" / "data")) / "urdf" / "panda_example-robot-data.urdf"

CHILD = """
import json, sys, time
import numpy as np
import limbik
frames, paced, solver = int(sys.argv[2]), sys.argv[3] == "paced", sys.argv[4]
s = 0.5 * (1.0 - np.cos(np.pi * np.arange(frames) / frames))
if solver == "jacobian_ik":
    from limbik.solvers._joint_problem import _LM_RANGE as tiered
    arm = limbik.load_urdf(sys.argv[1], "panda_link0", "panda_hand_tcp")
    ends = arm.random_q(2, np.random.default_rng(3))
    poses = arm.forward(ends[0] + s[:, None] * (ends[1] - ends[0]))
    state = None
    def step(i):
        global state
        state = limbik.jacobian_ik(arm, poses[i], q0=state).q
else:
    import importlib
    tiered = importlib.import_module("limbik.solvers.fabrik")._CHAIN_RANGE
    state = np.c_[np.zeros(6), np.arange(6.0) * 0.3, np.zeros(6)]
    goals = np.c_[0.8 * np.sin(2.0 * np.pi * s), 1.0 + 0.3 * s, 0.5 * np.cos(np.pi * s)]
    def step(i):
        global state
        state = limbik.fabrik(state, goals[i]).positions
took = []
compiled = None
start = time.perf_counter()
for i in range(frames):
    begin = time.perf_counter()
    step(i)
    took.append(time.perf_counter() - begin)
    if compiled is None and tiered.kernel.signatures:
        compiled = time.perf_counter() - start
    if paced:
        time.sleep(max(0.0, start + (i + 1) / 60.0 - time.perf_counter()))
done = time.perf_counter() - start
from limbik._tiered import wait_for_compilations
wait_for_compilations()
if compiled is None:
    compiled = time.perf_counter() - start
print(json.dumps({"worst": max(took), "late": sum(t > 1 / 60 for t in took), "done": done,
                  "compiled": compiled}))
"""


def run(solver: str, loop: str, tiered: bool, frames: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"),
                   LIMBIK_BACKGROUND_COMPILE="1" if tiered else "0")
        done = subprocess.run([sys.executable, "-c", CHILD, str(PANDA), str(frames), loop,
                               solver],
                              env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=360)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"{args.frames} frames, empty cache; {args.repeat} runs, modes "
          "alternated (slowest frame and late frames: the worst run; times: the best)")
    print(f"{'solver':<12} {'loop':<6} {'tiered':<7} {'worst ms':>9} {'late':>5} "
          f"{'done s':>7} {'compiled s':>11}")
    for solver in ("jacobian_ik", "fabrik"):
        for loop in ("paced", "tight"):
            best: dict[bool, dict[str, float]] = {}
            for _ in range(args.repeat):
                for tiered in (True, False):
                    r = run(solver, loop, tiered, args.frames)
                    b = best.setdefault(tiered, r)
                    best[tiered] = {k: (max if k in ("worst", "late") else min)(b[k], r[k])
                                    for k in r}
            for tiered in (True, False):
                b = best[tiered]
                print(f"{solver:<12} {loop:<6} {'on' if tiered else 'off':<7} "
                      f"{1e3 * b['worst']:9.1f} {int(b['late']):5d} {b['done']:7.2f} "
                      f"{b['compiled']:11.2f}")
            on, off = best[True], best[False]
            print(f"{solver} {loop}: slowest frame {off['worst'] / on['worst']:.1f}x shorter "
                  f"with tiered first calls; all frames done in {on['done'] / off['done']:.2f}x "
                  f"the time, compiled kernel in place after "
                  f"{on['compiled'] / off['compiled']:.2f}x the time", flush=True)


if __name__ == "__main__":
    main()
