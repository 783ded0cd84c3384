"""The neg needle's frame, idiom and participle checks (engine.needles.negation_frames),
through `negate` on real spaCy parses (the `nlp` session fixture). Sentences of our own,
one per defect class of issue 27's held-out read."""

from __future__ import annotations

import pytest

from engine.needles.negation import negate, refusal
from needle_helpers import edited, first_sentence


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # a verb of saying or knowing with a gerund or infinitive clause: "did not deny" denies the report
        ("The mayor denied cutting the library budget during a radio interview on Tuesday.", "verb framing a claim"),
        ("The minister confirmed meeting the envoy in Paris last week.", "verb framing a claim"),
        ("The wreck is believed to lie off the northern cape.", "verb framing a claim"),
        # an impersonal frame: the claim is the "that" clause, even where the parser hangs it on a noun
        ("It will be seen from the figures in the report that the harvest doubled.", "impersonal frame"),
        ("It can be shown by a reference to the old maps that the road ran north.", "impersonal frame"),
        ("It is clear that the river has risen since May.", "impersonal frame"),
        ("It is clear the new ferry serves the island well.", "impersonal frame"),  # no "that"
        # a question (here one without inversion) asserts nothing to negate
        ("So the council approved the plan in secret?", "question"),
        ("The ferry leaves the harbour at noon?", "question"),
        # an adverb before the auxiliary or copula that is not the speaker's: "not" would land after it
        ("The price of coal very largely is set by the mills upriver.", "no clean edit"),  # "very largely is not set"
        ("The ferry fare mostly was paid by the parish.", "no clean edit"),
        ("The old mill always has been a bakery.", "no clean edit"),
        # the adverbs "sure" and "pretty" after the auxiliary: "I'll not sure sign", "was not pretty close"
        ("I'll sure close the harbour gate tonight.", "idiom broken by not"),
        ("The race was pretty close at the harbour mouth.", "idiom broken by not"),
        # "not only" and "not once" are expressions of their own: "was not only 40" reads as the correlative
        ("The harbour master was only 40 when the pier burned down.", "idiom broken by not"),
        ("The skipper was once a fisherman on the northern coast.", "idiom broken by not"),
        # a verb of accusing or committing whose complement holds the quoted words
        ('The union accused the shipyard of "starving every welder of work".', "verb reporting quoted words"),
        ('The harbour board pledged "a deeper channel within five years".', "verb reporting quoted words"),
        # a quoted infinitive complement under any verb: the quoted words are someone's
        ('The ferry company wanted to "keep the crossing cheap for islanders".', "verb reporting quoted words"),
        ('The ferry company vowed to "keep the crossing cheap for islanders".', "verb reporting quoted words"),
    ],
)
def test_no_negation_where_not_would_deny_only_a_frame_or_has_no_clean_place(nlp, text, why):
    sent = first_sentence(nlp, text)
    assert negate(sent) is None
    assert refusal(sent) == why


@pytest.mark.parametrize(
    "text",
    [
        "The council may well raise the rents next year.",  # "may not well raise"
        "The team could well win the cup this season.",
        "She would rather stay at home on Sundays.",  # "would not rather"
        "You had better leave before the storm.",  # "had not better"
        "You have but to ask the clerk for a form.",  # "do not have but to": a double negative
        "The river is but a stream in summer.",  # "is not but a stream"
        "The village was rather small in those years.",  # "was not rather small"
        "The harvest was somewhat better than in May.",
        "For the fishermen, the winter was slightly harder.",  # "was not slightly harder"
    ],
)
def test_not_is_never_put_inside_a_fixed_expression(nlp, text):
    sent = first_sentence(nlp, text)
    assert negate(sent) is None
    assert refusal(sent) == "idiom broken by not"


