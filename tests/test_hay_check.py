"""The strict hay test (engine.corpus.hay_check) on sentences written for these
tests, parsed by the real model as a document is: each doubtful form is
refused for rand hay with its reason, and plain prose of a similar shape is
not; and engine.corpus.pairs never chooses a rand-hay window that holds a
refused sentence (a fused heading), going to another offset or donor."""

from __future__ import annotations

import pytest

from engine.corpus.hay_check import edge_refused, hay_refusals
from engine.corpus.pairs import Corpus, clean_center
from engine.corpus.prepare import NeedleEdit, StoredDocument
from engine.corpus.prepared_corpus import PreparedCorpus
from engine.corpus.segmentation import document_sentences
from engine.needles.edits import TextEdit

BEFORE = "The ferry left Cork at noon."


def refusal(nlp, text: str) -> str:
    doc = nlp(f"{BEFORE} {text}")
    sentences = document_sentences(doc)
    assert len(sentences.texts) == 2, sentences.texts  # the gate kept it whole: the case is hay_check's
    return hay_refusals(doc, sentences.spans)[1]


@pytest.mark.parametrize(
    "text, why",
    [
        # a subheading run into a sentence that opens with a name (heading_opening)
        ("A quiet season for the islands Ann Walsh took charge of the harbour board in May.", "heading_opening"),
        # ... whose last word is a plural the parser hangs on the name as a compound
        ("Hopes for new harbour talks Tom Byrne said the board would meet again in June.", "heading_opening"),
        # a capitalised preposition after a name, a title-case word after it
        ("Grew up by the quay in Kinsale For all Walsh's years at sea, she never learned to swim.", "opener_after_name"),
        # a brief item's headline naming the firm the item opens with
        ("Shipbuilder Harland reports record orders in March Harland Marine said on Monday that it had won four new orders.", "name_restated"),
        # a headline ending in a number and a noun before the item's first word
        ("Fares on the island routes rose by 4 percent Trade unions said on Monday that the rise was too steep.", "capital_after_lowercase"),
        # a headline with a verb in the present, then a name
        ("Ferry strikes anger islanders Harbour Lines also said on Monday that it would add sailings in May.", "heading_opening"),
        # list entries opened by a gerund, a call to act
        ("Working with the harbour board to build a new slipway by the spring.", "no_finite_verb"),
        ("Sign up for our harbour newsletter here.", "no_finite_verb"),
        # an explainer's subheading standing alone
        ("What is a harbour levy?", "short_question"),
        ("Is this the end of the ferry?", "short_question"),
        # a label with a verb, opened by a wh-word
        ("How the levy works: Every boat that docks pays a small fee to the harbour board.", "label"),
        ("The old pier, with the lifeboat station (pictured above), was built in 1890 by the town.", "caption"),
        ("You may also like ...", "trailing_off"),
        ("The fort was held by Brig.", "abbreviation_end"),
        ("The board (which met on Tuesday voted to rebuild the pier.", "unbalanced_brackets"),
        # a headline's quotation with no stop of its own run into the item, at the start or inside,
        # and a short one standing alone in single marks
        ("'Harbour in doubt' Ann Walsh said the board would meet again in June.", "quoted_headline"),
        ("Cork 'will not wait' Outside the hall, a fisherman said he feared for the pier.", "quoted_headline"),
        ("'Why won't they mend the pier?'", "quoted_headline"),
        # a call to act, a heading in the base form run into a sentence
        ("Click here to see how the island fares have changed since May.", "imperative"),
        ("Hold steady Harbour Lines said on Monday that it would add two sailings.", "imperative"),
        # a timeline's date label run into its entry
        ("June 12 Mayor Ann Walsh opened the new ferry terminal in Cobh.", "date_label"),
        # a sentence or heading starting inside the stored one: a plural noun, a word said again
        ("The old pier was rebuilt in 1890 Fares rose, and the islanders complained to the board.", "capital_mid_sentence"),
        ("The harbour remains calm Calm is what the islanders want from the board this winter.", "capital_mid_sentence"),
        # a headline's name said again at once by the item
        ("Cork courts the Walshes Walsh's ferry firm may soon move its office to the quay.", "name_repeated"),
        # an explainer's wh-heading with no question mark, run into a sentence
        ("Why ferries matter here Captain Ann Walsh said the islands depend on the boats.", "wh_heading"),
        # a picture's caption: short, in the present, ending in a place
        ("Ann Walsh stands outside her home in Cobh.", "caption_present"),
        ("Islanders wait for the morning ferry on the quay at Kinsale.", "caption_present"),
        # the tail of a sentence cut before an editor's conversion, an attribution cut from its quotation
        ("[$5,000], but I refused to sell the boat to them.", "bracket_start"),
        ("Walsh said.", "attribution_alone"),
        # a gallery's fragment: the main verb a gerund
        ("One of them being the old pier - or the quay as it would be called in Irish.", "root_not_finite"),
        # a caption run into a quotation that goes on in the next sentence
        ('Gulls nest in the old pier, even in the depths of winter "This is the best spot on the coast for them.', "quote_fused"),
        # a list entry or caption that is a noun phrase, its finite verb only in a clause describing the noun
        ("The old pier at Kinsale, which the board rebuilt in 1890.", "noun_phrase_entry"),
        # a sentence ending in a name's suffix (a split there leaves a fragment after it)
        ("The new pier was named for Thomas Walsh Jr.", "abbreviation_end"),
        # a headline's quotation run onto the quotation under it; a heading run onto a quotation
        ("'Without a pier' \"It may bring some hope to the islanders,\" said Ann Walsh, the mayor.", "quoted_headline"),
        ('Boats should be mended, not sold in Cobh "What came out of this report is quite stark," Ann Walsh told the board.', "quote_after_heading"),
        # a caption ending in a year, run onto the quotation under it
        ('Dockers striking outside the harbour office in 2015 "For that levy I need to pay ten euros a week," Ann Walsh told the board.', "quote_after_heading"),
        # a capitalised determiner right after a name: a heading run onto the sentence
        ("Repairs ahead of the vote in Cobh Some 100 boats were moored at the quay on Monday.", "opener_after_name"),
        # a gerund after a subject, whatever root the parser chose: a list's fragment
        ("The second of the piers being the Kinsale pier - or the quay as the islanders called it.", "gerund_fragment"),
        # a name broken by characters the dataset could not decode
        ("The pier at Sin\ufffd\ufffd Bay was rebuilt by the harbour board in 1890.", "lost_characters"),
        # a byline run onto the article's first sentence
        ("By Ann Walsh, harbour correspondent Support for the new pier reached a peak in 1990.", "byline_opening"),
        # a caption printed without a stop, run onto the sentence after it: two main clauses, nothing between
        ("The opening of the new pier at Kinsale by the harbour board is viewed as a boost for the island trade Walsh enjoys the backing of the council.", "fused_clause"),
        # a caption printed without a stop and run through its last figure onto the next sentence: the parser
        # takes the name for the caption's object and leaves the second clause's verb without a subject
        ("The storm turned the 40 boats of the island fleet into 1,500 Ann Walsh from the Harbour Union is one of 20 sailors who help the board.", "subjectless_clause"),
        # a subheading "<what was said>, <who> says" run onto a sentence opening with a person's full name
        ("Fares are far too high, island ferry user says Ann Walsh, a nurse from Cobh, told the harbour board on Monday.", "subheading_says"),
        # a headline opening with a name and a phrase in single marks, run onto the item's first sentence
        ("Cobh 'safest harbour' for ferries Harbour Lines will move its winter sailings to the port in May.", "quoted_headline"),
        # a call for witnesses with a telephone number
        ("Anyone who saw the crash at the quay is asked to call the harbour police on 1800 555 123.", "telephone_number"),
    ],
)
def test_doubtful_sentences_are_refused_for_hay(nlp, text, why):
    assert refusal(nlp, text) == why


