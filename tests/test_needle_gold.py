"""The hand-labelled needle gold set (engine.corpus.needle_gold, tests/data/needle_gold).

Regenerating every neg/con gold sentence with the current generator must give
exactly the output that was read and labelled as the "after" output: any
change to the rules forces a relabelling (and a new benchmark row) instead of
silently changing what the published defect rate describes."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.corpus.needle_gold import DEFECTS, GOLD_DIR, GoldRecord, lookup, read_gold, regenerate_negcon

NEGCON_SETS = ("neg", "con", "neg_fresh", "con_fresh")


@pytest.fixture(scope="module")
def gold() -> dict[str, list[GoldRecord]]:
    return {name: read_gold(GOLD_DIR / f"{name}.jsonl") for name in NEGCON_SETS}


def test_gold_files_are_complete_and_explained(gold):
    assert (GOLD_DIR / "RUBRIC.md").is_file()
    for name, records in gold.items():
        kind = name.split("_")[0]
        assert all(r.type == kind for r in records), name
        after = [r for r in records if r.generator == "after"]
        assert len({r.key for r in after}) >= 60, name
        for r in records:
            if r.label in DEFECTS:
                assert r.note, f"{name}: a defect without a note: {r.sentence!r}"
            if r.perturbed is not None:
                assert r.sentence[: r.start] + r.span_after + r.sentence[r.start + len(r.span_before) :] == r.perturbed, r.sentence
    for name in ("neg", "con"):  # the screened sentences carry both generators' labels
        generators = Counter(r.generator for r in gold[name])
        assert generators["before"] == generators["after"] >= 60


def test_current_generator_reproduces_the_labelled_after_outputs(nlp, gold):
    for name, records in gold.items():
        current = regenerate_negcon(nlp, records)
        labelled_after = {r.key: r.perturbed for r in records if r.generator == "after"}
        for key, edit in current.items():
            output = None if edit is None else edit.apply(key[2])
            assert output == labelled_after[key], f"{name}: relabel {key[2]!r}: now {output!r}"
            assert output is None or lookup(records, key, output) != "unlabelled"


def test_lookup_needs_the_exact_output(gold):
    record = next(r for r in gold["neg"] if r.perturbed is not None)
    assert lookup(gold["neg"], record.key, record.perturbed) == record.label
    assert lookup(gold["neg"], record.key, record.perturbed + " ") == "unlabelled"


def test_read_gold_names_the_file_and_line_of_a_bad_label(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"type":"neg","doc_id":"1","sentence":"A.","perturbed":null,"label":"fine","generator":"after"}\n')
    with pytest.raises(ValueError, match=r"x\.jsonl:1: label 'fine'"):
        read_gold(path)
