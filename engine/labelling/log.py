"""The label log: one JSON line per label given, appended and fsync'ed before
the page hears it was saved, so a crash loses no label it showed as kept.

A label given again for the same item by the same labeller (after going
back) supersedes the earlier line; the log itself is never rewritten. A torn
last line (a crash mid-write) is ignored on reading and cut off before the
next append. The log is the export format as well (`labels.jsonl`), and the
report reads it (`needlejudge report --labels`).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import msgspec

from engine.contracts import ConfigError


class LabelRecord(msgspec.Struct, frozen=True, kw_only=True):
    item_id: str
    doc_id: str
    needle: str
    hay: str
    i: int
    j: int
    replicate: int = 0
    labeller: str
    label: float  # on 0-100, as the judges' scores
    raw: float  # on the prompt's own scale, as the person typed it
    scale: str
    at: float  # unix time
    inclusion: float = 1.0  # the item's probability of being in the sample (analysis/ppi.py weights by it)
    simulated: bool = False  # a stand-in's label (simulation/people.py), never a person's


_DECODER = msgspec.json.Decoder(LabelRecord)
_ENCODER = msgspec.json.Encoder()


class LabelLog:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._latest: dict[tuple[str, str], LabelRecord] = {}
        self._good_bytes = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        raw = self.path.read_bytes()
        offset = 0
        for number, line in enumerate(raw.split(b"\n"), start=1):
            end = min(offset + len(line) + 1, len(raw))
            if not line.strip():
                offset = end
                continue
            try:
                record = _DECODER.decode(line)
            except msgspec.DecodeError:
                if end >= len(raw):  # the last line, torn by a crash: dropped
                    break
                raise ConfigError(f"{self.path} line {number}: not a label record; move the file aside to start afresh") from None
            self._latest[(record.labeller, record.item_id)] = record
            offset = end
        self._good_bytes = offset

    def append(self, record: LabelRecord) -> None:
        line = _ENCODER.encode(record) + b"\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "r+b" if self.path.exists() else "wb") as handle:
                handle.truncate(self._good_bytes)  # a torn tail from a crash goes before anything new
                handle.seek(self._good_bytes)
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self._good_bytes += len(line)
            self._latest[(record.labeller, record.item_id)] = record

    def labels(self) -> list[LabelRecord]:
        """The latest label of every (labeller, item), in the order first given."""
        with self._lock:
            return list(self._latest.values())

    def of(self, labeller: str) -> dict[str, LabelRecord]:
        with self._lock:
            return {item: r for (who, item), r in self._latest.items() if who == labeller}


def now() -> float:
    return time.time()
