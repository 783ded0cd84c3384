"""Rows of tables, numbered lists, photo captions and teasers read as
sentences (engine.corpus.page_rows), on sentences written for these tests;
the segmentation tests at the end parse them with the real model."""

from __future__ import annotations

import pytest

from engine.corpus.cleaning import clean_text
from engine.corpus.page_rows import ends_in_credit, gallery_run, row_kind, row_neighbours
from engine.corpus.segmentation import document_sentences


@pytest.mark.parametrize(
    "row, kind",
    [
        # a table's rows run together: dot leaders, or numbers in a row
        ("..........pence 4.5 On each ton landed at the quay a levy is paid.", "table_row"),
        ("Pilot fees on the upper river.......12 shillings a day were paid.", "table_row"),
        ("Harbour dues 1.20 1.35 1.40 were charged in the three years.", "table_row"),
        # a numbered list's entries, Roman numerals (Arabic ones are sentence_gate's "list_entry")
        ("IV. The board shall publish its accounts every year.", "list_entry"),
        ("I. No vessel shall enter the harbour after dark.", "list_entry"),
        ("I. PUBLIC WORKS The board has raised the dues twice.", "list_entry"),
        # an all-capitals heading run into the sentence under it
        ("HARBOUR REVENUE I shall now turn to the debt of the board.", "caps_heading"),
        ("PUBLIC WORKS AND DOCKS The board has raised the dues twice this year.", "caps_heading"),
        # photo captions and credits
        ("Harbour master Tom Byrne (left) and skipper Ann Walsh (center) inspect the new slipway.", "caption"),
        ("Skipper Ann Walsh (second from left) cuts the ribbon at the new quay.", "caption"),
        ("Ann Walsh, left, talks with two deckhands on the new quay at Kinsale.", "caption"),
        ("Harbour master Tom Byrne, above, inspects a crack in the old pier.", "caption"),
        ("Pictured, a trawler unloads its catch at dawn in Kinsale.", "caption"),
        ("Photos provided to the Cork Echo Trawlers unload their catch at dawn.", "caption"),
        ("Image courtesy of the harbour board The old pier in 1901.", "caption"),
        # a credit in brackets, and a picture agency's stamp run into the next sentence
        ("The crew hauls in the nets (Credit: Ann Walsh/Cork Echo) The catch was small.", "caption"),
        ("Harbour Press Images The new quay at Kinsale opened to ferries on Monday.", "caption"),
        # a sentence announcing the page's gallery: it points at what the text does not hold
        ("The gallery below looks back at a century of the harbour.", "gallery"),
        ("Click through the gallery above to see the old ferries.", "gallery"),
        # a related article's teaser, and a dispatch's byline
        ("(04.05.2016) Fishermen in Kinsale fear the new quotas will end their trade.", "teaser"),
        ("Mary Doyle reports from Kinsale.", "teaser"),
        # a link line run into the sentence after it
        ("Read more from Mary Asked by the board, the harbour master said the pier was safe.", "teaser"),
        ("Read more about the new quotas Fishermen in Kinsale fear they will end their trade.", "teaser"),
        # a directory's entry: name, address, telephone and prices set off by semicolons, run into the next one
        ("Harbour Tours, Quay Street, Cobh; +353 21 481 1234; trips from 20 euros per person Island Ferries The boats leave at dawn.", "contact_listing"),
        ("Kinsale Sea Safari; 086 555 0192; boats leave the pier daily from May to September.", "contact_listing"),
    ],
)
def test_rows_of_tables_lists_captions_and_teasers_are_named(row, kind):
    assert row_kind(row) == kind


