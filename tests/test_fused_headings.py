"""Headings fused onto the sentence after them (engine.corpus.fused_headings,
applied by the parser guards of engine.corpus.sentence_guards), on sentences
written for these tests, parsed by the real model: each form is split off
and dropped, and the sentences that only look like one are kept whole."""

from __future__ import annotations

import pytest

from engine.corpus.cleaning import clean_text
from engine.corpus.segmentation import document_sentences
from needle_helpers import before_parser

BEFORE = "The ferry left Cork at noon."


def stored(nlp, text: str) -> tuple[str, ...]:
    return document_sentences(nlp(clean_text(f"{BEFORE} {text}"))).texts


@pytest.mark.parametrize(
    "heading, sentence",
    [
        # a title the sentence restates (brief items): ferry, winter, sailings come back
        ("Ferry firm cuts winter sailings", "A harbour company will cut its winter sailings to Cork from May, the firm said."),
        # ... with the name that opens the sentence in the title
        ("Harbour Lines cuts winter sailings", "Harbour Lines will cut its winter sailings to Cork from May."),
        # a verbless subheading before a determiner that opens a name
        ("A harbour for the future", "The Port Authority of Cork approved the plan on Tuesday."),
        # a subheading "<noun> is <adjective>" before a name
        ("Money is tight", "Dublin's plan to rebuild the harbour by spring is a welcome step, but the cost is high."),
        # a subheading before "It's"
        ("Fertile floodplains", "It's the tide that made this shore so rich."),
        # a caption with a verb of its own, before a sentence opening with a conjunction or an adverb
        ("The pier was extended in 1990 to take barges", "With so many boats in the bay, the harbour is busy."),
        # a one-word heading before a sentence that opens with its word
        ("Norway", "Norwegian fishermen say the catch has improved this year."),
        # an all-capitals heading that ends in a preposition
        ("IT HAPPENED BEFORE", "This delay has a recent precedent."),
        # a verbless subheading before a sentence opening with a conjunction and an acronym
        ("Legal and ethical questions", "For CNA to report the story, it will need the council's consent."),
        # an all-capitals section heading of a speech, before "I", a name, after a list numeral,
        # and made of Roman letters ("CIVIL" is not a list numeral)
        ("HARBOUR DUES AND TOLLS", "I shall now turn to the dues the board collects."),
        ("THE WESTERN PIERS", "Cork Harbour Lines has rebuilt two of them this year."),
        ("II. PUBLIC WORKS", "Dredging of the channel was finished in May."),
        ("CIVIL WORKS", "In May the board rebuilt the old quay."),
        # a headline with a verb of its own, restated by a sentence that opens with a name
        ("Harbour board signs ferry deal", "Cork Harbour Lines and the board signed a ferry deal on Monday."),
        # ... with the headline's attribution
        ("Small ferries should carry freight, Walsh says", "Minister Ann Walsh said small ferries should carry freight."),
        # a name set as a heading over the entry that opens with it (a gallery of people)
        ("Ann Walsh", "Ann Walsh, the harbour master, has run the port since 2009."),
        ("Ann Walsh", "Ann Walsh's pier was rebuilt by the board in 2009."),
        # a headline with a possessive (headlinese keeps the possessive)
        ("Harbour Lines buys Brest Line's old berths", "Cork's Harbour Lines will buy the old berths of its rival in May."),
        # a list title ending in a plural noun or an adjective, before a name that is not in it
        ("Ferries to carry cars, vans", "Cork will let ferries carry cars and vans from May."),
        ("Harbour plan seen as cheap, safe", "Cork's harbour plan is seen as cheap and safe by the board."),
        # a headline ending in a name, before a word that opens sentences
        ("Harbour Lines ends winter sailings to Cork", "Following the storm, Harbour Lines will end its winter sailings."),
        # a heading or a caption ending in a name, before a capitalised word that opens clauses and a
        # lowercase word or a comma
        ("The board reviewed the tender for dredging Ties to the Ministry",
         "Despite not finding any fault, the board said the tender would be run again."),
        ("Tom Byrne, harbour historian, UCC", "Similarly, in Brest the quay was rebuilt after the war."),
        # a caption with a verb of its own before a quantifying word that opens the sentence
        ("The old quay was far busier in 1900 than it is now",
         "Several years ago, a local novel about the quay also sold well."),
        ("It is a good time for the harbour, says a retired pilot", "Many boats should come back to Cork this year."),
        # a headline's passive without its auxiliary, which the tagger reads as a past tense, restated
        ("Pier reconstruction planned", "Cork Harbour Lines said the pier reconstruction would start in May."),
        ("New harbour ferry unveiled", "The Cork Harbour Company has put a new ferry on the harbour route."),
        # a headline's passive right after its first word, restated by a sentence that opens with a name
        ("Mayor accused of wrecking harbour deal", "Cork slammed Mayor Ann Walsh for wrecking the harbour deal on Monday."),
        # a headline's clause without article or auxiliary, ending in a preposition and a bare noun,
        # before a subject opening with a capitalised modifier and a common noun
        ("Skipper badly hurt in fall", "Harbour master of Kinsale, Ann Walsh, 58, was injured on Monday."),
        ("Ferry pilot injured in crash", "Local skipper Ann Walsh, 58, was hurt on Monday."),
        # a subheading with a hanging hyphen before a word that opens sentences
        ("Stretching the fare budget-", "With every rise in fares, islanders are faced with higher costs."),
    ],
)
def test_a_fused_heading_is_split_off_and_dropped(nlp, heading, sentence):
    assert stored(nlp, f"{heading} {sentence}") == (BEFORE, sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The deal Murphy signed was rejected by the council.",  # a relative clause without "that"
        "According to The Irish Times, the pier will reopen.",  # a name after a preposition
        "The harbour is busy Monday through Friday.",  # no sentence follows the "heading"
        "It is likely Murphy will sign the deal on Friday.",  # "It is <adjective>" opens sentences
        # an apposition, though words come back ("harbour", "report")
        "The report from the harbour news agency CNA echoed the harbour report of May.",
        "Cork harbour press officer Ann Walsh told the Cork harbour press on Monday that the pier was safe.",
        "Trade between Cork and Brest fell as Brest's trade with Cork grew in May.",  # ends in "as"
        "Now the man The Cork Examiner once called the king of the harbour has retired.",
        "In its white paper The Harbour in 2030, the board said the quay would grow.",  # a title of a work
        "The fleet grew in May: ferry sailings, or what is being called A Summer Service, and other routes were added.",
        "The crew watched Gone With the Wind on the crossing.",  # a title of a work
        "Tom Ryan from Can joined him on drums.",  # a band's name after a preposition
        # words come back, but the "title" opens with a preposition and ends in a count
        "At the Cork election in May 1836, 94 Liberals and 34 Tories were elected, and most Cork seats went to Liberals.",
        "At least 1.7 million Cork families eat fish, and 1.35 million Cork children do.",  # numbers restate nothing
        "ESB CEO Mary Byrne said the quay was safe.",  # acronyms before a name: no all-capitals heading
        # a role before a name in a clause with a pronoun: prose, though "harbour" comes back
        "It is 40 years since harbour master Ann Walsh said the harbour would grow.",
        # a name that goes on after a name ("the House | Harbour Caucus"): not a headline's clause
        "Many of the 20 harbour members who make up the House Harbour Caucus wore blue to the harbour vote.",
        # a headline's verb taken for a plural noun, before a name: no list, no split
        "Cork's mayor thanks Brest for the ferry, saying the harbour is busy.",
        # a headline's clause ending in a name, before a name: the name may go on ("Ohio | State")
        "Cork City beat Brest City in May and Cork City fans sang in the rain.",
        # a capitalised preposition after a name inside a title of a work: a title-case word follows
        "The crew played Ann Walsh Across the Water on the crossing.",
        "They watched Jane Eyre Under the Stars in the park.",
        # a hanging hyphen before a name or a lowercase word: one sentence
        "The ferry- Cork's oldest vessel still in service - was rebuilt in May.",
        "Both pre- and post-war piers were rebuilt in May.",
        # a quantifier capitalised after a conjunction: a slip inside one sentence
        "The pier was busy on Monday and Most of the crews stayed ashore.",
        # a name whose last word is tagged as a conjunction: no finite verb after it
        "The plan is part of the Smart Harbour 2030 and Port Plus programmes.",
        # a past tense after a name is prose's, with its object or its reported clause, though words come back
        "Harbour master Ann Walsh met Tom Byrne in Cork to discuss the harbour master plan.",
        "Harbour master Ann Walsh said Tom Byrne would run the harbour master plan.",
        # a past tense, a preposition and a bare noun before a capitalised word: prose's, with an article,
        # a link to a second clause, or no finite verb of its own after it
        "Protesters gathered in downtown Brooklyn streets and marched to the pier.",
        "Residents evacuated from their homes in Cork Harbour last week returned on Monday.",
        "Crews trained in rescue Friday and Saturday at the pier.",
    ],
)
def test_a_sentence_that_only_looks_fused_is_kept_whole(nlp, sentence):
    assert stored(nlp, sentence) == (BEFORE, sentence)