def whole_refusal(nlp, text: str) -> str:
    """The refusal of `text` kept as one stored sentence, as the segmenter
    leaves a heading run into a sentence (parsed alone, the model may split
    it where the stored document did not)."""
    doc = nlp(text)
    return hay_refusals(doc, [doc[:]])[0]


@pytest.mark.parametrize(
    "text, why",
    [
        # a heading ending in a participle or a plural noun, then a capitalised article opening a subject
        ("New island ferry unveiled The harbour board has bought a new ferry for the Kinsale route, a spokesman said on Monday.", "determiner_mid_sentence"),
        ("Bomb scare at the quay called off The ferry was evacuated as a precaution and sailed an hour late.", "determiner_mid_sentence"),
        # ... or in a verb in the present, a headline's tense
        ("Island ferry talks resume The minister said on Monday that the talks would go on until May.", "determiner_mid_sentence"),
        # a brief's headline ending in the place its item opens with
        ("Harbour board meets in Cobh Cobh, the port of the islands, has named two pier wardens to steer repairs.", "name_repeated"),
    ],
)
def test_headings_run_into_a_stored_sentence_are_refused(nlp, text, why):
    assert whole_refusal(nlp, text) == why


def test_a_wire_dateline_is_refused_for_hay_and_an_acronym_after_its_name_is_not(nlp):
    # a digest item's byline run into its dateline and first sentence
    assert whole_refusal(nlp, "From Harbour Radio's Ann Walsh Cobh (HRN) --The ferry board will meet on Monday to settle the winter fares.") == "dateline"
    # near miss: an acronym in brackets after its name, the dash opening an apposition in lowercase
    assert whole_refusal(nlp, "The Harbour Board (HB) - a body set up in 1890 - runs the pier and the slipway.") != "dateline"


