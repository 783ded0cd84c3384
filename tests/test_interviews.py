"""Speech a document gives as someone else's without quotation marks, and
live-blog entry lines (engine.corpus.interviews, through
engine.corpus.sentence_gate), on sentences written for these tests, parsed
by the real model."""

from __future__ import annotations

import pytest

from engine.corpus.cleaning import clean_text
from engine.corpus.interviews import live_entry, mark_speech_label
from engine.corpus.segmentation import document_sentences
from engine.corpus.sentence_gate import needle_refusals

INTRO = (
    "The baker Ines Marlow opened her third shop in Galway last spring after a decade of selling bread at markets. "
    "She spoke to the paper about flour prices and her plans for the coming year. "
)


def refusals(nlp, text: str) -> dict[str, str]:
    sentences = document_sentences(nlp(clean_text(text)))
    return dict(zip(sentences.texts, needle_refusals(sentences.spans[0].doc, sentences.spans)))


def stored(nlp, text: str) -> tuple[str, ...]:
    return document_sentences(nlp(clean_text(text))).texts


def test_the_answers_of_an_interview_without_quotation_marks_are_not_needles(nlp):
    text = INTRO + (
        "How have rising flour prices changed your business? "
        "We buy less wheat from abroad now and mill more of it ourselves. "
        "Our rye comes from a small mill in Athenry. "
        "What would you tell someone who wants to open a bakery? "
        "I would tell them to start small and to keep their costs low for the first two years. "
        "Most new shops close because they grow too fast."
    )
    got = refusals(nlp, text)
    assert got[INTRO.split(". ")[0] + "."] == ""  # the writer's own introduction
    # the lead-in that announces the printed conversation: "did not speak to the paper" would deny it
    assert got["She spoke to the paper about flour prices and her plans for the coming year."] == "interview_lead_in"
    answers = [t for t in got if not t.startswith(("The baker", "She spoke"))]
    assert len(answers) == 6
    assert all(got[t] == "interview" for t in answers)


def test_a_conversation_announced_in_a_document_that_prints_none_may_be_a_needle(nlp):
    # no interview follows: "She spoke to the paper" is the writer's report, and "We sat down with the
    # mayor" in a report with no questions is no lead-in either
    text = INTRO + (
        "We sat down with the mayor at the opening of the new shop on the quay. "
        "The shop sells rye bread, soda bread and cakes to the hotels along the harbour. "
        "Its ovens came from a bakery in Cork that closed last winter."
    )
    got = refusals(nlp, text)
    assert got["She spoke to the paper about flour prices and her plans for the coming year."] == ""
    assert got["We sat down with the mayor at the opening of the new shop on the quay."] == ""


@pytest.mark.parametrize(
    ("lead_in", "why"),
    [
        ("We sat down with Ines Marlow in her shop on the quay last week.", "interview_lead_in"),
        ("The paper talked to Ines Marlow in her shop on the quay last week.", "interview_lead_in"),
        ("We met Ines Marlow in her shop on the quay last week.", ""),  # no verb of talking: the writer's claim
    ],
)
def test_a_lead_in_with_a_verb_of_talking_before_an_interview_is_not_a_needle(nlp, lead_in, why):
    text = lead_in + " " + (
        "How have rising flour prices changed your business? "
        "We buy less wheat from abroad now and mill more of it ourselves. "
        "What would you tell someone who wants to open a bakery? "
        "I would tell them to start small and to keep their costs low for the first two years."
    )
    assert refusals(nlp, text)[lead_in] == why


def test_an_interviews_earlier_question_that_makes_no_turn_opens_its_part(nlp):
    # the first answer has no first person; the next two questions make turns
    opening = "Is the market for bread still growing in the west? Sales of rye bread rose by a tenth last year across the county. "
    text = INTRO + opening + (
        "How have rising flour prices changed your business? "
        "We buy less wheat from abroad now and mill more of it ourselves. "
        "What would you tell someone who wants to open a bakery? "
        "I would tell them to start small and to keep their costs low for the first two years."
    )
    got = refusals(nlp, text)
    first_answer = "Sales of rye bread rose by a tenth last year across the county."
    assert (got[first_answer], got[INTRO.split(". ")[1] + "."]) == ("interview", "interview_lead_in")