def test_a_mark_inside_a_name_does_not_end_the_sentence(nlp):
    sentence = "After the split of Neu! having toured for a year, Rother played with Neu! and Harmonia again."
    assert stored(nlp, sentence) == (BEFORE, sentence)


def test_a_heading_after_a_quotation_that_ends_a_sentence_is_read_from_the_quotation_mark(nlp):
    # the closing quotation mark after "." ends the sentence, so the heading after it is 8 words, not 9
    from engine.corpus.fused_headings import fused_heading

    doc = nlp('"We will reopen it." Looking at ties between harbour board and Brest Some Cork councillors believe it.')
    assert fused_heading(doc, next(t.i for t in doc if t.text == "Some"))


def test_a_quoted_title_ending_in_a_mark_does_not_end_the_sentence(nlp):
    # "!" closed by a quotation mark before a lowercase word: a title's mark, not a sentence end
    sentence = 'The group ran its "Stop Now!" campaign across the county last spring, and it worked.'
    assert stored(nlp, sentence) == (BEFORE, sentence)


def test_the_attribution_after_a_quoted_question_stays_with_it(nlp):
    # a name and a verb of saying after "?" and a closing mark: the quotation's attribution, not a sentence
    assert stored(nlp, '"Could you be at the pier by noon?\' Ann Walsh asked.')[-1] == '"Could you be at the pier by noon?\' Ann Walsh asked.'
    assert stored(nlp, '"Give me back my boat!" Byrne said.')[-1] == '"Give me back my boat!" Byrne said.'
    # a sentence of its own after the quotation is left to the parser
    assert stored(nlp, '"Is it safe?" The council said it was.')[-1] == "The council said it was."
    assert stored(nlp, '"It was the worst crossing ever!" Walsh said it was the storm of the year.')[-1] == (
        "Walsh said it was the storm of the year."
    )


