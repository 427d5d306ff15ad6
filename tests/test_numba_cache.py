"""Numba's on-disk cache: saves from processes (here threads) that compile the same kernel
at once keep every entry, each with its own data file; an edit to any module with compiled
code compiles limbik's kernels again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from numba.core import caching

import limbik
import limbik._numba_cache  # installs the lock, as every kernel module does
from limbik._numba_cache import exclusive


def _slow_index_reads(monkeypatch):
    """Widen the window between reading the index and writing it back."""
    read = caching.IndexDataCacheFile._load_index

    def slow(self):
        overloads = read(self)
        time.sleep(0.2)
        return overloads

    monkeypatch.setattr(caching.IndexDataCacheFile, "_load_index", slow)


def test_concurrent_saves_of_one_kernel_keep_every_entry(tmp_path, monkeypatch):
    """Two saves that both read the index before either writes it: without the lock the
    second write drops the first entry and both pick data file 1."""
    _slow_index_reads(monkeypatch)
    keys = [("signature a", "cpu"), ("signature b", "cpu")]

    def save(key):
        cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
        cache.save(key, {"machine code for": key})

    threads = [threading.Thread(target=save, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    index = cache._load_index()
    assert set(index) == set(keys)
    assert len(set(index.values())) == 2  # a data file each
    for key in keys:
        assert cache.load(key) == {"machine code for": key}


def test_the_lock_is_exclusive_and_released(tmp_path):
    path = str(tmp_path / "index.lock")
    inside = []

    def hold(name):
        with exclusive(path):
            inside.append((name, "in"))
            time.sleep(0.1)
            inside.append((name, "out"))

    threads = [threading.Thread(target=hold, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # never interleaved: each block ends before the other begins
    assert [step for _, step in inside] == ["in", "out", "in", "out"]
    with exclusive(path):  # released: taken again at once
        pass


def test_without_a_lock_file_the_block_still_runs(tmp_path):
    ran = []
    with exclusive(str(tmp_path / "missing folder" / "x.lock")):
        ran.append(True)
    assert ran == [True]


def test_numbas_save_is_wrapped_once():
    import importlib

    save = caching.IndexDataCacheFile.save
    assert getattr(save, "limbik_locked", False)
    importlib.reload(limbik._numba_cache)  # installing again keeps one wrapper
    assert caching.IndexDataCacheFile.save is save


STAMP_RUN = """
import limbik
from limbik.solvers import _joint_kernels as k
arm = limbik.JointChain.from_points([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]])
limbik.jacobian_ik(arm, [1.0, 1.5, 0.5], method="dls")
stats = k.joint_solve_range.stats
print("HITS", sum(stats.cache_hits.values()), "MISSES", sum(stats.cache_misses.values()))
"""


def _kernel_cache_use(package_root, cache):
    env = {**os.environ, "PYTHONPATH": str(package_root), "NUMBA_CACHE_DIR": str(cache),
           "LIMBIK_BACKGROUND_COMPILE": "0"}
    done = subprocess.run([sys.executable, "-c", STAMP_RUN], capture_output=True, text=True,
                          timeout=300, env=env, check=True)
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("HITS"))
    hits, misses = int(line.split()[1]), int(line.split()[3])
    return hits, misses


def test_an_edit_to_a_helper_in_another_file_compiles_the_kernel_again(tmp_path):
    """joint_solve_range (in _joint_kernels.py) compiles in helpers from
    _jacobian_kernels.py; Numba alone would load its old machine code after an edit there."""
    package = tmp_path / "pkg"
    shutil.copytree(Path(limbik.__file__).parent, package / "limbik",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nb[ic]"))
    cache = tmp_path / "cache"
    assert _kernel_cache_use(package, cache)[1] >= 1  # compiled
    assert _kernel_cache_use(package, cache) == (1, 0)  # loaded
    helpers = package / "limbik" / "solvers" / "_jacobian_kernels.py"
    helpers.write_text(helpers.read_text() + "\n# an edit\n")
    hits, misses = _kernel_cache_use(package, cache)
    assert hits == 0 and misses >= 1  # compiled again
    assert _kernel_cache_use(package, cache) == (1, 0)


def test_the_stamp_covers_the_modules_with_compiled_code_only(tmp_path):
    from limbik._numba_cache import kernel_sources_stamp

    stamp = kernel_sources_stamp()
    assert len(stamp) == 64 and stamp == kernel_sources_stamp()
    from limbik.solvers import _fabrik_kernels as K

    cache_file = K.solve_chain_range._cache._cache_file
    assert cache_file._source_stamp[1] == stamp


def _stamp_of(package_root):
    code = "from limbik._numba_cache import kernel_sources_stamp; print(kernel_sources_stamp())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True,
                          env={**os.environ, "PYTHONPATH": str(package_root)})
    return done.stdout.strip()


def test_the_stamp_follows_what_kernels_import_and_linked_folders(tmp_path):
    """Compile options live in _kernel_options.py, which holds no compiled code itself;
    a package folder may be a symbolic link (an edit there counts too)."""
    package = tmp_path / "pkg"
    shutil.copytree(Path(limbik.__file__).parent, package / "limbik",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nb[ic]"))
    first = _stamp_of(package)
    assert first == _stamp_of(package)  # the same in every process
    options = package / "limbik" / "_kernel_options.py"
    options.write_text(options.read_text() + "\n# an edit\n")
    second = _stamp_of(package)
    assert second != first
    cli = package / "limbik" / "cli.py"  # no compiled code, not imported by kernels
    cli.write_text(cli.read_text() + "\n# an edit\n")
    assert _stamp_of(package) == second
    solvers = package / "limbik" / "solvers"
    elsewhere = tmp_path / "solvers_elsewhere"
    solvers.rename(elsewhere)
    solvers.symlink_to(elsewhere, target_is_directory=True)
    assert _stamp_of(package) == second
    helpers = elsewhere / "_jacobian_kernels.py"
    helpers.write_text(helpers.read_text() + "\n# an edit\n")
    assert _stamp_of(package) != second
