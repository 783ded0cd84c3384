"""engine.residency: a store's mapped pages leave the process's RSS, data intact."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from engine.residency import MappedFile, mapped_ranges
from engine.store import Store

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def mapped_rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of `path` (from /proc/self/smaps)."""
    target = os.path.realpath(path)
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split(None, 5)
                inside = len(parts) == 6 and parts[5].rstrip("\n") == target
            elif inside and first == "Rss:":
                total += int(line.split()[1])
    return total


def test_release_drops_the_store_pages_from_rss_and_keeps_the_data(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    value = os.urandom(4000)
    items = [(n.to_bytes(4, "big"), value[n % 97 :] + n.to_bytes(4, "big")) for n in range(12_000)]  # ~48 MB
    for start in range(0, len(items), 2000):
        store.put_many_raw("results", items[start : start + 2000])
    data = store.path / "data.mdb"
    assert mapped_ranges(data), "the store's data file is not mapped"
    with store.env.begin(db=store.db("results")) as txn:  # a raw scan touches every page
        assert sum(len(v) for _, v in txn.cursor()) > 40_000_000
    before = mapped_rss_kb(data)
    assert before > 30_000, before
    assert store.mapped.release()
    after = mapped_rss_kb(data)
    assert after < before / 10, (before, after)
    # nothing lost: every value reads back (faulting the pages in again)
    assert [(k, v) for k, v in store.items_raw("results")] == items
    store.close()


def test_long_scans_release_as_they_go(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    value = b"x" * 3000
    store.put_many_raw("rows", [(n.to_bytes(4, "big"), value) for n in range(40_000)])  # ~120 MB
    peak = 0  # a release every SCAN_RELEASE_ROWS rows of the scan
    for n, _ in enumerate(store.items_raw("rows")):
        if n % 4096 == 0:
            peak = max(peak, mapped_rss_kb(store.path / "data.mdb"))
    assert store.mapped.releases >= 2
    assert peak < 90_000, peak  # never the whole ~120 MB database at once
    store.close()


def test_release_is_rate_limited(tmp_path: Path) -> None:
    mapped = MappedFile(tmp_path / "absent.mdb", min_interval_s=3600)
    mapped.release()  # no mapping: nothing to do, still counts as the last attempt
    assert mapped.maybe_release() is False


def test_maybe_release_waits_for_enough_new_resident_pages(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    store.put_many_raw("results", [(n.to_bytes(4, "big"), b"v" * 3000) for n in range(10_000)])  # ~30 MB
    store.mapped.min_interval_s = 0.0
    store.mapped.slack_bytes = 8 << 20
    store.mapped.release()
    assert store.mapped.maybe_release() is False  # nothing new resident since
    with store.env.begin(db=store.db("results")) as txn:
        assert sum(len(v) for _, v in txn.cursor()) == 30_000_000
    assert mapped_rss_kb(store.path / "data.mdb") > 8 << 10
    assert store.mapped.maybe_release() is True
    assert mapped_rss_kb(store.path / "data.mdb") < 8 << 10
    store.close()
