"""Validation against known truth (issue 7): a simulated judge with planted
effects, served over real HTTP by the fake provider server, judged through the
whole engine (design, prompts, openai-compatible adapter, cache, scheduler,
stopping, export), then analysed from the exported files. The judge sees
only the requests: it recovers each item from the two documents
(simulation/items.py), as a real judge would have to. Each planted effect
must be recovered (its truth inside the reported 95% CI) and effects planted
as zero must not be declared significant after correction.

The truth is computed exactly per exported item with
`simulated_judge.expected_score` (rounding, clipping and band snapping
included), for the documents the run actually judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simulation import judge as sim
from analysis.hay import hay_comparison
from analysis.load import load_run
from analysis.options import AnalysisOptions
from analysis.positionality import positionality

pytestmark = pytest.mark.slow

SEED = 11
PLANTED = sim.SimJudgeParams(
    seed=SEED,
    needle_means={"none": 97.0, "neg": 60.0, "con": 75.0, "ner": 68.0},
    noise_sd=6.0,
    doc_sd=3.0,
    early_penalty=5.0,
    early_penalty_needles=("neg",),  # a 5-point early-position penalty for neg only
    length_slope=0.5,
    rand_hay_leniency=4.0,
    band_snap_prob=0.1,
)

CONFIG = """
seed = {seed}
needles = ["none", "neg", "con", "ner"]
hays = ["orig", "rand"]
k = 9
prompts = ["bands"]
[stopping]
kind = "fixed"
n = 10
[[judges]]
name = "planted"
adapter = "openai-compatible"
model = "sim-planted"
base_url = "{url}/v1"
concurrency = 64
"""


def _item(row: dict) -> sim.ItemInfo:
    return sim.ItemInfo(
        needle=row["needle"], hay=row["hay"], i=row["i"], j=row["j"], control=row["control"], order=row["order"], doc_id=row["doc_id"]
    )


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory, prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    from engine.run.runner import run_experiment
    from experiments import write_experiment
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread
    from simulation.items import ItemIndex

    folder = tmp_path_factory.mktemp("validation")
    fake = FakeConfig(seed=SEED, judges={"sim-planted": PLANTED}, keyless_models=("*",))
    # the judge reads each item back from the texts it is shown, with the prepared corpus at hand
    with serve_in_thread(fake, items=ItemIndex.from_store(prepared_store)) as server:
        body = CONFIG.format(seed=SEED, url=server.url)
        config = write_experiment(folder, prepared_store, corpus_slice_path, corpus_settings, body)
        summary = run_experiment(config)
        assert server.stats()["repeated_completions"] == 0
    assert summary.status_counts == {"ok": summary.rows}, summary.status_counts
    rows = [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]
    return Path(config.output), rows


def _truth(rows: list[dict], keep) -> float:  # type: ignore[no-untyped-def]
    return float(np.mean([sim.expected_score(PLANTED, _item(r)) for r in rows if keep(r)]))


def test_early_position_penalty_is_recovered_for_neg_and_absent_elsewhere(planted_run) -> None:  # type: ignore[no-untyped-def]
    run_dir, rows = planted_run
    found = {(r.needle, r.hay): r for r in positionality(load_run(run_dir).scored(), AnalysisOptions(seed=SEED))}
    assert set(found) == {(n, h) for n in ("none", "neg", "con", "ner") for h in ("orig", "rand")}
    for (needle, hay), result in found.items():
        cell = [r for r in rows if r["needle"] == needle and r["hay"] == hay and not r["control"] and r["order"] == "12"]
        truth = _truth(cell, lambda r: r["i"] > r["j"]) - _truth(cell, lambda r: r["i"] < r["j"])
        assert result.bias_low <= truth <= result.bias_high, (needle, hay, truth, result)
        if needle == "neg":
            assert truth > 4.0  # the planted effect survives clipping and snapping
            assert result.significant, result
        else:
            assert abs(truth) < 0.5  # planted as zero
            assert not result.significant, result


def test_random_hay_leniency_is_recovered(planted_run) -> None:  # type: ignore[no-untyped-def]
    run_dir, rows = planted_run
    shifts, _ = hay_comparison(load_run(run_dir).scored(), AnalysisOptions(seed=SEED))
    by_needle = {s.needle: s for s in shifts}
    for needle in ("neg", "con", "ner", "none"):
        cell = [r for r in rows if r["needle"] == needle and not r["control"] and r["order"] == "12"]
        truth = _truth(cell, lambda r: r["hay"] == "rand") - _truth(cell, lambda r: r["hay"] == "orig")
        shift = by_needle[needle]
        assert shift.low <= truth <= shift.high, (needle, truth, shift)
        if needle == "none":
            assert abs(truth) < 0.5 and shift.low <= 0 <= shift.high
        else:
            assert truth > 3.0 and shift.low > 0


def test_needle_means_are_recovered_in_the_planted_order(planted_run) -> None:  # type: ignore[no-untyped-def]
    run_dir, rows = planted_run
    scored = load_run(run_dir).scored()
    means = {}
    for needle in ("none", "neg", "con", "ner"):
        observed = scored.where(needle=needle)["score"]
        cell = [r for r in rows if r["needle"] == needle and not r["control"] and r["order"] == "12"]
        truth = _truth(cell, lambda r: True)
        # The truth already holds each item's document effect and position, so
        # what is left is independent per-item noise; the scores' spread (which
        # also holds position and document variation) makes this conservative.
        half_width = 1.96 * observed.std(ddof=1) / np.sqrt(observed.size)
        assert abs(observed.mean() - truth) <= half_width, (needle, observed.mean(), truth)
        means[needle] = observed.mean()
    assert sorted(means, key=means.get) == ["neg", "ner", "con", "none"]
