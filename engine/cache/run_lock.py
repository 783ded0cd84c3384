"""One process owns a run: a lock file held for the run's life.

Two `needlejudge run`s of the same experiment on one store would pay for
nearly every call twice (each asks what the other has not committed yet),
and two runs exporting into one output folder would overwrite each other's
files. So a run holds an exclusive `flock` on a lock file per experiment in
the store folder (`run-<run_id>.lock`) and one in its output folder
(`.needlejudge.lock`) until it ends; a second run fails at once with a
message naming the owner's pid. The OS drops a flock when its holder dies
(even by SIGKILL), so a stale lock file never blocks a later run; the file
is left in place (unlinking it could let two processes lock two different
files of one name).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from engine.contracts import ConfigError

OUTPUT_LOCK = ".needlejudge.lock"


class RunLocked(ConfigError):
    """Another process holds the run's lock."""


def run_lock_path(store: str | os.PathLike[str], run_id: str) -> Path:
    return Path(store) / f"run-{run_id}.lock"


class LockFile:
    """An exclusive, non-blocking flock on `path`, holding the owner's pid."""

    def __init__(self, path: str | os.PathLike[str], what: str) -> None:
        self.path = Path(path)
        self.what = what  # names the locked thing in the error
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read_pid(fd)
            os.close(fd)
            raise RunLocked(
                f"{self.what} is already running in process {owner or '(unknown pid)'} (lock {self.path}); "
                "wait for it to finish, or stop it and run again to resume"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> LockFile:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


def _read_pid(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""


def hold_run(store: str | os.PathLike[str], output: str | os.PathLike[str] | None, run_id: str) -> ExitStack:
    """Lock the experiment's run in its store and its output folder, if it
    exports (both released when the returned stack closes); RunLocked if
    either is held."""
    stack = ExitStack()
    try:
        stack.enter_context(LockFile(run_lock_path(store, run_id), f"run {run_id} (store {store})"))
        if output is not None:
            stack.enter_context(LockFile(Path(output) / OUTPUT_LOCK, f"a run exporting to {output}"))
    except BaseException:
        stack.close()
        raise
    return stack