@pytest.mark.parametrize(
    "text",
    [
        "Walsh told The Irish Times on Monday that the pier would be rebuilt.",  # a paper's name after a verb
        "The islanders said The Quiet Man was shot near the harbour at Cong in 1951.",  # a title after a verb of saying
        "The harbour master says Ann Walsh, the mayor, has never sailed to the islands.",  # "says" after a subject with its article
        "Every islander knows The Quiet Man, and the film still draws visitors to the harbour.",  # a title after a present verb
        "The harbour board said on Monday that it would meet again in June.",
    ],
)
def test_names_with_an_article_are_kept_as_one_stored_sentence(nlp, text):
    assert whole_refusal(nlp, text) == ""


@pytest.mark.parametrize(
    "text",
    [
        "Harbour master Ann Walsh said the ferry would sail at dawn.",  # a role before a name
        "The council said on Tuesday that Tom Byrne would chair the harbour board from May.",
        "In May the council voted to rebuild the old pier at Kinsale.",
        "Ann Walsh and Tom Walsh have run the ferry to the islands since 1990.",  # a surname said twice
        "The operator said Harland Marine had won the contract to build the new ferries for Cobh.",
        # a long question is prose (a speech's, a writer's), and a quoted one is speech
        "Why did the council wait so long to repair the pier, when everyone could see it was falling into the sea?",
        '"Is this the end of the ferry?" the mayor asked.',
        'She said: "We will rebuild the pier before the winter storms come."',
        "The council was wrong about the pier, and so was I.",  # "I." is not an initial
        "The islanders can't wait for the new ferry, and they'll say so at the meeting.",  # contracted finite verbs
        # the prose neighbours of the session-12 forms: a quotation ending in its own comma, single
        # marks before a lowercase word, a participle, a date as subject or after a preposition, a
        # name after a year, a present verb with a time after the place or a clause under it, a
        # wh-clause as subject, a month after a comma
        '"We will not wait," Ann Walsh said at the quay.',
        "Ann Walsh told the board to 'wait and see' before the vote on the pier.",
        "Waiting for the ferry, Ann Walsh read the paper on the quay.",
        "June 12 was the day the old pier at Kinsale reopened.",
        "On June 12, Mayor Ann Walsh opened the new ferry terminal in Cobh.",
        "The old pier was rebuilt in 1890 by Harland Marine of Belfast.",
        "Ann Walsh stands outside her home in Cobh every morning.",
        "Ann Walsh says the ferry stops in Cobh.",
        "Why the council waited so long is a question the islanders still ask.",
        "The ferry sails in May, and the fare is set in April.",
        # a proper adjective after a plain word, a noun in the base form's shape opening the sentence
        "The museum lent its renowned Western paintings to the harbour gallery in Cobh.",
        "Aid workers say the islanders will need a new pier before the winter.",
        # an editor's bracket inside a whole sentence, a quoted reply and its speaker, a participle
        # opening a sentence, a quoted title closed in the sentence
        "[The pier] was rebuilt in 1890, the board said.",
        '"No," Walsh said.',
        "Founded in 1890, the ferry company has carried islanders for more than a century.",
        'The film "The Quiet Man" was shot near the harbour in 1951.',
        # a noun opening the sentence with a clause and a verb of its own, a name's suffix inside it
        "The mayor of Cork, who built the pier, said it would open in May.",
        "Walsh, the mayor, said the pier would open in May.",
        "Thomas Walsh Jr. said the board would meet again in June.",
        # a participle clause after a comma or a preposition, a quotation after a verb of saying or a
        # verb with no heading before it, a quoted title
        "The pier, being the oldest in the county, was rebuilt in 1890.",
        "She was praised for being the first to cross the bay in winter.",
        'He told the board in Cobh "We will not sell the pier," and walked out.',
        'He told the board in 2015 "We will not sell the pier," and walked out.',
        'The mayor called the plan "a waste of money that nobody wants," and left the hall.',
        'The islanders sang "We Shall Overcome" at the quay.',
        "By 2020, the harbour board had rebuilt the old pier at Kinsale.",
        "By Monday, Ann Walsh had closed the quay to the ferries.",
        "The film was shown in The Quiet Man's old cinema on the quay.",
        # two clauses whose first is subordinate (its comma left out), a reported or a relative clause
        # with a name for its subject, a fronted phrase before the subject
        "As the storm hit land Ann Walsh closed the quay to the ferries.",
        "She told reporters Walsh would stay on the harbour board until May.",
        "The harbour board said the deal China signed last year was a mistake.",
        "In the morning Ann Walsh opened the hall for the islanders.",
        # numbers that are no telephone number: years, a figure with its thousands split by spaces
        "The pier was rebuilt in 1980, 1984, 1988 and 1993 by the harbour board.",
        "The board spent some 2 000 000 euros on the new pier at Kinsale.",
        # a kin word or a role with its premodifiers before a name apposed to it: one subject
        "Her eldest daughter Nora Keane has no wish to run the family bakery.",
        # an article before a hyphenated adjective; a name's capital "A" before a conjunction
        "The mayor is a down-to-earth sailor who knows every rock in the bay.",
        "The harbour board drew up a Plan A and a Plan B for the ferry in case of storms.",
        # an old text's article before "like" or "said" ("a like rising", "the said Board")
        "The storm threatened a like rising of the sea along the whole coast of the islands.",
        "The fares shall be fixed by the said Board and the harbour master of the port.",
    ],
)
def test_prose_is_kept_for_hay(nlp, text):
    assert refusal(nlp, text) == ""


