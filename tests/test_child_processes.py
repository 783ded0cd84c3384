"""adapters.child_processes: finding this process's children and reaping
them (wait, terminate, kill), on real processes. psutil comes with the vLLM
extras (the only backends with child processes)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

psutil = pytest.importorskip("psutil")

from adapters.child_processes import own_children, reap_processes, with_descendants  # noqa: E402

# a child that starts a grandchild, then sleeps; with "stubborn" both ignore SIGTERM
PARENT = """
import signal, subprocess, sys, time
if sys.argv[1] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(child.pid, flush=True)
time.sleep(60)
"""


def start(kind: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-c", PARENT, kind], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def test_children_and_their_descendants_are_found() -> None:
    before = own_children()
    proc, grandchild = start("plain")
    try:
        assert own_children() - before == {proc.pid, grandchild}
        assert with_descendants({proc.pid}) == {proc.pid, grandchild}
    finally:
        assert reap_processes(with_descendants({proc.pid}), timeout_s=0.1) == []  # SIGTERM was enough
    proc.wait(5)
    assert own_children() - before == set()


def test_processes_that_ignore_sigterm_are_killed_and_named() -> None:
    proc, grandchild = start("stubborn")  # SIG_IGN is inherited: the grandchild ignores SIGTERM too
    killed = reap_processes(with_descendants({proc.pid}), timeout_s=0.1)
    assert sorted(killed) == sorted([proc.pid, grandchild])
    assert not psutil.pid_exists(grandchild) and not psutil.pid_exists(proc.pid)  # killed and reaped


def test_a_process_that_exits_in_time_is_only_waited_for() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    t0 = time.monotonic()
    assert reap_processes({proc.pid, 2**22 + 12345}, timeout_s=10) == []  # a pid that does not exist is skipped
    assert time.monotonic() - t0 < 9
    assert proc.wait(5) == 0


# a child interpreter with its own multiprocessing resource tracker (which ignores SIGTERM)
WITH_TRACKER = """
import time
from multiprocessing import resource_tracker
resource_tracker.ensure_running()
print(resource_tracker._resource_tracker._pid, flush=True)
time.sleep(60)
"""


def test_another_interpreters_resource_tracker_is_skipped_by_default_and_reaped_on_request() -> None:
    proc = subprocess.Popen([sys.executable, "-c", WITH_TRACKER], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    tracker = int(proc.stdout.readline())
    deadline = time.monotonic() + 10
    while not psutil.Process(tracker).cmdline() and time.monotonic() < deadline:
        time.sleep(0.05)  # until the tracker's exec shows its command line
    try:
        assert reap_processes({tracker}, timeout_s=0.1) == []  # skipped: taken for this interpreter's own
        assert psutil.Process(tracker).status() != psutil.STATUS_ZOMBIE
        reap_processes(with_descendants({proc.pid}), timeout_s=0.1, skip_resource_tracker=False)
        assert not psutil.pid_exists(tracker) or psutil.Process(tracker).status() == psutil.STATUS_ZOMBIE
        assert not psutil.pid_exists(proc.pid)  # terminated and reaped
    finally:
        proc.kill()
