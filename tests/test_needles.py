"""Needle rules on real spaCy parses (the `nlp` session fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.seeding import item_rng

from engine.corpus import clean_text
from engine.entities import date_shaped, document_entity_texts, entity_options, entity_shape, name_shaped
from engine.needles import (
    EntityOption,
    apply_entity,
    find_needle_sentence,
    iter_sentences,
    negate,
    scan_order,
    swap_conjunctions,
)


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


# -- neg --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the paper's own examples
        ("The museum was popular with tourists.", "The museum was not popular with tourists."),
        ("She has worked at the library since 2001.", "She has not worked at the library since 2001."),
        ("The author published the book in 1990.", "The author did not publish the book in 1990."),
        # do-support agrees in tense and person
        ("He works at the factory near the river.", "He does not work at the factory near the river."),
        ("The brothers work at the factory near the river.", "The brothers do not work at the factory near the river."),
        ("From 1765 until 1772, he had a shop at Castlehill.", "From 1765 until 1772, he did not have a shop at Castlehill."),
        # passive: "not" after the first auxiliary
        ("The bridge was built by the army in 1850.", "The bridge was not built by the army in 1850."),
        ("The bridge will be rebuilt by the city.", "The bridge will not be rebuilt by the city."),
        # existential "be" is a copula even when tagged VERB
        ("In addition, there are several decibel scales.", "In addition, there are not several decibel scales."),
    ],
)
def test_negation_rules(nlp, text, expected):
    assert negate(first_sentence(nlp, text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The workers did not strike that year.",  # dep neg
        "He never returned to the city.",  # lemma never
        "No trains stopped at the station.",  # lemma no
        "The workers didn't strike that year.",  # n't
        "A list of rivers in Romania.",  # no verbal root
        "Sunny skies over the harbour at dawn.",  # no verbal root
    ],
)
def test_negation_skips(nlp, text):
    assert negate(first_sentence(nlp, text)) is None


def test_negation_never_edits_quoted_speech(nlp):
    text = 'He held a sign bearing the words "Jesus Gives Peace, Jesus is Alive, Jesus is Lord".'
    result = negate(first_sentence(nlp, text))
    assert result is None or '"Jesus Gives Peace, Jesus is Alive, Jesus is Lord"' in result


def test_negation_requires_a_subject(nlp):
    assert negate(first_sentence(nlp, "Go to the station and buy two tickets.")) is None


# -- con --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The team won the league and the cup.", "The team won the league or the cup."),
        ("And the crowd cheered or left the stadium.", "Or the crowd cheered and left the stadium."),
        ("AND the ships sailed OR sank.", "OR the ships sailed AND sank."),
        ("Marks & Spencer sells food and clothing in London.", "Marks & Spencer sells food or clothing in London."),
    ],
)
def test_conjunction_swap_keeps_casing_and_ampersand(nlp, text, expected):
    assert swap_conjunctions(first_sentence(nlp, text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Either the mayor or the council decides.",
        "Both the mayor and the council agreed.",
        "It is unclear whether he left or stayed.",
        "Between 1990 and 2000 the town grew.",
        "Marks & Spencer sells food in London.",  # "&" is never swapped
        "He and his wife were born in Ohio.",  # subject coordination: "or" would break agreement
        "The brothers Paolo and Domenico Condello were arrested in January 1988.",  # inside the subject
        "The Hay Head and Linley workings were both on a large scale.",  # "both"
    ],
)
def test_conjunction_skips(nlp, text):
    assert swap_conjunctions(first_sentence(nlp, text)) is None


# -- ner (engine.entities) --------------------------------------------------


def options_by_sentence(nlp, text):
    doc = nlp(text)
    entities = document_entity_texts(doc)
    return entities, [entity_options(s, entities) for s in doc.sents]


def test_entity_options_swap_same_label_names_and_dates(nlp):
    entities, per_sentence = options_by_sentence(
        nlp, "Howard Roark met John Galt in Denver. John Galt lives in Colorado. Dagny Taggart met Galt in Chicago. Galt said nothing."
    )
    first = {o.text: o for o in per_sentence[0]}
    assert first["John Galt"].replacements == ("Dagny Taggart",)  # multi-token, one unit; "Howard Roark" is in the sentence
    text = "Howard Roark met John Galt in Denver."
    for option in per_sentence[0]:
        assert text[option.start : option.end] == option.text


def test_same_referent_is_never_a_replacement(nlp):
    """"Galt" / "John Galt", "Europe" / "Southeastern Europe" name one referent."""
    _, per_sentence = options_by_sentence(
        nlp, "Howard Roark met John Galt in Denver. John Galt lives in Colorado. Dagny Taggart met Galt in Chicago. Galt said nothing."
    )
    for options in per_sentence:
        for option in options:
            assert not ({option.text, *option.replacements} >= {"Galt", "John Galt"})
    entities, per_sentence = options_by_sentence(nlp, "Trade grew between Asia and Europe. Southeastern Europe traded with Asia.")
    assert entities.labels.get("Europe") == "LOC" and entities.labels.get("Southeastern Europe") == "LOC"
    assert all("Southeastern Europe" not in o.replacements for o in per_sentence[0] if o.text == "Europe")


def test_label_comes_from_the_document_not_one_tag(nlp):
    """The model tags "Gershwin" PERSON once and GPE twice here; with no 2/3
    agreement it is neither a span nor a replacement (the paper's rule swapped
    it as a place: "Beverly Hills uses common time")."""
    doc = nlp("George Gershwin wrote the song in 1924. Gershwin played it in New York. In the B section, Gershwin uses common time. Cole Porter admired Gershwin.")
    assert {e.label_ for e in doc.ents if e.text == "Gershwin"} >= {"PERSON", "GPE"}
    entities = document_entity_texts(doc)
    assert "Gershwin" not in entities.labels
    sentences = list(doc.sents)
    assert entity_options(sentences[2], entities) == ()
    assert all(r != "Gershwin" for values in entities.names.values() for r in values)


def test_articles_fit_the_replacement(nlp):
    """A name heading its noun phrase with "the" is replaced only by a name the
    document also uses with "the", and the other way round ("ties with the Europe")."""
    entities, per_sentence = options_by_sentence(
        nlp,
        "The treaty ties Spain with the United States. Spain and France signed it with the Netherlands. "
        "Later the United States and the Netherlands left, and Spain stayed with France.",
    )
    assert entities.articles.get("United States") == "the" and entities.articles.get("Spain") == "bare"
    for options in per_sentence:
        for option in options:
            if option.label == "GPE":
                slot = entities.articles.get(option.text)
                assert all(entities.articles.get(r) == slot for r in option.replacements), option


def test_sentence_initial_replacement_is_capitalised(nlp):
    doc = nlp("The 1970s were calm in the town. In the 1980s the mill closed. The mill reopened in the 1990s.")
    entities = document_entity_texts(doc)
    first = entity_options(next(iter(doc.sents)), entities)
    assert first and all(r[:1].isupper() for o in first if o.start == 0 for r in o.replacements)
    assert {r.lower() for o in first for r in o.replacements} <= {"the 1980s", "the 1990s"}


def test_date_swaps_are_date_shaped(nlp):
    _, per_sentence = options_by_sentence(nlp, "The density is 1976 kg/m3 in 1990. The plant opened in 1985 and closed in May 1990.")
    assert [o.text for o in per_sentence[0]] == ["1990"]  # "1976" counts kilograms here
    assert date_shaped("1947") and date_shaped("15 May 1873") and date_shaped("the late 1970s") and date_shaped("the 14th century")
    assert not date_shaped("today") and not date_shaped("four years") and not date_shaped("1976 kg/m3") and not date_shaped("2–0")
    assert entity_shape("1947", "DATE") == entity_shape("1923", "DATE")
    assert entity_shape("15 May 1873", "DATE") == entity_shape("2 June 1990", "DATE")
    assert entity_shape("September 1988", "DATE") != entity_shape("October 13, 1985", "DATE")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("Andy Roddick", True),
        ("J. D. Anderson", True),
        ("Sea of Marmara", True),
        ("O'Brien", True),
        ("suffix", False),  # lower-case words the model stored as names
        ("tuba", False),
        ("Andy Roddick/", False),  # stray punctuation and markup
        ("Bernardo de Galvez.jpg|", False),
        ("Apollo 11", False),  # digits
        ("Sultan Ali Syah I.", False),  # a sentence's full stop taken into the name
    ],
)
def test_name_shape(text, ok):
    assert name_shaped(text) is ok


def test_mislabelled_and_partial_names_are_not_options(nlp):
    """A PERSON after a place preposition, a name cut out of a longer one
    ("Kilij Arslan I"), a person's name used as a modifier ("the Hall effect")."""
    _, per_sentence = options_by_sentence(
        nlp,
        "Kilij Arslan I was unable to help. Kilij Arslan lost to John Comnenus. John Comnenus won. "
        "In 1964 he opened a folk club in Hemel Hempstead. Wizz Jones played there with Clive Palmer.",
    )
    assert all(o.text != "Kilij Arslan" for o in per_sentence[0])
    assert all(o.text != "Hemel Hempstead" for options in per_sentence for o in options)


