"""The neg needle (engine.needles.negation) on real spaCy parses (the `nlp` session fixture).

The skip cases pin the defect classes of issue 14, each with a sentence from
the bundled Wikipedia sample or the issue's own example."""

from __future__ import annotations

import pytest

from engine.needles.negation import negate, refusal
from needle_helpers import edited, first_sentence


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        # the paper's own examples
        ("The museum was popular with tourists.", "The museum was not popular with tourists.", "neg:copula"),
        ("She has worked at the library since 2001.", "She has not worked at the library since 2001.", "neg:aux"),
        ("The author published the book in 1990.", "The author did not publish the book in 1990.", "neg:do-support"),
        # do-support agrees in tense and person
        ("He works at the factory near the river.", "He does not work at the factory near the river.", "neg:do-support"),
        ("The brothers work at the factory near the river.", "The brothers do not work at the factory near the river.", "neg:do-support"),
        ("From 1765 until 1772, he had a shop at Castlehill.", "From 1765 until 1772, he did not have a shop at Castlehill.", "neg:do-support"),
        # the base form of a verb in "-e" whose past the lemmatizer cuts to a shorter word ("staged" -> "stag");
        # a one-syllable verb that doubles its consonant keeps its lemma ("stopped" -> "stop")
        ("The army staged a coup in 1958.", "The army did not stage a coup in 1958.", "neg:do-support"),
        ("She hoped for a win in the final.", "She did not hope for a win in the final.", "neg:do-support"),
        ("The ship stopped at Cork in May.", "The ship did not stop at Cork in May.", "neg:do-support"),
        # passive: "not" after the first auxiliary
        ("The bridge was built by the army in 1850.", "The bridge was not built by the army in 1850.", "neg:aux"),
        ("The bridge will be rebuilt by the city.", "The bridge will not be rebuilt by the city.", "neg:aux"),
        # existential "be" is a copula even when tagged VERB
        ("In addition, there are several decibel scales.", "In addition, there are not several decibel scales.", "neg:copula"),
    ],
)
def test_negation_rules(nlp, text, expected, rule):
    sent = first_sentence(nlp, text)
    edit = negate(sent)
    assert edit is not None and edit.apply(text) == expected
    assert edit.rule == rule
    assert text[edit.start : edit.end] == edit.before  # the audit trail points at the edited span
    assert expected[edit.start : edit.start + len(edit.after)] == edit.after


@pytest.mark.parametrize(
    "text",
    [
        "The workers did not strike that year.",  # dep neg
        "He never returned to the city.",  # lemma never
        "No trains stopped at the station.",  # lemma no
        "The workers didn't strike that year.",  # n't
        "A list of rivers in Romania.",  # no verbal root
        "Go to the station and buy two tickets.",  # no subject
    ],
)
def test_negation_skips_negated_and_verbless_sentences(nlp, text):
    assert edited(nlp, negate, text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Nothing came of this.",  # issue 14: "Nothing did not come of this"
        "No one attended the meeting in the town.",
        "Nobody knew the answer to the question.",
        "None of the ships survived the storm.",
        "Neither team scored in the first half.",
        "Few critics liked the film when it opened.",
        "The town hardly changed in the following century.",
        # issue 27: a negative adjective, verb or contraction
        "The ship's captain was unable to reach the harbour before dawn.",  # "was not unable"
        "The new route is impossible to finance without tolls.",
        "The verdict seemed unlikely to stand on appeal.",
        "The warning passed unheeded in the harbour town.",  # "did not pass unheeded"
        "The expedition failed to reach the summit in 1924.",  # "did not fail to reach"
        "The mayor refused to sign the harbour lease.",
        "The club didn\u201dt renew his contract after the season.",  # n't with a dataset's stray quote for the apostrophe
        'The club didn"t renew his contract after the season.',
        "The club didn?t renew his contract after the season.",
        "Nothing in the report suggests the dam was unsafe.",
        # "be/have yet to" is "not yet" (issue 27, session 23: both reads of short news articles)
        "Sixteen sets of medals are yet to be awarded at the regatta.",
        "The harbour board has yet to weigh in on the plan.",
    ],
)
def test_no_double_negative_with_a_negative_subject_determiner_adjective_or_verb(nlp, text):
    assert edited(nlp, negate, text) is None