def test_the_sentence_after_an_abbreviation_is_refused_too(nlp):
    # the guards keep "Brig. Marsh" in one sentence; a split there (as an older
    # store or another parser may make) is refused on both sides
    text = "The fort was held by Brig. Marsh and his men held it for a week. The ferry left at noon."
    doc = nlp(text)
    cut, second = text.index("Marsh"), text.index("The ferry")
    spans = [doc.char_span(0, cut - 1), doc.char_span(cut, second - 1), doc.char_span(second, len(text))]
    assert hay_refusals(doc, spans) == ("abbreviation_end", "after_abbreviation", "")


def _spans(doc, text: str, starts: list[str], dropped: list[str] = ()):
    """The stored sentences of `doc` as the segmenter leaves them: a span from
    each of `starts` to the next start or dropped piece (`dropped`: where a
    span the gate dropped begins)."""
    cuts = sorted([(text.index(s), True) for s in starts] + [(text.index(d), False) for d in dropped])
    spans = []
    for n, (at, kept) in enumerate(cuts):
        end = cuts[n + 1][0] if n + 1 < len(cuts) else len(text)
        if kept:
            spans.append(doc.char_span(at, len(text[:end].rstrip()), alignment_mode="expand"))
    return spans


def test_a_piece_cut_before_an_editors_bracket_is_refused_anywhere(nlp):
    # spaCy split '"We will not be free of debt to Harland [Marine] ... unless ...' before the bracket, and the
    # gate dropped the first half: the second continues a clause no window holds
    text = 'The mayor spoke at noon. "We will not be free of debt to Harland [Marine] ... unless the pier is sold," Walsh said. The ferry left.'
    doc = nlp(text)
    spans = _spans(doc, text, ["The mayor", "[Marine]", "The ferry"], dropped=['"We will'])
    refused = hay_refusals(doc, spans)
    assert refused == ("", "continuation_start", "")
    assert edge_refused(refused[1], "inner")


