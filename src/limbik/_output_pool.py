"""Output arrays for large batches, in memory the process has already touched.

A batch of 10^6 two-bone limbs writes 81 MB of results. Fresh memory costs a page
fault per page on first write, and the kernel zeroes every page: on a 2-core VM
that is 9 ms of the 40 ms solve, serial in the kernel's page-fault path and far
noisier than the solve itself. ``empty_arrays`` gives each large output array its own
block and keeps the block; a block whose array the caller has dropped (its reference
count shows no array or view left on it) is handed out again, already mapped. So a
loop that solves a batch, uses the result and solves the next writes into the same
pages, as with ``out=`` but without asking. One block per array, so a result's small
array kept alone (``error``) does not keep its large one (``positions``).

Only arrays of ``SMALLEST`` bytes or more are pooled (malloc recycles smaller ones
itself). The pool tracks at most ``KEEP`` blocks and ``LIMIT`` bytes; free blocks of
sizes a pooled call does not ask for are dropped by it, and
``limbik.release_memory()`` drops every free block.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["KEEP", "LIMIT", "SMALLEST", "empty_arrays", "release_memory"]

#: Arrays smaller than this (bytes) are plain np.empty.
SMALLEST = 1 << 22
#: Most blocks the pool keeps track of, handed out or free.
KEEP = 8
#: Most bytes in those blocks together.
LIMIT = 1 << 29
_ALIGN = 64
_lock = threading.Lock()
_blocks: list[np.ndarray] = []


def _references(blocks: list[np.ndarray], index: int) -> int:
    """``sys.getrefcount`` of ``blocks[index]``: the pool's own references plus one per
    array (or other object) still holding the block."""
    return sys.getrefcount(blocks[index])


# what _references counts for a block only the pool's list holds, measured rather
# than assumed (interpreters differ in the references a call itself takes)
_FREE = _references([np.empty(0, dtype=np.uint8)], 0)


def _new_lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # a fork from another thread may have copied it held


os.register_at_fork(after_in_child=_new_lock_after_fork)


def empty_arrays(*specs: tuple[tuple[int, ...], Any]) -> list[np.ndarray]:
    """Uninitialised arrays of the given ``(shape, dtype)`` specs: plain ``np.empty``
    below ``SMALLEST`` bytes, else a 64-byte aligned view of a pooled block each."""
    sizes = [math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in specs]
    if max(sizes, default=0) < SMALLEST:
        return [np.empty(shape, dtype) for shape, dtype in specs]
    blocks = _take([size + _ALIGN if size >= SMALLEST else 0 for size in sizes])
    arrays = []
    for block, size, (shape, dtype) in zip(blocks, sizes, specs, strict=True):
        if block is None:
            arrays.append(np.empty(shape, dtype))
        else:
            skip = -block.ctypes.data % _ALIGN
            arrays.append(block[skip:skip + size].view(dtype).reshape(shape))
    return arrays


def _take(sizes: list[int]) -> list[np.ndarray | None]:
    """For each size in bytes (0: none wanted), a free pooled block of exactly that size,
    else a new one, kept when the pool has room. Free blocks of sizes not asked for are
    dropped; free blocks of an asked-for size beyond those handed out are kept as spares
    (for a caller holding the previous result while it solves the next)."""
    with _lock:
        free: list[np.ndarray] = []
        kept: list[np.ndarray] = []
        for index in range(len(_blocks)):
            in_use = _references(_blocks, index) > _FREE  # before any name holds it
            (kept if in_use else free).append(_blocks[index])
        found: list[np.ndarray | None] = []
        for size in sizes:
            match = next((k for k, block in enumerate(free) if block.size == size), None)
            found.append(free.pop(match) if size and match is not None else None)
        kept += [block for block in found if block is not None]
        kept += [block for block in free if block.size in sizes]
        for k, size in enumerate(sizes):
            if size and found[k] is None:
                block = np.empty(size, dtype=np.uint8)
                found[k] = block
                if len(kept) < KEEP and sum(b.size for b in kept) + size <= LIMIT:
                    kept.append(block)
        _blocks[:] = kept
        return found


def release_memory() -> int:
    """Give back the memory limbik keeps for the outputs of large batches (see
    ``docs/guarantees.md``): every pooled block whose arrays are all gone. Returns the
    bytes given back; blocks still holding live results stay until those are gone."""
    with _lock:
        kept = [_blocks[i] for i in range(len(_blocks)) if _references(_blocks, i) > _FREE]
        freed = sum(block.size for block in _blocks) - sum(block.size for block in kept)
        _blocks[:] = kept
    return freed
