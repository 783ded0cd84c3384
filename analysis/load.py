"""Read a run folder (results.jsonl + manifest.json) into column arrays.

analysis reads exported files only, never the scheduler or the store: a
run folder copied to another machine analyses the same way.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterator

import msgspec
import numpy as np

from engine.contracts import ConfigError, ResultRow

RESULTS_FILE = "results.jsonl"
PARQUET_FILE = "results.parquet"
MANIFEST_FILE = "manifest.json"

# Only the columns the analyses read. Strings are held as category codes
# (one byte a row for a judge or a status), numbers in compact dtypes.
_STRING_COLUMNS = ("run_id", "judge", "prompt_id", "prompt_version", "needle", "hay", "doc_id", "order", "control", "status")
_INT_COLUMNS = {"i": np.int16, "j": np.int16, "doc_index": np.int32, "replicate": np.int16, "completion_tokens": np.int32}
_BOOL_COLUMNS = ("oracle_ok",)
_CHUNK_ROWS = 65_536


def _code_dtype(n_categories: int) -> type:
    return np.uint8 if n_categories <= 1 << 8 else np.uint16 if n_categories <= 1 << 16 else np.int32


class Table:
    """Named, equally long columns with row selection and grouping.

    Deliberately tiny (no pandas). String columns are categorical: codes
    into a sorted array of categories, so comparing, selecting and grouping
    work on small integers and `table["judge"]` decodes on demand (an object
    array whose elements are the shared category strings).
    """

    def __init__(self, columns: dict[str, np.ndarray], categories: dict[str, np.ndarray] | None = None):
        data: dict[str, np.ndarray] = {}
        cats: dict[str, np.ndarray] = dict(categories or {})
        for name, col in columns.items():
            col = np.asarray(col)
            if name not in cats and col.dtype.kind in "USO":
                values, codes = np.unique(col.astype(str), return_inverse=True)
                cats[name] = values.astype(object)
                col = codes.reshape(-1).astype(_code_dtype(values.size))
            data[name] = col
        lengths = {name: len(col) for name, col in data.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns differ in length: {lengths}")
        self._data = data
        self._cats = cats

    @classmethod
    def _from_parts(cls, data: dict[str, np.ndarray], cats: dict[str, np.ndarray]) -> Table:
        table = cls.__new__(cls)
        table._data, table._cats = data, cats
        return table

    def __len__(self) -> int:
        return len(next(iter(self._data.values()))) if self._data else 0

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._cats:
            return self._cats[name][self._data[name]]
        return self._data[name]

    def __contains__(self, name: str) -> bool:
        return name in self._data

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Every column decoded (strings as object arrays)."""
        return {name: self[name] for name in self._data}

    def nbytes(self) -> int:
        return sum(col.nbytes for col in self._data.values())

    def select(self, mask: np.ndarray) -> Table:
        return Table._from_parts({name: col[mask] for name, col in self._data.items()}, self._cats)

    def _equal(self, name: str, value: Any) -> np.ndarray:
        col = self._data[name]
        values = list(value) if isinstance(value, (tuple, list, set)) else [value]
        if name in self._cats:
            cats = self._cats[name]
            codes = [int(np.searchsorted(cats, v)) for v in values]
            codes = [c for c, v in zip(codes, values) if c < cats.size and cats[c] == v]
            return np.isin(col, np.asarray(codes, dtype=col.dtype))
        return np.isin(col, values)

    def mask(self, **equals: Any) -> np.ndarray:
        """Rows whose columns equal the given values (a tuple/list/set means 'any of')."""
        mask = np.ones(len(self), dtype=bool)
        for name, value in equals.items():
            mask &= self._equal(name, value)
        return mask

    def where(self, **equals: Any) -> Table:
        return self.select(self.mask(**equals))

    def unique(self, name: str) -> list:
        if name in self._cats:
            return self._cats[name][np.unique(self._data[name])].tolist()
        return np.unique(self._data[name]).tolist()

    def group_index(self, *keys: str) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
        """(row order, group start offsets incl. the end, key values per group):
        rows order[starts[g]:starts[g+1]] form group g, groups sorted by key."""
        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=np.intp), np.zeros(1, dtype=np.intp), []
        cols = [self._data[k] for k in keys]
        order = np.lexsort(cols[::-1]) if cols else np.arange(n)
        change = np.zeros(n, dtype=bool)
        change[0] = True
        for col in cols:
            ordered = col[order]
            change[1:] |= ordered[1:] != ordered[:-1]
        starts = np.append(np.flatnonzero(change), n)
        firsts = order[starts[:-1]]
        values = [self._cats[k][self._data[k][firsts]].tolist() if k in self._cats else self._data[k][firsts].tolist() for k in keys]
        return order, starts, list(zip(*values))

    def key_codes(self, *keys: str) -> np.ndarray:
        """Per row, the number of its key combination (0.. in key order): equal
        numbers mean equal keys, with no Python object per row."""
        order, starts, _ = self.group_index(*keys)
        codes = np.empty(len(self), dtype=np.int64)
        codes[order] = np.repeat(np.arange(starts.size - 1), np.diff(starts))
        return codes

    def groups(self, *keys: str) -> Iterator[tuple[tuple, Table]]:
        """(key values, sub-table) for each distinct combination, sorted by key."""
        order, starts, values = self.group_index(*keys)
        for g, key in enumerate(values):
            yield key, self.select(np.sort(order[starts[g] : starts[g + 1]]))