def test_a_few_and_a_little_are_not_negative(nlp):
    assert edited(nlp, negate, "The few remaining copies were sold in 1990.") == "The few remaining copies were not sold in 1990."
    assert edited(nlp, negate, "The little village grew in the 1900s.") == "The little village did not grow in the 1900s."
    assert edited(nlp, negate, "Little is known about his early life.") is None


@pytest.mark.parametrize(
    "text",
    [
        # bundled sample, doc 27085061: "His videos did not record as ... received"
        'His videos recorded as "The Fully Sick Rapper" while quarantined received over two million hits and led to '
        "the World Health Organization (WHO) contacting him to help promote World Tuberculosis Day.",
        # issue 14: "The security did not bring about by the 2002 peace settlement has led"
        "The security brought about by the 2002 peace settlement has led to growth.",
    ],
)
def test_a_reduced_relative_participle_is_not_negated_as_the_root(nlp, text):
    assert edited(nlp, negate, text) is None


def test_not_never_lands_in_a_subordinate_clause(nlp):
    assert edited(nlp, negate, "Because the river flooded the town.") is None  # a subordinate clause split off as a sentence
    # the main clause is negated, not the "when" clause
    assert edited(nlp, negate, "When Helward goes to survey the land ahead, he finds a river.") == (
        "When Helward goes to survey the land ahead, he does not find a river."
    )


def test_negation_never_edits_quoted_speech(nlp):
    text = 'He held a sign bearing the words "Jesus Gives Peace, Jesus is Alive, Jesus is Lord".'
    result = edited(nlp, negate, text)
    assert result is None or '"Jesus Gives Peace, Jesus is Alive, Jesus is Lord"' in result
    # the verb that frames the quotation is not negated either (issue 27: "the minister did not say")
    assert edited(nlp, negate, 'The pastor said: "The church is full every Sunday."') is None
    assert edited(nlp, negate, '"The church is full every Sunday."') is None


def test_a_quotation_spanning_sentences_is_never_negated(nlp):
    # bundled sample, doc 8722094: the quotation opens a sentence earlier
    doc = nlp('He said: "We came here at dawn. He walked in and the temperature of the room changed. Then we left." The crowd left.')
    first, quoted, last_quoted, after = doc.sents
    assert negate(quoted) is None
    assert negate(after) is not None and negate(after).apply(after.text.strip()) == "The crowd did not leave."
    assert negate(quoted, opened="") is not None  # the same sentence out of its quotation is negated
    # a sentence that closes (or opens) a quotation is refused whatever state was read before it
    assert negate(last_quoted, opened="") is None


@pytest.mark.parametrize(
    "text",
    [
        "She has also introduced more than 50 bills.",  # "has not also introduced"
        "The company requested a sale price of $2 million instead.",
        "The union was active in organizing faculty as well.",
        "Although damaged, the lighthouse can still guide the boats.",  # "can not still guide"
        "The ferry company has already sold the old boat.",  # "has not already sold"
    ],
)
def test_modifiers_that_read_oddly_under_negation_are_skipped(nlp, text):
    assert edited(nlp, negate, text) is None


# -- issue 27: the neg defect classes, each with a sentence of our own --------


