"""Malformed configs and corpora (issue 15): every case, the command it goes
through (`needlejudge run CONFIG --dry-run`, or `needlejudge prepare FILE`),
and the exact message it gets. Shared by tests/test_reliability_input.py
(which asserts each message names the file and the key or value) and
benchmarks/bench_reliability.py (the table in RELIABILITY.md).

Cases run in-process through engine.cli.main (the real command line, its
real error handling); a config case starts from a valid config on a
prepared store, so only the broken part can fail.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from reliability_fixtures import experiment_toml

NO_SERVER = "http://127.0.0.1:9"  # a dry run calls nothing; the key case fails before any call


class Case(msgspec.Struct, frozen=True):
    name: str
    change: Callable[[str], str] | None  # config text -> broken config text
    must_name: tuple[str, ...]  # besides the file: the key or value at fault
    corpus: Callable[[Path], Path] | None = None  # writes a broken corpus, returns its path
    dry_run: bool = True


def _sub(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)
    return change


def _write(name: str, content: bytes | str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        if isinstance(content, str) and content == "<dir>":
            path.mkdir(parents=True, exist_ok=True)
            (path / "notes.md").write_text("nothing to read here\n")
            return path
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path
    return make


_JUDGE_NAME = 'name = "sim"'
CASES = (
    Case("unknown top-level key", lambda text: "sed = 1\n" + text, ("sed",)),
    Case("unknown key in [stopping]", _sub('kind = "fixed"', 'kind = "fixed"\nepsilonn = 3.0'), ("epsilonn",)),
    Case("unknown key in [[judges]]", _sub(_JUDGE_NAME, _JUDGE_NAME + "\nconcurrancy = 4"), ("concurrancy",)),
    Case("wrong type: seed", _sub("seed = 5", 'seed = "five"'), ("seed",)),
    Case("wrong type: judge concurrency", _sub("concurrency = 8", 'concurrency = "many"'), ("concurrency",)),
    Case("wrong type: needles not a list", _sub('needles = ["none", "neg", "con"]', 'needles = "neg"'), ("needles",)),
    Case("impossible value: concurrency = 0", _sub("concurrency = 8", "concurrency = 0"), ("concurrency",)),
    Case("wrong type: judge prefix_gate", _sub("concurrency = 8", 'concurrency = 8\nprefix_gate = "yes"'), ("prefix_gate", "sim", "yes")),
    Case("prefix_gate on a judge without prompt caching", _sub('adapter = "openai-compatible"', 'adapter = "gemini"\nprefix_gate = true'),
         ("prefix_gate", "sim", "gemini")),
    Case("impossible value: replicates = 0", _sub("replicates = 1", "replicates = 0"), ("replicates",)),
    Case("impossible value: negative position", _sub("positions = [[0, 0], [1, 2], [2, 2], [3, 1]]", "positions = [[0, -1]]"), ("positions",)),
    Case("impossible value: fixed n = 0", _sub("n = 6", "n = 0"), ("n",)),
    Case("impossible value: alpha = 2", _sub('kind = "fixed"\nn = 6', 'kind = "ci"\nalpha = 2.0'), ("alpha",)),
    Case("impossible value: negative price", _sub(_JUDGE_NAME, _JUDGE_NAME + "\nprices = { input = -1.0 }"), ("input",)),
    Case("impossible value: min_chars_per_sentence < 0", _sub("min_chars_per_sentence = 100.0", "min_chars_per_sentence = -5.0"), ("min_chars_per_sentence",)),
    Case("unknown needle", _sub('needles = ["none", "neg", "con"]', 'needles = ["neg", "flip"]'), ("flip",)),
    Case("unknown hay", _sub('hays = ["orig", "rand"]', 'hays = ["orig", "mixed"]'), ("mixed",)),
    Case("unknown adapter (dry run)", _sub('adapter = "openai-compatible"', 'adapter = "openia"'), ("openia",)),
    Case("unknown adapter (run)", _sub('adapter = "openai-compatible"', 'adapter = "openia"'), ("openia",), dry_run=False),
    Case("unknown stopping kind", _sub('kind = "fixed"', 'kind = "sometimes"'), ("sometimes",)),
    Case("unknown prompt", _sub("replicates = 1", 'replicates = 1\nprompts = ["bandz"]'), ("bandz",)),
    Case("unknown judge option (run)", _sub("options = { ", "options = { nope = 1, "), ("nope",), dry_run=False),
    Case("a position no document can hold (dry run)", _sub("[3, 1]]", "[3, 1], [200, 200]]"), ("positions", "[200, 200]")),
    Case("a position no document can hold (run)", _sub("[3, 1]]", "[3, 1], [200, 200]]"), ("positions", "[200, 200]"), dry_run=False),
    Case("both k and positions", _sub("replicates = 1", "replicates = 1\nk = 3"), ("k", "positions")),
    Case("no [[judges]]", lambda text: text[: text.index("[[judges]]")], ("judges",)),
    Case("duplicate judge names", lambda text: text + text[text.index("[[judges]]"):], ("sim",)),
    Case("invalid TOML (unclosed string)", _sub('hays = ["orig", "rand"]', 'hays = ["orig", "rand]'), ("line",)),
    Case("config not UTF-8", lambda text: text.replace("seed = 5", "seed = 5 # \udcff"), ("UTF-8",)),
    Case("missing config file", None, ("missing.toml",)),
    Case("API key variable not set", _sub('api_key_env = "NJ_RELIABILITY_KEY"', 'api_key_env = "NJ_NOT_SET_ANYWHERE"'), ("NJ_NOT_SET_ANYWHERE",), dry_run=False),
    Case("corpus: missing file", None, ("absent.json",), corpus=lambda folder: folder / "absent.json"),
    Case("corpus: empty JSON array", None, ("empty.json",), corpus=_write("empty.json", "[]")),
    Case("corpus: not JSON", None, ("garbage.json",), corpus=_write("garbage.json", "this is { not json")),
    Case("corpus: wrong fields", None, ("fields.json", "text"), corpus=_write("fields.json", json.dumps([{"name": "a", "body": "b"}]))),
    Case("corpus: JSON Lines with a bad line", None, ("bad.jsonl", "2"),
         corpus=_write("bad.jsonl", json.dumps({"id": "1", "title": "A", "text": "Some text."}) + "\n{oops\n")),
    Case("corpus: text not UTF-8", None, ("latin.txt",), corpus=_write("latin.txt", b"caf\xe9 " * 50)),
    Case("corpus: folder with nothing readable", None, ("empty_folder",), corpus=_write("empty_folder", "<dir>")),
)


def base_config(folder: Path, store: Path, corpus: Path, min_chars: float) -> str:
    return experiment_toml(store=store, output=folder / "out", url=NO_SERVER, corpus=corpus, min_chars=min_chars)


def run_case(case: Case, folder: Path, store: Path, corpus: Path, min_chars: float) -> dict[str, Any]:
    """Run one case through the CLI; the exit code, stderr's message and the file at fault."""
    from engine.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    if case.corpus is not None:
        target = case.corpus(folder)
        argv = ["prepare", str(target), "--store", str(folder / "prepare-store"), "--no-progress"]
    elif case.change is None:
        target = folder / "missing.toml"
        argv = ["run", str(target), "--dry-run"]
    else:
        target = folder / "exp.toml"
        text = case.change(base_config(folder, store, corpus, min_chars))
        target.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        argv = ["run", str(target), "--quiet"] + (["--dry-run"] if case.dry_run else [])
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception as exc:  # noqa: BLE001 - an uncaught error is what this records
            code = None
            print(f"UNCAUGHT {type(exc).__name__}: {exc}", file=err)
    message = " / ".join(line for line in err.getvalue().strip().splitlines() if line.strip())
    return {"case": case.name, "command": " ".join(argv[:1]) + (" --dry-run" if "--dry-run" in argv else ""), "exit": code,
            "message": message, "file": target.name, "must_name": case.must_name, "stdout": out.getvalue()[-300:]}


def names_what_is_wrong(result: dict[str, Any]) -> bool:
    message = result["message"]
    return result["exit"] not in (0, None) and result["file"] in message and all(word in message for word in result["must_name"])


def bad_input_table(folder: Path) -> list[dict[str, Any]]:
    """Every case, on a store prepared from the bundled corpus's test slice."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from reliability_fixtures import copy_store

    source = Path("/tmp/needlejudge-bench-reliability/corpus")
    from engine.corpus.prepare import BUNDLED_CORPUS

    store = copy_store(source, folder / "store")
    rows = []
    for number, case in enumerate(CASES):
        result = run_case(case, folder / f"case{number}", store, BUNDLED_CORPUS, 100.0)
        result["names_file_and_key"] = names_what_is_wrong(result)
        rows.append(result)
    return rows
