"""Entity-swap (ner) needles: which entities of a sentence may be replaced, and by what.

The paper's rule: replace one PERSON/GPE/LOC/LANGUAGE/DATE entity of the
needle sentence with a different entity of the same label from the same
document. The small English model's single tags are often wrong (a stadium
tagged PERSON, a band tagged GPE, "1976 kg/m3" tagged DATE), so a span and
a replacement are accepted only when the document and their form agree on
what they are:

- Label by the document: every mention of a text votes with its tag (a
  one-word text also gets the vote of every multi-word entity it ends, so
  "Gershwin" counts as PERSON when "George Gershwin" is one); a text's label
  is its majority label, kept only when at least 2/3 of the votes agree.
  A mention tagged otherwise is read with the document's label.
- Form: names (PERSON, GPE, LOC, LANGUAGE) are capitalised words with no
  digits and no punctuation beyond initials, hyphens and apostrophes
  (lower-case particles such as "of", "de" inside); a PERSON has no plural
  proper noun, is not a modifier ("the Hall effect") and is not a title
  ("Earl of Westmorland", `TITLE_WORDS` + "of"). A mention that runs
  into another capitalised proper noun ("Kilij Arslan I", "Estrela da
  Amadora") or hangs by a preposition on a capitalised word that is not a
  place or person ("A Night in Rome", a title) is part of a longer name
  and is neither span nor replacement. A DATE is date-shaped (a year, a
  month, a day, a decade or a century with only date words around them)
  and is replaced by one of the same shape (`entity_shape`, in
  engine.needles.entity_form: a year for a year, a month-year for a
  month-year); on the second pass (`with_gazetteer`) a document's date
  less its year too ("3 March 2015" gives "3 March" for "12 June").
- Places (GPE, LOC): only a place the gazetteers know (engine.needles.places:
  pycountry, GeoNames) is a span, and it is replaced by a known place of
  the same kind (country, region, continent, city; from either place
  label) that neither names, contains nor lies inside it, and that stands
  to every other place of the sentence as it did ("the US and UK" never
  becomes "the United Kingdom and UK", "Paris, France" never "Berlin,
  France"); a sentence naming a place the data do not know gets no place
  swap. A known place needs one mention, not MIN_SUPPORT: the data vouch
  for what it is. A document that names no other place of the span's kind
  may, on a second pass (`with_gazetteer`), take one from the gazetteers
  (`places.gazetteer_likes`), written bare; on a document that mentions a
  year before GAZETTEER_SINCE, when borders and names differed, only a
  continent (TIMELESS_KINDS) does.
- Evidence from every mention (`_contradicted_by_syntax` on each, and
  `not_a_person`, engine.needles.person_evidence): one mention that contradicts the label refuses the text
  everywhere; a span needs MIN_SUPPORT mentions; a replacement is a text all
  of whose mentions fit its label.
- Different referents: a replacement never shares a word with the span
  ("Galt" / "John Galt", "Europe" / "Southeastern Europe") and never
  repeats a name or date already in the sentence ("X defeated X"), nor
  with a name given as the span's alias ("X, commonly known as Y"); the
  repeat is read in the words that name something, less the lowercase
  function words a date may be written with (`_repeats_the_sentence`:
  "from May 1990 to May of 2001" never becomes "... to May of 1990").
- Articles: a leading "the" is read as outside the name. A name heading its
  noun phrase is replaced only by a name the document uses the same way,
  with "the" ("the United States") or without ("France"), so "with the
  Europe" cannot arise; a name modifying a noun ("the Quebec government")
  takes either.
- A span at the start of the sentence gets a capitalised replacement.

Entities inside quotation marks and names after "a"/"an"/"this"... are
not options.

Two-model agreement (`model = "en_core_web_sm+en_core_web_md"`): a text two
models do not tag alike at every mention is neither span nor replacement
(`disputed_texts`); the errors the rules above leave are one model's confident tags.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import msgspec

from engine.needles.edits import EntityOption, sentence_bounds
from engine.needles.edits import _inside_quotes as inside_quotes
from engine.needles.entity_form import NAME_PARTICLES, NAMED_AFTER_A_PLACE, article_misfit, date_in_a_name, date_shaped, entity_shape, name_words, possessive_misfit, shaped, takes_the
from engine.needles.place_syntax import article_alone, called_a_dependency, contained_places, described_by_nationality, unnamed_place_phrase
from engine.needles.place_syntax import country_modifier_fits, is_country, names_an_act, of_polities, party_of_states
from engine.needles.part_of_a_name import INSTRUMENT_NOUNS, only_titles, part_of_a_name
from engine.needles.name_kind_nouns import PLACE_FIRST_NOUNS
from engine.needles.person_evidence import aliases, character_names, courtesy_title, not_a_person, quoted_alone, title_before, titled_mentions
from engine.needles.places import NEAR_POPULATION, city_population, country_article, gazetteer_likes, place_of, same_kind_places
from engine.needles.states_then import countries_not_states_then, states_not_yet_admitted

if TYPE_CHECKING:  # spaCy objects come in as arguments
    from spacy.tokens import Doc, Span

# doc.user_data key: ((start_char, end_char, label), ...) of a second model's entities of the same text
SECOND_MODEL_ENTS = "needlejudge_second_model_ents"
NER_LABELS = frozenset({"PERSON", "GPE", "LOC", "LANGUAGE", "DATE"})
PLACE_LABELS = frozenset({"GPE", "LOC"})  # swapped only for a known place of the same kind (engine.needles.places)
LABEL_AGREEMENT = 2 / 3  # share of a text's mentions that must carry its label
MIN_SUPPORT = 2  # mentions (or full name / surname pairs) a one-word name needs for its label
PLACE_DISPUTE_SHARE = 0.2  # share of a known place's mentions two models may tag otherwise (disputed_texts)
# last words that make a capitalised phrase a place, building, organisation or
# work rather than a person ("Goodwin Stadium", "Vaqueros Formation")
NOT_PERSON_HEADS = frozenset(
    "stadium arena formation hall church chapel methodist baptist school college university academy institute "
    "society club city county street st rd ave lane road avenue drive boulevard bridge park ridge heath hill hills valley "
    "river lake bay sea harbor harbour island mountain records band company inc ltd award medal cup league prize station "
    "hauptbahnhof airport museum theatre theater centre center hospital castle tower cathedral abbey palace "
    "temple mosque force army navy party council committee festival show house square mushroom".split()
)
WATER_AND_LAND_FEATURES = frozenset(
    "harbor harbour bay river lake sea creek mountain mountains valley island islands gulf ocean strait "
    "shoal reef atoll lagoon".split()
)
# a natural feature's name ("Monad Shoal", "Salt Creek") is no person's either, whatever a model tags it
NOT_PERSON_HEADS |= WATER_AND_LAND_FEATURES
PLACE_PREPOSITIONS = frozenset("in at near into inside outside throughout across".split())
# nouns whose "of" phrase names a place ("the town of Tal Afar"): WordNet's nouns whose first sense is a place,
# and the settlements and lands it files first under another class ("village" a community, "island" land)
_PLACE_OF_NOUNS = PLACE_FIRST_NOUNS | frozenset("village hamlet township country island capital".split())
MOTION_VERBS = frozenset("move return transfer go travel relocate emigrate".split())  # "moved to Habana": a place
# posts held in an organisation: a name after one and "of"/"at" is the organisation ("UK managing director of
# Charles Schwab", "an economist at Morgan Stanley"), not a person (kin and aides, "son of", "adviser to", are not here)
POST_NOUNS = frozenset(
    "director executive chief head president chairman chairwoman chairperson chair founder cofounder co-founder ceo "
    "officer manager analyst economist strategist partner employee researcher professor".split()
)
POST_PREPOSITIONS = frozenset({"of", "at"})
# common nouns that, written just before a name ("the band Hawthorne Heights",
# "theatre company Black Lung") or set beside it by a comma ("a biographical feature, Xu Lin,"), say it is not a person
NOT_NAME_KINDS = frozenset(
    "band group club team side label company firm magazine newspaper journal album film movie novel book song "
    "series show ship horse dog tiger animal brand network station feature documentary biopic play opera musical "
    "drama sitcom painting poem memoir".split()
)
# "Earl of Westmorland", "King of France": a title, not a person's name
TITLE_WORDS = frozenset(
    "king queen prince princess duke duchess earl count countess baron baroness lord lady marquess marquis "
    "viscount emperor empress sultan emir shah pope bishop archbishop abbot mayor governor president".split()
)
# courtesy titles a tagger takes into the name ("Ms Yellen"): such a text is neither span nor replacement
COURTESY_TITLES = frozenset("mr mrs ms miss mx sir dame mme mlle".split())
ANIMATE_VERBS = frozenset("die bear marry say".split())  # a place is never born, married, dead or saying
SPEECH_VERBS = frozenset({"say"})  # ... but a country says, by its government
_ROMAN = re.compile(r"^[IVX]+\.?$")  # "Kilij Arslan I", "Shah II"
_MODIFIER_DEPS = frozenset({"compound", "amod", "nmod"})
_NAMED_BY_ITSELF = frozenset({"PERSON", "GPE", "LOC"})  # "Merkel in Berlin", "Lahore to Peshawar": two names, not one
# the first year of today's map in the gazetteers: the Soviet Union and Yugoslavia broke up in 1991-92,
# so a document that mentions an earlier year may speak of places as they then were
GAZETTEER_SINCE = 1992
# place kinds whose members and bounds are the same at any date (engine.needles.places: the continents): the
# gazetteers may offer one of them to a document of any year, where GAZETTEER_SINCE keeps countries, regions and cities out
TIMELESS_KINDS = frozenset({"continent"})
_YEAR = re.compile(r"(?<!\d)(1\d{3})(?!\d)")
_TRAILING_YEAR = re.compile(r",?\s+\d{4}$")  # "3 March 2015", "March 3, 2015": the year a date ends in
_POSSESSIVE = frozenset({"'s", "’s", "'", "’"})
_KNOWN_PLACE = "GPE|LOC"  # the label two models' mentions of a known place are compared by (`_compared`)



class DocumentEntities(msgspec.Struct, frozen=True):
    """What the whole document says about its entities."""

    labels: dict[str, str]  # entity text (without a leading "the") -> its document label
    names: dict[str, tuple[str, ...]]  # label -> texts usable as replacements, sorted
    articles: dict[str, str]  # text -> "the" | "bare": how the document uses it as a noun phrase
    aliases: dict[str, tuple[str, ...]] = {}  # text -> words of the other names of its referent
    contained: dict[str, tuple[str, ...]] = {}  # place text -> places the document says it lies in or holds
    disputed_at: frozenset[int] = frozenset()  # start offsets of mentions two models tag otherwise
    courtesy: dict[str, str] = {}  # PERSON text -> the gender of the courtesy title the document writes it after ("Mr Hill": "m")
    gazetteer: bool = False  # a place with no same-kind place in the document may take one from the gazetteers
    timeless_gazetteer: bool = False  # ... only a place of TIMELESS_KINDS (a document before GAZETTEER_SINCE)


# ---------------------------------------------------------------------------
# Mentions


def _without_article(ent: Span) -> Span:
    """The entity without a leading "the" (kept for DATE: "the 1970s" is its shape)."""
    if ent.label_ != "DATE" and len(ent) > 1 and ent[0].lower_ == "the":
        from spacy.tokens import Span  # a slice would lose the label

        return Span(ent.doc, ent.start + 1, ent.end, label=ent.label)
    return ent


def _slot(span: Span) -> str | None:
    """How the name sits in its sentence: "mod" (modifies a following noun),
    "the" / "bare" (heads a noun phrase with / without "the"), None (another
    determiner, e.g. "a Pinocchio motor", or a determiner it does not own)."""
    root = span.root
    if root.dep_ in _MODIFIER_DEPS and root.head.i >= span.end:
        return "mod"
    doc = span.doc
    if _hyphened_to_the_next_word(span):
        return "mod"  # "the first US-headquartered bank": no evidence of how the name heads a noun phrase
    before = doc[span.start - 1] if span.start > 0 else None
    if before is not None and before.pos_ == "DET":
        if before.lower_ == "the" and before.head.i in range(span.start, span.end):
            return "the"
        return None
    return "bare"


def _a_persons_name_word(span: Span) -> bool:
    """Whether the one-word `span` is a word of a PERSON name in its
    document ("May" beside "Theresa May", "June" beside "June Carter"): a
    date alone there may be the person, so it is no date to replace (issue
    27, session 23: "with May saying" -> "with June saying")."""
    return any(e.label_ == "PERSON" and len(e) > 1 and span.text in e.text.split() for e in span.doc.ents)


def _hyphened_to_the_next_word(span: Span) -> bool:
    """Whether a hyphen with no space joins the span to the word after it ("US-headquartered", "Japan-based")."""
    doc = span.doc
    return (
        span.end + 1 < len(doc) and doc[span.end].text in ("-", "\u2013")
        and not span[-1].whitespace_ and not doc[span.end].whitespace_
    )  # fmt: skip


# prepositions that join a group's name to its cause ("Free Speech for People"); a person's name goes on with
# "of" or "from" and a place or a body ("Ann Walsh of the Harbour Board"), never with these and a capital
_CAUSE_WORDS = frozenset({"for", "against", "without"})


def _runs_into_a_name(span: Span) -> bool:
    """Whether the span is part of a longer proper name ("Kilij Arslan I",
    "Estrela da Amadora", "Executive Producer Elwood Reid", a "person" before
    "for", "against" or "without" and a capital: "Free Speech for People"), or of a title
    or name joined to it by a preposition ("A Night in Rome", "The Man from
    Laramie": the object of a preposition that hangs on a capitalised word,
    not the sentence's first, that is neither a place nor a person)."""
    doc = span.doc
    sent_start = span.sent.start

    def proper(i: int) -> bool:
        return 0 <= i < len(doc) and doc[i].pos_ == "PROPN" and doc[i].text[:1].isupper()

    after = span.end
    if after < len(doc) and (proper(after) or _ROMAN.match(doc[after].text) or (doc[after].lower_ in NAME_PARTICLES and proper(after + 1) and doc[after + 1].ent_type_ != "DATE")):
        return True
    if span.label_ == "PERSON" and after + 1 < span.sent.end and doc[after].lower_ in _CAUSE_WORDS and proper(after + 1):
        return True  # "Free Speech for People", "Doctors against Hunger": a group's name, the "person" its first words
    before = span.start - 1
    if before >= sent_start and proper(before) and not (span.label_ == "PERSON" and (title_before(span) or courtesy_title(span))):
        return True  # ... but "Senator Ana Lima", "Mr Hill" are persons after an office or title (engine.needles.person_evidence)
    if before > sent_start and doc[before].lower_ in NAME_PARTICLES and proper(before - 1):
        return True
    owner = span.root.head.head if span.root.dep_ == "pobj" else None
    if owner is not None and owner.i < span.start and owner.lemma_.lower() in NAMED_AFTER_A_PLACE and span.root.head.lower_ == "of":
        return True  # "the treaty of Paris", "the battle of Shiloh": the name of an event, written lower-case
    return owner is not None and sent_start < owner.i < span.start and owner.text[:1].isupper() and owner.ent_type_ not in _NAMED_BY_ITSELF


def _surname_shared(span: Span) -> bool:
    """Whether a full name follows a lone first name and "and" ("Mike and
    Julie Bennet"): the surname is both people's, so a replacement would
    rename the first one too ("Mike and Heather Gallagher"; issue 27, the
    set-aside read of news part 2). Not after a full name ("Ann Walsh and
    Julie Bennet")."""
    doc, k = span.doc, span.start
    if len(span) < 2 or k < 2 or doc[k - 1].lower_ not in ("and", "&"):
        return False
    first = doc[k - 2]
    return first.pos_ == "PROPN" and first.is_title and (k < 3 or doc[k - 3].pos_ != "PROPN")


def _named_beside_a_kind(span: Span) -> bool:
    """Whether a noun of NOT_NAME_KINDS stands right before the span ("the band
    Hawthorne Heights") or before a comma that sets the span beside it as its
    name, closed by a comma ("a biographical feature, Xu Lin, based on ...":
    a film named after a person)."""
    doc = span.doc

    def kind(i: int) -> bool:
        return i >= span.sent.start and doc[i].pos_ == "NOUN" and doc[i].lower_ in NOT_NAME_KINDS

    if kind(span.start - 1):
        return True
    # closed by a comma: an opening phrase ("In the E4's show, Ana Lima (who ...) voiced") is followed by its clause
    closed = span.end < span.sent.end and doc[span.end].text == ","
    return span.start - 2 >= 0 and doc[span.start - 1].text == "," and kind(span.start - 2) and closed


def _contradicted_by_syntax(span: Span, label: str) -> bool:
    """A PERSON as the object of a place preposition ("a club in Hemel
    Hempstead"), of a move ("moved to Habana"), of "of"/"at" after a post
    in an organisation ("managing director of Charles Schwab") or of "of"
    after a noun of a place ("the village of Al Jinah"), a place as the agent of a
    passive ("by West-East Bag") or the subject of being born, married, dying
    or saying ("Namaste died"), and any name right after a noun that says it
    is a band, club, company or work, or set beside one by commas
    (`_named_beside_a_kind`). A
    country the gazetteers know (engine.needles.places) may be an agent or
    say something: its government acts ("ratified by the United States",
    "Russia says"); a city or region there is more often a club or a person."""
    doc = span.doc
    if _named_beside_a_kind(span):
        return True
    root = span.root
    # a country acts and speaks by its government ("Norway says", "ratified by Norway"); it is never born or dead
    country = label in PLACE_LABELS and is_country(span.text)
    if label in PLACE_LABELS:
        verb = root.head.lemma_
        if root.dep_ in ("nsubj", "nsubjpass") and verb in ANIMATE_VERBS and not (country and verb in SPEECH_VERBS):
            return True
    if label in PLACE_LABELS and ((not country and party_of_states(span)) or called_a_dependency(span)):
        return True  # a former state of that name, or a territory or colony then: the modern kind is wrong
    head = root.head if root.dep_ == "pobj" else None
    if head is None:
        return False
    if label == "PERSON":
        if head.lower_ == "to" and head.head.lemma_ in MOTION_VERBS:
            return True
        if head.lower_ in POST_PREPOSITIONS and head.head.lemma_.lower() in POST_NOUNS and head.head.i < span.start:
            return True  # "managing director of Charles Schwab": a firm named after its founder
        if head.lower_ == "of" and head.head.i < span.start and head.head.lemma_.lower() in _PLACE_OF_NOUNS:
            return True  # "the village of Al Jinah", "the town of Tal Afar": the name of the place (issue 27, session 23)
        return head.lower_ in PLACE_PREPOSITIONS
    return label in PLACE_LABELS and head.lower_ == "by" and not country


def _fits_label(span: Span, label: str) -> bool:
    if not shaped(span.text, label) or "\n" in span.text_with_ws.strip():
        return False
    if label == "DATE":  # "the 1870's" is a decade, "1976 kg/m3" a quantity: no year fits there
        decade = span.end < len(span.doc) and span.doc[span.end].lower_ in ("'s", "’s", "s")
        return not decade and span.root.dep_ != "nummod"
    if _runs_into_a_name(span) or _contradicted_by_syntax(span, label):
        return False
    if label in PLACE_LABELS and of_polities(span) and is_country(span.text):
        return False  # "the southern nations of America": the continents, not the country
    if label != "GPE" and any(len(t.text) > 1 and t.text.isupper() and t.text.isalpha() for t in span):
        return False  # acronyms name organisations ("LARES", "NASA"), not people or regions
    if any(sum(c.isupper() for c in t.text) >= 3 and not t.text.isupper() for t in span):
        return False  # mixed-case acronyms ("MoMA") name institutions, even when tagged GPE
    if label == "PERSON":
        if any(t.tag_ == "NNPS" for t in span) or _slot(span) != "bare":
            return False  # "the Mongols", "the Hall effect", "the Beatles"
        if span[-1].lower_ in NOT_PERSON_HEADS or only_titles(span):  # "the Hall", "Chancellor"
            return False
        if len(span) > 2 and span[0].lower_ in TITLE_WORDS and span[1].lower_ == "of":
            return False  # a title ("Earl of Westmorland")
        if len(span) > 1 and span[0].lower_.rstrip(".") in COURTESY_TITLES:
            return False  # "Ms Yellen" tagged whole: "President Ms Yellen" as a replacement, a title for another person
    if label in PLACE_LABELS and (_slot(span) == "mod" and span.root.head.lower_ in INSTRUMENT_NOUNS or names_an_act(span)):
        return False  # "United States notes": a currency's name; "the Berlin and Milan decrees": acts' names
    if label == "GPE" and span[-1].lower_ in WATER_AND_LAND_FEATURES:
        return False  # "New York Harbor", "Salt Creek": a natural feature, not a polity
    return True


def _named_features(doc: Doc, places: list[Span]) -> set[str]:
    """Place texts the document also writes as the name of a natural feature
    ("Cocos" beside "Cocos Island" or "the Cocos Island Marine Park", tagged
    or not) and that the gazetteers read only as a town of fewer than
    NEAR_POPULATION people (Cocos, Bahia): the bare name is the feature's
    short form, not that town; a large city keeps its name ("San Francisco"
    beside "San Francisco Bay")."""
    found = set()
    document = None  # Doc.text joins every token anew: built once, and only for a small town's name
    for text in {p.text for p in places}:
        place = place_of(text)
        if place is None or place.kind != "city" or city_population(place) >= NEAR_POPULATION:
            continue
        document = doc.text if document is None else document
        if any(m.group(1).lower() in WATER_AND_LAND_FEATURES for m in re.finditer(rf"\b{re.escape(text)}\s+([A-Z][a-z]+)\b", document)):
            found.add(text)
    return found


def _votes(doc: Doc) -> dict[str, Counter[str]]:
    """text -> label -> mentions: its own mentions, plus the mentions that
    name the same referent by a full name / surname pair ("George Gershwin"
    and "Gershwin" vote for each other)."""
    spans = [_without_article(ent) for ent in doc.ents]
    own: dict[str, Counter[str]] = {}
    for span in spans:
        own.setdefault(span.text, Counter())[span.label_] += 1
    votes = {text: counts.copy() for text, counts in own.items()}
    for span in spans:
        last = span[-1].text
        if len(span) > 1 and last in own and last[:1].isupper():
            votes[last][span.label_] += 1
            votes[span.text][span.label_] += own[last][span.label_]
    return votes


def _support_needed(text: str, label: str) -> int:
    """Mentions a text needs for its label: one for a place the gazetteers
    know (engine.needles.places: the data vouch for it), MIN_SUPPORT otherwise."""
    return 1 if label in PLACE_LABELS and place_of(text) is not None else MIN_SUPPORT


def _compared(ent: Span) -> tuple[int, int, str, str]:
    """A mention (start, end, label, text) as the two models' are compared:
    without a leading "the" (`_without_article`) nor a trailing possessive
    ("Maria Okafor's" and "Maria Okafor" name one person), and with one label
    for a place the gazetteers know (GPE and LOC lead to the same
    replacements, engine.needles.places)."""
    span = _without_article(ent)
    start, end, text = span.start_char, span.end_char, span.text
    if len(span) > 1 and span[-1].text in _POSSESSIVE:
        end = span[-2].idx + len(span[-2].text)
        text = span[:-1].text  # not span.doc.text[start:end]: Doc.text joins every token anew
    label = span.label_
    if label in PLACE_LABELS and place_of(text) is not None:
        label = _KNOWN_PLACE
    return start, end, label, text


def _disagreements(doc: Doc) -> tuple[set[tuple[int, int, str, str]], Counter[str]]:
    """The mentions (start, end, label, text, `_compared`) one model has and
    the other has not (none without a second model), and each text's
    first-model mentions. A mention only the second model tags, where the
    first tags no name of those bounds, is left out when it gives its text
    the one label the first model gives that text everywhere ("Turkey" in
    "EU-Turkey deal" the first model leaves untagged; "Lisbon" where the first
    tags "the Lisbon Old Quarter"): the second model agrees on what the text
    is, and what the first tags there, if anything, is disputed itself."""
    second = doc.user_data.get(SECOND_MODEL_ENTS)
    first = set(map(_compared, doc.ents))
    if second is None:
        return set(), Counter()
    others = (doc.char_span(start, end, label=label, alignment_mode="expand") for start, end, label in second)
    other = set(map(_compared, filter(None, others)))
    labels: dict[str, set[str]] = {}
    for *_, label, text in first:
        labels.setdefault(text, set()).add(label)
    bounds = {m[:2] for m in first}
    agreeing = {m for m in other - first if m[:2] not in bounds and labels.get(m[3]) == {m[2]}}
    return (first ^ other) - agreeing, Counter(text for *_, text in first)


def disputed_texts(doc: Doc) -> frozenset[str]:
    """The entity texts of `doc` that its second model (SECOND_MODEL_ENTS, set
    by engine.corpus.nlp.AgreedParser) does not tag exactly as the first does at
    every mention: a mention one model tags and the other does not, or tags
    with another span or label ("Staten Island Cahill" / "Staten Island"),
    as `_disagreements` compares them (a possessive "'s", GPE against LOC on a
    known place, and a mention only the second model tags with the text's own
    label are no disagreement).
    A place the gazetteers know (engine.needles.places) is disputed only when
    the models differ at more than PLACE_DISPUTE_SHARE of its mentions (a long
    speech names "United States" hundreds of times, and "the United States
    Government" is one model's ORG); its differing mentions are never spans
    (`disputed_starts`). Empty when the document was parsed by one model."""
    return _disputed(*_disagreements(doc))


def _disputed(differing: set[tuple[int, int, str, str]], mentions: Counter[str]) -> frozenset[str]:
    counts = Counter(text for *_, text in differing)
    return frozenset(t for t, n in counts.items() if n > PLACE_DISPUTE_SHARE * mentions[t] or place_of(t) is None)


def disputed_starts(doc: Doc) -> frozenset[int]:
    """Start offsets of the mentions the two models do not tag alike."""
    return _starts(_disagreements(doc)[0])


def _starts(differing: set[tuple[int, int, str, str]]) -> frozenset[int]:
    return frozenset(start for start, *_ in differing)


def document_entity_texts(doc: Doc, year: int | None = None) -> DocumentEntities:
    """Each entity text's document label, and the texts usable as replacements.

    A span's text needs MIN_SUPPORT votes for its label (a name the document
    mentions once is too often a mis-tagged club, band, title or work), a
    one-word name too for being a replacement; a label any mention
    contradicts (`_contradicted_by_syntax`) is dropped; a replacement is a
    text every mention of which fits its label. On a document written in
    `year`, a country it never treats as a state then is neither (engine.needles.states_then)."""
    spans = [_without_article(ent) for ent in doc.ents]
    places = [s for s in spans if s.label_ in PLACE_LABELS]
    not_states = countries_not_states_then(doc, places, year) | states_not_yet_admitted(places, year)
    not_states |= _named_features(doc, places)  # "Cocos" where the document writes "Cocos Island": the island
    differing, mentions = _disagreements(doc)  # once for disputed_texts and disputed_starts: both compare every mention
    disputed = _disputed(differing, mentions)
    full_names = {s.text for s in spans if s.label_ == "PERSON" and len(s) > 1}
    document = doc.text  # Doc.text joins every token anew: built once, not once a PERSON span
    words = {
        "in_other": {t.lower_ for s in spans if s.label_ not in NER_LABELS for t in s},
        "other_texts": {s.text for s in spans if s.label_ not in ("PERSON", "DATE")},
        "places": {s.text for s in spans if s.label_ in ("GPE", "LOC", "NORP") and len(s) == 1},
        # a "person" printed alone between quotation marks somewhere: a song's, film's or book's title
        "quoted": {text for text in {s.text for s in spans if s.label_ == "PERSON"} if quoted_alone(text, document)},
        "characters": character_names([s for s in spans if s.label_ == "PERSON"]),
    }
    labels: dict[str, str] = {}
    support: dict[str, int] = {}
    titled = titled_mentions(spans)  # "Senator Ana Lima": the document says she is a person (person_evidence)
    for text, counts in _votes(doc).items():
        label, n = counts.most_common(1)[0]
        n += titled[text] if label == "PERSON" else 0
        one_word = " " not in text
        if label not in NER_LABELS or n < LABEL_AGREEMENT * sum(counts.values()) or text in disputed:
            continue
        if label != "DATE" and one_word and n < _support_needed(text, label):
            continue
        if label == "PERSON" and not_a_person(text, one_word, full_names, words):
            continue
        labels[text] = label
        support[text] = n
    for span in spans:
        label = labels.get(span.text)
        if label and label != "DATE" and _contradicted_by_syntax(span, label):
            del labels[span.text]
    names: dict[str, set[str]] = {}
    misfits: set[str] = set()
    uses: dict[str, Counter[str]] = {}
    genders: dict[str, set[str]] = {}  # "Mr Hill", "Mrs May": the titles a name takes (person_evidence.courtesy_title)
    for span in spans:
        label = labels.get(span.text)
        if label is None or span.text in not_states or span.text.endswith(("'s", "’s")) or not _fits_label(span, label):
            misfits.add(span.text)
            continue
        if label == "PERSON" and courtesy_title(span):
            genders.setdefault(span.text, set()).add(courtesy_title(span))
        names.setdefault(label, set()).add(span.text)
        slot = _slot(span)
        if slot in ("the", "bare"):
            uses.setdefault(span.text, Counter())[slot] += 1
    articles = {text: counts.most_common(1)[0][0] for text, counts in uses.items()}
    return DocumentEntities(
        labels={t: k for t, k in labels.items() if t not in not_states and (k == "DATE" or support[t] >= _support_needed(t, k))},
        # a name the document writes after a courtesy title replaces only a name after one (entity_options)
        names={k: tuple(sorted(v - misfits - set(genders))) for k, v in names.items()},
        articles=articles,
        aliases={k: tuple(sorted(v)) for k, v in aliases(doc, _without_article, name_words).items()},
        contained=contained_places(doc, [_without_article(e) for e in doc.ents if e.label_ in PLACE_LABELS]),
        disputed_at=_starts(differing),
        courtesy={text: g.pop() for text, g in genders.items() if len(g) == 1 and text not in misfits},
    )


def with_gazetteer(doc: Doc, entities: DocumentEntities, year: int | None = None) -> DocumentEntities:
    """`entities` for a second pass in which a place the document gives no
    same-kind replacement may take one from the gazetteers
    (`places.gazetteer_likes`), and a date one of the document's dates less
    its year (`_with_their_days`). When the document was written, or
    mentions a year (a DATE entity), before GAZETTEER_SINCE, the places it
    speaks of may have had other borders, names or kinds then: only a place
    of TIMELESS_KINDS (a continent) may take one, and its dates stay as
    they are."""
    old = year is not None and year < GAZETTEER_SINCE
    years = (int(m.group(1)) for ent in doc.ents if ent.label_ == "DATE" for m in _YEAR.finditer(ent.text))
    if old or any(y < GAZETTEER_SINCE for y in years):
        return msgspec.structs.replace(entities, timeless_gazetteer=True)
    return msgspec.structs.replace(entities, gazetteer=True)


# ---------------------------------------------------------------------------
# Options of one sentence


def _with_their_days(dates: tuple[str, ...]) -> tuple[str, ...]:
    """The document's dates and, for each that ends in a year, the date
    without it ("3 March 2015" -> "3 March", "March 2015" -> "March"): a
    replacement of the shape of a date written without a year (`entity_shape`
    still picks the one that fits)."""
    days = {_TRAILING_YEAR.sub("", d) for d in dates}
    return tuple(sorted(set(dates) | {d for d in days if date_shaped(d)}))


def _pool(span: Span, label: str, sent: Span, entities: DocumentEntities) -> tuple[list[str] | tuple[str, ...], bool]:
    """The texts that may stand in for `span`, and whether they come from the
    gazetteers: a place's are the document's known places of its kind the
    sentence allows (engine.needles.places, both place labels), or when it
    has none and `entities.gazetteer`, the gazetteers' (`gazetteer_likes`)
    the sentence allows; others', the document's texts of its label."""
    if label == "DATE":  # the second pass (`with_gazetteer`) also offers the document's dates less their year
        dates = entities.names.get(label, ())
        return (_with_their_days(dates) if entities.gazetteer else dates), False
    if label not in PLACE_LABELS:
        return entities.names.get(label, ()), False
    others = [o for o in map(_without_article, sent.ents) if o.start != span.start and (o.label_ in PLACE_LABELS or place_of(o.text))]
    doc = span.doc
    # "Havant, Hampshire": a place set beside another by a comma says where it lies
    apposed = [o.text for o in others if doc[o.end : span.start].text == "," or doc[span.end : o.start].text == ","]
    candidates = [n for k in sorted(PLACE_LABELS) for n in entities.names.get(k, ())]
    linked = set(entities.contained.get(span.text, ()))  # "X, at present a part of Y": Y never replaces X
    place = place_of(span.text)
    if place is not None and (unnamed_place_phrase(span, place.kind) is not None or described_by_nationality(span)):
        return [], False  # "the Kazakh capital of X", "X and other parts of the country": any X lies inside that holder
    kept = same_kind_places(span.text, {o.text for o in others}, [c for c in candidates if c not in linked], apposed=apposed)
    drawn = not kept and (entities.gazetteer or (entities.timeless_gazetteer and place is not None and place.kind in TIMELESS_KINDS))
    if drawn:
        kept = same_kind_places(span.text, {o.text for o in others}, [c for c in gazetteer_likes(span.text) if c not in linked], apposed=apposed)
    return kept, drawn


_WORD = re.compile(r"\w+")


def _naming_words(text: str) -> tuple[str, ...]:
    """The words of `text` less lowercase function words ("December of 2000"
    -> "December", "2000"; a capitalised "May" stays, the modal goes)."""
    from spacy.lang.en.stop_words import STOP_WORDS  # here: importing spaCy at start-up slows every CLI command

    return tuple(w for w in _WORD.findall(text) if not (w.islower() and w in STOP_WORDS))


def _repeats_the_sentence(candidate: str, outside: tuple[tuple[str, ...], ...]) -> bool:
    """The candidate's naming words stand in a row in the sentence outside the
    span (`outside`: the words before it, the words after it), however the
    sentence writes them: "between May 1990 and May of 2001" with "May of
    1990" for "May of 2001" names one date twice and leaves the span empty."""
    words = _naming_words(candidate)
    if not words:
        return False
    n = len(words)
    return any(part[k : k + n] == words for part in outside for k in range(len(part) - n + 1))


def entity_options(sent: Span, entities: DocumentEntities) -> tuple[EntityOption, ...]:
    options = []
    base = sentence_bounds(sent)[0]
    text = sent.text.strip()
    # every capitalised word of the sentence: a replacement sharing one names
    # a referent the sentence already holds ("Leskovac was signed to play Rachel Leskovac")
    sentence_words = name_words(" ".join(t.text for t in sent if t.text[:1].isupper() and t.i > sent.start))
    for ent in sent.ents:
        span = _without_article(ent)
        label = entities.labels.get(span.text)
        if label is None or not _fits_label(span, label) or span.text.endswith(("'s", "’s")):
            continue
        start = span.start_char - base
        if label == "DATE" and date_in_a_name(span):
            continue  # "the Act of 1947": the year of a name (still a year to put elsewhere)
        if label == "DATE" and len(span) == 1 and span.text.isalpha() and _a_persons_name_word(span):
            continue  # "with May saying ...": a month's name the document also gives a person (Theresa May)
        if span.start_char in entities.disputed_at or inside_quotes(text, start) or part_of_a_name(span):  # "United States v. X", "the US dollar"
            continue
        if label == "PERSON" and _surname_shared(span):
            continue  # "Mike and Julie Bennet": the surname is Mike's too (it may still replace elsewhere)
        slot = "date" if label == "DATE" else _slot(span)
        if slot is None:
            continue
        # a name that takes "the" read as a modifier ("the United States preferred war",
        # "States" parsed as a modifier of "war"): its "the" stays, so its replacement needs one too
        written_with_the = span.start > 0 and span.doc[span.start - 1].lower_ == "the"
        article = "the" if slot == "mod" and written_with_the and entities.articles.get(span.text) == "the" else slot
        gender = courtesy_title(span) if label == "PERSON" else ""
        outside = (_naming_words(text[:start]), _naming_words(text[span.end_char - base :]))
        replacements, bare_ones = [], []
        after = span.doc[span.end].text if span.end < len(span.doc) else ""  # a possessive's form (`possessive_misfit`)
        before = span.doc[span.start - 1].text if span.start > sent.start else ""  # "a"/"an" before a modifier (`article_misfit`)
        # "Mr Hill": only a name the document writes after a title of the same gender ("Mr Firth")
        if gender:
            pool, drawn = [c for c, g in sorted(entities.courtesy.items()) if g == gender and entities.labels.get(c) == "PERSON"], False
        else:
            pool, drawn = _pool(span, label, sent, entities)
        for candidate in pool:
            # a place drawn from the gazetteers is written bare (`places.gazetteer_likes`)
            use = "bare" if drawn else entities.articles.get(candidate)
            if use == "bare" and takes_the(candidate):
                use = "the"  # "(Kuwait, United Arab Emirates, Oman)": a list's bare form is no evidence against "the"
            elif article != "mod" and use is not None and country_article(candidate) not in (None, use):
                # "Freeport, Bahamas;" (an address) against "Commonwealth of the Bahamas", "the France of 1968"
                # against "French Republic": which one the sentence needs is unsure, so no such replacement
                continue
            if candidate == span.text or candidate in text or span.text in candidate or possessive_misfit(after, candidate, use):
                continue
            if article_misfit(before, candidate):
                continue  # "A London mother" -> "A Edinburgh mother"
            if _repeats_the_sentence(candidate, outside):
                continue
            if label == "DATE":
                if entity_shape(candidate, label) != entity_shape(span.text, label):
                    continue
            else:
                if name_words(candidate) & (sentence_words | name_words(span.text) | set(entities.aliases.get(span.text, ()))):
                    continue  # same referent ("Galt" / "John Galt") or a name the sentence already holds
                if name_words(span.text) & set(entities.aliases.get(candidate, ())):
                    continue  # the span is another name of the candidate
                if article == "mod" and not country_modifier_fits(span, candidate):
                    continue  # "Some US officials" -> "Some Libya officials"
                if article != "mod" and use != article:
                    # "with the Europe", "proclaim U.S. as", "the Great Britain preferred": a country
                    # may bring or drop its own "the" where nothing else hangs on the article
                    # countries only: a state or city the document writes with "the" is another thing ("the Ohio": the river)
                    if not (is_country(span.text) and is_country(candidate)) or slot != article or use not in ("the", "bare") or not article_alone(span, slot):
                        continue
                    if use == "bare":
                        bare_ones.append(candidate)
                        continue
                    candidate = "the " + candidate
            if start == 0:
                candidate = candidate[:1].upper() + candidate[1:]
            replacements.append(candidate)
        end = span.end_char - base
        if replacements:
            options.append(EntityOption(start=start, end=end, label=label, text=span.text, replacements=tuple(sorted(set(replacements)))))
        if bare_ones:  # "the US said" -> "Japan said": the option spans the article
            at = span.doc[span.start - 1].idx - base
            bare_ones = [c[:1].upper() + c[1:] if at == 0 else c for c in bare_ones]
            options.append(EntityOption(start=at, end=end, label=label, text=text[at:end], replacements=tuple(sorted(set(bare_ones)))))
    return tuple(options)