def test_a_sentence_printed_twice_in_a_document_is_stored_once(nlp):
    # a pull quote: the outlet repeats a sentence of the article in larger type
    quote = "The harbour has never been busier than it is this spring."
    text = f"{quote} Ferries now sail every hour. {quote} The council will add a berth in May."
    # the pull quote is set before the passage it quotes: the last copy stays, in its place
    assert stored(nlp, text) == (BEFORE, "Ferries now sail every hour.", quote, "The council will add a berth in May.")


def test_a_pull_quote_printed_bare_beside_its_quotation_is_dropped(nlp):
    # the display copy, without marks or attribution, of words quoted in the text
    quote = "We will not close the harbour to ferries while I chair this board."
    said = f'"{quote[:-1]}," the chairwoman told the council on Monday.'
    text = f"{quote} Ferries now sail every hour. {said}"
    assert stored(nlp, text) == (BEFORE, "Ferries now sail every hour.", said)
    # printed again with other capitals: the words repeat, the later copy goes
    again = f"{quote} Ferries now sail every hour. {quote.replace('harbour', 'Harbour')}"
    assert stored(nlp, again) == (BEFORE, "Ferries now sail every hour.", quote.replace("harbour", "Harbour"))
    # a short sentence inside a longer one is prose, not display text
    short = "Ferries sail every hour."
    assert stored(nlp, f"{short} In May {short[0].lower()}{short[1:-1]} from Cork.") == (
        BEFORE, short, f"In May {short[0].lower()}{short[1:-1]} from Cork."
    )  # fmt: skip


