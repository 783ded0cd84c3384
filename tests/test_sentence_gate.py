"""Which parsed sentences are sentences, and which may be needles
(engine.corpus.sentence_gate, with the parser guards of
engine.corpus.sentence_guards and the segmentation that applies them), on
sentences written for these tests, parsed by the real model."""

from __future__ import annotations

import pytest

from engine.corpus.cleaning import clean_text
from engine.corpus.segmentation import document_sentences
from engine.corpus.sentence_gate import needle_refusals, not_a_sentence
from needle_helpers import before_parser


def stored(nlp, text: str) -> tuple[str, ...]:
    return document_sentences(nlp(clean_text(text))).texts


def refusals(nlp, text: str) -> dict[str, str]:
    sentences = document_sentences(nlp(clean_text(text)))
    return dict(zip(sentences.texts, needle_refusals(sentences.spans[0].doc, sentences.spans)))


def assert_refused_alone(nlp, cases: dict[str, str]) -> None:
    """Each text, parsed as one span, gets the needle refusal it maps to ("" for none)."""
    for text, why in cases.items():
        doc = nlp(text)
        assert needle_refusals(doc, [doc[:]]) == (why,), text


def test_a_heading_fused_onto_a_sentence_is_split_off_and_dropped(nlp):
    text = (
        "The ferry left Cork at noon. Harbour works stall The council said on Tuesday that the pier "
        "would reopen in May. Boats will use the old slipway until then."
    )
    assert stored(nlp, text) == (
        "The ferry left Cork at noon.",
        "The council said on Tuesday that the pier would reopen in May.",
        "Boats will use the old slipway until then.",
    )


@pytest.mark.parametrize(
    "sentence",
    [
        # "Him" opens sentences, but the words before it hold a finite verb
        "We ask you to join us in offering to Him our thanks for the harvest.",
        # "May" is a month here (a proper noun to the tagger), and ";" does not end a sentence
        "The fleet was late; a storm on 16 May forced the ferry to stay in Cork.",
        # a name the tokenizer cuts like a contraction ("Ca" + "nt")
        "In preparation for the 2012 season Cant decided to race in Cork.",
    ],
)
def test_a_capitalised_word_inside_a_sentence_is_not_a_heading_boundary(nlp, sentence):
    assert stored(nlp, f"{sentence} The rain came late.") == (sentence, "The rain came late.")


def test_captions_and_list_entries_are_not_sentences(nlp):
    text = (
        "The fleet returned in March. A fisherman mending his nets at dawn in Cork. "
        "The catch was the largest in a decade. \u2022 The pier will reopen in May. 2. Costs rose by a third. "
        "Prices fell in April."
    )
    assert stored(nlp, text) == (
        "The fleet returned in March.",
        "The catch was the largest in a decade.",
        "Prices fell in April.",
    )


@pytest.mark.parametrize(
    "junk, reason",
    [
        ("Sign up for the harbour newsletter", "no_sentence_end"),
        ("READ MORE: Ferry strike called off as talks resume.", "label"),
        ("Ferries: The new timetable adds two sailings a day to Kinsale.", "label"),  # a labelled list entry
        # a timeline entry: a date, or a short verbless phrase, its label
        ("January 26: The harbour board votes to close the old quay.", "label"),
        ("Jan. 15: Divers find the wreck off the point.", "label"),
        ("March 3, 2017: The ferry company files for bankruptcy.", "label"),
        ("Two days later: The harbour master resigns.", "label"),
        ("Short time later: Drives from the pier to the ferry office.", "label"),
        ("Follow the harbour master at @corkharbour for updates.", "web_residue"),
        ("Crowds cheered the tall ships in the bay #CorkHarbour.", "web_residue"),  # an embedded post
        ("The lighthouse stands about north of the old harbour.", "template_hole"),
        ("or sail on to Kinsale before the storm.", "fragment"),
        # a number or a name a template held, removed
        ("The council raised the harbour budget to by $3 million to $1.2 billion.", "template_hole"),
        ("The mine produced over of copper each year.", "template_hole"),
        ("He was the reserve goalkeeper in but did not play a single match.", "template_hole"),
        ("Ports that lost their ferry are shown in italics.", "legend"),  # a table's legend
        ("See the harbour section below for the sailing times.", "legend"),
        # a caption or a heading run into the next sentence inside one parse
        ("The ferry service was moved to a bigger pier Fishermen have long complained about the old quay.", "run_on_heading"),
        ("A trawler was towed in by the harbour patrol Did anyone see it sink?", "run_on_heading"),
        ("Nets are drying on the slipway at dawn Key figures In Kinsale, the catch fell by a third.", "run_on_heading"),
        # a heading run into an opener that only its comma, or the number after it, shows to open a sentence
        ("Doubts over the harbour plan Currently, the board meets once a month.", "run_on_heading"),
        ("Ferries of the '50s In 1955, the board bought its first car ferry.", "run_on_heading"),
        ("The pier has been closed since 2016 However, the board will reopen it.", "run_on_heading"),
        # a verb that takes a to-infinitive before a bare one: the source lost "to"
        ("The board decided close the quay in May.", "missing_word"),
        ("The crews refused leave the harbour.", "missing_word"),
        # a verb that takes an object and a to-infinitive, its object, a bare verb: the source lost "to"
        ("The grant will enable Cork help repair the old pier.", "missing_word"),
        ("They urged the board close the quay.", "missing_word"),
        # ... the bare verb tagged as a present one, hung under the verb through the noun it was read to modify
        ("Walsh hopes the levy will enable Ireland help fund harbour projects in island countries.", "missing_word"),
        # two words no sentence puts side by side (engine.corpus.lost_words): an article before another
        # determiner, a subject pronoun before a bare "be", "as well" or "in order" before a verb
        ("The mayor told the board on Monday that the that pier would be rebuilt by the autumn.", "missing_word"),
        ("The new pilot is Ann Walsh, who she be replacing on the island ferry in May.", "missing_word"),
        ("The board raised the fares as well adding a late sailing to Cobh.", "missing_word"),
        ("The crews hauled the trawler onto the slipway in order mend the hull before the storm.", "missing_word"),
        ("Islanders now buy their fuel in bulk rather just a few cans at a time.", "missing_word"),
        # a span of time "leading up" a noun phrase: the phrase of time lost its "to"
        ("In the weeks leading up the harbour vote, the ferry crews met every night.", "missing_word"),
        # "show no signs" before a gerund: the noun lost its "of" (issue 27, session 22)
        ("The strikes at the ferry port show no signs coming to an end this winter.", "missing_word"),
        ("The price of fuel on the islands has shown little sign easing since May.", "missing_word"),
        # a comma, then a capitalised function word opening a finite clause: the source lost a full stop
        ("The harbour has two kinds of moorings, One is the kind that dries out at low tide.", "missing_word"),
        ("The dues were paid on the ferries of 1904, The owners of the old boats asked for a refund in May.", "missing_word"),
        # a word written twice, the second copy in the first's role: the source's slip
        ("The island crews have have been losing their pay for the past ten years.", "missing_word"),
        ("The old pier was rebuilt by by the harbour board in 1890.", "missing_word"),
        ("The skipper sailed to Cobh because because the quay at Kinsale was shut.", "missing_word"),
        # a phrase of two words written twice (issue 27, the set-aside read of news part 2)
        ("The mayor spoke of the new pier as well as well as the rise in harbour dues.", "missing_word"),
        # only a subordinate clause: no main clause after it
        ("As has been the rule at the harbour for decades.", "subordinate_clause"),
        ("If to these dues be added the cost of the new pier, to $40,000.", "subordinate_clause"),
        ("If to the dues be added the cost of the quay which was built in May, to $9,000.", "subordinate_clause"),
    ],
)
def test_why_a_span_is_not_a_sentence(nlp, junk, reason):
    span = next(nlp(junk).sents)
    assert not_a_sentence(span, span.text.strip()) == reason
    text = f"The ferry left Cork at noon. {junk} The crossing took two hours."
    assert stored(nlp, text) == ("The ferry left Cork at noon.", "The crossing took two hours.")