def test_quoted_entities_are_no_options(nlp):
    _, per_sentence = options_by_sentence(
        nlp, 'In "United States v. Smith", the court in Texas ruled. The United States and Mexico agreed. Texas and Mexico signed.'
    )
    assert all(o.text != "United States" for o in per_sentence[0])


def test_apply_entity_keeps_whitespace_and_punctuation():
    option = EntityOption(0, 5, "GPE", "Paris", ("Rome",))
    assert apply_entity("Paris (France) is big.", option, "Rome") == "Rome (France) is big."
    with pytest.raises(ValueError, match="not at"):
        apply_entity("Something else entirely.", option, "Rome")


# -- the hand-labelled gold set (tests/data/needle_gold/ner*.jsonl) ----------

GOLD = Path(__file__).parent / "data" / "needle_gold"
SAMPLE = Path(__file__).parents[1] / "engine" / "data" / "wiki_sample.json"


def _gold(name):
    return [json.loads(line) for line in (GOLD / name).read_text(encoding="utf-8").splitlines()]


def test_gold_set_is_complete_and_labelled():
    rows = _gold("ner.jsonl") + _gold("ner_fresh.jsonl")
    assert all(r["label"] in ("correct", "meaning-odd", "ungrammatical", "wrong") and r["note"] for r in rows)
    assert sum(r["generator"] == "before" for r in _gold("ner.jsonl")) >= 60
    assert len(_gold("ner_fresh.jsonl")) >= 60
    for r in rows:
        head, tail = r["sentence"].split(r["span_before"], 1)[0], None
        assert r["perturbed"].startswith(head) and r["span_after"] in r["perturbed"], r["doc_id"]


