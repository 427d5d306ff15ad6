"""URDF parsing time against the number of links: generated chains of 10,000 to 80,000
links, read as a link/joint tree and as a short chain. Prints the CPU seconds of each
(best of ``--repeat``) and the ratio to the smallest file per link, which stays near 1
when parsing is linear.

    PYTHONPATH=src python benchmarks/urdf_parse.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from limbik.chain.urdf import parse_urdf, read_urdf_tree


def urdf_text(links: int) -> str:
    parts = ['<robot name="generated">']
    parts += [f'<link name="l{k}"/>' for k in range(links)]
    parts += [f'<joint name="j{k}" type="revolute"><parent link="l{k}"/>'
              f'<child link="l{k + 1}"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>'
              f'<limit lower="-1" upper="1"/></joint>' for k in range(links - 1)]
    return "\n".join(parts + ["</robot>"])


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    first = None
    with tempfile.TemporaryDirectory() as folder:
        for links in (10_000, 20_000, 40_000, 80_000):
            text = urdf_text(links)
            path = Path(folder) / f"chain{links}.urdf"
            path.write_text(text)
            tree = best(lambda p=path: read_urdf_tree(p), args.repeat)
            short = best(lambda t=text: parse_urdf(t, "l0", "l5"), args.repeat)
            first = first or tree / links
            print(f"{links:6d} links: tree {tree:.2f} s, short chain {short:.2f} s, "
                  f"tree time per link {tree / links / first:.2f} × that of 10,000")


if __name__ == "__main__":
    main()
