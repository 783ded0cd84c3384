"""`needlejudge cache stats|export|verify` (engine/commands/cache.py) on a real store."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from engine.cache.call_cache import RESULTS_DB, encode_result
from engine.cli import main as cli_main
from engine.contracts import CallResult, Usage
from engine.cache.store import Store


def answer(text: str) -> bytes:
    return encode_result(CallResult(status="ok", text=text, usage=Usage(prompt_tokens=600, completion_tokens=2), cost_usd=1e-4))


def test_cache_command_stats_export_and_verify_reports_corrupt_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    store = Store(path)
    store.put_many_raw(RESULTS_DB, [(bytes([r]) * 32, answer(str(r))) for r in range(5)])
    store.put_many_raw(RESULTS_DB, [(b"\xff" * 32, b"\xc1not msgpack")])
    store.close()

    assert cli_main(["cache", "stats", str(path)]) == 0
    stats = msgspec.json.decode(capsys.readouterr().out)
    assert stats["entries"] == 6 and stats["corrupt"] == 1 and stats["by_status"] == {"ok": 5}
    assert stats["prompt_tokens"] == 5 * 600

    export = tmp_path / "cache.jsonl"
    assert cli_main(["cache", "export", str(path), "--out", str(export)]) == 1  # corrupt entry skipped, said so
    assert "1 corrupt entries skipped" in capsys.readouterr().err
    assert cli_main(["cache", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "corrupt " + "ff" * 32 in out
    assert "verified 6 entries: 5 ok, 1 corrupt" in out

    assert cli_main(["cache", "verify", str(path), "--delete-corrupt"]) == 0
    assert cli_main(["cache", "verify", str(path)]) == 0
    assert "verified 5 entries: 5 ok, 0 corrupt" in capsys.readouterr().out
    assert cli_main(["cache", "export", str(path), "--out", str(export)]) == 0
    lines = export.read_bytes().splitlines()
    assert len(lines) == 5
    assert {msgspec.json.decode(line)["result"]["text"] for line in lines} == {"0", "1", "2", "3", "4"}


def test_cache_command_on_a_missing_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["cache", "stats", str(tmp_path / "nothing")]) == 2
    assert "no needlejudge store here" in capsys.readouterr().err
