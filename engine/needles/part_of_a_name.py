"""Whether an entity mention is part of a larger name (engine.needles.entities),
read from the parse: replaced alone, it would make a name that names nothing.

- A currency: a place modifying a currency's unit ("the US dollar", "the
  Turkish lira"); the units are the last words of ISO 4217's currency names
  (pycountry), with the English spellings ISO does not use (`OTHER_UNITS`).
- A named event, act, agreement or work: a name modifying a noun of those
  classes ("the Astana talks", "the Minsk agreements", "the Doha round",
  "the Trump album"), or a list of names doing so ("the Astana and Geneva talks").
- A work or group given its name by apposition ("her third album, Joanne,
  ...", "the film, Jackie"): a name set beside a noun of those classes.
- An office, not a person: a PERSON mention whose every word is a title word
  ("Chancellor", "Prime Minister"): `only_titles`.

Abstains (returns True) only on what the parse shows; a national team's noun
("the England side") is not a name's head (engine.needles.place_syntax.TEAM_NOUNS).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from engine.needles.place_syntax import ACT_NOUNS

if TYPE_CHECKING:
    from spacy.tokens import Span

# English spellings of currency units that ISO 4217's names do not use as their last word
OTHER_UNITS = frozenset("rouble yuan shekel kroner kronor".split())
# nouns an event or a series of meetings is named by, after a place or person ("the Astana talks")
EVENT_NOUNS = frozenset(
    "talks negotiations summit summits process format round deal deals pact initiative consensus forum "
    "games olympics marathon festival biennale expo tour".split()
)
# nouns of works and groups, which a name set beside or before them names ("the album, Joanne")
WORK_NOUNS = frozenset(
    "album albums film films movie movies novel book song single ep record series show play opera musical "
    "documentary memoir painting sculpture band group label magazine newspaper".split()
)
# offices English writes capitalised before a name or alone ("Chancellor", "Prime Minister"): a PERSON
# mention made only of these is the office, not its holder
TITLE_WORDS = frozenset(
    "chancellor minister prime deputy vice president premier secretary general senator governor mayor king queen "
    "prince princess pope bishop archbishop cardinal sheikh emir sultan chairman chairwoman chair speaker "
    "ambassador commissioner attorney judge justice chief lord lady sir dame colonel major captain lieutenant "
    "sergeant admiral commander foreign home state defence defense finance interior".split()
)
# nouns a country's name modifies to name one instrument ("United States notes", a currency): part of a name
INSTRUMENT_NOUNS = frozenset("notes note bonds bond bills securities certificates currency coin coins coinage".split())
_MODIFIER_DEPS = frozenset({"compound", "nmod", "amod"})
MODIFIER_REACH = 3  # tokens between a modifying name's end and its head noun ("the US trade dollar" is still one)


@functools.cache
def currency_units() -> frozenset[str]:
    """Singular and plural forms of the units of ISO 4217's currencies (their
    names' last word: "US Dollar", "Pound Sterling" -> dollar, sterling)."""
    import pycountry

    last = {c.name.split()[-1].lower() for c in pycountry.currencies if not c.alpha_3.startswith("X")}
    units = {w for w in last if w.isalpha()} | OTHER_UNITS | {"pound"}
    return frozenset(units | {w + "s" for w in units})


@functools.cache
def _named_heads() -> frozenset[str]:
    return currency_units() | EVENT_NOUNS | WORK_NOUNS | ACT_NOUNS


def _first_of_list(span: Span):
    """The span's root, or the first of the names it is listed with ("the Astana and Geneva talks")."""
    root = span.root
    while root.dep_ == "conj" and root.head.i < root.i:
        root = root.head
    return root


def part_of_a_name(span: Span) -> bool:
    """Whether `span` (an entity without its "the") names only part of what
    its phrase names: it modifies a currency unit, an event's, act's or
    work's noun, or stands in apposition to a work's or group's noun."""
    root = _first_of_list(span)
    head = root.head
    if root.dep_ in _MODIFIER_DEPS and span.end <= head.i <= span.end + MODIFIER_REACH:
        if head.lower_ in _named_heads() or head.lemma_.lower() in _named_heads():
            return True
    # "her third album, Joanne,": by the parse only; a name after a work's noun and a comma is as often
    # the next item of a list ("the morning TV show, Sydney's Carols in the Domain")
    return root.dep_ == "appos" and head.i < span.start and head.lemma_.lower() in WORK_NOUNS


def only_titles(span: Span) -> bool:
    """A PERSON mention made only of office words ("Chancellor", "Prime Minister")."""
    return all(t.lower_ in TITLE_WORDS for t in span)
