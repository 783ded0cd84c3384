"""The neg needle's polarity checks (engine.needles.negation_polarity), through
`negate` and `refusal` on real parses of both models (en_core_web_sm, and
en_core_web_md where installed). Sentences of our own, one class each: a
"not" that would meet a negative quantity, "rarely", "without", or a
universally quantified subject."""

from __future__ import annotations

import pytest

from engine.needles.negation import negate, refusal
from needle_helpers import edited, first_sentence


@pytest.fixture(params=["sm", "md"])
def parser(request, nlp):
    """Each model alone: the rule must hold on either parse."""
    if request.param == "sm":
        return nlp
    return request.getfixturevalue("agreed_nlp").second


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # "little" as a quantity: on a bare singular noun, as an object, as a degree
        ("There is little evidence that the dam leaked during the spring floods.", "negative quantity"),
        ("The new council did little to fix the potholes on the main road.", "negative quantity"),
        ("The harbour master paid very little attention to the old warnings.", "negative quantity"),
        ("The shed was little more than a roof on four posts.", "negative quantity"),
        ("The ferry crossed the bay with little difficulty on Tuesday morning.", "negative quantity"),
        # "few" where the sentence check does not see it: after a degree word
        ("The town welcomed very few tourists during the long wet summer.", "negative quantity"),
        # in the subject: "Few critics did not like it" (one definition decides, here and nowhere else)
        ("Few critics liked the new play at the harbour theatre.", "negative quantity"),
        ("Very few fishermen stayed in the village after the mill closed.", "negative quantity"),
        ("Little is known about the first owner of the old mill.", "negative quantity"),
        # a downward frequency adverb after the auxiliary: "has not rarely opened"
        ("The old mill has rarely opened its doors to visitors since the war.", "downward adverb"),
        # "without" in the negated clause: "did not leave without paying" reads as "always paid"
        ("The farmer left the market without paying for the seed.", "without in the clause"),
        ("The committee approved the budget without a single objection from the floor.", "without in the clause"),
        ("The drivers tried to cross the border without stopping at the post.", "without in the clause"),  # an open complement
        # a universal subject: "All of the ships did not return" is "none" or "not all"
        ("All of the ships returned to the harbour before the storm.", "universal quantifier subject"),
        ("Every student passed the exam in the spring term.", "universal quantifier subject"),
        ("Each of the villages sent a delegate to the regional council.", "universal quantifier subject"),
    ],
)
def test_not_is_refused_where_it_meets_a_negative_or_universal_word(parser, text, why):
    sent = first_sentence(parser, text)
    assert negate(sent) is None
    assert refusal(sent) == why


@pytest.mark.parametrize(
    "text",
    [
        "The fishermen all voted for the new quota in the spring.",  # a quantifier floated off the subject
        "The two brothers both signed the lease on the old bakery.",
    ],
)
def test_a_floated_universal_quantifier_is_never_negated(parser, text):
    # the models parse these apart ("all" on the subject or on the verb); either way no edit
    assert negate(first_sentence(parser, text)) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "a little", a size, a hyphenated compound: no negative quantity
        (
            "The council spent a little money on the old harbour wall.",
            "The council did not spend a little money on the old harbour wall.",
        ),
        (
            "The children played in the little park behind the station.",
            "The children did not play in the little park behind the station.",
        ),
        (
            "The museum showed a little-known painting by a local artist.",
            "The museum did not show a little-known painting by a local artist.",
        ),
        (
            "The fishermen caught a few cod in the northern bay on Tuesday.",
            "The fishermen did not catch a few cod in the northern bay on Tuesday.",
        ),
        # "every few hours" is a frequency, not a negative quantity; "Little" in a name is no quantity
        (
            "The keeper checked the lamp every few hours during the storm.",
            "The keeper did not check the lamp every few hours during the storm.",
        ),
        (
            "The band played two concerts in Little Rock last spring.",
            "The band did not play two concerts in Little Rock last spring.",
        ),
        # the word sits in a clause of its own, which "not" on the root does not reach
        (
            "The man who had few friends sold his boat at the auction.",
            "The man who had few friends did not sell his boat at the auction.",
        ),
        (
            "The man who had little money bought the old boat at the auction.",
            "The man who had little money did not buy the old boat at the auction.",
        ),
        (
            "The council sold the land after the owners left without a word.",
            "The council did not sell the land after the owners left without a word.",
        ),
        # a quantifier that is not universal, or a universal object (surface scope: "not every")
        (
            "Most of the ships returned to the harbour before the storm.",
            "Most of the ships did not return to the harbour before the storm.",
        ),
        (
            "The harbour master visited every village along the northern coast.",
            "The harbour master did not visit every village along the northern coast.",
        ),
    ],
)
def test_not_is_placed_where_no_word_of_its_clause_interacts(parser, text, expected):
    assert edited(parser, negate, text) == expected
