"""A real Dask cluster on 127.0.0.1 (a scheduler and worker processes): the same outputs
as the local run, and a worker killed mid-run changes nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import limbik
import limbik.threads
from limbik.app import batch
from limbik.app.batch import footplant_library
from limbik.app.cli import main
from test_batch import BAD, make_library, no_temporaries

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is not installed (pip install \"limbik[dask]\")")

DASK = Path(sys.executable).parent / "dask"
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(args: list[str], log: Path) -> subprocess.Popen:
    """Start ``dask ARGS...`` with its output in ``log``."""
    with log.open("w") as handle:
        return subprocess.Popen([str(DASK), *args], stdout=handle, stderr=subprocess.STDOUT)


def start_worker(address: str, log: Path) -> subprocess.Popen:
    """One worker process with one thread (no nanny: its pid is the process at work)."""
    return launch(["worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                   "--host", "127.0.0.1"], log)


def wait_for_workers(address: str, count: int) -> None:
    with distributed.Client(address, timeout="30s") as client:
        client.wait_for_workers(count, timeout=START_TIMEOUT)


def stop(processes: list[subprocess.Popen]) -> None:
    """Terminate (then kill, after 5 s) each process in turn."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a scheduler with two single-threaded workers."""
    if not DASK.exists():
        pytest.skip(f"the dask command is not beside this Python ({DASK})")
    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{free_port()}"
    processes = [launch(["scheduler", "--host", "127.0.0.1", "--port",
                         address.rsplit(":", 1)[1], "--no-dashboard"], logs / "scheduler.log")]
    try:
        processes += [start_worker(address, logs / f"worker{k}.log") for k in range(2)]
        wait_for_workers(address, 2)
        yield address
    finally:
        stop(processes[1:] + processes[:1])  # workers first


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, list[str], Path]:
    """A library and its outputs planted in this process."""
    folder = tmp_path_factory.mktemp("library")
    good = make_library(folder, walks=4)
    expected = tmp_path_factory.mktemp("expected")
    footplant_library(folder, expected, jobs=1, report=False)
    return folder, good, expected


def test_the_cluster_gives_the_local_outputs(cluster, library, tmp_path, capsys):
    folder, good, expected = library
    out = tmp_path / "out"
    assert main(["footplant", str(folder), "-o", str(out), "--scheduler", cluster,
                 "--no-progress"]) == 1
    assert cluster in capsys.readouterr().out
    for name in good:
        assert (out / name).read_bytes() == (expected / name).read_bytes(), name
    summary = footplant_library(folder, out, scheduler=cluster, report=False)
    assert summary.ran == 0, "a re-run through the cluster does no work"
    assert {r["clip"] for r in summary.failed} == set(BAD)


def test_a_worker_killed_mid_run_loses_nothing(cluster, tmp_path):
    """A third worker joins, and is killed (SIGKILL) while it runs a clip: its clips run
    again on the others, every output is complete, no temporary file is left."""
    folder, expected = tmp_path / "library", tmp_path / "expected"
    good = make_library(folder, walks=10)  # enough that every worker holds clips
    footplant_library(folder, expected, jobs=1, report=False)
    with distributed.Client(cluster, timeout="30s") as watcher:
        before = set(watcher.scheduler_info()["workers"])
        extra = start_worker(cluster, tmp_path / "extra.log")
        try:
            watcher.wait_for_workers(3, timeout=START_TIMEOUT)
            (address,) = set(watcher.scheduler_info()["workers"]) - before
            killed: list[tuple[str, ...]] = []

            def kill_while_busy(done: int, total: int, clip: str) -> None:
                busy = watcher.processing().get(address, ())
                if not killed and busy:
                    os.kill(extra.pid, signal.SIGKILL)
                    killed.append(tuple(busy))

            summary = footplant_library(folder, tmp_path / "out", scheduler=cluster,
                                        progress=kill_while_busy, report=False)
        finally:
            stop([extra])
    assert killed, "the extra worker was killed while it held a clip"
    assert extra.returncode == -signal.SIGKILL
    assert summary.ran == len(good) + len(BAD)
    assert {r["clip"] for r in summary.failed} == set(BAD)
    for name in good:
        assert (tmp_path / "out" / name).read_bytes() == (expected / name).read_bytes(), name
    assert no_temporaries(tmp_path / "out") == []


def test_each_task_solves_on_its_share_of_the_cores(cluster):
    """Tasks' batches share the machine's cores among the tasks its workers run at once:
    the cluster's two single-threaded workers on 127.0.0.1 get cores // 2 each, a run of
    one clip every core; a worker's thread count is restored after each task."""
    with distributed.Client(cluster, timeout="30s") as client:
        client.wait_for_workers(2, timeout=START_TIMEOUT)
        (most,) = set(client.run(limbik.threads.most_threads).values())

        def probe(function=limbik.get_num_threads, wrap=True) -> set[int]:
            futures = [client.submit(batch._with_task_threads, function, pure=False) if wrap
                       else client.submit(function, pure=False) for _ in range(4)]
            return set(client.gather(futures))

        client.run(batch._remember_machine_slots, None)  # as in a worker that just joined
        assert probe() == {max(1, most // 2)}  # asked of the scheduler
        batch._tell_workers_their_slots(client, jobs=1)
        assert probe() == {most}  # one clip: nothing to share the cores with
        batch._tell_workers_their_slots(client, jobs=10)
        assert probe() == {max(1, most // 2)}
        assert probe(limbik.get_num_threads, wrap=False) == {most}  # restored after tasks
    assert batch._task_threads(1) == most
    assert batch._task_threads(2) == max(1, most // 2)
    assert batch._task_threads(most + 5) == 1
    assert batch._task_threads(None) == most

