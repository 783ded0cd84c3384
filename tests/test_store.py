"""engine.cache.store: a store is marked as needlejudge's; another program's LMDB is never opened for writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cache.store import Store


def _digest(folder: Path) -> str:
    import hashlib

    return hashlib.sha256((folder / "data.mdb").read_bytes()).hexdigest()


def test_another_programs_lmdb_is_refused_naming_the_folder_and_left_unchanged(tmp_path: Path) -> None:
    import lmdb

    from engine.cache.store import ForeignStoreError

    env = lmdb.open(str(tmp_path / "other"), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"user:1", b"another program's record")
    env.close()
    before = _digest(tmp_path / "other")
    with pytest.raises(ForeignStoreError, match=r"other: an LMDB environment of another program \(it holds 'user:1'"):
        Store(tmp_path / "other")
    with pytest.raises(ForeignStoreError):
        Store(tmp_path / "other", readonly=True)
    assert _digest(tmp_path / "other") == before


def test_a_new_store_is_marked_and_an_unmarked_needlejudge_store_gets_the_marker(tmp_path: Path) -> None:
    import lmdb

    from engine.cache.store import DATABASES, STORE_FORMAT, STORE_MARKER

    store = Store(tmp_path / "new")
    assert store.get("meta", STORE_MARKER) == {"format": STORE_FORMAT}
    store.close()
    # a store written before the marker: our named databases only
    env = lmdb.open(str(tmp_path / "old"), map_size=1 << 20, max_dbs=16)
    for name in DATABASES:
        db = env.open_db(name.encode())
        with env.begin(write=True, db=db) as txn:
            txn.put(b"k", name.encode())
    env.close()
    store = Store(tmp_path / "old")
    assert store.get_raw("results", b"k") == b"results"
    assert store.get("meta", STORE_MARKER) == {"format": STORE_FORMAT}
    store.close()
