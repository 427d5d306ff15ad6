"""Two-bone IK on every CPU core against the same algorithm in PyTorch on a GPU, in one run.

    python benchmarks/two_bone_gpu.py [--sizes 1000 100000 1000000 10000000] [--float32]

The GPU peer is ``numpy_two_bone`` of ``benchmarks/two_bone.py`` (pole mode, "extend"
policy) written with PyTorch tensor operations, in float64 like limbik (``--float32``
also times it in float32). Both sides solve the same random limbs; the GPU's positions
are checked against limbik's. Printed per size: limbik's best time on all its threads
and the GPU's best time, once with the inputs already on the GPU and the outputs left
there, once including the copies from and back to host memory, as ratios measured in
this run ("x" = limbik's time over the GPU's: above 1 the GPU is faster). Needs PyTorch
and a CUDA device; exits with a message otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import limbik


def torch_two_bone(torch, root, target, pole, l1, l2, rtol=1e-9):
    """``numpy_two_bone`` in PyTorch: positions (N, 3, 3), error (N,), reached (N,)."""
    d = target - root
    dist = torch.sqrt(torch.einsum("ij,ij->i", d, d))
    reach = l1 + l2
    fold = torch.abs(l1 - l2)
    ok = dist > 1e-15 * reach
    down = torch.tensor([0.0, 0.0, -1.0], dtype=root.dtype, device=root.device)
    u = torch.where(ok[:, None], d / torch.where(ok, dist, torch.ones_like(dist))[:, None], down)
    dc = torch.minimum(torch.maximum(dist, fold), reach)
    pos_dc = dc > 0
    inv = 1.0 / (2.0 * l1 * torch.where(pos_dc, dc, torch.ones_like(dc)))
    cos_a = torch.where(pos_dc, torch.clamp(((l1 - l2) * (l1 + l2) + dc * dc) * inv, -1, 1),
                        torch.zeros_like(dc))
    sin_a = torch.where(pos_dc, torch.clamp(
        torch.sqrt((reach + dc) * (reach - dc)) * torch.sqrt((dc + fold) * (dc - fold)) * inv,
        max=1.0), torch.ones_like(dc))
    p = pole - root
    n = p - torch.einsum("ij,ij->i", p, u)[:, None] * u
    pn2 = torch.einsum("ij,ij->i", n, n)
    use = (pn2 > 1e-18 * torch.einsum("ij,ij->i", p, p)) & (pn2 > 0)
    n = n - torch.einsum("ij,ij->i", n, u)[:, None] * u
    n = n / torch.sqrt(torch.where(use, torch.einsum("ij,ij->i", n, n),
                                   torch.ones_like(pn2)))[:, None]
    x, y, z = u[:, 0], u[:, 1], u[:, 2]
    r2 = x * x + y * y
    behind = (z > 0) & (r2 == 0)
    s = torch.where(z > 0, (1 + z) / torch.where(behind, torch.ones_like(r2), r2),
                    1 / (1 - torch.clamp(z, max=0.0)))
    rolled = torch.stack([x * y * s, y * y * s - 1, -y], dim=-1)
    rolled[behind] = torch.tensor([0.0, 1.0, 0.0], dtype=root.dtype, device=root.device)
    n = torch.where(use[:, None], n, rolled)
    mid = root + (l1 * cos_a)[:, None] * u + (l1 * sin_a)[:, None] * n
    end = root + dc[:, None] * u
    err = torch.abs(dist - dc)
    return torch.stack([root, mid, end], dim=1), err, err <= rtol * reach


def make_inputs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    root = rng.normal(size=(n, 3))
    target = root + rng.normal(size=(n, 3)) * 1.5
    pole = root + rng.normal(size=(n, 3))
    l1 = rng.uniform(0.5, 1.5, n)
    l2 = rng.uniform(0.5, 1.5, n)
    return root, target, pole, l1, l2


def best(fn, repeats: int, sync=lambda: None) -> float:
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000, 10**6, 10**7])
    parser.add_argument("--float32", action="store_true", help="also time the GPU in float32")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: nothing to compare")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to compare")
        return 0
    gpu = torch.device("cuda")
    sync = torch.cuda.synchronize
    rng = np.random.default_rng(7)
    warm = make_inputs(rng, 4)
    limbik.two_bone(warm[0], warm[1], warm[3], warm[4], pole=warm[2])  # compile / load
    print(f"limbik {limbik.__version__} on {limbik.get_num_threads()} threads against "
          f"PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    print("x = limbik's best time / the GPU's: above 1 the GPU is faster\n")
    header = f"{'N':>10} {'limbik':>10} {'GPU f64':>10} {'x':>7} {'GPU f64+copies':>15} {'x':>7}"
    if args.float32:
        header += f" {'GPU f32':>10} {'x':>7}"
    print(header)
    for n in args.sizes:
        inputs = make_inputs(rng, n)
        ref = limbik.two_bone(inputs[0], inputs[1], inputs[3], inputs[4], pole=inputs[2])
        on_gpu = [torch.as_tensor(a, device=gpu) for a in inputs]
        got = torch_two_bone(torch, *on_gpu)[0].cpu().numpy()
        diff = float(np.max(np.abs(got - ref.positions)))
        if diff > 1e-9:
            raise SystemExit(f"the GPU peer disagrees with limbik.two_bone by {diff:.1e}")
        root, target, pole, l1, l2 = inputs
        t_lim = best(lambda: limbik.two_bone(root, target, l1, l2, pole=pole),  # noqa: B023
                     args.repeat)
        t_gpu = best(lambda: torch_two_bone(torch, *on_gpu), args.repeat, sync)  # noqa: B023

        def with_copies() -> None:
            moved = [torch.as_tensor(a, device=gpu) for a in inputs]  # noqa: B023
            out = torch_two_bone(torch, *moved)
            out[0].cpu().numpy()

        t_copy = best(with_copies, args.repeat, sync)
        row = (f"{n:>10} {t_lim * 1e3:8.3f}ms {t_gpu * 1e3:8.3f}ms {t_lim / t_gpu:6.2f}x "
               f"{t_copy * 1e3:13.3f}ms {t_lim / t_copy:6.2f}x")
        if args.float32:
            single = [a.float() for a in on_gpu]
            t_32 = best(lambda: torch_two_bone(torch, *single, rtol=1e-6), args.repeat,  # noqa: B023
                        sync)
            row += f" {t_32 * 1e3:8.3f}ms {t_lim / t_32:6.2f}x"
        print(row, f"(max |Δposition| {diff:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
