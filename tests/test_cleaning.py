"""Cleaning Wikipedia text (engine.corpus.cleaning) on real articles of the bundled sample."""

from __future__ import annotations

import json
import re

import pytest

from engine.corpus.cleaning import (
    APPENDIX_HEADINGS,
    HOLE_PATTERNS,
    clean_text,
    has_word,
    heading_title,
    is_heading,
    normalise_whitespace,
    template_hole,
)

ARTICLE = (
    "Mill Town\n"
    "\n"
    "Mill Town is a village on the river. It was founded in 1850 and grew quickly.\n"
    "History.\n"
    "The mill opened in 1851. The railway arrived in 1870, and the\n"
    "population doubled within ten years.\n"
    "Early life and education.\n"
    "Notable residents.\n"
    "Famous people\n"
    "* John Smith, miller\n"
    "- Mary Jones\n"
    "1. First item here.\n"
    "{| class=wikitable\n"
    "| a || b\n"
    " for (i = 0; i < n; i++) { x[i] = 0; }\n"
    "The energy is formula_1 where formula_2 is the mass.\n"
    "The village holds a fair every May &amp; a market every week.\n"
    "Economy.\n"
    "Tourism and fishing are the main industries!\n"
    "See also.\n"
    "Other mill towns are listed elsewhere.\n"
    "References.\n"
    "Smith, J. (1990). Mill towns. Publisher.\n"
)


def test_cleaning_keeps_prose_only():
    cleaned = clean_text(ARTICLE, "Mill Town")
    assert cleaned.split("\n") == [
        "Mill Town is a village on the river. It was founded in 1850 and grew quickly.",
        "The mill opened in 1851. The railway arrived in 1870, and the population doubled within ten years.",
        "The village holds a fair every May & a market every week.",
        "Tourism and fishing are the main industries!",
    ]


def test_headings():
    assert is_heading("Results.") and is_heading("Early life and education.")
    assert not is_heading("He died in 1990. He was buried in Rome.")
    assert not is_heading("The mill opened in 1851 and closed in 1900 after a long decline in trade.")
    assert not is_heading("Famous people")
    assert heading_title("== Early life ==") == "Early life"
    assert heading_title("=== Critical reception ===") == "Critical reception"
    assert heading_title("==External links==") == "External links"
    assert heading_title("== Unbalanced ===") is None
    assert heading_title("x == y") is None


def test_cleaning_drops_the_title_only_when_it_repeats():
    assert clean_text("Alpha\nAlpha is a letter.", "Alpha") == "Alpha is a letter."
    assert clean_text("Alpha is a letter.", "Alpha") == "Alpha is a letter."
    assert clean_text("References.\nA book.", "") == ""


@pytest.fixture(scope="module")
def records(bundled_corpus_path):
    return {r["id"]: r for r in json.loads(bundled_corpus_path.read_text(encoding="utf-8"))}


def _as_markup(text: str, level: int = 2) -> str:
    """The same article with WikiExtractor's "Heading." lines written as wiki
    markup ("== Heading =="), as dumps extracted with headings kept have them."""
    bar = "=" * level
    return "\n".join(f"{bar} {heading_title(line)} {bar}" if is_heading(line) else line for line in text.split("\n"))


@pytest.mark.parametrize("level", [2, 3, 4])
def test_markup_headings_are_headings_and_cut_the_appendix(records, level):
    # "Unnatural History (TV series)": headings, a File: line, wiki links, an External links appendix
    record = records["27084674"]
    markup = _as_markup(record["text"], level)
    assert f"{'=' * level} External links {'=' * level}" in markup
    cleaned = clean_text(markup, record["title"])
    assert cleaned == clean_text(record["text"], record["title"])
    assert "==" not in cleaned and "Premise" not in cleaned
    assert cleaned.split("\n")[-1].startswith("According to the Nielsen ratings, the premiere episode")
    assert "Category" not in cleaned  # the appendix cut fired