def test_a_reduced_relative_with_an_object_is_not_taken_for_the_finite_verb(nlp):
    # the parser gives the participle "carried" an object ("weeks") and hangs the real verb "are" off it
    text = "Abortions carried out-12 weeks after conception are illegal in the province."
    assert edited(nlp, negate, text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the checks leave the ordinary cases alone: a participle modifier, "well" after a non-modal,
        # a verb of saying with a noun object, "it" without a "that" clause, a gerund after a non-framing verb
        ("Houses built before 1900 are protected by the council.", "Houses built before 1900 are not protected by the council."),
        ("The team was well prepared for the final.", "The team was not well prepared for the final."),
        ("The mayor confirmed the budget in March.", "The mayor did not confirm the budget in March."),
        ("It rained heavily in the valley that week.", "It did not rain heavily in the valley that week."),
        ("The workers stopped cutting the hedges in May.", "The workers did not stop cutting the hedges in May."),
        ("The ferry could reach the island in an hour.", "The ferry could not reach the island in an hour."),
        # a closing curly quote as a dataset ships it ('"?') does not make a question
        ('The mayor opened the "Harbour Festival."?', 'The mayor did not open the "Harbour Festival."?'),
        # "be supposed to" is deontic, not a report
        ("The hall is supposed to hold 400 people.", "The hall is not supposed to hold 400 people."),
        # with an object, a later past form (parsed as a finite "focused") is the participle, not a verb of its own
        (
            "Jones launched a review of Smith's reports focused on exports, drawing attention to the fees charged by the ports.",
            "Jones did not launch a review of Smith's reports focused on exports, drawing attention to the fees charged by the ports.",
        ),
        # the speaker's adverbs stand before "not", after the auxiliary or before it or "did not"
        ("The ferry will likely sail before the storm.", "The ferry will likely not sail before the storm."),
        ("The pier is therefore a danger to boats.", "The pier is therefore not a danger to boats."),
        ("The harbour master probably closed the gate at dusk.", "The harbour master probably did not close the gate at dusk."),
        ("The lighthouse really is the oldest in the county.", "The lighthouse really is not the oldest in the county."),
        # other adverbs after the auxiliary follow "not", as before; an adjective "sure" is negated
        ("The pier has recently been painted.", "The pier has not recently been painted."),
        ("The skipper was sure of the tide tables.", "The skipper was not sure of the tide tables."),
        # a quoted title, and a quotation in a clause of its own, are no quoted complement
        # (the parser takes the title's "Take" for the complement of "recorded"; capitalised, it is a title's)
        ('The choir recorded "Take Me Home" in the chapel.', 'The choir did not record "Take Me Home" in the chapel.'),
        (
            'The council hired the crew, whose skipper called the gale "a brute".',
            'The council did not hire the crew, whose skipper called the gale "a brute".',
        ),
    ],
)
def test_ordinary_sentences_are_still_negated(nlp, text, expected):
    assert edited(nlp, negate, text) == expected


def test_a_verb_of_saying_before_the_speakers_quotation_is_not_negated(nlp):
    # the next sentence is the report itself: "did not outline" would be contradicted by the quotation
    # (a verb that names the report without being a verb of saying by WordNet: "outlined" is refused anywhere since
    # session 25, engine.needles.communication_verbs)
    quoted = 'On the radio, the captain welcomed the changes to the timetable. "We will add two boats," she said.'
    sent = first_sentence(nlp, quoted)
    assert negate(sent) is None
    assert refusal(sent) == "verb introducing the next quotation"
    reported = "Several mayors praised the new timetable. One of them said that the boats had never been so punctual."
    assert edited(nlp, negate, reported) is None  # the next sentence is the praise, reported without marks
    parenthetical = "The engineer disputed the survey. In part, the engineer said, its maps were out of date."
    assert edited(nlp, negate, parenthetical) is None
    light_verb = 'The harbour master launched a defense of the new fees. "Every boat pays the same," she said.'
    assert edited(nlp, negate, light_verb) is None  # "launched a defense" names the speech the quotation gives
    cited = 'The harbour master cited the example of the old ferry. "It sank twice in one winter," she said.'
    assert edited(nlp, negate, cited) is None  # "did not cite the example", then her words
    pointed = 'Both mayors pointed to the cost of the new bridge. "We cannot pay for it twice," one said.'
    assert edited(nlp, negate, pointed) is None
    plain = "On the radio, the captain welcomed the changes to the timetable. The boats will leave at noon."
    assert edited(nlp, negate, plain) == "On the radio, the captain did not welcome the changes to the timetable."
