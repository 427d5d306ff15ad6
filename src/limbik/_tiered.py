"""Tiered first calls: a range kernel's Python source runs while the kernel compiles.

A kernel's first call in a process compiles it, which takes seconds on an empty cache.
A *range kernel* ``kernel(start, stop, *args)`` solves batch elements ``start .. stop - 1``
one by one, each independently, and writes them into output arrays. For such a kernel a
small call need not wait: :class:`TieredRangeKernel` starts the compilation in the
background and meanwhile runs the kernel's Python source (``py_func``, with every
compiled helper it calls replaced by that helper's source), one element at a time,
handing the remaining elements to the compiled kernel as soon as it is ready. The Python
source does the same IEEE double operations in the same order, so every output is the
same bits (``tests/test_tiered.py`` compares them).

- A cached kernel of a limbik module compiles in a child process, which writes Numba's
  on-disk cache; a daemon thread waits for it and loads the kernel from the cache. The
  compiler then shares neither this interpreter's lock (the Python source runs at full
  speed beside it) nor this process's exit (the child finishes the cache by itself).
  Processes that make the same first call at once share one child: each child holds a
  lock file per kernel signature beside the cache index, and a process that finds it
  held waits for that child instead of starting its own. A child that fails leaves the
  kernel to the caller, which compiles it in the foreground. ``LIMBIK_COMPILE_IN_CHILD=0``
  in the environment, an interpreter inside another application or a kernel without a
  cache: a background thread compiles it instead. That thread is not a daemon: a process
  that ends during the compilation waits for it, so the on-disk cache is written and the
  next process loads the kernel.
- :func:`wait_for_compilations` waits for both, and so does every ``os.fork`` (a child
  would otherwise inherit Numba's compiler lock held by a thread it does not have).
- Calls with more than ``max_interpreted`` elements load the kernel where Numba's on-disk
  cache holds it. Else a kernel with NumPy lanes (``lanes``: the same algorithm over many
  elements at once) runs them; another runs from the Python source, unpaced, while its
  projected time fits :data:`LARGE_CALL_BUDGET`, and otherwise waits for the compiled
  kernel.
- Where the compiler runs in a thread, it shares the interpreter lock with the Python
  source, so after the first element a small call's Python source is paced to
  :data:`INTERPRETED_SHARE` of the time since the compilation started: a loop of calls
  slows down instead of stalling the compiler, and no call waits for the whole
  compilation.
- ``LIMBIK_BACKGROUND_COMPILE=0`` in the environment turns tiering off: every first call
  then compiles in the foreground.
- :func:`compile_small_calls` ``(False)`` lets a short-lived process (``limbik demo``) run
  its small calls from the Python source where the kernel is neither compiled nor in the
  on-disk cache, compiling nothing for them: a kernel it would use for a handful of
  elements is not worth seconds of compilation before exit.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import numpy as np
from numba.core.dispatcher import Dispatcher

from limbik._batch_threads import run_range

__all__ = ["TieredRangeKernel", "compile_small_calls", "interpreted_elements", "python_source",
           "wait_for_compilations"]

#: Set to "0" to compile every kernel in the foreground on its first call.
ENVIRONMENT_SWITCH = "LIMBIK_BACKGROUND_COMPILE"

#: Set to "0" to compile in a thread of this process instead of a child process.
CHILD_SWITCH = "LIMBIK_COMPILE_IN_CHILD"

#: While a kernel compiles, a small call's Python source may run at most this fraction of
#: the time (after its first element): the compiler shares the interpreter lock with it.
INTERPRETED_SHARE = 0.2

#: Seconds of Python source a compilation may share the interpreter lock with, unpaced,
#: for calls larger than ``max_interpreted``: such a call runs from the source while that
#: time, with its projected rest, fits; otherwise it waits for the kernel (a thousand
#: FABRIK chains take about a second from the source, compiling their kernel 3.5 s).
LARGE_CALL_BUDGET = 2.0

#: Seconds a child process takes to start compiling (its interpreter and imports): a large
#: call that leaves the Python source sooner than this after the child started stops the
#: child and compiles the kernel in the foreground instead, which is done sooner.
CHILD_HEAD_START = 1.0

#: Elements per call of a kernel's NumPy lanes (:attr:`TieredRangeKernel.lanes`): a
#: thousand Panda pose targets take about a second, most of it the few slowest targets;
#: between chunks a finished compilation takes over.
LANES_CHUNK = 4096

_sources: dict[Any, Callable[..., Any]] = {}
_sources_lock = threading.RLock()
_running: list[_Compilation] = []
_running_lock = threading.Lock()
#: [whether small first calls start a background compilation, and while they do not, the
#: most elements a call may have to count as small (None: each kernel's max_interpreted)]:
#: see compile_small_calls
_compile_small: list[Any] = [True, None]
#: [elements run by the Python source in this process, over every kernel]
_interpreted_total = [0]


@contextlib.contextmanager
def compile_small_calls(enabled: bool, *, up_to: int | None = None) -> Iterator[None]:
    """For the block, in every thread: whether a small first call (at most
    ``max_interpreted`` elements) starts compiling its kernel in the background (the
    default) or runs from the Python source alone.

    Off, every small call runs the kernel where this process has it or Numba's on-disk
    cache holds it (loaded, as a first call does), and otherwise the Python source (the
    same bits, at Python's speed): nothing compiles for it. A larger call, or an element
    the Python source cannot run, still compiles the kernel in the foreground.
    ``up_to`` (off only) counts calls of up to that many elements as small instead of
    each kernel's ``max_interpreted``, batches included: where a process solves a few
    dozen problems once, their Python source takes a second where compiling a kernel
    takes several. Calls whose elements may run very long (``interpretable=False``)
    still compile. For short-lived processes such as ``limbik demo``.
    """
    if up_to is not None and (enabled or int(up_to) < 0):
        raise ValueError("up_to needs compile_small_calls(False) and a count >= 0")
    previous = list(_compile_small)
    _compile_small[:] = [bool(enabled), None if up_to is None else int(up_to)]
    try:
        yield
    finally:
        _compile_small[:] = previous


def interpreted_elements() -> int:
    """Elements run by the Python source of any kernel in this process so far."""
    return _interpreted_total[0]


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _c_hypot() -> Callable[[float, float], float] | None:
    """The C library's ``hypot``, which compiled kernels call (Python's ``math.hypot`` is
    its own algorithm and can differ in the last bit); None where it cannot be found."""
    import ctypes

    try:
        library = ctypes.CDLL("ucrtbase") if os.name == "nt" else ctypes.CDLL(None)
        func = getattr(library, "_hypot" if os.name == "nt" else "hypot")
    except (OSError, AttributeError):
        return None
    func.restype = ctypes.c_double
    func.argtypes = (ctypes.c_double, ctypes.c_double)
    return func


class _AsCompiled:
    """A module as compiled kernels compute it, for their Python source: its own
    attributes, except the functions given, which are the C library's (compiled code
    calls it for them)."""

    def __init__(self, module: Any, **functions: Any) -> None:
        self._module = module
        self.__dict__.update(functions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


_C_HYPOT = _c_hypot()
#: ``math`` with the C library's ``hypot``, and NumPy with ``math``'s scalar functions
#: (on some processors NumPy's own differ in the last bit); None: no C ``hypot`` found,
#: so no tiered calls
_COMPILED_MATH = None if _C_HYPOT is None else _AsCompiled(math, hypot=_C_HYPOT)
_COMPILED_NUMPY = None if _C_HYPOT is None else _AsCompiled(
    np, sin=math.sin, cos=math.cos, tan=math.tan, arcsin=math.asin, arccos=math.acos,
    arctan=math.atan, arctan2=math.atan2, exp=math.exp, log=math.log, sqrt=math.sqrt,
    hypot=_C_HYPOT)


def python_source(kernel: Dispatcher) -> Callable[..., Any]:
    """The plain Python function of a compiled ``kernel``: its source, with every compiled
    function it calls by a global name replaced by that function's own Python source
    (also through plain limbik functions that compiled code calls, such as
    ``register_jitable`` helpers)."""
    with _sources_lock:  # no thread sees a function whose globals are not replaced yet
        return _python_version(kernel)


def _python_version(value: Any) -> Any:
    if value is math:
        return _COMPILED_MATH
    if value is np:
        return _COMPILED_NUMPY
    if isinstance(value, Dispatcher):
        func = value.py_func
    elif isinstance(value, types.FunctionType) and value.__module__.startswith("limbik."):
        func = value
    else:
        return value
    source = _sources.get(value)
    if source is None:
        module_globals = dict(func.__globals__)
        source = _sources[value] = types.FunctionType(
            func.__code__, module_globals, func.__name__, func.__defaults__, func.__closure__)
        for name in _global_names(func.__code__):  # after the memo entry: recursion ends
            if name in module_globals:
                module_globals[name] = _python_version(module_globals[name])
    return source


class _Compilation(threading.Thread):
    """Compiles one signature of a kernel in the background; keeps its error, if any.

    Where it can (:func:`_compiles_in_child`), a child process compiles the kernel into
    Numba's on-disk cache and this thread, a daemon, then loads it: the compiler shares
    neither this process's interpreter lock nor its exit (the child finishes the cache on
    its own). While another process's child compiles the same kernel, this thread waits
    for that one instead of starting a child of its own. Where no child gives the kernel,
    ``obtained`` stays False and the caller compiles it in the foreground. Elsewhere this
    thread compiles it and is not a daemon: a process that ends during the compilation
    waits for it, so the cache is written.
    """

    def __init__(self, kernel: Dispatcher, signature: tuple[Any, ...]) -> None:
        in_child = _compiles_in_child(kernel)
        super().__init__(name=f"limbik compile {kernel.py_func.__name__}", daemon=in_child)
        self.kernel = kernel
        self.signature = signature
        #: whether a child process compiles it (this process's interpreter stays free)
        self.in_child = in_child
        #: whether this compilation gave the kernel (compiled, or loaded from the cache)
        self.obtained = False
        self.error: BaseException | None = None
        self.started = time.perf_counter()
        #: seconds spent running the kernel's Python source meanwhile
        self.interpreted = 0.0
        self._child: subprocess.Popen[bytes] | None = None
        #: the lock file of another process's child compiling this kernel, to wait on
        self._elsewhere: str | None = None
        self._cancelled = False
        self._child_lock = threading.Lock()

    def start(self) -> None:
        """Start the thread; a child process that has a compilation to do starts at once,
        from the calling thread (the new thread may wait for the interpreter lock as long
        as the caller runs Python)."""
        if self.in_child and _cache_lacks(self.kernel):
            self._spawn()
        try:
            super().start()
        except BaseException:
            self.cancel_child()
            raise

    def run(self) -> None:
        try:
            if self.in_child:
                self.obtained = ((self._child is None and self._elsewhere is None
                                  and _load_cached(self.kernel, self.signature))
                                 or self._compile_in_child())
            else:
                self.kernel.compile(self.signature)
                self.obtained = True
        except BaseException as exc:  # re-raised by the caller that waits for it
            self.error = exc
        finally:
            with _running_lock:
                if self in _running:
                    _running.remove(self)

    def cancel_child(self) -> None:
        """Stop the child process (a caller compiles the kernel in the foreground
        instead); this thread then ends without the kernel. Killing the child is safe:
        Numba replaces cache files whole, and the cache lock goes with the process."""
        with self._child_lock:
            self._cancelled = True
            if self._child is not None:
                self._child.kill()

    def _spawn(self) -> bool:
        """Start the child process with its input written, or, where another process's
        child compiles this kernel now, note its lock file to wait on; False where
        neither. The child inherits this kernel's lock file, locked here first: no other
        process starts a child for it until this one ends."""
        from limbik._compile_notice import note_compilation

        func = self.kernel.py_func
        marker = _compiling_marker(self.kernel, self.signature)
        lock = None if marker is None else _lock_now(marker)
        if lock == _HELD_ELSEWHERE:
            self._elsewhere = marker
            return True
        try:
            try:
                path = pickle.dumps(list(sys.path))
                job = pickle.dumps((func.__module__, func.__qualname__, self.signature))
            except (pickle.PicklingError, TypeError, AttributeError):
                return False
            with self._child_lock:
                if self._cancelled:
                    return False
                try:
                    child = self._child = subprocess.Popen(
                        [sys.executable, "-c", _CHILD_SOURCE], stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        pass_fds=() if lock is None else (lock,))
                except OSError:
                    return False
        finally:
            if lock is not None:
                os.close(lock)  # the child holds the lock now (or, not started, nobody)
        note_compilation(self.kernel)
        stdin = child.stdin
        assert stdin is not None
        try:
            stdin.write(path + job)  # a few kilobytes: within the pipe's buffer
        except OSError:  # it ended before it read its input (killed): it fails
            pass
        finally:
            with contextlib.suppress(OSError):
                stdin.close()
        return True

    def _compile_in_child(self) -> bool:
        """Compile in a child process (the one started already, if any), or wait for
        another process's, and load the result from the cache: whether that gave the
        kernel (not where cancelled or failed)."""
        if self._child is None and self._elsewhere is None and not self._spawn():
            return False
        if self._elsewhere is not None:
            _wait_for_lock(self._elsewhere)
        else:
            child = self._child
            assert child is not None
            child.wait()
            with self._child_lock:
                self._child = None
            if child.returncode != 0:
                return False
        return not self._cancelled and _load_cached(self.kernel, self.signature)


#: What a child process runs to compile a kernel into Numba's on-disk cache: it reads
#: sys.path, then (module, name, signature), pickled, from its standard input. (It holds
#: the kernel's lock file through a descriptor it inherited, until it ends.)
_CHILD_SOURCE = ("import pickle, sys\n"
                 "sys.path[:] = pickle.load(sys.stdin.buffer)\n"
                 "from limbik._tiered import _compile_as_child\n"
                 "_compile_as_child(sys.stdin.buffer)\n")

#: What :func:`_lock_now` gives where another process holds the lock
_HELD_ELSEWHERE = -1


def _compile_as_child(stream: Any) -> None:
    """In a child process: compile the kernel that ``stream`` names into Numba's on-disk
    cache (or load it, where another child has just cached it)."""
    import importlib

    module, name, signature = pickle.load(stream)
    getattr(importlib.import_module(module), name).compile(signature)


def _compiling_marker(kernel: Dispatcher, signature: tuple[Any, ...]) -> str | None:
    """The lock file held while a child process compiles ``kernel`` for ``signature``:
    beside the kernel's cache index, in a folder that exists; None where there is none
    (or no ``fcntl``)."""
    try:
        import fcntl  # noqa: F401  (POSIX only)
    except ImportError:
        return None
    import hashlib

    index = _cache_index(kernel)
    if index is None or not os.path.isdir(os.path.dirname(index)):
        return None
    key = hashlib.sha1(repr(signature).encode(), usedforsecurity=False).hexdigest()[:16]
    return f"{index}.{key}.compiling"


def _lock_now(marker: str) -> int | None:
    """An open descriptor of the lock file ``marker``, locked (without waiting);
    :data:`_HELD_ELSEWHERE` where another process holds the lock; None where the file
    cannot be opened or locked."""
    import fcntl

    try:
        fd = os.open(marker, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return _HELD_ELSEWHERE
    except OSError:
        os.close(fd)
        return None
    return fd


def _wait_for_lock(marker: str) -> None:
    """Wait until no process holds the lock file ``marker``."""
    import fcntl

    try:
        fd = os.open(marker, os.O_RDWR)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # (drops the interpreter lock while it waits)
    except OSError:
        pass
    finally:
        os.close(fd)  # (closing lets go of it)


def _compiles_in_child(kernel: Dispatcher) -> bool:
    """Whether a child process can compile ``kernel`` for this one: not switched off
    (:data:`CHILD_SWITCH`), this interpreter runs as a program of its own (not inside an
    application such as Blender), and the kernel is a module's own, cached on disk (what
    the child compiles reaches this process through the cache)."""
    if _switched_off(CHILD_SWITCH):
        return False
    executable = os.path.basename(sys.executable or "").lower()
    if getattr(sys, "frozen", False) or not executable.startswith(("python", "pypy")):
        return False
    func = kernel.py_func
    module = sys.modules.get(func.__module__)
    if module is None or getattr(module, func.__qualname__, None) is not kernel:
        return False
    cache = getattr(kernel, "_cache", None)
    return cache is not None and type(cache).__name__ != "NullCache"


def wait_for_compilations(*, children: bool = True) -> None:
    """Wait until every background compilation of this process has finished (with
    ``children=False``, those in this process's own threads only: a child process
    finishes the on-disk cache by itself, also after this process has ended)."""
    while True:
        with _running_lock:
            pending = [job for job in _running if children or not job.in_child]
        if not pending:
            return
        for job in pending:
            job.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=wait_for_compilations)


def _switched_off(name: str) -> bool:
    """Whether the environment variable ``name`` says "0", "false", "no" or "off"."""
    return os.environ.get(name, "1").strip() in ("0", "false", "no", "off")


def _enabled() -> bool:
    return _COMPILED_MATH is not None and not _switched_off(ENVIRONMENT_SWITCH)


class TieredRangeKernel:
    """A range kernel whose small first calls run its Python source while it compiles.

    ``kernel(start, stop, *args)`` must solve each element independently and return
    None or a number; a call returns the sum over its elements (the kernel's return for
    a compiled call). Where the Python source raises and the kernel would not (plain
    Python floats divide by zero with an exception, the kernel with inf; Python checks
    indices), the compiled kernel runs that element again from the start: rows it
    changes in place are named by ``in_place`` and put back first.

    ``variant`` in :meth:`__call__` names the kernel's argument types for this call (for
    example whether an optional argument is None); a variant marked compiled calls the
    kernel directly, which costs a set lookup over a plain call. A variant that does not
    pin the types down costs nothing worse than Numba compiling in the foreground.
    """

    def __init__(self, kernel: Any, *, max_interpreted: int = 8,
                 in_place: tuple[int, ...] = (),
                 lanes: Callable[..., Any] | None = None) -> None:
        self.kernel = kernel
        self.max_interpreted = max_interpreted
        #: the kernel's algorithm over many elements at once in NumPy (the same arguments,
        #: the same outputs bit for bit, its return summed): large first calls run it
        #: instead of the element-by-element Python source
        self.lanes = lanes
        #: positions in ``args`` of arrays whose row ``element`` the kernel updates in
        #: place: kept before the Python source runs an element, put back if it raises
        self.in_place = in_place
        #: elements run by the Python source so far (in this process)
        self.interpreted_elements = 0
        self._compiled: set[Hashable] = set()
        self._jobs: dict[Hashable, _Compilation] = {}
        self._lock = threading.Lock()

    def __call__(self, variant: Hashable, start: int, stop: int, args: tuple[Any, ...], *,
                 interpretable: bool = True) -> Any:
        """Run ``kernel(start, stop, *args)``, or its Python source while it compiles.

        ``interpretable=False`` (for example a call allowed very many iterations, whose
        elements could take seconds each in Python) waits for the compiled kernel."""
        if variant in self._compiled:
            return self.kernel(start, stop, *args)
        return self._first_calls(variant, start, stop, args, interpretable)

    def batch(self, variant: Hashable, count: int, arguments: Callable[[], tuple[Any, ...]],
              *, smallest: int, interpretable: bool = True) -> Any:
        """Run the kernel over elements ``0 .. count - 1``, on every thread once compiled.

        ``arguments()`` gives the kernel's arguments after ``start, stop``, with scratch
        space of its own: it is called once in each thread that takes part. A batch of
        under twice ``smallest`` elements (or small by :func:`compile_small_calls`) is one
        call as :meth:`__call__`. A larger batch's first call runs as much of it from the
        Python source as fits :data:`LARGE_CALL_BUDGET` while the kernel compiles (see
        :meth:`__call__`); the compiled kernel spreads the rest over the threads
        (:func:`limbik._batch_threads.run_range`). Returns the sum of the kernel's returns.
        """
        if count < 2 * smallest or (interpretable and variant not in self._compiled
                                    and not _compile_small[0]
                                    and count <= self._small_limit()):
            # one chunk: the calling thread alone
            return self(variant, 0, count, arguments(), interpretable=interpretable)
        element, total = 0, None
        if variant not in self._compiled:
            args = arguments()
            element, total = self._first_elements(variant, 0, count, args, interpretable)
            if element == count:
                return total
            # an empty range: compiles (or loads) once on this thread, not in every thread
            self._first_calls_compiled(variant, element, element, args)
        for result in run_range(self.kernel, count, arguments, smallest=smallest,
                                start=element):
            total = _sum(total, result)
        return total

    def _job(self, variant: Hashable, interpret: bool, args: tuple[Any, ...]
             ) -> _Compilation | None:
        """The background compilation for ``variant``: the running one, or one started now
        for a call whose elements may ``interpret``; None if the call should just run the
        kernel."""
        with self._lock:
            job = self._jobs.get(variant)
            if job is not None or not interpret or not _enabled():
                return job
            kernel = self.kernel
            if not isinstance(kernel, Dispatcher):  # NUMBA_DISABLE_JIT: plain Python
                return None
            signature = tuple(kernel.typeof_pyval(a) for a in args)
            if signature in kernel.overloads:
                return None
            job = _Compilation(kernel, signature)
            # listed once started (a thread that waits for it must not meet an unstarted
            # one); the job takes itself off the list when it ends, which needs this lock
            with _running_lock:
                try:
                    job.start()
                except RuntimeError:  # no thread to be had: compile in the foreground
                    return None
                _running.append(job)
            self._jobs[variant] = job
            return job

    def _small_limit(self) -> int:
        """The most elements of a small call: ``max_interpreted``, or while small calls
        compile nothing, their ``up_to`` where one is given."""
        up_to = _compile_small[1]
        return self.max_interpreted if _compile_small[0] or up_to is None else up_to

    def _first_calls(self, variant: Hashable, start: int, stop: int, args: tuple[Any, ...],
                     interpretable: bool) -> Any:
        element, total = self._first_elements(variant, start, stop, args, interpretable)
        if element < stop:
            total = _sum(total, self._first_calls_compiled(variant, element, stop, args))
        return total

    def _first_elements(self, variant: Hashable, start: int, stop: int,
                        args: tuple[Any, ...], interpretable: bool) -> tuple[int, Any]:
        """A call before ``variant`` is compiled: runs elements ``start ..`` from the Python
        source where the rules allow, and starts or waits for the compilation. Returns the
        first element not run and the sum so far; the kernel is ready for the rest (or
        compiles it in the foreground where no background compilation runs)."""
        small = stop - start <= self._small_limit()
        if (interpretable and small and not _compile_small[0] and _enabled()
                and variant not in self._jobs):
            return self._interpreted_only(start, stop, args)
        # a call larger than a small one interprets only where small calls compile, and
        # only where the on-disk cache does not hold the kernel (loaded, it runs at once)
        interpret = interpretable and (small or _compile_small[0])
        element, total, spent = start, None, 0.0
        if interpret and not small and variant not in self._jobs:
            if self._loaded(start, stop, args):
                return start, None
            if self.lanes is None and _enabled():
                # one element from the source tells whether the rest fits the budget;
                # where it does not, the kernel compiles in the foreground at once
                # (quicker than a child process, which starts an interpreter first)
                began = time.perf_counter()
                with np.errstate(all="ignore"):
                    done, total = self._run_source(python_source(self.kernel), start, args)
                spent = time.perf_counter() - began
                if not done:
                    return start, None
                element += 1
                if element == stop or spent * (stop - element) > LARGE_CALL_BUDGET:
                    return element, total
        job = self._job(variant, interpret, (start, stop, *args))
        if job is None:
            return element, total
        job.interpreted += spent
        if interpret and not small and self.lanes is not None and job.in_child:
            # (beside a compiler in this interpreter, NumPy ran at a fifth of its speed)
            element, total = self._run_lanes(job, start, stop, args)
        elif interpret:
            more, result = self._run_while_compiling(job, element, stop, args, small=small,
                                                     measured=(start, spent))
            element, total = more, _sum(total, result)
        if element < stop:
            if job.in_child and time.perf_counter() - job.started < CHILD_HEAD_START:
                # the child has barely started: quicker to compile here, in the foreground
                job.cancel_child()
                return element, total
            job.join()
        if not job.is_alive():
            if job.error is not None:
                with self._lock:  # a later call tries again
                    if self._jobs.get(variant) is job:
                        del self._jobs[variant]
                raise job.error
            if job.obtained:  # (else the caller compiles it, in the foreground)
                self._compiled.add(variant)
        return element, total

    def _run_while_compiling(self, job: _Compilation, start: int, stop: int,
                             args: tuple[Any, ...], *, small: bool,
                             measured: tuple[int, float] | None = None) -> tuple[int, Any]:
        """Run elements ``start ..`` from the Python source while ``job`` compiles; returns
        the first element not run and the sum of the returns.

        A ``small`` call runs every element while the compilation lasts; where the
        compiler shares this interpreter (``job.in_child`` false), after the first element
        the Python source takes at most :data:`INTERPRETED_SHARE` of the time since the
        compilation started. A large call runs unpaced while the Python time spent during
        this compilation, with this call's projected rest, fits :data:`LARGE_CALL_BUDGET`;
        the first element always runs, to measure (so one element may overshoot the budget: calls
        whose elements may run very long pass ``interpretable=False``). ``measured``: the
        call's first element and the seconds its elements before ``start`` took."""
        source = python_source(self.kernel)
        total = None
        element = start
        first, spent = (start, 0.0) if measured is None else measured  # by this call
        paced = small and not job.in_child
        # no NumPy warnings (as in compiled code); what Python raises goes to the kernel
        with np.errstate(all="ignore"):
            while element < stop and job.is_alive():
                if paced:
                    pause = (job.interpreted / INTERPRETED_SHARE
                             - (time.perf_counter() - job.started))
                    if job.interpreted > 0.0 and pause > 0.0:
                        job.join(pause)
                        continue
                elif not small and element > first and (
                        job.interpreted + spent / (element - first) * (stop - element)
                        > LARGE_CALL_BUDGET):
                    break
                began = time.perf_counter()
                done, result = self._run_source(source, element, args)
                if not done:
                    break
                total = _sum(total, result)
                took = time.perf_counter() - began
                spent += took
                job.interpreted += took
                element += 1
        return element, total

    def _run_lanes(self, job: _Compilation, start: int, stop: int, args: tuple[Any, ...]
                   ) -> tuple[int, Any]:
        """Run elements ``start ..`` through :attr:`lanes`, :data:`LANES_CHUNK` at a time,
        while ``job`` compiles; returns the first element not run and the sum of the
        returns. A chunk that raises is left to the kernel (the lanes write their outputs
        only once they are done)."""
        total = None
        element = start
        while element < stop and job.is_alive():
            end = min(stop, element + LANES_CHUNK)
            began = time.perf_counter()
            try:
                result = self.lanes(element, end, *args)  # type: ignore[misc]
            except (ArithmeticError, LookupError, ValueError, TypeError):
                break
            job.interpreted += time.perf_counter() - began
            self._count_interpreted(end - element)
            total = _sum(total, result)
            element = end
        return element, total

    def _loaded(self, start: int, stop: int, args: tuple[Any, ...]) -> bool:
        """Whether the kernel is compiled for these arguments' types, or now loaded from
        Numba's on-disk cache (compiling nothing)."""
        kernel = self.kernel
        if not isinstance(kernel, Dispatcher):
            return False
        signature = tuple(kernel.typeof_pyval(a) for a in (start, stop, *args))
        return signature in kernel.overloads or _load_cached(kernel, signature)

    def _interpreted_only(self, start: int, stop: int, args: tuple[Any, ...]
                          ) -> tuple[int, Any]:
        """A small call with background compilation off: the Python source runs every
        element, unless the kernel is compiled for these types or Numba's on-disk cache
        holds it (then the kernel runs them all), or an element raises in Python (the
        kernel, compiled now, runs the rest). Returns the first element left to the kernel
        and the sum so far."""
        if not isinstance(self.kernel, Dispatcher) or self._loaded(start, stop, args):
            return start, None  # (NUMBA_DISABLE_JIT: plain Python)
        total = None
        source = python_source(self.kernel)
        with np.errstate(all="ignore"):
            for element in range(start, stop):
                done, result = self._run_source(source, element, args)
                if not done:
                    return element, total
                total = _sum(total, result)
        return stop, total

    def _first_calls_compiled(self, variant: Hashable, start: int, stop: int,
                              args: tuple[Any, ...]) -> Any:
        result = self.kernel(start, stop, *args)
        self._compiled.add(variant)
        return result

    def _run_source(self, source: Callable[..., Any], element: int, args: tuple[Any, ...]
                    ) -> tuple[bool, Any]:
        """Run element ``element`` from the Python source: (True, its return), or (False,
        None) with its in-place rows put back where Python raised on it."""
        kept = [args[i][element].copy() for i in self.in_place]
        try:
            result = source(element, element + 1, *args)
        except (ArithmeticError, LookupError, ValueError, TypeError):
            # Python's rules, not the kernel's (1.0 / 0.0 raises, math.acos(2.0) too, an
            # index the kernel does not check): the compiled kernel runs this element
            # from its first state
            for i, row in zip(self.in_place, kept, strict=True):
                args[i][element] = row
            return False, None
        self._count_interpreted(1)
        return True, result

    def _count_interpreted(self, elements: int) -> None:
        """Count ``elements`` run without the compiled kernel (Python source or lanes)."""
        self.interpreted_elements += elements
        _interpreted_total[0] += elements


