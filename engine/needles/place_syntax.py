"""What a place name's sentence says about the place (engine.needles.entities):
whether it stands as a state, a continent or a place inside a named country,
and whether its article may change with its replacement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.places import place_of

if TYPE_CHECKING:
    from spacy.tokens import Span

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


def is_country(text: str) -> bool:
    place = place_of(text)
    return place is not None and place.kind in ("country", "nation")


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