@pytest.mark.parametrize(
    "text",
    [
        '"The ferry will sail at noon," the harbour master said.',
        "The harbour master told reporters that the ferry would sail at noon.",
        "The council announced the ferry would sail at noon.",
        "The harbour master said on Monday the ferry had been repaired.",  # the parser's advcl for the reported clause
        'The harbour master described the ferry as "the best we have ever had" and left.',  # framing quoted speech
        "The harbour master said.",  # the quotation was the sentence before
        "The harbour office told the council about the new ferry timetable.",
        "The fishermen protested for years that the quota ignored their needs.",
        "The mayor of the port town agreed.",  # the mayor's own words follow as a quotation
        "A retired captain echoed that view.",
        # the report in an infinitive under the root: "did not go on to argue" denies the report
        "The mayor went on to argue that the pier should be rebuilt by the council.",
        "The harbour master began to say that the ferry was late.",
        # verbs of saying, judging or urging by WordNet (issue 27, session 23: the read of short news articles)
        "The mayor spoke with fondness about her grandfather's old boat.",
        "The harbour master chastised the ferry company for the long delays.",
        "The council called for a full inquiry into the collapse of the pier.",
        "The bishop defended the new mooring rules, calling them fair and overdue.",
        "The union went on to praise the new owners of the yard.",
        "The fishermen's leaders wrote: the quota is unfair.",
        # verbs of reporting whose WordNet first sense the first seeds missed (session 25, set-aside read of part 2)
        "The skipper complained of the difficulty of finding a berth for the night.",
        "The pilot described, according to the harbour log, steering the ferry through the storm.",
        "The mayor explained the new mooring fees to the fishermen.",
        # a speech act said with a light verb and its noun
        "The skipper paid tribute to the crews who had searched the bay for two days.",
        "The harbour office issued a warning about the storm on Monday.",
        # a verb that is one of saying when its object is an audience (session 26, part 3's neg defect)
        "Mrs Walsh will address staff at the harbour office ahead of a meeting with the council.",
        "The harbour master will brief reporters on the storm at noon.",
    ],
)
def test_a_reporting_verb_is_never_negated(nlp, text):
    # '..., the harbour master did not say': the report stays, only the saying is denied
    assert edited(nlp, negate, text) is None
    reasons = ("reporting or attitude verb", "verb framing a quotation", "verb of communication")
    assert refusal(first_sentence(nlp, text)) in reasons


def test_a_verb_of_doing_beside_them_is_still_negated(nlp):
    assert edited(nlp, negate, "The crew repaired the old pier in May.") == "The crew did not repair the old pier in May."
    # a light verb with a noun that names no speech act
    assert edited(nlp, negate, "The council paid the fishermen for the lost nets.") == "The council did not pay the fishermen for the lost nets."
    # the same verb with an issue, not an audience, for its object
    assert edited(nlp, negate, "The new plan addresses the problem of silt in the channel.") == (
        "The new plan does not address the problem of silt in the channel."
    )


def test_an_infinitive_that_reports_nothing_is_still_negated(nlp):
    assert edited(nlp, negate, "The council went on to rebuild the pier after the storm.") == (
        "The council did not go on to rebuild the pier after the storm."
    )


def test_a_quoted_title_is_no_speech_and_a_copula_with_a_clause_is_no_report(nlp):
    assert edited(nlp, negate, 'She recorded "Blue Harbour Nights" in Lisbon.') == 'She did not record "Blue Harbour Nights" in Lisbon.'
    assert edited(nlp, negate, "The trouble is that the harbour silts up.") == "The trouble is not that the harbour silts up."


@pytest.mark.parametrize(
    "text",
    [
        "The committee strongly supported the harbour plan.",  # "strongly did not support"
        "Exports more than doubled during the decade.",  # "more than did not double"
        "Sales at the bakery quickly rose after the fair.",
    ],
)
def test_no_do_support_after_a_modifier_of_the_verb(nlp, text):
    assert edited(nlp, negate, text) is None
    assert refusal(first_sentence(nlp, text)) == "no clean edit"


def test_do_support_still_follows_a_subject_with_its_own_modifiers(nlp):
    assert edited(nlp, negate, "The bakery, a family firm, opened a second shop.") == "The bakery, a family firm, did not open a second shop."


