"""The item-level oracle: real pairs pass, injected faults are caught."""

from __future__ import annotations

import pytest

from engine.contracts import Pair
from engine.needles.edits import EntityOption
from engine.needles.oracle import check_pair, check_sentence, check_window

BEFORE_HAY = "The town lies on the river. It has a station and a school. "
AFTER_HAY = " Its economy depends on tourism and fishing."


def pair(needle, before, after, *, original=None, perturbed=None, control=""):
    return Pair(
        doc_id="d", needle=needle, hay="orig", i=2, j=1,
        original=original if original is not None else BEFORE_HAY + before + AFTER_HAY,
        perturbed=perturbed if perturbed is not None else BEFORE_HAY + after + AFTER_HAY,
        needle_before=before, needle_after=after, seed=0, control=control,
    )  # fmt: skip


GOOD = [
    ("none", "The mill was built in 1850.", "The mill was built in 1850."),
    ("neg", "The mill was built in 1850.", "The mill was not built in 1850."),
    ("neg", "The author published the book.", "The author did not publish the book."),
    ("neg", "He works at the mill.", "He does not work at the mill."),
    ("neg", "Published, it sold.", "Did not publish, it sold."),
    ("con", "Bread and butter or jam.", "Bread and butter and jam."),
    ("con", "And the crowd left.", "Or the crowd left."),
    ("con", "Marks & Spencer sells food and drink.", "Marks & Spencer sells food or drink."),
]


@pytest.mark.parametrize(("needle", "before", "after"), GOOD)
def test_valid_pairs_pass(needle, before, after):
    assert check_pair(pair(needle, before, after)) is None


PARIS = EntityOption(12, 17, "GPE", "Paris", ("London", "Rome"))


def test_ner_valid_and_invalid():
    before = "They met in Paris (France) in 1990."
    assert check_pair(pair("ner", before, "They met in London (France) in 1990."), ner_options=[PARIS]) is None
    # a replacement that is not a listed same-label entity
    assert check_pair(pair("ner", before, "They met in Berlin (France) in 1990."), ner_options=[PARIS])
    # no options to check against
    assert check_pair(pair("ner", before, "They met in London (France) in 1990."))
    # two spans changed
    assert check_pair(pair("ner", before, "They met in London (France) in 1991."), ner_options=[PARIS])


@pytest.mark.parametrize("needle", ["neg", "con", "ner"])
def test_injected_no_op_is_caught(needle):
    sentence = "The mill and the bridge were built in Paris."
    reason = check_pair(pair(needle, sentence, sentence), ner_options=[EntityOption(38, 43, "GPE", "Paris", ("Rome",))])
    assert reason is not None and "unchanged" in reason


def test_injected_double_edit_in_the_hay_is_caught():
    before, after = "The mill was built in 1850.", "The mill was not built in 1850."
    p = pair(
        "neg", before, after,
        perturbed=BEFORE_HAY.replace("station", "harbour") + after + AFTER_HAY,
    )  # fmt: skip
    assert check_pair(p).startswith("window:")


def test_injected_double_edit_in_the_sentence_is_caught():
    before = "The mill and the bridge were built in 1850."
    # negation plus a conjunction swap
    assert check_pair(pair("neg", before, "The mill or the bridge were not built in 1850."))
    # two negations
    assert check_pair(pair("neg", "He works and she works.", "He does not work and she does not work."))
    # a swap plus a word change
    assert check_pair(pair("con", before, "The mill or the bridge was built in 1850."))


def test_neg_rejects_other_edits():
    assert check_sentence("neg", "The mill was built.", "The mill was never built.")
    assert check_sentence("neg", "The mill was built.", "The mill wasnot built.")
    assert check_sentence("neg", "He works.", "He did not works.")  # not one word replaced by do + base
    assert check_sentence("neg", "The mill was built.", "The mill was not built!")


def test_con_rejects_casing_changes_and_other_words():
    assert check_sentence("con", "And the crowd left.", "or the crowd left.")
    assert check_sentence("con", "Bread and butter.", "Bread & butter.")
    assert check_sentence("con", "Bread and butter.", "Bread or margarine.")
    assert check_sentence("con", "Bread and butter or jam.", "Bread or butter and jam.") == "con: 2 conjunctions swapped, expected one"


def test_window_requires_the_needle_in_the_original():
    assert check_window("A. B. C.", "A. X. C.", "Q.", "X.")
    assert check_window("A. B. C.", "A. X. C.", "B.", "X.") is None
    # a repeated needle sentence: any one occurrence may carry the edit
    assert check_window("B. B.", "B. X.", "B.", "X.") is None


def test_controls():
    text = "The mill was built in 1850. It burned in 1900."
    assert check_pair(pair("none", "x", "x", original=text, perturbed=text.replace(" It", "\nIt"), control="null_edit")) is None
    assert check_pair(pair("none", "x", "x", original=text, perturbed=text, control="null_edit"))
    assert check_pair(pair("none", "x", "x", original=text, perturbed=text.replace("1900", "1901"), control="null_edit"))
    assert check_pair(pair("none", "x", "x", original=text, perturbed="Other text.", control="negative")) is None
    assert check_pair(pair("none", "x", "x", original=text, perturbed=text, control="negative"))