@pytest.mark.parametrize(
    "sentence",
    [
        "The harbour grew... and then it grew again.",  # a prose ellipsis
        "The storm lasted all night....",
        "By 2017 ... the quay had been rebuilt twice.",
        "The pier was rebuilt in 1980, 1984, 1988 and 1993.",
        # a telephone number in prose is no directory entry (hay_check refuses it for rand hay only),
        # and figures split by semicolons are no telephone number
        "Anyone who saw the crash should call the harbour police on 1800 555 123.",
        "Fares rose by 4 percent in 2015; by 2017 some 2 000 000 passengers had paid them.",
        "Anyone who saw the crash should call the harbour police on 1800 666 111.",
        "The pier was named Best Picture by the harbour board.",  # a prize, not a credit
        "In 2016, 2,000 boats called at Cork and 300 at Kinsale.",
        "Governor Ann Walsh (D) signed the harbour bill on Monday.",  # a party, not a position
        "UUP MP Danny Byrne said the pier would close in May.",  # acronyms before a name
        "I. M. Pei designed the new ferry terminal.",  # an initial, not a numeral
        "I think the pier will close.",
        "The photo shows the pier as it stood in 1901.",
        "Mary Doyle reported the storm from Kinsale on Monday.",
        "The left bank (west of the river) floods every spring.",
        "The chapel has a gallery above the nave and another below the organ.",  # a room, not a page's gallery
        "The gallery below the tower was closed to visitors in 1990.",
        "Kinsale Studio Pictures Ltd filmed the regatta.",  # a film studio, not a stamp
        "Harbour Images said on Monday that it would sell its archive.",  # an agency as a subject
        "The bank extended credit to the ferry firm.",
        "Ann Walsh, left without a crew, sold her trawler in May.",  # "left" a verb
        "By the time the ferry arrived, the crew had left, and the pier was empty.",
        "Read more of her letters and you will see why the pier closed.",  # an imperative, not a link
    ],
)
def test_prose_is_not_a_row(sentence):
    assert row_kind(sentence) is None


def test_rows_by_their_place_after_a_bare_numeral_and_around_date_stamps():
    texts = [
        "The board met in May.",  # 0
        "II.",  # 1: a numeral the parser split off
        "Pilots are paid by the day.",  # 2: its entry
        "The crew rested.",  # 3: a run's first teaser is taken as TEASER_LEAD_SENTENCES long (no mark shows its start)
        "The ferry left at noon.",  # 4
        "Kinsale had a storm.",  # 5: its last sentence, before its stamp
        "(04.05.2016)",  # 6
        "Quotas were cut.",  # 7: a teaser between two stamps
        "Kinsale fears for its fleet.",  # 8
        "(11.05.2016) The pier closed.",  # 9: a stamp opening the next teaser (row_kind's)
        "The crossing took two hours.",  # 10
    ]
    assert row_neighbours(texts) == {2: "list_entry", 3: "teaser", 4: "teaser", 5: "teaser", 7: "teaser", 8: "teaser"}
    # a lone stamp takes TEASER_LEAD_SENTENCES before it, and no more
    lone = ["The board met.", "The ferry left at noon.", "The pier closed.", "(04.05.2016)", "The crew rested."]
    assert row_neighbours(lone) == {0: "teaser", 1: "teaser", 2: "teaser"}


def test_a_teaser_paragraph_is_dropped_whole_and_a_date_inside_a_clause_is_prose():
    texts = [
        "The harbour board met on Monday.",  # 0: the article's own prose
        "Kinsale's new marina is filling up fast.",  # 1: a teaser of three sentences, its stamp after its end
        "Few of its berths are left for the fishing fleet.",  # 2
        "Ann Walsh reports. (14.03.2017)",  # 3
        "The crew rested.",  # 4: the article goes on
    ]
    assert row_kind(texts[3]) == "teaser"
    assert row_neighbours(texts) == {1: "teaser", 2: "teaser"}
    # a bracketed date inside a clause is the writer's own, no stamp
    assert row_kind("The new ferry makes its first crossing on Friday (17.03.2017).") is None
    assert row_neighbours(["The board met.", "The pier reopens on Monday (20.03.2017).", "The crew rested."]) == {}


