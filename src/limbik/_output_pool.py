"""Output arrays for large batches, in memory the process has already touched.

A batch of 10^6 two-bone limbs writes 81 MB of results. Fresh memory costs a page
fault per page on first write, and the kernel zeroes every page: on a 2-core VM
that is 9 ms of the 40 ms solve, serial in the kernel's page-fault path and far
noisier than the solve itself. So ``empty_arrays`` gives each large output array a
block of its own and takes it back when the array is gone: the array's NumPy base is
a small owner object (NumPy's views all lead to it), and a finalizer on the owner
returns the block to the pool once no array, view or buffer of it is left. The next
call asking for that size writes into pages already mapped, as with ``out=`` but
without asking.

Only arrays of ``SMALLEST`` bytes or more are pooled (malloc recycles smaller ones
itself). The pool keeps at most ``KEEP`` free blocks and ``LIMIT`` bytes, dropping the
oldest first; ``limbik.release_memory()`` drops them all. Blocks in use belong to their
arrays alone. The finalizer never waits for the lock, and a call made from inside the
pool's own work (a garbage-collected object's ``__del__``, a signal handler) takes
fresh memory instead of the lock, so nothing can deadlock.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["KEEP", "LIMIT", "SMALLEST", "empty_arrays", "release_memory"]

#: Arrays smaller than this (bytes) are plain np.empty.
SMALLEST = 1 << 22
#: Most free blocks the pool keeps.
KEEP = 8
#: Most bytes in those blocks together.
LIMIT = 1 << 29
_ALIGN = 64
_lock = threading.Lock()
_inside = threading.local()  # .busy: this thread is in the pool's own code
_free: list[np.ndarray] = []  # filed free blocks, oldest first (under _lock)
_returned: list[np.ndarray] = []  # blocks given back by finalizers, not yet filed


def _new_lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # a fork from another thread may have copied it held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


class _Owner:
    """The NumPy base of one pooled array: it exposes ``size`` bytes of ``block`` from
    byte ``skip`` and keeps the block alive while any array on it is."""

    __slots__ = ("__array_interface__", "__weakref__", "block")

    def __init__(self, block: np.ndarray, skip: int, size: int) -> None:
        self.block = block
        self.__array_interface__ = {"shape": (size,), "typestr": "|u1", "version": 3,
                                    "data": (block.ctypes.data + skip, False)}


def _give_back(block: np.ndarray) -> None:
    """Finalizer of an owner: its block joins the free blocks (the oldest leave when there
    are too many). It may run inside the pool's own code, in this thread or while another
    thread is there, so it never waits for the lock: it files the blocks only when the
    lock is free at once, and otherwise keeps at most ``KEEP`` blocks waiting."""
    if len(_returned) >= KEEP:
        return  # many given back while the pool was busy: this one is not kept
    _returned.append(block)
    if getattr(_inside, "busy", False) or not _lock.acquire(blocking=False):
        return  # the pool's own code files them when it next runs
    try:
        _file_returned()
    finally:
        _lock.release()


def empty_arrays(*specs: tuple[tuple[int, ...], Any]) -> list[np.ndarray]:
    """Uninitialised arrays of the given ``(shape, dtype)`` specs: plain ``np.empty``
    below ``SMALLEST`` bytes, else a 64-byte aligned array on a pooled block each."""
    sizes = [math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in specs]
    if max(sizes, default=0) < SMALLEST or getattr(_inside, "busy", False):
        return [np.empty(shape, dtype) for shape, dtype in specs]
    blocks = _take([size + _ALIGN if size >= SMALLEST else 0 for size in sizes])
    arrays = []
    for block, size, (shape, dtype) in zip(blocks, sizes, specs, strict=True):
        if block is None:
            arrays.append(np.empty(shape, dtype))
            continue
        owner = _Owner(block, -block.ctypes.data % _ALIGN, size)
        weakref.finalize(owner, _give_back, block).atexit = False
        arrays.append(np.asarray(owner).view(dtype).reshape(shape))
    return arrays


@contextlib.contextmanager
def _working() -> Iterator[None]:
    """The pool's own code: marked busy in this thread (a finalizer or nested call then
    keeps away from the lock), and holding the lock against other threads."""
    _inside.busy = True
    try:
        with _lock:
            yield
    finally:
        _inside.busy = False


def _take(sizes: list[int]) -> list[np.ndarray | None]:
    """For each size in bytes (0: none wanted), the newest free block of exactly that
    size, else a new one."""
    found: list[np.ndarray | None] = []
    with _working():
        _file_returned()
        for size in sizes:
            if not size:
                found.append(None)
                continue
            match = next((k for k in range(len(_free) - 1, -1, -1) if _free[k].size == size),
                         None)
            found.append(np.empty(size, dtype=np.uint8) if match is None else _free.pop(match))
    return found


def _file_returned() -> None:
    """Move the finalizers' blocks to the free list and keep it within KEEP and LIMIT,
    dropping the oldest (under _lock)."""
    while _returned:
        _free.append(_returned.pop(0))
    while len(_free) > KEEP or sum(block.size for block in _free) > LIMIT:
        _free.pop(0)


def release_memory() -> int:
    """Give back the memory limbik keeps for the outputs of large batches (see
    ``docs/guarantees.md``): every free pooled block. Returns the bytes given back.
    Blocks under live results are theirs until those are gone (then they come back)."""
    if getattr(_inside, "busy", False):  # called from inside the pool's own code
        freed = sum(block.size for block in tuple(_returned))
        del _returned[:]
        return freed
    with _working():
        _file_returned()
        freed = sum(block.size for block in _free)
        _free.clear()
    return freed