def test_wiki_links_are_unwrapped_and_image_lines_dropped(records):
    cleaned = clean_text(records["27084674"]["text"], records["27084674"]["title"])
    assert "[[" not in cleaned and "]]" not in cleaned and "|" not in cleaned
    assert "outside of Adult Swim and Toonami to have the U.S. rating of \"TV-PG-V\"" in cleaned
    assert "with his anthropologist parents" in cleaned
    assert "File:" not in cleaned and "thumb" not in cleaned and "The cast of" not in cleaned


def test_indentation_caption_and_template_lines_are_dropped(records):
    # real sentences of "Unnatural History", laid out as a dump shows them
    # when indentation, captions and template residue survive extraction
    prose = "On November 19, 2010, Cartoon Network cancelled the series after one season."
    quote = "\"Unnatural History\" received mixed to positive reviews from critics."
    text = "\n".join(
        [
            prose,
            f": {quote}",
            f";{quote}",
            f"# {quote}",
            f"* {quote}",
            "File:Unnatural History cast.jpg|The cast of \"Unnatural History\" (from left to right).",
            "Image:Unnatural History cast.jpg|thumb|The cast of the series.",
            "The cast of the series, alt=Four actors standing in a row.",
            "thumb|right|250px|The cast of \"Unnatural History\".",
            "| Premiered on Sunday, June 13, 2010 | Cartoon Network.",
            "The series premiered | June 13, 2010 | on Cartoon Network.",
            quote,
        ]
    )
    assert clean_text(text).split("\n") == [prose, quote]


def test_appendix_headings_keep_real_content_sections(records):
    # "Literature" names a real section in many articles (a country's
    # literature); here a real section of "Turracher Höhe Pass" is retitled.
    lines = records["8725179"]["text"].split("\n")
    fauna = lines.index("Fauna.")
    section = "\n".join(["Literature.", *lines[fauna + 1 : fauna + 2]])
    assert "literature" not in APPENDIX_HEADINGS and "gallery" not in APPENDIX_HEADINGS
    assert "predatory game animals" in clean_text(section)
    assert "predatory game animals" in clean_text(section.replace("Literature.", "== Literature =="))
    assert clean_text(section.replace("Literature.", "== References ==")) == ""
    assert clean_text(section.replace("Literature.", "Further reading.")) == ""


def test_odd_whitespace_is_normalised(records):
    # "Chincha Alta": "covers an area of 2988\xa0km2"
    raw = records["8721572"]["text"]
    assert "2988\u00a0km2" in raw
    cleaned = clean_text(raw, records["8721572"]["title"])
    assert "2988 km2" in cleaned and "\u00a0" not in cleaned
    assert normalise_whitespace("a\u202fb\u2009c\u200bd\ufeffe\u00adf\u2028g\r\nh") == "a b cdef\ng\nh"


def test_empty_parentheses_and_their_separators_are_removed(records):
    text = "\n".join(
        [
            # real sentences with a removed {{lang}} template's leftovers
            "Xanten Cathedral (), sometimes called St. Victor's Cathedral (), is a Roman Catholic church.",
            'Nannawa Adama (; ; "Greater Adama") is a woreda in Oromia Region, Ethiopia.',
            "The Malaysian Ceylonese Congress (MCC; , , ) is a political party in Malaysia.",
        ]
    )
    assert clean_text(text).split("\n") == [
        "Xanten Cathedral, sometimes called St. Victor's Cathedral, is a Roman Catholic church.",
        'Nannawa Adama ("Greater Adama") is a woreda in Oromia Region, Ethiopia.',
        "The Malaysian Ceylonese Congress (MCC) is a political party in Malaysia.",
    ]