def test_a_picture_gallery_is_dropped_as_a_run_between_its_marks():
    texts = [
        "The harbour board met in Cork on Monday.",  # 0: the article
        "The old pier was built by convicts.",  # 1
        "This image shows the pier at low tide in 1901.",  # 2: a mark
        "Fishing boats crowded its steps every morning.",  # 3: gallery text, unmarked
        "This picture, taken on May 4 1950, shows the pier after the storm.",  # 4: a mark
        "Half of its stones were lost.",  # 5
        "The ferry office, shown here, closed in 1962.",  # 6: a mark
        "Skipper Ann Walsh (far left) and her crew unload a catch.",  # 7: a caption, a mark
        "Her boat is the oldest in the fleet.",  # 8: the last entry, as long as the run's longest (one sentence)
        "The board will vote on the new quay in June.",  # 9: the article again
        "Its members have asked for a survey.",  # 10
    ]
    assert gallery_run(texts) == dict.fromkeys(range(2, 9), "gallery")
    assert row_neighbours(texts) == dict.fromkeys(range(2, 9), "gallery")
    # two marks side by side: no entry after the last
    assert gallery_run(texts[6:]) == {0: "gallery", 1: "gallery"}


@pytest.mark.parametrize(
    "texts",
    [
        # one mark alone: prose may point at a photo
        ["The pier closed.", "This photo shows how little is left of the pier.", "The crew rested.", "Boats left."],
        # two marks too far apart: the article between them is kept
        [
            "This image shows the pier in 1901.", "The board met.", "It voted.", "The ferry left.", "The crew rested.",
            "Fees rose.", "This photo of the quay was taken in 1950.",
        ],
        # a bracketed "(pictured above)" in an article's sentence is not a mark
        ["Ann Walsh (pictured above) runs the ferry.", "She took over in 2010.", "This image shows her boat."],
        # "the photo shows" is a report on a photo, not a caption
        ["The photo shows the pier as it stood in 1901.", "Experts dated it.", "The photo shows a crowd."],
    ],
)
def test_prose_that_mentions_a_photo_is_not_a_gallery(texts):
    assert gallery_run(texts) == {}


def test_a_gallery_announced_below_the_text_is_everything_after_its_announcement():
    texts = [
        "The harbour board met in Cork on Monday.",  # 0: the article
        "It voted to rebuild the old pier.",  # 1
        "The gallery below looks back at the pier's first century.",  # 2: the announcement (row_kind's)
        "Ann Walsh, 61, is the longest-serving skipper in Kinsale.",  # 3: entries without a mark
        "Her trawler has fished the same grounds since 1979.",  # 4
        "The old ferry office closed in 1962.",  # 5
    ]
    assert gallery_run(texts) == dict.fromkeys(range(3, 6), "gallery")
    # a gallery above the text: its entries are not in it, so only the announcement goes
    assert gallery_run([t.replace("below", "above") for t in texts]) == {}
    assert row_kind(texts[2].replace("below", "above")) == "gallery"


def stored(nlp, text: str) -> tuple[str, ...]:
    return document_sentences(nlp(clean_text(text))).texts


def test_a_numbered_list_is_dropped_entry_by_entry(nlp):
    text = (
        "The ferry left Cork at noon. I. No vessel shall enter the harbour after dark. "
        "II. The pilots must be paid by the day. 3. Fees rose. The crossing took two hours."
    )
    assert stored(nlp, text) == ("The ferry left Cork at noon.", "The crossing took two hours.")


def test_table_rows_captions_and_teasers_are_dropped_from_the_stored_sentences(nlp):
    text = (
        "The ferry left Cork at noon. Harbour dues..........pence 4.5 On each ton landed a levy of two pence "
        "is paid. Skipper Ann Walsh (second left) cuts the ribbon at the new quay. HARBOUR REVENUE I shall "
        "now turn to the debt of the board. The pier needs repair. The crossing took two hours. Kinsale fears for its fleet. "
        "(04.05.2016) The council voted to close the old pier in May. The crew stayed in Cork."
    )
    # the row's label after its number is prose; a stamp closes the teaser before it (TEASER_LEAD_SENTENCES long),
    # not the sentence after; an all-capitals heading is split off before the parser (engine.corpus.fused_headings),
    # its sentence kept
    assert stored(nlp, text) == (
        "The ferry left Cork at noon.",
        "On each ton landed a levy of two pence is paid.",
        "I shall now turn to the debt of the board.",
        "The council voted to close the old pier in May.",
        "The crew stayed in Cork.",
    )