class Run(msgspec.Struct, frozen=True, dict=True):
    """One run folder: its manifest and its result rows as columns.

    Derived columns: `score` (float, NaN when null), `k` (= i + j + 1),
    `output_chars` (length of the raw response text), `request` (the
    request's cache-key code at position (0, 0), else 0; see request_code).
    """

    run_dir: Path
    manifest: dict[str, Any]
    rows: Table
    notes: tuple[str, ...] = ()

    def experimental(self) -> Table:
        """Rows that feed the main statistics: regular items in order 1-2."""
        return self.rows.where(control="", order="12")

    def scored(self) -> Table:
        """Experimental rows with status ok and a score."""
        t = self.experimental()
        return t.select((t.mask(status="ok")) & ~np.isnan(t["score"]))


class _Columns:
    """Column chunks as they are read, coded and concatenated at the end."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[np.ndarray]] = {}
        self.codes: dict[str, dict[str, int]] = {name: {} for name in _STRING_COLUMNS}

    def add(self, name: str, values: np.ndarray) -> None:
        self.chunks.setdefault(name, []).append(values)

    def add_strings(self, name: str, values: list[str]) -> None:
        index = self.codes[name]
        self.add(name, np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32, count=len(values)))

    def table(self) -> Table:
        data: dict[str, np.ndarray] = {}
        cats: dict[str, np.ndarray] = {}
        empty = {**{n: np.int32 for n in _STRING_COLUMNS}, **_INT_COLUMNS, "oracle_ok": bool, "score": float, "output_chars": np.int32,
                 "request": np.uint64}  # fmt: skip
        for name, dtype in empty.items():
            parts = self.chunks.get(name, [])
            data[name] = np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
        for name in _STRING_COLUMNS:
            seen = np.array(list(self.codes[name]), dtype=object)
            rank = np.argsort(seen) if seen.size else np.zeros(0, dtype=np.intp)
            remap = np.empty(seen.size, dtype=_code_dtype(seen.size))
            remap[rank] = np.arange(seen.size)
            data[name] = remap[data[name]] if seen.size else data[name].astype(np.uint8)
            cats[name] = seen[rank] if seen.size else np.zeros(0, dtype=object)
        data["k"] = data["i"] + data["j"] + np.int16(1)
        return Table._from_parts(data, cats)


class _LeanRow(msgspec.Struct):
    """The fields of a ResultRow the analyses read (the rest is skipped)."""

    judge: str
    prompt_id: str
    prompt_version: str
    needle: str
    hay: str
    i: int
    j: int
    doc_id: str
    doc_index: int
    run_id: str = ""
    replicate: int = 0
    order: str = "12"
    control: str = ""
    status: str = "ok"
    score: float | None = None
    raw_text: str = ""
    completion_tokens: int = 0
    oracle_ok: bool = True
    cache_keys: tuple[str, ...] = ()


def request_code(cache_key: str) -> int:
    """The first 64 bits of a call's cache key (a hash of the whole request):
    equal codes mean byte-identical requests; 0 means unknown."""
    return int(cache_key[:16], 16) if cache_key else 0


def _add_rows(columns: _Columns, rows: list[Any]) -> None:
    for name in _STRING_COLUMNS:
        columns.add_strings(name, [getattr(r, name) for r in rows])
    for name, dtype in _INT_COLUMNS.items():
        columns.add(name, np.fromiter((getattr(r, name) for r in rows), dtype=dtype, count=len(rows)))
    columns.add("oracle_ok", np.fromiter((r.oracle_ok for r in rows), dtype=bool, count=len(rows)))
    columns.add("score", np.fromiter((np.nan if r.score is None else r.score for r in rows), dtype=float, count=len(rows)))
    columns.add("output_chars", np.fromiter((len(r.raw_text) for r in rows), dtype=np.int32, count=len(rows)))
    # only the score stability check compares requests, and only at (0, 0)
    columns.add("request", np.fromiter((request_code(r.cache_keys[-1]) if r.cache_keys and r.i == 0 and r.j == 0 else 0 for r in rows),
                                       dtype=np.uint64, count=len(rows)))  # fmt: skip


def rows_to_table(rows: list[ResultRow]) -> Table:
    columns = _Columns()
    _add_rows(columns, rows)
    return columns.table()


def _no_results(path: Path) -> ConfigError:
    return ConfigError(
        f"{path.parent}: no {path.name} here, so there are no results to report on. "
        f"`needlejudge run CONFIG` judges the design and writes {RESULTS_FILE} and {MANIFEST_FILE} "
        "into the config's `output` folder; pass that folder to `needlejudge report`."
    )


def read_results_jsonl(path: Path) -> Table:
    """Stream results.jsonl in chunks into columns; a bad line raises
    ConfigError naming file and line. Memory: the columns plus one chunk."""
    decoder = msgspec.json.Decoder(_LeanRow)
    columns = _Columns()
    chunk: list[_LeanRow] = []
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise _no_results(path) from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                chunk.append(decoder.decode(line))
            except msgspec.ValidationError as exc:
                raise ConfigError(f"{path} line {number}: not a result row: {exc}") from None
            except msgspec.DecodeError as exc:
                raise ConfigError(f"{path} line {number}: invalid JSON: {exc}") from None
            if len(chunk) == _CHUNK_ROWS:
                _add_rows(columns, chunk)
                chunk = []
    _add_rows(columns, chunk)
    return columns.table()


def read_results_parquet(path: Path) -> Table:
    """Read only the needed columns of results.parquet, one record batch at a time."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    columns = _Columns()
    wanted = [*_STRING_COLUMNS, *_INT_COLUMNS, *_BOOL_COLUMNS, "score", "raw_text", "cache_keys"]
    for batch in pq.ParquetFile(path).iter_batches(batch_size=_CHUNK_ROWS, columns=wanted):
        for name in _STRING_COLUMNS:
            encoded = pc.dictionary_encode(batch.column(name).fill_null(""))
            local = np.asarray([columns.codes[name].setdefault(v, len(columns.codes[name])) for v in encoded.dictionary.to_pylist()],
                               dtype=np.int32)  # fmt: skip
            columns.add(name, local[encoded.indices.to_numpy(zero_copy_only=False)])
        for name, dtype in _INT_COLUMNS.items():
            columns.add(name, batch.column(name).fill_null(0).to_numpy(zero_copy_only=False).astype(dtype))
        columns.add("oracle_ok", batch.column("oracle_ok").fill_null(True).to_numpy(zero_copy_only=False).astype(bool))
        columns.add("score", batch.column("score").to_numpy(zero_copy_only=False).astype(float))
        columns.add("output_chars", pc.utf8_length(batch.column("raw_text").fill_null("")).to_numpy(zero_copy_only=False).astype(np.int32))
        request = np.zeros(batch.num_rows, dtype=np.uint64)
        origin = np.flatnonzero((columns.chunks["i"][-1] == 0) & (columns.chunks["j"][-1] == 0))
        for row, keys in zip(origin.tolist(), batch.column("cache_keys").take(origin).to_pylist()):
            request[row] = request_code(keys[-1]) if keys else 0
        columns.add("request", request)
    return columns.table()


