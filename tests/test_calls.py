"""`needlejudge calls export/import` (engine/commands/calls.py,
engine/run/batch/imports.py): a run's waves out as OpenAI batch files,
answered elsewhere (here each body is POSTed to the fake provider server,
as any engine would run it, and written back in the OpenAI batch output
shape), and back in, checked. Results equal the plain run's; a final run
makes no calls; what does not belong is refused and nothing is written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from experiments import FAKE_KEY_ENV, SMALL_CI, small_fake_design, write_experiment

from engine.cli import main as cli



@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, "test-key")


def experiment(folder: Path, server, prepared_store, corpus_slice_path, corpus_settings, *, seed: int = 3) -> Path:  # type: ignore[no-untyped-def]
    write_experiment(folder, prepared_store, corpus_slice_path, corpus_settings, small_fake_design(server.url, SMALL_CI, seed=seed))
    return folder / "exp.toml"


def answer(folder: Path, url: str, *, model: str | None = None) -> int:
    """Run a wave's calls as a batch engine would: each body POSTed, each answer written as an output line."""
    manifest = json.loads((folder / "manifest.json").read_text())
    calls = 0
    for shard in manifest["shards"]:
        out = []
        for line in (folder / shard["input"]).read_text().splitlines():
            entry = json.loads(line)
            request = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(entry["body"]).encode(),
                                             headers={"Content-Type": "application/json", "Authorization": "Bearer test-key"})
            with urllib.request.urlopen(request) as reply:
                body = json.loads(reply.read())
            if model is not None:
                body["model"] = model
            out.append({"id": f"batch_req_{calls}", "custom_id": entry["custom_id"],
                        "response": {"status_code": 200, "request_id": "r", "body": body}, "error": None})
            calls += 1
        (folder / shard["output"]).write_text("".join(json.dumps(o) + "\n" for o in out))
    return calls


def export(config: Path, out: Path, capsys, *, shards: int = 2) -> Path | None:  # type: ignore[no-untyped-def]
    assert cli(["calls", "export", str(config), "--out", str(out), "--shards", str(shards)]) == 0
    printed = capsys.readouterr().out
    if "nothing left to ask" in printed:
        return None
    return Path(printed.split(" file(s) in ")[1].split("\n")[0])


def rows(config: Path) -> list[tuple]:
    lines = (config.parent / "out" / "results.jsonl").read_text().splitlines()
    return [(r["needle"], r["i"], r["doc_id"], r["status"], r["score"], r["raw_text"]) for r in map(json.loads, lines)]


def cached(config: Path) -> int:
    from engine.cache.call_cache import RESULTS_DB
    from engine.cache.store import Store

    with Store(config.parent / "store", readonly=True) as store:
        return store.count(RESULTS_DB)