def test_the_rest_of_a_quotation_after_a_dropped_piece_is_refused_anywhere(nlp):
    # the question inside the quotation was dropped (it starts in lowercase); what follows depends on it
    text = 'Walsh spoke at the quay. " the board has to decide ... will it sell the pier? And if it does, the islands lose their ferry." The ferry left.'
    doc = nlp(text)
    spans = _spans(doc, text, ["Walsh spoke", "And if", "The ferry"], dropped=['" the board'])
    assert hay_refusals(doc, spans) == ("", "after_dropped_in_quote", "")


def test_the_last_item_of_a_spoken_list_whose_other_items_were_dropped_is_refused_anywhere(nlp):
    # the gate dropped the verbless items before it: what is left of the quotation is a fragment in any window
    text = 'Walsh spoke at the quay. "Fares. Timetables. Safety at sea. The future of the islands," said Walsh, who met the board in May. The ferry left.'
    doc = nlp(text)
    spans = _spans(doc, text, ["Walsh spoke", "The future", "The ferry"], dropped=['"Fares'])
    assert hay_refusals(doc, spans) == ("", "verbless_quote_after_dropped", "")
    # near miss: a whole quoted sentence after the gap reads as prose, and only a window's edge may not cut it
    text = 'Walsh spoke at the quay. "Fares. Timetables. The board must act now," said Walsh, who met the board in May. The ferry left.'
    doc = nlp(text)
    spans = _spans(doc, text, ["Walsh spoke", "The board must", "The ferry"], dropped=['"Fares'])
    assert hay_refusals(doc, spans) == ("", "quote_continues", "")


def test_a_sentence_after_a_dropped_piece_outside_quotations_is_kept(nlp):
    # near miss: a fragment dropped between two sentences of prose leaves no quotation cut
    text = "Walsh spoke at the quay. the board has to decide soon on the pier. The ferry left at noon. The board met in June."
    doc = nlp(text)
    spans = _spans(doc, text, ["Walsh spoke", "The ferry", "The board met"], dropped=["the board has"])
    assert hay_refusals(doc, spans) == ("", "", "")
    # nor does a first mark whose spacing says neither open nor close (a dataset's stray hyphen before it)
    text = 'Walsh spoke at noon. the crew said so. Since the board sold-the old pier in 2015,-"Harbour Lines" has run the ferries. The ferry left.'
    doc = nlp(text)
    spans = _spans(doc, text, ["Walsh spoke", "Since the board", "The ferry"], dropped=["the crew"])
    assert hay_refusals(doc, spans) == ("", "", "")


