"""simulation/items.py: the simulated judge recovers every item exactly from
the two documents it is shown, given the prepared corpus (real store, real
pairs from engine.corpus.pairs for every needle, hay, position, order and control)."""

from __future__ import annotations

import pytest

from simulation.items import ItemIndex

POSITIONS = ((0, 0), (0, 3), (1, 2), (2, 1), (3, 0), (2, 2), (4, 4))


@pytest.fixture(scope="module")
def index(corpus):  # type: ignore[no-untyped-def]
    return ItemIndex(corpus.document(d) for d in corpus.doc_ids)


def test_index_from_store_holds_every_document(prepared_store, corpus) -> None:  # type: ignore[no-untyped-def]
    assert len(ItemIndex.from_store(prepared_store)) == len(corpus)


@pytest.mark.parametrize("needle", ["none", "neg", "con", "ner"])
@pytest.mark.parametrize("hay", ["orig", "rand"])
def test_every_pair_is_recovered_in_both_orders(corpus, index, needle: str, hay: str) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for doc_id in corpus.doc_ids:
        for i, j in POSITIONS:
            pair = corpus.make_pair(doc_id, needle, hay, i, j, seed=5)
            if pair is None:
                continue
            ambiguous = hay == "rand" and i + j == 0  # no hay at all: rand and orig are the same text
            for order, first, second in (("12", pair.original, pair.perturbed), ("21", pair.perturbed, pair.original)):
                item = index.item(first, second)
                assert item is not None, (doc_id, needle, hay, i, j, order)
                expected_order = "12" if needle == "none" else order  # identical texts show no order
                got = (item.needle, item.hay, item.i, item.j, item.order, item.doc_id, item.control)
                assert got == (needle, "orig" if ambiguous else hay, i, j, expected_order, doc_id, ""), (pair, got)
                checked += 1
    assert checked >= 40


@pytest.mark.parametrize("kind", ["null_edit", "negative"])
def test_controls_are_recovered(corpus, index, kind: str) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for doc_id in corpus.doc_ids:
        try:
            pair = corpus.make_control(doc_id, kind, 2, 2, seed=5)
        except ValueError:
            continue
        item = index.item(pair.original, pair.perturbed)
        assert item is not None and item.control == kind, (doc_id, item)
        checked += 1
    assert checked >= 5


def test_texts_outside_the_corpus_are_not_claimed(index) -> None:  # type: ignore[no-untyped-def]
    assert index.item("One sat. Two ran.", "One sat. Two did not run.") is None
    assert index.item("One sat.", "One sat.") is None