def test_speaker_labels_after_questions_mark_an_interview(nlp):
    text = INTRO + (
        "Gazette: Prices went up twice this year. Do the farmers get any of it? "
        "Marlow: Very little of it reaches them. The millers and the shipping firms take most of the margin. "
        "Gazette: The town has four bakeries already. Is there room for another one? "
        "Marlow: There is room, because the supermarket stopped baking on site in March. "
        "Its customers came to the markets instead."
    )
    got = refusals(nlp, text)
    assert got["She spoke to the paper about flour prices and her plans for the coming year."] == "interview_lead_in"
    for sentence in ("Do the farmers get any of it?", "The millers and the shipping firms take most of the margin.",
                     "Is there room for another one?", "Its customers came to the markets instead."):  # fmt: skip
        assert got[sentence] == "interview"


def test_one_question_between_two_speakers_labels_marks_an_interview(nlp):
    # each label written once: the outlet asks, the baker answers, and later questions are statements
    text = (
        "Gazette: What has the drought done to the price of flour this year? Will it go on rising? "
        "Ines Marlow: The price has gone up by a third since the spring, and the mills expect more. "
        "We bake smaller loaves now rather than charge more for each one. "
        "Our customers noticed at once, but most of them stayed with us. "
        "Many small bakers in the county will not survive another dry summer. "
        "The markets remain the best place to sell bread that people trust."
    )
    got = refusals(nlp, text)
    for sentence in ("We bake smaller loaves now rather than charge more for each one.",
                     "The markets remain the best place to sell bread that people trust."):  # fmt: skip
        assert got[sentence] == "interview"


def test_an_exchange_whose_labelled_lines_the_gate_dropped_marks_an_interview(nlp):
    # the outlet's question and the answer's first line open with labels, so the gate drops
    # both as labelled entries; each label is written once, and later questions are bare
    text = (
        "Gazette: What is new about the bakery's winter menu? "
        "Ines Marlow: The winter menu adds four breads made from rye grown in the county. "
        "The rye is milled in Athenry and baked on the same day. "
        "Customers can order the breads online and collect them at the market stalls. "
        "Who buys the rye bread? Mostly older customers who remember it from their childhood. "
        "The shop also sells the flour in small bags for home bakers."
    )
    got = refusals(nlp, text)
    assert "Ines Marlow: The winter menu adds four breads made from rye grown in the county." not in got  # dropped
    for sentence in ("The rye is milled in Athenry and baked on the same day.",
                     "The shop also sells the flour in small bags for home bakers."):  # fmt: skip
        assert got[sentence] == "interview"


def test_an_askers_label_after_a_teasers_dateline_and_a_dash_marks_an_interview(nlp):
    # a related-story teaser ends in its date; the outlet's label follows a dash on the same line
    text = (
        "Bakers across the west are cutting the size of their loaves as the cost of flour climbs. (12.04.2019) "
        "-Gazette: Ms Marlow, what has the drought done to the price of flour this year? "
        "Ines Marlow: The price has gone up by a third since the spring, and the mills expect more. "
        "We bake smaller loaves now rather than charge more for each one. "
        "Many small bakers in the county will not survive another dry summer."
    )
    got = refusals(nlp, text)
    for sentence in ("We bake smaller loaves now rather than charge more for each one.",
                     "Many small bakers in the county will not survive another dry summer."):  # fmt: skip
        assert got[sentence] == "interview"


def test_questions_put_to_someone_and_answered_in_any_person_mark_an_interview(nlp):
    # a Q&A without labels: the questions address the interviewee, the answers do not open in the first person
    text = INTRO + (
        "Following are edited excerpts from the conversation: What is your view of the flour market this winter? "
        "Prices have risen by a third since the spring, and the mills expect more. "
        "How do you choose your suppliers? Quality comes first, then the distance the grain travels. "
        "What is your advice to new bakers? Start small and keep the costs low for the first two years. "
        "The shop opens a fourth branch in Sligo next month."
    )
    got = refusals(nlp, text)
    assert got[INTRO.split(". ")[0] + "."] == ""  # the writer's own introduction
    for sentence in ("Prices have risen by a third since the spring, and the mills expect more.",
                     "The shop opens a fourth branch in Sligo next month."):  # fmt: skip
        assert got[sentence] == "interview"


