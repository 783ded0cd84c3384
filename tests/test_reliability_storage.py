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
from reliability_storage import bad_store_files, full_disk, tiny_map, two_processes


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
