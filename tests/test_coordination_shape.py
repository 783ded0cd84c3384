"""engine.needles.coordination_shape: the con allow-list (con_shapes = "safe",
the default). Each refused shape is a class the hand reads of unseen news
found wrong among phrase-level swaps (benchmarks/reads/short23*_news_con),
built here from a sentence of our own; each allowed shape is swapped."""

from __future__ import annotations

import pytest
from needle_helpers import con_refusal, edited, first_sentence

from engine.contracts import ConfigError
from engine.corpus.prepare import CorpusSettings
from engine.needles.conjunctions import swap_conjunction
from engine.needles.coordination_shape import shape_refusal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # two clauses, each with its subject
        ("The ferry left the quay at noon, and the harbour closed its gates for the night.",
         "The ferry left the quay at noon, or the harbour closed its gates for the night."),
        # two finite verbs sharing the subject, each with words of its own
        ("The council repaired the pier and painted the slipway last year.",
         "The council repaired the pier or painted the slipway last year."),
        # one finite auxiliary shared by both verbs
        ("The club has sacked its coach and appointed a former player.",
         "The club has sacked its coach or appointed a former player."),
        # noun phrases that each name their own referent, as a finite verb's object
        ("The fishermen sold a boat and a trailer at the fair.",
         "The fishermen sold a boat or a trailer at the fair."),
        # predicative adjectives under a finite copula
        ("The talks on the new harbour were long and bitter.",
         "The talks on the new harbour were long or bitter."),
    ],
)  # fmt: skip
def test_the_safe_shapes_are_swapped(nlp, text, expected):
    assert edited(nlp, swap_conjunction, text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # free choice under a permission: "to regroup or adapt" says what is allowed, as "and" does
        ("The truce allowed the rebels to regroup and adapt to the rural areas.", "not finite verbs"),
        # two bare verbs: the two ends of one event ("came and passed" = came and went)
        ("Friday came and passed without a signed contract.", "bare verbs"),
        # coordinated questions ask both either way
        ("Is the tunnel safe for cars, and will the ferry still run to the island?", "question"),
        # a relative clause restricts one set, which "or" names again
        ("Farmers who grew wheat and sold barley paid the new levy.", "relative clause"),
        # bare nouns under one restriction name one set
        ("The order curbed travel and migration from seven countries.", "bare nouns"),
        # a plural head sorted by two of-phrases
        ("The treaty protects the rights of farmers and fishermen.", "not a verb's object"),
        # one head sorted by two classifying adjectives
        ("The island hosts an annual sporting and cultural festival.", "not two verbs"),
        # the two ends of one motion
        ("Tolls will be charged on goods moving to and from the island.", "not two verbs"),
        # an adjective before a noun tagged as a verb: two nouns under one preposition
        ("The order covered abuse by clergy and lay people in the parish.", "nouns read as verbs"),
        # a verb of composition: its object spells out the members of a whole
        ("The deal went to a group that comprises a Latvian bank and a Belarusian firm.", "members of a whole"),
        ("The crew is made up of a pilot and a cook.", "members of a whole"),
        # an operator over a non-finite verb scopes over both objects
        ("The council poured cold water on inviting the mayor and the bishop.", "not finite verbs"),
    ],
)  # fmt: skip
def test_the_shapes_found_wrong_on_unseen_news_are_refused_with_their_reason(nlp, text, reason):
    assert con_refusal(nlp, text, shapes="safe")[0]
    # the shape refuses it whether or not an older phrase-level rule also does
    (conjunction,) = [t for t in first_sentence(nlp, text) if t.lower_ in ("and", "or")]
    assert shape_refusal(conjunction) == reason


def test_the_phrase_level_rules_still_swap_what_the_allow_list_refuses(nlp):
    text = "The order curbed travel and migration from seven countries."
    assert con_refusal(nlp, text, shapes="safe")[0]
    assert not con_refusal(nlp, text, shapes="any")[0]


def test_an_unknown_shapes_value_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match=r"con_shapes must be one of 'safe', 'any', got 'verbs'"):
        CorpusSettings(con_shapes="verbs").validate()
    with pytest.raises(ValueError, match=r"shapes='verbs'"):
        swap_conjunction(None, shapes="verbs")  # type: ignore[arg-type]