def test_an_advice_columns_questions_to_the_reader_make_no_interview(nlp):
    # the writer speaks to "you" in statements too: the questions are the writer's own
    text = (
        "If you bake at home, your oven is probably hotter than its dial says. "
        "You can check it with a cheap thermometer from any hardware shop. "
        "What does your bread look like after forty minutes? A pale crust means the oven runs cool. "
        "How long do you knead the dough? Ten minutes by hand is enough for most loaves. "
        "Which flour do you buy? Strong flour makes a lighter loaf than plain flour. "
        "You will see the difference in a week of baking."
    )
    assert set(refusals(nlp, text).values()) == {""}


def test_a_question_before_a_kicker_or_under_one_speaker_makes_no_exchange(nlp):
    text = INTRO + (
        "Marlow: Can a bakery live on market days alone? It can, if the stalls are in three towns. "
        "Her bread sells out by noon on most Saturdays, and she now employs four people at the ovens. "
        "Is the trade growing in the west? READ MORE: Bakers in the west are closing their doors. "
        "The county's bakers sold more rye bread last year than in any year since the records began."
    )
    assert set(refusals(nlp, text).values()) == {""}


@pytest.mark.parametrize(
    "text",
    [
        # a speaker's own rhetorical questions, answered in the same voice: the document's claim
        "The minister spoke for an hour in the chamber on Tuesday and set out the plan for the harbour. "
        "Do you believe we can build the new quay without closing the old one? I do. "
        "Do you believe we can pay for it without a new tax on fishing boats? I know we can. "
        "The work starts in May and ends before the winter storms arrive on the coast.",
        # an explainer's question subheads answered in the third person
        "The council will vote on the harbour plan next week after a long consultation with the town. "
        "What does the plan mean for your street? The council says that traffic on the quay will fall by half. "
        "Will your rates go up? The plan is paid for by a grant from the national government, not by rates. "
        "The vote is on Thursday evening in the town hall, and the public may attend it.",
        # one question and answer only
        "The mayor took questions from readers in the library on Saturday morning for two hours. "
        "Why did you close the pool? We closed it because the roof was no longer safe to stand under. "
        "The pool will reopen in the autumn after repairs paid for by the county.",
    ],
)
def test_questions_that_are_not_an_interview_refuse_nothing(nlp, text):
    assert set(refusals(nlp, text).values()) == {""}


def test_words_after_a_reporting_verb_and_a_colon_are_not_needles(nlp):
    text = (
        "The union printed a card for every driver in the depot last winter. "
        "The card simply says: I will not drive a bus with broken brakes. "
        "The company replaced the brakes on all of its buses by March."
    )
    assert list(refusals(nlp, text).values()) == ["", "speech_after_colon", ""]


@pytest.mark.parametrize(
    "sentence",
    [
        "In my report to the board last year I wrote: The bridge needs new cables before the winter.",
        "The choice before the council may be simply stated: We repair the bridge or we close it.",
    ],
)
def test_the_writers_own_words_after_a_colon_may_be_needles(nlp, sentence):
    text = f"The council met on Monday evening in the town hall. {sentence} The vote is next week."
    assert refusals(nlp, text)[sentence] == ""


@pytest.mark.parametrize(
    "line",
    [
        "14:05 - Police have closed the coast road between the two villages.",
        "9.30am: The first ferry of the day has left the harbour on time.",
        "10:15 GMT | The minister has arrived at the summit in the capital.",
        "UPDATE 3: The fire brigade says the blaze in the warehouse is under control.",
        "Update: The road has reopened to traffic in both directions.",
        "BREAKING: The council has voted to close the old bridge.",
        "67' Murphy heads the ball over the bar from six yards out.",
        "90+2 min: The referee blows for full time in the rain.",
    ],
)
def test_timestamped_live_entries_are_neither_needles_nor_hay(nlp, line):
    assert live_entry(line) == "live_entry"
    prose = "The council met in the town hall on Monday evening to discuss the new harbour wall."
    text = f"{prose} {line} {prose.replace('Monday', 'Friday')}"
    got = refusals(nlp, text)
    assert got[prose] == got[prose.replace("Monday", "Friday")] == ""
    # dropped; or, where the parser split the label off as a "sentence" of its own, kept in hay only
    assert set(got) - {prose, prose.replace("Monday", "Friday")} <= {line.split(": ", 1)[-1]}
    assert all(why == "live_entry" for t, why in got.items() if t in line)


