"""The form of entity texts (engine.needles.entities): whether a text is
shaped like a name or a date, the shape a DATE's replacement must share,
and whether a date is part of a name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span

# lower-case words that may sit inside a name ("Sea of Marmara", "Estrela da Amadora")
NAME_PARTICLES = frozenset(
    "of de da das do dos del della der den di du la le les van von ter y al el bin ibn upon on".split()
)
# nouns that, with "of" and a place, name one event or agreement ("the treaty of Paris"): the place is part of a name
NAMED_AFTER_A_PLACE = frozenset(
    "treaty battle siege peace congress convention conference accord accords agreement protocol declaration "
    "capitulation armistice massacre sack".split()
)
# ... and with "of" and a year, a law too ("the act of 1947"): the year is part of the name
NAMED_AFTER_A_YEAR = NAMED_AFTER_A_PLACE | frozenset("act acts law laws statute statutes ordinance tariff".split())
_ABBREVIATION = re.compile(r"^(?:(?:\w\.)+|Jr\.|Sr\.|St\.|Mt\.|Ft\.|Dr\.)$")
_NAME_WORD = re.compile(r"^[^\W\d_][\w'’.-]*$")

_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# words a date-shaped DATE may hold beside numbers and month names
_DATE_WORDS = frozenset(
    "the early mid late century centuries year fiscal day s th st nd rd season spring summer autumn fall winter "
    "bc ad bce ce of".split()
)
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
# a weekday alone or with these ("on Tuesday", "last Friday"): a day a report dates by, of shape "D"
_WEEKDAY_SHAPES = frozenset({("D",), ("last", "D"), ("next", "D")})
_SHAPE_PIECES = re.compile(r"\d+|[^\W\d_]+|\S")
# common nouns that, heading a place's name, make it take "the" in running prose ("the United Arab Emirates",
# "the Czech Republic", "the Solomon Islands"); a bare use in a list or a heading does not say otherwise
COMMON_NOUN_HEADS = frozenset("states kingdom emirates republic islands isles union federation".split())


def entity_shape(text: str, label: str) -> str:
    """What a replacement must share with the entity it replaces to read fluently.

    DATE: the token pattern with years as Y, other numbers as 9 and month
    names as M, weekdays as D ("15 May 1873" -> "9 M Y", "the 1970s" ->
    "the Y s", "last Friday" -> "last D"). Other
    labels: "" (their fit is decided by articles and position instead).
    """
    if label != "DATE":
        return ""
    pieces = []
    for piece in _SHAPE_PIECES.findall(text.lower()):
        if piece.isdigit():
            pieces.append("Y" if len(piece) == 4 else "9")
        elif piece in _MONTHS:
            pieces.append("M")
        elif piece in _WEEKDAYS:
            pieces.append("D")
        else:
            pieces.append(piece)
    return " ".join(pieces)


def date_shaped(text: str) -> bool:
    """A year, month, day, decade or century with only date words around it,
    or a weekday alone ("Tuesday", "last Friday"; never "Good Friday")."""
    shape = entity_shape(text, "DATE").split()
    if "D" in shape:
        return tuple(shape) in _WEEKDAY_SHAPES
    allowed = all(p in ("Y", "M", "9", "-", "–", ",", "'s", "'") or p in _DATE_WORDS for p in shape)
    anchored = "Y" in shape or "M" in shape or ("century" in shape and "9" in shape)
    return allowed and anchored


def name_shaped(text: str) -> bool:
    """Capitalised words, no digits, no punctuation but initials, hyphens, apostrophes."""
    words = text.split(" ")
    if not words or not words[0][:1].isupper():
        return False
    for k, word in enumerate(words):
        if k and word in NAME_PARTICLES:
            continue
        if not _NAME_WORD.match(word) or not word[:1].isupper():
            return False
        if "." in word and not _ABBREVIATION.match(word):
            return False
    return words[-1] not in NAME_PARTICLES and not re.match(r"^\w\.$", words[-1])  # no trailing initial ("Syah I.")


def shaped(text: str, label: str) -> bool:
    return date_shaped(text) if label == "DATE" else name_shaped(text)


def date_in_a_name(span: Span) -> bool:
    """A year that is part of a law's, treaty's or other capitalised name:
    "the Clean Water Act of 1972", "the treaty of 1783", "the 1972 Act",
    or the date a statute is cited by ("the act approved March 3, 1869")."""
    root = span.root
    if root.dep_ == "pobj" and root.head.lower_ == "of":
        noun = root.head.head
        named = noun.text[:1].isupper() and noun.i > span.sent.start
        return noun.i < span.start and (named or noun.lemma_.lower() in NAMED_AFTER_A_YEAR)
    head = root.head
    if head.lemma_ == "approve" and head.i < span.start and root.dep_ in ("npadvmod", "dobj", "nmod"):
        return True  # "the act of Congress approved March 3, 1869": a statute cited by its date
    return root.dep_ in ("compound", "amod", "nmod") and head.i >= span.end and head.text[:1].isupper() and head.pos_ == "PROPN"


def name_words(text: str) -> set[str]:
    """A name's words, lower-cased, without particles and "the": two names sharing one may share a referent."""
    return {w.lower().strip(".'’") for w in text.split() if w not in NAME_PARTICLES and w.lower() != "the"}


def possessive_misfit(after: str, candidate: str, article: str | None) -> bool:
    """Whether `candidate` cannot take the possessive written after the name
    it would replace: a bare apostrophe ("the US' fight") fits only a name
    ending in s; "'s" ("China's aim") never a plural-form name the document
    writes with "the" ("the United States", "the Philippines": "the United States's aim")."""
    if after in ("'", "’"):
        return not candidate.endswith("s")
    return after in ("'s", "’s") and candidate.endswith("s") and article == "the"


def article_misfit(before: str, candidate: str) -> bool:
    """Whether `candidate` cannot follow the indefinite article `before`
    ("a", "an", any case) the name it would replace is written after ("A
    London mother" -> "A Edinburgh mother", issue 27, session 23): the
    article goes by the first sound, read from the first letter where it is
    plain (a, e, i, o: a vowel; another letter but h and u: a consonant) and
    unsure otherwise ("a Ukrainian" / "an Uzbek", "a Hungarian" / "an
    honour", "a European", "an FBI agent"), where the name is refused."""
    article = before.lower()
    if article not in ("a", "an"):
        return False
    first = (candidate.split() or [""])[0]
    if not first[:1].isalpha() or (len(first) > 1 and first.isupper()) or first[:2].lower() in ("eu", "on"):
        return True  # an acronym's letters, "Eu-" and "One-" sound otherwise than they are spelt: unsure
    letter = first[0].lower()
    if letter in "hu":
        return True
    return (letter in "aeio") != (article == "an")


def takes_the(name: str) -> bool:
    """Whether a place's name is headed by a common noun (COMMON_NOUN_HEADS)
    and so takes "the" wherever it heads a noun phrase, whatever the
    document's bare uses say ("arrive in the United Arab Emirates"); in a
    name with "of" the noun before it heads ("the United States of America")."""
    words = name.split()
    head = words[: words.index("of")] if "of" in words else words
    return len(words) > 1 and len(head) > 0 and head[-1].lower() in COMMON_NOUN_HEADS
