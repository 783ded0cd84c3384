"""Headings fused onto a stored sentence, read from its parse.

News text is shipped one line per article, so a subheading, a digest item's
title or a related article's title runs into the sentence after it with no
punctuation between ("Progress and scope The council has ...").
engine.corpus.fused_headings splits what the tagger alone shows before the
parser runs, and engine.corpus.run_on_headings and engine.corpus.hay_check
read the forms they know; these tests read, in the parse of one stored
sentence, seven more forms whose grammar says a new sentence starts inside
it. Each returns the token where the sentence under the heading starts, or
None; `fused_heading_kind(span)` names the first that holds.

- "capital_determiner": a determiner or a possessive written capitalised
  inside the sentence, after a word and a space, whose noun is a lowercase
  common noun ("... Progress and scope The council has ...", "... in the
  War The county board invested ..."). Inside a name every word is
  capitalised ("The Hague", "The Cork Harbour Company", a title of a work:
  "his epic The Harbour"), so a capitalised article before a lowercase noun
  can only open a sentence. Not after a quotation mark (a quoted title in
  sentence case), nor for "A"/"An", which also mark a grade or a class
  ("Class A shares", "vitamin A supplements"); after a verb or a
  preposition only "The" before a lowercase word ("Bomb squad called in The
  airport was ...": a paper's name goes on capitalised, "for The Times
  story", and speeches capitalise God's possessive, "for His care").
- "indefinite_heading": the sentence opens with "A"/"An", words without a
  verb, a comma or a preposition, and a lowercase noun right before a name
  that is the subject of the sentence's verb ("A new generation Walsh went
  on to ..."). A role may stand before a name ("Harbour master Ann Walsh
  said", "The singer Ann Walsh said"), but never with an indefinite article:
  prose writes "A singer, Ann Walsh, ..." or "a singer named Ann Walsh".
- "descriptive_heading": the sentence opens with a noun and a phrase under a
  preposition that holds an indefinite article or a possessive ("Movie star
  in a new role for his latest film Ann Walsh is ..."), without a verb or a
  comma, then a person's name, the subject of the first finite verb. A title
  before a name may hold a preposition ("Minister for Foreign Affairs Ann
  Walsh said", "President of the Court Ann Walsh"), but it names an office,
  with a definite article or none: an indefinite article or a possessive
  describes something the title does not.

- "plural_heading": the sentence opens with a plural noun, a preposition
  and a name, then at once another name and a finite verb ("Questions
  about Brest Walsh did little to ..."): two names side by side, the first
  closing a verbless topic phrase and the second opening the clause. A
  plural noun is no title before a person's name ("Minister for Brest Ann
  Walsh said" is singular), and the name after a preposition's name is not
  its subject ("Residents of Cork said ..." has one name).

- "participle_heading": a finite verb with two subjects before it, with no
  conjunction or punctuation mark between them, the first opening the
  sentence and holding a headline's participle or infinitive ("Rule aimed at
  training young players Cork's county board has cut ...", "Ferry firm to
  add sailings Cork Harbour Company will ..."): a verb takes one subject, so
  the parser has hung a heading on the clause after it; the second subject's
  clause starts at the first capitalised word after the first subject's
  phrase (after a lowercase word). A role before a name ("his fourth wife Ann
  Walsh has ...", "the poet Ann Walsh wrote") has neither the participle
  nor the infinitive, and a headline does not open with an article or a
  pronoun ("A ferry called Star of Cobh from operator Walsh, which ..., is
  ...": the parser's second subject is a misreading of a relative clause).
- "place_heading": a place name (after a comma or a preposition) and right
  after it another name, an organisation or a person, that opens a new name
  run ("Direct ferry opens to Cork, Ireland Brittany Ferries' first sailing
  ..."), after words that read as a headline's clause: a noun and a finite
  verb or a participle after it, none of the articles, pronouns or double
  quotation marks headlines leave out, at most MAX_HEADING_TOKENS words. A
  place and a title or a name inside prose are written with an article
  ("the US District Court", "the US envoy for Syria Ann Walsh"), or after a
  fronted participle with its comma left out ("Speaking in Cork Ann Walsh
  said": no noun before the participle).
- "abstract_heading": the sentence opens with words that hold no article,
  verb (but a participle), preposition or conjunction, ending in a lowercase
  abstract noun (-ism, -ness, -tion, -sion, -ment, -hood), then a name, the
  subject of the sentence's finite verb ("Quiet heroism Walsh, a native of
  Cobh, came ..."). A role may stand before a name without an article
  ("Harbour master Ann Walsh said"), but a role names a person, and nouns
  of those endings name a quality, an act or a state, not a person.

These are refused as needles (engine.corpus.sentence_gate) and as hay
(engine.corpus.hay_check): the sentence is two pieces, and which piece the
parser hung where is not to be trusted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS
from engine.needles.person_evidence import PERSON_TITLES

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

CAPITAL_DETERMINER = "capital_determiner"
INDEFINITE_HEADING = "indefinite_heading"
DESCRIPTIVE_HEADING = "descriptive_heading"
PLURAL_HEADING = "plural_heading"
PARTICIPLE_HEADING = "participle_heading"
PLACE_HEADING = "place_heading"
ABSTRACT_HEADING = "abstract_heading"
MAX_HEADING_TOKENS = 16  # how far into the sentence a heading is looked for
SHORT_HEADING_TOKENS = 8  # an abstract noun's heading is short
_DETERMINER_TAGS = frozenset({"DT", "PRP$", "WP$"})
_INDEFINITES = frozenset({"a", "an"})
# what describes an indefinite or possessed thing inside a preposition's phrase
_DESCRIBING = frozenset({"a", "an", "his", "her", "its", "their", "our", "my", "your"})
_QUOTES = frozenset("\"'\u201c\u201d\u2018\u2019")
_NAME_TAGS = frozenset({"NNP", "NNPS"})
# what a heading ends in: a noun, an adjective, a number, a verb's particle ("Bomb squad called in")
_HEADING_END_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "RP"})
# what headlinese leaves out (as engine.corpus.fused_headings reads it)
_PROSE_TAGS = frozenset({"DT", "PDT", "PRP", "PRP$", "EX", "WDT", "WP", "WP$"})
_SINGLE_QUOTES = frozenset("'\u2018\u2019")
_PLACE_TYPES = frozenset({"GPE", "LOC"})
# nouns naming a quality, an act or a state, never a person
_ABSTRACT_NOUN = re.compile(r"[a-z]{3,}(?:ism|ness|tion|sion|ment|hood)")
_NOMINAL_DEPS = frozenset({"pobj", "dobj", "compound", "amod", "nsubj", "nsubjpass", "appos", "conj"})


def fused_heading_kind(span: Span) -> str:
    """The first of the module's forms that holds for `span`, or ""."""
    return next((kind for kind, find in _FORMS if find(span) is not None), "")