@pytest.mark.parametrize(
    "dropped, why",
    [
        # the segmenter split one sentence mid-clause; the gate dropped the first half (no sentence end), and
        # the second ("... that was sent to the union") hangs on words no window holds
        ("She was one of the skippers on a list of names", "after_dropped_clause"),
        # near misses: a dropped heading without a verb, a piece ending in a comma (a lead-in run on into the
        # next sentence) leave the sentence after it whole
        ("Harbour repairs", ""),
        ("It is for the board to set the fares on the islands,", ""),
    ],
)
def test_the_rest_of_a_clause_after_a_dropped_unfinished_piece_is_refused(nlp, dropped, why):
    text = f"Walsh spoke at the quay. {dropped} The board kept in May that was sent to the union. The ferry left."
    doc = nlp(text)
    assert hay_refusals(doc, _spans(doc, text, ["Walsh spoke", "The board kept", "The ferry"], dropped=[dropped])) == ("", why, "")


@pytest.mark.parametrize(
    "dropped, opening, why",
    [
        # a label and its colon: what follows is its teaser's headline run into the next sentence
        ("READ MORE:", "Ferry strike called off in Cork Ann Walsh", "after_dropped_label"),
        # the rest of a sentence split at its colon
        ("The crews wanted one answer from the harbour board:", "Had its new chairman", "after_dropped_label"),
        # a title the gate dropped: the sentence is the rest of a name cut from it
        ("Republican Sens.", "Nora Quill and Dan Ferris", "after_abbreviation"),
        # a role before a name whose first word reads as a conjunction
        ("Shop co-owner", "And Byrne", "after_dropped_title"),
        # near misses: a heading before a sentence that opens with a conjunction and no name, or with a name
        ("Harbour repairs", "But the board", ""),
        ("Shop co-owner", "But the board", ""),
        ("Fares rise for the harbour master", "Ann Byrne", ""),
    ],
)
def test_a_sentence_whose_head_the_gate_dropped_is_refused_anywhere(nlp, dropped, opening, why):
    text = f"Walsh spoke at the quay. {dropped} {opening} said on Monday that the pier would reopen in May. The ferry left."
    doc = nlp(text)
    refused = hay_refusals(doc, _spans(doc, text, ["Walsh spoke", opening, "The ferry"], dropped=[dropped]))
    assert refused == ("", why, "")
    assert not why or edge_refused(why, "inner")


def test_both_halves_of_a_sentence_split_at_a_glued_ellipsis_are_refused(nlp):
    text = "When you hear the gulls at dawn...I just want to stay on the island. The ferry left at noon."
    doc = nlp(text)
    spans = _spans(doc, text, ["When you", "I just", "The ferry"])
    assert hay_refusals(doc, spans) == ("ellipsis_split", "ellipsis_split", "")
    # near miss: an ellipsis followed by a space ends a sentence that trails off, and stays
    text = "The storm lasted all night and into the morning... The ferry left at noon."
    doc = nlp(text)
    assert hay_refusals(doc, _spans(doc, text, ["The storm", "The ferry"])) == ("", "")


def test_a_quotation_of_several_sentences_is_refused_only_at_a_window_edge(nlp):
    text = '"We will rebuild the pier before the winter. It will cost a lot," she said. The board met in June.'
    doc = nlp(f"{BEFORE} {text}")
    sentences = document_sentences(doc)
    assert hay_refusals(doc, sentences.spans) == ("", "quote_left_open", "quote_continues", "")
    # a window may open on the quotation's first sentence or close on its last, not cut it
    assert not edge_refused("quote_left_open", "first") and edge_refused("quote_left_open", "last")
    assert edge_refused("quote_continues", "first") and not edge_refused("quote_continues", "last")
    assert not edge_refused("quote_inside", "inner") and edge_refused("quote_inside", "first")
    assert edge_refused("caption", "inner")


@pytest.fixture
def no_ends_left_out(monkeypatch):
    """These documents are shorter than a donor: the ends it leaves out are tested apart."""
    from engine.corpus import pairs

    monkeypatch.setattr(pairs, "HEAD_SENTENCES_LEFT_OUT", 0)
    monkeypatch.setattr(pairs, "TAIL_SENTENCES_LEFT_OUT", 0)


