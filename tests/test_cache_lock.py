"""Saves to Numba's on-disk cache from processes (here threads) that compile the same
kernel at once keep every entry, each with its own data file."""

from __future__ import annotations

import threading
import time

from numba.core import caching

import limbik._cache_lock  # installs the lock, as every kernel module does
from limbik._cache_lock import exclusive


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
    importlib.reload(limbik._cache_lock)  # installing again keeps one wrapper
    assert caching.IndexDataCacheFile.save is save