def _cache_index(kernel: Dispatcher) -> str | None:
    """The path of ``kernel``'s index file in Numba's on-disk cache (which may not exist
    yet); None where this Numba lays its cache out otherwise."""
    cache = getattr(kernel, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index if isinstance(index, str) else None


def _cache_lacks(kernel: Dispatcher) -> bool:
    """Whether Numba's on-disk cache surely holds no machine code of ``kernel`` (it has no
    index file for it); False where it may, or where this Numba lays its cache out
    otherwise."""
    index = _cache_index(kernel)
    return index is not None and not os.path.exists(index)


def _load_cached(kernel: Dispatcher, signature: tuple[Any, ...]) -> bool:
    """Load ``kernel``'s machine code for ``signature`` from Numba's on-disk cache, as
    ``Dispatcher.compile`` does before it compiles; compile nothing. False where the cache
    does not hold it (or this Numba lays its cache out otherwise)."""
    from numba.core.compiler_lock import global_compiler_lock

    try:
        cache: Any = getattr(kernel, "_cache")  # noqa: B009  (private: typed as Any)
        if _cache_lacks(kernel) and signature not in kernel.overloads:
            return False  # nothing cached (Numba's set-up to look would take 0.3 s)
        with global_compiler_lock:
            if signature in kernel.overloads:
                return True
            compiled = cache.load_overload(signature, kernel.targetctx)
            if compiled is None:
                return False
            kernel.targetctx.insert_user_function(compiled.entry_point, compiled.fndesc,
                                                  [compiled.library])
            kernel.add_overload(compiled)
            getattr(kernel, "_cache_hits")[signature] += 1  # noqa: B009  (as compile counts it)
            return True
    except Exception:  # a private part of Numba: without it, the Python source runs
        return False


def _sum(total: Any, result: Any) -> Any:
    """``total + result``, where None (a kernel that returns nothing) adds nothing."""
    if result is None:
        return total
    return result if total is None else total + result
