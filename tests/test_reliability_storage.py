"""Storage under stress (issue 15), as real processes against the fake
provider server: two runs on one store, a map that grows mid-run, corrupt
and foreign store files, a full disk (tmpfs). benchmarks/bench_reliability.py
records the same figures on a bigger corpus (RELIABILITY.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from reliability_fixtures import fresh_experiment, run_to_end, science, server_fixture
from reliability_storage import bad_store_files, fill, full_disk, tiny_map, tmpfs, two_processes


server = server_fixture("fixed:0.01")


@pytest.fixture(scope="module")
def setting(server, prepared_store, corpus_slice_path, corpus_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("storage_reference")
    config = fresh_experiment(folder, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence, server.url)
    server.reset()
    code, _, err = run_to_end(config)
    assert code == 0, err
    return {"source": prepared_store, "corpus": corpus_slice_path, "min_chars": corpus_settings.min_chars_per_sentence,
            "reference": science(folder / "out" / "results.jsonl"), "calls": server.stats()["requests"]}


def test_a_second_run_of_the_same_experiment_is_refused_naming_the_owner(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = two_processes(server, tmp_path, setting["source"], setting["corpus"], setting["min_chars"], setting["reference"], same=True)
    exits = sorted(p["exit"] for p in report["processes"])
    assert exits[0] == 0 and exits[1] != 0, report
    refused = next(p for p in report["processes"] if p["exit"] != 0)
    assert re.search(r"already running in process \d+", refused["message"]) and not refused["traceback"], refused
    assert refused["calls_network"] == 0
    assert report["requests"] == setting["calls"] and report["paid_twice"] == 0, report
    assert report["identical_results"]


def test_two_experiments_share_a_store_and_pay_at_most_their_shared_calls_twice(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = two_processes(server, tmp_path, setting["source"], setting["corpus"], setting["min_chars"], setting["reference"], same=False)
    assert [p["exit"] for p in report["processes"]] == [0, 0], report
    assert not any(p["traceback"] for p in report["processes"])
    assert report["shared_calls"] > 0  # the two designs overlap: the store's cache is really shared
    assert report["paid_twice"] <= report["shared_calls"], report


def test_a_tiny_map_grows_mid_run(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = tiny_map(server, tmp_path, setting["source"], setting["corpus"], setting["min_chars"], setting["reference"])
    assert report["exit"] == 0 and report["grew"] and report["identical_results"], report


@pytest.mark.parametrize("case", ["corrupt meta pages", "non-LMDB file", "another program's LMDB"])
def test_an_unusable_store_file_gets_a_clear_error_and_is_not_written(case: str, server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    [report] = bad_store_files(server, tmp_path, setting["source"], setting["corpus"], setting["min_chars"], names=(case,))
    assert report["exit"] not in (0, None) and not report["traceback"], report
    assert "store" in report["message"] and report["unchanged"] and report["calls"] == 0, report


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_disk_stops_the_run_clearly_and_a_resume_on_a_bigger_one_completes(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = full_disk(server, tmp_path, setting["source"], setting["corpus"], setting["min_chars"], setting["reference"])
    assert "skipped" not in report, report
    assert report["exit"] not in (0, None) and not report["traceback"], report
    assert "could not commit" in report["message"] and "kB free" in report["message"], report
    assert report["rows_lost"] == 0 and report["resume_exit"] == 0 and report["identical_results"], report


def test_a_store_on_a_full_disk_is_refused_before_any_call(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # issue 33: such a run made and paid for 136 calls before failing to store them
    with tmpfs(tmp_path / "disk", 4096) as disk:
        config = fresh_experiment(disk, setting["source"], setting["corpus"], setting["min_chars"], server.url)
        config.write_text(config.read_text().replace(f'output = "{disk / "out"}"', f'output = "{tmp_path / "out"}"'))
        filler = fill(disk)
        server.reset()
        code, _, err = run_to_end(config)
        assert code == 2 and "Traceback" not in err, err
        assert re.search(rf"store {disk / 'store'}: only \d+ kB free on its file system .*no call was made", err), err
        assert server.stats()["requests"] == 0
        filler.unlink()  # room again: the run completes, nothing was lost
        code, _, err = run_to_end(config)
        assert code == 0, err
        assert science(tmp_path / "out" / "results.jsonl") == setting["reference"]


def test_a_full_output_folder_is_refused_before_any_call_and_an_export_that_fills_it_ends_in_one_line(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = fresh_experiment(tmp_path, setting["source"], setting["corpus"], setting["min_chars"], server.url)
    output = tmp_path / "out"
    with tmpfs(output, 96) as disk:  # room for the checks (64 kB), not for results.jsonl (~110 kB)
        filler = fill(disk)
        server.reset()
        code, _, err = run_to_end(config)
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert f"output {output}" in err and ("No space left on device" in err or "no call was made" in err), err
        assert server.stats()["requests"] == 0
        filler.unlink()
        code, _, err = run_to_end(config)  # the calls are made and committed; the export cannot be written
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and "Traceback" not in err and len(lines) == 1, err
        assert f"output {output}" in lines[0] and "No space left on device" in lines[0] and "not asked again" in lines[0], err
        assert server.stats()["requests"] == setting["calls"]
        assert [p.name for p in disk.iterdir() if p.suffix == ".tmp"] == []  # the failed export left no temp file
    server.reset()
    code, _, err = run_to_end(config)  # the tmpfs is gone: room again
    assert code == 0, err
    assert server.stats()["requests"] == 0 and science(output / "results.jsonl") == setting["reference"]


def test_an_export_killed_mid_way_leaves_no_temp_file_past_the_next_run(server, setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = fresh_experiment(tmp_path, setting["source"], setting["corpus"], setting["min_chars"], server.url)
    output = tmp_path / "out"
    output.mkdir()
    # what a SIGKILL during the export leaves (results.py writes through these, then renames)
    stale = [output / ".results.jsonl.4242.0badcafe.tmp", output / ".results.parquet.4242.0badcafe.jsonl.tmp", output / ".manifest.json.4242.1.tmp"]
    for path in stale:
        path.write_text("half an export")
    (output / "notes.tmp").write_text("the user's own file")
    code, _, err = run_to_end(config)
    assert code == 0, err
    assert not any(path.exists() for path in stale) and (output / "notes.tmp").exists()