# real sentences of the bundled sample, each with the hole a removed template left
HOLES = [
    ("Abu Mikhnaf was born in .", "space before punctuation"),
    ("In , Bell landed a roster spot with the Indianapolis Colts of the NFL.", "space before punctuation"),
    ("Komae Station is served by the Odakyu Odawara Line from to , and is located from the starting point of the line at Shinjuku Station.", "space before punctuation"),
    ("The town is located approximately , by road, north-east of Garissa.", "space before punctuation"),
    ("With over 1.5 million sales, , \"The Best of the Gipsy Kings\" is the third bestselling Latin album in the US.", "doubled punctuation"),
    ("The forces of the Communist Party of Korea of Pak Hon-yong(Hangul:: 박헌영, Hanja:朴憲永) adopted more extreme methods.", "doubled punctuation"),
    ("In film theory, the term oneiric ( , adjective; \"pertaining to dreams\") is used.", "space inside parentheses"),
    ("Wax and Wane (Traditional Chinese: ) is a 2011 Hong Kong television drama.", "space inside parentheses"),
    ("The plant's leaves are commonly long (sometimes up to ), flat, 5 to 7-veined.", "space inside parentheses"),
    ("He was also author of many works of historical economic analysis, including \"\" and several other reference books.", "empty quotes"),
    ("They announced that they were Confederate soldiers and stole a total of $208,000 ($ in current dollar terms).", "currency without amount"),
    ("Liboi is located about east of Dadaab.", "missing distance"),
    ("Elevations in the vicinity range from around in Los Gatos Creek north of the hills.", "missing quantity"),
    ("The field reached peak production in 1950 with over of oil pumped that year.", "missing quantity"),
    ("Locals at the coast near Değirmendere observed the sea receding by about in less than two minutes.", "missing quantity"),
    ("It hangs in the [[Walker Art Gallery, Liverpool.", "wiki markup"),
    # sentences of our own: a name or a title removed between an article and a preposition
    ("The ferry service is run in the by two firms from Cork.", "missing noun"),
    ("The song was written for the of the same name in 1992.", "missing noun"),
]


@pytest.mark.parametrize(("sentence", "hole"), HOLES)
def test_template_holes_are_found(sentence, hole):
    assert template_hole(sentence) is not None
    assert dict(HOLE_PATTERNS)[hole].search(sentence), hole


@pytest.mark.parametrize(
    "sentence",
    [
        # real sentences of the bundled sample that merely look like holes
        "Clooney describes comparative theology. . . as truly constructive theology.",
        'The newspaper merged with three other local newspapers ("The Lyons Times," "Summit Valley Times," & "Clear Ridge Times").',
        "Just before 3:00 p.m. the group simultaneously robbed the three banks.",
        "They announced that they were Confederate soldiers and stole a total of $208,000.",
        "His theme of the guilty knowledge that humans run from and simultaneously toward.",
        ".NET is a software framework developed by Microsoft.",
        "A$AP Rocky is an American rapper.",
        "The handing over of 10,000 silk garments was agreed, and the rudder was put hard over to port.",
        "Visitors come from around the world, and the bill drew crowds both in support of and opposition to it.",
        "He was about to leave when the survey found that some of the hills were higher than in the east.",
        # an article before a preposition that is not a hole: a hyphenated word, a letter's name
        "The by-election was held in May, and a by-product of the vote was a new ferry.",
        "Vitamin A for children was handed out in the town.",
        "The into-the-wild tour sold out.",
    ],
)
def test_sentences_without_holes(sentence):
    assert template_hole(sentence) is None


def test_the_whole_bundled_sample_cleans_to_prose_with_words(records):
    for record in records.values():
        cleaned = clean_text(record["text"], record["title"])
        for line in cleaned.split("\n") if cleaned else []:
            assert has_word(line) and line == line.strip(), (record["id"], line)
            assert not is_heading(line) and not re.match(r"[:;*#]", line), (record["id"], line)
            assert "[[" not in line and "|" not in line and "\u00a0" not in line, (record["id"], line)


def test_a_document_shipped_as_one_line_is_prose_whatever_it_starts_with():
    # speeches and news come one line per document: a leading space is not
    # indentation, "upright" is not an image option, and text after the last
    # sentence end stays for segmentation to drop
    speech = (
        " Fellow-Citizens: The harbour was rebuilt by upright men at a cost of 5,000 dollars. "
        'The clerk wrote that the ferry "runs again,"?and left.-Sign up now'
    )
    assert clean_text(speech, "Address") == (
        "Fellow-Citizens: The harbour was rebuilt by upright men at a cost of 5,000 dollars. "
        'The clerk wrote that the ferry "runs again," and left. Sign up now'
    )
    # the same words as one line of a multi-line article: an image line, dropped as before
    first = "The harbour was rebuilt after the storm of that winter by the town council."
    last = "The ferry now sails twice a day from the new pier to the island and back."
    assert clean_text("\n".join([first, speech.strip(), last])) == first + "\n" + last