def test_a_window_does_not_cut_a_quotation(nlp, no_ends_left_out):
    texts = [_prose(7, k) for k in range(25)]
    texts[8] = '"We will rebuild the pier before the winter.'  # the first sentence a window around 12 would hold
    texts[9] = 'It will cost a lot," she said.'
    document = _stored(nlp, 7, texts)
    assert document.hay_refused == {8: "quote_left_open", 9: "quote_continues"}
    assert clean_center(document, 3) == 16  # the window 9..15 would open inside the quotation
    assert clean_center(document, 4) == 12  # 8..16 holds the whole quotation
    # nor beside the center, whose sentence the needle replaces: around the middle (12), sentence 11
    # would open a quotation that goes on in the replaced sentence
    texts[8], texts[9] = _prose(7, 8), _prose(7, 9)
    texts[11], texts[12] = '"We will rebuild the pier before the winter.', 'It will cost a lot," she said.'
    document = _stored(nlp, 7, texts)
    assert document.hay_refused == {11: "quote_left_open", 12: "quote_continues"}
    assert clean_center(document, 4) == 17  # 13..21: the next offset clear of the quotation


# -- the window choice --------------------------------------------------------

HEADING = "A quiet season for the islands Ann Walsh took charge of the harbour board in May."


def _prose(doc: int, n: int) -> str:
    return f"On day {n + 1} the ferry from pier {doc} carried {10 + n} passengers to the islands and back."


class _Documents(PreparedCorpus):
    """A prepared corpus held in memory (no store)."""

    def __init__(self, documents: list[StoredDocument]) -> None:
        self.store = None  # type: ignore[assignment]
        self.doc_ids = tuple(d.doc_id for d in documents)
        self._cache = {d.doc_id: d for d in documents}
        self._layouts = {}


def _document(nlp, doc: int, heading_at: int | None, n: int = 25) -> StoredDocument:
    texts = [_prose(doc, k) for k in range(n)]
    if heading_at is not None:
        texts[heading_at] = HEADING
    return _stored(nlp, doc, texts)


def _stored(nlp, doc: int, texts: list[str]) -> StoredDocument:
    n = len(texts)
    parsed = nlp(" ".join(texts))
    sentences = document_sentences(parsed)
    assert sentences.texts == tuple(texts)
    refused = {k: why for k, why in enumerate(hay_refusals(parsed, sentences.spans)) if why}
    edit = NeedleEdit(0, texts[0], TextEdit(0, 0, "", "", "none"))
    return StoredDocument(
        doc_id=f"doc-{doc}", title="", sentences=sentences.texts, gaps=sentences.gaps, middle=n // 2,
        neg=edit, con=edit, ner_sentence=0, ner_options=(), hay_refused=refused,
    )  # fmt: skip


def test_a_window_holding_a_fused_heading_is_never_chosen(nlp, no_ends_left_out):
    # doc-0's heading is 3 above its middle, so its middle (9, 9) window holds it; doc-1 has
    # 20 sentences, so only two (9, 9) windows (centers 9 and 10), and both hold its heading
    documents = [_document(nlp, 0, 12 - 3), _document(nlp, 1, 12, n=20)] + [_document(nlp, d, None) for d in range(2, 6)]
    assert documents[0].hay_refused == {9: "heading_opening"} and documents[1].hay_refused == {12: "heading_opening"}
    # the one offset that leaves doc-0's heading out (center 9) holds its middle sentence, the
    # donor's own "none" needle, which rand hay never shows: no clean window
    assert clean_center(documents[0], 9) is None
    assert clean_center(documents[1], 9) is None
    assert clean_center(documents[2], 9) == 12  # a clean document keeps its middle window
    corpus = Corpus(_Documents(documents))
    first_picks = set()
    for seed in range(40):
        for doc_id in corpus.doc_ids:
            first_picks.add(next(corpus._donors(doc_id, seed)))
            for i, j in ((9, 9), (3, 3), (0, 5)):
                pair = corpus.make_pair(doc_id, "none", "rand", i, j, seed)
                assert pair is not None and HEADING not in pair.original, (doc_id, seed, i, j)
                assert pair.hay_doc_id not in ("doc-0", "doc-1")  # no clean window: never a donor
    assert {"doc-0", "doc-1"} <= first_picks  # the rule was needed: both were drawn first


