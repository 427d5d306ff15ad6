"""The atomic writer: modes, symlinks, umask, error paths, and writers killed mid-write."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import limbik
from limbik._runtime.atomic import atomic_save, atomic_write
from limbik.errors import UnwritableFileError

IO_MODULE = Path(limbik.__file__).parent / "_runtime" / "atomic.py"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes and signals")


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def current_umask() -> int:
    # reading the umask means setting it; done here in the test, never in the library
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def small_motion() -> limbik.Motion:
    return limbik.parse_bvh("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation "
                            "Xrotation Yrotation\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n"
                            "1 2 3\n4 5 6\n")


@posix_only
def test_the_umask_is_never_touched(tmp_path, monkeypatch):
    def forbidden(mask: int) -> int:
        raise AssertionError("os.umask called during a write")

    monkeypatch.setattr(os, "umask", forbidden)
    limbik.write_bvh(small_motion(), tmp_path / "a.bvh")
    atomic_save(tmp_path / "b.txt", lambda tmp: Path(tmp).write_text("x"))
    assert (tmp_path / "a.bvh").exists() and (tmp_path / "b.txt").read_text() == "x"


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o444])
def test_an_existing_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "private.bvh"
    path.write_text("old")
    path.chmod(mode)
    limbik.write_bvh(small_motion(), path)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert limbik.read_bvh(path).num_frames == 2
    atomic_save(path, lambda tmp: Path(tmp).write_text("new"))
    assert stat.S_IMODE(path.stat().st_mode) == mode


@posix_only
def test_a_new_file_gets_the_umask_mode(tmp_path):
    limbik.write_bvh(small_motion(), tmp_path / "new.bvh")
    atomic_save(tmp_path / "new.png", lambda tmp: Path(tmp).write_bytes(b"x"))
    expected = 0o666 & ~current_umask()
    assert stat.S_IMODE((tmp_path / "new.bvh").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "new.png").stat().st_mode) == expected


@posix_only
def test_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "store" / "clip.bvh"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "clip.bvh"
    link.symlink_to(real)
    chained = tmp_path / "again.bvh"
    chained.symlink_to(link)
    limbik.write_bvh(small_motion(), chained)
    assert link.is_symlink() and chained.is_symlink()
    assert limbik.read_bvh(real).num_frames == 2
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert leftovers(tmp_path) == [] and leftovers(real.parent) == []


@posix_only
def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "target.txt")
    with atomic_write(link) as handle:
        handle.write("hello")
    assert link.is_symlink() and (tmp_path / "target.txt").read_text() == "hello"


def test_an_exception_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(path) as handle:
        handle.write("partial")
        raise RuntimeError("boom")
    assert path.read_text() == "old"
    assert leftovers(tmp_path) == []
    with pytest.raises(RuntimeError):
        atomic_save(path, lambda tmp: (Path(tmp).write_text("partial"), 1 / 0 if False else
                                       (_ for _ in ()).throw(RuntimeError("boom"))))
    assert path.read_text() == "old" and leftovers(tmp_path) == []


def test_errors_name_the_callers_path(tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "a.bvh"
    with pytest.raises(FileNotFoundError) as info:
        limbik.write_bvh(small_motion(), missing)
    assert info.value.filename == str(missing)
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError) as info2:
        limbik.write_bvh(small_motion(), tmp_path / "adir")
    assert info2.value.filename == str(tmp_path / "adir")
    assert ".tmp" not in str(info2.value)
    assert leftovers(tmp_path) == []
    # both are LimbikErrors naming the argument, as unreadable files are
    for caught, kind in ((info, FileNotFoundError), (info2, IsADirectoryError)):
        assert isinstance(caught.value, UnwritableFileError)
        assert isinstance(caught.value, kind)
        assert caught.value.argument == "path"
        assert str(caught.value).startswith("path: cannot write ")


def test_threads_can_write_at_once(tmp_path):
    errors: list[BaseException] = []

    def write(name: str) -> None:
        try:
            with atomic_write(tmp_path / name) as h:
                h.write(name)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"{k}.txt",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and all((tmp_path / f"{k}.txt").read_text() == f"{k}.txt"
                                for k in range(4))
    assert leftovers(tmp_path) == []


@posix_only
def test_sigint_inside_a_write_raises_keyboard_interrupt_and_cleans_up(tmp_path):
    # Python's own SIGINT handler, also where the tests run with SIGINT ignored (a
    # background job of a non-interactive shell inherits SIG_IGN)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _sigint_inside_a_write(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)


def _sigint_inside_a_write(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_write(path) as handle:
        handle.write("partial")
        # to the main thread, where Python runs handlers (os.kill may pick a worker
        # thread of a parallel kernel; the handler then runs only after the sleep)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        time.sleep(1.0)  # the handler interrupts this
    assert path.read_text() == "old" and leftovers(tmp_path) == []


WRITER = r"""
import importlib.util, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
spec = importlib.util.spec_from_file_location("limbik_io", sys.argv[1])
io = importlib.util.module_from_spec(spec); spec.loader.exec_module(io)
chunk = "x" * 65536 + "\n"
print("ready", flush=True)
for k in range(10**6):
    with io.atomic_write(sys.argv[2]) as handle:
        handle.write(f"begin {k} {sys.argv[3]}\n")
        for _ in range(int(sys.argv[3])):
            handle.write(chunk)
        handle.write("end\n")
"""


def check_complete(path: Path) -> None:
    """The file is absent or one writer's complete output (its header gives its length)."""
    if not path.exists():
        return
    text = path.read_text()
    assert text.startswith("begin ") and text.endswith("end\n"), text[:20]
    chunks = int(text.split("\n", 1)[0].split()[2])
    assert text.count("\n") == chunks + 2
    assert len(text) == len(text.split("\n", 1)[0]) + 1 + chunks * 65537 + 4


@posix_only
def test_writers_killed_at_random_moments_leave_no_partial_file_and_no_temporary(tmp_path):
    """Seeded: 16 writer processes, each stopped by SIGINT, SIGTERM or SIGKILL at a random
    moment (0-120 ms into its writes of ~1-3 MB files). The destination is always absent
    or complete; after SIGINT (KeyboardInterrupt) no temporary file is left, while
    SIGTERM and SIGKILL end the process at once and may leave one."""
    rng = random.Random(int(os.environ.get("LIMBIK_KILL_SEED", "20261123")))
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    out = tmp_path / "out"
    out.mkdir()
    for trial in range(int(os.environ.get("LIMBIK_KILL_TRIALS", "16"))):
        chunks = rng.randint(16, 48)
        dest = out / f"file{trial % 4}.txt"
        with subprocess.Popen([sys.executable, str(script), str(IO_MODULE), str(dest),
                               str(chunks)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL) as child:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == b"ready"
            time.sleep(rng.uniform(0.0, 0.12))
            signum = rng.choice([signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
            child.send_signal(signum)
            try:
                rc = child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                pytest.fail(f"trial {trial}: the writer outlived signal {signum!r} by 30 s")
        assert rc != 0
        check_complete(dest)
        if signum == signal.SIGINT:
            assert leftovers(out) == [], (trial, signum)
        for stale in leftovers(out):
            (out / stale).unlink()
    written = [p for p in out.iterdir() if p.exists()]
    assert written, "no writer ever completed a file; the test proved nothing"


def test_write_bvh_round_trip_after_the_rewrite(tmp_path):
    motion = small_motion()
    limbik.write_bvh(motion, tmp_path / "a.bvh")
    again = limbik.read_bvh(tmp_path / "a.bvh")
    np.testing.assert_allclose(again.rotations, motion.rotations, atol=1e-12)
