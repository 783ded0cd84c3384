"""Countries of an old document: which of them it treats as states (engine.needles.entities).

The gazetteers (engine.needles.places) know places as they are now. A
document written before the present map of states (`PRESENT_STATES_SINCE`)
may name as countries places that were then colonies, territories or not
yet states (Canada in 1812, Greece in 1822, the Philippines in 1901 and
January 1946), and it often does not say so: a country swap there puts a
colony in a state's place. No maintained data say when each country
became sovereign (pycountry has no dates; country_converter's UN membership
years are not sovereignty: the Philippines, India and the Ukrainian SSR are
founding members), so on such a document a country is a span or a
replacement only when the document itself treats it as a state
(`treated_as_a_state`) at one mention at least:

- a party to what states have with one another: "the treaty with X",
  "relations between X and Y", "our affairs with X", "peace with X", "the
  rupture between X and Y", "our differences with X", "claims upon X", "war
  against X", "negotiated with X";
- the holder of a state's organs, offices, policy or foreign relations:
  "the Government of X", "the King of X", "our minister to X", "the
  Republic of X", "the policy of X", "the relations of X", "the Navy of
  X", "citizens of X", "X's government", "the X Government";
- one of the powers: "X and other powers", "X and the other nations".

A US state is a span or a replacement only from the year it was admitted
(the `us` package's statehood years, maintained with its state metadata):
"no mint in California" in 1850 never becomes "in Oregon", a territory
until 1859 (`states_not_yet_admitted`).

A document with no date is read as of now: the rule never applies (news
of 2017, the bundled Wikipedia sample). A document's date comes from its
record (engine.corpus.reading: a "date" field, or a dated title).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

import us

from engine.needles.place_syntax import STATE_PARTY_NOUNS, is_country
from engine.needles.places import place_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# the Soviet Union and Yugoslavia dissolved in 1991: since then the list of
# states ISO 3166 gives is, but for a few, the list of the document's time
PRESENT_STATES_SINCE = 1992
# what two states have between them ("our affairs with France", "peace with Mexico", "claims upon Peru",
# "war against Turkey", "negotiated with Great Britain", "our differences with Spain": a dispute's other name),
# and "the foreign relations of X"
PEER_WORDS = STATE_PARTY_NOUNS | frozenset(
    "relation affair peace rupture hostility dispute controversy difference amity friendship claim declaration "
    "negotiate".split()
)
PEER_PREPOSITIONS = frozenset("with between against upon".split())
# a state's organs and offices ("the Government of X", "our minister to X", "the Emperor of X");
# never a governor's or a consul's (colonies and provinces have those), nor "sovereignty" ("restore the sovereignty of Korea")
STATE_NOUNS = frozenset(
    "government ministry minister ambassador envoy legation embassy king queen emperor empress sultan czar tsar "
    "shah mikado republic empire kingdom monarchy sovereign president cabinet policy relation navy army citizen subject".split()
)
# "France and other powers", "the United States and the other nations": a state among states
POWERS = frozenset("power nation government state".split())


def treated_as_a_state(token: Token) -> bool:
    """Whether the name whose last word is `token` stands as a state there (module docstring)."""
    root = token
    while root.dep_ == "conj" and root.head.i < root.i:  # "treaties with France and Spain"
        root = root.head
    head = root.head
    if any(c.dep_ == "conj" and _word(c) in POWERS and any(a.lower_ == "other" for a in c.children) for c in root.children):
        return True
    if root.dep_ == "pobj" and head.lower_ in PEER_PREPOSITIONS:
        return _word(head.head) in PEER_WORDS
    if root.dep_ == "pobj" and head.lower_ in ("of", "to", "from"):
        return _word(head.head) in STATE_NOUNS
    if root.dep_ in ("poss", "compound", "nmod") and head.i > root.i:  # "Mexico's government", "the X Government"
        return _word(head) in STATE_NOUNS
    return False


def _word(token: Token) -> str:
    return token.lemma_.lower() if token.pos_ in ("NOUN", "PROPN", "VERB") else ""


def _name_ending_at(token: Token) -> str:
    """The proper name whose last word is `token` ("United States" at "States")."""
    first = token.i
    while first > 0 and token.doc[first - 1].pos_ == "PROPN" and token.doc[first - 1].dep_ == "compound":
        first -= 1
    return token.doc[first : token.i + 1].text


def countries_not_states_then(doc: Doc, places: Iterable[Span], year: int | None) -> frozenset[str]:
    """The country names of `places` (the document's place mentions, without
    their article) that a document dated `year` never treats as a state
    (`treated_as_a_state`, at any of its names: "the U.S." counts for "the
    United States"): on an undated or recent document, none. Read from the
    words, not the entities: "the Government of Mexico" is often one ORG."""
    if year is None or year >= PRESENT_STATES_SINCE:
        return frozenset()
    countries = {span.text: place_of(span.text) for span in places if is_country(span.text)}
    if not countries:
        return frozenset()
    stated: set[str] = set()
    for token in doc:
        if token.pos_ == "PROPN" and treated_as_a_state(token):
            place = place_of(_name_ending_at(token))
            stated |= place.keys if place is not None else set()
    return frozenset(text for text, place in countries.items() if place is not None and not place.keys & stated)


@functools.cache
def _admitted() -> dict[str, int]:
    """ISO 3166-2 key of each US state -> the year it was admitted (the thirteen: ratification)."""
    return {f"S:US-{s.abbr}": s.statehood_year for s in us.states.STATES if s.statehood_year}


def states_not_yet_admitted(places: Iterable[Span], year: int | None) -> frozenset[str]:
    """The names of `places` that read as US states admitted after `year`
    (then a territory, a foreign land or a kingdom: "Oregon" in 1850,
    "Hawaii" in 1888); none on an undated document."""
    if year is None:
        return frozenset()
    admitted = _admitted()
    late = set()
    for span in places:
        place = place_of(span.text)
        if place is not None and any(admitted.get(key, 0) > year for key in place.keys):
            late.add(span.text)
    return frozenset(late)
