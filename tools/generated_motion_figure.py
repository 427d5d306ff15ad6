"""Draw docs/img/generated_motion.png: a generated-style position motion before and after
its foot clean-up (the toe's speed with the contacts, and a shin's length over time).

The motion is the Xia neutral walk from ``../shared/data/bvh/`` in SMPL's 22-joint order
at 20 fps, in metres, given a sway of the whole body (planted feet slide), per-joint
jitter (bones wobble) and a floor offset, as a network's output has them.

    PYTHONPATH=src python tools/generated_motion_figure.py [--out docs/img/generated_motion.png]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from limbik.placement.positions import footplant_positions  # noqa: E402
from limbik.viz.plots import save_figure  # noqa: E402
from positions import sources  # noqa: E402  (the benchmark's clip maker)

LEFT_TOE, LEFT_KNEE, LEFT_ANKLE = 10, 4, 7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "generated_motion.png")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    walks = sources()
    clean = max(walks, key=len)  # the neutral walk
    fps = 20.0
    t = np.arange(len(clean)) / fps
    rng = np.random.default_rng(int(os.environ.get("SEED", "1")))
    raw = clean.copy()
    raw[:, :, 0] += 0.05 * np.sin(2 * np.pi * t)[:, None]
    raw += rng.normal(scale=0.004, size=raw.shape)
    raw[:, :, 1] -= 0.03
    out, info = footplant_positions(raw, "smpl22", fps=fps)

    def speed(p: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.diff(p[:, LEFT_TOE], axis=0), axis=-1) * fps

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9.0, 6.4), dpi=100, sharex=True)
    for start, stop in info.report.contacts["left"]:
        top.axvspan(start / fps, stop / fps, color="tab:green", alpha=0.15, lw=0)
    top.plot(t[1:], speed(raw), color="0.5", ls="--", label="generated (sways and jitters)")
    top.plot(t[1:], speed(out), color="tab:blue", label="cleaned by limbik")
    top.plot([], [], color="tab:green", alpha=0.3, lw=8, label="left foot's contacts")
    top.set_ylabel("left toe's speed (m/s)")
    top.legend(loc="upper right", fontsize=9)
    for p, style, label in ((raw, dict(color="0.5", ls="--"), "generated"),
                            (out, dict(color="tab:blue"), "cleaned: one length")):
        shin = np.linalg.norm(p[:, LEFT_ANKLE] - p[:, LEFT_KNEE], axis=-1)
        bottom.plot(t, 100 * shin, label=label, **style)
    bottom.set_ylabel("left shin's length (cm)")
    bottom.set_xlabel("time (s)")
    bottom.legend(loc="upper right", fontsize=9)
    fig.suptitle("A generated walk in SMPL's order before and after footplant_positions")
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