@pytest.mark.parametrize(
    "sentence",
    [
        "At 14:05 the police closed the coast road between the two villages.",
        "3.50 euros is what a loaf costs at the market now.",
        "Updated figures show that the harbour took in more fish this year.",
        "45 minutes later the ferry left the harbour.",
    ],
)
def test_times_and_figures_in_prose_are_not_live_entries(sentence):
    assert live_entry(sentence) is None


def test_a_speakers_label_before_a_quotation_to_the_sentence_end_is_not_a_needle(nlp):
    # a run of reactions, each a label and the speaker's words: the writer's only words name who spoke
    text = (
        "Lawmakers from both parties reacted to the budget on Thursday. "
        'Sen. Ann Walsh (D-Ore.): "We will never accept cuts to the ferry service in the west." '
        "The vote on the budget is expected next month."
    )
    assert list(refusals(nlp, text).values()) == ["", "labelled_quotation", ""]
    # a reporting verb before the colon is the writer's sentence; its quotation is the rules' to avoid
    said = 'Ann Walsh said on Thursday: "We will never accept cuts to the ferry service in the west."'
    assert refusals(nlp, f"Lawmakers reacted to the budget on Thursday. {said} The vote is next month.")[said] != "labelled_quotation"


def test_a_sentence_sliced_from_the_document_text_is_its_span_text(nlp):
    # speech_refusals reads each kept sentence as doc.text[start_char:end_char], not Span.text
    # (which joins the tokens anew at each call): the two must agree, runs of spaces and line breaks too
    doc = nlp("The ferry left Cobh at noon.  It   carried forty cars \n\nand two buses. Did you see it?\n")
    sentences = list(doc.sents)
    assert len(sentences) >= 3
    for sent in sentences:
        assert doc.text[sent.start_char : sent.end_char] == sent.text


def test_a_speech_an_introduction_declares_in_full_is_not_needles(nlp):
    # the part after "Here is <name>'s <speech> in full:" is the speaker's words without marks
    text = (
        "The harbour master Ines Marlow spoke to the port council on Monday evening about the new quay. "
        "Here is Ines Marlow's address to the council in full: Friends, tonight we open a new chapter for this port. "
        "We have dredged the channel and rebuilt the north pier over two long winters. "
        "Our ferries will sail to Cobh twice a day from the first week of May."
    )
    got = refusals(nlp, text)
    assert got["The harbour master Ines Marlow spoke to the port council on Monday evening about the new quay."] == ""
    speech = [t for t in got if not t.startswith("The harbour master")]
    assert len(speech) >= 2
    assert all(got[t] == "declared_speech" for t in speech)


@pytest.mark.parametrize(
    "intro",
    [
        "The full text of the minister's statement follows:",
        "Below is the transcript of his remarks, in full:",
        # a "full" statement, with a plural's bare apostrophe, and the news dataset's dash left after the colon
        "Ana Ruiz's full statement reads:",
        "The ministers' complete remarks follow:-",
    ],
)
def test_other_forms_of_a_declared_full_text_mark_a_speech(nlp, intro):
    text = (
        "The fisheries minister Ana Ruiz answered the port council's letter on Friday. "
        f"{intro} We have heard the council and we share its worry about the quota. "
        "Our department will publish new figures for the bay before the summer."
    )
    got = refusals(nlp, text)
    assert got["The fisheries minister Ana Ruiz answered the port council's letter on Friday."] == ""
    assert got["Our department will publish new figures for the bay before the summer."] == "declared_speech"


@pytest.mark.parametrize("label", ["Remarks as prepared for delivery", "(As delivered)", "Full text:", "Transcript:"])
def test_a_speech_printed_under_a_release_label_with_no_introduction_is_not_needles(nlp, label):
    # the document is the speech itself: no sentence of it is the outlet's claim
    text = (
        f"{label} Friends of the harbour, thank you for coming out on such a cold night. "
        "We have dredged the channel and rebuilt the north pier over two long winters. "
        "The ferries will sail to Cobh twice a day from the first week of May."
    )
    got = refusals(nlp, text)
    assert got["The ferries will sail to Cobh twice a day from the first week of May."] == "declared_speech"