def read_results(run_dir: Path) -> Table:
    """The run's rows as columns: from results.parquet when it is at least as
    new as results.jsonl (both are the same export) and pyarrow is present,
    else streamed from results.jsonl."""
    jsonl, parquet = run_dir / RESULTS_FILE, run_dir / PARQUET_FILE
    if not jsonl.exists():
        raise _no_results(jsonl)
    if parquet.exists() and parquet.stat().st_mtime >= jsonl.stat().st_mtime:
        try:
            return read_results_parquet(parquet)
        except ImportError:
            pass
    return read_results_jsonl(jsonl)


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
        raise ConfigError(
            f"{run_dir}: not a run folder (expected a directory with {RESULTS_FILE}, as `needlejudge run CONFIG` writes)"
        )
    rows = read_results(run_dir)
    notes = []
    manifest_path = run_dir / MANIFEST_FILE
    if not manifest_path.exists():
        notes.append(f"{MANIFEST_FILE} missing: run configuration and versions unknown")
    if not len(rows):
        notes.append(f"{RESULTS_FILE} has no rows")
    manifest = read_manifest(manifest_path)
    notes.extend(document_notes(manifest))
    return Run(run_dir=run_dir, manifest=manifest, rows=rows, notes=tuple(notes))


def document_notes(manifest: dict[str, Any]) -> list[str]:
    """Which documents the cells drew from, as the run recorded it in words
    (manifest corpus.cell_documents.lines; absent from runs before the setting)."""
    corpus = manifest.get("corpus")
    coverage = corpus.get("cell_documents") if isinstance(corpus, dict) else None
    lines = coverage.get("lines") if isinstance(coverage, dict) else None
    return [str(line) for line in lines] if isinstance(lines, list) else []