@pytest.mark.parametrize(
    ("shipped", "repaired"),
    [
        # the dataset's '"' for the apostrophe of a plural possessive, in text that shows its mojibake ('"?')
        ('The vote was close,"?he said. The growers" union met in the hall.', "The growers' union met in the hall."),
        ('The vote was close,"?he said. It cost the brothers" $40 million.', "It cost the brothers' $40 million."),
        ('The vote was close,"?he said. The pupils" and the teachers" rooms were shut.', "The pupils' and the teachers' rooms were shut."),
        # a closing mark stays: a quotation open at it, or a mark before it in its sentence
        ('The vote was close,"?he said. He called them "the old hands" and left.', 'He called them "the old hands" and left.'),
        ('The vote was close,"?he said. Some senators-"lame ducks" for him.', 'Some senators-"lame ducks" for him.'),
        ('The vote was close,"?he said. "We help the growers" said the mayor.', '"We help the growers" said the mayor.'),
    ],
)
def test_a_plural_possessive_written_as_a_quotation_mark_is_an_apostrophe(shipped, repaired):
    assert repaired in clean_text(shipped)


def test_a_plural_possessive_mark_is_kept_in_text_without_the_mojibake():
    # no '"?' anywhere: the marks may be what they look like
    from engine.corpus.cleaning import repair_mojibake

    assert repair_mojibake('The growers" union met in the hall.') == 'The growers" union met in the hall.'


def test_a_plural_possessive_mark_no_longer_makes_its_sentence_quoted(nlp):
    from engine.corpus.segmentation import document_sentences
    from engine.corpus.sentence_gate import needle_refusals

    text = clean_text('The vote was close,"?he said. The growers" union met in the hall and voted on the plan.')
    doc = nlp(text)
    spans = document_sentences(doc).spans
    refusals = dict(zip((s.text.strip() for s in spans), needle_refusals(doc, spans)))
    assert refusals["The growers' union met in the hall and voted on the plan."] == ""


@pytest.mark.parametrize(
    ("shipped", "repaired"),
    [
        ("The ferry was late.-The crew waited.", "The ferry was late. The crew waited."),
        # a stray "*" before the break's dash, and a bracket after it
        ("The harbour master told her story.*-Widowed young, she ran the pier.", "The harbour master told her story. Widowed young, she ran the pier."),
        ("The fares went up.-(Nobody was surprised.)", "The fares went up. (Nobody was surprised.)"),
        # a hyphen in a range or before a hashtag is no break
        ("See pages 3.-4 of the report.", "See pages 3.-4 of the report."),
        ("They chanted the pier!-#SAVETHEPIER was the tag.", "They chanted the pier!-#SAVETHEPIER was the tag."),
    ],
)
def test_a_lost_paragraph_break_written_as_a_dash_ends_the_sentence(shipped, repaired):
    from engine.corpus.cleaning import repair_mojibake

    assert repair_mojibake(shipped) == repaired


@pytest.mark.parametrize(
    ("shipped", "repaired"),
    [
        ('The harbour master replied:-"We will reopen the pier."', 'The harbour master replied: "We will reopen the pier."'),
        ("Her statement reads:- We will reopen the pier.", "Her statement reads: We will reopen the pier."),
        ("Source:-Cork Echo", "Source: Cork Echo"),
        # a list's mark after the colon's space, and a hyphen before a lowercase word, stay
        ("The council resolved the following: -That the pier reopen in May.", "The council resolved the following: -That the pier reopen in May."),
        ("They had one thing in common:-urgency.", "They had one thing in common:-urgency."),
    ],
)
def test_the_dash_a_lost_break_left_after_a_colon_is_dropped(shipped, repaired):
    from engine.corpus.cleaning import repair_mojibake

    assert repair_mojibake(shipped) == repaired


