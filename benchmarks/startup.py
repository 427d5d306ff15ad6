"""Startup: import time, and each solver family's first call, cold and warm.

For each family, a fresh Python process with an empty Numba cache (``NUMBA_CACHE_DIR``
pointed at a new temporary folder) times ``import limbik``, the first call (which
compiles the kernels it uses and writes them to the cache), and later calls. A
second fresh process on the now-filled cache times the first call again (loading
the kernels from the cache). Every figure is the minimum over ``--repeat`` runs.

Printed per family: the cold first call; "compiled", the time from the start of that
call until its kernels are compiled (the same as the first call, except where a small
first call runs the kernel's Python source while the kernel compiles in the background,
as ``jacobian_ik`` does, or a batch runs on NumPy lanes while its kernel compiles, as
``jacobian_ik``'s batches do: see ``limbik/_tiered.py``), and the CPU time until then
(with the child processes that compile), which other load on the machine inflates less
than the wall time; the cached first call; a
warm call (the third); and the ratios compiled / cold and cached / warm, measured in
this run. ``fabrik_batch`` and ``FabrikTree_batch`` time a first call on 1000 chains or
trees (the parallel driver), ``jacobian_ik_batch`` and ``jacobian_ik_pose_batch`` one on
1000 Panda position or pose targets.
Also ``import limbik`` and ``limbik --help`` against ``python -c pass`` (interpreter
start) in the same run.

    PYTHONPATH=src python benchmarks/startup.py [--repeat 3] [--family fabrik ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PANDA = Path(os.environ.get("LIMBIK_SHARED_DATA", ROOT.parent / "shared" / "data")) / "urdf" / "panda_example-robot-data.urdf"

#: family → (setup code, call code); the call is timed twice in the process.
FAMILIES = {
    "two_bone": ("", "limbik.two_bone([0, 0, 0], [0.3, 0.2, 0.1], 0.3, 0.25)"),
    "two_bone_batch": ("rng = np.random.default_rng(0)\n"
                       "targets = rng.normal(scale=0.3, size=(100_000, 3))",
                       "limbik.two_bone(np.zeros(3), targets, 0.3, 0.25)"),
    "fabrik": ("chain = np.c_[np.arange(6.0), np.zeros(6), np.zeros(6)]",
               "limbik.fabrik(chain, [2.0, 3.0, 1.0])"),
    "FabrikTree": ("tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], [[0, 0, 0], [0, 1, 0], "
                   "[0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0], [1.4, 3.4, 0]])",
                   "tree.solve({4: [-1.0, 3.0, 0.5], 6: [1.0, 3.2, -0.4]})"),
    "fabrik_batch": ("rng = np.random.default_rng(0)\n"
                     "chains = np.cumsum(rng.normal(size=(1000, 6, 3)), axis=1)\n"
                     "goals = rng.normal(scale=2.0, size=(1000, 3))",
                     "limbik.fabrik(chains, goals)"),
    "FabrikTree_batch": ("rng = np.random.default_rng(0)\n"
                         "tree = limbik.FabrikTree([-1, 0, 1, 2, 3, 2, 5], [[0, 0, 0], [0, 1, 0], "
                         "[0, 2, 0], [-0.7, 2.7, 0], [-1.4, 3.4, 0], [0.7, 2.7, 0], [1.4, 3.4, 0]])\n"
                         "goals = rng.normal(scale=2.0, size=(1000, 2, 3))",
                         "tree.solve({4: goals[:, 0], 6: goals[:, 1]})"),
    "ccd": ("chain = np.c_[np.arange(6.0), np.zeros(6), np.zeros(6)]",
            "limbik.ccd(chain, [2.0, 3.0, 1.0])"),
    "ccd_batch": ("rng = np.random.default_rng(0)\n"
                  "chains = np.cumsum(rng.normal(size=(1000, 6, 3)), axis=1)\n"
                  "goals = rng.normal(scale=2.0, size=(1000, 3))",
                  "limbik.ccd(chains, goals)"),
    "jacobian_ik": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', 'panda_hand_tcp')",
                    "limbik.jacobian_ik(arm, [0.4, 0.1, 0.5])"),
    "jacobian_ik_batch": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', 'panda_hand_tcp')\n"
                          "rng = np.random.default_rng(0)\n"
                          "targets = rng.uniform([0.1, -0.4, 0.1], [0.6, 0.4, 0.8], size=(1000, 3))",
                          "limbik.jacobian_ik(arm, targets)"),
    "jacobian_ik_pose_batch": (f"arm = limbik.load_urdf({str(PANDA)!r}, 'panda_link0', "
                               "'panda_hand_tcp')\n"
                               "goals = arm.forward(arm.random_q(1000, np.random.default_rng(0)))",
                               "limbik.jacobian_ik(arm, goals)"),
}

CHILD = """
import time
t0 = time.perf_counter()
import limbik
t1 = time.perf_counter()
import numpy as np
{setup}
import os
t2 = time.perf_counter()
c2 = sum(os.times()[:4])
{call}
t3 = time.perf_counter()
from limbik._tiered import wait_for_compilations
wait_for_compilations()
t4 = time.perf_counter()
c4 = sum(os.times()[:4])  # with the child processes that compiled
{call}
t5a = time.perf_counter()
{call}
t5 = time.perf_counter()
import json
print(json.dumps({{"import": t1 - t0, "first": t3 - t2, "compiled": t4 - t2,
                   "second": t5 - t5a, "cpu": c4 - c2}}))