def test_generator_still_produces_the_labelled_after_outputs(nlp):
    """Re-derive every "after" needle of the gold set from its document (seed 1,
    the draw engine.pairs makes): a change to the generator that alters one
    fails here and forces the sentence to be labelled again. Sentences the
    generator refused when labelled must still be refused."""
    rows = _gold("ner.jsonl") + _gold("ner_fresh.jsonl")
    after = {(r["doc_id"], r["sentence"]): r for r in rows if r["generator"] == "after"}
    refused = {(r["doc_id"], r["sentence"]) for r in rows if r["generator"] == "before"} - set(after)
    wanted = {doc_id for doc_id, _ in after.keys() | refused}
    raw = {d["id"]: d for d in json.loads(SAMPLE.read_text(encoding="utf-8")) if d["id"] in wanted}
    ids = sorted(wanted)
    texts = (clean_text(raw[i]["text"], raw[i]["title"]) for i in ids)
    for doc_id, doc in zip(ids, nlp.pipe(texts, batch_size=16)):
        entities = document_entity_texts(doc)
        sentences = {s.text.strip(): s for s in iter_sentences(doc)}
        for (d, sentence), row in after.items():
            if d != doc_id:
                continue
            assert sentence in sentences, f"{doc_id}: cleaning or splitting changed this gold sentence; label it again"
            options = entity_options(sentences[sentence], entities)
            rng = item_rng(1, "ner", doc_id)
            option = options[int(rng.integers(len(options)))]
            replacement = option.replacements[int(rng.integers(len(option.replacements)))]
            assert apply_entity(sentence, option, replacement) == row["perturbed"], (doc_id, row["perturbed"])
        for d, sentence in refused:
            if d == doc_id:
                assert sentence in sentences, f"{doc_id}: cleaning or splitting changed this gold sentence; label it again"
                assert entity_options(sentences[sentence], entities) == (), (doc_id, sentence)


# -- the needle sentence ------------------------------------------------------


def test_scan_order_alternates_and_stays_inside():
    assert scan_order(5, 20, 2) == [5, 4, 6, 3, 7]
    assert scan_order(1, 3, 5) == [1, 0, 2]
    assert scan_order(4, 10, 0) == [4]


def test_fallback_scans_to_the_nearest_admitting_sentence(nlp):
    plain = "The museum opened in 1990."
    text = " ".join([plain] * 4 + ["The team won the league and the cup."] + [plain] * 6)
    sentences = list(nlp(text).sents)
    assert len(sentences) == 11
    middle = 5
    found = find_needle_sentence(sentences, middle, 5, swap_conjunctions)
    assert found is not None and found[0] == 4
    assert found[1] == "The team won the league or the cup."
    assert find_needle_sentence(sentences, middle, 0, swap_conjunctions) is None  # beyond the radius
    far = list(nlp(" ".join([plain] * 10 + ["The team won the league and the cup."])).sents)
    assert find_needle_sentence(far, 4, 5, swap_conjunctions) is None  # 6 away from the middle


# -- the hand-checked sample (tests/data/hand_check_sample.jsonl) ------------

HAND_CHECK = Path(__file__).parent / "data" / "hand_check_sample.jsonl"


def test_hand_check_sample_is_complete():
    rows = [json.loads(line) for line in HAND_CHECK.read_text(encoding="utf-8").splitlines()]
    assert [sum(r["needle"] == n for r in rows) for n in ("neg", "con", "ner")] == [30, 30, 30]
    assert all(isinstance(r["fluent"], bool) and isinstance(r["correct"], bool) for r in rows)
    assert all(r["note"] for r in rows if not (r["fluent"] and r["correct"]))  # every failure explained


def test_rules_still_produce_the_hand_approved_neg_and_con_sentences(nlp):
    """Regression: re-parsing each approved needle sentence on its own gives
    the same perturbation the person read and approved."""
    rows = [json.loads(line) for line in HAND_CHECK.read_text(encoding="utf-8").splitlines()]
    approved = [r for r in rows if r["needle"] in ("neg", "con") and r["fluent"] and r["correct"]]
    assert len(approved) >= 55
    rule = {"neg": negate, "con": swap_conjunctions}
    for row, doc in zip(approved, nlp.pipe(r["needle_before"] for r in approved)):
        assert rule[row["needle"]](next(iter(doc.sents))) == row["needle_after"], row["n"]
