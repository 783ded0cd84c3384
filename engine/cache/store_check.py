"""Checks of a store folder made before LMDB maps it (issue 33).

LMDB trusts its file: a data.mdb cut short (a copy that did not finish, a
full disk under a backup tool) is mapped as it is, and the first read past
its end kills the process with SIGBUS, with no message at all. Its two meta
pages say how many pages the last transaction uses, so the file's size is
checked against them first; a file whose meta pages are not LMDB's is
refused the same way. What LMDB then finds (another program's databases,
no needlejudge marker) is checked by engine.cache.store. `run`, `prepare`,
`pairs` and `cache verify|stats|export` all open a store through `Store`,
so they share these checks and their messages.
"""

from __future__ import annotations

import struct
from pathlib import Path

from engine.contracts import ConfigError

LMDB_MAGIC = 0xBEEFC0DE
LMDB_VERSION = 1
# The meta record of a 64-bit LMDB file: after the 16-byte page header,
# magic (u32), version (u32), address (8), map size (8), two 48-byte database
# records (the first one's first u32 is the page size), last page (8), txnid (8).
_PAGE_HEADER = 16
_MAGIC = struct.Struct("<II")
_PAGE_SIZE_AT = 24
_LAST_PAGE_AT = 120
_LAST = struct.Struct("<QQ")
_META_BYTES = _LAST_PAGE_AT + _LAST.size


class StoreError(ConfigError):
    """A store folder that cannot be used: a file, a damaged or foreign LMDB
    environment. Exit code 2, like any bad input."""


ADVICE = "Restore it from a backup, or point `store` at a new folder (`needlejudge cache import` carries a cache over)"


def check_store_path(path: Path) -> None:
    """Raise StoreError, touching nothing, when `path` cannot hold a store or
    its data.mdb is cut short or is not an LMDB file."""
    if path.exists() and not path.is_dir():
        raise StoreError(
            f"store {path}: is a file, not a folder; a store is a folder (created if missing): "
            "point `store` (or --store) at a folder"
        )
    data = path / "data.mdb"
    if not data.is_file():
        return
    size = data.stat().st_size
    if size == 0:
        return  # LMDB creates it empty, then writes its meta pages
    with open(data, "rb") as fh:
        head = fh.read(2 * 65536)
    metas = []
    page_size = 0
    for number in (0, 1):
        offset = number * page_size if number else 0
        meta = _meta(head, offset)
        if meta is None:
            raise StoreError(
                f"store {path}: data.mdb is not an LMDB file (its meta page {number} is not LMDB's: damaged, or "
                f"another kind of file); nothing was read or written. {ADVICE}"
            )
        page_size = page_size or meta[0]
        metas.append(meta)
    _, last_page, _ = max(metas, key=lambda meta: meta[2])  # the newer transaction
    needed = (last_page + 1) * page_size
    if size < needed:
        raise StoreError(
            f"store {path}: data.mdb is {size:,} bytes but its last transaction uses {needed:,} "
            f"({last_page + 1:,} pages of {page_size:,}): the file was cut short (an unfinished copy, a full disk); "
            f"nothing was read or written. {ADVICE}"
        )


def _meta(head: bytes, offset: int) -> tuple[int, int, int] | None:
    """(page size, last page, txnid) of the meta page at `offset`; None if it is not LMDB's."""
    at = offset + _PAGE_HEADER
    if len(head) < at + _META_BYTES:
        return None
    magic, version = _MAGIC.unpack_from(head, at)
    if magic != LMDB_MAGIC or version != LMDB_VERSION:
        return None
    (page_size,) = struct.unpack_from("<I", head, at + _PAGE_SIZE_AT)
    last_page, txnid = _LAST.unpack_from(head, at + _LAST_PAGE_AT)
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None
    return page_size, last_page, txnid