"""


def run_child(code: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def wall(argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def family(name: str, repeat: int) -> dict[str, float]:
    setup, call = FAMILIES[name]
    code = CHILD.format(setup=setup, call=call)
    best = {"cold": float("inf"), "compiled": float("inf"), "cached": float("inf"),
            "warm": float("inf"), "cpu": float("inf")}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            cold = run_child(code, cache)
            cached = run_child(code, cache)
        best["cold"] = min(best["cold"], cold["first"])
        best["compiled"] = min(best["compiled"], cold["compiled"])
        best["cpu"] = min(best["cpu"], cold["cpu"])
        best["cached"] = min(best["cached"], cached["first"])
        best["warm"] = min(best["warm"], cold["second"], cached["second"])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--family", action="append", choices=list(FAMILIES))
    args = parser.parse_args()
    py = sys.executable
    base = min(wall([py, "-c", "pass"]) for _ in range(args.repeat * 3))
    imp = min(wall([py, "-c", "import limbik"]) for _ in range(args.repeat * 3))
    cli = min(wall([py, "-m", "limbik.cli", "--help"]) for _ in range(args.repeat * 3))
    print(f"python -c pass    {base:7.3f} s")
    print(f"import limbik     {imp:7.3f} s   ({imp - base:.3f} s over the interpreter, "
          f"{imp / base:.2f}x python -c pass)")
    print(f"limbik --help     {cli:7.3f} s   ({cli - base:.3f} s over the interpreter, "
          f"{cli / base:.2f}x python -c pass)")
    print(f"\nfirst call per family, minimum of {args.repeat} (fresh process each; cold = "
          "empty Numba cache)")
    print(f"{'family':<17} {'cold s':>7} {'compiled s':>11} {'(CPU s)':>8} {'cached s':>9} "
          f"{'warm ms':>9} {'compiled/cold':>14} {'cached/warm':>12}")
    for name in args.family or list(FAMILIES):
        b = family(name, args.repeat)
        print(f"{name:<17} {b['cold']:7.2f} {b['compiled']:11.2f} {b['cpu']:8.2f} "
              f"{b['cached']:9.3f} {1e3 * b['warm']:9.3f} {b['compiled'] / b['cold']:13.1f}x "
              f"{b['cached'] / b['warm']:11.1f}x", flush=True)


if __name__ == "__main__":
    main()
