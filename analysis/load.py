"""Read a run folder (results.jsonl + manifest.json) into column arrays.

analysis reads exported files only, never the scheduler or the store: a
run folder copied to another machine analyses the same way.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import msgspec
import numpy as np

from engine.contracts import ConfigError, ResultRow

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"

_STRING_COLUMNS = (
    "run_id", "judge", "adapter", "model", "prompt_id", "prompt_version", "needle", "hay",
    "doc_id", "order", "control", "status", "scale", "model_version", "error_kind",
)  # fmt: skip
_INT_COLUMNS = ("i", "j", "doc_index", "replicate", "prompt_tokens", "completion_tokens", "attempts")
_FLOAT_COLUMNS = ("latency_s", "cost_usd")
_BOOL_COLUMNS = ("cached", "oracle_ok")


class Table:
    """Named, equally long numpy columns with row selection and grouping.

    Deliberately tiny (no pandas): selection by boolean mask or column
    equality, and grouping by a few key columns.
    """

    def __init__(self, columns: dict[str, np.ndarray]):
        lengths = {name: len(col) for name, col in columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns differ in length: {lengths}")
        self.columns = columns

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    def select(self, mask: np.ndarray) -> Table:
        return Table({name: col[mask] for name, col in self.columns.items()})

    def where(self, **equals: Any) -> Table:
        """Rows whose columns equal the given values (a tuple/list means 'any of')."""
        mask = np.ones(len(self), dtype=bool)
        for name, value in equals.items():
            col = self.columns[name]
            mask &= np.isin(col, list(value)) if isinstance(value, (tuple, list, set)) else (col == value)
        return self.select(mask)

    def unique(self, name: str) -> list:
        return sorted(set(self.columns[name].tolist()))

    def groups(self, *keys: str) -> Iterator[tuple[tuple, Table]]:
        """(key values, sub-table) for each distinct combination, sorted by key."""
        if len(self) == 0:
            return
        index: dict[tuple, list[int]] = {}
        for row, key in enumerate(zip(*(self.columns[k].tolist() for k in keys))):
            index.setdefault(key, []).append(row)
        for key in sorted(index):
            yield key, self.select(np.asarray(index[key], dtype=np.intp))


@dataclass(frozen=True)
class Run:
    """One run folder: its manifest and its result rows as columns.

    Derived columns: `score` (float, NaN when null), `k` (= i + j + 1),
    `output_chars` (length of the raw response text).
    """

    run_dir: Path
    manifest: dict[str, Any]
    rows: Table
    notes: tuple[str, ...] = field(default=())

    def experimental(self) -> Table:
        """Rows that feed the main statistics: regular items in order 1-2."""
        return self.rows.where(control="", order="12")

    def scored(self) -> Table:
        """Experimental rows with status ok and a score."""
        t = self.experimental()
        return t.select((t["status"] == "ok") & ~np.isnan(t["score"]))


def rows_to_table(rows: list[ResultRow]) -> Table:
    cols: dict[str, np.ndarray] = {}
    for name in _STRING_COLUMNS:
        cols[name] = np.array([getattr(r, name) for r in rows], dtype=str) if rows else np.array([], dtype=str)
    for name in _INT_COLUMNS:
        cols[name] = np.array([getattr(r, name) for r in rows], dtype=np.int64)
    for name in _FLOAT_COLUMNS:
        cols[name] = np.array([getattr(r, name) for r in rows], dtype=float)
    for name in _BOOL_COLUMNS:
        cols[name] = np.array([getattr(r, name) for r in rows], dtype=bool)
    cols["hay_doc_id"] = np.array([r.hay_doc_id or "" for r in rows], dtype=str) if rows else np.array([], dtype=str)
    cols["score"] = np.array([np.nan if r.score is None else r.score for r in rows], dtype=float)
    cols["raw_score"] = np.array([np.nan if r.raw_score is None else r.raw_score for r in rows], dtype=float)
    cols["output_chars"] = np.array([len(r.raw_text) for r in rows], dtype=np.int64)
    cols["k"] = cols["i"] + cols["j"] + 1
    return Table(cols)


def read_results(path: Path) -> list[ResultRow]:
    """Decode results.jsonl; a bad line raises ConfigError naming file and line."""
    decoder = msgspec.json.Decoder(ResultRow)
    rows: list[ResultRow] = []
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such results file (expected one ResultRow JSON object per line)") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append(decoder.decode(line))
            except msgspec.ValidationError as exc:
                raise ConfigError(f"{path} line {number}: not a result row: {exc}") from None
            except msgspec.DecodeError as exc:
                raise ConfigError(f"{path} line {number}: invalid JSON: {exc}") from None
    return rows


def read_manifest(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise ConfigError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    return manifest


def load_run(run_dir: Path | str) -> Run:
    """Load a run folder; results.jsonl is required, manifest.json optional."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: not a run folder (expected a directory with {RESULTS_FILE})")
    rows = read_results(run_dir / RESULTS_FILE)
    notes = []
    manifest_path = run_dir / MANIFEST_FILE
    if not manifest_path.exists():
        notes.append(f"{MANIFEST_FILE} missing: run configuration and versions unknown")
    if not rows:
        notes.append(f"{RESULTS_FILE} has no rows")
    return Run(run_dir=run_dir, manifest=read_manifest(manifest_path), rows=rows_to_table(rows), notes=tuple(notes))


# ---------------------------------------------------------------------------
# Human labels

LABEL_FIELDS = ("doc_id", "needle", "hay", "i", "j", "label")
LABELS_FORMAT = (
    "a CSV with header doc_id,needle,hay,i,j,label (or JSON Lines objects with those keys); "
    "label is a number on the judges' 0–100 scale, and the distinct label values are the ordered "
    "label set; optional column replicate (default 0)"
)


def load_labels(path: Path | str) -> Table:
    """Read human labels (format: LABELS_FORMAT) into a Table.

    Columns: doc_id, needle, hay (str), i, j, replicate (int), label (float).
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such labels file (expected {LABELS_FORMAT})")
    records: list[dict[str, Any]] = []
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{path} line {number}: invalid JSON: {exc}") from None
    else:
        with path.open(newline="", encoding="utf-8") as handle:
            records = list(csv.DictReader(handle))
    cols: dict[str, list] = {name: [] for name in (*LABEL_FIELDS, "replicate")}
    for number, rec in enumerate(records, start=1):
        missing = [name for name in LABEL_FIELDS if name not in rec or rec[name] in (None, "")]
        if missing:
            raise ConfigError(f"{path} record {number}: missing {', '.join(missing)} (expected {LABELS_FORMAT})")
        try:
            cols["i"].append(int(rec["i"]))
            cols["j"].append(int(rec["j"]))
            cols["replicate"].append(int(rec.get("replicate") or 0))
            label = float(rec["label"])
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path} record {number}: i, j, replicate must be integers and label a number: {exc}") from None
        if not 0.0 <= label <= 100.0:
            raise ConfigError(f"{path} record {number}: label {label} is outside the 0–100 scale")
        cols["label"].append(label)
        for name in ("doc_id", "needle", "hay"):
            cols[name].append(str(rec[name]))
    return Table(
        {
            "doc_id": np.array(cols["doc_id"], dtype=str),
            "needle": np.array(cols["needle"], dtype=str),
            "hay": np.array(cols["hay"], dtype=str),
            "i": np.array(cols["i"], dtype=np.int64),
            "j": np.array(cols["j"], dtype=np.int64),
            "replicate": np.array(cols["replicate"], dtype=np.int64),
            "label": np.array(cols["label"], dtype=float),
        }
    )
