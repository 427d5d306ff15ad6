"""Two-bone IK speed: limbik.two_bone against NumPy, pure Python and a C loop, in one run.

    PYTHONPATH=src python benchmarks/two_bone.py [--full]

All four run the same algorithm (pole mode, "extend" policy) on the same random inputs:
roots, targets and poles of shape (N, 3) and lengths of shape (N,). The C loop does
exactly the work of limbik's compiled element solve in that mode (its scale-safe norms,
Heron's sine, the pole's rescaling); the NumPy and pure-Python baselines leave out the
rescaling, which changes nothing at these scales. Printed figures are
ratios measured in this run; "x faster" means the other implementation's best time
divided by limbik's. The pure-Python loop is timed on 10^5 elements and scaled to 10^6
unless --full is given. The C loop (benchmarks/two_bone_c.c) is compiled here with
gcc -O3 -march=native -ffast-math and called through ctypes.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import limbik
from limbik._runtime.batch_threads import run_range
from limbik.solvers.two_bone import _kernels as kernels

HERE = Path(__file__).resolve().parent
RTOL = 1e-9


# ----------------------------------------------------------------------------- baselines


def numpy_two_bone(root, target, pole, l1, l2):
    """The same algorithm written with NumPy array operations."""
    d = target - root
    dist = np.sqrt(np.einsum("ij,ij->i", d, d))
    reach = l1 + l2
    fold = np.abs(l1 - l2)
    ok = dist > 1e-15 * reach
    u = np.where(ok[:, None], d / np.where(ok, dist, 1.0)[:, None], np.array([0.0, 0.0, -1.0]))
    dc = np.clip(dist, fold, reach)
    pos_dc = dc > 0
    inv = 1.0 / (2.0 * l1 * np.where(pos_dc, dc, 1.0))
    cos_a = np.where(pos_dc, np.clip(((l1 - l2) * (l1 + l2) + dc * dc) * inv, -1, 1), 0.0)
    sin_a = np.where(pos_dc, np.minimum(
        np.sqrt((reach + dc) * (reach - dc)) * np.sqrt((dc + fold) * (dc - fold)) * inv, 1), 1.0)
    p = pole - root
    n = p - np.einsum("ij,ij->i", p, u)[:, None] * u
    pn2 = np.einsum("ij,ij->i", n, n)
    use = (pn2 > 1e-18 * np.einsum("ij,ij->i", p, p)) & (pn2 > 0)
    n = n - np.einsum("ij,ij->i", n, u)[:, None] * u
    n = n / np.sqrt(np.where(use, np.einsum("ij,ij->i", n, n), 1.0))[:, None]
    x, y, z = u[:, 0], u[:, 1], u[:, 2]
    r2 = x * x + y * y
    behind = (z > 0) & (r2 == 0)
    s = np.where(z > 0, (1 + z) / np.where(behind, 1.0, r2), 1 / (1 - np.minimum(z, 0)))
    rolled = np.stack([x * y * s, y * y * s - 1, -y], axis=-1)
    rolled[behind] = (0.0, 1.0, 0.0)
    n = np.where(use[:, None], n, rolled)
    mid = root + (l1 * cos_a)[:, None] * u + (l1 * sin_a)[:, None] * n
    end = root + dc[:, None] * u
    err = np.abs(dist - dc)
    return np.stack([root, mid, end], axis=1), err, err <= RTOL * reach


def python_two_bone(root, target, pole, l1, l2):
    """The same algorithm as a plain Python loop over lists of floats."""
    positions, errors, reached = [], [], []
    for (rx, ry, rz), (tx, ty, tz), (hx, hy, hz), a1, a2 in zip(root, target, pole, l1, l2, strict=True):
        dx, dy, dz = tx - rx, ty - ry, tz - rz
        reach, fold = a1 + a2, abs(a1 - a2)
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dist > 1e-15 * reach:
            ux, uy, uz = dx / dist, dy / dist, dz / dist
        else:
            ux, uy, uz = 0.0, 0.0, -1.0
        dc = min(max(dist, fold), reach)
        if dc > 0:
            inv = 1 / (2 * a1 * dc)
            cos_a = min(max(((a1 - a2) * (a1 + a2) + dc * dc) * inv, -1.0), 1.0)
            sin_a = min(math.sqrt((reach + dc) * (reach - dc)) * math.sqrt((dc + fold) * (dc - fold)) * inv, 1.0)
        else:
            cos_a, sin_a = 0.0, 1.0
        px, py, pz = hx - rx, hy - ry, hz - rz
        t = px * ux + py * uy + pz * uz
        nx, ny, nz = px - t * ux, py - t * uy, pz - t * uz
        pn2 = nx * nx + ny * ny + nz * nz
        if pn2 > 1e-18 * (px * px + py * py + pz * pz) and pn2 > 0:
            t = nx * ux + ny * uy + nz * uz
            nx, ny, nz = nx - t * ux, ny - t * uy, nz - t * uz
            inv = 1 / math.sqrt(nx * nx + ny * ny + nz * nz)
            nx, ny, nz = nx * inv, ny * inv, nz * inv
        else:
            nx, ny, nz = kernels.rolled_bend.py_func(ux, uy, uz)
        a, b = a1 * cos_a, a1 * sin_a
        positions.append(((rx, ry, rz), (rx + a * ux + b * nx, ry + a * uy + b * ny, rz + a * uz + b * nz),
                          (rx + dc * ux, ry + dc * uy, rz + dc * uz)))
        err = abs(dist - dc)
        errors.append(err)
        reached.append(err <= RTOL * reach)
    return positions, errors, reached


def build_c() -> Callable | None:
    gcc = shutil.which("gcc")
    if gcc is None:
        print("gcc not found: C comparison skipped")
        return None
    out = Path(tempfile.mkdtemp()) / "two_bone_c.so"
    subprocess.run([gcc, "-O3", "-march=native", "-ffast-math", "-shared", "-fPIC",
                    str(HERE / "two_bone_c.c"), "-o", str(out), "-lm"], check=True)
    lib = ctypes.CDLL(str(out))
    fn = lib.two_bone_pole
    ptr = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    fn.argtypes = [ctypes.c_int64, ptr, ptr, ptr, ptr, ptr, ctypes.c_double, ptr, ptr,
                   np.ctypeslib.ndpointer(dtype=np.uint8, flags="C_CONTIGUOUS")]
    fn.restype = None

    def c_two_bone(root, target, pole, l1, l2):
        n = len(l1)
        positions = np.empty((n, 3, 3))
        error = np.empty(n)
        reached = np.empty(n, dtype=np.uint8)
        fn(n, root, target, pole, l1, l2, RTOL, positions, error, reached)
        return positions, error, reached.view(np.bool_)

    c_two_bone.into = fn  # type: ignore[attr-defined]  # the raw loop, for preallocated outputs
    return c_two_bone


# ----------------------------------------------------------------------------- timing


def best(fn: Callable[[], object], repeats: int, number: int = 1) -> float:
    """Best-of-``repeats`` seconds per call."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def best_interleaved(fns: dict[str, Callable[[], object]], repeats: int,
                     number: dict[str, int] | int = 1) -> dict[str, float]:
    """Best-of-``repeats`` seconds per call, running the candidates in turn each round
    (``number`` calls each), so load from other processes hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            count = number if isinstance(number, int) else number[name]
            start = time.perf_counter()
            for _ in range(count):
                fn()
            times[name].append((time.perf_counter() - start) / count)
    return {name: min(values) for name, values in times.items()}


def make_inputs(rng: np.random.Generator, n: int):
    root = rng.uniform(-1, 1, (n, 3))
    target = root + rng.normal(size=(n, 3))
    pole = root + rng.normal(size=(n, 3))
    l1 = rng.uniform(0.4, 1.0, n)
    l2 = rng.uniform(0.4, 1.0, n)
    return root, target, pole, l1, l2


def fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:7.2f} {unit}"
    return f"{seconds / 1e-9:7.1f} ns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="time pure Python on all 10^6 elements")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(7)
    c_two_bone = build_c()

    def limbik_two_bone(root, target, pole, l1, l2):
        return limbik.two_bone(root, target, l1, l2, pole=pole)

    limbik_two_bone(*make_inputs(rng, 4))  # compile / load the cached kernels
    print(f"limbik two_bone benchmark (numpy {np.__version__}, python {sys.version.split()[0]})")
    print("ratios are other/limbik best times: > 1 means limbik is faster\n")
    print(f"{'N':>16} {'limbik':>11} {'NumPy':>11} {'vs NumPy':>9} {'Python':>11} {'vs Python':>10}")
    rows = [("1, shape (3,)", 1, True), ("1, shape (1, 3)", 1, False), ("1000", 1000, False),
            ("1000000", 10**6, False)]
    for label, n, single in rows:
        inputs = make_inputs(rng, n)
        repeats = 5 if n == 10**6 else 20
        number = 1 if n == 10**6 else (2000 if n == 1 else 50)
        lists = [a.tolist() for a in inputs]
        if single:
            root, target, pole, l1, l2 = inputs
            args1 = (root[0], target[0], pole[0], float(l1[0]), float(l2[0]))
            run_limbik = lambda: limbik_two_bone(*args1)  # noqa: B023, E731
        else:
            run_limbik = lambda: limbik_two_bone(*inputs)  # noqa: B023, E731
        fns = {"limbik": run_limbik, "numpy": lambda: numpy_two_bone(*inputs)}  # noqa: B023
        counts = {"limbik": number, "numpy": number, "python": max(1, number // 10)}
        note = ""
        if n == 10**6:
            part = [a[:100_000] for a in lists]
            scale = 1 if args.full else 10
            fns["python"] = (lambda: python_two_bone(*lists)) if args.full else (  # noqa: B023
                lambda: python_two_bone(*part))  # noqa: B023
            note = "" if args.full else " (timed on 10^5, ×10)"
            times = best_interleaved({k: v for k, v in fns.items() if k != "python"}, repeats)
            times["python"] = best(fns["python"], 1) * scale
        else:
            fns["python"] = lambda: python_two_bone(*lists)  # noqa: B023
            times = best_interleaved(fns, repeats, counts)
        t_lim, t_np, t_py = times["limbik"], times["numpy"], times["python"]
        print(f"{label:>16} {fmt(t_lim)} {fmt(t_np)} {t_np / t_lim:8.1f}x {fmt(t_py)} "
              f"{t_py / t_lim:9.1f}x{note}")
        if n == 1000:  # agreement check of the baselines
            ref = limbik_two_bone(*inputs)
            got, _, reach = numpy_two_bone(*inputs)
            got_py = np.array(python_two_bone(*lists)[0])
            if not (np.allclose(got, ref.positions, atol=1e-12) and np.array_equal(reach, ref.reached)
                    and np.allclose(got_py, ref.positions, atol=1e-12)):
                raise SystemExit("a baseline disagrees with limbik.two_bone")

    inputs = make_inputs(rng, 10**6)
    if c_two_bone is not None:
        ref = limbik_two_bone(*inputs)
        got, _, reach = c_two_bone(*inputs)
        diff = float(np.max(np.abs(got - ref.positions)))
        same_reach = bool(np.array_equal(reach, ref.reached))
        pos = np.empty((10**6, 3, 3))
        error = np.empty(10**6)
        reached = np.empty(10**6, dtype=np.bool_)
        quat = np.array([[0.0, 0.0, 0.0, 1.0]])
        root, target, pole, l1, l2 = inputs
        times = best_interleaved({
            "limbik": lambda: limbik_two_bone(*inputs),
            "C": lambda: c_two_bone(*inputs),
            "kernel": lambda: run_range(kernels.solve_rows, len(l1), lambda: (
                root, target, pole, quat, l1, l2, kernels.MODE_POINT, kernels.POLICY_EXTEND,
                1.0, RTOL, pos, error, reached), smallest=kernels.CHUNK,
                granule=kernels.GRANULE)}, 9)
        t_lim, t_c, t_kernel = times["limbik"], times["C"], times["kernel"]
        print(f"\nN = 10^6 against a C loop (gcc -O3 -march=native -ffast-math), "
              f"max |Δposition| {diff:.1e}, same reached: {same_reach}")
        print(f"  C loop            {fmt(t_c)}")
        print(f"  limbik.two_bone   {fmt(t_lim)}   throughput {t_c / t_lim:.2f}× the C loop (goal ≥ 0.5; "
              f"{limbik.get_num_threads()} threads; both allocate fresh outputs)")
        print(f"  kernel only       {fmt(t_kernel)}   throughput {t_c / t_kernel:.2f}× the C loop "
              "(outputs preallocated, so no page faults)")

        # one core, both sides writing into preallocated outputs (a per-frame game loop)
        threads = limbik.get_num_threads()
        limbik.set_num_threads(1)
        n = len(l1)
        buffer = limbik.two_bone(root, target, l1, l2, pole=pole)
        c_pos = np.empty((n, 3, 3))
        c_err = np.empty(n)
        c_reached = np.empty(n, dtype=np.uint8)
        c_into = c_two_bone.into
        times = best_interleaved({
            "limbik": lambda: limbik.two_bone(root, target, l1, l2, pole=pole, out=buffer),
            "C": lambda: c_into(n, root, target, pole, l1, l2, RTOL, c_pos, c_err, c_reached)},
            9)
        limbik.set_num_threads(threads)
        same = bool(np.array_equal(c_reached.view(np.bool_), buffer.reached))
        print(f"\nN = 10^6 on one core, both writing into preallocated outputs "
              f"(limbik: two_bone(..., out=solution)), same reached: {same}")
        print(f"  C loop            {fmt(times['C'])}")
        print(f"  limbik.two_bone   {fmt(times['limbik'])}   throughput "
              f"{times['C'] / times['limbik']:.2f}× the C loop (goal ≥ 0.8)")
        if threads > 1:
            limbik.set_num_threads(threads)
            t_all = best(lambda: limbik.two_bone(root, target, l1, l2, pole=pole, out=buffer), 9)
            print(f"  limbik.two_bone on {threads} threads {fmt(t_all)}   throughput "
                  f"{times['C'] / t_all:.2f}× the one-core C loop")

    root, target, pole, l1, l2 = (a[0] for a in make_inputs(rng, 1))
    a1, a2 = float(l1), float(l2)
    one = [[root.tolist()], [target.tolist()], [pole.tolist()], [a1], [a2]]
    times = best_interleaved({
        "limbik": lambda: limbik.two_bone(root, target, a1, a2, pole=pole),
        "norm": lambda: np.linalg.norm(root),
        "python": lambda: python_two_bone(*one)}, 15, 2000)
    t_single, t_norm, t_py1 = times["limbik"], times["norm"], times["python"]
    print(f"\nsingle call from Python, float64 (3,) arrays, pole mode: {fmt(t_single)} "
          f"(goal ≤ 3 µs)")
    print(f"  = {t_single / t_norm:.2f}× one np.linalg.norm((3,)) call ({fmt(t_norm)}) on this machine")
    print(f"  pure-Python one-element loop {fmt(t_py1)}: limbik is {t_py1 / t_single:.2f}x faster")

    # a game frame: a few limbs per call, into the last frame's arrays
    root, target, pole, l1, l2 = make_inputs(rng, 8)
    frame = limbik.two_bone(root, target, l1, l2, pole=pole)
    rows = [(root[k], target[k], pole[k], float(l1[k]), float(l2[k])) for k in range(8)]
    times = best_interleaved({
        "batch": lambda: limbik.two_bone(root, target, l1, l2, pole=pole),
        "out": lambda: limbik.two_bone(root, target, l1, l2, pole=pole, out=frame),
        "singles": lambda: [limbik.two_bone(r, t, a, b, pole=p) for r, t, p, a, b in rows]},
        15, 1000)
    print(f"\n8 limbs per call (a frame of a game loop), pole mode: {fmt(times['batch'])}, "
          f"with out= {fmt(times['out'])}")
    print(f"  against 8 single-limb calls ({fmt(times['singles'])}): "
          f"{times['singles'] / times['batch']:.2f}x / {times['singles'] / times['out']:.2f}x "
          f"faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