def _after_word(token: Token) -> bool:
    """The token follows a word or a number and a space, nothing else between."""
    before = token.doc[token.i - 1]
    return bool(before.whitespace_) and (before.is_alpha or before.like_num) and before.text not in _QUOTES


def capital_determiner(span: Span) -> Token | None:
    """The capitalised determiner that opens a sentence inside `span`, or None (module docstring)."""
    for token in span[1:-1]:
        if not (token.is_title and token.tag_ in _DETERMINER_TAGS and token.lower_ not in _INDEFINITES):
            continue
        if token.dep_ not in ("det", "poss") or not _after_word(token):
            continue
        noun = token.head
        word_before = token.doc[token.i - 1]
        before = word_before.tag_
        # a heading's particle the tagger took for a preposition, before "The <lowercase word>": "Bomb squad called
        # in The airport was ...": a paper's or a work's name goes on in title case ("in The Irish Times"); not a
        # possessive, which speeches capitalise for God ("for His providence")
        next_lower = token.i + 1 < span.end and token.doc[token.i + 1].is_lower
        particle_end = before in ("IN", "RP") and token.lower_ == "the" and next_lower
        # a headline's object the tagger took for a verb and the parser reads as a noun: "Campaign clears
        # hurdle The Walsh report ..." ("hurdle" tagged VBP, parsed as "clears"'s object)
        object_noun = before.startswith("VB") and word_before.dep_ in ("dobj", "pobj") and word_before.is_lower
        heading_end = before in _HEADING_END_TAGS or (
            (before in ("VB", "VBN") or object_noun) and noun.dep_ in ("nsubj", "nsubjpass")
        )
        if not (particle_end or heading_end):
            # after a verb or a preposition, a paper's name: "edited The Spectator magazine", "for The Times
            # story"; a heading's last word the tagger took for a verb ("Progress and scope") before a subject
            continue
        if noun.i <= token.i or noun.i >= span.end or noun.tag_ not in ("NN", "NNS") or not noun.is_lower:
            continue
        # every word between the determiner and its noun modifies the noun (not a title's own words)
        if any(t.head.i < token.i or t.head.i >= span.end for t in token.doc[token.i + 1 : noun.i]):
            continue
        return token
    return None


