"""The LMDB environment shared by the corpus, the call cache and run manifests.

One environment per store folder with named databases; values are msgpack.
Reads are cheap and may happen on the event loop. Writes go through
`put_many` (one transaction per batch); the map grows on MapFullError.
Several processes may open the same folder (LMDB's own locking).
The group-commit writer for the call cache lives in engine.cache.call_cache; its commit
process (engine.cache.commit_process) writes through `put_batch_raw`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import lmdb
import msgspec

DATABASES = ("results", "corpus", "corpus_meta", "runs", "rows", "meta")
_INITIAL_MAP_SIZE = 64 * 1024 * 1024
_MAX_MAP_SIZE = 1 << 40

# In `meta`: written when a store is created; an LMDB environment without it
# (and without our databases) belongs to another program and is never written.
STORE_MARKER = b"needlejudge-store"
STORE_FORMAT = 1
# The value of a group-commit write that deletes its key (no stored value is
# empty: every value is msgpack).
DELETE = b""

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


class ForeignStoreError(lmdb.Error):
    """The folder holds an LMDB environment that is not a needlejudge store."""


def _check_ours(env: lmdb.Environment, path: Path) -> bool:
    """Whether the environment needs the store marker (new, or a needlejudge
    store from before the marker); raise ForeignStoreError, writing nothing,
    when it holds anything that is not ours."""
    with env.begin() as txn:
        names = [key for key, _ in txn.cursor()]  # the main database: named databases and plain keys
    if not names:
        return True
    if b"meta" in names:
        try:
            with env.begin(db=env.open_db(b"meta", create=False)) as txn:
                if txn.get(STORE_MARKER) is not None:
                    return False
        except lmdb.Error:  # a plain key named "meta", not a database
            pass
    ours = {name.encode() for name in DATABASES}
    if set(names) <= ours:
        return True  # written by needlejudge before stores carried the marker
    found = ", ".join(repr(name.decode(errors="replace")) for name in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise ForeignStoreError(
        f"{path}: an LMDB environment of another program (it holds {found}, and no {STORE_MARKER.decode()!r} marker); "
        "needlejudge opens only its own stores and left this one untouched"
    )


class Store:
    """A folder holding one LMDB environment with named databases."""

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly and not (self.path / "data.mdb").exists():
            raise FileNotFoundError(f"{self.path}: no needlejudge store here (no data.mdb)")
        self.path.mkdir(parents=True, exist_ok=True)
        self.readonly = readonly
        self.env = lmdb.open(
            str(self.path),
            map_size=_INITIAL_MAP_SIZE,
            max_dbs=len(DATABASES) + 8,
            readonly=readonly,
            lock=True,
            # metasync off, sync on: a committed transaction survives a
            # process crash; an OS crash may lose the last commit only.
            metasync=False,
            readahead=False,
            max_readers=256,
        )
        try:
            fresh = _check_ours(self.env, self.path)
        except BaseException:
            self.env.close()
            raise
        self._dbs = {name: self.env.open_db(name.encode(), create=not readonly) for name in DATABASES} if not readonly else {}
        if fresh and not readonly:
            with self.env.begin(write=True, db=self._dbs["meta"]) as txn:
                txn.put(STORE_MARKER, _encode({"format": STORE_FORMAT}))
        self._grow_lock = threading.Lock()

    # -- databases -----------------------------------------------------------
    def db(self, name: str) -> Any:
        if name not in self._dbs:
            if name not in DATABASES:
                raise KeyError(f"unknown database {name!r}; expected one of {DATABASES}")
            self._dbs[name] = self.env.open_db(name.encode(), create=not self.readonly)
        return self._dbs[name]

    # -- reads ---------------------------------------------------------------
    def begin(self, **kwargs: Any) -> lmdb.Transaction:
        """`env.begin`, first adopting the map size if another process grew the
        store beyond this process's map (LMDB's MapResizedError). Call from
        the thread that owns the store's reads (the event loop), never while
        this process has a transaction open."""
        try:
            return self.env.begin(**kwargs)
        except lmdb.MapResizedError:
            self.adopt_map_size()
            return self.env.begin(**kwargs)

    def adopt_map_size(self) -> None:
        """Take the map size another process gave the store (it only grows)."""
        with self._grow_lock:
            self.env.set_mapsize(0)

    def get_raw(self, db: str, key: bytes) -> bytes | None:
        with self.begin(db=self.db(db), buffers=False) as txn:
            return txn.get(key)

    def get(self, db: str, key: bytes) -> Any:
        raw = self.get_raw(db, key)
        return None if raw is None else _decode(raw)

    def contains(self, db: str, key: bytes) -> bool:
        return self.get_raw(db, key) is not None

    def items_raw(self, db: str, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
        """Iterate (key, raw value) in key order, optionally under a prefix."""
        with self.begin(db=self.db(db), buffers=False) as txn:
            cur = txn.cursor()
            if not cur.set_range(prefix):
                return
            for k, v in cur:
                if not k.startswith(prefix):
                    break
                yield k, v

    def entries(self) -> int:
        """Entries in all databases, the store marker not counted: 0 for a
        store nothing has been written to."""
        total = sum(self.count(name) for name in DATABASES)
        return total - (self.get_raw("meta", STORE_MARKER) is not None)

    def count(self, db: str) -> int:
        with self.begin(db=self.db(db)) as txn:
            return txn.stat(self.db(db))["entries"]

    # -- writes --------------------------------------------------------------
    def put_many_raw(self, db: str, items: Iterable[tuple[bytes, bytes]], *, overwrite: bool = True) -> int:
        """Write all items in one transaction; return how many were new.

        Retries the whole batch after growing the map on MapFullError, so a
        batch is either fully committed or not at all.
        """
        batch = list(items)
        while True:
            try:
                added = 0
                with self.env.begin(write=True, db=self.db(db)) as txn:
                    for k, v in batch:
                        added += bool(txn.put(k, v, overwrite=overwrite))
                return added
            except lmdb.MapFullError:
                self._grow()
            except lmdb.MapResizedError:
                self.adopt_map_size()

    def put_batch_raw(self, items: Iterable[tuple[str, bytes, bytes]]) -> None:
        """Write (db, key, raw value) items across databases in ONE transaction
        (the call cache's group commit: calls, rows and cell states together),
        growing the map when full. Used by the commit process, which holds no
        read transaction (LMDB resizes a map only while none is open).
        An empty value (`DELETE`) deletes the key in the same transaction."""
        batch = list(items)
        while True:
            try:
                with self.env.begin(write=True) as txn:
                    for name, k, v in batch:
                        if v:
                            txn.put(k, v, db=self.db(name))
                        else:
                            txn.delete(k, db=self.db(name))
                return
            except (lmdb.MapFullError, lmdb.MapResizedError):
                self._grow()

    def put_many(self, db: str, items: Iterable[tuple[bytes, Any]], *, overwrite: bool = True) -> int:
        return self.put_many_raw(db, ((k, _encode(v)) for k, v in items), overwrite=overwrite)

    def put(self, db: str, key: bytes, value: Any) -> None:
        self.put_many(db, [(key, value)])

    def delete(self, db: str, key: bytes) -> bool:
        while True:
            try:
                with self.env.begin(write=True, db=self.db(db)) as txn:
                    return txn.delete(key)
            except (lmdb.MapFullError, lmdb.MapResizedError):
                self._grow()

    def _grow(self) -> None:
        with self._grow_lock:
            current = self.env.info()["map_size"]
            if current >= _MAX_MAP_SIZE:
                raise lmdb.MapFullError(f"{self.path}: store reached {current} bytes")
            # LMDB raises the size to what the data already use if another process
            # wrote beyond it (the MapResizedError case)
            self.env.set_mapsize(min(current * 2, _MAX_MAP_SIZE))

    # -- lifecycle -----------------------------------------------------------
    def sync(self) -> None:
        self.env.sync(True)

    def close(self) -> None:
        self.env.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode(value: Any) -> bytes:
    return _encode(value)


def decode(raw: bytes, type: Any = Any) -> Any:
    if type is Any:
        return _decode(raw)
    return msgspec.msgpack.decode(raw, type=type)