def test_a_dash_shipped_with_its_hyphen_or_a_lost_space_is_a_dash_not_a_quotation_mark(nlp):
    from engine.corpus.segmentation import document_sentences
    from engine.corpus.sentence_gate import needle_refusals

    shipped = (
        'The vote was close,"?he said. The new pier -"?and the old one -"?opened in May. '
        'The ferry "? the last of the day "? sails at noon. The harbour board met on Monday and approved the fares.'
    )
    text = clean_text(shipped)
    assert "The new pier \u2014 and the old one \u2014 opened in May." in text
    assert "The ferry \u2014 the last of the day \u2014 sails at noon." in text
    doc = nlp(text)
    spans = document_sentences(doc).spans
    refusals = dict(zip((s.text.strip() for s in spans), needle_refusals(doc, spans)))
    assert refusals["The harbour board met on Monday and approved the fares."] == ""  # no quotation left open


@pytest.mark.parametrize(
    ("shipped", "cleaned"),
    [
        # the caption after the layout's dash goes with its credit; the prose after the run of spaces stays
        (
            "The harbour reopened on Monday after a week of storms.   - A trawler unloads its catch at dawn. "
            "Ann Walsh / For Cork Echo  Fishermen said prices had doubled since the spring.",
            "The harbour reopened on Monday after a week of storms. Fishermen said prices had doubled since the spring.",
        ),
        # a short caption without a credit, after an address that ends no sentence
        (
            "Write to the desk at harbour@corkecho.ie   - Nets drying on the quay.  The season opens in May.",
            "The season opens in May.",  # the address ends no sentence before the run of spaces: a line of its own, dropped
        ),
    ],
)
def test_a_caption_marked_by_a_dash_after_a_run_of_spaces_is_dropped(shipped, cleaned):
    assert clean_text(shipped) == cleaned


def test_a_caption_set_off_by_runs_of_spaces_without_a_dash_goes_with_its_credit():
    shipped = (
        "The ferry company has ordered two new boats from a yard in Cork.   The new ferry leaves the yard at Cobh "
        "on its first trial. Provided to Harbour Weekly  The boats will enter service next spring.   A quiet "
        "morning on the quay.  The fares will not change."
    )
    # an uncredited piece between runs of spaces is prose, kept
    assert clean_text(shipped) == (
        "The ferry company has ordered two new boats from a yard in Cork. The boats will enter service next spring. "
        "A quiet morning on the quay. The fares will not change."
    )


def test_a_long_uncredited_passage_after_the_mark_is_kept_as_prose():
    passage = "Fishermen said prices had doubled since the spring, and " + "the co-operative bought more ice, " * 6 + "so the boats stayed out longer."
    assert clean_text(f"The harbour reopened on Monday.   - {passage}  The season opens in May.") == (
        f"The harbour reopened on Monday. {passage} The season opens in May."
    )


def test_a_run_of_spaces_after_a_word_that_ends_no_sentence_is_a_lost_line_break():
    shipped = (
        "The ferry will run twice a day from June. Watch the harbour report on Friday at 9 p.m. GMT   "
        "Walsh, who skippered the boat for a decade, said the crossing was rough. Tides and timetables   "
        "The first sailing leaves at dawn."
    )
    assert clean_text(shipped) == (
        "The ferry will run twice a day from June. Watch the harbour report on Friday at 9 p.m. GMT\n"
        "Walsh, who skippered the boat for a decade, said the crossing was rough. Tides and timetables\n"
        "The first sailing leaves at dawn."
    )
    # a label alone on its lost line goes like any line without a sentence end
    assert clean_text("The boats were late. June 3   Walsh said the storm had passed.") == "The boats were late. June 3\nWalsh said the storm had passed."
    assert clean_text("The boats were late.   Walsh said the storm had passed.") == "The boats were late. Walsh said the storm had passed."


def test_a_line_lost_to_a_run_of_spaces_is_not_stored_as_the_next_sentences_head(nlp):
    from engine.corpus.segmentation import document_sentences

    text = clean_text(
        "The ferry will run twice a day from June. Watch the harbour report on Friday at 9 p.m. GMT   "
        "Walsh, who skippered the boat for a decade, said the crossing was rough."
    )
    assert document_sentences(nlp(text)).texts == (
        "The ferry will run twice a day from June.", "Walsh, who skippered the boat for a decade, said the crossing was rough.",
    )
