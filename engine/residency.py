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

Releasing often costs little: LMDB's B-tree is copy-on-write, so the pages
a write transaction reads are mostly pages the previous one just wrote at
new places in the file; they fault in once whether or not older pages were
released. Measured on the 1M-call benchmark: ~400 MB of the map became
resident per second of writing, hence a release every 0.1 s by default.

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

    def __init__(self, path: str | os.PathLike[str], *, min_interval_s: float = 0.1) -> None:
        self.path = Path(path)
        self.min_interval_s = min_interval_s
        self.releases = 0
        self._last = time.monotonic()
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
        return done

    def maybe_release(self) -> bool:
        """`release`, at most once per `min_interval_s` (cheap to call often)."""
        if time.monotonic() - self._last < self.min_interval_s:
            return False
        return self.release()