# ---------------------------------------------------------------------------
# Human labels

LABEL_FIELDS = ("doc_id", "needle", "hay", "i", "j", "label")
LABELS_FORMAT = (
    "a CSV with header doc_id,needle,hay,i,j,label (or JSON Lines objects with those keys); "
    "label is a number on the judges' 0–100 scale, and the distinct label values are the ordered "
    "label set; optional columns replicate (default 0), labeller, inclusion (the item's sampling "
    "probability, default 1), at (unix time) and simulated (true for simulated labels)"
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
    cols: dict[str, list] = {name: [] for name in (*LABEL_FIELDS, "replicate", "labeller", "inclusion", "at", "simulated")}
    for number, rec in enumerate(records, start=1):
        missing = [name for name in LABEL_FIELDS if name not in rec or rec[name] in (None, "")]
        if missing:
            raise ConfigError(f"{path} record {number}: missing {', '.join(missing)} (expected {LABELS_FORMAT})")
        try:
            cols["i"].append(int(rec["i"]))
            cols["j"].append(int(rec["j"]))
            cols["replicate"].append(int(rec.get("replicate") or 0))
            label = float(rec["label"])
            inclusion = float(rec.get("inclusion") or 1.0)
            at = float(rec.get("at") or "nan")
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path} record {number}: i, j, replicate must be integers and label, inclusion, at numbers: {exc}") from None
        if not 0.0 < inclusion <= 1.0:
            raise ConfigError(f"{path} record {number}: inclusion {inclusion} is not a probability in (0, 1]")
        cols["inclusion"].append(inclusion)
        cols["at"].append(at)
        cols["labeller"].append(str(rec.get("labeller") or "human"))
        cols["simulated"].append(str(rec.get("simulated", "")).lower() in ("true", "1"))
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
            "labeller": np.array(cols["labeller"], dtype=str),
            "inclusion": np.array(cols["inclusion"], dtype=float),
            "at": np.array(cols["at"], dtype=float),
            "simulated": np.array(cols["simulated"], dtype=bool),
        }
    )
