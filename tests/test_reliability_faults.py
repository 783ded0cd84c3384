"""The fault matrix in CI (issue 15): `needlejudge run` in its own process
against the fake provider server injecting faults at up to 30%, resumed
until it completes. No crash, no failure turned into a score, failures keep
their raw text, and transient faults leave the final data exactly as a
fault-free run's. benchmarks/bench_reliability.py runs every kind at 10%
and 30% (RELIABILITY.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_faults import TERMINAL_KINDS, TRANSIENT_KINDS, breaker_burst, fault, run_scenario, science_by_item, transient_mix
from reliability_fixtures import results, server_fixture


server = server_fixture("fixed:0.01")


@pytest.fixture(scope="module")
def scenario(server, prepared_store, corpus_slice_path, corpus_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    def run(name: str, faults: list, reference: dict | None, **design) -> dict:  # type: ignore[no-untyped-def]
        return run_scenario(server, tmp_path_factory.mktemp(name), prepared_store, corpus=corpus_slice_path,
                            min_chars=corpus_settings.min_chars_per_sentence, reference=reference, faults=faults, **design)
    return run


@pytest.fixture(scope="module")
def reference(scenario, tmp_path_factory) -> dict:  # type: ignore[no-untyped-def]
    report = scenario("fault_free", [], None)
    assert report["exits"] == [0] and report["outcomes"] == {"ok_first": report["final_rows"]}
    folder = max(tmp_path_factory.getbasetemp().glob("fault_free*"))
    return science_by_item(results(folder / "out" / "results.jsonl"))


def assert_sound(report: dict) -> None:
    assert not report["crashed"], report
    assert report["scored_failures"] == 0, report
    assert report["failures_without_raw_text"] == 0, report
    assert report["ok_scores_differing"] == 0, report
    assert report["exits"][-1] == 0, report


def test_transient_faults_at_30_percent_are_retried_and_change_nothing(scenario, reference) -> None:  # type: ignore[no-untyped-def]
    report = scenario("transient", transient_mix(0.30), reference)
    assert_sound(report)
    injected = report["injected"]
    kinds = {"bad_gateway": "server_error"}
    assert all(injected.get(kinds.get(kind, kind), 0) > 0 for kind in TRANSIENT_KINDS), injected
    assert sum(injected.values()) > 0.2 * report["final_rows"]
    assert report["outcomes"].get("retried_ok", 0) > 0
    assert not any(kind.startswith("error:") for kind in report["outcomes"]), report  # no transient failure is a row
    assert report["same_as_fault_free"], report


def test_terminal_answers_are_recorded_with_their_text_and_never_scored(scenario, reference) -> None:  # type: ignore[no-untyped-def]
    # drawn by content: the same items are refused however the calls interleave, so the
    # documents that replace them (and the ok rows that follow) do not depend on the machine's load
    report = scenario("terminal", [fault(kind, 0.10, draw_by="content") for kind in TERMINAL_KINDS], reference)
    assert_sound(report)
    assert report["outcomes"].get("refused", 0) > 0 and report["outcomes"].get("unparseable", 0) > 0, report
    assert report["exits"] == [0]
    # a refused or unparseable document is replaced by the next one: the ok rows still number the fault-free run's
    assert report["final_statuses"]["ok"] == len(reference)


def test_a_tripped_circuit_breaker_leaves_items_pending_not_failed(scenario, reference) -> None:  # type: ignore[no-untyped-def]
    # a small breaker (3 failed calls of 2 attempts) keeps the judge's probing pauses short
    report = scenario("breaker", breaker_burst(length=16), reference, max_attempts=2,
                      options="backoff_base_s = 0.01, backoff_cap_s = 0.2, breaker_threshold = 3")
    assert_sound(report)
    assert "stopped by the circuit breaker" in report["first_stderr"], report  # it opened (logged once)
    assert not any(kind.startswith("error:") for kind in report["outcomes"]), report
    assert report["same_as_fault_free"], report
