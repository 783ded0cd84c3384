"""Child processes of a local model backend: the ones a start left behind,
and reaping them (wait, then terminate, then kill). vLLM's engine core and
its workers are such children, of this process (adapters/vllm.py) or of a
vLLM server process (adapters/vllm_server.py). psutil is imported only
when called.
"""

from __future__ import annotations

import contextlib
from typing import Any


def _is_resource_tracker(proc: Any) -> bool:
    """multiprocessing's resource tracker belongs to this interpreter and exits with it."""
    import psutil

    try:
        return "resource_tracker" in " ".join(proc.cmdline())
    except psutil.Error:
        return False  # a zombie has no cmdline: it still needs reaping


def own_children() -> set[int]:
    """The pids of this process's descendants, but for the resource tracker."""
    import psutil

    try:
        return {p.pid for p in psutil.Process().children(recursive=True) if not _is_resource_tracker(p)}
    except psutil.Error:
        return set()


def with_descendants(pids: set[int]) -> set[int]:
    """`pids` and every live descendant of theirs."""
    import psutil

    found = set(pids)
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            found |= {p.pid for p in psutil.Process(pid).children(recursive=True)}
    return found


def reap_processes(pids: set[int], timeout_s: float = 15.0, *, skip_resource_tracker: bool = True) -> list[int]:
    """Wait for the given processes to exit; terminate, then kill, the ones that do not.

    By default skips multiprocessing's resource tracker, which belongs to this
    interpreter (it exits with it). The descendants of another interpreter (a
    vLLM server) include that interpreter's tracker: pass
    `skip_resource_tracker=False` to reap it too. It ignores SIGTERM, so it is
    waited for and then killed. Returns the pids that had to be killed.
    """
    import psutil

    procs = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue
        if not (skip_resource_tracker and _is_resource_tracker(proc)):
            procs.append(proc)
    _, alive = psutil.wait_procs(procs, timeout=timeout_s)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(alive, timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    return [p.pid for p in alive]
