"""simulation.people and the quickstart's simulated label set, over a real finished run."""

from __future__ import annotations

import json

from analysis.load import load_labels
from engine.commands.quickstart import write_simulated_labels
from engine.labelling.sample import LabelItem
from simulation.people import LABELLERS, PEOPLE, rate, simulated_labels
from test_labelling import finished_run  # noqa: F401


def test_people_rate_by_the_planted_truth_without_position_bias():
    early = LabelItem(doc_id="d", needle="neg", hay="orig", i=0, j=9, stratum="s", inclusion=1.0, overlap=False)
    late = LabelItem(doc_id="d", needle="neg", hay="orig", i=9, j=0, stratum="s", inclusion=1.0, overlap=False)
    none = LabelItem(doc_id="d", needle="none", hay="orig", i=9, j=0, stratum="s", inclusion=1.0, overlap=False)
    assert PEOPLE.early_penalty == 0
    values = [rate(x, name) for x in (early, late, none) for name in LABELLERS]
    assert all(v % 5 == 0 and 0 <= v <= 100 for v in values)
    assert rate(none, LABELLERS[0]) > rate(early, LABELLERS[0]) - 20  # none is rated near the top
    assert rate(early, LABELLERS[0]) == rate(early, LABELLERS[0])  # seeded


def test_the_quickstart_labels_are_marked_simulated_and_read_by_the_report(finished_run):  # noqa: F811
    path = write_simulated_labels(finished_run)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records and all(r["simulated"] is True for r in records)
    assert {r["labeller"] for r in records} == set(LABELLERS)
    sample = json.loads((path.parent / "sample.json").read_text())
    overlap = {s["doc_id"] + str((s["needle"], s["hay"], s["i"], s["j"])) for s in sample if s["overlap"]}
    assert len(records) == len(sample) + len(overlap) * (len(LABELLERS) - 1)
    table = load_labels(path)
    assert table["simulated"].all() and set(table["labeller"].tolist()) == set(LABELLERS)
    before = path.read_bytes()
    assert write_simulated_labels(finished_run).read_bytes() == before  # same sample, same labels: the report stays reusable
    assert len(simulated_labels([])) == 0