@pytest.fixture(scope="module")
def plain(tmp_path_factory, server, prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    """The same design run by the engine's own workers."""
    os.environ[FAKE_KEY_ENV] = "test-key"
    config = experiment(tmp_path_factory.mktemp("plain"), server, prepared_store, corpus_slice_path, corpus_settings)
    assert cli(["run", str(config), "--quiet"]) == 0
    return rows(config)


def test_waves_out_and_back_give_the_plain_runs_results(tmp_path, server, plain, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = experiment(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings)
    waves = []
    while (folder := export(config, tmp_path / "waves", capsys)) is not None:
        manifest = json.loads((folder / "manifest.json").read_text())
        assert (manifest["judge"], manifest["model"], manifest["wave"]) == ("sim", "sim-judge", len(waves) + 1)
        assert len(manifest["shards"]) == 2 or manifest["shards"][0]["entries"] == 1
        waves.append(answer(folder, server.url))
        assert cli(["calls", "import", str(config), str(folder)]) == 0
        assert f"{waves[-1]:,} answer(s) cached" in capsys.readouterr().out
        assert len(waves) < 20
    assert len(waves) >= 3, waves  # the ci rule's cells stop over several waves
    before = server.stats()["requests"]
    assert cli(["run", str(config), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "0 judged with calls made in this run" in out and server.stats()["requests"] == before
    assert "'converged': 3" in out  # the ci rule stopped cells (one runs to its max_docs)
    assert rows(config) == plain  # the same cells' stops, documents and scores


def test_an_import_twice_writes_nothing_and_a_killed_one_completes(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = experiment(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings)
    folder = export(config, tmp_path / "waves", capsys)
    calls = answer(folder, server.url)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    command = [sys.executable, "-m", "engine.cli", "calls", "import", str(config), str(folder)]
    killed = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert cached(config) in {0, calls}  # all or nothing
    assert cli(["calls", "import", str(config), str(folder)]) == 0
    assert cached(config) == calls
    capsys.readouterr()
    assert cli(["calls", "import", str(config), str(folder)]) == 0
    assert "already imported; nothing written" in capsys.readouterr().out
    assert cached(config) == calls


def test_an_export_waits_for_the_pending_waves_import(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = experiment(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings)
    folder = export(config, tmp_path / "waves", capsys)
    assert cli(["calls", "export", str(config), "--out", str(tmp_path / "waves")]) == 1
    assert f"not imported yet: {folder.resolve()}" in capsys.readouterr().err
    assert not (tmp_path / "waves" / "sim" / "wave-0002").exists()


def _refused(config: Path, folder: Path, capsys, *extra: str) -> str:  # type: ignore[no-untyped-def]
    before = cached(config)
    assert cli(["calls", "import", str(config), str(folder), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"needlejudge calls import: refused {folder}: ") and "nothing written" in err
    assert cached(config) == before
    return err


def test_what_does_not_belong_is_refused_and_nothing_written(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = experiment(tmp_path / "a", server, prepared_store, corpus_slice_path, corpus_settings)
    other = experiment(tmp_path / "b", server, prepared_store, corpus_slice_path, corpus_settings, seed=4)
    folder = export(config, tmp_path / "waves", capsys, shards=1)
    foreign = export(other, tmp_path / "other-waves", capsys, shards=1)
    answer(foreign, server.url)
    # a wave of another run
    assert "belongs to run" in _refused(other, folder, capsys)
    # another judge's / run's results for this wave: keys it did not ask
    err = _refused(config, folder, capsys, "--results", str(foreign / "results-000.jsonl"))
    assert "with a key the wave did not ask" in err
    # another model's answers
    calls = answer(folder, server.url, model="other-model")
    err = _refused(config, folder, capsys)
    assert f"{calls} from another model" in err and "answered by model 'other-model'" in err
    # a malformed line among good ones
    answer(folder, server.url)
    results = folder / "results-000.jsonl"
    results.write_text(results.read_text() + '{"custom_id": \n')
    err = _refused(config, folder, capsys)
    assert "1 malformed" in err and f"{results}:{calls + 1}: malformed line" in err
    # a missing results file
    results.unlink()
    assert "missing" in _refused(config, folder, capsys)
    # and the wave is still pending: its own results import
    answer(folder, server.url)
    assert cli(["calls", "import", str(config), str(folder)]) == 0
    assert cached(config) == calls


def test_error_lines_a_terminal_one_is_the_items_outcome_a_transient_one_asked_again(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = experiment(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings)
    folder = export(config, tmp_path / "waves", capsys, shards=1)
    calls = answer(folder, server.url)
    results = folder / "results-000.jsonl"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    context, transient = lines[0]["custom_id"], lines[1]["custom_id"]
    lines[0]["response"] = {"status_code": 400, "request_id": "r", "body": None}
    lines[0]["error"] = {"error": {"message": "This model's maximum context length is 2048 tokens", "type": "BadRequestError", "code": 400}}
    lines[1]["response"] = {"status_code": 503, "request_id": "r", "body": {"error": {"message": "overloaded"}}}
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli(["calls", "import", str(config), str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"{calls - 2:,} answer(s) cached, 1 item error(s) recorded, 1 call(s) left to ask again" in out
    again = export(config, tmp_path / "waves", capsys, shards=1)
    asked = {json.loads(line)["custom_id"] for line in (again / "calls-000.jsonl").read_text().splitlines()}
    assert transient in asked and context not in asked


def test_an_imported_item_error_is_the_items_outcome_for_a_plain_run_too(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    from engine.cache.store import Store
    from engine.run.store_verify import find_problems

    config = experiment(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings)
    folder = export(config, tmp_path / "waves", capsys, shards=1)
    answer(folder, server.url)
    results = folder / "results-000.jsonl"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    lines[0]["response"] = {"status_code": 400, "request_id": "r", "body": None}
    lines[0]["error"] = {"error": {"message": "This model's maximum context length is 2048 tokens", "type": "BadRequestError", "code": 400}}
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli(["calls", "import", str(config), str(folder)]) == 0
    with Store(config.parent / "store", readonly=True) as store:
        assert list(find_problems(store)) == []  # `verify` knows the item error's record
    assert cli(["run", str(config), "--quiet"]) == 0  # the plain workers, not waves
    # the item error is its item's row: its call was not made again (it would have been answered)
    errors = [r for r in map(json.loads, (config.parent / "out" / "results.jsonl").read_text().splitlines()) if r["status"] == "error"]
    assert len(errors) == 1 and "maximum context length" in errors[0]["raw_text"]