def test_a_window_off_the_middle_never_holds_the_donors_middle_sentence(nlp, no_ends_left_out):
    # 45 sentences, middle 22, a heading 3 above it: the nearest clean (9, 9) window lies 10 away
    document = _document(nlp, 0, 19, n=45)
    assert document.hay_refused == {19: "heading_opening"}
    center = clean_center(document, 9)
    assert center == 32  # 22 + 10: the first offset whose window leaves out both the heading and the middle
    assert not center - 9 <= document.middle <= center + 9


@pytest.mark.parametrize(
    "text",
    [
        "The opening of the new pier at Kinsale by the harbour board is viewed as a boost for the island trade Walsh enjoys the backing of the council.",
        # a standfirst run onto a sentence reported before its attribution ("..., officials say"): the parser hangs
        # both clauses under "say", and the standfirst's clause is as main as the attribution's
        "New harbour rule will lower entry fees in wide range of fields China is opening more berths to visiting yachts and adding moorings, harbour officials say.",
    ],
)
def test_a_caption_fused_as_a_second_clause_is_no_needle_sentence(nlp, text):
    # engine.corpus.sentence_gate refuses the fused forms of hay_check as needles: not one sentence
    from engine.corpus.sentence_gate import needle_refusals

    doc = nlp(f"{BEFORE} {text}")
    sentences = document_sentences(doc)
    assert needle_refusals(doc, sentences.spans) == ("", "fused_clause")


def test_a_rand_hay_window_leaves_out_the_first_two_and_last_five_sentences_of_its_donor(nlp):
    from engine.corpus.pairs import HEAD_SENTENCES_LEFT_OUT, TAIL_SENTENCES_LEFT_OUT

    assert (HEAD_SENTENCES_LEFT_OUT, TAIL_SENTENCES_LEFT_OUT) == (2, 5)
    furniture = ["Readers can send the harbour desk their questions by post.", "The views in this column are the writer's own."]
    # 45 sentences, middle 22, a heading 3 above it: the nearest window clear of it, around 32 (23..41),
    # reaches into the last five; the one below the middle holds the heading too
    texts = [_prose(3, k) for k in range(45)]
    texts[19], texts[-2:] = HEADING, furniture
    assert clean_center(_stored(nlp, 3, texts), 9) is None
    # five sentences more: around 35 (26..44) the window stops short of the last five
    texts = [_prose(4, k) for k in range(50)]
    texts[22], texts[-2:] = HEADING, furniture
    document = _stored(nlp, 4, texts)
    assert clean_center(document, 9) == 35 and document.hay_refused == {22: "heading_opening"}
    # 41 sentences, middle 20, a heading 3 below it: around 30 the window holds it, around 10 (1..19) it
    # would open on the second sentence
    texts = [_prose(5, k) for k in range(41)]
    texts[23] = HEADING
    assert clean_center(_stored(nlp, 5, texts), 9) is None


def test_the_needle_gate_and_the_hay_check_read_a_sentence_once(nlp, monkeypatch):
    from engine.corpus import hay_check
    from engine.corpus.sentence_gate import needle_refusals

    read = []
    sentence_refusal = hay_check._sentence_refusal
    monkeypatch.setattr(hay_check, "_sentence_refusal", lambda span: read.append(span.start) or sentence_refusal(span))
    doc = nlp(f"{BEFORE} Harbour dues rose by a third. The pilots met the board on Monday.")
    spans = document_sentences(doc).spans
    needle_refusals(doc, spans)
    first = hay_refusals(doc, spans)
    assert hay_refusals(doc, spans) == first
    assert len(read) == len(set(read)) <= len(spans)
