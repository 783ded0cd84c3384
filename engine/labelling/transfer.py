"""Labels out of and into a label log: JSON Lines or Parquet (pyarrow, the
`parquet` extra). An import checks every record against the sample before
anything is written: its item must be in the sample and its rating on the
0-100 scale; a file with one bad record writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from engine.contracts import ConfigError
from engine.labelling.log import LabelLog, LabelRecord
from engine.labelling.sample import LabelItem


def _pyarrow(path: Path):  # type: ignore[no-untyped-def]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(f"{path}: Parquet needs pyarrow (pip install 'needlejudge[parquet]'); or use a .jsonl file") from None
    return pa, pq


def export_labels(log: LabelLog, path: Path) -> int:
    records = [msgspec.to_builtins(r) for r in log.labels()]
    if path.suffix == ".parquet":
        pa, pq = _pyarrow(path)
        pq.write_table(pa.Table.from_pylist(records), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return len(records)


def read_records(path: Path) -> list[LabelRecord]:
    if not path.exists():
        raise ConfigError(f"{path}: no such labels file")
    if path.suffix == ".parquet":
        _, pq = _pyarrow(path)
        raw = pq.read_table(path).to_pylist()
    else:
        raw = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    raw.append(json.loads(line))
                except ValueError:
                    raise ConfigError(f"{path} line {number}: not JSON") from None
    out = []
    for number, record in enumerate(raw, start=1):
        try:
            out.append(msgspec.convert(record, LabelRecord))
        except msgspec.ValidationError as exc:
            raise ConfigError(f"{path} record {number}: not a label record: {exc}") from None
    return out


def import_labels(log: LabelLog, path: Path, sample: list[LabelItem]) -> int:
    """Every record of `path` appended to `log` (the latest per labeller and item wins)."""
    records = read_records(path)
    known = {item.item_id for item in sample}
    for number, r in enumerate(records, start=1):
        if r.item_id not in known:
            raise ConfigError(f"{path} record {number}: item {r.item_id!r} is not in this run's label sample; nothing imported")
        if not 0.0 <= r.label <= 100.0:
            raise ConfigError(f"{path} record {number}: label {r.label} is outside 0-100; nothing imported")
    mine = {(r.labeller, r.item_id): r for r in log.labels()}
    new = [r for r in records if mine.get((r.labeller, r.item_id)) != r]
    for r in new:
        log.append(r)
    return len(new)