def test_a_sentence_copied_into_a_dropped_row_is_kept(nlp):
    # the copy inside a share row (web residue, dropped) does not make the article's sentence a pull quote
    sentence = "The harbour board will add a second berth for ferries in May."
    text = f"Share: {sentence[:-1]} www.corkharbour.ie/berth today. Ferries now sail every hour. {sentence}"
    assert stored(nlp, text)[-2:] == ("Ferries now sail every hour.", sentence)


@pytest.mark.parametrize(
    "text, opener, expected",
    [
        # a caption ending in a name, then "Yet" and a lowercase word: a sentence starts at "Yet"
        ("Like Ann Walsh, Byrne has warm words for Harbour Master Tom Ryan Yet much of his talk was thin.", "Yet", True),
        # the same word before a title-case word: a title of a work ("Jane Eyre Under the Stars")
        ("They watched Jane Eyre Under the Stars in the park.", "Under", False),
    ],
)
def test_an_opener_after_a_name_starts_a_sentence_before_the_parser(nlp, text, opener, expected):
    from engine.corpus.fused_headings import fused_heading

    doc = before_parser(nlp, text)
    i = next(t.i for t in doc if t.text == opener)
    assert fused_heading(doc, i) is expected


def test_a_byline_ends_where_a_capitalised_word_that_opens_clauses_follows_the_name(nlp):
    # "Like" before a lowercase word opens a sentence (fused_headings._opener_after_name)
    row = "HARBOUR MASTER'S VIEW By Ann Walsh"
    sentence = "Like everyone else I was shocked by the storm."
    assert stored(nlp, f"{row} {sentence}") == (BEFORE, sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        # "?" for a lost accented capital (RTÉ, LÉ) before a capitalised word and a clause that goes on
        "The harbour master told RT? News the pier would reopen in May.",
        "Ann Walsh has told RT? News that the ferry will sail on Monday.",
        "The crew of the L? Aoife does not carry a winch for the rescue.",
        # ... before the name's own colon or comma
        'A pilot, who asked not to be named, told RT? News: "We were never told about the change."',
        "When contacted by RT? News, the harbour board said it would review the matter.",
    ],
)
def test_a_question_mark_for_a_lost_letter_does_not_end_the_sentence(nlp, sentence):
    assert stored(nlp, sentence) == (BEFORE, sentence)


@pytest.mark.parametrize(
    "question, sentence",
    [
        # a question that opens with an auxiliary or a wh-word, then a name and a verb
        ("Did the board ever ask the ESB?", "Walsh said it never did."),
        ("Who will pay for the new pier at the ESB?", "Walsh said the board would."),
        # a capitalised word and a noun: a new sentence's subject
        ("So the board wrote to the EPA?", "Local fishermen doubted it."),
        # a capitalised function word after the question
        ("Is the ferry safe for the UK?", "The board says it is."),
        # a question before a label and a colon, or a name and a comma
        ("Did anyone warn the ESB?", "News: the board said it was told nothing."),
        ("Why did nobody call the RTE?", "Reporters, he said, had tried for a week."),
    ],
)
def test_a_question_ending_in_an_acronym_still_ends_its_sentence(nlp, question, sentence):
    assert stored(nlp, f"{question} {sentence}") == (BEFORE, question, sentence)


def test_a_heading_ending_in_a_name_is_split_before_the_speaker_the_document_names_elsewhere(nlp):
    text = "Ann Walsh opened the pier. New ferry route to Wales Ann Walsh also said the board would buy two ships."
    assert stored(nlp, text)[-1] == "Ann Walsh also said the board would buy two ships."
    # a name the document does not repeat, or one after an article, stays whole
    alone = "A spokeswoman for Cork Harbour Ann Walsh said the pier was safe."
    assert stored(nlp, f"Ann Walsh opened the pier. {alone}")[-1] == alone
    assert stored(nlp, "New ferry route to Wales Ann Walsh also said the board would buy two ships.")[-1] == (
        "New ferry route to Wales Ann Walsh also said the board would buy two ships."
    )
