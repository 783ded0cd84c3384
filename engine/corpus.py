"""Reading raw corpus files and cleaning Wikipedia plain text.

Readers accept, per input path (a file or a folder of files):
- JSON arrays of {id, title, text} objects (the Plain Text Wikipedia shape),
- JSON Lines with the same fields (.jsonl / .ndjson, or a .json file whose
  first character is "{"),
- WikiExtractor files of `<doc id=... url=... title=...>` records,
- .txt files holding one document each (id = file stem, title = first line).
Errors name the file and the record and what was expected.

Cleaning (ARCHITECTURE.md "The experiment") turns WikiExtractor-style text into
prose paragraphs joined by "\\n": the repeated title line, section headings,
appendix sections, tables, code, formulas and list stubs are dropped, and
lines hard-wrapped inside a paragraph are re-joined.
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


# ---------------------------------------------------------------------------
# Readers

_WIKIEXTRACTOR_DOC = re.compile(r"<doc\b([^>]*)>(.*?)</doc>", re.DOTALL)
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def read_documents(inputs: Iterable[Path]) -> Iterator[RawDocument]:
    """Every document of every input, in input order (folders: sorted names)."""
    for path in inputs:
        path = Path(path)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            if not files:
                raise ConfigError(f"{path}: folder holds no corpus files")
            for file in files:
                yield from read_file(file)
        elif path.is_file():
            yield from read_file(path)
        else:
            raise ConfigError(f"{path}: no such corpus file or folder")


def read_file(path: Path) -> Iterator[RawDocument]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    head = text.lstrip()[:1]
    suffix = path.suffix.lower()
    if head == "<" and text.lstrip().startswith("<doc"):
        yield from _read_wikiextractor(path, text)
    elif suffix in (".jsonl", ".ndjson") or (suffix == ".json" and head == "{"):
        yield from _read_json_lines(path, text)
    elif suffix == ".json":
        yield from _read_json_array(path, text)
    elif suffix == ".txt":
        yield _read_txt(path, text)
    else:
        raise ConfigError(
            f"{path}: unknown corpus file type; expected .json (array of {{id, title, text}}), "
            ".jsonl, .txt or a WikiExtractor file starting with <doc"
        )


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
    return RawDocument(doc_id=str(doc_id), title=title, text=text, source=source)


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


def _read_txt(path: Path, text: str) -> RawDocument:
    first_line = text.strip().split("\n", 1)[0].strip() if text.strip() else ""
    return RawDocument(doc_id=path.stem, title=first_line, text=text, source=str(path))


# ---------------------------------------------------------------------------
# Cleaning

APPENDIX_HEADINGS = frozenset(
    {
        "see also",
        "references",
        "external links",
        "notes",
        "further reading",
        "bibliography",
        "sources",
        "citations",
        "footnotes",
        "works cited",
        "notes and references",
        "references and notes",
        "literature",
        "selected bibliography",
        "external sources",
        "gallery",
    }
)

_TERMINAL = re.compile(r"[.!?][\"'”’)\]]*$")
_HEADING_MAX_WORDS = 8
_HEADING_MAX_CHARS = 60
_FINITE_VERBS = frozenset(
    "is was are were has had have be been will would can could may might must shall should does did do".split()
)
_TAGS = re.compile(r"<[^<>]{0,200}>")
_EMPTY_PARENS = re.compile(r"\s*\((?:[\s;,]*)\)")
_LIST_MARK = re.compile(r"^(?:[*#•·\-–—]|\d+[.)]\s)")
_CODE_CHARS = re.compile(r"[{};=<>\\]")


def is_heading(line: str) -> bool:
    """A WikiExtractor section heading: a short line ending in one period
    ("Results.", "Early life and education.") with no other sentence end."""
    stripped = line.strip()
    if not stripped.endswith(".") or len(stripped) > _HEADING_MAX_CHARS:
        return False
    body = stripped[:-1]
    if not body or re.search(r"[.!?;:]", body):
        return False
    words = body.split()
    # a short sentence of its own ("Alpha is a letter.") has a finite verb;
    # headings rarely do. Short sentences without one of these are lost,
    # which only shortens a document.
    return len(words) <= _HEADING_MAX_WORDS and not any(w.lower() in _FINITE_VERBS for w in words)


def _is_table_or_code(line: str) -> bool:
    if line[:1] in (" ", "\t"):  # indented: code, verse, preformatted
        return True
    if line.startswith(("{|", "|", "!")) or "||" in line or line.count("\t") >= 2:
        return True
    if "formula_" in line or line.startswith("[[") or "[[Category:" in line:
        return True
    return len(_CODE_CHARS.findall(line)) > max(3, len(line) // 25)


def clean_text(text: str, title: str = "") -> str:
    """Prose paragraphs of a Wikipedia article, joined by "\\n"."""
    text = html.unescape(html.unescape(text))  # WikiExtractor double-escapes some entities
    text = _TAGS.sub(" ", text)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = _drop_title(lines, title)
    lines = _join_wrapped(lines)
    paragraphs: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if is_heading(line):
            if line.strip()[:-1].strip().lower() in APPENDIX_HEADINGS:
                break  # appendix sections run to the end of an article
            continue
        if _is_table_or_code(line) or _LIST_MARK.match(line.lstrip()):
            continue
        if not _TERMINAL.search(line):  # list stubs, captions, table cells, titles
            continue
        line = _EMPTY_PARENS.sub("", line)
        line = re.sub(r"[ \u00a0]{2,}", " ", line).strip()
        if line:
            paragraphs.append(line)
    return "\n".join(paragraphs)


def _drop_title(lines: list[str], title: str) -> list[str]:
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and title and lines[start].strip() == title.strip():
        start += 1
    return lines[start:]


def _join_wrapped(lines: list[str]) -> list[str]:
    """Re-join a paragraph hard-wrapped across lines: a line without a
    sentence end followed by a line starting in lower case."""
    out: list[str] = []
    for line in lines:
        if (
            out
            and out[-1].strip()
            and line[:1].islower()
            and not _TERMINAL.search(out[-1])
            and not out[-1].rstrip().endswith(":")
        ):
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out