@pytest.mark.parametrize(
    "sentence",
    [
        "He added: The quay will reopen before the summer.",  # a verb before the colon
        "My fellow citizens: We meet tonight in a hard season for the fleet.",  # a person
        "The reason is simple: Fuel costs more than fish.",
        "The ferry left at 10:30 on the first day of May.",  # a time inside the sentence
    ],
)
def test_a_colon_after_a_verb_a_person_or_a_name_is_no_entry_label(nlp, sentence):
    span = next(nlp(sentence).sents)
    assert not_a_sentence(span, span.text.strip()) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "After the vote, The Irish Times reported that the quay would close.",  # a paper's name after the comma
        'The skipper shouted, "The quay is shut for the winter."',  # a quotation after the comma
        "Last winter, I saw the ferry leave the harbour in a gale.",  # "I"
    ],
)
def test_a_capital_after_a_comma_that_opens_no_fused_sentence_is_prose(nlp, sentence):
    span = next(nlp(sentence).sents)
    assert not_a_sentence(span, span.text.strip()) is None


def test_boilerplate_is_cut_before_parsing_when_repeated_across_documents():
    from engine.corpus.boilerplate import remove_pieces, repeated_pieces

    blurb = "Get the harbour news in your inbox every morning."
    docs = [
        f"The ferry left Cork at noon. {blurb} Sign up now",
        f"Fishing quotas were cut. {blurb} Sign up now",
        f"The pier reopened in May. {blurb} Sign up now",
        "The lighthouse was painted. Get the harbour news in your inbox every evening.",
    ]
    repeated = repeated_pieces(docs)
    assert remove_pieces(docs[0], repeated) == ("The ferry left Cork at noon.", 2)
    assert remove_pieces(docs[3], repeated) == (docs[3], 0)  # in one document only: kept
    assert repeated_pieces(docs[:2]) == frozenset()  # in two documents: not yet boilerplate


def test_a_line_without_a_full_stop_run_into_sentences_of_many_documents_is_cut():
    from engine.corpus.boilerplate import remove_pieces, repeated_pieces

    line = "Tide tables cannot be shown in this viewer"
    docs = [
        f"The ferry left Cork at noon. {line} Fishing quotas were cut in March.",
        f"Storms closed the port. {line} \"We lost a week,\" a skipper said.",
        f"{line} The pier reopened in May after repairs.",
    ]
    repeated = repeated_pieces(docs)
    assert remove_pieces(docs[0], repeated) == ("The ferry left Cork at noon. Fishing quotas were cut in March.", 1)
    assert remove_pieces(docs[2], repeated) == ("The pier reopened in May after repairs.", 1)
    # a prose opening that repeats before names but also goes on in lower case is a clause, not a line
    said = "The harbour board of the county said"
    prose = [f"{said} Dublin would pay.", f"{said} Galway had asked.", f"{said} Cork agreed.", f"{said} on Monday it would wait."]
    assert remove_pieces(prose[0], repeated_pieces(prose)) == (prose[0], 0)
    # before one word only, it is a name's first part or a fixed phrase, not a line stamped before many sentences
    fixed = [f"A note on the famous harbour pilot Sean Ryan of {town}." for town in ("Cobh", "Kinsale", "Bantry")]
    assert remove_pieces(fixed[0], repeated_pieces(fixed)) == (fixed[0], 0)


