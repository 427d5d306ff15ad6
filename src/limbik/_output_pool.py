"""Output arrays for large batches, in memory the process has already touched.

A batch of 10^6 two-bone limbs writes 81 MB of results. Fresh memory costs a page
fault per page on first write, and the kernel zeroes every page: on a 2-core VM
that is 9 ms of the 40 ms solve, serial in the kernel's page-fault path and far
noisier than the solve itself. ``empty_arrays`` carves a batch's outputs out of one
block and keeps up to ``KEEP`` such blocks; a block whose arrays the caller has
dropped (its reference count shows no array left on it) is handed out again, already
mapped. So a loop that solves a batch, uses the result and solves the next writes
into the same pages, as with ``out=`` but without asking.

Only batches of ``SMALLEST`` bytes or more are pooled (smaller arrays come from
malloc's own recycled heap). The pool tracks at most ``KEEP`` blocks and ``LIMIT``
bytes; free blocks of another size are dropped at the next pooled call, and
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

#: Outputs smaller than this (bytes, all arrays of one call together) are plain np.empty.
SMALLEST = 1 << 22
#: Most blocks the pool keeps track of, handed out or free.
KEEP = 3
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
    below ``SMALLEST`` bytes in all, else 64-byte aligned views of one pooled block."""
    total = 0
    for shape, dtype in specs:
        total += math.prod(shape) * np.dtype(dtype).itemsize
    if total < SMALLEST:
        return [np.empty(shape, dtype) for shape, dtype in specs]
    spans = []
    total = 0
    for shape, dtype in specs:
        size = math.prod(shape) * np.dtype(dtype).itemsize
        spans.append((total, size))
        total += -(-size // _ALIGN) * _ALIGN
    block = _take(total + _ALIGN)
    skip = -block.ctypes.data % _ALIGN
    return [block[skip + start:skip + start + size].view(dtype).reshape(shape)
            for (start, size), (shape, dtype) in zip(spans, specs, strict=True)]


def _take(total: int) -> np.ndarray:
    """A free pooled block of exactly ``total`` bytes, else a new one (kept when the pool
    has room); free blocks of other sizes are dropped."""
    with _lock:
        found = None
        kept = []
        for index in range(len(_blocks)):
            in_use = _references(_blocks, index) > _FREE  # before any name holds it
            block = _blocks[index]
            if in_use:
                kept.append(block)  # arrays on it are still alive
            elif found is None and block.size == total:
                found = block
            elif block.size == total:
                kept.append(block)  # a spare of this size, for a caller holding two
        if found is None:
            found = np.empty(total, dtype=np.uint8)
            if len(kept) < KEEP and sum(block.size for block in kept) + total <= LIMIT:
                kept.append(found)
        else:
            kept.insert(0, found)
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