def _subject_name(span: Span, k: int) -> bool:
    """Whether a name starting at span token k (a capitalised name word) is,
    with the words of the name after it, the subject of a finite verb after it."""
    doc = span.doc
    i = span.start + k
    end = i
    while end < span.end and doc[end].tag_ in _NAME_TAGS and doc[end].is_title:
        end += 1
    if end == i:
        return False
    subject = next((t for t in doc[i:end] if t.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return False
    verb = subject.head
    return verb.i >= end and _finite(verb)


def _verb(token: Token) -> bool:
    """A verb, not a gerund or a participle the parser uses as a noun or an
    adjective ("his latest big-screen offering")."""
    return token.tag_.startswith(("VB", "MD")) and token.dep_ not in _NOMINAL_DEPS


def _verbless_words(words: Span) -> bool:
    return not any(_verb(t) or (t.is_punct and t.text not in "-\u2013") for t in words)


def indefinite_heading(span: Span) -> Token | None:
    """The name that starts the sentence under an indefinite heading, or None (module docstring)."""
    if len(span) < 5 or span[0].lower_ not in _INDEFINITES or not span[0].is_title:
        return None
    for k in range(2, min(len(span) - 2, MAX_HEADING_TOKENS)):
        token, before = span[k], span[k - 1]
        if not (token.is_title and token.tag_ in _NAME_TAGS and token.is_alpha and _after_word(token)):
            continue
        if not (before.is_lower and before.tag_ in ("NN", "NNS")):
            return None
        words = span[1:k]
        if not _verbless_words(words) or any(t.tag_ in ("IN", "TO", "CC") for t in words):
            return None
        return token if _subject_name(span, k) else None
    return None


def descriptive_heading(span: Span) -> Token | None:
    """The person's name that starts the sentence under a descriptive heading, or None (module docstring)."""
    if len(span) < 6 or span[0].tag_ not in ("NN", "NNS", "JJ", "NNP") or span[0].ent_type_:
        return None
    preposition = described = False
    for k in range(1, min(len(span) - 2, MAX_HEADING_TOKENS)):
        token, before = span[k], span[k - 1]
        if _verb(before) or (before.is_punct and before.text not in "-\u2013"):
            return None
        preposition = preposition or before.tag_ == "IN"
        described = described or (preposition and before.lower_ in _DESCRIBING)
        if not (token.is_title and token.tag_ in _NAME_TAGS and token.ent_type_ == "PERSON" and token.ent_iob_ == "B"):
            continue
        if not (described and before.is_lower and _after_word(token)):
            return None
        return token if _subject_name(span, k) else None
    return None


def plural_heading(span: Span) -> Token | None:
    """The name that starts the sentence under a plural topic heading, or None (module docstring)."""
    if len(span) < 6 or span[0].tag_ != "NNS" or span[0].ent_type_:
        return None
    preposition = False
    for k in range(1, min(len(span) - 2, MAX_HEADING_TOKENS)):
        token, before = span[k], span[k - 1]
        if _verb(before) or before.is_punct or before.tag_ == "CC":
            return None
        preposition = preposition or before.tag_ == "IN"
        if not (preposition and before.tag_ in _NAME_TAGS and before.ent_type_ and token.tag_ in _NAME_TAGS):
            continue
        if token.ent_iob_ == "I" or not (token.is_title and _after_word(token)):
            return None  # one name ("the Port of Cork Authority"), or no new one
        end = token.i
        while end < span.end and span.doc[end].tag_ in _NAME_TAGS and span.doc[end].is_title:
            end += 1
        after = span.doc[end] if end < span.end else None
        if after is None or after.tag_ not in FINITE_TAGS:
            return None
        if any(t.lower_.rstrip(".") in PERSON_TITLES for t in span.doc[token.i : end]):
            return None  # a place and a title before a name: "Talks with Ireland Prime Minister Ann Walsh said ..."
        return token
    return None


def _finite(verb: Token) -> bool:
    return verb.tag_ in FINITE_TAGS or any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in verb.children)


def _headline_verb(token: Token) -> bool:
    """A participle hung on a noun ("Rule aimed at ..."), or an infinitive ("Firm to add ...")."""
    if token.tag_ == "VBN" and token.dep_ == "acl":
        return True
    return token.tag_ == "VB" and any(c.tag_ == "TO" and c.dep_ == "aux" for c in token.children)


def participle_heading(span: Span) -> Token | None:
    """Where the clause under a headline's participle or infinitive starts, or None (module docstring)."""
    doc = span.doc
    for verb in span:
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") and c.i < verb.i]
        if len(subjects) < 2 or not _finite(verb):
            continue
        first, second = subjects[0], subjects[-1]
        if first.left_edge.i != span.start or span[0].tag_ in _PROSE_TAGS:
            continue  # a headline opens without an article ("A device called Sidearm from Axon, which ..., is ...")
        start = next(
            (
                t
                for t in doc[first.right_edge.i + 1 : second.i + 1]
                if t.is_title and t.is_alpha and t.text != "I" and _after_lowercase(t)
            ),
            None,
        )
        if start is None or start.i < second.left_edge.i:
            continue
        words = doc[span.start : start.i]
        if any(t.is_punct and t.text not in "-'\u2019" for t in words) or any(t.tag_ == "CC" for t in words):
            continue
        if any(_headline_verb(t) for t in words):
            return start
    return None


def _after_lowercase(token: Token) -> bool:
    """The token follows a lowercase word that is not a function word, and a space."""
    before = token.doc[token.i - 1]
    return bool(before.whitespace_) and before.is_lower and before.is_alpha and not before.is_stop


def place_heading(span: Span) -> Token | None:
    """The name opening the sentence after a headline that ends in a place, or None (module docstring)."""
    doc = span.doc
    for token in span[2:-1]:
        before = doc[token.i - 1]
        if token.ent_iob_ != "B" or token.ent_type_ not in ("ORG", "PERSON") or not token.is_title:
            continue
        if before.ent_type_ not in _PLACE_TYPES or not before.is_title or not before.whitespace_:
            continue
        place = before.i
        while place > span.start and doc[place].ent_iob_ == "I":
            place -= 1
        if place <= span.start or not (doc[place - 1].text == "," or doc[place - 1].tag_ == "IN"):
            continue
        words = doc[span.start : place]
        if len(words) > MAX_HEADING_TOKENS or any(
            t.tag_ in _PROSE_TAGS or (t.is_quote and t.text not in _SINGLE_QUOTES) for t in words
        ):
            continue
        if any(
            t.tag_ in ("VBD", "VBZ", "VBP", "VBN") and t.i > span.start and doc[t.i - 1].tag_ in ("NN", "NNS", "NNP", "NNPS")
            for t in words
        ):
            return token
    return None


def abstract_heading(span: Span) -> Token | None:
    """The name that starts the sentence under an abstract noun's heading, or None (module docstring)."""
    if len(span) < 5 or span[0].tag_ in _PROSE_TAGS or not span[0].is_title:
        return None
    for k in range(1, min(len(span) - 2, SHORT_HEADING_TOKENS)):
        token, before = span[k], span[k - 1]
        if before.tag_ in ("DT", "PRP$", "IN", "CC", "TO", "POS") or (before.is_punct and before.text not in "-\u2013"):
            return None
        if before.tag_.startswith(("VB", "MD")) and before.tag_ != "VBN":
            return None
        if not (token.is_title and token.tag_ in _NAME_TAGS and token.is_alpha and before.whitespace_):
            continue
        if not (before.is_lower and before.tag_ in ("NN", "NNS") and _ABSTRACT_NOUN.fullmatch(before.lower_)):
            return None
        return token if _subject_name(span, k) else None
    return None


# the forms in the order fused_heading_kind tries them
_FORMS = (
    (CAPITAL_DETERMINER, capital_determiner),
    (INDEFINITE_HEADING, indefinite_heading),
    (DESCRIPTIVE_HEADING, descriptive_heading),
    (PLURAL_HEADING, plural_heading),
    (PARTICIPLE_HEADING, participle_heading),
    (PLACE_HEADING, place_heading),
    (ABSTRACT_HEADING, abstract_heading),
)
HEADING_KINDS = frozenset(kind for kind, _ in _FORMS)