def test_abbreviations_initials_and_brackets_do_not_end_sentences(nlp):
    text = (
        "The fort was held by Brig. Gen. Alan Marsh until 1812. "
        'The name (lit. "small harbour") was used by T. S. Eliot in a letter. '
        "The chapel was built c. 1500 near the quay, as Moore et al. in 1901 showed. "
        "The ship sailed to the U.S. The crew stayed in Cork."
    )
    assert stored(nlp, text) == (
        "The fort was held by Brig. Gen. Alan Marsh until 1812.",
        'The name (lit. "small harbour") was used by T. S. Eliot in a letter.',
        "The chapel was built c. 1500 near the quay, as Moore et al. in 1901 showed.",
        "The ship sailed to the U.S.",
        "The crew stayed in Cork.",
    )


def test_a_word_with_a_hyphen_against_its_end_does_not_end_a_sentence(nlp):
    # "while- Tom Byrne ...": the dataset's hyphen for a dash; the parser split there and the gate dropped the
    # head, leaving a line that lost it (issue 27, session 22, read 5931's hay)
    text = (
        "Some media owners have backed the mayor. "
        "Anne Roche, co-owner of the Harbour Post, has publicly supported him, while- Tom Byrne, deputy director "
        "of Cork Radio, which owns two papers, resigned from his post to join the campaign. "
        "Such support cannot but shape the papers they own."
    )
    assert stored(nlp, text)[1].startswith("Anne Roche") and stored(nlp, text)[1].endswith("join the campaign.")
    assert len(stored(nlp, text)) == 3


@pytest.mark.parametrize(
    "sentence",
    [
        "By May the island skippers had had enough of the new fares.",  # an auxiliary and a verb
        "The mayor said that that pier would be closed for the winter.",  # a conjunction and a determiner
        "There were many small things like that that worried the crews.",  # two phrases
        "It took a long long while for the ferry to come back to Cobh.",  # an adjective said twice for emphasis
        "The fares went up and up and up all through the winter.",  # a pair with a conjunction, for emphasis
    ],
)
def test_a_word_said_twice_in_two_roles_or_for_emphasis_is_prose(nlp, sentence):
    span = next(nlp(sentence).sents)
    assert not_a_sentence(span, span.text.strip()) is None


def test_a_plural_title_before_names_does_not_end_a_sentence(nlp):
    text = (
        "The plan drew fire from both sides of the chamber. "
        "Republican Sens. Nora Quill and Dan Ferris called the plan a mistake on the radio. "
        "Two Drs. Ann Lowry and Tom Byrne wrote to the harbour board about it. "
        "The statement was sent to the Associated Press. The crew stayed in Cork."
    )
    assert stored(nlp, text) == (
        "The plan drew fire from both sides of the chamber.",
        "Republican Sens. Nora Quill and Dan Ferris called the plan a mistake on the radio.",
        "Two Drs. Ann Lowry and Tom Byrne wrote to the harbour board about it.",
        # near miss: a word that ends sentences is no title's plural ("Pres" + "s")
        "The statement was sent to the Associated Press.",
        "The crew stayed in Cork.",
    )


def test_a_sentence_whose_head_the_gate_dropped_is_refused_as_a_needle(nlp):
    # a role before a name whose first word reads as a conjunction: the parser cut the name from its role and the
    # gate dropped the role ("Shop co-owner", no sentence end)
    text = (
        "The ferry left Cork at noon on Monday. The union has met the board twice. "
        '"We will not sail until the fares are cut at last," she said. '
        "Shop co-owner And Byrne told the Cork Echo that he was not there when the deal was made. "
        "The crew stayed in Cork for a week."
    )
    found = refusals(nlp, text)
    assert found["And Byrne told the Cork Echo that he was not there when the deal was made."] == "after_dropped_title"
    assert found["The crew stayed in Cork for a week."] == ""
    # a label's colon: its teaser headline ran into the sentence after the split (spans as the segmenter leaves
    # them, the label dropped), and the two halves of a sentence split after a title
    text = (
        "The union has met the board twice. READ MORE: Ferry strike called off in Cork Ann Walsh, 30, keeps her "
        "children fed with rations from the board. Republican Sens. Nora Quill and Dan Ferris called the plan a "
        "mistake. The crew stayed in Cork for a week."
    )
    doc = nlp(text)
    kept = [
        "The union has met the board twice.",
        "Ferry strike called off in Cork Ann Walsh, 30, keeps her children fed with rations from the board.",
        "Republican Sens.",
        "Nora Quill and Dan Ferris called the plan a mistake.",
        "The crew stayed in Cork for a week.",
    ]
    spans = [doc.char_span(text.index(piece), text.index(piece) + len(piece)) for piece in kept]
    assert needle_refusals(doc, spans) == ("", "after_dropped_label", "abbreviation_end", "after_abbreviation", "")
    # near miss: an initial may end a sentence, and the one after it is whole
    found = refusals(nlp, "The harbour grant is paid under Part A. The board met in May to set the fares.")
    assert found == {"The harbour grant is paid under Part A.": "", "The board met in May to set the fares.": ""}


def test_a_quotation_opened_in_an_earlier_sentence_refuses_the_sentences_inside_it(nlp):
    text = (
        "The mayor spoke on Friday. "
        '"The pier is safe. The council has the money. We start in May," she said. '
        "The council met on Monday."
    )
    assert refusals(nlp, text) == {
        "The mayor spoke on Friday.": "",
        '"The pier is safe.': "quoted",
        "The council has the money.": "quoted",  # no mark of its own: inside the quotation
        'We start in May," she said.': "quoted",
        "The council met on Monday.": "",
    }