def test_a_name_particle_taken_as_the_verb_is_not_negated(nlp):
    """A parse as the parser gives it on news text: the particle "van" of
    "Pieter van der Laan" tagged as a present-tense verb with the name's
    first word as subject. Do-support would give "Pieter do not van der Laan
    ..."; "van" is no verb of the lexicon."""
    from spacy.tokens import Doc

    words = ["Pieter", "van", "der", "Laan", "joined", "the", "choir", "."]
    doc = Doc(
        nlp.vocab,
        words=words,
        spaces=[True] * 6 + [False, False],
        heads=[1, 1, 3, 1, 1, 6, 4, 1],
        deps=["nsubj", "ROOT", "det", "dobj", "dep", "det", "dobj", "punct"],
        tags=["NNP", "VBP", "NNP", "NNP", "VBD", "DT", "NN", "."],
        pos=["PROPN", "VERB", "PROPN", "PROPN", "VERB", "DET", "NOUN", "PUNCT"],
        lemmas=["Pieter", "van", "der", "Laan", "join", "the", "choir", "."],
        sent_starts=[True] + [False] * 7,
    )
    sent = next(iter(doc.sents))
    assert negate(sent) is None
    doc.user_data.clear()
    joined = Doc(
        nlp.vocab, words=["Pieter", "joined", "the", "choir", "."], spaces=[True, True, True, False, False],
        heads=[1, 1, 3, 1, 1], deps=["nsubj", "ROOT", "det", "dobj", "punct"], tags=["NNP", "VBD", "DT", "NN", "."],
        pos=["PROPN", "VERB", "DET", "NOUN", "PUNCT"], lemmas=["Pieter", "join", "the", "choir", "."],
        sent_starts=[True] + [False] * 4,
    )  # fmt: skip
    assert negate(next(iter(joined.sents))).apply("Pieter joined the choir.") == "Pieter did not join the choir."


def test_a_prefix_that_is_no_negation_is_negated_as_usual(nlp):
    # "important" and "interesting" are not "im-"/"in-" + an adjective of the lexicon
    assert edited(nlp, negate, "The harbour was important to the town.") == "The harbour was not important to the town."
    assert edited(nlp, negate, "The old harbour is interesting to visit.") == "The old harbour is not interesting to visit."
    assert edited(nlp, negate, "The harbour was able to take larger ships.") == "The harbour was not able to take larger ships."


def test_a_comparative_subject_or_correlative_is_not_negated(nlp):
    assert edited(nlp, negate, "Fewer ships docked in the harbour than in May.") is None  # "did not dock ... than"
    assert edited(nlp, negate, "The deeper the channel, the larger the ships it takes.") is None
    assert edited(nlp, negate, "The older the wine is, the more valuable it is.") is None  # "the more valuable it is not"


def test_not_follows_a_sentence_adverb_after_the_auxiliary(nlp):
    # "has not therefore been" reads "not for that reason"; "has not nevertheless been" is ungrammatical
    assert edited(nlp, negate, "The old pier has therefore been closed to traffic.") == "The old pier has therefore not been closed to traffic."
    assert edited(nlp, negate, "The ferry has nevertheless been repaired in time.") == (
        "The ferry has nevertheless not been repaired in time."
    )
    assert edited(nlp, negate, "The ferry has recently been repaired.") == "The ferry has not recently been repaired."


