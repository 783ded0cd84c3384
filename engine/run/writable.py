"""Before a run pays for its first call: can its store and its output
folder be written? (issue 33)

A run on a store whose disk was already full made and paid for 136 calls
before failing to commit them; one whose output folder was full paid for
every call and then failed its export. Both are checked first: at least
`MIN_FREE_BYTES` free on each file system, one real LMDB write (put, then
deleted) in the store and one file written (then removed) in the output
folder. A disk that fills during the run still stops it with a message
naming the store or folder (engine.commands.run); nothing committed is lost.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import lmdb

from engine.cache.store import Store
from engine.cache.store_check import StoreError
from engine.contracts import ConfigError

# Less than this free and a run cannot store what it pays for: a few answers.
MIN_FREE_BYTES = 64 * 1024
_PROBE_KEY = b"write-check"
_PROBE_BYTES = 4096


def free_text(path: Path) -> str:
    try:
        return f"{shutil.disk_usage(path).free // 1024:,} kB free on its file system"
    except OSError:
        return "free space unknown"


def _room(path: Path, what: str, advice: str, error: type[ConfigError]) -> None:
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return
    if free < MIN_FREE_BYTES:
        raise error(
            f"{what}: only {free // 1024:,} kB free on its file system (a run needs at least {MIN_FREE_BYTES // 1024} kB "
            f"to store the answers it pays for); no call was made. {advice}, then run again"
        )


def check_writable(store: Store, output: Path | None) -> None:
    """Raise StoreError / ConfigError, before any call, when the store or the
    output folder (None: no export) cannot be written or has no room."""
    where = f"store {store.path}"
    _room(store.path, where, "Free some space, or move the store", StoreError)
    try:
        store.put_many_raw("meta", [(_PROBE_KEY, b"\x00" * _PROBE_BYTES)])
        store.delete("meta", _PROBE_KEY)
    except lmdb.Error as exc:
        raise StoreError(
            f"{where}: cannot be written ({type(exc).__name__}: {exc}; {free_text(store.path)}); no call was made. "
            "Free some space or fix the folder's permissions, then run again"
        ) from None
    if output is None:
        return
    probe = output / f".needlejudge-write-check.{os.getpid()}"
    try:
        output.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as fh:
            fh.write(b"\x00" * _PROBE_BYTES)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise ConfigError(
            f"output {output}: cannot be written ({exc.strerror}; {free_text(output)}); no call was made. "
            "Free some space, or set `output` to a folder you can write, then run again"
        ) from None
    finally:
        probe.unlink(missing_ok=True)
    _room(output, f"output {output}", "Free some space, or set `output` to another folder", ConfigError)