def test_a_paragraph_break_closes_an_unclosed_quotation(nlp):
    # (lines as long as prose: a short line ending in "." reads as a heading to engine.corpus.cleaning)
    after = "The council met on Monday and voted to rebuild the pier before the summer season."
    text = f'He wrote on Friday that "the pier is safe and the quay is dry.\n{after}'
    assert refusals(nlp, text)[after] == ""


def test_mojibake_quotation_marks_are_repaired_and_tracked(nlp):
    # the news dataset's forms: a closing curly quote and the space after it as '"?',
    # an opening one as '"' + U+FFFD, an apostrophe as '"'
    text = (
        "The mayor spoke on Friday. "
        '"\ufffdThe pier is safe. The council has the money,"?she said. '
        'The council didn"t say when work would start.'
    )
    found = refusals(nlp, text)
    assert found == {
        "The mayor spoke on Friday.": "",
        '"The pier is safe.': "quoted",
        'The council has the money," she said.': "quoted",
        "The council didn't say when work would start.": "",
    }


def test_a_quotation_opening_on_an_ellipsis_is_tracked(nlp):
    text = 'The mayor said of the plan: "...it was the best I have seen. The pier is safe." The council met on Monday.'
    found = refusals(nlp, text)
    assert found["The pier is safe.\""] == "quoted" and found["The council met on Monday."] == ""


