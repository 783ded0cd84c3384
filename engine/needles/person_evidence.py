"""What a document says for and against a PERSON label (engine.needles.entities).

- Against (`not_a_person`): a one-word "person" the document never names in
  full, or one that is a word of an organisation or work; a multi-word
  "person" starting with an organisation's or place's name or holding a
  place's name; a name the document prints alone between quotation marks
  (`quoted_alone`: the title of a song, a film or a book named after
  someone, '"Young Chuck" was his first hit'), whatever its tag there.
- Characters (`character_names`): a name the document gives a role in a
  story ("the character Fitzwilliam Darcy", "his role as Hamlet", "starred
  as Mr Darcy", "portrayed Fitzwilliam Darcy"), and every PERSON name ending
  in its surname ("Mr Darcy", "Mark Darcy"), is no person: a character put
  for an actor, or an actor for a character, changes what kind of thing
  the sentence names. Neither replaced nor a replacement (issue 27: an actor
  replaced by the character he played, news set-aside read of session 24).
- Aliases (`aliases`): the names a document gives as another name of the
  same referent ("X, commonly known as Y or Z"): never a replacement for it.
- For (`title_before`, `titled_mentions`): a name written right after a
  person's title or office ("Senator Ana Lima", "Dr. Ana Lima", "Prime
  Minister Ana Lima") is a person by the document's own words, and the
  title is no part of the name (entities._runs_into_a_name). A full name's
  titled mention counts twice towards MIN_SUPPORT, so a person the document
  names once, with a title, may be a span and a replacement (a full name
  said once without a title still needs its surname repeated). Only a
  multi-word name tagged PERSON (by both models: `disputed_texts`) gains
  support; a one-word "General Lima" does not (one word after a title is
  too often a firm or a work: "General Motors"). Gendered titles ("Mr.",
  "Mrs.", "Sir") are not titles here.
- Courtesy titles (`courtesy_title`): a surname written right after "Mr",
  "Mrs", "Ms", "Miss" or "Mx" ("Mr Hill", the house style of British news
  for every mention after the first) is a person's name with the title
  outside it; its gender is the title's. Such a name is a span only where
  the document offers a replacement it writes after a title of the same
  gender ("Mr Hill" -> "Mr Firth", never "Mr Sturgeon" from "Ms Sturgeon",
  nor a full name that would read "Mr Julian Firth"), so the title never
  meets a name the document does not give it (entities.entity_options).
  "Sir" and "Dame" take a first name ("Sir John"), not a surname: the name
  after them still reads as part of a longer name.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # spaCy objects come in as arguments
    from spacy.tokens import Doc, Span

ALIAS_WORDS = frozenset("known called nicknamed née nee born alias aka".split())
# a person's title or office written before the name, capitalised or not ("Senator X", "chancellor X"); never
# a gendered one ("Mr.", "Mrs.", "Sir"): a swap there may give "Mrs." a man's name
PERSON_TITLES = frozenset(
    "dr prof professor president senator sen rep representative governor gov mayor judge justice chancellor "
    "minister premier general gen colonel col captain capt lieutenant lt sergeant sgt admiral adm secretary "
    "ambassador commissioner rev reverend coach".split()
)


def aliases(doc: Doc, without_article: Callable[[Span], Span], name_words: Callable[[str], set[str]]) -> dict[str, set[str]]:
    """text -> the words of the names the document gives as another name of
    the same referent ("Mohamed Omar Habeb, commonly known as Mohamed Dheere
    or Mohamed Dhere"): PERSON names of one sentence linked by "known as",
    "née"... and the names listed after them with "or"."""
    found: dict[str, set[str]] = {}
    # each sentence's PERSON entities, as `sent.ents` gives them (those wholly inside it), from one
    # pass over doc.ents: `sent.ents` walks doc.ents again for every sentence
    people = [e for e in doc.ents if e.label_ == "PERSON"]
    k = 0
    for sent in doc.sents:
        while k < len(people) and people[k].start < sent.start:
            k += 1  # before the sentence, or across its start
        inside = k
        while inside < len(people) and people[inside].end <= sent.end:
            inside += 1  # entities do not overlap: the first past the sentence's end ends its list
        ents = [without_article(e) for e in people[k:inside]]
        group: list[Span] = []
        for a, b in zip(ents, ents[1:]):
            between = {t.lower_ for t in doc[a.end : b.start]}
            if b.start - a.end <= 5 and between & ALIAS_WORDS:
                group = group or [a]
                group.append(b)
            elif group and between <= {"or", ","}:
                group.append(b)
            else:
                _link(found, group, name_words)
                group = []
        _link(found, group, name_words)
    return found


def _link(found: dict[str, set[str]], group: list[Span], name_words: Callable[[str], set[str]]) -> None:
    for span in group:
        for other in group:
            if other.text != span.text:
                found.setdefault(span.text, set()).update(name_words(other.text))


# a noun before a name that makes it a part in a story: "the character X", "the character of X" (not "role"
# or "part": "the role of Merkel", "part of Irene's policy" name a real person)
CHARACTER_NOUNS = frozenset({"character", "characters", "persona"})
# a noun before "as X" that makes X a part: "his role as X"
ROLE_NOUNS = frozenset({"role", "roles", "part", "character"})
# verbs whose object is a part played ("portrayed X"); "play" is left out: "Nadal played Federer" names an opponent
PORTRAYING_VERBS = frozenset({"portray", "depict", "voice", "impersonate"})
# verbs after which "as X" names the part ("starred as X", "was cast as X", "played as X")
CASTING_VERBS = frozenset({"star", "cast", "play", "portray", "appear", "return", "reprise", "voice"})


def character_names(people: list[Span]) -> set[str]:
    """The PERSON texts of `people` the document gives a role in a story, and
    every one ending in such a text's surname (module docstring)."""
    found: set[str] = set()
    for span in people:
        doc = span.doc
        k = span.start - 1
        if k >= 0 and doc[k].lower_ == "of":
            k -= 1
        role = k >= 0 and doc[k].lower_ in CHARACTER_NOUNS
        head = span.root
        portrayed = head.dep_ == "dobj" and head.head.lemma_ in PORTRAYING_VERBS
        above = head.head.head  # "starred as X", "his role as X"
        cast = head.dep_ == "pobj" and head.head.lower_ == "as" and (above.lemma_ in CASTING_VERBS or above.lower_ in ROLE_NOUNS)
        if role or portrayed or cast:
            found.add(span.text)
    # the same character's other mentions: a name ending in its surname ("Mr Darcy", "Darcy"); a first name is
    # shared by too many people to tell
    surnames = {text.split()[-1] for text in found}
    return found | {span.text for span in people if span.text.split()[-1] in surnames}


def not_a_person(text: str, one_word: bool, full_names: set[str], words: dict[str, set[str]]) -> bool:
    """What the rest of the document says against a PERSON label: a one-word
    "person" the document never names in full ("Pachuca", "Universal"), or
    one that is a word of an organisation or work ("Universal" of "Universal
    Music Holland", "Habana" of "the Habana Reds"); a multi-word "person"
    starting with an organisation's or place's name or holding a place's
    name ("Byzantium Survives", "Fatimid Egypt"); a name the document prints
    alone between quotation marks at some mention (`quoted_alone`,
    words["quoted"]: a title, not a person); a character in a story
    (words["characters"], `character_names`)."""
    if text in words.get("quoted", ()) or text in words.get("characters", ()):
        return True
    parts = text.split(" ")
    if one_word:
        return not any(name.endswith(" " + text) for name in full_names) or text.lower() in words["in_other"]
    return parts[0] in words["other_texts"] or bool(words["places"] & set(parts))


_OPENING = "\"\u201c'\u2018"
_CLOSING = "\"\u201d'\u2019"


def quoted_alone(text: str, document: str) -> bool:
    """Whether `document` prints `text` as all that stands between a pair of
    quotation marks (a closing comma, stop or mark may sit inside them):
    '"Harbour Jack" was a hit', 'a song called \u2018Harbour Jack.\u2019'. The
    opening mark follows a space, a bracket or the start, and the name follows
    it at once; the closing mark ends the word ("Jones' Harbour Jack'" is no
    pair: the first mark closes a word)."""
    if not any(mark + text in document for mark in _OPENING):
        return False  # the pattern needs an opening mark right before the name: a substring test rules most names out
    name = re.escape(text)
    pattern = rf"(?:^|(?<=[\s(\[]))[{_OPENING}]{name}[,.!?]?[{_CLOSING}](?![\w])"
    return re.search(pattern, document) is not None


def title_before(span: Span) -> bool:
    """Whether `span` is written right after a title or office ("Senator Ana
    Lima", "Dr. Lima"), inside its sentence: the title is not part of the name."""
    if span.start <= span.sent.start:
        return False
    before = span.doc[span.start - 1]
    return before.lower_.rstrip(".") in PERSON_TITLES and before.pos_ in ("PROPN", "NOUN")


# courtesy titles that take a surname, and the gender each gives it ("Mrs May" and "Ms May" are alike)
COURTESY_GENDERS = {"mr": "m", "mrs": "f", "ms": "f", "miss": "f", "mx": "x"}


def courtesy_title(span: Span) -> str:
    """The gender ("m", "f", "x") of the courtesy title written right before
    `span` inside its sentence ("Mr Hill", "Mrs. May"), else ""."""
    if span.start <= span.sent.start:
        return ""
    before = span.doc[span.start - 1]
    if before.pos_ not in ("PROPN", "NOUN") or not before.text[:1].isupper():
        return ""
    return COURTESY_GENDERS.get(before.lower_.rstrip("."), "")


def titled_mentions(spans: list[Span]) -> Counter[str]:
    """Multi-word PERSON text -> its mentions written after a title (`title_before`)."""
    return Counter(s.text for s in spans if s.label_ == "PERSON" and len(s) > 1 and title_before(s))