def test_a_directorys_entries_are_dropped_and_the_prose_around_them_kept(nlp):
    text = (
        "Sharks gather off the Old Head every summer. Kinsale Sea Safari, Pier Road, Kinsale; +353 86 555 0192; "
        "trips from 40 euros per person. Boats leave the pier at dawn. Anyone who saw the crash should call "
        "the harbour police on 1800 555 123."
    )
    # the prose sentence with a telephone number stays (rand hay refuses it: engine.corpus.hay_check)
    assert stored(nlp, text) == (
        "Sharks gather off the Old Head every summer.",
        "Boats leave the pier at dawn.",
        "Anyone who saw the crash should call the harbour police on 1800 555 123.",
    )


def test_a_gallery_run_is_dropped_from_the_stored_sentences(nlp):
    text = (
        "The harbour board met in Cork on Monday to discuss the old pier. "
        "This image shows the pier at low tide in 1901. Fishing boats crowded its steps every morning. "
        "This picture, taken in May 1950, shows the pier after the storm. Half of its stones were lost. "
        "The board will vote on the new quay in June."
    )
    assert stored(nlp, text) == (
        "The harbour board met in Cork on Monday to discuss the old pier.",
        "The board will vote on the new quay in June.",
    )


def test_a_gallery_announced_below_and_a_stamped_sentence_are_dropped_from_the_stored_sentences(nlp):
    text = (
        "The harbour board met in Cork on Monday to discuss the old pier. "
        "Harbour Press Images Kinsale's old pier, the longest in the county, will be rebuilt by next May. "
        "Its members asked for a survey of the quay. "
        "The gallery below looks back at a century of the harbour. "
        "Ann Walsh, 61, is the longest-serving skipper in Kinsale. "
        "Her trawler has fished the same grounds since 1979."
    )
    assert stored(nlp, text) == (
        "The harbour board met in Cork on Monday to discuss the old pier.",
        "Its members asked for a survey of the quay.",
    )


def test_the_caption_above_a_photo_credit_and_the_credit_are_dropped(nlp):
    text = (
        "The harbour board met in Cork on Monday to discuss the old pier. "
        "From the lighthouse, the old pier, seen here at low tide, has guarded the fleet for two centuries. "
        "Tom Byrne / For Cork Echo The board will vote on the new quay in June. "
        "Its members asked for a survey of the slipway."
    )
    assert row_kind("Tom Byrne / For Cork Echo The board will vote on the new quay in June.") == "photo_credit"
    # the parser splits the credit off: the sentence after it is kept
    assert stored(nlp, text) == (
        "The harbour board met in Cork on Monday to discuss the old pier.",
        "The board will vote on the new quay in June.",
        "Its members asked for a survey of the slipway.",
    )


def test_an_authors_line_at_the_end_is_dropped_and_a_named_subjects_line_kept():
    texts = [
        "The harbour board met in Cork on Monday.",
        "It voted to rebuild the old pier.",
        "Ann Walsh is harbour correspondent at the Cork Echo.",
    ]
    assert row_neighbours(texts) == {2: "author_line"}
    # the person the article is about, described at its end, is no author's line
    about = ["Ann Walsh skippered the first ferry to Cobh.", *texts[1:]]
    assert row_neighbours(about) == {}
    # nor a sentence of that shape in the middle of the text
    assert row_neighbours([texts[2], *texts[:2], "The vote was close."]) == {}


@pytest.mark.parametrize(
    ("text", "credited"),
    [
        ("Nets drying on the quay. Ann Walsh / For Cork Echo", True),
        ("Nets drying on the quay. Photos provided to Cork Echo", True),
        ("Nets drying on the quay. Photo by Tom Byrne", True),
        ("The skipper, at the wheel. Getty Images", True),
        ("The skipper said the catch was provided to him.", False),
        ("The share rose to 3 / 4 of the fleet", False),
    ],
)
def test_a_caption_that_ends_in_a_photo_credit_is_told(text, credited):
    assert ends_in_credit(text) is credited