def test_a_stray_mark_changes_the_state_only_until_the_next_clear_mark(nlp):
    # an inch sign: closes nothing that was open, opens nothing
    text = 'The pipe is 6" wide. The council paid for it. "We start in May," she said. The work began in May.'
    found = refusals(nlp, text)
    assert found["The council paid for it."] == "" and found["The work began in May."] == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "The catch grew by 5 percent to 2,000 tonnes.",  # two prepositions, each with its number
        "The handing over of the keys took place in May.",
        "The lifeboat crew found the trawler too late, but all of them survived.",
        # a preposition capitalised inside a title that capitalises every word, before a number
        "The crew watched Men In Black 3 on the ferry to Kinsale.",
    ],
)
def test_sentences_like_holes_or_run_on_headings_are_kept(nlp, sentence):
    assert stored(nlp, f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")[1] == sentence


def test_a_heading_opening_a_sentence_refuses_it_as_a_needle_and_keeps_it_in_hay(nlp):
    for heading in (
        "Storm damage at the old quay Harbour master Tom Byrne said the pier would close.",
        # the same shape as a kin word before a name, but the name is a second subject of its own
        "The long view Nora Keane has no wish to run the family bakery.",
        # the name apposed to a heading's noun all the same: the noun is no subject (the root here),
        # or the heading holds a proper noun that names nothing (a link's verb)
        "The full story Nora Keane as a baker takes the spotlight in the film.",
        "Read Tom's full blog Nora Keane, head of the harbour board, said the pier would close.",
        # a gerund heading the parser reads as a gerund subject, its object's noun a modifier of the name
        "Holding the fort Ann Walsh was born in Kinsale in 1971.",
        # a headline with a to-infinitive whose verb takes no object, run into the sentence's subject
        "Ferry fares to rise Commuters expect the board to add a new route.",
        "Harbour dues to soar Kinsale expects to pay more on its fees this year.",
        # a plural present verb agrees only with the capitalised plural noun after the singular heading
        "Extra pay for less Porters also say their shifts have grown.",
        # a heading's last plural noun the parser chains onto the subject's noun as its modifier
        "Row over harbour talks Key Cork skippers agreed to meet the minister.",
        # a capitalised adjective outside any name opens the subject after a heading's noun
        "The harbour news Senior pilots have asked for a new tug.",
        # a day's name in the possessive is no adverb of time: it opens the subject
        "Rough seas Monday's sailing was the worst of the winter.",
        # a second subject of the verb opened by a nationality right after the heading's noun
        "The hidden cost of Cork's ferry strikes Irish hauliers have been forced to use ports in Wales.",
        # a participle headline run into a number that opens the subject
        "Harbours controlled by private firms 40 percent of Irish ports are now run by companies, the report found.",
        # a bare two-word heading hung on a place's name as a modifier that says nothing of a place
        "Water dispute Ireland also plans to close the bay to foreign boats next year.",
        # a role written as a capitalised hyphenated compound after the heading's noun, before a name
        "Risks of late filing Co-pilot Ann Walsh told the board the data were thin.",
        # a heading's word the tagger took into a nationality of two words, after the heading's noun
        "Quotas back on the table Outgoing Irish minister Ann Walsh welcomed the deal.",
    ):
        found = refusals(nlp, f"The ferry left Cork at noon. {heading} The crew stayed in Cork.")
        assert found[heading] == "heading_opening"
    # a kin word or a role before a name, and an adverbial before the subject, are prose
    for prose in (
        "My sister Maeve sailed to Kinsale in May.",
        "After the storm Maeve sailed to Kinsale in May.",
        # the parser hangs the name on the opening noun as its apposition: one subject, not a heading
        "Her eldest daughter Nora Keane has no wish to run the family bakery.",
        "Our former landlord Peter Dunne owns three shops on the main street.",
        # a gerund subject whose object is a person named with a role, and a participle modifying a noun
        "Meeting the painter Ann Walsh was the best part of the trip.",
        "Leading harbour pilot Tom Byrne brought the trawler in at dawn.",
        # a to-infinitive whose verb takes an object or a complement, or a day after a verb without one
        "Plans to visit Cork were shelved after the storm.",
        "Their wish to remain EU members was ignored by the board.",
        "The plan to arrive Monday was dropped by the crew.",
        # a plural opening noun or a singular verb: the verb may agree with the opening's noun
        "Talks with other Governments are going well this year.",
        "The demand from foreign Buyers has grown since May.",
        # a plural noun before a capitalised word inside one noun phrase, no preposition before it
        "Foreign affairs Committee members agreed to meet in May.",
        # a capitalised adjective an adjective before it modifies, and a nationality
        "Its new Federal budget was passed in May.",
        "The ancient Celtic festival begins at dawn.",
        # an adverbial opening before a possessed day's name
        "After the storm Monday's sailing was cancelled.",
        # a noun run into a nationality that opens a relative clause: one subject for each verb
        "The hauliers Irish ports turned away have been forced to use ports in Wales.",
        # a number after a participle's phrase as a date or as a measure of the word after it
        "Harbours controlled by private firms 40 years ago were run badly.",
        "Boats built by hand 40 percent faster than before are now sold in Cork.",
        # a noun that names a place's kind, or a person (a country as its team), before a place's name
        "Host nation Ireland opened the games in May.",
        "Tournament favourites India won the final in Dublin.",
        # a capitalised role and a name as a gerund's object: a title before a name
        "Risks of meeting Co-author Ann Walsh are small.",
        # a nationality of two words after a noun, opening a relative clause
        "The trade talks South African officials held in Cork went well.",
    ):
        assert refusals(nlp, f"The ferry left Cork at noon. {prose} The crew stayed in Cork.")[prose] == ""


@pytest.mark.parametrize(
    "sentence, refused",
    [
        # a title restated at once by the sentence it was run into
        # (a list title, "Harbour policy seen as cautious, steady Cork's ...", is split off before the parser)
        ("Harbour policy seen as cautious Cork's harbour policy is expected to stay cautious and steady.", True),
        # (a headline in headlinese, "Ferry fares stay high Minister Ann Byrne said ...", is split off
        # before the parser: tests/test_fused_headings.py; one with an article is left to this refusal)
        ("Ferry fares stay high in the winter Minister Ann Byrne said ferry fares would stay high.", True),
        # names restated in one sentence are its topic, not a title
        ("Penn State beat Ohio State in October and Penn State fans cheered in the rain.", False),
    ],
)
def test_a_restated_title_run_into_a_sentence_refuses_it_as_a_needle(nlp, sentence, refused):
    found = refusals(nlp, f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")
    assert found[sentence] == ("heading_opening" if refused else "")


def test_a_single_quotation_closing_inside_a_double_one_leaves_it_open(nlp):
    text = (
        "The mayor spoke on Friday. "
        "\"The question is not: 'Is the pier safe?' Yes, of course it is. The real question is the cost,\" she said. "
        "The council met on Monday."
    )
    found = refusals(nlp, text)
    assert found["Yes, of course it is."] == "quoted"
    assert found["The council met on Monday."] == ""


def test_a_spaced_ellipsis_does_not_end_a_sentence_before_a_lowercase_word(nlp):
    text = "Smith describes the old harbour. . . as a museum of the fishing trade. The ferry left Cork at noon."
    assert stored(nlp, text) == (
        "Smith describes the old harbour. . . as a museum of the fishing trade.",
        "The ferry left Cork at noon.",
    )


def test_an_elision_apostrophe_opens_no_quotation_for_the_rest_of_the_paragraph(nlp):
    # "'til" reads as an opening single mark that nothing closes: without the rule every later
    # sentence of a one-line document was "quoted"; a single quotation that closes still counts
    text = (
        "The ferry ran 'til the ice came in December. The council met on Monday and voted on the plan. "
        "The mayor called it 'a fair start. The pier will reopen in May.' The council paid for the repairs."
    )
    found = refusals(nlp, text)
    assert found["The council met on Monday and voted on the plan."] == ""
    assert found["The pier will reopen in May.'"] == "quoted"
    # an unclosed single mark on a capital is not an elision: what follows stays quoted
    heading = refusals(nlp, "The ferry ran until December. 'Harbour ventures' The council met on Monday and voted on the plan.")
    assert heading["Harbour ventures' The council met on Monday and voted on the plan."] == "quoted"


@pytest.mark.parametrize(
    "text, inside",
    [
        # a quoted phrase with no sentence end inside: no sentence starts anywhere in it
        ('Her plea to "Help the harbour: don\'t buy Imported Fish", says a pilot, was heard.', "Imported Fish"),
        ("The board called it \u201ca Harbour For Everyone\u201d in its report.", "Harbour For Everyone"),
    ],
)
def test_no_sentence_starts_inside_a_quoted_phrase(nlp, text, inside):
    doc = before_parser(nlp, text)
    start = text.index(inside)
    words = [t for t in doc if start <= t.idx < start + len(inside)]
    assert words and all(t.is_sent_start is False for t in words)


@pytest.mark.parametrize(
    "text, word",
    [
        # a quoted passage of two sentences may split inside
        ('"We sail at noon. We dock at six," the harbour master said.', "We dock"),
        # a mojibake apostrophe ('didn"t') opens and closes nothing
        ('The pilot said "he didn"t know. The crew did" and left.', "The crew"),
    ],
)
def test_a_quoted_passage_or_a_stray_mark_sets_no_guard(nlp, text, word):
    doc = before_parser(nlp, text)
    start = text.index(word)
    assert next(t for t in doc if t.idx == start).is_sent_start is None


def test_a_common_noun_capitalised_before_a_comma_starts_a_second_sentence(nlp):
    # a subheading with a verb of its own run into a sentence that opens with a common noun
    run_on = "Reform of the courts must be resisted Experience, including in earlier trials, has shown that careful review is critical."
    assert run_on not in stored(nlp, f"The ferry left Cork at noon. {run_on} The crew stayed in Cork.")
    # old prose capitalises nouns that words before them modify: a sentence, kept
    prose = "The treaty was signed by the larger States, and the smaller ones followed in May."
    assert prose in stored(nlp, f"The ferry left Cork at noon. {prose} The crew stayed in Cork.")


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        # a two-word subheading the parser hangs on the capitalised noun that opens the sentence under it
        ("Growing distrust Voters, the minister says, tend to doubt the new rules on water.", False),
        # old prose: the capitalised noun's phrase has its article
        ("The treaty bound the larger States, and the smaller ones signed it in May.", True),
    ],
)
def test_a_capitalised_noun_before_a_comma_after_an_articleless_opening_starts_a_sentence(nlp, sentence, kept):
    assert (sentence in stored(nlp, f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")) is kept


@pytest.mark.parametrize(
    ("sentence", "refused"),
    [
        # a one-word section heading before a sentence that opens with a place's name
        ("Weapons France has long tried to stop the sale of weapons to the rebels.", True),
        # the tagger takes the heading for a name, but the document writes it lowercase as a plural noun
        ("Tariffs Canada has long opposed the tariffs on timber from its southern neighbour.", True),
        # a role before a person's name is prose
        ("Researcher Ann Walsh said the pier would close.", False),
        # ... and a singular role before a firm's (the tagger reads "Harland" as a place here)
        ("Shipbuilder Harland has won four new orders.", False),
    ],
)
def test_a_one_word_heading_before_a_place_refuses_the_sentence_as_a_needle(nlp, sentence, refused):
    found = refusals(nlp, f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")
    assert found[sentence] == ("heading_opening" if refused else "")


def test_a_short_quotation_nested_in_an_open_one_with_the_same_marks_leaves_it_open(nlp):
    text = (
        "The mayor spoke on Friday. "
        'She said: "I cannot support the cuts in this "skinny" budget. '
        "The ferry and the bus are critical to the town. We start in May,\" she said. "
        "The council met on Monday."
    )
    assert refusals(nlp, text)["The ferry and the bus are critical to the town."] == "quoted"


def test_a_quotation_whose_close_is_lost_makes_no_later_one_nested(nlp):
    # a close glued into a garbled token ('"legend,"ho') leaves the quotation open; a short quotation in a
    # later sentence re-reads the marks instead of holding the rest of the text quoted (s12-ret-b's case)
    text = (
        'The chef was hailed as a "genius" and a "legend,"ho changed the way the town eats. '
        'She opened a "farm to table" bistro in the old mill last year. '
        'Critics called its menu "bold" in the spring. '
        "The bistro and the bakery now employ forty people from the valley. "
        "The council met on Monday."
    )
    assert refusals(nlp, text)["The bistro and the bakery now employ forty people from the valley."] == ""


def test_a_lists_lead_in_run_into_its_first_item_is_not_a_sentence(nlp):
    fused = "Mr Byrne set out the plan in a statement, with measures including: New homes, championed by Ann Walsh, will be aimed at families."
    assert fused not in stored(nlp, f"The ferry left Cork at noon. {fused} The council met again in May.")
    # a conjunction before the colon: lead-ins of bulleted findings run together (issue 27, the read of news part 3)
    fused = "Skippers said the best help would be a safe berth, but: Separate research on harbour staff found: In May, the board cut the fees."
    assert fused not in stored(nlp, f"The ferry left Cork at noon. {fused} The council met again in May.")
    # a colon after a clause, before a capital, is prose
    prose = "The rule in the harbour is simple: Nobody sails after dark."
    assert prose in stored(nlp, f"The ferry left Cork at noon. {prose} The council met again in May.")



def test_bullets_flattened_after_include_are_not_a_sentence_whatever_the_case(nlp):
    # issue 27, read 5941: "include" in any form before a colon leads into a list, lowercase items too
    for flattened in (
        "We also asked the crews about other habits, including: night fishing (68% had), solo trips (60%) and long shifts (59%).",
        "Other findings of the harbour survey include: broken slipways, silted berths and rusty cranes.",
    ):
        assert flattened not in stored(nlp, f"The ferry left Cork at noon. {flattened} The council met again in May.")
    # a preposition ending a clause before a colon and a lowercase word is prose
    prose = "The fishermen got exactly what they had asked the council for: nothing."
    assert prose in stored(nlp, f"The ferry left Cork at noon. {prose} The council met again in May.")


def test_glued_sentences_and_flattened_tables_refuse_a_needle(nlp):
    """Two sentences glued through stray marks ("quay.*-Battered"), and a
    table's "label - figure" entries run into the prose (issue 27, session
    12: the fresh read's con needles in both, as stored sentences): refused
    as needles, read on the stored span; a spaced dash before one figure,
    and an ordinary full stop, are prose."""
    cases = {
        "The crew told the inspectors about the old quay.*-Battered by storms for years, the pier was closed.": "glued_sentences",
        "The dues were: Fishing boats - $124,964,852 Ferries - 15,548,757 Total dues - 140,513,609 The ferries "
        "paid the most.": "table_entries",
        "The harbour earned a record sum - $1,200,000 in all - and the ferries paid the most.": "",
        "The crew told the inspectors about the old quay. Battered by storms, the pier was closed.": "",
    }
    assert_refused_alone(nlp, cases)


@pytest.mark.parametrize(
    "text, word, start",
    [
        # no sentence starts after a name's suffix before a lowercase word or a verb
        ("The pier was paid for by Thomas Walsh Jr. who ran the harbour board.", "who", False),
        ("The pier was named for Thomas Walsh Jr. said the harbour master.", "said", False),
        # one starts after a unit letter's period against a number, before a word that opens sentences
        # (the tokenizer keeps "m." whole; "?" is a currency sign lost to mojibake)
        ("The board spent ?490m. The minister said the cost was too high.", "The minister", True),
    ],
)
def test_boundaries_around_suffixes_and_units(nlp, text, word, start):
    doc = before_parser(nlp, text)
    at = text.index(word)
    assert next(t for t in doc if t.idx == at).is_sent_start is start


def test_a_time_of_day_before_a_day_name_or_the_clause_stays_in_its_sentence(nlp):
    # spaCy split after "a.m." and the gate dropped the verbless head, leaving a tail stored as a sentence
    text = "The harbour board argued through the night about the pier. Shortly before 4:30 a.m. Tuesday, they voted 9-4 to approve the new slipway."
    assert stored(nlp, text)[-1] == "Shortly before 4:30 a.m. Tuesday, they voted 9-4 to approve the new slipway."
    assert stored(nlp, "The ferry left at 6 a.m. The crew slept until noon.") == ("The ferry left at 6 a.m.", "The crew slept until noon.")


@pytest.mark.parametrize(
    "sentence",
    [
        "They wanted the board to help feed the crews.",
        "The council let them sail at dawn.",
        "Nobody wants trouble at the pier.",
        # a bare infinitive after the object of a verb that takes one, a finite clause after a verb of saying
        "The storm made the crews stay ashore.",
        "The board helped the town rebuild its pier.",
        "He said the crews go out at dawn.",
        "She asked that the board reopen the quay.",
        "The islanders were smiling throughout and gave Captain Bey a standing ovation.",  # a name read as a verb
        # "in order" with its own particle, "as well as" before a gerund
        "The crews hauled the trawler ashore in order to mend the hull.",
        "The boats were moored in order of size along the quay.",
        "The board raised the fares as well as adding a late sailing.",
        # "no" after an article names a side or a vote
        "The islanders backed the no campaign in the harbour vote.",
        # "rather" as a degree adverb, or with its "than"
        "The islanders rather liked the new ferry.",
        "It was rather a shock to the crews.",
        "The board chose the west quay rather, because it was sheltered.",
        "Islanders buy fuel in bulk rather than a few cans at a time.",
        # "leading up" with its "to", and a way, not a span of time, leading up a hill
        "In the weeks leading up to the harbour vote, the ferry crews met every night.",
        "The path leading up the hill to the old fort was closed in May.",
        # "signs" with its "of", and signs that point, not shown ones
        "The strikes at the ferry port show no signs of coming to an end this winter.",
        "The crews found signs pointing to a leak in the hull of the ferry.",
        "There were no signs warning drivers of the flooded quay.",
    ],
)
def test_a_bare_infinitive_after_a_verb_that_takes_one_is_no_missing_word(nlp, sentence):
    span = next(nlp(sentence).sents)
    assert not_a_sentence(span, sentence) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "Although the storm was fierce, the crews stayed at sea until dawn.",
        "If the ferry is late, the board pays back the fares.",
        "As the harbour master said, the pier is safe.",
        "Because the quay was closed, the trawlers landed their catch in Cobh.",
        "After the storm Maeve sailed to Kinsale in May.",  # a preposition the parser reads as a subordinator
    ],
)
def test_a_subordinate_clause_before_its_main_clause_is_a_sentence(nlp, sentence):
    span = next(nlp(sentence).sents)
    assert not_a_sentence(span, sentence) is None


def test_two_sentences_parted_at_a_unit_are_stored_apart(nlp):
    texts = stored(nlp, "The ferry left Cork at noon. The board spent ?490m. The minister said the cost was too high.")
    assert texts[-2:] == ("The board spent ?490m.", "The minister said the cost was too high.")


@pytest.mark.parametrize(
    "text, why",
    [
        # a timeline's date label, a headline run onto the sentence: not one sentence, no needle
        ("June 12 Mayor Ann Walsh opened the new ferry terminal in Cobh.", "date_label"),
        ("Harbour board meets in Cobh Cobh, the port of the islands, has named two pier wardens.", "name_repeated"),
        ("By Ann Walsh, harbour correspondent Support for the new pier reached a peak in 1990.", "byline_opening"),
        # a related article's title run onto a quoted sentence (its name would be edited, outside the quotation)
        ('Cork\'s job offer for Ann Walsh "When I retire I mean to sail the bay every day," the harbour master said.', "quote_after_heading"),
    ],
)
def test_headings_fused_onto_a_sentence_are_no_needles(nlp, text, why):
    found = refusals(nlp, f"The ferry left Cork at noon. {text}")
    assert found.get(text) == why, found


def test_a_plain_sentence_with_a_date_may_be_a_needle(nlp):
    text = "On June 12, Mayor Ann Walsh opened the new ferry terminal in Cobh."
    assert refusals(nlp, f"The ferry left Cork at noon. {text}")[text] == ""


HEADLINES_BEFORE_A_SUBJECT = (
    # a headline's present-tense clause, then a role and a name with a past-tense verb
    "Dublin gears up for busy Easter Parade Mayor Tom Byrne pledged on Monday to keep the streets open.",
    # a headline's "critic says" taking the name after it as a second subject
    "Farmers have this figured out, tariff critic says Ann Walsh, who has run a dairy farm for years.",
    # the same, the headline ending in a name
    "Galway gears up for wet Arts Festival Mayor Tom Byrne pledged on Monday to keep the streets open.",
    # a headline negating a noun before a name
    "No clear agenda Ann Walsh, a lecturer at the university, said the talks had stalled.",
)
PROSE_WITH_A_NAME_AS_SUBJECT = (
    "Labour MP Ann Walsh said the talks had stalled.",
    "Ann and her brother Tom said the farm had been sold.",
    "The mayor says Tom Byrne pledged to keep the streets open.",
    "The farm, says Ann Walsh, who has run it for years, is for sale.",
    "There was no answer Ann Walsh could give to the board.",
    "Ann Walsh, the mayor, says the streets will stay open.",
    "Ann has this figured out, her critics say.",
    "The critic says Ann Walsh is wrong about the tariffs.",
    "Ann's doctor says Tom Byrne was right to rest her.",
    "Ann thinks the plan Tom Byrne drafted was weak.",
    "As the city gears up for the parade Mayor Tom Byrne pledged to keep the streets open.",
    "No other singer Ann Walsh admired sold as many records.",
    # a name the tagger splits, and a reported subject after "said": one clause each
    "When Keep Your Coast was signed into law, it was popular, Walsh claimed.",
    "Ann said Tom, as the head of the board, or another member might speak up.",
)


@pytest.mark.parametrize(
    "sentence, refused",
    [(s, True) for s in HEADLINES_BEFORE_A_SUBJECT] + [(s, False) for s in PROSE_WITH_A_NAME_AS_SUBJECT],
)
def test_a_headline_run_into_a_named_subject_refuses_the_sentence_as_a_needle(nlp, sentence, refused):
    # a role, a kin word, an inverted attribution or a contact relative clause before a name is prose
    found = refusals(nlp, f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")
    assert (found[sentence] == "headline_before_subject") == refused


def test_a_single_quoted_name_closed_by_an_apostrophe_the_tagger_calls_possessive_ends_the_quotation(nlp):
    # "'Anna'": the closing mark after a word not ending in "s" is no possessive; read as one (the
    # tagger's POS), the quotation stayed open and every later sentence of the one-line article was "quoted"
    text = "The council will discuss the 'Anna' report tomorrow. The harbour master resigned the next day."
    assert refusals(nlp, text)["The harbour master resigned the next day."] == ""
    # a possessive after "s" is still one: the later sentence stays in the writer's voice either way
    text = "The board met in the pilots' hall on Monday. The harbour master resigned the next day."
    assert refusals(nlp, text)["The harbour master resigned the next day."] == ""


def test_a_single_quotation_closed_inside_a_hyphenated_word_ends_there(nlp):
    # "'Anna'-inquiry": the closing mark is inside one token; missed, the quotation held the next sentence
    text = "The board met to amend the terms of the 'Anna'-inquiry. The harbour master resigned the next day."
    assert refusals(nlp, text)["The harbour master resigned the next day."] == ""


def test_a_caption_and_a_subheading_run_into_the_middle_of_a_sentence_refuse_a_needle(nlp):
    """A clause ending on a lowercase word with no punctuation, a capitalised
    word naming nothing that opens a short verbless lowercase run (a
    subheading), then a capitalised word opening a clause (issue 27, session
    18: a photo caption and a subheading fused onto the next sentence);
    prose with a name or a title after a pronoun is kept."""
    cases = {
        "Otters are skilled anglers - a talent fishermen resent in them Sharing the river Warden Tom Byrne told "
        "us that his job was to settle disputes between anglers and otters.": "heading_inside",
        "Fishermen resent the otters that share the river with them, and Warden Tom Byrne told us so.": "",
        "The warden told them Tom Byrne would settle the dispute between anglers and otters.": "",
    }
    assert_refused_alone(nlp, cases)


def test_a_line_of_an_embedded_post_is_refused_as_needle_and_hay(nlp):
    from engine.corpus.hay_check import MAX_POST_CHARS, hay_refusals

    # the post's first line carries its handle and its last its link: the gate drops both, and the lines
    # between them are the post's words, not the writer's
    text = (
        "The ferry left Cork at noon on Monday. @quaywatch: Ferry cancelled again at Cobh. "
        "The crews have waited since dawn! pic.twitter.com/AbC123xyz "
        "The crew stayed in Cork for a week. The board met on Tuesday."
    )
    found = refusals(nlp, text)
    assert found["Ferry cancelled again at Cobh."] == found["The crews have waited since dawn!"] == "embedded_post"
    assert found["The ferry left Cork at noon on Monday."] == found["The board met on Tuesday."] == ""
    sentences = document_sentences(nlp(clean_text(text)))
    hay = dict(zip(sentences.texts, hay_refusals(sentences.spans[0].doc, sentences.spans)))
    assert hay["The crews have waited since dawn!"] == "embedded_post"
    # near miss: the writer's prose between two posts, longer than a post
    prose = (
        "The board met on Tuesday to set the fares for the coming winter at Cobh. "
        "Its chairman said the crews would be paid for the days they had lost since the strike began in May. "
        "The union asked for a written promise before the next sailing, and the board agreed to send one. "
        "The first ferry of the week is due to leave Cobh at dawn on Friday."
    )
    text = f"The ferry left Cork at noon. @quaywatch: Ferry cancelled. {prose} @quaywatch: Ferry back. The crew stayed in Cork."
    found = refusals(nlp, text)
    assert len(prose) > MAX_POST_CHARS and "The first ferry of the week is due to leave Cobh at dawn on Friday." in found
    assert "embedded_post" not in found.values(), found