def test_a_release_label_that_cleaning_drops_still_marks_the_document_as_a_speech(nlp):
    # one line per document, the label set off by a run of spaces (a line break the text lost): cleaning drops
    # the label as a line without a sentence end, so prepare notes it from the raw text before screening
    raw = (
        "Remarks as prepared for delivery   TO THE HARBOUR COUNCIL:   Friends of the harbour, thank you for coming "
        "out on such a cold night. We have dredged the channel and rebuilt the north pier over two long winters. "
        "The ferries will sail to Cobh twice a day from the first week of May."
    )
    doc = nlp(clean_text(raw))
    assert not doc.text.startswith("Remarks")
    mark_speech_label(doc, raw)
    sentences = document_sentences(doc)
    got = dict(zip(sentences.texts, needle_refusals(doc, sentences.spans)))
    assert got["The ferries will sail to Cobh twice a day from the first week of May."] == "declared_speech"
    # a report that does not open with a label is not marked
    report = "The council met on Monday. The ferries will sail to Cobh twice a day from the first week of May."
    doc = nlp(clean_text(report))
    mark_speech_label(doc, report)
    assert "declared_speech" not in needle_refusals(doc, document_sentences(doc).spans)


@pytest.mark.parametrize(
    "text",
    [
        # a release label's words inside the writer's sentence, and a link label over a report in the third person
        "The remarks as prepared for delivery said we would see the pier rebuilt by May. "
        "The council has spent most of its budget on the new pier since it took office.",
        "Full text: The mayor's budget speech The council has spent most of its budget on the new pier. "
        "The ferries will sail to Cobh twice a day from the first week of May.",
        # a link label names no speech of anyone: the article goes on in the writer's voice
        "The mayor took questions for an hour on Thursday. Full transcript: The mayor's news conference "
        "The council has spent most of its budget on the new pier since it took office in May.",
        # a reporting frame with a colon and no declaration of a full text
        "The harbour master gave a statement to the council on Monday. In her statement she set out three points: "
        "the channel has been dredged, the pier rebuilt and the ferry timetable doubled.",
        # a full statement that names no one's: a link's label, as "Full transcript:" above
        "The council met for an hour on Thursday. Read the full statement: "
        "The council has spent most of its budget on the new pier since it took office in May.",
        # a speech that is the document itself, in its author's voice, with bracketed audience reactions
        "Members of the council, we meet tonight in a port that works again. (Applause.) "
        "We have dredged the channel and rebuilt the north pier over two long winters.",
    ],
)
def test_no_declared_speech_without_an_introduction_that_gives_a_speech_in_full(nlp, text):
    assert "declared_speech" not in refusals(nlp, text).values()


PULL_QUOTE_DOCUMENT = (
    "The council closed the old ferry route to the islands in March. Many families now wait for weeks to see a doctor. "
    "Where is the danger in this boat? Look at it. If my son does not get to Cork for treatment, his health will fail. "
    "He needs help now. Ann Walsh, ferry user on Inis Beag While the route was closed for all passengers, the council "
    "kept a freight service running twice a week. The islanders have asked the minister to restore the service."
)


def test_the_sentences_before_a_dropped_pull_quote_attribution_are_not_needles(nlp):
    found = refusals(nlp, PULL_QUOTE_DOCUMENT)
    assert "Ann Walsh, ferry user on Inis Beag" not in " ".join(found)  # the attribution line itself is dropped
    quoted = ["Where is the danger in this boat?", "Look at it.", "If my son does not get to Cork for treatment, his health will fail.", "He needs help now."]
    assert [found[s] for s in quoted] == ["pull_quote"] * 4
    # the writer's sentences before the reach and after the line stay needles
    assert found["Many families now wait for weeks to see a doctor."] == ""
    assert found["The islanders have asked the minister to restore the service."] == ""


def test_a_name_and_a_description_inside_a_sentence_is_no_attribution_line(nlp):
    text = PULL_QUOTE_DOCUMENT.replace("Ann Walsh, ferry user on Inis Beag While", "Ann Walsh, a ferry user on Inis Beag, said that while")
    found = refusals(nlp, text)
    assert found["He needs help now."] == ""