def test_far_from_is_a_negation_already(nlp):
    # "it was not far from our aim" is a double negative
    assert edited(nlp, negate, "Closing the harbour was far from our aim.") is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # an existential presenting a known thing: "there was not the question of" denies nothing
        ("Then there was the question of the broken crane.", "existential with a definite noun phrase"),
        ("There is the old lighthouse keeper's cottage at the end of the pier.", "existential with a definite noun phrase"),
        # a verb labelling its object with someone's quoted words: "did not describe X as '...'" denies only the saying
        ('The harbour master called the storm "the worst in living memory".', "verb framing a quotation"),
        ('He described the new quay as "a triumph of engineering" at the opening.', "verb framing a quotation"),
        # a list entry: the verbs are in relative clauses of a verbless noun phrase; a relative clause cut from its noun
        ("Nine old cottages, only two of which were built of stone, and all of which are empty now.", "no main-clause verb"),
        ("Only two of which were built of stone by the fishermen.", "no main-clause verb"),
    ],
)
def test_definite_existentials_quoted_labels_and_relative_clauses_are_not_negated(nlp, text, why):
    assert edited(nlp, negate, text) is None
    assert refusal(first_sentence(nlp, text)) == why


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There are several old cottages at the end of the pier.", "There are not several old cottages at the end of the pier."),
        ("The sailors called the skipper on Monday morning.", "The sailors did not call the skipper on Monday morning."),
        # a quotation in a clause of its own (the relative) does not make the root a verb framing it
        (
            'The ferry line was used by islanders, who call it "our lifeline".',
            'The ferry line was not used by islanders, who call it "our lifeline".',
        ),
        ("The house which the baker built is on the hill.", "The house which the baker built is not on the hill."),
    ],
)
def test_an_indefinite_existential_an_unquoted_label_and_a_relative_inside_the_subject_are_negated(nlp, text, expected):
    assert edited(nlp, negate, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # issue 27 (s15): an adverbial phrase the parser hangs off the subject, before do-support
        "The port council on a narrow vote (six to five) approved the harbour budget.",  # noun of manner or measure
        "The committee on a bipartisan basis approved the budget.",
        "The port council by a wide margin approved the harbour budget.",
        "He in his speech rejected the harbour plan.",  # a pronoun is not narrowed by a phrase
        "Ana Ruiz in 2015 bought the harbour lease.",  # a name, a date
        "The ferry company during the strike cut its fares.",  # a preposition of circumstance
        "The port council (when Ana Ruiz was its chair) approved the harbour budget.",  # a bracketed adverbial clause
    ],
)
def test_no_do_support_after_an_adverbial_phrase_hung_off_the_subject(nlp, text):
    assert edited(nlp, negate, text) is None
    assert refusal(first_sentence(nlp, text)) in ("adverbial phrase before do-support", "no clean edit")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a phrase that narrows the subject, a relative clause on it, a phrase set off by commas, a name with "of"
        ("The members of the board voted to raise the harbour fees.", "The members of the board did not vote to raise the harbour fees."),
        ("The man in the grey coat bought the harbour lease.", "The man in the grey coat did not buy the harbour lease."),
        ("The committee on harbour affairs approved the budget.", "The committee on harbour affairs did not approve the budget."),
        ("The council that met on Monday approved the harbour budget.", "The council that met on Monday did not approve the harbour budget."),
        ("The mayor, in a letter to the council, rejected the harbour plan.", "The mayor, in a letter to the council, did not reject the harbour plan."),
        ("The Bank of Ireland bought the harbour lease.", "The Bank of Ireland did not buy the harbour lease."),
        ("Ana Ruiz (D-Ore.) voted against the harbour budget.", "Ana Ruiz (D-Ore.) did not vote against the harbour budget."),
        ("The port council (which meets every month) approved the harbour budget.",
         "The port council (which meets every month) did not approve the harbour budget."),
        ("The day when the pier opened drew a large crowd.", "The day when the pier opened did not draw a large crowd."),
        # a date deeper in the subject's phrase restricts it (news-1595's shape)
        ("New figures in a survey of Kerry fishermen in Cork during late 2015 reveal the poor state of the harbour.",
         "New figures in a survey of Kerry fishermen in Cork during late 2015 do not reveal the poor state of the harbour."),
    ],
)
def test_do_support_after_a_phrase_that_belongs_to_the_subject(nlp, text, expected):
    assert edited(nlp, negate, text) == expected
