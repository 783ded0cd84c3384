"""Keep a read-only file mapping from accumulating resident pages.

LMDB (opened without writemap) maps its data file read-only and reads
through the map. Every page a lookup, an insert's B-tree walk or an export
scan touches stays mapped into the process, so after a million calls the
process's RSS counts most of a multi-gigabyte store, although those pages
are clean page cache the kernel could drop at any time. `MappedFile.release`
drops this process's references to them (madvise MADV_DONTNEED); the data
stay in the page cache, and the next read of a page maps it again (a minor
fault). Safe for a read-only shared mapping: nothing is dirty, nothing is
lost, concurrent readers just fault the page back in.

Why often: the kernel maps up to 16 neighbouring page-cache pages per
fault ("fault-around"), and LMDB's copy-on-write B-tree reads a fresh copy
of every page a write transaction touches, so one put maps ~200 kB and a
group commit of a few thousand results maps several hundred MB within tens
of milliseconds. `maybe_release` is therefore cheap to call often (every
64 puts, every 64 lookups): it reads the process's file-backed RSS (at
most every 0.5 ms) and releases once it grew by 32 MB. A release costs
~1-3 ms; the pages it drops would mostly have faulted in afresh anyway.

Linux only (the mapping is found in /proc/self/maps); elsewhere `release`
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from pathlib import Path

MADV_DONTNEED = 4  # Linux

_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        _libc.madvise.restype = ctypes.c_int
    except (OSError, AttributeError):
        _libc = None


def mapped_ranges(path: str | os.PathLike[str]) -> list[tuple[int, int]]:
    """(start, end) addresses of this process's mappings of `path`."""
    target = os.path.realpath(path)
    ranges: list[tuple[int, int]] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].rstrip("\n") == target:
                    start, end = parts[0].split("-")
                    ranges.append((int(start, 16), int(end, 16)))
    except OSError:
        return []
    return ranges


class MappedFile:
    """The resident pages of one file's read-only mappings in this process."""

    # The gate between checks only bounds the cost of reading statm (~5 µs):
    # a longer one let a burst of puts map 100+ MB between two checks.
    def __init__(self, path: str | os.PathLike[str], *, min_interval_s: float = 0.0005, slack_bytes: int = 32 << 20) -> None:
        self.path = Path(path)
        self.min_interval_s = min_interval_s
        self.slack_bytes = slack_bytes  # file-backed RSS growth tolerated before a release
        self.releases = 0
        self._last = time.monotonic()
        self._baseline = _file_rss_bytes()
        self._lock = threading.Lock()

    def release(self) -> bool:
        """Drop the mapping's resident pages now; False where unsupported."""
        if _libc is None:
            return False
        done = False
        with self._lock:
            for start, end in mapped_ranges(self.path):
                if _libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_DONTNEED) == 0:
                    done = True
            self._last = time.monotonic()
            self.releases += done
            self._baseline = _file_rss_bytes()
        return done

    def maybe_release(self) -> bool:
        """`release`, at most once per `min_interval_s` and only once the
        process's file-backed RSS grew by `slack_bytes` (cheap to call often)."""
        now = time.monotonic()
        if now - self._last < self.min_interval_s:
            return False
        self._last = now
        if _file_rss_bytes() - self._baseline < self.slack_bytes:
            return False
        return self.release()


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _file_rss_bytes() -> int:
    """Resident file-backed (+ shared memory) bytes of this process; 0 if unknown."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[2]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0
