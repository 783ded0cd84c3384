"""Reading raw corpus files and cleaning Wikipedia plain text.

Readers accept, per input path (a file or a folder of files):
- JSON arrays of {id, title, text} objects (the Plain Text Wikipedia shape),
  with an optional "date" (a year or an ISO date: when the text was written),
- JSON Lines with the same fields (.jsonl / .ndjson, or a .json file whose
  first character is "{"),
- WikiExtractor files of `<doc id=... url=... title=...>` records,
- .txt files holding one document each (id = file stem; title = the first line
  when it looks like one: TXT_TITLE_MAX_CHARS).
Errors name the file and the record and what was expected. `check_inputs`
checks the inputs' existence and kind without reading them through, so that
`prepare` can refuse bad input before it creates a store. Cleaning the text
is engine.corpus.cleaning's job.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from engine.contracts import ConfigError


class RawDocument(msgspec.Struct, frozen=True, kw_only=True):
    doc_id: str
    title: str
    text: str
    source: str  # "file" or "file:record" for error messages
    year: int | None = None  # when it was written: the record's "date", else a dated title's (`title_year`)


# ---------------------------------------------------------------------------
# Readers

_WIKIEXTRACTOR_DOC = re.compile(r"<doc\b([^>]*)>(.*?)</doc>", re.DOTALL)
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def input_files(inputs: Iterable[Path]) -> Iterator[Path]:
    """The corpus files of `inputs`, in input order (folders: sorted names)."""
    for path in inputs:
        path = Path(path)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            if not files:
                raise ConfigError(f"{path}: folder holds no corpus files")
            yield from files
        elif path.is_file():
            yield path
        else:
            raise ConfigError(f"{path}: no such corpus file or folder")


def check_inputs(inputs: Iterable[Path]) -> None:
    """Raise ConfigError unless every input exists and every file is of a
    known kind (judged from its name and first characters only)."""
    for file in input_files(inputs):
        with file.open("rb") as fh:
            start = fh.read(4096).decode("utf-8", errors="replace")
        _file_kind(file, start)


def read_documents(inputs: Iterable[Path]) -> Iterator[RawDocument]:
    """Every document of every input, in input order (folders: sorted names)."""
    for file in input_files(inputs):
        yield from read_file(file)


def _file_kind(path: Path, text: str) -> str:
    """"wikiextractor", "jsonl", "json" or "txt" from the name and the start of `text`."""
    start = text.lstrip()
    suffix = path.suffix.lower()
    if start.startswith("<doc"):
        return "wikiextractor"
    if suffix in (".json", ".jsonl", ".ndjson") and not start:
        raise ConfigError(f"{path}: empty file; expected JSON records with id, title and text")
    if suffix in (".jsonl", ".ndjson") or (suffix == ".json" and start[:1] == "{"):
        return "jsonl"
    if suffix in (".json", ".txt"):
        return suffix[1:]
    raise ConfigError(
        f"{path}: unknown corpus file type; expected .json (array of {{id, title, text}}), "
        ".jsonl, .txt or a WikiExtractor file starting with <doc"
    )


def read_file(path: Path) -> Iterator[RawDocument]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    kind = _file_kind(path, text)
    if kind == "wikiextractor":
        yield from _read_wikiextractor(path, text)
    elif kind == "jsonl":
        yield from _read_json_lines(path, text)
    elif kind == "json":
        yield from _read_json_array(path, text)
    else:
        yield _read_txt(path, text)


def _record(path: Path, where: str, obj: object) -> RawDocument:
    source = f"{path}: {where}"
    if not isinstance(obj, dict):
        raise ConfigError(f"{source}: expected an object with id, title and text, got {type(obj).__name__}")
    text = obj.get("text")
    if not isinstance(text, str):
        raise ConfigError(f"{source}: field 'text' must be a string, got {type(text).__name__}")
    doc_id = obj.get("id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or str(doc_id) == "":
        raise ConfigError(f"{source}: field 'id' must be a non-empty string or integer, got {doc_id!r}")
    title = obj.get("title", "")
    if not isinstance(title, str):
        raise ConfigError(f"{source}: field 'title' must be a string, got {type(title).__name__}")
    return RawDocument(doc_id=str(doc_id), title=title, text=text, source=source, year=record_year(source, obj.get("date"), title))


# a title that dates its text: "State of the Union Address, 1790 (George Washington)", "Report (1901)"
_DATED_TITLE = re.compile(r"(?:,\s*|\()(\d{4})(?:\)|\s*\(|\s*$)")
_ISO_YEAR = re.compile(r"^\s*(\d{4})(?:-\d{2}(?:-\d{2})?(?:[T ].*)?)?\s*$")


def title_year(title: str) -> int | None:
    """The year a title dates its text with (", 1790" or "(1790)" after the
    name; never a year the title is about: "1812 Overture", "Brexit in 2017" have none)."""
    found = {int(m.group(1)) for m in _DATED_TITLE.finditer(title)}
    return found.pop() if len(found) == 1 else None


def record_year(source: str, date: object, title: str) -> int | None:
    """The year a record was written: its "date" (a year or an ISO date), else its title's (`title_year`)."""
    if date is None:
        return title_year(title)
    if isinstance(date, int) and not isinstance(date, bool):
        return date
    match = _ISO_YEAR.match(date) if isinstance(date, str) else None
    if match is None:
        raise ConfigError(f"{source}: field 'date' must be a year or an ISO date (1812, \"1812-06-01\"), got {date!r}")
    return int(match.group(1))


def _read_json_array(path: Path, text: str) -> Iterator[RawDocument]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a JSON array of {{id, title, text}} objects, got {type(data).__name__}")
    for index, obj in enumerate(data):
        yield _record(path, f"record {index}", obj)


def _read_json_lines(path: Path, text: str) -> Iterator[RawDocument]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: line {lineno}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        yield _record(path, f"line {lineno}", obj)


def _read_wikiextractor(path: Path, text: str) -> Iterator[RawDocument]:
    found = False
    for index, match in enumerate(_WIKIEXTRACTOR_DOC.finditer(text)):
        found = True
        attrs = {k: html.unescape(v) for k, v in _ATTRIBUTE.findall(match.group(1))}
        line = text.count("\n", 0, match.start()) + 1
        if "id" not in attrs:
            raise ConfigError(f"{path}: <doc> record {index} (line {line}): missing id attribute")
        yield RawDocument(
            doc_id=attrs["id"],
            title=attrs.get("title", ""),
            text=match.group(2).strip("\n"),
            source=f"{path}: <doc> record {index} (line {line})",
        )
    if not found:
        raise ConfigError(f"{path}: starts with <doc but holds no complete <doc ...>...</doc> record")


# A .txt file's first line is its title only if it looks like one: followed
# by more text, at most this long, not ending like a sentence. A file holding
# an article on one line (or starting with prose) keeps all of it (issue 33:
# 2 of 4 real articles were dropped as empty_after_cleaning).
TXT_TITLE_MAX_CHARS = 200


def _read_txt(path: Path, text: str) -> RawDocument:
    first, _, rest = text.strip().partition("\n")
    first = first.strip()
    titled = bool(rest.strip()) and len(first) <= TXT_TITLE_MAX_CHARS and not first.endswith((".", "!", "?", "…", ":", ";"))
    return RawDocument(doc_id=path.stem, title=first if titled else "", text=text, source=str(path))
