"""What a place name's sentence says about the place (engine.needles.entities):
whether it stands as a state, a continent or a place inside a named country,
and whether its article may change with its replacement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.entity_form import NAMED_AFTER_A_PLACE
from engine.needles.places import place_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

# plural nouns of polities: "the nations of America" is a continent, whatever the name reads as
POLITY_NOUNS = frozenset("nations states republics countries powers kingdoms colonies governments".split())
# nouns whose parties are states ("the treaty with Hawaii", "relations between Spain and Texas"): a
# region the gazetteers know that is one is a former state of that name (the Kingdom of Hawaii)
STATE_PARTY_NOUNS = frozenset("treaty convention relations alliance war negotiation intercourse".split())


def party_of_states(span: Span) -> bool:
    """"the treaty with X", "relations between the United States and X": X
    is a party to what only states make (`STATE_PARTY_NOUNS`)."""
    root = span.root
    while root.dep_ == "conj" and root.head.i < root.i:
        root = root.head
    return root.dep_ == "pobj" and root.head.lower_ in ("with", "between") and root.head.head.lemma_.lower() in STATE_PARTY_NOUNS


def of_polities(span: Span) -> bool:
    """"the nations of X", "the powers of X": X holds several polities."""
    root = span.root
    return root.dep_ == "pobj" and root.head.lower_ == "of" and root.head.head.lower_ in POLITY_NOUNS


def described_by_nationality(span: Span) -> bool:
    """"the Kazakh capital of Astana", "the Syrian city of Homs": the
    sentence itself says which country the place lies in (a nationality, or
    any capitalised modifier: the models tag "Kazakh" NORP, ORG or nothing)."""
    root = span.root
    if root.dep_ != "pobj" or root.head.lower_ != "of":
        return False
    noun = root.head.head
    modifiers = [c for c in noun.children if c.dep_ in ("amod", "compound", "nmod") and c.i < noun.i]
    return noun.pos_ == "NOUN" and any(c.ent_type_ == "NORP" or (c.text[:1].isupper() and c.i > span.sent.start) for c in modifiers)


# the nouns of a place that can hold a place of each kind (engine.needles.places' kinds), or for a
# continent that it can hold: "the country" beside a city, "the continent" beside a country, "the
# kingdom" beside a continent (another continent may hold the kingdom the sentence means)
CONTAINER_NOUNS = {
    "city": frozenset("country nation state province region county island continent territory kingdom republic".split()),
    "region": frozenset("country nation continent kingdom republic".split()),
    "nation": frozenset("country kingdom continent".split()),
    # and "their own country", "the nation": another country the replacement may name
    "country": frozenset("continent subcontinent region bloc country nation".split()),
    "continent": frozenset("country nation state kingdom republic emirate city capital island".split()),
}
# a place's own kind, as a plural: "Western countries" may hold any replacement of a country
KIND_PLURALS = {
    "city": frozenset("cities towns".split()),
    "region": frozenset("states provinces regions counties".split()),
    "nation": frozenset("nations".split()),
    "country": frozenset("countries nations states".split()),
}
_DEFINITE = frozenset("the this that our its their his her whole entire".split())


def unnamed_place_phrase(span: Span, kind: str) -> str | None:
    """A phrase of `span`'s sentence that refers, without naming it, to a
    place a replacement could name, hold or lie inside, for a place of `kind`: a definite noun of a kind that holds
    it ("Dublin ... other parts of the country", "Iran's role in the
    region"), or a plural of its own kind that is not "other" ones ("in
    Russia and in Western countries"); for a continent, a definite noun of
    a place it may hold ("The kingdom has been active in Europe": Asia
    holds the Saudi kingdom); for a country, a definite "country" or "nation"
    ("their own country", the US, "... a bomb on Japan" -> "on the US").
    Whatever replaced the place could lie inside, or name,
    what the phrase means or hold it, or leave it meaning another place:
    the protocol's containment (docs/needle_reading_protocol.md, ner). None when
    there is none; "the state of Texas" and "the country of Japan" name the
    place itself, not a holder."""
    holders, plurals = CONTAINER_NOUNS.get(kind, frozenset()), KIND_PLURALS.get(kind, frozenset())
    for token in span.sent:
        if span.start <= token.i < span.end or token.pos_ != "NOUN":
            continue
        if span.root.head.head == token and any(c.dep_ == "prep" and c.lower_ == "of" for c in token.children):
            continue  # "the state of Texas" names the place; "the countries of Europe": Europe holds them
        before = [c for c in token.children if c.i < token.i]
        if token.lemma_.lower() in holders and token.tag_ == "NN":
            if (span.root.dep_ == "appos" and span.root.head == token) or (token.dep_ == "appos" and span.start <= token.head.i < span.end):
                continue  # "the country, Japan,": the place itself
            if any(c.lower_ in _DEFINITE or c.dep_ == "poss" for c in before):
                return token.text
        elif token.lower_ in plurals and not any(c.lower_ in ("other", "another") for c in before):
            return token.text
    return None


# nouns a place before them names an act, event or agreement by ("the Berlin decree", "the Missouri
# Compromise", "the Ghent treaty"): the place is part of that name
ACT_NOUNS = NAMED_AFTER_A_PLACE | frozenset("decree edict proclamation compromise purchase doctrine".split())


def names_an_act(span: Span) -> bool:
    """"the Berlin and Milan decrees", "the Louisiana Purchase": the place
    (or the first of places listed together) modifies an `ACT_NOUNS` noun,
    or a noun that classes the name after it ("the United States steamer Alert")."""
    root = span.root
    while root.dep_ == "conj" and root.head.i < root.i:
        root = root.head
    doc, after = span.doc, span.end
    # "the United States steamer Alert": a common word set between the place and a name classes the
    # name (read from the words: the parse often makes the place an object and "steamer" a PROPN)
    named = after + 1 < len(doc) and doc[after].pos_ in ("NOUN", "ADJ", "PROPN") and doc[after].is_lower
    if named and doc[after + 1].pos_ == "PROPN" and doc[after + 1].ent_type_ != "DATE" and doc[after + 1].text[:1].isupper():
        return True
    return root.dep_ in ("compound", "nmod", "amod") and root.head.i > root.i and root.head.lemma_.lower() in ACT_NOUNS


def is_country(text: str) -> bool:
    place = place_of(text)
    return place is not None and place.kind in ("country", "nation")


# nouns of a national sports team, which English modifies by the country's own name ("a touring
# New Zealand side", "his England debut") where other nouns take its adjective ("Libyan officials")
TEAM_NOUNS = frozenset(
    "team side squad eleven xi captain coach manager selectors international internationals debut cap caps "
    "jersey shirt kit fans supporters".split()
)
_MODIFIER_DEPS = ("compound", "amod", "nmod")


def _initials(text: str) -> bool:
    """"US", "U.S.", "UAE": a country's abbreviation, which English sets before any noun."""
    letters = text.replace(".", "")
    return letters.isalpha() and letters.isupper() and len(letters) <= 4


def country_modifier_fits(span: Span, candidate: str) -> bool:
    """Whether `candidate` may stand for `span` where `span`, written without
    "the", modifies the noun after it ("Some US officials"). A country's full
    name does not ("Some Libya officials": English writes its adjective), but
    before a national team's noun (`TEAM_NOUNS`), or where the document itself
    writes that name as a modifier of another noun ("the Turkey delegation");
    abbreviations ("UK officials") and other places ("the Ohio delegation") do."""
    if _initials(candidate) or not is_country(candidate):
        return True
    if span.root.head.lower_ in TEAM_NOUNS:
        return True
    for ent in span.doc.ents:
        words = ent[1:] if len(ent) > 1 and ent[0].lower_ == "the" else ent
        head = words.root.head
        if words.text == candidate and words.root.dep_ in _MODIFIER_DEPS and head.i >= words.end and head.lower_ not in TEAM_NOUNS:
            return True
    return False


def article_alone(span: Span, slot: str) -> bool:
    """Whether a place heading its noun phrase may trade a "the" for none or
    none for a "the": nothing modifies it before it but its own "the" ("the
    US said", "in Japan"; never "mainland China", "historic Palestine", "a
    rising China", "the US and UK", where the article also serves "UK")."""
    root, doc = span.root, span.doc
    left = [c for c in root.children if c.i < span.start]
    if any(c.dep_ == "conj" for c in root.children) or root.dep_ == "conj":
        return False
    if slot == "the":
        return [c.i for c in left] == [span.start - 1]
    before = doc[span.start - 1] if span.start > span.sent.start else None
    return not left and (before is None or (before.pos_ in ("ADP", "VERB", "AUX", "SCONJ", "PUNCT") and before.tag_ != "POS"))


# nouns by which a document says a place belongs to another: on an old document the
# gazetteers' modern kinds are wrong for it (a territory then, a state now; a colony, a country now)
DEPENDENT_NOUNS = frozenset("territory colony possession dependency protectorate dominion".split())
# words that, between two places of a sentence, say one lies in or belongs to the other
# ("X, at present a part of Y", "X, annexed to Y", "X, a province of Y")
# ("the District of Arizona" names a court's district, "the province of X" a region still: no dependency)
CONTAINMENT_LEMMAS = DEPENDENT_NOUNS | frozenset("province district part portion within inside belong annex include comprise".split())
CONTAINMENT_GAP = 8  # tokens between two places linked by those words


def called_a_dependency(span: Span) -> bool:
    """Whether the sentence calls the place a territory, colony, possession
    or dependency (`DEPENDENT_NOUNS`): "the Territory of
    X", "our possessions in X", "the X territory", "X, then a colony of
    Spain", "X is now a possession of Y", and each place listed with one
    ("our possessions, X and Z"). The owner is not one: "a colony of Spain",
    "the possessions of Spain"."""
    token = span.root

    def dependent(t) -> bool:
        return t.lemma_.lower() in DEPENDENT_NOUNS or t.lower_ in DEPENDENT_NOUNS

    for _ in range(8):  # up a list or an apposition
        if any(c.dep_ == "appos" and dependent(c) for c in token.children):
            return True
        if token.dep_ not in ("conj", "appos") or token.head.i == token.i:
            break
        step, token = token.dep_, token.head
        # "our possessions, X and Z" (a list set beside the noun, however parsed); never
        # "a trade between its colonies and the United States": a place coordinated with them
        beside = token.i + 1 < len(token.doc) and token.doc[token.i + 1].text in (",", ":")
        if dependent(token) and (step == "appos" or beside):
            return True
    head = token.head
    if token.dep_ in ("compound", "nmod", "amod") and dependent(head):
        return True
    if token.dep_ == "pobj" and head.lower_ in ("of", "in") and dependent(head.head):
        # "the Territory of X" names one; "the territory of the United States" is its land
        named = head.head.tag_ == "NNP" and head.head.text[:1].isupper() and any(c.lower_ == "the" for c in head.head.children)
        return head.lower_ == "in" or named
    if token.dep_ in ("nsubj", "nsubjpass") and head.lemma_ == "be":
        return any(c.dep_ == "attr" and dependent(c) for c in head.children)
    return False


def contained_places(doc: Doc, places: list[Span]) -> dict[str, tuple[str, ...]]:
    """place text -> the places its document says it lies in or holds: two
    of `places` (the document's place mentions) in one sentence with
    `CONTAINMENT_LEMMAS` between them, or "in" ("X, at present a part of Y",
    "X in Y"). A document may relate places the gazetteers do not, or as
    they stood then; neither is ever the other's replacement."""
    linked: dict[str, set[str]] = {}
    for i, a in enumerate(places):
        for b in places[i + 1 :]:
            if b.start - a.end > CONTAINMENT_GAP:
                break  # mentions come in document order
            between = doc[a.end : b.start]
            if not between or a.sent.start != b.sent.start:
                continue
            words = [t.lower_ for t in between]
            if {t.lemma_.lower() for t in between} & CONTAINMENT_LEMMAS or words in (["in"], [",", "in"]):
                linked.setdefault(a.text, set()).add(b.text)
                linked.setdefault(b.text, set()).add(a.text)
    return {k: tuple(sorted(v)) for k, v in linked.items()}
